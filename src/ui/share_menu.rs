//! The Share menu of the conversation shown: make a link to it as it is shown now (with or
//! without its thinking and its files), copy it, and manage its links (update one to the
//! conversation as it is now, revoke one). The panel is a chunk of its own (`share_panel`),
//! fetched when the menu first opens.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos::wasm_split::SplitLoaderError;

use super::icons::{icon, Icon};
use super::menus::menu_toggled;
use crate::client::controller::ChatController;
use crate::domain::share::{ShareChoice, ShareLink};
use crate::domain::Failure;
use crate::i18n::fill;

/// The menu, where links can be made: history on the server, someone signed in, and
/// `PONDER_SHARING` not `off`.
#[component]
pub fn ShareMenu() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    let panel = RwSignal::new(None::<SharePanelCode>);
    let can_share = move || {
        chat.me.with(|me| {
            me.as_ref().is_some_and(|me| {
                me.account.is_some()
                    && me.history == "server"
                    && !matches!(me.sharing.as_str(), "" | "off")
            })
        })
    };
    view! {
        <Show when=can_share>
            <details class="menu share-menu" on:toggle=move |ev| {
                if menu_toggled(ev) && panel.get_untracked().is_none() {
                    chat.when_loaded(share_panel_code(), move |code| panel.set(Some(code)));
                }
            }>
                <summary class="menu-button">{icon(Icon::Share)}<span class="menu-label">{t.share_menu}</span></summary>
                <div class="menu-panel">{move || panel.get().map(|code| code())}</div>
            </details>
        </Show>
    }
}

/// Builds the panel.
type SharePanelCode = fn() -> AnyView;

#[leptos::wasm_split::wasm_split(share_panel, wasm_split_path = leptos::wasm_split, fallible)]
fn share_panel_code() -> Result<SharePanelCode, SplitLoaderError> {
    Ok(|| view! { <SharePanel/> }.into_any())
}

#[component]
fn SharePanel() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    let thinking = RwSignal::new(false);
    let files = RwSignal::new(false);
    let instructions = RwSignal::new(false);
    let made = RwSignal::new(None::<String>);
    let copied = RwSignal::new(false);
    let links = RwSignal::new(Vec::<ShareLink>::new());
    let failed = RwSignal::new(None::<Failure>);
    let busy = RwSignal::new(false);
    let refresh = move || {
        let id = chat.conversation_id.get_untracked();
        spawn_local(async move {
            match crate::api::share::list_shares(Some(id)).await {
                Ok(list) => links.set(list),
                Err(e) => failed.set(Some(e.0)),
            }
        });
    };
    Effect::new(move |_| {
        chat.conversation_id.track();
        chat.revision.track();
        made.set(None);
        refresh();
    });
    let run = move |job: std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Option<String>, Failure>>>,
    >| {
        busy.set(true);
        failed.set(None);
        spawn_local(async move {
            match job.await {
                Ok(url) => {
                    if url.is_some() {
                        made.set(url);
                        copied.set(false);
                    }
                }
                Err(e) => failed.set(Some(e)),
            }
            busy.set(false);
            refresh();
        });
    };
    let create = move |_| {
        let id = chat.conversation_id.get_untracked();
        let choice = ShareChoice {
            thinking: thinking.get_untracked(),
            files: files.get_untracked(),
            instructions: instructions.get_untracked(),
        };
        run(Box::pin(async move {
            let link = crate::api::share::create_share(id, choice)
                .await
                .map_err(|e| e.0)?;
            Ok(link
                .url
                .map(|u| format!("{}{u}", crate::client::browser::page_origin())))
        }));
    };
    let copy = move |_| {
        if let Some(url) = made.get_untracked() {
            spawn_local(async move {
                if super::dom::copy_text(url).await {
                    super::dom::flash(copied);
                }
            });
        }
    };
    let row = move |link: ShareLink| {
        let (update_id, revoke_id, choice) = (link.id.clone(), link.id.clone(), link.choice);
        let (iso, _) = super::dom::local_time(link.created_at as f64);
        let day = iso.get(..10).unwrap_or_default().to_string();
        let mut about = vec![if choice.thinking {
            t.with_thinking
        } else {
            t.without_thinking
        }];
        if choice.files {
            about.push(t.with_files);
        }
        view! {
            <li class="share-link">
                <span class="share-link-about">
                    {fill(t.link_made, &[("date", &day)])} " · " {about.join(" · ")}
                </span>
                <span class="share-link-actions">
                    <button type="button" class="action" title=t.update_link_label disabled=move || busy.get()
                        on:click=move |_| {
                            let id = update_id.clone();
                            run(Box::pin(async move {
                                crate::api::share::update_share(id, choice).await.map_err(|e| e.0)?;
                                Ok(None)
                            }));
                        }
                    >{t.update_link}</button>
                    <button type="button" class="action danger" disabled=move || busy.get()
                        on:click=move |_| {
                            let id = revoke_id.clone();
                            run(Box::pin(async move {
                                crate::api::share::revoke_share(id).await.map_err(|e| e.0)?;
                                chat.status.set(t.link_revoked.to_string());
                                Ok(None)
                            }));
                        }
                    >{t.revoke_link}</button>
                </span>
            </li>
        }
    };
    view! {
        <div class="share-panel">
            <p class="menu-note">{t.share_explain}</p>
            <div class="checkbox">
                <input type="checkbox" id="share-thinking" prop:checked=move || thinking.get()
                    on:change=move |ev| thinking.set(event_target_checked(&ev))/>
                <label for="share-thinking">{t.include_thinking}</label>
            </div>
            <div class="checkbox">
                <input type="checkbox" id="share-files" prop:checked=move || files.get()
                    on:change=move |ev| files.set(event_target_checked(&ev))/>
                <label for="share-files">{t.include_files}</label>
            </div>
            <Show when=move || chat.instructions.with(Option::is_some)>
                <div class="checkbox">
                    <input type="checkbox" id="share-instructions" prop:checked=move || instructions.get()
                        on:change=move |ev| instructions.set(event_target_checked(&ev))/>
                    <label for="share-instructions">{t.include_instructions}</label>
                </div>
            </Show>
            <button type="button" class="action primary create-link"
                disabled=move || busy.get() || chat.entries.with(Vec::is_empty)
                on:click=create
            >{t.create_link}</button>
            {move || made.get().map(|url| view! {
                <div class="share-made">
                    <input type="text" class="share-url" readonly=true value=url aria-label=t.copy_link
                        on:focus=|ev| {
                            use leptos::wasm_bindgen::JsCast;
                            if let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) {
                                input.select();
                            }
                        }/>
                    <button type="button" class="action" on:click=copy>
                        {move || if copied.get() { t.copied } else { t.copy_link }}
                    </button>
                    <p class="menu-note">{t.link_shown_once}</p>
                </div>
            })}
            {move || failed.get().map(|e| view! { <p class="error-message" role="alert">{crate::client::labels::failure_text(&e, l)}</p> })}
            <h3 class="share-links-title">{t.links_of_chat}</h3>
            {move || {
                let list = links.get();
                if list.is_empty() {
                    view! { <p class="menu-note">{t.no_links}</p> }.into_any()
                } else {
                    view! { <ul class="share-links">{list.into_iter().map(row).collect_view()}</ul> }.into_any()
                }
            }}
        </div>
    }
}
