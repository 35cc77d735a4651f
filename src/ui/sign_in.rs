//! Signing in: the form a reader sees when this Ponder has accounts and they are not signed in,
//! or, on a server nobody has used yet, the form that creates the first admin; with single
//! sign-on, the button to the identity provider (and the form too when passwords are kept).

use leptos::prelude::*;
use leptos::task::spawn_local;

/// The sign-in (or first-admin) form. On success the page loads again, signed in.
#[component]
pub fn SignIn(
    /// How this server signs people in (`needs_setup`: the form creates the admin account).
    me: crate::domain::account::Me,
) -> impl IntoView {
    let setup = me.needs_setup;
    let name = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        busy.set(true);
        error.set(None);
        let (n, p) = (name.get_untracked(), password.get_untracked());
        spawn_local(async move {
            let result = if setup {
                crate::api::account::set_up(n, p).await.map(|_| ())
            } else {
                crate::api::account::sign_in(n, p).await.map(|_| ())
            };
            match result {
                Ok(()) => {
                    if let Some(w) = web_sys::window() {
                        let _ = w.location().reload();
                    }
                }
                Err(e) => {
                    error.set(Some(crate::client::labels::failure_text(
                        &e.0,
                        crate::client::browser::page_locale(),
                    )));
                    busy.set(false);
                }
            }
        });
    };
    let t = crate::ui::locale::tr();
    let title = if setup {
        t.create_admin
    } else {
        t.sign_in_title
    };
    view! {
        <main class="sign-in" aria-labelledby="sign-in-title">
            <form class="sign-in-form" on:submit=submit>
                <h1 id="sign-in-title">{title}</h1>
                {me.provider.map(|p| view! {
                    <a class="action primary sign-in-provider" href=crate::client::browser::sso_address()>
                        {crate::i18n::fill(t.sign_in_with, &[("provider", &p)])}
                    </a>
                })}
                {me.passwords.then(|| view! { <>
                {setup.then(|| view! {
                    <p class="sign-in-note">{t.first_account_note}</p>
                })}
                <label>
                    {t.name}
                    <input
                        type="text"
                        name="name"
                        autocomplete="username"
                        required
                        prop:value=move || name.get()
                        on:input=move |ev| name.set(event_target_value(&ev))
                    />
                </label>
                <label>
                    {t.password}
                    <input
                        type="password"
                        name="password"
                        autocomplete=if setup { "new-password" } else { "current-password" }
                        required
                        minlength="8"
                        prop:value=move || password.get()
                        on:input=move |ev| password.set(event_target_value(&ev))
                    />
                </label>
                {move || error.get().map(|e| view! { <p class="sign-in-error" role="alert">{e}</p> })}
                <button type="submit" class="action primary" disabled=move || busy.get()>
                    {if setup { t.create_account } else { t.sign_in }}
                </button>
                </> })}
            </form>
        </main>
    }
}
