//! Accounts as clients see them: who is signed in, how the server signs people in, and the
//! personal API tokens of a user.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A user.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Account {
    pub id: String,
    pub name: String,
    pub is_admin: bool,
}

/// What the page needs to know before anything else.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Me {
    /// The signed-in user; none when sign-in is needed.
    pub account: Option<Account>,
    /// `none`, `password`, `header` or `oidc`.
    pub auth: String,
    /// Single sign-on's provider, as its button names it (`PONDER_AUTH=oidc`).
    #[serde(default)]
    pub provider: Option<String>,
    /// Built-in passwords sign people in (`password`, or beside single sign-on).
    #[serde(default)]
    pub passwords: bool,
    /// No user exists yet: the first visit creates the admin.
    pub needs_setup: bool,
    /// `server` (chats live on the server) or `browser`.
    pub history: String,
    /// Who may open shared links: `off` (no Share in the menus), `signed-in` or `public`.
    #[serde(default)]
    pub sharing: String,
}

impl Me {
    /// Accounts (passwords or single sign-on) and nobody signed in: the page is the sign-in
    /// form, and asks the server for nothing that is a user's.
    pub fn must_sign_in(&self) -> bool {
        (self.auth == "password" || self.auth == "oidc") && self.account.is_none()
    }
}

/// A personal API token as listed; the secret is shown once, in [`NewToken`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ApiToken {
    pub id: String,
    pub name: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
}

/// A token just made, with its secret (`pt_…`), which is never shown again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct NewToken {
    pub token: ApiToken,
    pub secret: String,
}
