//! The composer's tray: the files a reader has attached to the message being written, each
//! uploading, kept on the server (ready to go with the message), or refused with the reason.
//! Plain state, changed only by the functions here; the upload itself is the controller's.

use std::collections::BTreeMap;

use crate::domain::attachment::{FileRef, SendAs};
use crate::domain::message::MAX_ATTACHMENTS;
use crate::domain::Failure;
use crate::i18n::{fill, Locale};

/// Where one file of the tray is.
#[derive(Clone, Debug, PartialEq)]
pub enum Upload {
    /// `sent` of its bytes have left the browser.
    Sending {
        sent: u64,
    },
    Ready(FileRef),
    /// Refused or lost, in the reader's words; it stays until removed so the reason is read.
    Failed(String),
}

/// One file in the tray.
#[derive(Clone, Debug, PartialEq)]
pub struct TrayFile {
    /// Its key in the tray (stable while it is there).
    pub key: u32,
    pub name: String,
    pub size: u64,
    /// A picture of it drawn from the reader's own copy (an object URL), for an image.
    pub preview: Option<String>,
    pub upload: Upload,
    /// How the reader asked for it to go (none: as the model reads it).
    pub asked: Option<SendAs>,
}

impl TrayFile {
    /// How far its upload is, in percent (100 once kept).
    pub fn percent(&self) -> u8 {
        match self.upload {
            Upload::Sending { sent } if self.size > 0 => {
                (sent.min(self.size).saturating_mul(100) / self.size).min(99) as u8
            }
            Upload::Sending { .. } => 0,
            Upload::Ready(_) | Upload::Failed(_) => 100,
        }
    }
}

/// The files attached to the message being written, in the order attached.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tray {
    pub files: Vec<TrayFile>,
    next: u32,
}

impl Tray {
    /// Adds a file about to be uploaded and answers its key, or `None` when the message already
    /// has as many files as one may carry.
    pub fn add(&mut self, name: String, size: u64, preview: Option<String>) -> Option<u32> {
        if self.files.len() >= MAX_ATTACHMENTS {
            return None;
        }
        self.next = self.next.wrapping_add(1);
        self.files.push(TrayFile {
            key: self.next,
            name,
            size,
            preview,
            upload: Upload::Sending { sent: 0 },
            asked: None,
        });
        Some(self.next)
    }

    /// Adds files already kept on the server (the files of a message being edited).
    pub fn keep(&mut self, files: &[FileRef]) {
        for f in files {
            if let Some(key) = self.add(f.name.clone(), f.size, None) {
                self.set(key, Upload::Ready(f.clone()));
                self.ask(key, f.sent_as);
            }
        }
    }

    /// Sets how the reader wants the file `key` sent.
    pub fn ask(&mut self, key: u32, how: Option<SendAs>) {
        if let Some(f) = self.files.iter_mut().find(|f| f.key == key) {
            f.asked = how;
        }
    }

    /// How the reader wants the ready files sent, by their ids (those left to the model absent).
    pub fn asked(&self) -> BTreeMap<String, SendAs> {
        self.files
            .iter()
            .filter_map(|f| match (&f.upload, f.asked) {
                (Upload::Ready(r), Some(how)) => Some((r.id.clone(), how)),
                _ => None,
            })
            .collect()
    }

    /// Sets where the file `key` is; a file removed meanwhile stays removed.
    pub fn set(&mut self, key: u32, upload: Upload) {
        if let Some(f) = self.files.iter_mut().find(|f| f.key == key) {
            f.upload = upload;
        }
    }

    /// Takes the file `key` out of the tray.
    pub fn remove(&mut self, key: u32) -> Option<TrayFile> {
        let at = self.files.iter().position(|f| f.key == key)?;
        Some(self.files.remove(at))
    }

    /// Whether a file is still uploading (the message waits for it).
    pub fn busy(&self) -> bool {
        self.files
            .iter()
            .any(|f| matches!(f.upload, Upload::Sending { .. }))
    }

    /// The files that go with the message: those kept on the server.
    pub fn ready(&self) -> Vec<FileRef> {
        self.files
            .iter()
            .filter_map(|f| match &f.upload {
                Upload::Ready(r) => Some(r.clone()),
                _ => None,
            })
            .collect()
    }

    /// Empties the tray, answering the pictures to let go of.
    pub fn clear(&mut self) -> Vec<String> {
        std::mem::take(&mut self.files)
            .into_iter()
            .filter_map(|f| f.preview)
            .collect()
    }
}

/// What the server's answer to the upload of `name` makes of it: the file it kept, or the
/// reason it gave (in the reader's words), or that no answer came.
pub fn outcome(answer: Option<(u16, String)>, name: &str, locale: Locale) -> Upload {
    let lost = || Upload::Failed(fill(locale.catalogue().upload_failed, &[("name", name)]));
    let Some((status, body)) = answer else {
        return lost();
    };
    if (200..300).contains(&status) {
        return serde_json::from_str::<FileRef>(&body).map_or_else(|_| lost(), Upload::Ready);
    }
    // A refusal is the stream's `error` event; read as a failure alone (its `type` ignored), so
    // the page's first download does not carry the whole event decoder.
    match serde_json::from_str::<Failure>(&body) {
        Ok(failure) => Upload::Failed(crate::client::labels::failure_text(&failure, locale)),
        Err(_) => lost(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::attachment::Kind;
    use crate::domain::TurnEvent;

    fn kept(id: &str) -> FileRef {
        FileRef {
            id: id.into(),
            name: format!("{id}.png"),
            kind: Kind::Image,
            size: 10,
            pixels: Some((2, 3)),
            pages: None,
            sent_as: None,
        }
    }

    #[test]
    fn a_file_goes_from_sending_to_ready_and_only_ready_files_go() {
        let mut tray = Tray::default();
        let a = tray
            .add("a.png".into(), 200, Some("blob:a".into()))
            .unwrap();
        let b = tray.add("b.txt".into(), 0, None).unwrap();
        assert_ne!(a, b);
        assert!(tray.busy());
        tray.set(a, Upload::Sending { sent: 50 });
        assert_eq!(tray.files[0].percent(), 25);
        assert_eq!(tray.files[1].percent(), 0);
        tray.set(a, Upload::Ready(kept("a")));
        assert!(tray.busy());
        tray.set(b, Upload::Failed("too big".into()));
        assert!(!tray.busy());
        assert_eq!(tray.ready(), vec![kept("a")]);
        assert_eq!(tray.clear(), vec!["blob:a".to_string()]);
        assert!(tray.files.is_empty());
    }

    #[test]
    fn a_finished_upload_never_reads_as_done_before_it_is_kept() {
        let mut tray = Tray::default();
        let a = tray.add("a".into(), 100, None).unwrap();
        tray.set(a, Upload::Sending { sent: 100 });
        assert_eq!(tray.files[0].percent(), 99);
        tray.set(a, Upload::Sending { sent: 1000 });
        assert_eq!(tray.files[0].percent(), 99);
    }

    #[test]
    fn a_removed_file_stays_removed_when_its_upload_ends() {
        let mut tray = Tray::default();
        let a = tray.add("a".into(), 1, None).unwrap();
        assert_eq!(tray.remove(a).map(|f| f.name), Some("a".into()));
        tray.set(a, Upload::Ready(kept("a")));
        assert!(tray.files.is_empty());
        assert!(tray.remove(a).is_none());
    }

    #[test]
    fn a_message_carries_at_most_the_files_the_server_takes() {
        let mut tray = Tray::default();
        for i in 0..MAX_ATTACHMENTS {
            assert!(tray.add(format!("{i}"), 1, None).is_some());
        }
        assert_eq!(tray.add("one more".into(), 1, None), None);
        assert_eq!(tray.files.len(), MAX_ATTACHMENTS);
    }

    #[test]
    fn the_server_s_answer_decides_what_became_of_a_file() {
        let en = Locale::En;
        let body = r#"{"id":"f1","name":"a.png","kind":"image","mime":"image/png","size":10,"pixels":[2,3],"sha256":"00","created_at":1}"#;
        let Upload::Ready(f) = outcome(Some((201, body.into())), "a.png", en) else {
            panic!("kept")
        };
        assert_eq!((f.id.as_str(), f.pixels), ("f1", Some((2, 3))));
        let refused = serde_json::to_string(&TurnEvent::Error(
            crate::domain::Failure::of(crate::domain::ErrorCode::AttachmentHeic, false)
                .with("name", "p.heic"),
        ))
        .unwrap();
        let Upload::Failed(why) = outcome(Some((415, refused.clone())), "p.heic", Locale::PtBr)
        else {
            panic!("refused")
        };
        assert!(why.contains("p.heic"), "{why}");
        assert_ne!(
            why,
            crate::client::labels::failure_text(
                &crate::domain::Failure::of(crate::domain::ErrorCode::AttachmentHeic, false)
                    .with("name", "p.heic"),
                en
            )
        );
        assert_eq!(
            outcome(None, "a.png", en),
            Upload::Failed("a.png could not be attached: the connection was lost.".into())
        );
        assert_eq!(
            outcome(Some((502, "<html>".into())), "a.png", en),
            outcome(None, "a.png", en)
        );
    }

    #[test]
    fn an_edited_message_s_files_are_kept_and_ready_the_way_they_went() {
        let mut tray = Tray::default();
        let went = FileRef {
            sent_as: Some(SendAs::Text),
            ..kept("b")
        };
        tray.keep(&[kept("a"), went.clone()]);
        assert!(!tray.busy());
        assert_eq!(tray.ready(), vec![kept("a"), went]);
        assert_eq!(
            tray.asked().into_iter().collect::<Vec<_>>(),
            vec![("b".to_string(), SendAs::Text)]
        );
    }

    #[test]
    fn only_a_kept_file_s_asked_way_goes_with_the_message() {
        let mut tray = Tray::default();
        let a = tray.add("a.pdf".into(), 9, None).unwrap();
        tray.ask(a, Some(SendAs::Text));
        assert!(tray.asked().is_empty(), "still uploading");
        tray.set(a, Upload::Ready(kept("a")));
        assert_eq!(tray.asked().get("a"), Some(&SendAs::Text));
        tray.ask(a, None);
        assert!(tray.asked().is_empty());
    }
}
