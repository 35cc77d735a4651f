//! Files on the page: the composer's paper clip and its tray of chips (name, size, kind, a
//! picture of an image, the upload's progress, remove), and the files under a sent message
//! (images as pictures that open large, other files as chips that download), each saying how
//! it went to the model.

use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;

use super::icons::{icon, Icon};
use super::locale::{locale, tr};
use crate::client::controller::ChatController;
use crate::client::labels::file_about;
use crate::client::tray::Upload;
use crate::domain::attachment::{FileRef, Kind, SendAs, UPLOAD_PATH};
use crate::domain::wire::WireName;
use crate::i18n::fill;

/// The files of a picker, a drop or a paste.
pub fn files_of(list: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    list.map(|l| (0..l.length()).filter_map(|i| l.get(i)).collect())
        .unwrap_or_default()
}

/// Where the owner's page reads a kept file.
pub fn file_url(id: &str) -> String {
    format!("{}{UPLOAD_PATH}/{id}", crate::client::browser::base_path())
}

/// Where the page reads the file `f`: the server's copy, or (chats in this browser) the bytes
/// the page holds, as a `data:` address; `None` when the page holds them no longer.
fn address_of(chat: ChatController, f: &FileRef) -> Option<String> {
    if chat.files_on_server() {
        return Some(file_url(&f.id));
    }
    let mime = match f.kind {
        Kind::Image => "image/*",
        _ => "application/octet-stream",
    };
    chat.inline_data(&f.id)
        .map(|data| format!("data:{mime};base64,{data}"))
}

/// What the attachments chunk gives the composer: the tray, and the upload of picked files.
#[derive(Clone, Copy)]
pub struct AttachCode {
    pub tray: fn() -> AnyView,
    pub attach: fn(ChatController, Vec<web_sys::File>),
}

/// The tray and the upload in a chunk of their own, fetched when the reader first reaches for
/// the paper clip, drags a file over the composer, pastes one, or edits a message with files.
#[leptos::wasm_split::wasm_split(attachments, wasm_split_path = leptos::wasm_split, fallible, preload(prefetch_attachments))]
fn attachments_code() -> Result<AttachCode, SplitLoaderError> {
    Ok(AttachCode {
        tray: || view! { <Tray/> }.into_any(),
        attach: |chat, files| chat.attach(files),
    })
}

/// The attachments chunk, once fetched; given to the composer as context by [`provide_attach`].
#[derive(Clone, Copy)]
pub struct Attach(RwSignal<Option<AttachCode>>);

impl Attach {
    /// Attaches `files` once the chunk is here.
    pub fn files(self, files: Vec<web_sys::File>) {
        if files.is_empty() {
            return;
        }
        let chat = expect_context::<ChatController>();
        let slot = self.0;
        chat.when_loaded(attachments_code(), move |code| {
            slot.set(Some(code));
            (code.attach)(chat, files);
        });
    }

    /// Starts fetching the chunk ahead of its first use.
    pub fn prefetch(self) {
        if self.0.with_untracked(Option::is_none) {
            super::chunks::prefetch(prefetch_attachments());
        }
    }

    /// The tray, once the chunk is here.
    pub fn tray(self) -> impl IntoView {
        move || self.0.get().map(|code| (code.tray)())
    }
}

/// Gives the composer its [`Attach`]; the chunk is fetched as soon as the tray has files some
/// other way (a message being edited brings its files back).
pub fn provide_attach() -> Attach {
    let chat = expect_context::<ChatController>();
    let slot = RwSignal::new(None::<AttachCode>);
    Effect::new(move |_| {
        if chat.tray.with(|t| !t.files.is_empty()) && slot.with_untracked(Option::is_none) {
            chat.when_loaded(attachments_code(), move |code| slot.set(Some(code)));
        }
    });
    let attach = Attach(slot);
    provide_context(attach);
    attach
}

/// The paper clip: it opens the browser's file picker (several files at once).
#[component]
pub fn AttachButton() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let attach = expect_context::<Attach>();
    let t = tr();
    let input = NodeRef::<leptos::html::Input>::new();
    view! {
        <Show when=move || chat.can_attach()>
            <input
                node_ref=input
                id="attach-input"
                class="visually-hidden"
                type="file"
                multiple=true
                tabindex="-1"
                aria-hidden="true"
                on:change=move |_| {
                    if let Some(el) = input.get_untracked() {
                        attach.files(files_of(el.files()));
                        el.set_value("");
                    }
                }
            />
            <button
                type="button"
                class="icon-button attach"
                aria-label=t.attach_files
                title=t.attach_files
                on:pointerenter=move |_| attach.prefetch()
                on:focus=move |_| attach.prefetch()
                on:click=move |_| {
                    if let Some(el) = input.get_untracked() {
                        el.click();
                    }
                }
            >
                {icon(Icon::Attach)}
            </button>
        </Show>
    }
}

/// The files going with the message being written.
#[component]
fn Tray() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = tr();
    view! {
        <Show when=move || chat.tray.with(|t| !t.files.is_empty())>
            <ul class="tray" aria-label=t.attached_files>
                <For
                    each=move || chat.tray.with(|t| t.files.iter().map(|f| f.key).collect::<Vec<_>>())
                    key=|k| *k
                    let:key
                >
                    <TrayChip key/>
                </For>
            </ul>
        </Show>
    }
}

#[component]
fn TrayChip(key: u32) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = tr();
    let file = move || {
        chat.tray
            .with(|tray| tray.files.iter().find(|f| f.key == key).cloned())
    };
    let Some(first) = file() else {
        return ().into_any();
    };
    let name = first.name.clone();
    let upload = move || file().map(|f| f.upload);
    let percent = move || file().map_or(100, |f| f.percent());
    let sending = move || matches!(upload(), Some(Upload::Sending { .. }));
    let kept_kind = move || match upload() {
        Some(Upload::Ready(r)) => Some(r.kind),
        _ => None,
    };
    let failed = move || match upload() {
        Some(Upload::Failed(why)) => Some(why),
        _ => None,
    };
    let size = first.size;
    let pages = move || match upload() {
        Some(Upload::Ready(r)) => r.pages,
        _ => None,
    };
    let asked = move || file().and_then(|f| f.asked);
    let choose = move |ev: leptos::ev::Event| {
        let how = SendAs::from_wire_name(&event_target_value(&ev));
        chat.tray.update(|t| t.ask(key, how));
    };
    let how_label = fill(t.send_file_as, &[("name", &name)]);
    view! {
        <li class="file-chip" class:failed=move || failed().is_some() aria-busy=move || sending().to_string()>
            {first.preview.map(|src| view! {
                <Show when=move || failed().is_none()>
                    <img class="file-picture" src=src.clone() alt=""/>
                </Show>
            })}
            <span class="file-text">
                <span class="file-name" dir="auto">{name.clone()}</span>
                <span class="file-about">{move || file_about(size, kept_kind(), pages(), None, locale())}</span>
                <Show when=move || kept_kind() == Some(Kind::Pdf)>
                    <select class="file-how" aria-label=how_label.clone() on:change=choose>
                        <option value="" selected=move || asked().is_none()>{t.as_model_reads}</option>
                        <option value="document" selected=move || asked() == Some(SendAs::Document)>{t.as_document}</option>
                        <option value="text" selected=move || asked() == Some(SendAs::Text)>{t.as_text}</option>
                        <option value="pages" selected=move || asked() == Some(SendAs::Pages)>{t.as_pages}</option>
                    </select>
                </Show>
                <Show when=sending>
                    <progress
                        class="file-progress"
                        max="100"
                        value=move || percent().to_string()
                        aria-label=move || fill(t.uploading, &[("percent", &percent().to_string())])
                    ></progress>
                </Show>
                {move || failed().map(|why| view! { <span class="file-error" role="alert">{why}</span> })}
            </span>
            <button
                type="button"
                class="icon-button file-remove"
                aria-label=fill(t.remove_file, &[("name", &name)])
                on:click=move |_| {
                    chat.detach(key);
                    super::dom::focus_by_id("composer-input");
                }
            >
                {icon(Icon::Close)}
            </button>
        </li>
    }
    .into_any()
}

/// The files sent with a message: images as pictures that open large, other files as chips
/// that download; each says how it went to the model once the server has said.
#[component]
pub fn SentFiles(files: RwSignal<Vec<FileRef>>) -> impl IntoView {
    let t = tr();
    let chat = expect_context::<ChatController>();
    let large = RwSignal::new(None::<FileRef>);
    let dialog = NodeRef::<leptos::html::Dialog>::new();
    let open = move |f: FileRef| {
        large.set(Some(f));
        if let Some(d) = dialog.get_untracked() {
            let _ = d.show_modal();
        }
    };
    let close = move || {
        if let Some(d) = dialog.get_untracked() {
            d.close();
        }
    };
    let chip = move |f: FileRef| {
        let url = address_of(chat, &f);
        let about = file_about(f.size, Some(f.kind), f.pages, f.sent_as, locale());
        let Some(url) = url else {
            // Sent from this browser, too large to keep in it: its name and kind stay.
            return view! {
                <li class="sent-file file-chip">
                    <span class="file-text">
                        <span class="file-name" dir="auto">{f.name.clone()}</span>
                        <span class="file-about">{about}</span>
                    </span>
                </li>
            }
            .into_any();
        };
        if f.kind == Kind::Image {
            let (width, height) = f.pixels.unwrap_or_default();
            let label = fill(t.open_image, &[("name", &f.name)]);
            let name = f.name.clone();
            view! {
                <li class="sent-file image">
                    <button type="button" class="file-thumb" aria-label=label on:click=move |_| open(f.clone())>
                        <img src=url alt=name loading="lazy" width=width height=height/>
                    </button>
                    <span class="file-about">{about}</span>
                </li>
            }
            .into_any()
        } else {
            let label = fill(t.download_file, &[("name", &f.name)]);
            view! {
                <li class="sent-file file-chip">
                    <a class="file-text" href=url download=f.name.clone() aria-label=label>
                        <span class="file-name" dir="auto">{f.name.clone()}</span>
                        <span class="file-about">{about}</span>
                    </a>
                </li>
            }
            .into_any()
        }
    };
    view! {
        <Show when=move || files.with(|f| !f.is_empty())>
            <ul class="sent-files">
                {move || files.get().into_iter().map(chip).collect_view()}
            </ul>
        <dialog
            node_ref=dialog
            class="lightbox"
            on:click=move |ev| {
                let on_backdrop = event_target::<web_sys::Element>(&ev).tag_name().eq_ignore_ascii_case("dialog");
                if on_backdrop {
                    close();
                }
            }
            on:close=move |_| large.set(None)
        >
            {move || large.get().map(|f| view! {
                <img src=address_of(chat, &f) alt=f.name.clone()/>
                <p class="lightbox-name" dir="auto">{f.name.clone()}</p>
            })}
            <button type="button" class="icon-button lightbox-close" aria-label=t.close on:click=move |_| close()>
                {icon(Icon::Close)}
            </button>
        </dialog>
        </Show>
    }
}
