//! The HTTP application: Leptos pages and server functions, health, readiness and metrics,
//! under an optional base path; and the serve loop with graceful shutdown.

mod address;
pub mod assets;
pub mod attachments;
pub mod guard;
pub mod host_check;
mod lifecycle;
pub mod locale;
pub mod oidc;
mod ops;
pub mod request;
pub mod routes;
pub mod shared;
pub mod socket;
pub mod usage;

pub use lifecycle::{prepare, run, serve};
pub use ops::healthcheck;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{OriginalUri, Request, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use leptos::prelude::*;
use leptos_axum::LeptosRoutes;

use crate::domain::page::PageSettings;
use crate::server::http::guard::Guard;
use crate::server::http::request::set_security_headers;
use crate::server::state::AppState;
use ops::ops_router;
use routes::Route;

/// The pages the server serves, handed in by the composition root ([`crate::site`]): the server
/// knows how to serve a page shell, not what it draws, and imports no UI.
#[derive(Clone, Copy)]
pub struct Site {
    /// The page shell: `<html>`, the head and the app.
    pub shell: fn(LeptosOptions, PageSettings) -> AnyView,
    /// The chunk holding a locale's words, which a page in that language preloads.
    pub words_chunk: fn(crate::i18n::Locale) -> Option<&'static str>,
    /// The page of a conversation shared by link.
    pub shared: shared::SharedDrawing,
    /// The API's OpenAPI description, as JSON (`GET /api/openapi.json`).
    pub description: fn() -> &'static str,
}

/// The whole application, as `main` serves it and the tests call it.
///
/// Under a base path everything (pages, `/pkg` assets, server functions, ops routes) lives below
/// it; `/healthz`, `/readyz` and `/metrics` also answer at the root so a container healthcheck
/// or a scraper need not know the base, and `/` redirects to the app.
pub fn router(state: Arc<AppState>, leptos_options: LeptosOptions, site: Site) -> Router {
    let shell = site.shell;
    let (leptos_options, hashed) = crate::server::http::assets::with_hashed_names(leptos_options);
    let base = state.config.base_path.clone();
    let page = PageSettings {
        base_path: base.clone(),
        guard_secs: state.config.pre_token_guard.as_secs().max(1),
        split_loader: crate::server::http::assets::split_loader(&leptos_options),
        words_chunks: crate::i18n::Locale::ALL
            .into_iter()
            .filter_map(|locale| {
                let chunk = (site.words_chunk)(locale)?;
                Some((
                    locale.tag(),
                    crate::server::http::assets::split_chunk(&leptos_options, chunk)?,
                ))
            })
            .collect(),
    };
    let context = {
        let state = state.clone();
        let page = page.clone();
        let options = leptos_options.clone();
        move || {
            provide_context(state.clone());
            provide_context(page.clone());
            provide_context(options.clone());
            provide_context(page_me(&state));
            set_security_headers();
        }
    };
    let ops = ops_router(&state);
    let app_fn = {
        let options = leptos_options.clone();
        let page = page.clone();
        move || shell(options.clone(), page.clone())
    };

    // Server functions only: pages are added below so that they render with the full path.
    let mut app = Router::new().leptos_routes_with_context(
        &leptos_options,
        Vec::new(),
        context.clone(),
        app_fn.clone(),
    );
    let render = leptos_axum::render_app_to_stream_with_context(context.clone(), app_fn);
    // The chat is the one page (`App` shows it at the base path); any other path reaches the
    // fallback, which renders the not-found page with a 404.
    let conversation = Route::Conversation.path();
    for path in [
        Route::Chat.path(),
        conversation.clone(),
        format!("{conversation}/"),
    ] {
        let render = render.clone();
        let state = state.clone();
        app = app.route(
            &path,
            get(move |req: Request<Body>| {
                let (render, state) = (render.clone(), state.clone());
                async move { render(page_request(&state, req).await).await }
            }),
        );
    }
    {
        let state = state.clone();
        app = app.route(
            &Route::UsageCsv.path(),
            get(move |req: Request<Body>| {
                let state = state.clone();
                async move { usage::csv(&state, req).await }
            }),
        );
    }
    {
        let (up, down) = (state.clone(), state.clone());
        app = app
            .route(
                &Route::UploadAttachment.path(),
                axum::routing::post(move |req: Request<Body>| {
                    let state = up.clone();
                    async move { attachments::upload(&state, req).await }
                }),
            )
            .route(
                &Route::DownloadAttachment.path(),
                get(
                    move |axum::extract::Path(id): axum::extract::Path<String>,
                          req: Request<Body>| {
                        let state = down.clone();
                        async move { attachments::download(&state, &id, req).await }
                    },
                ),
            );
    }
    app = shared_routes(app, &state, site.shared, &leptos_options);
    let description = site.description;
    app = app.route(
        &Route::Description.path(),
        get(move || async move {
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                description(),
            )
        }),
    );
    let fallback = leptos_axum::file_and_error_handler_with_context(context, move |options| {
        shell(options, page.clone())
    });
    let site_root = std::path::PathBuf::from(leptos_options.site_root.as_ref());
    let fallback_state = state.clone();
    let app = app
        .fallback(
            move |uri: Uri, options: State<LeptosOptions>, req: Request<Body>| {
                let allowed = only_the_built_site(&site_root, uri.path());
                let (fallback, state) = (fallback.clone(), fallback_state.clone());
                async move {
                    match allowed {
                        Ok(()) => {
                            let req = page_request(&state, req).await;
                            fallback(uri, options, req).await
                        }
                        Err(()) => (StatusCode::NOT_FOUND, "not found\n").into_response(),
                    }
                }
            },
        )
        .with_state(leptos_options)
        .merge(ops.clone());

    let guard = Arc::new(Guard::new(&state.config, state.metrics.clone()));
    if base.is_empty() {
        return with_guard(app, guard, state, hashed);
    }
    let mut outer = Router::new()
        .merge(ops)
        .route("/", get(redirect_to(format!("{base}/"))));
    // `nest` serves `/ponder` but not `/ponder/`, the address a proxy's `location /ponder/`
    // forwards; the page handler renders from the full URI, so it can answer there directly.
    {
        let state = state.clone();
        outer = outer.route(
            &format!("{base}/"),
            get(move |req: Request<Body>| {
                let (render, state) = (render.clone(), state.clone());
                async move { render(page_request(&state, req).await).await }
            }),
        );
    }
    with_guard(outer.nest(&base, app), guard, state, hashed)
}

/// `/s/<token>` (the shared page), its files, and its "Continue in Ponder" form.
fn shared_routes(
    app: Router<LeptosOptions>,
    state: &Arc<AppState>,
    drawing: shared::SharedDrawing,
    options: &LeptosOptions,
) -> Router<LeptosOptions> {
    use axum::extract::Path;
    let stylesheet: Arc<str> = format!(
        "{}/{}/{}.css",
        state.config.base_path, options.site_pkg_dir, options.output_name
    )
    .into();
    let (page, file, form) = (state.clone(), state.clone(), state.clone());
    let (login, back) = (state.clone(), state.clone());
    let (to_idp, from_idp) = (stylesheet.clone(), stylesheet.clone());
    app.route(
        &Route::SsoLogin.path(),
        get(move |req: Request<Body>| {
            let (state, stylesheet) = (login.clone(), to_idp.clone());
            async move { oidc::login(&state, &stylesheet, req).await }
        }),
    )
    .route(
        &Route::SsoCallback.path(),
        get(move |req: Request<Body>| {
            let (state, stylesheet) = (back.clone(), from_idp.clone());
            async move { oidc::callback(&state, &stylesheet, req).await }
        }),
    )
    .route(
        &Route::SharedPage.path(),
        get(move |Path(token): Path<String>, req: Request<Body>| {
            let (state, stylesheet) = (page.clone(), stylesheet.clone());
            async move { shared::page(&state, drawing, &stylesheet, &token, req).await }
        }),
    )
    .route(
        &Route::SharedFile.path(),
        get(
            move |Path((token, n)): Path<(String, String)>, req: Request<Body>| {
                let state = file.clone();
                async move { shared::file(&state, &token, &n, req).await }
            },
        ),
    )
    .route(
        &Route::ContinueShared.path(),
        axum::routing::post(move |Path(token): Path<String>, req: Request<Body>| {
            let state = form.clone();
            async move { shared::continue_in_ponder(&state, &token, req).await }
        }),
    )
}

/// The guard in front of every request, the caching rule of [`crate::server::http::assets`] inside it, and
/// around it one tracing span per request: method
/// and path when it starts, status and duration when its response ends (logged at `debug`, so
/// `RUST_LOG=ponder=debug` shows every request). Lines logged while a request is served, a
/// turn's included, carry the span in the text format.
fn with_guard(
    app: Router,
    guard: Arc<Guard>,
    state: Arc<AppState>,
    hashed: Option<Arc<str>>,
) -> Router {
    use tower_http::trace::TraceLayer;
    let traced = TraceLayer::new_for_http()
        .make_span_with(|req: &Request<Body>| {
            tracing::info_span!(
                "request",
                method = %req.method(),
                path = %req.uri().path(),
                status = tracing::field::Empty,
                duration_ms = tracing::field::Empty,
            )
        })
        .on_request(())
        .on_response(|res: &Response, latency: Duration, span: &tracing::Span| {
            span.record("status", res.status().as_u16());
            span.record("duration_ms", latency.as_secs_f64() * 1000.0);
            tracing::debug!(
                status = res.status().as_u16(),
                duration_ms = latency.as_secs_f64() * 1000.0,
                "response"
            );
        })
        .on_body_chunk(())
        .on_eos(
            |_: Option<&axum::http::HeaderMap>, whole: Duration, span: &tracing::Span| {
                span.record("duration_ms", whole.as_secs_f64() * 1000.0);
                tracing::debug!(
                    duration_ms = whole.as_secs_f64() * 1000.0,
                    "response body ended"
                );
            },
        )
        .on_failure(());
    app.layer(axum::middleware::from_fn(move |req, next| {
        crate::server::http::assets::cache_control(hashed.clone(), req, next)
    }))
    .layer(axum::middleware::from_fn_with_state(
        state,
        crate::server::auth::authenticate,
    ))
    .layer(axum::middleware::from_fn_with_state(
        guard,
        crate::server::http::guard::guard,
    ))
    .layer(compress_pages_and_json())
    .layer(traced)
}

/// Gzip for what Ponder writes at request time: the page (7.7 KB of HTML, 2.6 KB gzipped) and
/// the API's JSON (a 5,000-model list). The assets are compressed at build time and keep their
/// own `Content-Encoding`; event streams, images and anything else pass untouched, so a turn is
/// never buffered. No secret and no attacker's text share a response here (the session is an
/// `HttpOnly`, `SameSite=Lax` cookie), which is what a compression side channel would need.
fn compress_pages_and_json(
) -> tower_http::compression::CompressionLayer<impl tower_http::compression::Predicate> {
    use tower_http::compression::predicate::{DefaultPredicate, Predicate};
    let pages_and_json = |_: StatusCode,
                          _: axum::http::Version,
                          headers: &axum::http::HeaderMap,
                          _: &axum::http::Extensions| {
        headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/html") || t.starts_with("application/json"))
    };
    tower_http::compression::CompressionLayer::new()
        .gzip(true)
        .compress_when(DefaultPredicate::new().and(pages_and_json))
}

/// Refuses what the static files must never show: a path with a segment that starts with a dot
/// (`.env`, `.git/`), and anything reached through a symbolic link inside the site root.
fn only_the_built_site(root: &std::path::Path, path: &str) -> Result<(), ()> {
    let decoded = crate::server::config::percent_decode(path);
    let mut at = root.to_path_buf();
    for segment in decoded.split(['/', '\\']).filter(|s| !s.is_empty()) {
        if segment.starts_with('.') {
            return Err(());
        }
        at.push(segment);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(()),
            Ok(_) => {}
            // Past the files that exist: what is left is a page route.
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// Who the page is rendered for, so the page knows from its first render whether to sign in and
/// where chats live (`needs_setup` is asked for by the sign-in form itself).
fn page_me(state: &AppState) -> crate::domain::account::Me {
    use crate::server::auth::Caller;
    let account = match crate::server::http::request::page_caller() {
        Some(Caller::Known(who)) => Some(crate::server::accounts::account(who.user())),
        _ => None,
    };
    crate::domain::account::Me {
        account,
        auth: state.config.auth.name().into(),
        provider: state.config.auth.oidc().map(|o| o.name.clone()),
        passwords: state.config.auth.passwords(),
        needs_setup: false,
        history: match state.config.history {
            crate::server::config::HistoryMode::Server => "server".into(),
            crate::server::config::HistoryMode::Browser => "browser".into(),
        },
        sharing: state.config.sharing.name().into(),
    }
}

/// A page request as the render reads it: its full path, its language, and whether the
/// conversation its address names is the caller's.
async fn page_request(state: &AppState, req: Request<Body>) -> Request<Body> {
    let req = locale::attach(state, with_full_uri(req)).await;
    address::attach(state, req).await
}

/// Puts back the path the browser asked for. Axum strips a nest's prefix; the Leptos router
/// must see it, because it has the same base as in the browser and links are rendered from it.
fn with_full_uri(mut req: Request<Body>) -> Request<Body> {
    if let Some(OriginalUri(uri)) = req.extensions().get::<OriginalUri>().cloned() {
        *req.uri_mut() = uri;
    }
    req
}

fn redirect_to(location: String) -> impl Fn() -> std::future::Ready<Redirect> + Clone {
    move || std::future::ready(Redirect::temporary(&location))
}
