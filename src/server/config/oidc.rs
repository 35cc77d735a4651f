//! Single sign-on by OpenID Connect (`PONDER_AUTH=oidc`, `PONDER_OIDC_*`).

use super::{AuthMode, ConfigError};

impl AuthMode {
    /// Whether built-in password accounts sign people in.
    pub fn passwords(&self) -> bool {
        match self {
            AuthMode::Password => true,
            AuthMode::Oidc(o) => o.passwords,
            AuthMode::None | AuthMode::Header(_) => false,
        }
    }

    /// The identity provider, with `PONDER_AUTH=oidc`.
    pub fn oidc(&self) -> Option<&Oidc> {
        match self {
            AuthMode::Oidc(o) => Some(o),
            _ => None,
        }
    }
}

/// `PONDER_OIDC_*`, the redirect derived from the first of `PONDER_PUBLIC_URL` when unset.
pub(super) fn from_env(
    get: &impl Fn(&str) -> Option<String>,
    base_path: &str,
) -> Result<Oidc, ConfigError> {
    let public = get("PONDER_PUBLIC_URL");
    let first = public
        .as_deref()
        .and_then(|l| l.split(',').map(str::trim).find(|u| !u.is_empty()));
    oidc(get, first, base_path)
}

/// Where the identity provider sends the browser back, under the base path.
pub const CALLBACK_PATH: &str = "/auth/oidc/callback";

/// The identity provider and the rules Ponder signs people in by.
#[derive(Clone, PartialEq, Eq)]
pub struct Oidc {
    /// The issuer exactly as its discovery document writes it.
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    /// Asked for besides `openid` (which is always asked).
    pub scopes: Vec<String>,
    /// Registered at the provider; never taken from a request's `Host`.
    pub redirect_url: String,
    /// Where the provider returns the browser after its own sign-out.
    pub post_logout_url: String,
    /// "Sign in with {name}".
    pub name: String,
    pub groups_claim: String,
    /// Empty: everyone the provider signs in may use Ponder.
    pub allowed_groups: Vec<String>,
    /// Empty: the first person to sign in is the admin; else admin exactly when in one.
    pub admin_groups: Vec<String>,
    /// Built-in passwords stay beside single sign-on (the admin's break-glass).
    pub passwords: bool,
    /// A first sign-in may take over the password user named by the provider's verified e-mail.
    pub link_email: bool,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("redirect_url", &self.redirect_url)
            .finish_non_exhaustive()
    }
}

fn list(value: Option<String>, by: &[char]) -> Vec<String> {
    value
        .unwrap_or_default()
        .split(by)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn switch(get: &impl Fn(&str) -> Option<String>, name: &str) -> Result<bool, ConfigError> {
    match get(name).map(|v| v.to_ascii_lowercase()).as_deref() {
        None | Some("off" | "0" | "false" | "no") => Ok(false),
        Some("on" | "1" | "true" | "yes") => Ok(true),
        Some(other) => Err(ConfigError(format!("{name}={other:?} must be on or off"))),
    }
}

fn http_url(name: &str, value: &str) -> Result<url::Url, ConfigError> {
    url::Url::parse(value)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
        .ok_or_else(|| {
            ConfigError(format!(
                "{name}={value:?} must be an http(s) address like https://auth.example.com"
            ))
        })
}

/// Reads `PONDER_OIDC_*`; `public_url` is the first of `PONDER_PUBLIC_URL`.
pub(super) fn oidc(
    get: &impl Fn(&str) -> Option<String>,
    public_url: Option<&str>,
    base_path: &str,
) -> Result<Oidc, ConfigError> {
    let need =
        |name: &str| get(name).ok_or_else(|| ConfigError(format!("PONDER_AUTH=oidc needs {name}")));
    let issuer = need("PONDER_OIDC_ISSUER")?;
    let issuer_url = http_url("PONDER_OIDC_ISSUER", &issuer)?;
    let client_id = need("PONDER_OIDC_CLIENT_ID")?;
    let client_secret = match (
        get("PONDER_OIDC_CLIENT_SECRET"),
        get("PONDER_OIDC_CLIENT_SECRET_FILE"),
    ) {
        (Some(secret), None) => secret,
        (None, Some(path)) => std::fs::read_to_string(&path)
            .map_err(|e| {
                ConfigError(format!(
                    "PONDER_OIDC_CLIENT_SECRET_FILE={path:?} cannot be read: {e}"
                ))
            })?
            .trim()
            .to_string(),
        (Some(_), Some(_)) => {
            return Err(ConfigError(
                "set PONDER_OIDC_CLIENT_SECRET or PONDER_OIDC_CLIENT_SECRET_FILE, not both".into(),
            ))
        }
        (None, None) => return Err(ConfigError(
            "PONDER_AUTH=oidc needs PONDER_OIDC_CLIENT_SECRET (or PONDER_OIDC_CLIENT_SECRET_FILE)"
                .into(),
        )),
    };
    if client_secret.is_empty() {
        return Err(ConfigError("the OIDC client secret is empty".into()));
    }
    let root = public_url.map(|u| u.trim_end_matches('/').to_string());
    let redirect_url = match (get("PONDER_OIDC_REDIRECT_URL"), &root) {
        (Some(url), _) => url,
        (None, Some(root)) => format!("{root}{base_path}{CALLBACK_PATH}"),
        (None, None) => {
            return Err(ConfigError(
                "PONDER_AUTH=oidc needs PONDER_OIDC_REDIRECT_URL (or PONDER_PUBLIC_URL to derive it): the address the identity provider sends people back to".into(),
            ))
        }
    };
    let redirect = http_url("PONDER_OIDC_REDIRECT_URL", &redirect_url)?;
    let post_logout_url = match root {
        Some(root) => format!("{root}{base_path}/"),
        None => {
            let mut home = redirect.clone();
            home.set_path(&format!("{base_path}/"));
            home.set_query(None);
            home.to_string()
        }
    };
    let scopes = match get("PONDER_OIDC_SCOPES") {
        Some(v) => list(Some(v), &[',', ' ']),
        None => vec!["openid".into(), "profile".into(), "email".into()],
    }
    .into_iter()
    .filter(|s| s != "openid")
    .collect();
    Ok(Oidc {
        name: get("PONDER_OIDC_NAME")
            .unwrap_or_else(|| issuer_url.host_str().unwrap_or("OpenID").to_string()),
        issuer,
        client_id,
        client_secret,
        scopes,
        redirect_url: redirect.to_string(),
        post_logout_url,
        groups_claim: get("PONDER_OIDC_GROUPS_CLAIM").unwrap_or_else(|| "groups".into()),
        allowed_groups: list(get("PONDER_OIDC_ALLOWED_GROUPS"), &[',']),
        admin_groups: list(get("PONDER_OIDC_ADMIN_GROUPS"), &[',']),
        passwords: switch(get, "PONDER_OIDC_PASSWORDS")?,
        link_email: switch(get, "PONDER_OIDC_LINK_EMAIL")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<Oidc, ConfigError> {
        let map: std::collections::HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        oidc(&|k: &str| map.get(k).cloned(), None, "")
    }

    const BASE: [(&str, &str); 4] = [
        ("PONDER_OIDC_ISSUER", "https://auth.example.com"),
        ("PONDER_OIDC_CLIENT_ID", "ponder"),
        ("PONDER_OIDC_CLIENT_SECRET", "s3cret"),
        (
            "PONDER_OIDC_REDIRECT_URL",
            "https://chat.example.com/auth/oidc/callback",
        ),
    ];

    #[test]
    fn the_least_configuration_has_safe_defaults() {
        let o = read(&BASE).unwrap();
        assert_eq!(o.scopes, ["profile", "email"]);
        assert_eq!(o.name, "auth.example.com");
        assert_eq!(o.post_logout_url, "https://chat.example.com/");
        assert!(!o.passwords && !o.link_email);
        assert!(o.allowed_groups.is_empty() && o.admin_groups.is_empty());
        assert!(!format!("{o:?}").contains("s3cret"));
    }

    #[test]
    fn missing_or_broken_settings_are_named() {
        for drop in [
            "PONDER_OIDC_ISSUER",
            "PONDER_OIDC_CLIENT_ID",
            "PONDER_OIDC_CLIENT_SECRET",
            "PONDER_OIDC_REDIRECT_URL",
        ] {
            let some: Vec<_> = BASE.iter().copied().filter(|(k, _)| *k != drop).collect();
            let e = read(&some).unwrap_err().0;
            assert!(e.contains(drop), "{e}");
        }
        let mut bad = BASE.to_vec();
        bad.push(("PONDER_OIDC_PASSWORDS", "maybe"));
        assert!(read(&bad).unwrap_err().0.contains("PONDER_OIDC_PASSWORDS"));
        let mut bad = BASE.to_vec();
        bad[0] = ("PONDER_OIDC_ISSUER", "auth.example.com");
        assert!(read(&bad).unwrap_err().0.contains("http(s)"));
    }

    #[test]
    fn the_redirect_follows_the_public_address_and_base_path() {
        let some: Vec<_> = BASE[..3].to_vec();
        let map: std::collections::HashMap<String, String> = some
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let o = oidc(
            &|k: &str| map.get(k).cloned(),
            Some("https://chat.example.com/"),
            "/ponder",
        )
        .unwrap();
        assert_eq!(
            o.redirect_url,
            "https://chat.example.com/ponder/auth/oidc/callback"
        );
        assert_eq!(o.post_logout_url, "https://chat.example.com/ponder/");
    }

    #[test]
    fn groups_are_listed_by_commas_and_scopes_by_spaces() {
        let mut more = BASE.to_vec();
        more.push(("PONDER_OIDC_ALLOWED_GROUPS", "family, Old friends"));
        more.push(("PONDER_OIDC_ADMIN_GROUPS", "admins"));
        more.push(("PONDER_OIDC_SCOPES", "openid email groups"));
        let o = read(&more).unwrap();
        assert_eq!(o.allowed_groups, ["family", "Old friends"]);
        assert_eq!(o.admin_groups, ["admins"]);
        assert_eq!(o.scopes, ["email", "groups"]);
    }
}
