//! Failures in the reader's language, from their stable code and parameters. The English
//! catalogue is also the server's wording: a failure the server sends is said by [`Said::said`]
//! from its code and parameters, so English exists once.

use super::{fill, Locale};
use crate::domain::{ErrorCode, Failure};

/// The failure's sentence in `l`, or `None` where its English `message` is the one to show:
/// in English (the server's sentence, made from the same catalogue by [`Said::said`]; a failure
/// made on the page unworded gets the catalogue's) and for [`ErrorCode::Other`].
pub fn text(f: &Failure, l: Locale) -> Option<String> {
    if l == Locale::En && !f.message.is_empty() {
        return None;
    }
    sentence(f, l)
}

/// A failure put into words: its message becomes the English catalogue's sentence for its code
/// and parameters. How the server words every coded failure it sends.
pub trait Said {
    fn said(self) -> Failure;
}

impl Said for Failure {
    fn said(mut self) -> Failure {
        if let Some(words) = sentence(&self, Locale::En) {
            self.message = words;
        }
        self
    }
}

/// The sentence of `f`'s code in `l`, its parameters filled in, with the details its template
/// does not name added after it; `None` for [`ErrorCode::Other`].
fn sentence(f: &Failure, l: Locale) -> Option<String> {
    let c = l.catalogue();
    let e = &c.errors;
    let template = match f.code {
        ErrorCode::Other => return None,
        ErrorCode::NoAnswer => e.no_answer,
        ErrorCode::NoStart => e.no_start,
        ErrorCode::Silent => e.silent,
        ErrorCode::ShuttingDown => e.shutting_down,
        ErrorCode::ShuttingDownMidAnswer => e.shutting_down_mid_answer,
        ErrorCode::Redirected => e.redirected,
        ErrorCode::UpstreamStatus => e.upstream_status,
        ErrorCode::SettingRefused => e.setting_refused,
        ErrorCode::ReplayRefused => e.replay_refused,
        ErrorCode::ConnectionBroke => e.connection_broke,
        ErrorCode::ReplicaLost => e.replica_lost,
        ErrorCode::ReplicaDied => e.replica_died,
        ErrorCode::StreamCut => e.stream_cut,
        ErrorCode::LineTooLong => e.line_too_long,
        ErrorCode::Unreachable => e.unreachable,
        ErrorCode::ConnectTimeout => e.connect_timeout,
        ErrorCode::RequestFailed => e.request_failed,
        ErrorCode::ModelError => e.model_error,
        ErrorCode::PromptRefused => e.prompt_refused,
        ErrorCode::NotSaved => e.not_saved,
        ErrorCode::BadRequest => e.bad_request,
        ErrorCode::AttachmentTooLarge => e.attachment_too_large,
        ErrorCode::AttachmentEmpty => e.attachment_empty,
        ErrorCode::AttachmentQuota => e.attachment_quota,
        ErrorCode::AttachmentsTooLarge => e.attachments_too_large,
        ErrorCode::AttachmentUnsupported => e.attachment_unsupported,
        ErrorCode::AttachmentMisnamed => e.attachment_misnamed,
        ErrorCode::AttachmentHeic => e.attachment_heic,
        ErrorCode::AttachmentNotTaken => e.attachment_not_taken,
        ErrorCode::AttachmentDamaged => e.attachment_damaged,
        ErrorCode::AttachmentUnreadable => e.attachment_unreadable,
        ErrorCode::ImageTooLarge => e.image_too_large,
        ErrorCode::UnsupportedMediaType => e.unsupported_media_type,
        ErrorCode::CrossOrigin => e.cross_origin,
        ErrorCode::TooLarge => e.too_large,
        ErrorCode::BodyTimeout => e.body_timeout,
        ErrorCode::BodyUnreadable => e.body_unreadable,
        ErrorCode::RateLimited => e.rate_limited,
        ErrorCode::QuotaExceeded => e.quota_exceeded,
        ErrorCode::TooManyMessages => e.too_many_messages,
        ErrorCode::ConversationTooLong => e.conversation_too_long,
        ErrorCode::MessageTooLong => e.message_too_long,
        ErrorCode::EmptyMessage => e.empty_message,
        ErrorCode::UnknownModel => e.unknown_model,
        ErrorCode::NoServerHistory => e.no_server_history,
        ErrorCode::SignInRequired => e.sign_in_required,
        ErrorCode::SessionEnded => e.session_ended,
        ErrorCode::InvalidToken => e.invalid_token,
        ErrorCode::ProxyRequired => e.proxy_required,
        ErrorCode::ProxyNoUser => e.proxy_no_user,
        ErrorCode::ProxyBadUser => e.proxy_bad_user,
        ErrorCode::UnknownHost => e.unknown_host,
        ErrorCode::WrongCredentials => e.wrong_credentials,
        ErrorCode::SignInExpired => e.sign_in_expired,
        ErrorCode::SignInNotAllowed => e.sign_in_not_allowed,
        ErrorCode::SignInDenied => e.sign_in_denied,
        ErrorCode::SignInUnverified => e.sign_in_unverified,
        ErrorCode::ProviderUnreachable => e.provider_unreachable,
        ErrorCode::TooManyAttempts => e.too_many_attempts,
        ErrorCode::PasswordTooShort => e.password_too_short,
        ErrorCode::AdminOnly => e.admin_only,
        ErrorCode::SharingOff => e.sharing_off,
        ErrorCode::AlreadySetUp => e.already_set_up,
        ErrorCode::NoAccounts => e.no_accounts,
        ErrorCode::CannotRemoveSelf => e.cannot_remove_self,
        ErrorCode::PasswordRequired => e.password_required,
        ErrorCode::NotFound => e.not_found,
        ErrorCode::TurnNotFound => e.turn_not_found,
        ErrorCode::Conflict => e.conflict,
        ErrorCode::DatabaseUnavailable => e.database_unavailable,
        ErrorCode::ServerBusy => e.server_busy,
        ErrorCode::PonderUnreachable => e.ponder_unreachable,
        ErrorCode::StreamDropped => c.error_stream_ended,
        ErrorCode::ClosedBeforeStart => c.error_closed_before_start,
        ErrorCode::FirstFrameTimeout => c.error_first_frame_timeout,
        ErrorCode::Interrupted => c.error_interrupted,
        ErrorCode::NoAnswerAfterThinking => c.error_no_answer_after_thinking,
        ErrorCode::ToolCallsUnsupported => c.error_tool_calls,
        ErrorCode::EmptyAnswer => c.error_empty_answer,
    };
    let values: Vec<(&str, String)> = f
        .params
        .iter()
        .map(|(k, v)| match k.as_str() {
            "name" => (k.as_str(), v.clone()),
            _ => (k.as_str(), number(v, l)),
        })
        .collect();
    let pairs: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut out = fill(template, &pairs);
    for (name, suffix) in [
        ("detail", e.detail_suffix),
        ("retry_after", e.retry_after_suffix),
    ] {
        let named = template.contains(&format!("{{{name}}}"));
        if let Some(value) = f.params.get(name).filter(|v| !named && !v.is_empty()) {
            out.push_str(&fill(suffix, &[(name, &number(value, l))]));
        }
    }
    Some(out)
}

/// A parameter that is a plain number, written the locale's way ("1.5" reads "1,5" in pt-BR);
/// anything else as it is.
fn number(value: &str, l: Locale) -> String {
    if let Ok(n) = value.parse::<u64>() {
        return if value.len() > 4 {
            l.integer(n)
        } else {
            value.to_string()
        };
    }
    match value.split_once('.') {
        Some((whole, frac))
            if !whole.is_empty()
                && frac.len() == 1
                && whole.bytes().all(|b| b.is_ascii_digit())
                && frac.bytes().all(|b| b.is_ascii_digit()) =>
        {
            whole
                .parse::<u64>()
                .ok()
                .and_then(|w| w.checked_mul(10))
                .and_then(|w| w.checked_add(u64::from(frac.as_bytes()[0] - b'0')))
                .map(|tenths| l.tenths(tenths))
                .unwrap_or_else(|| value.to_string())
        }
        _ => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_shows_the_servers_sentence_and_other_languages_their_own() {
        let f = Failure::coded(
            ErrorCode::Silent,
            "The model server went silent for 1.5 s",
            true,
        )
        .with("seconds", "1.5");
        assert_eq!(text(&f, Locale::En), None);
        let pt = text(&f, Locale::PtBr).unwrap_or_default();
        assert!(pt.contains("1,5"), "{pt}");
        assert!(!pt.contains("model server"), "{pt}");
        for l in [Locale::Ja, Locale::Ar] {
            let said = text(&f, l).unwrap_or_default();
            assert!(said.contains("1.5"), "{said}");
        }
        assert_eq!(text(&Failure::new("odd", false), Locale::Ja), None);
    }

    #[test]
    fn a_detail_the_sentence_does_not_name_is_added_after_it() {
        let f = Failure::coded(ErrorCode::UpstreamStatus, "x", true)
            .with("status", "503 Service Unavailable")
            .with("detail", "overloaded")
            .with("retry_after", "7");
        for l in [Locale::PtBr, Locale::Ja, Locale::Ar] {
            let said = text(&f, l).unwrap_or_default();
            assert!(said.contains("503 Service Unavailable"), "{said}");
            assert!(said.contains("overloaded"), "{said}");
            assert!(said.contains('7'), "{said}");
        }
    }

    #[test]
    fn the_servers_english_is_the_english_catalogues_sentence() {
        let f = Failure::of(ErrorCode::TooManyMessages, false)
            .with("count", 1001)
            .with("limit", 1000)
            .said();
        assert_eq!(
            f.message,
            fill(
                Locale::En.catalogue().errors.too_many_messages,
                &[("count", "1001"), ("limit", "1000")]
            )
        );
        assert_eq!(
            text(&f, Locale::En),
            None,
            "English shows the sentence sent"
        );
        let unworded = Failure::of(ErrorCode::EmptyMessage, false);
        assert_eq!(
            text(&unworded, Locale::En).as_deref(),
            Some(Locale::En.catalogue().errors.empty_message),
            "a failure made unworded on the page reads the catalogue too"
        );
        let other = Failure::new("as the model said it", true).said();
        assert_eq!(other.message, "as the model said it");
    }

    /// The server words a coded failure only through the catalogue: no English sentence of its
    /// own beside it (the second wording that once drifted from the catalogue's).
    #[test]
    fn the_server_writes_no_english_failure_of_its_own() {
        let mut found = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from("src/server"), "src/api".into()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let source = std::fs::read_to_string(&path).unwrap_or_default();
                let code = source.split("#[cfg(test)]").next().unwrap_or("");
                for (n, line) in code.lines().enumerate() {
                    let made =
                        line.contains("Failure::coded(") || line.contains("ApiError::coded(");
                    if made && !line.trim_start().starts_with("pub fn coded") {
                        found.push(format!("{}:{}", path.display(), n + 1));
                    }
                }
            }
        }
        found.retain(|at| !at.starts_with("src/api/error.rs"));
        assert!(
            found.is_empty(),
            "English written beside the catalogue at {found:?}"
        );
    }

    #[test]
    fn numbers_in_params_follow_the_locale() {
        assert_eq!(number("12345", Locale::PtBr), "12.345");
        assert_eq!(number("120", Locale::PtBr), "120");
        assert_eq!(number("2.5", Locale::PtBr), "2,5");
        assert_eq!(number("1234.5", Locale::PtBr), "1.234,5");
        assert_eq!(number("0.9", Locale::En), "0.9");
        assert_eq!(
            number("99999999999999999999.5", Locale::En),
            "99999999999999999999.5"
        );
        assert_eq!(number("1 MiB", Locale::PtBr), "1 MiB");
        assert_eq!(number("127.0.0.1:8080", Locale::PtBr), "127.0.0.1:8080");
    }
}
