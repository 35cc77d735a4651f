//! The account panel: personal API tokens (made, shown once, revoked) for scripts and the
//! terminal client, and, for an admin, the users of this Ponder (added and removed).

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::dom;
use crate::domain::account::{Account, ApiToken};

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
                <h2 id="account-panel-title">"Account: " {account.name.clone()}</h2>
                <button type="button" class="action" node_ref=close on:click=move |_| open.set(false)>"Close"</button>
            </div>
            {move || error.get().map(|e| view! { <p class="sign-in-error" role="alert">{e}</p> })}
            <Tokens error/>
            {is_admin.then(|| view! { <Users error me=account.id.clone()/> })}
        </div>
    }
}

fn shown_error(error: RwSignal<Option<String>>, what: &str, e: crate::api::error::ApiError) {
    error.set(Some(format!("{what} ({}).", e.0.message)));
}

#[component]
fn Tokens(error: RwSignal<Option<String>>) -> impl IntoView {
    let tokens = RwSignal::new(Vec::<ApiToken>::new());
    let secret = RwSignal::new(None::<(String, String)>);
    let name = RwSignal::new(String::new());
    let copied = RwSignal::new(false);
    let reload = move || {
        spawn_local(async move {
            match crate::api::account::list_tokens().await {
                Ok(list) => tokens.set(list),
                Err(e) => shown_error(error, "Your tokens could not be listed", e),
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
                Err(e) => shown_error(error, "The token could not be made", e),
            }
        });
    };
    let revoke = move |id: String| {
        spawn_local(async move {
            match crate::api::account::revoke_token(id).await {
                Ok(()) => reload(),
                Err(e) => shown_error(error, "The token could not be revoked", e),
            }
        });
    };
    view! {
        <section class="account-section" aria-labelledby="tokens-title">
            <h3 id="tokens-title">"API tokens"</h3>
            <p class="sign-in-note">"For scripts and the terminal client: send it as " <code>"Authorization: Bearer …"</code> "."</p>
            {move || secret.get().map(|(label, value)| {
                let for_copy = value.clone();
                view! {
                    <div class="new-secret" role="status">
                        <p>"Token “" {label} "”, shown this once:"</p>
                        <code class="secret">{value}</code>
                        <button type="button" class="action" on:click=move |_| {
                            let text = for_copy.clone();
                            spawn_local(async move {
                                if dom::copy_text(text).await {
                                    dom::flash(copied);
                                }
                            });
                        }>{move || if copied.get() { "Copied" } else { "Copy token" }}</button>
                    </div>
                }
            })}
            <ul class="account-list" aria-label="Your API tokens">
                <For each=move || tokens.get() key=|t| t.id.clone() let:t>
                    <li>
                        <span class="account-item-name">{t.name.clone()}</span>
                        <span class="account-item-note">
                            {match t.last_used_at {
                                Some(at) => format!("last used {}", dom::local_time(at as f64).1),
                                None => "never used".to_string(),
                            }}
                        </span>
                        <button
                            type="button"
                            class="action danger"
                            aria-label=format!("Revoke token {}", t.name)
                            on:click={
                                let id = t.id.clone();
                                move |_| revoke(id.clone())
                            }
                        >
                            "Revoke"
                        </button>
                    </li>
                </For>
            </ul>
            <form class="account-form" on:submit=create>
                <label for="token-name">"New token's name"</label>
                <input id="token-name" type="text" maxlength="100" prop:value=move || name.get()
                    on:input=move |ev| name.set(event_target_value(&ev))/>
                <button type="submit" class="action">"Make a token"</button>
            </form>
        </section>
    }
}

#[component]
fn Users(error: RwSignal<Option<String>>, me: String) -> impl IntoView {
    let users = RwSignal::new(Vec::<Account>::new());
    let name = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let admin = RwSignal::new(false);
    let confirming = RwSignal::new(None::<String>);
    let reload = move || {
        spawn_local(async move {
            match crate::api::account::list_users().await {
                Ok(list) => users.set(list),
                Err(e) => shown_error(error, "The users could not be listed", e),
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
                Err(e) => shown_error(error, "The user could not be added", e),
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
                Err(e) => shown_error(error, "The user could not be removed", e),
            }
        });
    };
    view! {
        <section class="account-section" aria-labelledby="users-title">
            <h3 id="users-title">"Users"</h3>
            <ul class="account-list" aria-label="Users">
                <For each=move || users.get() key=|u| u.id.clone() let:u>
                    <li>
                        <span class="account-item-name">{u.name.clone()}</span>
                        {u.is_admin.then(|| view! { <span class="account-item-note">"admin"</span> })}
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
                                                    aria-label=format!("Remove user {who}")
                                                    on:click=move |_| confirming.set(Some(id.clone()))>"Remove"</button>
                                            }
                                        }
                                    }
                                >
                                    {
                                        let id = id.clone();
                                        view! {
                                            <span class="account-item-note">"Their chats go too."</span>
                                            <button type="button" class="action danger" on:click={
                                                let id = id.clone();
                                                move |_| remove(id.clone())
                                            }>"Remove for good"</button>
                                            <button type="button" class="action" on:click=move |_| confirming.set(None)>"Keep"</button>
                                        }
                                    }
                                </Show>
                            }
                        })}
                    </li>
                </For>
            </ul>
            <form class="account-form" on:submit=add>
                <label for="new-user-name">"New user's name"</label>
                <input id="new-user-name" type="text" autocomplete="off" prop:value=move || name.get()
                    on:input=move |ev| name.set(event_target_value(&ev))/>
                <label for="new-user-password">"Their password"</label>
                <input id="new-user-password" type="password" autocomplete="new-password" prop:value=move || password.get()
                    on:input=move |ev| password.set(event_target_value(&ev))/>
                <div class="checkbox">
                    <input id="new-user-admin" type="checkbox" prop:checked=move || admin.get()
                        on:change=move |ev| admin.set(event_target_checked(&ev))/>
                    <label for="new-user-admin">"Admin"</label>
                </div>
                <button type="submit" class="action">"Add user"</button>
            </form>
        </section>
    }
}
