//! Notices at the top of the page and the polite status line: each kind shown once, worded in
//! the page's language.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos::wasm_split::SplitLoaderError;

use super::ChatController;
use crate::domain::Failure;
use crate::i18n::{fill, Catalogue};

/// What a notice is about. Notices of one kind are shown once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NoticeKind {
    /// Browser storage cannot be used at all.
    Storage,
    /// A write failed (storage full, or another error).
    Save,
    /// Saved data could not be read and was set aside.
    Corrupt,
    /// Another tab changed the same chat at the same time.
    Conflict,
    /// The chat asked for is no longer saved.
    Missing,
    /// The open chat was deleted in another tab.
    DeletedElsewhere,
    /// A conversation was deleted; Undo brings it back.
    Deleted,
    /// Chats of this browser were imported to the server.
    Imported,
    /// The server did not do what was asked.
    Server,
}

impl NoticeKind {
    /// Every kind, in the order the page shows their notices.
    pub const ALL: [NoticeKind; 9] = [
        NoticeKind::Storage,
        NoticeKind::Save,
        NoticeKind::Corrupt,
        NoticeKind::Conflict,
        NoticeKind::Missing,
        NoticeKind::DeletedElsewhere,
        NoticeKind::Deleted,
        NoticeKind::Imported,
        NoticeKind::Server,
    ];

    /// The name the page carries in `data-kind`.
    pub fn name(self) -> &'static str {
        match self {
            NoticeKind::Storage => "storage",
            NoticeKind::Save => "save",
            NoticeKind::Corrupt => "corrupt",
            NoticeKind::Conflict => "conflict",
            NoticeKind::Missing => "missing",
            NoticeKind::DeletedElsewhere => "deleted-elsewhere",
            NoticeKind::Deleted => "deleted",
            NoticeKind::Imported => "imported",
            NoticeKind::Server => "server",
        }
    }
}

/// A non-blocking message at the top of the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub kind: NoticeKind,
    pub text: String,
    /// A deleted conversation the notice can bring back.
    pub undo: Option<String>,
}

impl ChatController {
    /// A notice's words in the page's language, with what failed (`detail`) in them.
    pub fn say(&self, pick: impl Fn(&Catalogue) -> &'static str, detail: &str) -> String {
        fill(pick(self.locale.catalogue()), &[("detail", detail)])
    }

    /// A notice's words for a failure the server reported, said in the page's language.
    pub fn say_failed(
        &self,
        pick: impl Fn(&Catalogue) -> &'static str,
        failure: &Failure,
    ) -> String {
        self.say(
            pick,
            &crate::client::labels::failure_text(failure, self.locale),
        )
    }

    /// Shows a notice unless one of its kind is already shown.
    pub fn notify(&self, kind: NoticeKind, text: String) {
        self.notices.update(|n| {
            if !n.iter().any(|x| x.kind == kind) {
                n.push(Notice {
                    kind,
                    text,
                    undo: None,
                });
            }
        });
    }

    /// Shows a notice that replaces any of its kind, with an Undo for conversation `undo`.
    pub(super) fn notify_undoable(&self, kind: NoticeKind, text: String, undo: String) {
        self.dismiss(kind);
        self.notices.update(|n| {
            n.push(Notice {
                kind,
                text,
                undo: Some(undo),
            })
        });
    }

    pub fn dismiss(&self, kind: NoticeKind) {
        self.notices.update(|n| n.retain(|x| x.kind != kind));
    }

    pub(super) fn announce(&self, lines: Vec<String>) {
        if !lines.is_empty() {
            self.status.set(lines.join(". "));
        }
    }

    /// Runs `then` with a chunk's code once it is here. If it cannot be fetched, a notice says
    /// so and nothing else happens; a failure is not remembered, so the next try fetches again.
    pub fn when_loaded<T: 'static>(
        &self,
        code: impl std::future::Future<Output = Result<T, SplitLoaderError>> + 'static,
        then: impl FnOnce(T) + 'static,
    ) {
        let this = *self;
        spawn_local(async move {
            match code.await {
                Ok(code) => then(code),
                Err(e) => this.part_not_loaded(&e),
            }
        });
    }

    /// Says that a chunk could not be fetched (the reader can try again).
    pub(super) fn part_not_loaded(&self, e: &SplitLoaderError) {
        leptos::logging::warn!("a part of the page could not be fetched: {e}");
        self.notify(
            NoticeKind::Server,
            self.locale.catalogue().part_not_loaded.into(),
        );
    }
}
