//! `ponder ask "question"`: one turn for scripts. The answer streams to stdout, the thinking to
//! stderr (or nowhere, or inline before the answer), and the exit code says whether the turn
//! ended in an error. `--json` prints the raw turn events, one per line.

use super::error::ClientError;
use std::io::Write;
use std::time::Duration;

use super::follow::{self, Source};
use super::text;
use crate::client::labels;
use crate::client::turn_state::TurnState;
use crate::domain::attachment::SendAs;
use crate::domain::{ChatMessage, ChatRequest, TurnEvent};

/// Where `ponder ask` writes the thinking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Thinking {
    Off,
    #[default]
    Stderr,
    Inline,
}

/// Options of `ponder ask`.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub server: Option<String>,
    pub token: Option<String>,
    pub question: String,
    pub thinking: Thinking,
    pub json: bool,
    /// Files sent with the question (`--file PATH`, again for more), each with the way asked
    /// by the last `--as WAY` before it, if any.
    pub files: Vec<(std::path::PathBuf, Option<SendAs>)>,
    /// `--models a,b,…`: the question to each of these models at once, compared.
    pub models: Vec<String>,
}

pub const USAGE: &str = "usage: ponder ask \"question\" [--server URL] [--token T] \
[--models A,B[,C,D]] [--thinking=off|stderr|inline] [--json] [[--as model|document|text|pages] --file PATH]…   |   ponder chat [--server URL] [--token T] \
[--conversation ID]";

/// Reads the arguments after `ask`.
pub fn parse(args: &[String]) -> Result<Options, ClientError> {
    let usage = || ClientError::Usage(USAGE.into());
    let mut options = Options {
        token: std::env::var("PONDER_TOKEN").ok(),
        server: std::env::var("PONDER_SERVER").ok(),
        ..Options::default()
    };
    let mut words = Vec::new();
    let mut way = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--server" => options.server = Some(it.next().ok_or_else(usage)?.clone()),
            "--token" => options.token = Some(it.next().ok_or_else(usage)?.clone()),
            "--json" => options.json = true,
            "--models" => {
                let list = it.next().ok_or_else(usage)?;
                options.models = crate::client::compare::models_asked(list)
                    .map_err(|why| ClientError::Usage(format!("--models {list}: {why}")))?;
            }
            "--file" => options
                .files
                .push((it.next().ok_or_else(usage)?.into(), way)),
            "--as" => {
                let named = it.next().ok_or_else(usage)?;
                way = super::attach::way_named(named)
                    .ok_or_else(|| ClientError::Usage(format!("--as {named}: {USAGE}")))?;
            }
            "--thinking=off" => options.thinking = Thinking::Off,
            "--thinking=stderr" => options.thinking = Thinking::Stderr,
            "--thinking=inline" => options.thinking = Thinking::Inline,
            flag if flag.starts_with("--") => {
                return Err(ClientError::Usage(format!("{flag}: {USAGE}")))
            }
            word => words.push(word.to_string()),
        }
    }
    options.question = words.join(" ");
    if options.question.trim().is_empty() && options.files.is_empty() {
        return Err(usage());
    }
    Ok(options)
}

/// Runs one turn (or, with `--models`, one to each model); the process exit code (0 done, 1 an
/// error).
pub async fn run(options: Options) -> Result<i32, ClientError> {
    let (server, _) = super::local::find(options.server.as_deref(), options.token.clone()).await?;
    let request = request(&server, &options).await?;
    if !options.models.is_empty() {
        use super::compare::Thinking as Shown;
        let shown = match options.thinking {
            Thinking::Off => Shown::Off,
            Thinking::Stderr => Shown::Headers,
            Thinking::Inline => Shown::Inline,
        };
        return super::compare::run(&server, request, &options.models, shown, options.json).await;
    }
    one(&server, request, &options).await
}

/// The question as a turn the server does not store, its files kept first.
async fn request(
    server: &super::client::Server,
    options: &Options,
) -> Result<ChatRequest, ClientError> {
    Ok(if options.files.is_empty() {
        ChatRequest::stateless(vec![ChatMessage::user(options.question.clone())])
    } else {
        let (mut ids, mut send_as) = (Vec::new(), std::collections::BTreeMap::new());
        for (path, asked) in &options.files {
            let file = server.upload(path).await?;
            if !options.json {
                let chip = super::attach::waiting_chip(&file, *asked);
                let _ = writeln!(std::io::stderr(), "+ {}", text::sanitize(&chip));
            }
            if let Some(way) = asked {
                send_as.insert(file.id.clone(), *way);
            }
            ids.push(file.id);
        }
        ChatRequest {
            content: Some(options.question.clone()),
            attachments: ids,
            send_as,
            ..ChatRequest::stateless(Vec::new())
        }
    })
}

async fn one(
    server: &super::client::Server,
    request: ChatRequest,
    options: &Options,
) -> Result<i32, ClientError> {
    let (task, mut progress) = follow::spawn(
        server,
        Source::Send(Box::new(request)),
        Duration::from_secs(120),
    );
    let started = std::time::Instant::now();
    let now = || started.elapsed().as_secs_f64() * 1000.0;
    let mut state = TurnState::started(now());
    let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
    let mut open_block: Option<u32> = None;
    while let Some(p) = progress.recv().await {
        let events = match follow::next(p, &mut state, now()) {
            follow::Next::Wait => continue,
            follow::Next::Events(events) => events,
            follow::Next::End => break,
        };
        for e in &events {
            if options.json {
                let line =
                    serde_json::to_string(e).map_err(|e| ClientError::Unreadable(e.to_string()))?;
                let _ = writeln!(out, "{line}");
                state.apply(e, now());
                continue;
            }
            let inline = options.thinking == Thinking::Inline;
            let mut think = |s: &str| {
                let _ = if inline {
                    out.write_all(s.as_bytes())
                } else {
                    err.write_all(s.as_bytes())
                };
            };
            match e {
                TurnEvent::ThinkingStart { block, .. } if options.thinking != Thinking::Off => {
                    open_block = Some(*block);
                    think("Thinking…\n");
                }
                TurnEvent::Thinking { text: t, .. } if options.thinking != Thinking::Off => {
                    think(&text::sanitize(t));
                }
                TurnEvent::Delta { text: t } => {
                    let _ = write!(out, "{}", text::sanitize(t));
                }
                TurnEvent::Cite { n } if state.sources.iter().any(|s| s.n == *n) => {
                    let _ = write!(out, "[^{n}]");
                }
                // A tool's line once it ends: by then its input is known.
                TurnEvent::ToolEnd { tool, status, .. } if options.thinking != Thinking::Off => {
                    if let Some(t) = state.tools.get(*tool as usize) {
                        think(&format!(
                            "⚙ {} · {} — {}\n",
                            labels::tool_label(&text::sanitize(&t.name), super::locale()),
                            text::sanitize(&t.input),
                            labels::tool_status(*status, super::locale())
                        ));
                    }
                }
                _ => {}
            }
            state.apply(e, now());
            if let (Some(block), TurnEvent::ThinkingEnd { block: ended, .. }) = (open_block, e) {
                if block == *ended && options.thinking != Thinking::Off {
                    if let Some(b) = state.blocks.iter().find(|b| b.index == block) {
                        let said = format!("\n{}\n\n", labels::header(b, now(), super::locale()));
                        let _ = if options.thinking == Thinking::Inline {
                            out.write_all(said.as_bytes())
                        } else {
                            err.write_all(said.as_bytes())
                        };
                    }
                    open_block = None;
                }
            }
        }
        let _ = out.flush();
        if events.iter().any(TurnEvent::is_terminal) {
            break;
        }
    }
    task.abort();
    if !options.json {
        let _ = writeln!(out);
        if !state.sources.is_empty() {
            let notes = crate::domain::rich::with_footnotes("", &state.sources);
            let _ = write!(out, "\n{}", text::sanitize(notes.trim_start()));
        }
        // Beside the thinking: with it off, stderr stays for errors alone.
        if let Some(usage) = state
            .usage
            .as_ref()
            .filter(|_| options.thinking != Thinking::Off)
            .and_then(|u| labels::usage_line(u, super::locale()))
        {
            let _ = writeln!(err, "{usage}");
        }
    }
    match &state.error {
        Some(failure) => {
            if !options.json {
                let _ = writeln!(
                    err,
                    "ponder ask: {}",
                    text::sanitize(&labels::failure_text(failure, super::locale()))
                );
            }
            Ok(1)
        }
        None => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_arguments_name_the_question_the_server_and_where_thinking_goes() {
        let o = parse(&args(&[
            "why",
            "is",
            "--thinking=off",
            "the sky blue?",
            "--json",
        ]))
        .expect("parse");
        assert_eq!(o.question, "why is the sky blue?");
        assert_eq!(o.thinking, Thinking::Off);
        assert!(o.json);
        let o = parse(&args(&["--server", "http://h:1", "q"])).expect("parse");
        assert_eq!(o.server.as_deref(), Some("http://h:1"));
        let o = parse(&args(&[
            "--file",
            "a.png",
            "what is it",
            "--as",
            "text",
            "--file",
            "b.pdf",
            "--as",
            "model",
            "--file",
            "c.pdf",
        ]))
        .expect("parse");
        assert_eq!(
            o.files,
            vec![
                (std::path::PathBuf::from("a.png"), None),
                ("b.pdf".into(), Some(SendAs::Text)),
                ("c.pdf".into(), None)
            ]
        );
        assert_eq!(o.question, "what is it");
        let o = parse(&args(&["--file", "shot.png"])).expect("a file alone is a question");
        assert_eq!((o.question.as_str(), o.files.len()), ("", 1));
        for bad in [
            &["--server"][..],
            &["--loud", "q"],
            &[],
            &["q", "--file"],
            &["q", "--as", "pictures", "--file", "a.pdf"],
        ] {
            match parse(&args(bad)) {
                Err(e @ ClientError::Usage(_)) => assert_eq!(e.exit_code(), 2, "{bad:?}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        let loud = parse(&args(&["--loud", "q"])).err().map(|e| e.to_string());
        assert!(loud.is_some_and(|m| m.starts_with("--loud: usage")));
        let refused = ClientError::Refused(crate::domain::Failure::new("no", false));
        assert_eq!(
            (refused.exit_code(), refused.to_string().as_str()),
            (1, "no")
        );
    }
}
