//! The formula converter on any text, through the path the API takes: the nesting measure never
//! panics, a formula over the limit is never parsed, and conversion on a converter thread never
//! overflows its stack or panics (either would abort this process).
#![no_main]

use std::sync::atomic::AtomicBool;

use libfuzzer_sys::fuzz_target;
use ponder::domain::MathItem;
use ponder::server::rich::{mathml_all, nesting_depth, MAX_NESTING};
use ponder::server::rich_work::run_here;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, body)) = data.split_first() else {
        return;
    };
    let Ok(tex) = std::str::from_utf8(body) else {
        return;
    };
    let deep = nesting_depth(tex) > MAX_NESTING;
    let items = vec![MathItem {
        tex: tex.to_string(),
        display: flags & 1 == 1,
    }];
    let Some(out) = run_here(move || mathml_all(&items, &AtomicBool::new(false))) else {
        panic!("the conversion panicked");
    };
    assert_eq!(out.len(), 1);
    if deep {
        assert_eq!(out[0], None, "a formula over the nesting limit was converted");
    }
    if let Some(mathml) = &out[0] {
        assert!(mathml.starts_with("<math"), "{mathml}");
        assert!(!mathml.contains("<script"), "{mathml}");
    }
});
