//! Every address the router answers besides the server functions, in one table. The router
//! adds each route from it and the API's description documents each of its entries (by an
//! exhaustive `match`), so a route cannot be served undocumented or documented unserved; the
//! server functions register themselves and are checked against the description by the tests.

use axum::http::Method;

/// One route of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// The chat page (a new conversation, or the last one shown).
    Chat,
    /// A conversation's page, `/c/<id>` (and `/c/<id>/`).
    Conversation,
    /// A conversation shared by link.
    SharedPage,
    /// The `n`th file a shared conversation shows.
    SharedFile,
    /// "Continue in Ponder" from a shared page.
    ContinueShared,
    /// Keeps an attachment, or judges one (`keep=0`).
    UploadAttachment,
    /// An attachment's bytes, to its owner.
    DownloadAttachment,
    /// The ledger's lines of a month as CSV.
    UsageCsv,
    /// This API's OpenAPI description.
    Description,
    /// Liveness.
    Health,
    /// Readiness: the database and the upstream.
    Ready,
    /// Prometheus metrics.
    Metrics,
    /// Single sign-on: to the identity provider.
    SsoLogin,
    /// Single sign-on: back from it.
    SsoCallback,
}

impl Route {
    pub const ALL: [Route; 14] = [
        Route::Chat,
        Route::Conversation,
        Route::SharedPage,
        Route::SharedFile,
        Route::ContinueShared,
        Route::UploadAttachment,
        Route::DownloadAttachment,
        Route::UsageCsv,
        Route::Description,
        Route::Health,
        Route::Ready,
        Route::Metrics,
        Route::SsoLogin,
        Route::SsoCallback,
    ];

    pub fn method(self) -> Method {
        match self {
            Route::ContinueShared | Route::UploadAttachment => Method::POST,
            _ => Method::GET,
        }
    }

    /// The path under the base path, in the syntax axum and OpenAPI share (`{id}`).
    pub fn path(self) -> String {
        let share = crate::domain::share::SHARE_PREFIX;
        let upload = crate::domain::attachment::UPLOAD_PATH;
        match self {
            Route::Chat => "/".into(),
            Route::Conversation => "/c/{id}".into(),
            Route::SharedPage => format!("{share}{{token}}"),
            Route::SharedFile => format!("{share}{{token}}/f/{{n}}"),
            Route::ContinueShared => format!("{share}{{token}}/continue"),
            Route::UploadAttachment => upload.into(),
            Route::DownloadAttachment => format!("{upload}/{{id}}"),
            Route::UsageCsv => super::usage::CSV_PATH.into(),
            Route::Description => DESCRIPTION_PATH.into(),
            Route::Health => "/healthz".into(),
            Route::Ready => "/readyz".into(),
            Route::Metrics => "/metrics".into(),
            Route::SsoLogin => "/auth/oidc/login".into(),
            Route::SsoCallback => crate::server::config::oidc::CALLBACK_PATH.into(),
        }
    }

    /// Whether it also answers at the root when Ponder lives under a base path (a container's
    /// healthcheck or a scraper need not know the base).
    pub fn at_root_too(self) -> bool {
        matches!(self, Route::Health | Route::Ready | Route::Metrics)
    }
}

/// Where the description is served.
pub const DESCRIPTION_PATH: &str = "/api/openapi.json";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_listed_once_with_its_own_method_and_path() {
        let mut seen = std::collections::HashSet::new();
        for route in Route::ALL {
            assert!(seen.insert((route.method(), route.path())), "{route:?}");
            assert!(route.path().starts_with('/'), "{route:?}");
        }
        assert_eq!(Route::UploadAttachment.path(), "/api/attachments");
        assert_eq!(Route::SharedFile.path(), "/s/{token}/f/{n}");
    }
}
