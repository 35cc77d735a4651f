//! The controller's code that is not in the page's first download. `make site` splits each
//! `#[wasm_split(chunk)]` function, with everything only it reaches, into a WebAssembly chunk
//! (`pkg/<stem>.<chunk>.wasm`); calling the function fetches the chunk (once; a failure is not
//! remembered, so a later call tries again). [`lazy_actions!`] declares a chunk's actions from
//! one definition each.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos::wasm_split::SplitLoaderError;

use super::ChatController;
use crate::client::local_store::{self, Shelf};
use crate::client::saved_chat::{self, SavedChat};
use crate::client::turn_stream::TurnCode;

/// Declares actions of the controller that live in chunk `$chunk`: each `fn name(this, args)
/// { body }` becomes a function `$module::name(this, args)` that fetches the chunk and then
/// runs the body, which only the chunk's split point reaches (so it lands in the chunk). If the
/// chunk cannot be fetched, a notice says so and the body does not run. With `preload`, the
/// module also gets that function, which fetches the chunk ahead of its first use.
macro_rules! lazy_actions {
    (
        $(#[$doc:meta])*
        mod $module:ident in $chunk:ident $(, preload $preload:ident)?;
        $(
            $(#[$fdoc:meta])*
            fn $name:ident($this:ident $(, $arg:ident: $ty:ty)* $(,)?) $body:block
        )*
    ) => {
        $(#[$doc])*
        pub(super) mod $module {
            #[allow(unused_imports)]
            use super::*;
            use $crate::client::controller::ChatController;

            /// The chunk's actions, as its split point gives them.
            #[derive(Clone, Copy)]
            #[allow(clippy::type_complexity)]
            pub struct Code {
                $($name: fn(ChatController $(, $ty)*),)*
            }

            /// The split point.
            #[leptos::wasm_split::wasm_split(
                $chunk,
                wasm_split_path = leptos::wasm_split,
                fallible
                $(, preload($preload))?
            )]
            pub fn $module() -> Result<Code, leptos::wasm_split::SplitLoaderError> {
                $(
                    fn $name($this: ChatController $(, $arg: $ty)*) $body
                )*
                Ok(Code { $($name,)* })
            }

            $(
                $(#[$fdoc])*
                pub fn $name(this: ChatController $(, $arg: $ty)*) {
                    this.when_loaded($module(), move |code| (code.$name)(this $(, $arg)*));
                }
            )*
        }
    };
}

pub(super) use lazy_actions;

/// The split point of the code that follows a turn's stream (see
/// [`crate::client::turn_stream`]).
#[leptos::wasm_split::wasm_split(turn, wasm_split_path = leptos::wasm_split, fallible)]
pub(super) fn stream_code() -> Result<TurnCode<ChatController>, SplitLoaderError> {
    Ok(TurnCode::new())
}

/// Starts fetching the stream's code before the first turn needs it (someone is typing).
pub fn want_stream_code() {
    crate::client::turn_stream::want(stream_code());
}

/// Every saved chat, and the keys of those set aside as unreadable.
type Loaded = (Vec<SavedChat>, Vec<String>);

/// Reading this browser's saved chats back (the parser of the stored format, with every type a
/// record holds): a page fetches it only when a chat is saved in this browser, or to read an
/// export, so a first visit never does. Writing a record stays in the page.
#[derive(Clone, Copy)]
pub struct LocalChats {
    load_all: fn(&dyn Shelf, f64) -> Loaded,
    load: fn(&dyn Shelf, &str) -> Option<SavedChat>,
    parse_export: fn(&str) -> Result<SavedChat, saved_chat::Unreadable>,
}

impl LocalChats {
    /// The reader of a browser that holds no saved chat.
    const NOTHING_SAVED: LocalChats = LocalChats {
        load_all: |_, _| (Vec::new(), Vec::new()),
        load: |_, _| None,
        parse_export: |_| Err(saved_chat::Unreadable(String::new())),
    };

    /// Every chat saved on `shelf`, and the keys of those set aside as unreadable.
    pub(super) fn load_all(&self, shelf: &dyn Shelf, now: f64) -> Loaded {
        (self.load_all)(shelf, now)
    }

    /// The chat `id` saved on `shelf`, if readable.
    pub(super) fn load(&self, shelf: &dyn Shelf, id: &str) -> Option<SavedChat> {
        (self.load)(shelf, id)
    }

    /// A JSON export read back.
    pub(super) fn parse_export(&self, raw: &str) -> Result<SavedChat, saved_chat::Unreadable> {
        (self.parse_export)(raw)
    }
}

/// The split point of [`LocalChats`].
#[leptos::wasm_split::wasm_split(local_chats, wasm_split_path = leptos::wasm_split, fallible)]
pub(super) fn local_chats_code() -> Result<LocalChats, SplitLoaderError> {
    Ok(LocalChats {
        load_all: local_store::load_all,
        load: local_store::load,
        parse_export: saved_chat::parse_export,
    })
}

impl ChatController {
    /// Runs `then` with the reader of this browser's saved chats: at once when it is here or
    /// when no chat is saved here (there is nothing to read), else once its chunk is fetched. If
    /// the chunk cannot be fetched, a notice says so and `then` does not run.
    pub(super) fn with_local_chats(&self, then: impl FnOnce(LocalChats) + 'static) {
        self.reading_local_chats(false, then);
    }

    /// As [`Self::with_local_chats`]; with `anyway`, a failed fetch still runs `then`, with a
    /// reader that finds nothing (the page then goes on without this browser's copies, and
    /// nothing stored is touched).
    pub(super) fn reading_local_chats(
        &self,
        anyway: bool,
        then: impl FnOnce(LocalChats) + 'static,
    ) {
        if let Some(code) = self.local_chats.get_value() {
            return then(code);
        }
        if !local_store::has_chats(self.shelf) && !local_store::has_chats(self.tab) {
            return then(LocalChats::NOTHING_SAVED);
        }
        let this = *self;
        spawn_local(async move {
            match local_chats_code().await {
                Ok(code) => {
                    this.local_chats.set_value(Some(code));
                    then(code);
                }
                Err(e) => {
                    this.part_not_loaded(&e);
                    if anyway {
                        then(LocalChats::NOTHING_SAVED);
                    }
                }
            }
        });
    }

    /// Runs `then` with the saved chats' reader even when no chat is saved here (to read an
    /// export).
    pub(super) fn with_export_reader(&self, then: impl FnOnce(LocalChats) + 'static) {
        if let Some(local) = self.local_chats.get_value() {
            return then(local);
        }
        let this = *self;
        self.when_loaded(local_chats_code(), move |local| {
            this.local_chats.set_value(Some(local));
            then(local);
        });
    }
}

/// The saved chats' reader without its split point, for native tests (where no chunk is
/// fetched and no task is spawned).
#[cfg(test)]
pub(super) const READER: LocalChats = LocalChats {
    load_all: local_store::load_all,
    load: local_store::load,
    parse_export: saved_chat::parse_export,
};
