//! Attaching files to the draft: each is uploaded as soon as it is picked, dropped or pasted,
//! its progress and outcome kept in the tray ([`crate::client::tray`]); the message waits for
//! the uploads and carries the files the server kept. With the chats in this browser the server
//! only judges each file; the page keeps its bytes and sends them inside each turn's request,
//! and the saved chat keeps those of its files that fit [`INLINE_KEPT_BYTES`].

use leptos::prelude::*;

use super::{ChatController, NoticeKind};
use crate::client::browser;
use crate::client::saved_chat::carried;
use crate::client::tray::{outcome, Upload};
use crate::domain::attachment::UPLOAD_PATH;
use crate::domain::message::{InlineFile, MAX_ATTACHMENTS};

/// The most bytes (in base64) of its files a chat kept in this browser saves with it: the rest
/// go with the turns while the page is open, and a reload loses them (localStorage holds a few
/// megabytes for every chat together).
pub const INLINE_KEPT_BYTES: usize = 512 * 1024;
use crate::i18n::fill;

impl ChatController {
    /// Files can be attached: the server keeps them, or (chats in this browser) the page does.
    pub fn can_attach(&self) -> bool {
        self.loaded.get()
    }

    /// The files of `e` (a reader's message in a chat kept in this browser) as a request
    /// carries them; one no longer here (too large to keep, and the page reloaded since) is
    /// left out.
    pub(super) fn inline_of(&self, e: &super::Entry) -> Vec<InlineFile> {
        if e.role != crate::domain::Role::User || self.kept_on_server() {
            return Vec::new();
        }
        let files = e.files.get_untracked();
        self.inline_files.with_value(|kept| {
            files
                .iter()
                .filter_map(|f| {
                    Some(InlineFile {
                        name: f.name.clone(),
                        data: kept.get(&f.id)?.clone(),
                        send_as: None,
                    })
                })
                .collect()
        })
    }

    /// The server keeps the files (server-side history), not this page.
    pub fn files_on_server(&self) -> bool {
        self.kept_on_server()
    }

    /// The bytes (in base64) this page holds of the file `id`, sent from this browser.
    pub fn inline_data(&self, id: &str) -> Option<String> {
        self.inline_files.with_value(|kept| kept.get(id).cloned())
    }

    /// Puts into `record` the bytes of its files that fit [`INLINE_KEPT_BYTES`], for this
    /// browser's saved copy (the rest stay with the open page).
    pub(super) fn keep_inline(&self, record: &mut crate::client::saved_chat::SavedChat) {
        if self.kept_on_server() {
            return;
        }
        let named = carried::named_files(record);
        let kept = self.inline_files.with_value(|bytes| {
            carried::within(
                named
                    .iter()
                    .filter_map(|f| Some((f.id.clone(), bytes.get(&f.id)?.clone()))),
                INLINE_KEPT_BYTES,
            )
        });
        carried::carry_base64(record, kept);
    }

    /// Takes the bytes a saved chat kept of its files, to send them again.
    pub(super) fn take_inline(&self, extra: &serde_json::Map<String, serde_json::Value>) {
        if let Some(serde_json::Value::Object(files)) = extra.get(carried::FILES) {
            self.inline_files.update_value(|kept| {
                for (id, data) in files {
                    if let serde_json::Value::String(data) = data {
                        kept.insert(id.clone(), data.clone());
                    }
                }
            });
        }
    }

    /// Uploads `files` and adds them to the tray; beyond what one message carries, the reader
    /// is told and the rest are left out.
    pub fn attach(&self, files: Vec<web_sys::File>) {
        for file in files {
            let name = file.name();
            let preview = browser::picture_of(&file);
            let added = self
                .tray
                .try_update(|t| t.add(name.clone(), file.size().max(0.0) as u64, preview.clone()))
                .flatten();
            let Some(key) = added else {
                if let Some(url) = preview {
                    browser::let_go(&url);
                }
                let words = self.locale.catalogue();
                let count = MAX_ATTACHMENTS.to_string();
                self.notify(
                    NoticeKind::Server,
                    fill(words.too_many_files, &[("n", &count)]),
                );
                return;
            };
            let url = format!(
                "{}{UPLOAD_PATH}?name={}{}",
                browser::base_path(),
                url::form_urlencoded::byte_serialize(name.as_bytes()).collect::<String>(),
                if self.temporary.get_untracked() {
                    "&keep=0"
                } else {
                    ""
                }
            );
            let kept_on_server = self.kept_on_server();
            let tray = self.tray;
            let locale = self.locale;
            let this = *self;
            let own = file.clone();
            browser::upload(
                key,
                &url,
                &file,
                move |sent| {
                    tray.try_update(|t| t.set(key, Upload::Sending { sent }));
                },
                move |answer| {
                    let judged = outcome(answer, &name, locale);
                    if kept_on_server {
                        tray.try_update(|t| t.set(key, judged));
                        return;
                    }
                    // Judged, not kept: the page keeps the bytes before the file can go.
                    leptos::task::spawn_local(async move {
                        let judged = match judged {
                            Upload::Ready(f) => match browser::base64_of(&own).await {
                                Some(data) => {
                                    this.inline_files
                                        .update_value(|kept| drop(kept.insert(f.id.clone(), data)));
                                    Upload::Ready(f)
                                }
                                None => Upload::Failed(fill(
                                    locale.catalogue().upload_failed,
                                    &[("name", &name)],
                                )),
                            },
                            other => other,
                        };
                        tray.try_update(|t| t.set(key, judged));
                    });
                },
            );
        }
    }

    /// Takes the file `key` out of the tray, stopping its upload.
    pub fn detach(&self, key: u32) {
        browser::cancel_upload(key);
        if let Some(Some(f)) = self.tray.try_update(|t| t.remove(key)) {
            if let Some(url) = f.preview {
                browser::let_go(&url);
            }
        }
    }

    /// Empties the tray (the message went, or the draft was dropped).
    pub(super) fn clear_tray(&self) {
        let keys: Vec<u32> = self
            .tray
            .with_untracked(|t| t.files.iter().map(|f| f.key).collect());
        keys.into_iter().for_each(browser::cancel_upload);
        for url in self.tray.try_update(|t| t.clear()).unwrap_or_default() {
            browser::let_go(&url);
        }
    }
}
