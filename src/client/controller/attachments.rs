//! Attaching files to the draft: each is uploaded as soon as it is picked, dropped or pasted,
//! its progress and outcome kept in the tray ([`crate::client::tray`]); the message waits for
//! the uploads and carries the files the server kept.

use leptos::prelude::*;

use super::{ChatController, NoticeKind};
use crate::client::browser;
use crate::client::tray::{outcome, Upload};
use crate::domain::attachment::UPLOAD_PATH;
use crate::domain::message::MAX_ATTACHMENTS;
use crate::i18n::fill;

impl ChatController {
    /// Files can be attached: the server keeps them (server-side history).
    pub fn can_attach(&self) -> bool {
        self.server.get()
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
                "{}{UPLOAD_PATH}?name={}",
                browser::base_path(),
                url::form_urlencoded::byte_serialize(name.as_bytes()).collect::<String>()
            );
            let tray = self.tray;
            let locale = self.locale;
            browser::upload(
                key,
                &url,
                &file,
                move |sent| {
                    tray.try_update(|t| t.set(key, Upload::Sending { sent }));
                },
                move |answer| {
                    tray.try_update(|t| t.set(key, outcome(answer, &name, locale)));
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
