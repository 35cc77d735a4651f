//! The scrolling conversation. It follows new text only while the reader is at the bottom;
//! otherwise a "Jump to latest" button appears. A long conversation opens on its last messages;
//! earlier ones render as the reader scrolls up to them. Content that shrinks (a block collapsing)
//! never moves what the reader is looking at: a spacer keeps the scroll range from shrinking
//! under them. It comes with the bubbles' code, in their chunk (see [`super::message_code`]).

use leptos::html::{Div, Main, Ol};
use leptos::prelude::*;
use leptos::wasm_bindgen::closure::Closure;
use leptos::wasm_bindgen::JsCast;

use super::message_bubble::MessageBubble;
use crate::client::controller::ChatController;
use crate::client::decisions;

/// How close to the bottom (px) still counts as "at the bottom".
pub(super) const BOTTOM_SLACK: i32 = 48;

/// Messages rendered when a conversation opens: its last ones. Earlier ones render when the
/// reader scrolls up to them (or asks), so a chat of a thousand messages opens as fast as a short
/// one.
const WINDOW: usize = 40;

/// Messages in the first frame of a conversation just opened: enough to fill the view. The rest
/// of the window follows right after that frame is painted, so the reader sees the end of a long
/// chat without waiting for forty bubbles to be built.
const FIRST_PAINT: usize = 8;

/// How close to the top (px) brings in the earlier messages.
const TOP_SLACK: i32 = 200;

#[derive(Default)]
struct Keeper {
    last_height: i32,
    spacer: i32,
    last_top: i32,
    /// The scroll height before earlier messages were asked for.
    height_before: Option<i32>,
}

/// The messages of the open chat, in a scrolling region that follows new text only while the
/// reader is at the bottom (otherwise "Jump to latest" appears) and never moves what the reader
/// is looking at when a block collapses. It is in the bubbles' chunk, so it is only built once
/// their code is here.
#[component]
pub fn ScrollingConversation() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let scroller = NodeRef::<Main>::new();
    let list = NodeRef::<Ol>::new();
    let spacer = NodeRef::<Div>::new();
    let at_bottom = RwSignal::new(true);
    let keeper = StoredValue::new_local(Keeper::default());
    // The first message rendered, per conversation, counted from the conversation's start
    // (messages still on the server count too): the last WINDOW at first, earlier ones when the
    // reader asks (`earlier` holds the conversation and the index asked for).
    let earlier = RwSignal::new((String::new(), usize::MAX));
    // An empty chat counts no messages, even with earlier ones still on the server.
    let has_messages = Memo::new(move |_| !chat.entries.with(Vec::is_empty));
    let first = Memo::new(move |prev: Option<&(String, usize, usize)>| {
        let id = chat.conversation_id.get();
        let total = if has_messages.get() {
            chat.earlier.get() + chat.entries.with(Vec::len)
        } else {
            0
        };
        let previous = prev
            .filter(|(pid, plen, _)| *pid == id && *plen > 0)
            .map(|p| p.2);
        let asked = earlier.with(|(c, at)| if *c == id { *at } else { usize::MAX });
        let from = decisions::first_shown(previous, total, FIRST_PAINT, asked);
        (id, total, from)
    });
    // Once the first frame of a conversation is painted, the rest of the window is rendered.
    Effect::new(move |grown: Option<Option<String>>| {
        let grown = grown.flatten();
        let (id, total) = first.with(|f| (f.0.clone(), f.1));
        if total == 0 || grown.as_ref() == Some(&id) {
            return grown;
        }
        let grow = id.clone();
        request_animation_frame(move || {
            set_timeout(
                move || {
                    if chat.conversation_id.get_untracked() != grow {
                        return;
                    }
                    let total = first.with_untracked(|f| f.1);
                    let window = total.saturating_sub(WINDOW);
                    if let Some(el) = scroller.get_untracked() {
                        keeper.update_value(|k| k.height_before = Some(el.scroll_height()));
                    }
                    earlier.update(|(c, at)| {
                        if *c != grow {
                            *c = grow.clone();
                            *at = window;
                        } else {
                            *at = (*at).min(window);
                        }
                    });
                },
                std::time::Duration::ZERO,
            )
        });
        Some(id)
    });
    // Messages above the first one rendered (loaded or not), and the first entry rendered.
    let hidden = Memo::new(move |_| {
        if !has_messages.get() {
            return 0;
        }
        first.with(|f| f.2).max(chat.earlier.get())
    });
    let from_entry = Memo::new(move |_| hidden.get().saturating_sub(chat.earlier.get()));

    let set_spacer = move |px: i32| {
        keeper.update_value(|k| k.spacer = px.max(0));
        if let Some(el) = spacer.get_untracked() {
            let _ = web_sys::HtmlElement::style(&el)
                .set_property("height", &format!("{}px", px.max(0)));
        }
    };
    let scroll_to_bottom = move || {
        set_spacer(0);
        if let Some(el) = scroller.get_untracked() {
            el.set_scroll_top(el.scroll_height());
            keeper.update_value(|k| k.last_top = el.scroll_top());
        }
    };

    Effect::new(move |_| {
        let (Some(list_el), Some(_)) = (list.get(), scroller.get()) else {
            return;
        };
        let on_resize =
            Closure::<dyn FnMut(js_sys::Array, web_sys::ResizeObserver)>::new(move |_, _| {
                let (Some(list_el), Some(main)) = (list.get_untracked(), scroller.get_untracked())
                else {
                    return;
                };
                let height = list_el.offset_height();
                let (last, spare, top) =
                    keeper.with_value(|k| (k.last_height, k.spacer, k.last_top));
                keeper.update_value(|k| k.last_height = height);
                if at_bottom.get_untracked() {
                    scroll_to_bottom();
                } else if height < last {
                    // Only the room that keeps the reader's place reachable (none near the top).
                    let content = main.scroll_height() - spare;
                    set_spacer(top + main.client_height() - content);
                    main.set_scroll_top(top);
                } else if height > last && spare > 0 {
                    set_spacer(spare - (height - last));
                }
            });
        let Ok(observer) = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()) else {
            return;
        };
        observer.observe(&list_el);
        let held = StoredValue::new_local(Some((observer, on_resize)));
        on_cleanup(move || {
            held.update_value(|h| {
                if let Some((observer, _)) = h.take() {
                    observer.disconnect();
                }
            })
        });
    });

    Effect::new(move |previous: Option<usize>| {
        let count = chat.entries.with(Vec::len);
        if previous.is_some_and(|p| count > p) && chat.is_running() {
            at_bottom.set(true);
            request_animation_frame(scroll_to_bottom);
        }
        count
    });

    // Another chat opens at its end, with no room or "Jump to latest" left from the one before.
    Effect::new(move |previous: Option<String>| {
        let id = chat.conversation_id.get();
        if previous.is_some_and(|p| p != id) {
            at_bottom.set(true);
            scroll_to_bottom();
        }
        id
    });

    // Messages put in above the first one rendered keep the reader's place: the scroll
    // position moves by the height they add.
    Effect::new(move |previous: Option<(String, usize)>| {
        let now = (chat.conversation_id.get(), hidden.get());
        let grew_above = previous
            .as_ref()
            .is_some_and(|(id, before)| *id == now.0 && now.1 < *before);
        let height = keeper.with_value(|k| k.height_before);
        if let (true, Some(before)) = (grew_above, height) {
            keeper.update_value(|k| k.height_before = None);
            request_animation_frame(move || {
                if let Some(el) = scroller.get_untracked() {
                    el.set_scroll_top(el.scroll_top() + el.scroll_height() - before);
                    keeper.update_value(|k| k.last_top = el.scroll_top());
                }
            });
        }
        now
    });

    let show_earlier = move |down_to: usize| {
        let Some(el) = scroller.get_untracked() else {
            return;
        };
        keeper.update_value(|k| k.height_before = Some(el.scroll_height()));
        let id = chat.conversation_id.get_untracked();
        earlier.set((id, down_to));
        let on_server = chat.earlier.get_untracked();
        if down_to < on_server {
            chat.load_earlier(on_server - down_to);
        }
    };

    Effect::new(move |_| {
        let Some(reveal) = chat.reveal.get() else {
            return;
        };
        let target = reveal.message.clone();
        let Some(at) = chat.entries.with(|e| e.iter().position(|e| e.id == target)) else {
            // Not loaded yet: the rest of the conversation comes in, then this runs again.
            let on_server = chat.earlier.get();
            if on_server > 0 {
                chat.load_earlier(on_server);
            }
            return;
        };
        let at = at + chat.earlier.get_untracked();
        if at < hidden.get() {
            // With enough rendered above it, centring it does not reach the top, where more
            // messages would render and move it (and its focus) again.
            earlier.set((
                chat.conversation_id.get_untracked(),
                at.saturating_sub(WINDOW / 2),
            ));
            return;
        }
        request_animation_frame(move || {
            let Some(el) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id(&format!("message-{target}")))
            else {
                return;
            };
            at_bottom.set(false);
            let options = web_sys::ScrollIntoViewOptions::new();
            options.set_block(web_sys::ScrollLogicalPosition::Center);
            el.scroll_into_view_with_scroll_into_view_options(&options);
            let _ = el.set_attribute("data-revealed", "");
            let _ = el.set_attribute("tabindex", "-1");
            if let Some(el) = el.dyn_ref::<web_sys::HtmlElement>() {
                let _ = el.focus();
            }
            if reveal.in_thinking {
                chat.open_thinking_of(&target);
            }
            highlight_when_shown(el, reveal.words.clone(), reveal.in_thinking, 0);
            chat.reveal.set(None);
        });
    });

    // Arrived with nothing to show yet: the bubbles' code is compiled on a sample at the next idle
    // moment (the reader is usually typing when the chunk arrives).
    if chat.entries.with_untracked(Vec::is_empty) {
        let owner = Owner::current();
        request_idle_callback(move || {
            if let Some(owner) = &owner {
                owner.with(super::warm_up::warm_up_messages);
            }
        });
    }

    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    view! {
        <main
            class="conversation"
            aria-label=t.conversation
            node_ref=scroller
            on:scroll=move |_| {
                if let Some(el) = scroller.get_untracked() {
                    let spare = keeper.with_value(|k| k.spacer);
                    keeper.update_value(|k| k.last_top = el.scroll_top());
                    // Room kept below the content is let go as the reader scrolls up from it.
                    let need = el.scroll_top() + el.client_height() - (el.scroll_height() - spare);
                    if spare > 0 && need < spare {
                        set_spacer(need);
                    }
                    at_bottom.set(el.scroll_height() - spare - el.scroll_top() - el.client_height() <= BOTTOM_SLACK);
                    let before = hidden.get_untracked();
                    if before > 0 && el.scroll_top() < TOP_SLACK {
                        show_earlier(before.saturating_sub(WINDOW));
                    }
                }
            }
        >
            <ol class="messages" node_ref=list>
                <Show when=move || { hidden.get() > 0 }>
                    <li class="earlier-messages">
                        <button type="button" class="action" on:click=move |_| show_earlier(hidden.get_untracked().saturating_sub(WINDOW))>
                            {move || l.count(&t.show_earlier_messages, hidden.get() as u64)}
                        </button>
                    </li>
                </Show>
                <Show when=move || chat.entries.with(Vec::is_empty)>
                    <super::empty_chat::EmptyChat/>
                </Show>
                <For
                    each=move || {
                        let from = from_entry.get();
                        chat.entries.with(|e| e[from.min(e.len())..].to_vec())
                    }
                    // A chat shown again (the server's copy after this browser's, another
                    // tab's write) has the same message ids but new signals: its rows are
                    // drawn anew, not left on the signals of the copy shown before.
                    key=|entry| (entry.id.clone(), entry.versions)
                    let:entry
                >
                    <li class="message-row"><MessageBubble entry/></li>
                </For>
            </ol>
            <div class="scroll-spacer" node_ref=spacer aria-hidden="true"></div>
            <Show when=move || !at_bottom.get()>
                <button type="button" class="jump-latest" on:click=move |_| {
                    at_bottom.set(true);
                    scroll_to_bottom();
                }>
                    "↓ " {t.jump_to_latest}
                </button>
            </Show>
        </main>
    }
}

/// Highlights a search's words in the message revealed (in its thinking when the match is
/// there), trying again while an opened block's text is still on its way.
fn highlight_when_shown(
    message: web_sys::Element,
    words: Vec<String>,
    in_thinking: bool,
    tries: u32,
) {
    const TRIES: u32 = 12;
    let scope = if in_thinking {
        message
            .query_selector(".thinking")
            .ok()
            .flatten()
            .map(|_| ())
    } else {
        Some(())
    };
    let found = scope.is_some_and(|()| {
        let roots = message
            .query_selector_all(if in_thinking {
                ".thinking-text"
            } else {
                ".markdown, .bubble-body"
            })
            .ok();
        let mut count = 0;
        if let Some(list) = roots {
            for i in 0..list.length() {
                // A folded block's text is parked until it opens: its nodes are about to be
                // replaced, so the words are highlighted once they are back.
                if let Some(el) = list
                    .item(i)
                    .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                    .filter(|el| !matches!(el.query_selector(".md-parked"), Ok(Some(_))))
                {
                    count += super::dom::highlight_words(&el, &words);
                    if count > 0 {
                        break;
                    }
                }
            }
        }
        count > 0
    });
    if !found && tries < TRIES {
        set_timeout(
            move || highlight_when_shown(message, words, in_thinking, tries + 1),
            std::time::Duration::from_millis(250),
        );
    }
}
