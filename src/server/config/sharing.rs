//! Who may open shared links (`PONDER_SHARING`).

use super::{AuthMode, ConfigError, HistoryMode};
use crate::domain::share::Sharing;

/// `off`, `signed-in` or `public`. Unset: `public` without accounts (`PONDER_AUTH=none`: whoever
/// reaches this server is its one user already, so "signed in" would change nothing), else
/// `signed-in`; always `off` where the history is kept in the browser, since the server then
/// has no conversation to show (asking for sharing there is an error).
pub(super) fn sharing(
    value: Option<&str>,
    auth: &AuthMode,
    history: HistoryMode,
) -> Result<Sharing, ConfigError> {
    let chosen = match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => None,
        Some(v) => Some(Sharing::parse(v).ok_or_else(|| {
            ConfigError(format!(
                "PONDER_SHARING={v:?} must be off, signed-in or public"
            ))
        })?),
    };
    match (history, chosen) {
        (HistoryMode::Browser, None | Some(Sharing::Off)) => Ok(Sharing::Off),
        (HistoryMode::Browser, Some(_)) => Err(ConfigError(
            "PONDER_SHARING needs the history on the server (PONDER_HISTORY=server): \
             the server shares only the conversations it keeps"
                .into(),
        )),
        (HistoryMode::Server, Some(chosen)) => Ok(chosen),
        (HistoryMode::Server, None) if *auth == AuthMode::None => Ok(Sharing::Public),
        (HistoryMode::Server, None) => Ok(Sharing::SignedIn),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_follows_the_accounts_and_the_history() {
        let server = HistoryMode::Server;
        assert_eq!(
            sharing(None, &AuthMode::None, server).unwrap(),
            Sharing::Public
        );
        assert_eq!(
            sharing(None, &AuthMode::Password, server).unwrap(),
            Sharing::SignedIn
        );
        assert_eq!(
            sharing(Some(""), &AuthMode::Password, server).unwrap(),
            Sharing::SignedIn
        );
        assert_eq!(
            sharing(None, &AuthMode::Password, HistoryMode::Browser).unwrap(),
            Sharing::Off
        );
    }

    #[test]
    fn a_chosen_value_wins_and_a_wrong_one_is_refused() {
        let server = HistoryMode::Server;
        assert_eq!(
            sharing(Some("Public"), &AuthMode::Password, server).unwrap(),
            Sharing::Public
        );
        assert_eq!(
            sharing(Some("off"), &AuthMode::None, server).unwrap(),
            Sharing::Off
        );
        assert_eq!(
            sharing(Some(" signed-in "), &AuthMode::None, server).unwrap(),
            Sharing::SignedIn
        );
        assert!(sharing(Some("everyone"), &AuthMode::None, server).is_err());
        assert!(sharing(Some("public"), &AuthMode::None, HistoryMode::Browser).is_err());
        assert_eq!(
            sharing(Some("off"), &AuthMode::None, HistoryMode::Browser).unwrap(),
            Sharing::Off
        );
    }
}
