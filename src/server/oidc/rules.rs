//! What Ponder makes of the claims a provider vouched for: the user's name, whether they may
//! come in, whether they are an admin, and whether they may take over a password account.
//! Plain functions over plain data, so every rule is tested without a provider.

use crate::server::config::oidc::Oidc;
use crate::server::store::identity::MAX_NAME_CHARS;
use crate::server::store::oidc::Person;

/// The claims of a verified ID token, with userinfo's over them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Claims {
    pub subject: String,
    pub email: Option<String>,
    /// Absent counts as not verified.
    pub email_verified: bool,
    pub preferred_username: Option<String>,
    pub name: Option<String>,
    /// The configured groups claim, as a list or one string.
    pub groups: Option<Vec<String>>,
}

impl Claims {
    /// `over` wins wherever it says something; the subject stays this one's.
    pub fn overlaid(mut self, over: Claims) -> Claims {
        if over.email.is_some() {
            self.email = over.email;
            self.email_verified = over.email_verified;
        }
        self.preferred_username = over.preferred_username.or(self.preferred_username);
        self.name = over.name.or(self.name);
        self.groups = over.groups.or(self.groups);
        self
    }
}

/// The groups claim read from a token's or userinfo's extra claims: a list of strings, or one
/// string (some providers send a single group so); anything else says nothing.
pub fn groups_of(
    extra: &serde_json::Map<String, serde_json::Value>,
    claim: &str,
) -> Option<Vec<String>> {
    match extra.get(claim)? {
        serde_json::Value::String(one) => Some(vec![one.clone()]),
        serde_json::Value::Array(many) => Some(
            many.iter()
                .filter_map(|g| g.as_str().map(String::from))
                .collect(),
        ),
        _ => None,
    }
}

/// A user name from the first usable of `preferred_username`, e-mail, `name`, subject: trimmed,
/// control characters dropped, at most [`MAX_NAME_CHARS`] characters.
pub fn user_name(c: &Claims) -> String {
    let clean = |s: &str| -> String {
        use unicode_normalization::UnicodeNormalization;
        let kept: String = s.trim().nfc().filter(|ch| !ch.is_control()).collect();
        kept.trim().chars().take(MAX_NAME_CHARS).collect()
    };
    [
        c.preferred_username.as_deref(),
        c.email.as_deref(),
        c.name.as_deref(),
        Some(c.subject.as_str()),
    ]
    .into_iter()
    .flatten()
    .map(clean)
    .find(|n| !n.is_empty())
    .unwrap_or_else(|| "user".into())
}

fn member(groups: &Option<Vec<String>>, wanted: &[String]) -> bool {
    groups
        .as_deref()
        .unwrap_or_default()
        .iter()
        .any(|g| wanted.contains(g))
}

/// The person to sign in, and whether the groups let them in.
pub fn decide(config: &Oidc, issuer: &str, c: &Claims) -> (Person, bool) {
    let allowed = config.allowed_groups.is_empty() || member(&c.groups, &config.allowed_groups);
    let admin = (!config.admin_groups.is_empty()).then(|| member(&c.groups, &config.admin_groups));
    let link_email = (config.link_email && c.email_verified)
        .then(|| c.email.clone())
        .flatten();
    (
        Person {
            issuer: issuer.to_string(),
            subject: c.subject.clone(),
            name: user_name(c),
            link_email,
            admin,
        },
        allowed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Oidc {
        Oidc {
            issuer: "https://idp".into(),
            client_id: "ponder".into(),
            client_secret: "s".into(),
            scopes: vec![],
            redirect_url: "https://chat/auth/oidc/callback".into(),
            post_logout_url: "https://chat/".into(),
            name: "IdP".into(),
            groups_claim: "groups".into(),
            allowed_groups: vec![],
            admin_groups: vec![],
            passwords: false,
            link_email: false,
        }
    }

    fn alice() -> Claims {
        Claims {
            subject: "0f3a".into(),
            email: Some("alice@example.test".into()),
            email_verified: true,
            preferred_username: Some("alice".into()),
            name: Some("Alice".into()),
            groups: Some(vec!["family".into()]),
        }
    }

    #[test]
    fn the_name_is_the_first_usable_claim_cleaned() {
        assert_eq!(user_name(&alice()), "alice");
        let c = Claims {
            preferred_username: Some(" \u{7} ".into()),
            ..alice()
        };
        assert_eq!(user_name(&c), "alice@example.test");
        let c = Claims {
            subject: "x".repeat(300),
            ..Claims::default()
        };
        assert_eq!(user_name(&c).chars().count(), MAX_NAME_CHARS);
        assert_eq!(user_name(&Claims::default()), "user");
    }

    #[test]
    fn groups_decide_entry_and_admin_when_configured() {
        let mut cfg = config();
        assert!(decide(&cfg, "i", &alice()).1, "no allowed groups: everyone");
        assert_eq!(
            decide(&cfg, "i", &alice()).0.admin,
            None,
            "the first user is"
        );
        cfg.allowed_groups = vec!["friends".into()];
        assert!(!decide(&cfg, "i", &alice()).1);
        let none = Claims {
            groups: None,
            ..alice()
        };
        assert!(!decide(&cfg, "i", &none).1, "no groups claim: not in any");
        cfg.allowed_groups = vec!["family".into()];
        cfg.admin_groups = vec!["admins".into()];
        let (person, allowed) = decide(&cfg, "i", &alice());
        assert!(allowed);
        assert_eq!(person.admin, Some(false));
        let root = Claims {
            groups: Some(vec!["family".into(), "admins".into()]),
            ..alice()
        };
        assert_eq!(decide(&cfg, "i", &root).0.admin, Some(true));
    }

    #[test]
    fn an_email_links_only_when_verified_and_allowed() {
        let mut cfg = config();
        assert_eq!(decide(&cfg, "i", &alice()).0.link_email, None);
        cfg.link_email = true;
        assert_eq!(
            decide(&cfg, "i", &alice()).0.link_email.as_deref(),
            Some("alice@example.test")
        );
        let unverified = Claims {
            email_verified: false,
            ..alice()
        };
        assert_eq!(decide(&cfg, "i", &unverified).0.link_email, None);
    }

    #[test]
    fn groups_come_as_a_list_or_one_string_and_userinfo_wins() {
        let extra: serde_json::Map<_, _> =
            serde_json::from_str(r#"{"groups":["a",1,"b"],"roles":"admin","n":3}"#).unwrap();
        assert_eq!(
            groups_of(&extra, "groups"),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(groups_of(&extra, "roles"), Some(vec!["admin".into()]));
        assert_eq!(groups_of(&extra, "n"), None);
        assert_eq!(groups_of(&extra, "missing"), None);
        let token = Claims {
            groups: Some(vec!["old".into()]),
            ..alice()
        };
        let info = Claims {
            subject: "other".into(),
            groups: Some(vec!["new".into()]),
            email: Some("a2@example.test".into()),
            email_verified: false,
            ..Claims::default()
        };
        let both = token.overlaid(info);
        assert_eq!(both.subject, "0f3a");
        assert_eq!(both.groups, Some(vec!["new".into()]));
        assert_eq!(both.email.as_deref(), Some("a2@example.test"));
        assert!(!both.email_verified);
        assert_eq!(both.preferred_username.as_deref(), Some("alice"));
    }
}
