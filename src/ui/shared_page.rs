//! The page of a conversation shared by link (`/s/<token>`): a whole document the server
//! draws, readable without JavaScript and without signing in. It loads the app's stylesheet and
//! nothing else: no script, no chat app, no font or image from anywhere but this server. Its
//! one action, "Continue in Ponder", is a form the server answers.

use leptos::prelude::*;

use crate::domain::attachment::FileRef;
use crate::domain::share::{iso_day, SharedPage, SharedReader};
use crate::i18n::{fill, Locale};
use crate::ui::transcript::{draw, Drawing};

/// The shared page as HTML; `dress` puts the link's typeset formulas and highlighted code in
/// place of their source.
pub fn document(page: &SharedPage, dress: &crate::markdown::Dress<'_>) -> String {
    let l = Locale::from_tag(&page.locale).unwrap_or_default();
    let t = l.catalogue();
    let w = &t.shared;
    let shot = &page.snapshot;
    let title = crate::i18n::title(t, &shot.title);
    let drawing = Drawing {
        reasoning: true,
        details: true,
        file_href: Some(file_href),
        file_base: page.address(),
        dress: Some(dress),
    };
    let transcript = draw(shot, l, &drawing);
    let day = iso_day(shot.updated_at);
    let about = match &shot.model {
        Some(model) => format!("{model} · {}", fill(w.shared_on, &[("date", &day)])),
        None => fill(w.shared_on, &[("date", &day)]),
    };
    let action = match page.reader {
        SharedReader::SignedIn => view! {
            <form class="shared-continue" method="post" action=format!("{}/continue", page.address())>
                <button type="submit" class="primary">{w.continue_in_ponder}</button>
                <p class="shared-note">{w.continue_explain}</p>
            </form>
        }
        .into_any(),
        SharedReader::Visitor => view! {
            <p class="shared-continue">
                <a class="primary" href=format!("{}/", page.base_path)>{w.sign_in_to_continue}</a>
            </p>
        }
        .into_any(),
    };
    let body = view! {
        <main class="shared">
            <header class="shared-head">
                <p class="shared-kicker">{w.shared_kicker}</p>
                <h1 dir="auto">{title.clone()}</h1>
                <p class="shared-about"><time datetime=day.clone()>{about}</time></p>
                {shot.instructions.clone().map(|text| view! {
                    <details class="shared-instructions">
                        <summary>{t.instructions_chat}</summary>
                        <p dir="auto">{text}</p>
                    </details>
                })}
            </header>
            <div class="messages shared-messages" inner_html=transcript></div>
            <footer class="shared-foot">{action}</footer>
        </main>
    }
    .to_html();
    frame(page, l, &format!("{title} · Ponder"), &body)
}

/// The page of a link that opens nothing: never made, revoked, or its conversation deleted
/// (the same page for each), or a visitor where only signed-in readers may open links.
pub fn refusal(page: &SharedPage, needs_sign_in: bool) -> String {
    let l = Locale::from_tag(&page.locale).unwrap_or_default();
    let w = &l.catalogue().shared;
    let body = if needs_sign_in {
        view! {
            <main class="shared shared-refused">
                <h1>{w.share_needs_sign_in}</h1>
                <p class="shared-continue">
                    <a class="primary" href=format!("{}/", page.base_path)>{l.catalogue().sign_in}</a>
                </p>
            </main>
        }
        .to_html()
    } else {
        view! {
            <main class="shared shared-refused">
                <h1>{w.share_gone}</h1>
                <p><a href=format!("{}/", page.base_path)>"Ponder"</a></p>
            </main>
        }
        .to_html()
    };
    frame(page, l, "Ponder", &body)
}

/// The document around `body`. Written out, not rendered: a view's hydration markers would
/// show in the tab's title, and this page never hydrates.
fn frame(page: &SharedPage, l: Locale, title: &str, body: &str) -> String {
    let base = escaped(&page.base_path);
    format!(
        "<!DOCTYPE html><html lang=\"{lang}\" dir=\"{dir}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\">\
         <meta name=\"robots\" content=\"noindex, nofollow\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <title>{title}</title><link rel=\"stylesheet\" href=\"{css}\">\
         <link rel=\"icon\" href=\"{base}/favicon.svg\" type=\"image/svg+xml\"></head>\
         <body class=\"shared-page\">{body}</body></html>",
        lang = l.tag(),
        dir = l.dir_attr(),
        title = escaped(title),
        css = escaped(&page.stylesheet),
    )
}

fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn file_href(file: &FileRef, base: &str) -> String {
    format!("{base}/f/{}", file.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::attachment::Kind;
    use crate::domain::history::{BlockHeader, Conversation, Message, Version, VersionStatus};
    use crate::domain::message::Role;
    use crate::domain::{SourceRef, ThinkingKind, ToolStatus, ToolStep};

    fn page(reader: SharedReader, locale: &str) -> SharedPage {
        let mut asked = Version::text("What is **2+2**? <script>alert(1)</script>", 0);
        asked.files = vec![
            FileRef {
                id: "0".into(),
                name: "photo.png".into(),
                kind: Kind::Image,
                size: 100,
                pixels: Some((4, 3)),
                pages: None,
                sent_as: None,
            },
            FileRef {
                id: "1".into(),
                name: "notes.pdf".into(),
                kind: Kind::Pdf,
                size: 2048,
                pixels: None,
                pages: Some(2),
                sent_as: None,
            },
        ];
        let mut answer = Version::text("It is **4**.[^1]", 0);
        answer.model = Some("demo-reasoner".into());
        answer.blocks = vec![BlockHeader {
            id: String::new(),
            kind: ThinkingKind::Raw,
            duration_ms: Some(4200),
            words: 4,
            chars: 20,
            reader_open: None,
            interrupted: false,
            cut_short: false,
            running_ms: None,
            text: Some("Two and *two* make four".into()),
        }];
        answer.tools = vec![ToolStep {
            name: "web_search".into(),
            input: "2+2".into(),
            status: ToolStatus::Finished,
            output: "4".into(),
            after_blocks: 1,
        }];
        answer.sources = vec![SourceRef {
            n: 1,
            url: "https://example.org/sum".into(),
            title: Some("Sums".into()),
        }];
        answer.status = VersionStatus::Done;
        let message = |role, v| Message {
            id: String::new(),
            role,
            created_at: 0,
            active: 0,
            versions: vec![v],
        };
        SharedPage {
            snapshot: Conversation {
                id: String::new(),
                title: "Arithmetic".into(),
                workspace_id: String::new(),
                created_at: 0,
                updated_at: 1_764_892_800_000,
                rev: 0,
                model: Some("demo-reasoner".into()),
                settings: Default::default(),
                messages: vec![message(Role::User, asked), message(Role::Assistant, answer)],
                first: 0,
                instructions: None,
            },
            locale: locale.into(),
            base_path: "/ponder".into(),
            stylesheet: "/ponder/pkg/ponder.css".into(),
            token: "TOKEN".into(),
            reader,
        }
    }

    #[test]
    fn the_page_draws_every_part_of_the_snapshot_with_no_script() {
        let html = document(&page(SharedReader::SignedIn, "en"), &str::to_string);
        for part in [
            "<!DOCTYPE html>",
            r#"<meta name="robots" content="noindex, nofollow">"#,
            "<title>Arithmetic · Ponder</title>",
            "Shared conversation · read only",
            "demo-reasoner · Shared 2025-12-05",
            r#"class="bubble user""#,
            "What is **2+2**? &lt;script&gt;alert(1)&lt;/script&gt;",
            r#"<details class="thinking done">"#,
            "Thought for 4.2s",
            "Two and <em>two</em> make four",
            "It is <strong>4</strong>.",
            r#"class="tool-step finished""#,
            r#"href="https://example.org/sum""#,
            r#"<img src="/ponder/s/TOKEN/f/0""#,
            r#"href="/ponder/s/TOKEN/f/1" download="notes.pdf""#,
            r#"action="/ponder/s/TOKEN/continue""#,
            "Continue in Ponder",
            r#"href="/ponder/pkg/ponder.css""#,
        ] {
            assert!(html.contains(part), "{part} missing in {html}");
        }
        assert!(!html.contains("<script"), "{html}");
        assert!(
            !html.contains("<details class=\"thinking done\" open"),
            "{html}"
        );
        assert!(html.find("thinking done") < html.find("tool-step"));
    }

    #[test]
    fn a_visitor_is_offered_sign_in_and_the_chrome_follows_the_language() {
        let html = document(&page(SharedReader::Visitor, "ja"), &str::to_string);
        assert!(html.contains(r#"<html lang="ja""#), "{html}");
        assert!(html.contains("共有された会話"), "{html}");
        assert!(html.contains("サインインして Ponder で続ける"), "{html}");
        assert!(!html.contains("<form"), "{html}");
        assert!(
            html.contains("It is <strong>4</strong>."),
            "the content stays as written"
        );
        let gone = refusal(&page(SharedReader::Visitor, "ar"), false);
        assert!(
            gone.contains(r#"dir="rtl""#) && gone.contains("هذا الرابط غير موجود"),
            "{gone}"
        );
        assert!(!gone.contains("Arithmetic"));
    }
}
