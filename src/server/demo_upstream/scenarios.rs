//! The demo model's scenarios: which one a prompt asks for, and the script each one plays,
//! independent of any wire format.

use std::time::Duration;

#[cfg(feature = "bench-corpus")]
use super::perf;

/// What the demo model does for one request, chosen by a tag in the last user message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// Thinks, then answers (no tag).
    ThinkThenAnswer,
    /// `[no-think]`: answers with no reasoning.
    NoThink,
    /// `[long]`: thinks briefly, then a long markdown answer.
    Long,
    /// `[essay]`: `[long]`'s answer six times over (about 10 KB), eight words a delta: a text
    /// long enough for the page to draw it in several sections.
    Essay,
    /// `[slow]`: three seconds of silence before the first token.
    Slow,
    /// `[think-only]`: thinks until the token limit, never answers (`finish_reason: length`).
    ThinkOnly,
    /// `[drop]`: the connection drops in the middle of the answer.
    Drop,
    /// `[500]`: HTTP 500 before any byte of stream.
    Http500,
    /// `[429]`: HTTP 429 with `Retry-After`.
    Http429,
    /// `[error]`: an error payload in the middle of the stream.
    MidStreamError,
    /// `[error-once]`: `[error]` the first time a message is answered, then the usual reply
    /// (Retry and Regenerate can be seen to work, whatever history they send).
    ErrorOnce,
    /// `[two-blocks]`: thinks, answers, thinks again, answers again.
    TwoBlocks,
    /// `[utf8-split]`: multi-byte characters split across network chunks.
    Utf8Split,
    /// `[stall]`: headers, then silence forever (first-byte timeout).
    Stall,
    /// `[stall-mid]`: thinks a little, then silence forever (idle timeout).
    StallMid,
    /// `[garbage]`: lines that are not JSON between valid chunks.
    Garbage,
    /// `[bad-utf8]`: invalid UTF-8 bytes inside the answer.
    BadUtf8,
    /// `[big]`: a 10 MB answer, as fast as possible.
    Big,
    /// `[401]`: HTTP 401 whose body echoes the API key it was sent, as some servers do.
    Unauthorized,
    /// `[long-think]`: a long reasoning (taller than the block), then the answer.
    LongThink,
    /// `[xss]`: every payload of the XSS corpus, split across deltas, as thinking and as answer.
    Xss,
    /// `[think-tags]`: reasoning inline in the answer text as `<think>…</think>`, the tags
    /// split across chunks.
    ThinkTags,
    /// `[think-open]`: inline reasoning whose `<think>` the chat template opened, so only
    /// `</think>` arrives.
    ThinkOpen,
    /// `[redacted]`: reasons without readable text (encrypted or withheld), then answers.
    Redacted,
    /// `[hidden]`: reasons with its display omitted (a signature only), then answers.
    Omitted,
    /// `[perf]`: about 100 KB of markdown reasoning, then 50 KB of answer, at 200 deltas a
    /// second whatever the token delay: the load the UI benchmark measures (only in a
    /// `bench-corpus` build).
    #[cfg(feature = "bench-corpus")]
    Perf,
    /// `[code]`: code blocks in several languages (and one the highlighter does not know).
    Code,
    /// `[math]`: formulas in every delimiter, in the reasoning and the answer, beside dollar
    /// amounts and one formula that does not parse.
    Math,
    /// `[perf-rich]`: `[perf]` with formulas in its prose and code in several languages: the
    /// load of the UI benchmark's rich variant (typesetting and highlighting on the way).
    #[cfg(feature = "bench-corpus")]
    PerfRich,
    /// `[perf-long]`: `[perf]` ten times over (about 1 MB of reasoning, 500 KB of answer), ten
    /// words a delta at the same pace: the long turn of the UI benchmark, in the same time.
    #[cfg(feature = "bench-corpus")]
    PerfLong,
    /// `[tools]`: thinks, searches the web (the results are sources), thinks again, runs code,
    /// then answers citing two of the sources: tool steps between thinking blocks.
    Tools,
    /// `[xss-sources]`: a search whose query, output, source titles and addresses are the
    /// payloads of the XSS corpus, and an answer citing them.
    XssSources,
    /// `[tty]`: terminal escape sequences (clear screen, cursor moves, colours, a window
    /// title, an OSC 52 clipboard write, 8-bit CSI) and bidi controls, as thinking and as
    /// answer: what a terminal client must never pass through.
    Tty,
    /// `[bidi]`: reasoning in Arabic, then an answer that mixes an English paragraph, an Arabic
    /// paragraph, an Arabic list and code: each block must read in its own direction.
    Bidi,
}

/// `[bidi]`'s reasoning, in Arabic.
pub const BIDI_THINKING: &str =
    "السؤال عن التحية بلغتين. سأكتب فقرة بالإنجليزية وفقرة بالعربية ومثالًا برمجيًا.";

/// `[bidi]`'s answer: paragraphs in two directions, a list, inline code and a code block.
pub const BIDI_ANSWER: &str = "Hello is the usual greeting in English.\n\nمرحبًا هي التحية المعتادة بالعربية، وتُكتب من اليمين إلى اليسار.\n\n- السلام عليكم\n- أهلًا وسهلًا\n\nIn code, `greet(\"مرحبًا\")` prints it:\n\n```python\nprint(\"مرحبًا\")  # greet\n```\n";

/// `[code]`'s answer: fenced blocks the page highlights once each is finished.
pub const CODE_ANSWER: &str = "In Rust:\n\n```rust\nfn square(x: u32) -> u32 {\n    // multiply\n    x * x\n}\n```\n\nIn Python:\n\n```python\ndef square(x):\n    return x * x  # \"same\"\n```\n\nThe change:\n\n```diff\n-let y = x + x;\n+let y = x * x;\n```\n\nAnd in a language nobody knows:\n\n```klingon\nqapla' <b>not markup</b>\n```\n";

/// `[math]`'s reasoning: LaTeX as models write it while they think.
pub const MATH_THINKING: &str = "The area under $y = x^2$ from 0 to 1 is \\(\\int_0^1 x^2\\,dx\\); the antiderivative is $\\frac{x^3}{3}$.";

/// `[math]`'s answer: inline and display formulas in both notations, money, and a formula that
/// does not parse.
pub const MATH_ANSWER: &str = "The integral is $\\int_0^1 x^2\\,dx = \\frac{1}{3}$, and by Pythagoras \\(a^2 + b^2 = c^2\\).\n\n$$\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}$$\n\n\\[ E = mc^2 \\]\n\nIt costs $5 and $10 at most.\n\nThis one is broken: $\\notacommand{x}$.\n";

impl Scenario {
    /// Each tag a prompt can carry, and the scenario it picks.
    pub const TAGS: &'static [(&'static str, Scenario)] = &[
        ("[bidi]", Scenario::Bidi),
        ("[xss-sources]", Scenario::XssSources),
        ("[tools]", Scenario::Tools),
        #[cfg(feature = "bench-corpus")]
        ("[perf-rich]", Scenario::PerfRich),
        #[cfg(feature = "bench-corpus")]
        ("[perf-long]", Scenario::PerfLong),
        ("[code]", Scenario::Code),
        ("[math]", Scenario::Math),
        ("[tty]", Scenario::Tty),
        ("[error-once]", Scenario::ErrorOnce),
        ("[xss]", Scenario::Xss),
        ("[long-think]", Scenario::LongThink),
        ("[401]", Scenario::Unauthorized),
        ("[no-think]", Scenario::NoThink),
        ("[long]", Scenario::Long),
        ("[essay]", Scenario::Essay),
        ("[slow]", Scenario::Slow),
        ("[think-only]", Scenario::ThinkOnly),
        ("[drop]", Scenario::Drop),
        ("[500]", Scenario::Http500),
        ("[429]", Scenario::Http429),
        ("[error]", Scenario::MidStreamError),
        ("[two-blocks]", Scenario::TwoBlocks),
        ("[utf8-split]", Scenario::Utf8Split),
        ("[stall-mid]", Scenario::StallMid),
        ("[stall]", Scenario::Stall),
        ("[garbage]", Scenario::Garbage),
        ("[bad-utf8]", Scenario::BadUtf8),
        ("[big]", Scenario::Big),
        ("[think-tags]", Scenario::ThinkTags),
        ("[think-open]", Scenario::ThinkOpen),
        ("[redacted]", Scenario::Redacted),
        ("[hidden]", Scenario::Omitted),
        #[cfg(feature = "bench-corpus")]
        ("[perf]", Scenario::Perf),
    ];

    /// The scenario a prompt asks for; the first tag found wins.
    pub fn from_prompt(prompt: &str) -> Scenario {
        let lower = prompt.to_ascii_lowercase();
        Self::TAGS
            .iter()
            .filter_map(|(tag, s)| lower.find(tag).map(|at| (at, *s)))
            .min_by_key(|(at, _)| *at)
            .map(|(_, s)| s)
            .unwrap_or(Scenario::ThinkThenAnswer)
    }
}

/// One step of a scripted reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Think(String),
    Answer(String),
    Pause(Duration),
    /// Reasoning the provider does not show (encrypted, withheld), lasting this long.
    Hidden(Duration),
    /// Reasoning whose display the request left omitted: Anthropic streams a thinking block
    /// with only its signature; the other formats as [`Step::Hidden`].
    Omitted(Duration),
    /// Answer text given as bytes that may not be UTF-8, inside the provider's chunk shape.
    AnswerBytes(Vec<u8>),
    /// Bytes written as they are, outside any chunk shape.
    Raw(Vec<u8>),
    /// An in-stream error payload.
    ErrorPayload(String),
    /// Stop writing and break the connection.
    Cut,
    /// Stop writing and keep the connection open forever.
    Stall,
    /// A tool the provider runs itself (web search, code execution).
    Tool(DemoTool),
    /// The answer so far cites this source (address, title).
    Cite(String, String),
}

/// A server-side tool of a demo script: what it is asked, how long it runs, what it returns
/// and the pages it found.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoTool {
    /// `web_search` or `code_execution`.
    pub name: &'static str,
    pub input: String,
    pub output: String,
    /// (address, title) of each page found.
    pub sources: Vec<(String, String)>,
    pub ok: bool,
    pub runs_for: Duration,
}

/// `[tools]`' sources.
pub const TOOLS_SOURCES: [(&str, &str); 3] = [
    (
        "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/",
        "Announcing Rust 1.85.0 and Rust 2024",
    ),
    (
        "https://doc.rust-lang.org/edition-guide/rust-2024/index.html",
        "Rust 2024 - The Rust Edition Guide",
    ),
    ("https://www.rust-lang.org/", "Rust Programming Language"),
];

fn tools_script() -> Vec<Step> {
    let source = |i: usize| {
        let (url, title) = TOOLS_SOURCES[i];
        (url.to_string(), title.to_string())
    };
    let cite = |i: usize| {
        let (url, title) = source(i);
        Step::Cite(url, title)
    };
    vec![
        Step::Think("The question is about a release date, which I should not guess. Let me search.".into()),
        Step::Tool(DemoTool {
            name: "web_search",
            input: "Rust 2024 edition release".into(),
            output: "Found 3 pages.".into(),
            sources: (0..3).map(source).collect(),
            ok: true,
            runs_for: Duration::from_millis(600),
        }),
        Step::Think("The announcement gives the version and the date; the guide lists the changes. Let me check the sum the reader also asked for.".into()),
        Step::Tool(DemoTool {
            name: "code_execution",
            input: "print(sum(range(1, 11)))".into(),
            output: "55".into(),
            sources: Vec::new(),
            ok: true,
            runs_for: Duration::from_millis(400),
        }),
        Step::Think("Both checks agree with what I remembered.".into()),
        Step::Answer("The Rust 2024 edition shipped with Rust 1.85 on 20 February 2025.".into()),
        cite(0),
        Step::Answer(" The edition guide lists what changed.".into()),
        cite(1),
        Step::Answer(" And 1 + 2 + … + 10 = 55.".into()),
    ]
}

fn xss_sources_script() -> Vec<Step> {
    let payloads = xss_payloads();
    let sources: Vec<(String, String)> = payloads
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let url = if i % 2 == 0 {
                p.to_string()
            } else {
                format!("https://example.com/{i}?q={p}")
            };
            (url, p.to_string())
        })
        .collect();
    let mut steps = vec![Step::Tool(DemoTool {
        name: "web_search",
        input: payloads.join(" "),
        output: payloads.join("\n"),
        sources: sources.clone(),
        ok: true,
        runs_for: Duration::ZERO,
    })];
    steps.push(Step::Answer("Every source, cited:".into()));
    for (url, title) in sources {
        steps.push(Step::Cite(url, title));
    }
    steps
}

/// A scripted reply: an HTTP status (and body) for failures, or steps ending in a finish reason.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    pub status: u16,
    pub error_body: Option<String>,
    pub steps: Vec<Step>,
    pub finish: &'static str,
    /// Stream every step at once, ignoring the token delay.
    pub fast: bool,
    /// The script's own pause between chunks, in place of the configured token delay.
    pub pace: Option<Duration>,
    /// Words in each chunk (one, as most models stream; more for a fast model's larger deltas).
    pub words: usize,
}

impl Script {
    /// The pieces `text` streams in: whole when [`Script::fast`], else [`token_groups`] of
    /// [`Script::words`].
    pub fn pieces<'a>(&self, text: &'a str) -> Vec<&'a str> {
        if self.fast {
            vec![text]
        } else {
            token_groups(text, self.words)
        }
    }
}

/// The default scenario's reasoning.
pub const THINKING: &str =
    "The user wants a clear answer, so first I should pin down what is really being asked. \
Let me restate it in my own words and check the assumptions.\n\n\
1. What is known: the question itself and the context of the conversation.\n\
2. What is missing: nothing essential, so I can answer directly.\n\
3. Risks: being too long. A short explanation with one concrete example should do.\n\n\
Let me double-check the reasoning once more… yes, that holds. Now I'll write the answer.";

/// The default scenario's answer.
pub const ANSWER: &str = "Here is what I found, step by step.\n\n\
**Short answer:** yes — and the reasoning above shows why.\n\n\
- First, the question has a direct answer.\n\
- Second, one example makes it concrete: `2 + 2 = 4`.\n\n\
Let me know if you want more detail.";

const SECOND_THINKING: &str =
    "Wait — before I finish, let me verify the example. 2 + 2 is indeed 4, so the answer stands.";

fn long_answer() -> String {
    let mut s = String::from(
        "# A longer answer\n\nThis answer is long on purpose, to show scrolling and rendering.\n\n",
    );
    for i in 1..=12 {
        s.push_str(&format!(
            "## Part {i}\n\nParagraph {i} explains one more aspect in plain words, with *emphasis* and a list:\n\n- point {i}.a\n- point {i}.b\n\n"
        ));
        if i % 4 == 0 {
            s.push_str(&format!(
                "```rust\nfn part_{i}() -> u32 {{\n    {i}\n}}\n```\n\n"
            ));
        }
    }
    s.push_str("| part | status |\n|---|---|\n| 1–12 | done |\n");
    s
}

/// The script for a prompt.
pub fn script(prompt: &str) -> Script {
    Scenario::from_prompt(prompt).script()
}

impl Scenario {
    /// The script this scenario plays.
    pub fn script(self) -> Script {
        let ok = |steps: Vec<Step>| Script {
            status: 200,
            error_body: None,
            steps,
            finish: "stop",
            fast: false,
            pace: None,
            words: 1,
        };
        let think = || Step::Think(THINKING.into());
        let answer = || Step::Answer(ANSWER.into());
        match self {
        Scenario::ThinkThenAnswer => ok(vec![think(), answer()]),
        Scenario::NoThink => ok(vec![answer()]),
        Scenario::Long => ok(vec![Step::Think("A long answer is wanted; I'll structure it in parts.".into()), Step::Answer(long_answer())]),
        Scenario::Essay => Script {
            words: 8,
            ..ok(vec![Step::Think("An essay, then.".into()), Step::Answer(long_answer().repeat(6))])
        },
        Scenario::Slow => ok(vec![Step::Pause(Duration::from_secs(3)), think(), answer()]),
        Scenario::ThinkOnly => Script { finish: "length", ..ok(vec![think(), Step::Think(" And more, and more…".into())]) },
        Scenario::Drop => ok(vec![think(), Step::Answer("Here is the beginning of the answer, and then".into()), Step::Cut]),
        Scenario::Http500 => Script {
            status: 500,
            error_body: Some(r#"{"error":{"message":"the demo model is having a bad day","type":"server_error"}}"#.into()),
            ..ok(vec![])
        },
        Scenario::Http429 => Script {
            status: 429,
            error_body: Some(r#"{"error":{"message":"rate limit reached for the demo model","type":"rate_limit"}}"#.into()),
            ..ok(vec![])
        },
        Scenario::MidStreamError => ok(vec![think(), Step::Answer("Partial answer".into()), Step::ErrorPayload("the demo model overloaded mid-answer".into())]),
        // The handler decides which of the two it plays; alone it is the failing one.
        Scenario::ErrorOnce => Scenario::MidStreamError.script(),
        Scenario::TwoBlocks => ok(vec![think(), answer(), Step::Think(SECOND_THINKING.into()), Step::Answer("\n\nVerified: the answer stands.".into())]),
        Scenario::Utf8Split => ok(vec![Step::Think("Thinking in UTF-8: ünïcødé, 日本語, emoji 🤔.".into()), Step::Answer("Café ☕ — 日本語 — 🎉 done.".into())]),
        Scenario::Stall => ok(vec![Step::Stall]),
        Scenario::StallMid => ok(vec![Step::Think("Let me think about".into()), Step::Stall]),
        Scenario::Garbage => ok(vec![
            Step::Raw(b"data: {this is not json\n\n".to_vec()),
            think(),
            Step::Raw(b"garbage without a field name\n\ndata: \x00\x01\n\n".to_vec()),
            answer(),
        ]),
        Scenario::BadUtf8 => ok(vec![
            Step::Answer("Before the bad bytes.".into()),
            Step::AnswerBytes(b" bad \xff\xfe bytes".to_vec()),
            Step::Answer(" After.".into()),
        ]),
        Scenario::Xss => {
            let payloads = xss_payloads();
            let mut steps = Vec::new();
            for p in &payloads {
                steps.extend(thirds(p).into_iter().map(|piece| Step::Think(piece.to_string())));
                steps.push(Step::Think("\n\n".into()));
            }
            for p in &payloads {
                steps.extend(thirds(p).into_iter().map(|piece| Step::Answer(piece.to_string())));
                steps.push(Step::Answer("\n\n".into()));
            }
            Script { fast: true, ..ok(steps) }
        }
        Scenario::LongThink => {
            let steps: String = (1..=12)
                .map(|i| format!("Step {i}: I check one more angle of the question and note what it changes.\n\n"))
                .collect();
            ok(vec![Step::Think(format!("{THINKING}\n\n{steps}")), answer()])
        }
        Scenario::ThinkTags => ok(inline_think(&["<thi", "nk>\n"])),
        Scenario::ThinkOpen => ok(inline_think(&[])),
        Scenario::Redacted => ok(vec![Step::Hidden(Duration::from_millis(1200)), answer()]),
        Scenario::Omitted => ok(vec![Step::Omitted(Duration::from_millis(1200)), answer()]),
        Scenario::Math => ok(vec![Step::Think(MATH_THINKING.into()), Step::Answer(MATH_ANSWER.into())]),
        Scenario::Tools => ok(tools_script()),
        Scenario::XssSources => Script { fast: true, ..ok(xss_sources_script()) },
        Scenario::Code => ok(vec![Step::Think("Three short examples should do.".into()), Step::Answer(CODE_ANSWER.into())]),
        Scenario::Bidi => ok(vec![Step::Think(BIDI_THINKING.into()), Step::Answer(BIDI_ANSWER.into())]),
        Scenario::Tty => {
            let hostile = [
                "\u{1b}]0;pwned-title\u{7}",
                "\u{1b}]52;c;cHduZWQtY2xpcGJvYXJk\u{7}",
                "\u{1b}[2J\u{1b}[H",
                "\u{1b}[31mred\u{1b}[0m",
                "\u{1b}[5A",
                "\u{9b}1;1H",
                "\u{202e}reversed\u{202c}",
                "\u{7}\u{8}\u{8}\r",
            ];
            let mut steps = vec![Step::Think("Checking the escapes: ".into())];
            steps.extend(hostile.iter().map(|h| Step::Think((*h).into())));
            steps.push(Step::Answer("Terminal-safe answer: ".into()));
            steps.extend(hostile.iter().map(|h| Step::Answer((*h).into())));
            steps.push(Step::Answer(" end of the hostile answer.".into()));
            ok(steps)
        }
        #[cfg(feature = "bench-corpus")]
        Scenario::Perf => Script {
            pace: Some(PERF_PACE),
            ..ok(vec![Step::Think(perf::thinking()), Step::Answer(perf::answer())])
        },
        #[cfg(feature = "bench-corpus")]
        Scenario::PerfRich => Script {
            pace: Some(PERF_PACE),
            ..ok(vec![Step::Think(perf::rich_thinking()), Step::Answer(perf::rich_answer())])
        },
        #[cfg(feature = "bench-corpus")]
        Scenario::PerfLong => Script {
            pace: Some(PERF_PACE),
            words: PERF_LONG_WORDS,
            ..ok(vec![
                Step::Think(perf::thinking_of(perf::THINKING_BYTES * PERF_LONG_WORDS)),
                Step::Answer(perf::answer_of(perf::ANSWER_BYTES * PERF_LONG_WORDS)),
            ])
        },
        Scenario::Unauthorized => Script {
            status: 401,
            error_body: Some(r#"{"error":{"message":"Incorrect API key provided: {key}","type":"invalid_request_error"}}"#.into()),
            ..ok(vec![])
        },
        Scenario::Big => {
            let line = "This sentence is one of many in a ten megabyte answer, streamed as fast as possible.\n";
            let mut steps = Vec::new();
            let mut total = 0;
            while total < 10 * 1024 * 1024 {
                let piece = line.repeat(16);
                total += piece.len();
                steps.push(Step::Answer(piece));
            }
            Script { fast: true, ..ok(steps) }
        }
    }
    }
}

/// `[perf]`'s pause between chunks: 200 deltas a second.
#[cfg(feature = "bench-corpus")]
const PERF_PACE: Duration = Duration::from_millis(5);

/// `[perf-long]` is `[perf]` this many times over, with this many words a delta.
#[cfg(feature = "bench-corpus")]
const PERF_LONG_WORDS: usize = 10;

/// The XSS corpus the renderer is tested on (records start with a `----8<---- label` line).
fn xss_payloads() -> Vec<&'static str> {
    const CORPUS: &str = include_str!("../../../tests/fixtures/xss-payloads.txt");
    CORPUS
        .split("----8<---- ")
        .filter_map(|record| {
            record
                .split_once('\n')
                .map(|(_, payload)| payload.trim_end_matches('\n'))
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// A text cut in three at character boundaries, so a payload arrives in several deltas.
fn thirds(text: &str) -> Vec<&str> {
    let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    if cuts.len() < 3 {
        return vec![text];
    }
    let (a, b) = (cuts[cuts.len() / 3], cuts[2 * cuts.len() / 3]);
    vec![&text[..a], &text[a..b], &text[b..]]
}

/// The default reply with its reasoning written inline in the answer text, after `open` (the
/// opening tag, split in two, or nothing when the template opened it), closed by a split
/// `</think>`.
fn inline_think(open: &[&str]) -> Vec<Step> {
    let mut steps: Vec<Step> = open.iter().map(|t| Step::Answer(t.to_string())).collect();
    steps.extend([
        Step::Answer(THINKING.into()),
        Step::Answer("</th".into()),
        Step::Answer("ink>\n\n".into()),
        Step::Answer(ANSWER.into()),
    ]);
    steps
}

/// [`tokens`] in groups of `words` (the last one may be shorter).
fn token_groups(text: &str, words: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for group in tokens(text).chunks(words.max(1)) {
        let len: usize = group.iter().map(|t| t.len()).sum();
        out.push(&text[start..start + len]);
        start += len;
    }
    out
}

/// Splits text into token-sized pieces (a word with its leading space), as a model streams.
pub fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_word = false;
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        if in_word && space {
            out.push(&text[start..i]);
            start = i;
        }
        in_word = !space;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_pick_scenarios_and_the_first_tag_wins() {
        assert_eq!(Scenario::from_prompt("hello"), Scenario::ThinkThenAnswer);
        assert_eq!(
            Scenario::from_prompt("please [No-Think] now"),
            Scenario::NoThink
        );
        assert_eq!(Scenario::from_prompt("[stall-mid]"), Scenario::StallMid);
        assert_eq!(Scenario::from_prompt("[drop] then [500]"), Scenario::Drop);
    }

    #[test]
    fn tokens_reassemble_to_the_text() {
        for text in [
            THINKING,
            ANSWER,
            "  leading",
            "trailing  ",
            "日本語 の テキスト",
        ] {
            assert_eq!(tokens(text).concat(), text);
        }
        assert_eq!(tokens("a bc  d"), ["a", " bc", "  d"]);
        assert_eq!(token_groups("a bc  d e", 2), ["a bc", "  d e"]);
        assert_eq!(token_groups("a bc  d", 2), ["a bc", "  d"]);
        assert_eq!(token_groups("a bc", 1), ["a", " bc"]);
    }

    #[test]
    fn the_xss_scenario_streams_the_whole_corpus_in_pieces() {
        let payloads = xss_payloads();
        assert!(payloads.len() >= 100);
        assert_eq!(payloads[0], "<script>alert(1)</script>");
        let script = script("[xss]");
        let answer: String = script
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Answer(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            answer,
            payloads
                .iter()
                .map(|p| format!("{p}\n\n"))
                .collect::<String>()
        );
        assert_eq!(thirds("abcdef"), ["ab", "cd", "ef"]);
        assert_eq!(thirds("日本語"), ["日", "本", "語"]);
    }

    /// The chunks an OpenAI-style stream of `script` sends.
    #[cfg(feature = "bench-corpus")]
    fn chunks(script: &Script) -> usize {
        use crate::server::demo_upstream::{framing::render_openai, Emit};
        render_openai(script)
            .iter()
            .filter(|e| matches!(e, Emit::Chunk(_)))
            .count()
    }

    #[cfg(feature = "bench-corpus")]
    #[test]
    fn the_perf_scenario_streams_its_texts_word_by_word_at_its_own_pace() {
        let script = script("bench [perf]");
        assert_eq!(script.pace, Some(Duration::from_millis(5)));
        assert!(!script.fast);
        assert_eq!(
            script.steps,
            [Step::Think(perf::thinking()), Step::Answer(perf::answer())]
        );
        let words = tokens(&perf::thinking()).len() + tokens(&perf::answer()).len();
        assert_eq!(
            chunks(&script),
            words + 3,
            "a role chunk, one per word, finish, usage"
        );
    }

    #[cfg(feature = "bench-corpus")]
    #[test]
    fn the_long_perf_scenario_is_ten_times_the_text_in_deltas_of_ten_words() {
        let script = script("bench [perf-long]");
        let [Step::Think(thinking), Step::Answer(answer)] = &script.steps[..] else {
            panic!("a reasoning and an answer step: {:?}", script.steps);
        };
        assert!(thinking.len() >= 10 * perf::THINKING_BYTES);
        assert!(answer.len() >= 10 * perf::ANSWER_BYTES);
        assert!(thinking.starts_with(&perf::thinking()[..1000]));
        let groups = token_groups(thinking, 10).len() + token_groups(answer, 10).len();
        assert_eq!(
            groups,
            tokens(thinking).len().div_ceil(10) + tokens(answer).len().div_ceil(10)
        );
        assert_eq!(
            chunks(&script),
            groups + 3,
            "a role chunk, one per ten words, finish, usage"
        );
    }
}
