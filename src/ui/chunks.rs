//! Code the page fetches when it is first used instead of on the first load. `make site` splits
//! each `#[wasm_split]` function, with everything only it reaches, into a WebAssembly chunk of
//! its own (`pkg/<stem>.<chunk>.wasm`); calling the function fetches its chunk once.

use std::future::Future;

use leptos::wasm_split::SplitLoaderError;

use crate::client::controller::{ChatController, NoticeKind};

/// Runs `then` with a chunk's code once it is here. If it cannot be fetched, a notice says so
/// and nothing else happens; a failure is not remembered, so the next try fetches it again.
pub fn with_code<T: 'static>(
    chat: ChatController,
    code: impl Future<Output = Result<T, SplitLoaderError>> + 'static,
    then: impl FnOnce(T) + 'static,
) {
    leptos::task::spawn_local(async move {
        match code.await {
            Ok(code) => then(code),
            Err(e) => {
                leptos::logging::warn!("a part of the page could not be fetched: {e}");
                chat.notify(
                    NoticeKind::Server,
                    chat.locale.catalogue().part_not_loaded.into(),
                );
            }
        }
    });
}

/// Starts fetching a chunk ahead of its first use (when the menu that uses it opens), so that
/// use does not wait for the network. A failure here is for that use to report.
pub fn prefetch(code: impl Future<Output = Result<(), SplitLoaderError>> + 'static) {
    leptos::task::spawn_local(async move {
        let _ = code.await;
    });
}
