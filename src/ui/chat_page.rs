//! The chat page: conversation list, top bar with menus, notices, the conversation, the status
//! region and the composer.

use leptos::prelude::*;

use super::clock::Clock;
use super::composer::Composer;
use super::conversation::Conversation;
use super::icons::{icon, Icon};
use super::menus::{ExportMenu, SettingsMenu};
use super::model_picker::ModelPicker;
use super::notices::Notices;
use super::share_menu::ShareMenu;
use super::shortcuts_sheet::{sheet_code, SheetCode, SHEET_ID};
use super::sidebar::Sidebar;
use super::sign_in::SignIn;
use crate::client::controller::{now_ms, ChatController};
use crate::client::shortcuts::{shortcut, Press, Shortcut};

/// Opens the shortcuts' sheet, fetching its chunk the first time.
fn open_sheet(chat: ChatController, sheet: RwSignal<Option<SheetCode>>) {
    let show = || {
        if let Some(dialog) = super::dom::find(&format!("#{SHEET_ID}")) {
            use leptos::wasm_bindgen::JsCast;
            if let Ok(dialog) = dialog.dyn_into::<web_sys::HtmlDialogElement>() {
                let _ = dialog.show_modal();
            }
        }
    };
    if sheet.get_untracked().is_some() {
        show();
        return;
    }
    chat.when_loaded(sheet_code(), move |code| {
        sheet.set(Some(code));
        request_animation_frame(show);
    });
}

/// The whole chat: it owns the page's controller and clock, reads saved chats once hydrated,
/// and lays out the conversation list, the top bar, notices, the conversation, the status
/// region and the composer.
#[component]
pub fn ChatPage() -> impl IntoView {
    let chat = ChatController::new();
    provide_context(chat);
    let clock = Clock(RwSignal::new(0.0));
    provide_context(clock);
    let hydrated = RwSignal::new(false);
    // Accounts are on and nobody is signed in: the sign-in (or first-admin) form. A memo, so
    // that "who am I" asked again after hydration does not rebuild the form (and empty what the
    // reader has begun to type) unless its answer changed.
    let sign_in_needed = Memo::new(move |_| {
        chat.me
            .get()
            .filter(crate::domain::account::Me::must_sign_in)
    });
    let drawer = RwSignal::new(false);
    let sheet = RwSignal::new(None::<SheetCode>);
    // The tab says which chat it holds.
    Effect::new(move |_| {
        let title = chat.title.get();
        let shown = crate::client::labels::shown_title(crate::ui::locale::tr(), &title);
        document().set_title(&crate::client::labels::tab_title(&shown));
    });

    Effect::new(move |_| {
        chat.guard_secs.set(crate::client::browser::guard_secs());
        clock.0.set(now_ms());
        let ticker = set_interval_with_handle(
            move || clock.0.set(now_ms()),
            std::time::Duration::from_secs(1),
        );
        let storage = window_event_listener(leptos::ev::storage, move |ev| {
            chat.on_storage_changed(ev.key())
        });
        let address = window_event_listener(leptos::ev::popstate, move |_| chat.went_to_address());
        // Menus are popovers: a press outside closes them, Escape closes the open one.
        let outside = window_event_listener(leptos::ev::pointerdown, move |ev| {
            let target = ev
                .target()
                .and_then(|t| leptos::wasm_bindgen::JsCast::dyn_into::<web_sys::Node>(t).ok());
            super::dom::close_menus_outside(target.as_ref());
        });
        // The keyboard: Escape closes the open menu, else the conversations drawer (focus back
        // on its button), else stops the answer being written; the shortcuts of `?`'s sheet.
        let escape = window_event_listener(leptos::ev::keydown, move |ev| {
            let key = ev.key();
            let press = Press {
                key: &key,
                ctrl: ev.ctrl_key(),
                meta: ev.meta_key(),
                shift: ev.shift_key(),
                alt: ev.alt_key(),
                // Only `?` depends on it: no DOM read for every other key typed.
                typing: key == "?" && super::dom::typing_in_field(),
                composing: ev.is_composing(),
            };
            let Some(shortcut) = shortcut(press) else {
                return;
            };
            if super::dom::find("dialog[open]").is_some() {
                return;
            }
            let done = match shortcut {
                Shortcut::Stop if super::dom::close_menu_with_escape() => true,
                Shortcut::Stop if drawer.get_untracked() => {
                    drawer.set(false);
                    super::dom::focus_by_id("drawer-toggle");
                    true
                }
                Shortcut::Stop => {
                    let stops = chat.is_running() && chat.editing.get_untracked().is_none();
                    if stops {
                        chat.stop();
                    }
                    stops
                }
                Shortcut::Sheet => {
                    open_sheet(chat, sheet);
                    true
                }
                Shortcut::NewChat => {
                    chat.new_chat();
                    super::dom::focus_by_id("composer-input");
                    true
                }
                Shortcut::Search => match super::dom::find(".search input[type=search]") {
                    Some(field) => {
                        drawer.set(true);
                        let _ = field.focus();
                        true
                    }
                    None => false,
                },
                Shortcut::FocusComposer => {
                    super::dom::focus_by_id("composer-input");
                    true
                }
                Shortcut::ToggleThinking => {
                    super::dom::toggle_last_details(".messages details.thinking")
                }
                Shortcut::Compare => {
                    super::compare_bar::toggle(chat);
                    true
                }
                // The last answer's own button (its code is in the bubbles' chunk).
                Shortcut::Regenerate => {
                    super::dom::click_in_last(".bubble", ".regenerate:not(:disabled)")
                }
            };
            if done {
                ev.prevent_default();
            }
        });
        on_cleanup(move || {
            if let Ok(h) = ticker {
                h.clear();
            }
            storage.remove();
            address.remove();
            outside.remove();
            escape.remove();
        });
        chat.load_saved();
        chat.follow_address();
        hydrated.set(true);
        let owner = Owner::current();
        request_idle_callback(move || {
            if let Some(owner) = &owner {
                owner.with(super::warm_up::warm_up);
            }
        });
    });

    let disclaimer = super::message_bubble::DisclaimerDialog::new();
    provide_context(disclaimer);

    view! {
        <div
            class="chat-page"
            class:needs-sign-in=move || sign_in_needed.get().is_some()
            class:lost=move || chat.lost.get()
            data-hydrated=move || hydrated.get().then_some("true")
        >
            {move || sign_in_needed.get().map(|me| view! { <SignIn me/> })}
            <a class="skip-link" href="#composer-input">{crate::ui::locale::tr().skip_to_message}</a>
            <div class="chat-main">
                <header class="top-bar">
                    <button
                        type="button"
                        id="drawer-toggle"
                        class="drawer-toggle icon-button"
                        aria-label=crate::ui::locale::tr().open_sidebar
                        aria-controls="conversations"
                        aria-expanded=move || drawer.get().to_string()
                        on:click=move |_| drawer.update(|o| *o = !*o)
                    >
                        {icon(Icon::Menu)}
                    </button>
                    <h1 class="brand">"Ponder"</h1>
                    <span class="chat-title" dir="auto">
                        {move || crate::client::labels::shown_title(crate::ui::locale::tr(), &chat.title.get())}
                    </span>
                    <div class="top-actions">
                        <ModelPicker/>
                        <ShareMenu/>
                        <ExportMenu/>
                        <SettingsMenu/>
                    </div>
                </header>
                <Notices
                    notices=chat.notices
                    on_dismiss=Callback::new(move |kind| chat.dismiss(kind))
                    on_undo=Callback::new(move |id| chat.undo_delete(id))
                />
                <Conversation/>
                <div class="visually-hidden" role="status" aria-live="polite" aria-atomic="true">
                    {move || chat.status.get()}
                </div>
                <Composer/>
            </div>
            // After the chat in the reading and tab order (the header and the box come first);
            // drawn at the start by the style sheet.
            <Sidebar open=drawer/>
            <super::message_bubble::DisclaimerExplanation explanation=disclaimer/>
            {move || sheet.get().map(|code| code())}
            // An address that leads nowhere: the page says so in place of the chat.
            {move || chat.lost.get().then(|| view! { <super::not_found::NotFound/> })}
        </div>
    }
}
