//! The account panel: personal API tokens (made, shown once, revoked) for scripts and the
//! terminal client, and, for an admin, the users of this Ponder (added and removed); and the
//! settings' account section that opens it. Both are the `account_panel` chunk.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::dom;
use crate::client::controller::ChatController;
use crate::domain::account::{Account, ApiToken};

/// Who is signed in, with Sign out and Sign out everywhere (built-in accounts), and the
/// account panel (tokens; users for an admin) whenever Ponder knows who people are.
#[component]
pub fn AccountSection() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let panel = RwSignal::new(false);
    // The panel is a modal of its own, over a backdrop: the Settings menu it came from closes.
    let open_panel = move |_| {
        super::dom::close_menus_outside(None);
        panel.set(true);
    };
    let t = crate::ui::locale::tr();
    let signed_in = move || {
        chat.me.get().filter(|me| me.auth != "none").and_then(|me| {
            me.account
                .map(|a| (me.auth == "password" || me.auth == "oidc", a))
        })
    };
    let sign_out = move |everywhere: bool| {
        leptos::task::spawn_local(async move {
            let done = if everywhere {
                crate::api::account::sign_out_everywhere()
                    .await
                    .map(|()| None)
            } else {
                crate::api::account::sign_out().await
            };
            if let Ok(Some(provider)) = &done {
                crate::client::browser::leave_for(provider);
            } else if done.is_ok() {
                // To the base path: the next person to sign in here starts on a new chat,
                // not on the address of this one's last.
                crate::client::browser::load_page(&crate::client::browser::Address::NewChat);
            }
        });
    };
    move || {
        signed_in().map(|(own_accounts, account)| {
            let for_panel = account.clone();
            view! {
                <fieldset class="account">
                    <legend>{t.account}</legend>
                    <p class="account-name">{signed_in_as(t.signed_in_as, account.name)}</p>
                    <button type="button" class="action" aria-haspopup="dialog" on:click=open_panel>
                        {if account.is_admin { t.tokens_and_users } else { t.tokens }}
                    </button>
                    {own_accounts.then(|| view! {
                        <button type="button" class="action" on:click=move |_| sign_out(false)>{t.sign_out}</button>
                        <button type="button" class="action" on:click=move |_| sign_out(true)>{t.sign_out_everywhere}</button>
                    })}
                </fieldset>
                {move || panel.get().then(|| {
                    let account = for_panel.clone();
                    view! {
                        <leptos::portal::Portal>
                            <div class="modal-backdrop" on:click=move |_| panel.set(false)></div>
                            <AccountPanel open=panel account=account.clone()/>
                        </leptos::portal::Portal>
                    }
                })}
            }
        })
    }
}

/// "Signed in as {name}" with the name in bold, wherever the language puts it.
fn signed_in_as(template: &'static str, name: String) -> impl IntoView {
    let (before, after) = template.split_once("{name}").unwrap_or((template, ""));
    view! { {before} <strong dir="auto">{name}</strong> {after} }
}

/// The panel, shown while `open` is set; Escape or Close hides it.
#[component]
pub fn AccountPanel(
    open: RwSignal<bool>,
    /// The signed-in user: the users section shows only for an admin.
    account: Account,
) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let is_admin = account.is_admin;
    let close = NodeRef::<leptos::html::Button>::new();
    Effect::new(move |_| {
        if let Some(button) = close.get() {
            let _ = button.focus();
        }
    });
    let w = crate::ui::locale::tr();
    view! {
        <div
            class="account-panel"
            role="dialog"
            aria-modal="true"
            aria-labelledby="account-panel-title"
            on:keydown=move |ev| {
                if ev.key() == "Escape" {
                    open.set(false);
                }
            }
        >
            <div class="account-panel-head">
                <h2 id="account-panel-title">{crate::i18n::fill(w.account_of, &[("name", &account.name)])}</h2>
                <button type="button" class="action" node_ref=close on:click=move |_| open.set(false)>{w.close}</button>
            </div>
            {move || error.get().map(|e| view! { <p class="sign-in-error" role="alert">{e}</p> })}
            <Tokens error/>
            {is_admin.then(|| view! { <Users error me=account.id.clone()/> })}
            {is_admin.then(|| view! { <SharedLinks error/> })}
        </div>
    }
}

/// A sentence with one `{name}` shown as code (a header a script sends, say).
fn with_code(template: &'static str, name: &str, code: &'static str) -> impl IntoView {
    let mark = format!("{{{name}}}");
    let (before, after) = template.split_once(mark.as_str()).unwrap_or((template, ""));
    view! { {before} <code>{code}</code> {after} }
}

fn shown_error(error: RwSignal<Option<String>>, what: &str, e: crate::api::error::ApiError) {
    let detail = crate::client::labels::failure_text(&e.0, crate::client::browser::page_locale());
    error.set(Some(format!("{what} ({detail})")));
}

#[component]
fn Tokens(error: RwSignal<Option<String>>) -> impl IntoView {
    let w = crate::ui::locale::tr();
    let tokens = RwSignal::new(Vec::<ApiToken>::new());
    let secret = RwSignal::new(None::<(String, String)>);
    let name = RwSignal::new(String::new());
    let copied = RwSignal::new(false);
    let reload = move || {
        spawn_local(async move {
            match crate::api::account::list_tokens().await {
                Ok(list) => tokens.set(list),
                Err(e) => shown_error(error, w.tokens_not_listed, e),
            }
        })
    };
    reload();
    let create = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let label = name.get_untracked().trim().to_string();
        if label.is_empty() {
            return;
        }
        spawn_local(async move {
            match crate::api::account::create_token(label).await {
                Ok(made) => {
                    name.set(String::new());
                    secret.set(Some((made.token.name.clone(), made.secret)));
                    error.set(None);
                    reload();
                }
                Err(e) => shown_error(error, w.token_not_made, e),
            }
        });
    };
    let revoke = move |id: String| {
        spawn_local(async move {
            match crate::api::account::revoke_token(id).await {
                Ok(()) => reload(),
                Err(e) => shown_error(error, w.token_not_revoked, e),
            }
        });
    };
    view! {
        <section class="account-section" aria-labelledby="tokens-title">
            <h3 id="tokens-title">{w.api_tokens}</h3>
            <p class="sign-in-note">{with_code(w.token_use, "header", "Authorization: Bearer <token>")}</p>
            {move || secret.get().map(|(label, value)| {
                let for_copy = value.clone();
                view! {
                    <div class="new-secret" role="status">
                        <p>{crate::i18n::fill(w.token_shown_once, &[("name", &label)])}</p>
                        <code class="secret">{value}</code>
                        <button type="button" class="action" on:click=move |_| {
                            let text = for_copy.clone();
                            spawn_local(async move {
                                if dom::copy_text(text).await {
                                    dom::flash(copied);
                                }
                            });
                        }>{move || if copied.get() { w.copied } else { w.copy_token }}</button>
                    </div>
                }
            })}
            <ul class="account-list" aria-label=w.your_tokens>
                <For each=move || tokens.get() key=|t| t.id.clone() let:t>
                    <li>
                        <span class="account-item-name">{t.name.clone()}</span>
                        <span class="account-item-note">
                            {match t.last_used_at {
                                Some(at) => crate::i18n::fill(w.last_used, &[("when", &dom::local_time(at as f64).1)]),
                                None => w.never_used.to_string(),
                            }}
                        </span>
                        <button
                            type="button"
                            class="action danger"
                            aria-label=crate::i18n::fill(w.revoke_token, &[("name", &t.name)])
                            on:click={
                                let id = t.id.clone();
                                move |_| revoke(id.clone())
                            }
                        >
                            {w.revoke}
                        </button>
                    </li>
                </For>
            </ul>
            <form class="account-form" on:submit=create>
                <label for="token-name">{w.new_token_name}</label>
                <input id="token-name" type="text" maxlength="100" prop:value=move || name.get()
                    on:input=move |ev| name.set(event_target_value(&ev))/>
                <button type="submit" class="action">{w.make_token}</button>
            </form>
        </section>
    }
}

/// Every shared link on the server, with its owner (the admin's), each revocable.
#[component]
fn SharedLinks(error: RwSignal<Option<String>>) -> impl IntoView {
    let w = crate::ui::locale::tr();
    let links = RwSignal::new(Vec::<crate::domain::share::ShareLink>::new());
    let reload = move || {
        spawn_local(async move {
            match crate::api::share::all_shares().await {
                Ok(list) => links.set(list),
                Err(e) => shown_error(error, w.all_links, e),
            }
        })
    };
    reload();
    let revoke = move |id: String| {
        spawn_local(async move {
            match crate::api::share::revoke_any_share(id).await {
                Ok(()) => reload(),
                Err(e) => shown_error(error, w.all_links, e),
            }
        });
    };
    view! {
        <section class="account-section" aria-labelledby="links-title">
            <h3 id="links-title">{w.all_links}</h3>
            <Show when=move || links.with(Vec::is_empty)>
                <p class="menu-note">{w.no_links}</p>
            </Show>
            <ul class="account-list shared-links" aria-label=w.all_links>
                <For each=move || links.get() key=|l| l.id.clone() let:link>
                    <li>
                        <span class="account-item-name" dir="auto">
                            {crate::i18n::fill(w.link_by, &[
                                ("title", &crate::i18n::title(w, &link.title)),
                                ("name", link.owner.as_deref().unwrap_or("")),
                            ])}
                        </span>
                        <span class="account-item-note">
                            {if link.choice.thinking { w.with_thinking } else { w.without_thinking }}
                            {link.choice.files.then(|| format!(" · {}", w.with_files))}
                        </span>
                        {
                            let id = link.id.clone();
                            view! {
                                <button type="button" class="action danger"
                                    on:click=move |_| revoke(id.clone())>{w.revoke_link}</button>
                            }
                        }
                    </li>
                </For>
            </ul>
        </section>
    }
}

#[component]
fn Users(error: RwSignal<Option<String>>, me: String) -> impl IntoView {
    let w = crate::ui::locale::tr();
    let users = RwSignal::new(Vec::<Account>::new());
    let name = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let admin = RwSignal::new(false);
    let confirming = RwSignal::new(None::<String>);
    let reload = move || {
        spawn_local(async move {
            match crate::api::account::list_users().await {
                Ok(list) => users.set(list),
                Err(e) => shown_error(error, w.users_not_listed, e),
            }
        })
    };
    reload();
    let add = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let (n, p, a) = (
            name.get_untracked().trim().to_string(),
            password.get_untracked(),
            admin.get_untracked(),
        );
        spawn_local(async move {
            match crate::api::account::add_user(n, p, a).await {
                Ok(_) => {
                    name.set(String::new());
                    password.set(String::new());
                    admin.set(false);
                    error.set(None);
                    reload();
                }
                Err(e) => shown_error(error, w.user_not_added, e),
            }
        });
    };
    let remove = move |id: String| {
        spawn_local(async move {
            match crate::api::account::remove_user(id).await {
                Ok(()) => {
                    confirming.set(None);
                    reload();
                }
                Err(e) => shown_error(error, w.user_not_removed, e),
            }
        });
    };
    view! {
        <section class="account-section" aria-labelledby="users-title">
            <h3 id="users-title">{w.users}</h3>
            <ul class="account-list" aria-label=w.users>
                <For each=move || users.get() key=|u| u.id.clone() let:u>
                    <li>
                        <span class="account-item-name">{u.name.clone()}</span>
                        {u.is_admin.then(|| view! { <span class="account-item-note">{w.admin}</span> })}
                        {(u.id != me).then(|| {
                            let id = u.id.clone();
                            let for_confirm = u.id.clone();
                            let who = u.name.clone();
                            view! {
                                <Show
                                    when=move || confirming.get().as_deref() == Some(for_confirm.as_str())
                                    fallback={
                                        let id = id.clone();
                                        let who = who.clone();
                                        move || {
                                            let id = id.clone();
                                            view! {
                                                <button type="button" class="action danger"
                                                    aria-label=crate::i18n::fill(w.remove_user, &[("name", &who)])
                                                    on:click=move |_| confirming.set(Some(id.clone()))>{w.remove}</button>
                                            }
                                        }
                                    }
                                >
                                    {
                                        let id = id.clone();
                                        view! {
                                            <span class="account-item-note">{w.their_chats_go}</span>
                                            <button type="button" class="action danger" on:click={
                                                let id = id.clone();
                                                move |_| remove(id.clone())
                                            }>{w.remove_for_good}</button>
                                            <button type="button" class="action" on:click=move |_| confirming.set(None)>{w.keep}</button>
                                        }
                                    }
                                </Show>
                            }
                        })}
                    </li>
                </For>
            </ul>
            <form class="account-form" on:submit=add>
                <label for="new-user-name">{w.new_user_name}</label>
                <input id="new-user-name" type="text" autocomplete="off" prop:value=move || name.get()
                    on:input=move |ev| name.set(event_target_value(&ev))/>
                <label for="new-user-password">{w.their_password}</label>
                <input id="new-user-password" type="password" autocomplete="new-password" prop:value=move || password.get()
                    on:input=move |ev| password.set(event_target_value(&ev))/>
                <div class="checkbox">
                    <input id="new-user-admin" type="checkbox" prop:checked=move || admin.get()
                        on:change=move |ev| admin.set(event_target_checked(&ev))/>
                    <label for="new-user-admin">{w.admin}</label>
                </div>
                <button type="submit" class="action">{w.add_user}</button>
            </form>
        </section>
    }
}
