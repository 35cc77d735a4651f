//! Code the page fetches when it is first used instead of on the first load. `make site` splits
//! each `#[wasm_split]` function, with everything only it reaches, into a WebAssembly chunk of
//! its own (`pkg/<stem>.<chunk>.wasm`); calling the function fetches its chunk once
//! ([`crate::client::controller::ChatController::when_loaded`] runs code once it is here).

use std::future::Future;

use leptos::wasm_split::SplitLoaderError;

/// Starts fetching a chunk ahead of its first use (when the menu that uses it opens), so that
/// use does not wait for the network. A failure here is for that use to report.
pub fn prefetch(code: impl Future<Output = Result<(), SplitLoaderError>> + 'static) {
    leptos::task::spawn_local(async move {
        let _ = code.await;
    });
}
