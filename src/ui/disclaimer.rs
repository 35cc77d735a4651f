//! The disclaimer every answer carries ("AI-generated — verify"): its chip, and the page's one
//! dialog that explains it.

use leptos::prelude::*;

use crate::i18n::{Catalogue, Locale};
use crate::ui::locale::{locale, tr};

/// What an assistant bubble must be given to be built at all: its disclaimer (seed 004's T11).
/// [`AssistantBubble`] takes it as a required prop, so a bubble without one does not compile
/// (its doc tests show both ways); there is one, [`Disclaimer::AI_GENERATED`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Disclaimer {
    which: Which,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    AiGenerated,
}

impl Disclaimer {
    /// "AI-generated — verify", which opens the explanation.
    pub const AI_GENERATED: Disclaimer = Disclaimer {
        which: Which::AiGenerated,
    };

    /// The chip's words in the page's language.
    pub fn label(self, l: Locale) -> &'static str {
        let c: &Catalogue = l.catalogue();
        match self.which {
            Which::AiGenerated => c.ai_disclaimer,
        }
    }
}

/// The page's one explanation of the disclaimer: a modal dialog any bubble's chip opens, which
/// gives focus back to that chip when it closes. Provided as context by the chat page.
#[derive(Clone, Copy)]
pub struct DisclaimerDialog {
    dialog: NodeRef<leptos::html::Dialog>,
    opener: StoredValue<Option<web_sys::HtmlElement>, LocalStorage>,
}

impl DisclaimerDialog {
    /// The dialog's handles, to provide as context and render with [`DisclaimerExplanation`].
    pub fn new() -> Self {
        DisclaimerDialog {
            dialog: NodeRef::new(),
            opener: StoredValue::new_local(None),
        }
    }
}

impl Default for DisclaimerDialog {
    fn default() -> Self {
        Self::new()
    }
}

/// The explanation the disclaimer chip opens (rendered once, in the chat page).
#[component]
pub fn DisclaimerExplanation(explanation: DisclaimerDialog) -> impl IntoView {
    let DisclaimerDialog { dialog, opener } = explanation;
    let got_it = NodeRef::<leptos::html::Button>::new();
    let give_focus_back = move |_| {
        if let Some(el) = opener.get_value() {
            let _ = el.focus();
        }
    };
    // Its one control keeps the focus: Tab never leaves the dialog for the browser's own UI.
    let keep_focus = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Tab" {
            ev.prevent_default();
            if let Some(button) = got_it.get() {
                let _ = button.focus();
            }
        }
    };
    let t = tr();
    view! {
        <dialog class="disclaimer-dialog" node_ref=dialog aria-labelledby="disclaimer-title" on:close=give_focus_back on:keydown=keep_focus>
            <h2 id="disclaimer-title">{t.disclaimer_title}</h2>
            <p>{t.disclaimer_body}</p>
            <p>{t.disclaimer_advice}</p>
            <form method="dialog">
                <button type="submit" autofocus node_ref=got_it>{t.got_it}</button>
            </form>
        </dialog>
    }
}

/// The disclaimer chip: a button that opens the page's explanation.
#[component]
pub fn DisclaimerChip(disclaimer: Disclaimer) -> impl IntoView {
    let explanation = use_context::<DisclaimerDialog>();
    let open = move |ev: leptos::ev::MouseEvent| {
        let Some(explanation) = explanation else {
            return;
        };
        use leptos::wasm_bindgen::JsCast;
        let chip = ev
            .current_target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok());
        explanation.opener.set_value(chip);
        if let Some(dialog) = explanation.dialog.get() {
            let _ = dialog.show_modal();
        }
    };
    view! {
        <button type="button" class="disclaimer" aria-haspopup="dialog" on:click=open>{disclaimer.label(locale())}</button>
    }
}
