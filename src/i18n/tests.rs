use super::*;

/// Every text of `locale`: its catalogue and the usage page's words (under `usage_page.`).
fn all_strings(locale: Locale) -> Vec<(String, String)> {
    let c = locale.catalogue();
    fn walk(prefix: &str, value: &serde_json::Value, out: &mut Vec<(String, String)>) {
        match value {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, v, out);
                }
            }
            serde_json::Value::String(s) => out.push((prefix.to_string(), s.clone())),
            other => out.push((prefix.to_string(), other.to_string())),
        }
    }
    let mut out = Vec::new();
    walk("", &serde_json::to_value(c).unwrap_or_default(), &mut out);
    walk(
        "usage_page",
        &serde_json::to_value(super::usage_words(locale)).unwrap_or_default(),
        &mut out,
    );
    walk(
        "compare_page",
        &serde_json::to_value(super::compare_words(locale)).unwrap_or_default(),
        &mut out,
    );
    out.sort();
    out
}

#[test]
fn the_catalogues_dump_as_json_by_tag() {
    let all: serde_json::Value = serde_json::from_str(&catalogues_json()).unwrap_or_default();
    assert_eq!(all["pt-BR"]["words"]["one"], "{n} palavra");
    assert_eq!(all["en"]["copy"], "Copy");
    assert_eq!(all.as_object().map(|m| m.len()), Some(4));
}

#[test]
fn every_catalogue_has_every_key_with_a_text() {
    let english = all_strings(Locale::En);
    assert!(english.len() > 200, "{} keys", english.len());
    for locale in Locale::ALL {
        let strings = all_strings(locale);
        let keys: Vec<_> = strings.iter().map(|(k, _)| k.clone()).collect();
        let en_keys: Vec<_> = english.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(keys, en_keys, "{locale:?}");
        for (key, value) in &strings {
            assert!(!value.trim().is_empty(), "{locale:?} {key} is empty");
        }
    }
}

#[test]
fn placeholders_match_english() {
    let english = all_strings(Locale::En);
    for locale in [Locale::PtBr, Locale::Ja, Locale::Ar] {
        for ((key, en), (_, text)) in english.iter().zip(all_strings(locale)) {
            let (want, got) = (placeholders(en), placeholders(&text));
            // A plural form may leave the number out ("كلمتان": two words) or say it where
            // English does not ("{n} modelo" covers 0 and 1).
            let plural_form = [".zero", ".one", ".two", ".few", ".many", ".other"]
                .iter()
                .any(|f| key.ends_with(f));
            if plural_form {
                assert!(
                    got.iter().all(|p| want.contains(p) || *p == "n"),
                    "{locale:?} {key}: {text:?}"
                );
            } else {
                assert_eq!(want, got, "{locale:?} {key}: {text:?}");
            }
        }
    }
}

#[test]
fn other_languages_are_translated() {
    // Words that are the same in every language: names and formats.
    let same = [
        "Ponder",
        "JSON",
        "Markdown",
        "{n}/{total}",
        "{tool}…",
        " · ",
        "{label}",
        "API",
        "PDF",
        "Top-p",
    ];
    let english = all_strings(Locale::En);
    for locale in [Locale::Ja, Locale::Ar] {
        for ((key, en), (_, text)) in english.iter().zip(all_strings(locale)) {
            if same.contains(&en.as_str()) {
                continue;
            }
            assert_ne!(&text, en, "{locale:?} {key} is still English");
            let bare = fill(
                &text,
                &placeholders(&text)
                    .iter()
                    .map(|p| (*p, ""))
                    .collect::<Vec<_>>(),
            );
            let latin_words = bare
                .split(|c: char| !c.is_ascii_alphabetic())
                .filter(|w| w.len() > 3)
                .filter(|w| {
                    ![
                        "Ponder", "JSON", "Markdown", "Enter", "Shift", "Google", "Bearer", "Ctrl",
                        "HEIC", "HEIF", "JPEG", "WebP", "detach", "shares",
                    ]
                    .contains(w)
                })
                .count();
            assert_eq!(latin_words, 0, "{locale:?} {key}: {text:?}");
        }
    }
}

#[test]
fn locales_are_chosen_from_tags_and_headers() {
    assert_eq!(Locale::from_tag("pt-BR"), Some(Locale::PtBr));
    assert_eq!(Locale::from_tag("pt_PT"), Some(Locale::PtBr));
    assert_eq!(Locale::from_tag("AR-eg"), Some(Locale::Ar));
    assert_eq!(Locale::from_tag("fr"), None);
    assert_eq!(
        Locale::negotiate("fr-FR,fr;q=0.9,ja;q=0.8,en;q=0.7"),
        Locale::Ja
    );
    assert_eq!(Locale::negotiate("en;q=0.5, ar;q=0.9"), Locale::Ar);
    assert_eq!(Locale::negotiate("pt-BR"), Locale::PtBr);
    assert_eq!(Locale::negotiate("de, ja;q=0"), Locale::En);
    assert_eq!(Locale::negotiate(""), Locale::En);
    assert_eq!(Locale::negotiate("ja;q=abc, ar;q=0.1"), Locale::Ja);
    assert_eq!(Locale::choose(Some("ar"), Some("ja")), Locale::Ar);
    assert_eq!(Locale::choose(Some("xx"), Some("ja")), Locale::Ja);
    assert_eq!(Locale::choose(None, None), Locale::En);
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    };
    assert_eq!(
        Locale::from_posix(env(&[("LANG", "ja_JP.UTF-8")])),
        Locale::Ja
    );
    assert_eq!(
        Locale::from_posix(env(&[("LC_ALL", "pt_BR.UTF-8"), ("LANG", "ar")])),
        Locale::PtBr
    );
    assert_eq!(Locale::from_posix(env(&[("LANG", "C.UTF-8")])), Locale::En);
    assert_eq!(Locale::Ar.dir_attr(), "rtl");
    assert_eq!(Locale::Ja.dir_attr(), "ltr");
    for l in Locale::ALL {
        assert_eq!(Locale::from_tag(l.tag()), Some(l));
    }
}

#[test]
fn plural_rules_follow_cldr() {
    use PluralCategory::*;
    let cats = |l: Locale, ns: &[u64]| {
        ns.iter()
            .map(|n| l.plural(*n as f64, 0))
            .collect::<Vec<_>>()
    };
    assert_eq!(cats(Locale::En, &[0, 1, 2, 11]), [Other, One, Other, Other]);
    assert_eq!(Locale::En.plural(1.0, 1), Other);
    assert_eq!(
        cats(Locale::PtBr, &[0, 1, 2, 1_000_000, 2_000_000, 1_000_001]),
        [One, One, Other, Many, Many, Other]
    );
    assert_eq!(Locale::PtBr.plural(1.5, 1), One);
    assert_eq!(cats(Locale::Ja, &[0, 1, 2, 100]), [Other; 4]);
    assert_eq!(
        cats(
            Locale::Ar,
            &[0, 1, 2, 3, 10, 11, 99, 100, 101, 102, 103, 111, 1000]
        ),
        [Zero, One, Two, Few, Few, Many, Many, Other, Other, Other, Few, Many, Other]
    );
    assert_eq!(Locale::Ar.plural(2.5, 1), Other);
}

#[test]
fn numbers_are_written_the_locales_way() {
    assert_eq!(Locale::En.one_decimal(4.2), "4.2");
    assert_eq!(Locale::PtBr.one_decimal(4.2), "4,2");
    assert_eq!(Locale::Ja.one_decimal(12.0), "12.0");
    assert_eq!(Locale::Ar.one_decimal(4.25), "4.3");
    assert_eq!(Locale::En.integer(1_234_567), "1,234,567");
    assert_eq!(Locale::PtBr.integer(1234), "1.234");
    assert_eq!(Locale::En.integer(999), "999");
    assert_eq!(Locale::PtBr.one_decimal(1234.5), "1.234,5");
}

#[test]
fn counts_pick_the_form_and_format_the_number() {
    let words = |l: Locale, n| l.count(&l.catalogue().words, n);
    assert_eq!(words(Locale::En, 1), "1 word");
    assert_eq!(words(Locale::En, 1234), "1,234 words");
    assert_eq!(
        words(Locale::PtBr, 0),
        words(Locale::PtBr, 1).replace('1', "0")
    );
    assert!(words(Locale::PtBr, 2000).starts_with("2.000 "));
    // Six different Arabic forms for 0, 1, 2, 3, 11 and 100.
    let ar: Vec<String> = [0, 1, 2, 3, 11, 100]
        .iter()
        .map(|n| words(Locale::Ar, *n))
        .collect();
    let distinct: std::collections::HashSet<_> = ar.iter().collect();
    assert!(distinct.len() >= 5, "{ar:?}");
    assert!(ar[3].contains('3') && ar[4].contains("11") && ar[5].contains("100"));
}

#[test]
fn templates_are_filled_by_name() {
    assert_eq!(fill("{a} and {b}", &[("b", "2"), ("a", "1")]), "1 and 2");
    assert_eq!(fill("{a} {unknown}", &[("a", "x")]), "x {unknown}");
    assert_eq!(fill("no close {a", &[("a", "x")]), "no close {a");
    assert_eq!(fill("{a}{a}", &[("a", "é")]), "éé");
    assert_eq!(placeholders("{b} {a}"), ["a", "b"]);
}

#[test]
fn each_language_is_named_in_itself_and_found_by_its_tag() {
    let names: std::collections::BTreeSet<_> = Locale::ALL.iter().map(|l| l.own_name()).collect();
    assert_eq!(names.len(), Locale::ALL.len());
    assert_eq!(Locale::Ja.own_name(), "日本語");
    for locale in Locale::ALL {
        assert!(!locale.own_name().trim().is_empty(), "{locale:?}");
        assert_eq!(Locale::from_tag(locale.tag()), Some(locale));
    }
}

#[test]
fn a_title_ponder_made_is_read_in_the_readers_language() {
    use crate::domain::history::TitleMark;
    let branch_of_copy = TitleMark::Branch.after(&TitleMark::Copy.after("Sky"));
    assert_eq!(
        title(Locale::En.catalogue(), &branch_of_copy),
        "Sky (copy) (branch)"
    );
    assert_eq!(
        title(Locale::Ja.catalogue(), &branch_of_copy),
        "Sky（コピー）（分岐）"
    );
    assert_eq!(
        title(Locale::PtBr.catalogue(), &TitleMark::imported()),
        "Chat importado"
    );
    assert_eq!(title(Locale::Ar.catalogue(), ""), "محادثة جديدة");
    assert_eq!(
        title(Locale::Ja.catalogue(), "Sky (branch)"),
        "Sky (branch)"
    );
    assert_eq!(TitleMark::strip(&branch_of_copy), "Sky");
}
