//! Display-safe, width-correct text for the terminal.
//!
//! Model output is hostile: an escape sequence in an answer could clear the screen, retitle the
//! window, write the clipboard (OSC 52) or reorder what the user reads (bidi controls). Every
//! string from a model passes [`sanitize`] before it is drawn, and everything that lays text out
//! measures it in display columns by grapheme cluster ([`width`]), the way ratatui draws it, so
//! CJK and emoji (two columns) never overflow a line and a cluster is never cut in half.
//!
//! Pure functions only: no terminal I/O, no ratatui types.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';
const CAN: char = '\u{18}';
const SUB: char = '\u{1a}';
const C1_DCS: char = '\u{90}';
const C1_SOS: char = '\u{98}';
const C1_CSI: char = '\u{9b}';
const C1_ST: char = '\u{9c}';
const C1_OSC: char = '\u{9d}';
const C1_PM: char = '\u{9e}';
const C1_APC: char = '\u{9f}';
const ELLIPSIS: &str = "…";

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// Removes everything in `s` that a terminal would act on instead of print.
///
/// Whole escape sequences go, not just their ESC, so no parameter junk (`[2J`, `]0;title`) is
/// left on screen: CSI, OSC (to BEL or ST; an unterminated one swallows the rest, since a
/// terminal would too), DCS/SOS/PM/APC strings, two- and three-character `ESC` sequences, and the
/// 8-bit C1 forms of all of them. Every other control character goes too, except `\n`; a tab
/// becomes four spaces, because its width depends on a cursor position the layout doesn't know.
/// Bidi embedding, override and isolate controls and the directional marks are removed so text
/// can't be visually reordered. Everything else, including ZWJ emoji sequences, variation
/// selectors and combining marks, is kept as is.
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            ESC => skip_escape(&mut chars),
            C1_CSI => skip_csi(&mut chars),
            C1_OSC => skip_string(&mut chars, true),
            C1_DCS | C1_SOS | C1_PM | C1_APC => skip_string(&mut chars, false),
            c if c.is_control() || is_bidi_control(c) => {}
            c => out.push(c),
        }
    }
    out
}

fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{061c}' | '\u{200e}' | '\u{200f}'
    )
}

/// Called after an ESC: consumes the rest of its sequence. A character that cannot continue a
/// sequence is left for the caller, so text after a stray ESC survives.
fn skip_escape(chars: &mut Chars<'_>) {
    let Some(&next) = chars.peek() else { return };
    match next {
        '[' => {
            chars.next();
            skip_csi(chars);
        }
        ']' => {
            chars.next();
            skip_string(chars, true);
        }
        'P' | 'X' | '^' | '_' => {
            chars.next();
            skip_string(chars, false);
        }
        '\u{20}'..='\u{2f}' => {
            while chars
                .next_if(|c| matches!(c, '\u{20}'..='\u{2f}'))
                .is_some()
            {}
            chars.next_if(|c| matches!(c, '\u{30}'..='\u{7e}'));
        }
        '\u{30}'..='\u{7e}' => {
            chars.next();
        }
        _ => {}
    }
}

/// Consumes CSI parameters and intermediates up to the final byte. Anything else ends the
/// sequence unconsumed: it is dealt with as ordinary input (and removed if it is a control).
fn skip_csi(chars: &mut Chars<'_>) {
    while let Some(&c) = chars.peek() {
        match c {
            '\u{40}'..='\u{7e}' => {
                chars.next();
                return;
            }
            '\u{20}'..='\u{3f}' => {
                chars.next();
            }
            _ => return,
        }
    }
}

/// Consumes a control string (OSC, DCS, SOS, PM, APC) through its terminator. An ESC that does
/// not start ST aborts the string and is left to start a new sequence, as terminals do; leaving
/// it (rather than recursing) keeps hostile input like `ESC ] ESC ] …` from growing the stack.
fn skip_string(chars: &mut Chars<'_>, bel_ends: bool) {
    while let Some(&c) = chars.peek() {
        match c {
            ESC => {
                let mut ahead = chars.clone();
                ahead.next();
                if ahead.next() == Some('\\') {
                    chars.next();
                    chars.next();
                }
                return;
            }
            C1_ST | CAN | SUB => {
                chars.next();
                return;
            }
            BEL if bel_ends => {
                chars.next();
                return;
            }
            _ => {
                chars.next();
            }
        }
    }
}

/// Display columns of `s`, summed by grapheme cluster, which is how the terminal lays it out:
/// CJK and emoji take two columns, a ZWJ family or a flag is one two-column cluster, a combining
/// accent takes none. Meant for sanitized text.
pub fn width(s: &str) -> usize {
    s.graphemes(true).map(grapheme_width).sum()
}

fn grapheme_width(g: &str) -> usize {
    UnicodeWidthStr::width(g)
}

/// The beginning of `s` in at most `cols` columns, ending in `…` when something was cut, so a
/// title or label never overflows its slot and the cut is visible. Never splits a grapheme
/// cluster; a wide character that would straddle the limit is dropped whole.
pub fn fit_start(s: &str, cols: usize) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    if cols == 0 {
        return String::new();
    }
    let budget = cols - 1;
    let mut used = 0;
    let mut out = String::new();
    for g in s.graphemes(true) {
        let w = grapheme_width(g);
        if used + w > budget {
            break;
        }
        used += w;
        out.push_str(g);
    }
    out.push_str(ELLIPSIS);
    out
}

/// The end of `s` in at most `cols` columns, starting with `…` when something was cut: for a
/// live view the newest words are the ones worth showing. Same cluster rules as [`fit_start`].
pub fn fit_end(s: &str, cols: usize) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    if cols == 0 {
        return String::new();
    }
    let budget = cols - 1;
    let mut used = 0;
    let mut kept = Vec::new();
    for g in s.graphemes(true).rev() {
        let w = grapheme_width(g);
        if used + w > budget {
            break;
        }
        used += w;
        kept.push(g);
    }
    let mut out = String::from(ELLIPSIS);
    out.extend(kept.into_iter().rev());
    out
}

/// One line that shows where the model's reasoning is right now: the line being written (or, if
/// it is still blank, the last line with text), sanitized and trimmed, keeping its newest words
/// within `cols`. Only the lines it looks at are sanitized, so calling it on every streamed chunk
/// stays cheap however long the reasoning grows.
pub fn live_line(reasoning: &str, cols: usize) -> String {
    for line in reasoning.rsplit('\n') {
        let clean = sanitize(line);
        let line = clean.trim();
        if !line.is_empty() {
            return fit_end(line, cols);
        }
    }
    String::new()
}

/// Word-wraps `s` into rows of at most `cols` display columns (0 counts as 1).
///
/// Each `\n` ends a row, so an empty line stays an empty row; a line's leading indentation is
/// kept on its first row; words wider than a row are broken between grapheme clusters; a wide
/// character never straddles the edge; trailing spaces are trimmed. Empty input gives no rows.
pub fn wrap(s: &str, cols: usize) -> Vec<String> {
    wrap_tagged(&[((), s)], cols)
        .into_iter()
        .map(|row| row.into_iter().map(|(_, text)| text).collect())
        .collect()
}

/// [`wrap`] for text made of runs that each carry a tag (a style): words may span runs, every
/// grapheme keeps its run's tag wherever it lands, and each row comes back as runs again, with
/// neighbours of equal tag merged. This is what lets styled markdown wrap like plain text.
pub fn wrap_tagged<T: Copy + PartialEq>(runs: &[(T, &str)], cols: usize) -> Vec<Vec<(T, String)>> {
    let cols = cols.max(1);
    let graphemes: Vec<(T, &str)> = runs
        .iter()
        .flat_map(|&(tag, text)| text.graphemes(true).map(move |g| (tag, g)))
        .collect();
    let mut rows = Vec::new();
    let mut rest = graphemes.as_slice();
    while !rest.is_empty() {
        let end = rest
            .iter()
            .position(|(_, g)| g.contains('\n'))
            .unwrap_or(rest.len());
        wrap_line(&rest[..end], cols, &mut rows);
        rest = rest.get(end + 1..).unwrap_or(&[]);
    }
    rows
}

/// Breaks one line into rows of at most `cols` columns between grapheme clusters, with no regard
/// for words: for code, whose spacing must survive exactly. An empty line is one empty row. A
/// cluster wider than `cols` (a wide character at `cols == 1`) is shown as `…`.
pub fn hard_wrap(line: &str, cols: usize) -> Vec<String> {
    let cols = cols.max(1);
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut used = 0;
    for g in line.graphemes(true) {
        let (g, w) = clamp_grapheme(g, cols);
        if used + w > cols {
            rows.push(std::mem::take(&mut row));
            used = 0;
        }
        row.push_str(g);
        used += w;
    }
    rows.push(row);
    rows
}

fn clamp_grapheme(g: &str, cols: usize) -> (&str, usize) {
    let w = grapheme_width(g);
    if w > cols {
        (ELLIPSIS, 1)
    } else {
        (g, w)
    }
}

fn is_break_char(c: char) -> bool {
    c.is_whitespace() && !matches!(c, '\u{a0}' | '\u{2007}' | '\u{202f}' | '\n')
}

fn is_break_space(g: &str) -> bool {
    let mut chars = g.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if is_break_char(c))
}

struct Row<T> {
    runs: Vec<(T, String)>,
    width: usize,
    has_word: bool,
}

impl<T: Copy + PartialEq> Row<T> {
    fn new() -> Self {
        Row {
            runs: Vec::new(),
            width: 0,
            has_word: false,
        }
    }

    fn push(&mut self, tag: T, g: &str, w: usize) {
        match self.runs.last_mut() {
            Some((last, text)) if *last == tag => text.push_str(g),
            _ => self.runs.push((tag, g.to_string())),
        }
        self.width += w;
    }

    fn push_all(&mut self, items: &[(T, &str)]) {
        for &(tag, g) in items {
            self.push(tag, g, grapheme_width(g));
        }
    }

    fn finish(mut self) -> Vec<(T, String)> {
        while let Some((_, text)) = self.runs.last_mut() {
            let kept = text.trim_end_matches(is_break_char).len();
            text.truncate(kept);
            if text.is_empty() {
                self.runs.pop();
            } else {
                break;
            }
        }
        self.runs
    }
}

fn items_width<T>(items: &[(T, &str)]) -> usize {
    items.iter().map(|(_, g)| grapheme_width(g)).sum()
}

fn wrap_line<T: Copy + PartialEq>(
    line: &[(T, &str)],
    cols: usize,
    rows: &mut Vec<Vec<(T, String)>>,
) {
    let tokens = line.chunk_by(|a, b| is_break_space(a.1) == is_break_space(b.1));
    let mut row = Row::new();
    let mut gap: &[(T, &str)] = &[];
    for (index, token) in tokens.enumerate() {
        if token.first().is_some_and(|(_, g)| is_break_space(g)) {
            if index == 0 {
                for &(tag, g) in token.iter() {
                    let w = grapheme_width(g);
                    if row.width + w >= cols {
                        break;
                    }
                    row.push(tag, g, w);
                }
            } else {
                gap = token;
            }
            continue;
        }
        let word_width = items_width(token);
        let gap_width = if row.has_word { items_width(gap) } else { 0 };
        if row.width + gap_width + word_width <= cols {
            if row.has_word {
                row.push_all(gap);
            }
            row.push_all(token);
        } else if word_width <= cols {
            if row.has_word {
                rows.push(std::mem::replace(&mut row, Row::new()).finish());
            } else {
                row = Row::new();
            }
            row.push_all(token);
        } else {
            if row.has_word {
                rows.push(std::mem::replace(&mut row, Row::new()).finish());
            }
            for &(tag, g) in token.iter() {
                let (g, w) = clamp_grapheme(g, cols);
                if row.width + w > cols {
                    let full = std::mem::replace(&mut row, Row::new());
                    if full.has_word {
                        rows.push(full.finish());
                    }
                }
                row.push(tag, g, w);
                row.has_word = true;
            }
        }
        row.has_word = true;
        gap = &[];
    }
    rows.push(row.finish());
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAMILY: &str = "👨\u{200d}👩\u{200d}👧";
    const FLAG: &str = "🇯🇵";
    const E_ACUTE: &str = "e\u{301}";

    fn corpus() -> Vec<String> {
        let mut texts: Vec<String> = [
            "",
            "a",
            "hello world",
            "日本語のテキスト",
            "naïve 日本 👍🏽 done",
            FAMILY,
            "family: 👨\u{200d}👩\u{200d}👧 and flag 🇯🇵 and 🇫🇷🇩🇪",
            "cafe\u{301} cre\u{300}me bru\u{302}le\u{301}e",
            "a\u{301}\u{302}\u{303}\u{304}b",
            "❤\u{fe0f} #\u{fe0f}\u{20e3} ✌🏿",
            "  indented line with words",
            "trailing spaces   ",
            "mixed 中文 and English words 한국어 텍스트",
            "supercalifragilisticexpialidocious",
            "x y z",
            "ｶﾞｷﾞ half-width",
            "line one\nline two\n\nline four",
            "\n\n",
            "tab\there",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        texts.push("日".repeat(40));
        texts.push(FAMILY.repeat(9));
        texts.push("word ".repeat(30));
        texts
    }

    fn graphemes_of(s: &str) -> Vec<&str> {
        s.graphemes(true).collect()
    }

    #[test]
    fn sanitize_removes_csi() {
        assert_eq!(sanitize("a\x1b[2Jb"), "ab");
        assert_eq!(sanitize("\x1b[31mred\x1b[0m"), "red");
        assert_eq!(sanitize("\x1b[38;2;255;0;0mx"), "x");
        assert_eq!(sanitize("\x1b[?1049h\x1b[Hhome"), "home");
        assert_eq!(sanitize("\x1b[6n"), "");
    }

    #[test]
    fn sanitize_removes_osc() {
        assert_eq!(sanitize("a\x1b]0;title\x07b"), "ab");
        assert_eq!(sanitize("a\x1b]0;title\x1b\\b"), "ab");
        assert_eq!(sanitize("\x1b]52;c;SGVsbG8gd29ybGQ=\x07ok"), "ok");
        assert_eq!(
            sanitize("\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\"),
            "link"
        );
        assert_eq!(sanitize("\x1b]4;1;rgb:ff/00/00\x07x"), "x");
    }

    #[test]
    fn sanitize_drops_unterminated_osc_to_the_end() {
        assert_eq!(sanitize("safe\x1b]0;never ending title"), "safe");
        assert_eq!(sanitize("safe\u{9d}0;never ending"), "safe");
    }

    #[test]
    fn sanitize_removes_control_strings() {
        assert_eq!(sanitize("a\x1bPq#0;2;0;0;0\x1b\\b"), "ab");
        assert_eq!(sanitize("a\x1bXsos\x1b\\b"), "ab");
        assert_eq!(sanitize("a\x1b^pm\x1b\\b"), "ab");
        assert_eq!(sanitize("a\x1b_apc\x1b\\b"), "ab");
        assert_eq!(sanitize("a\x1bPdcs with bel\x07 still dcs\x1b\\b"), "ab");
    }

    #[test]
    fn sanitize_removes_short_escapes() {
        assert_eq!(sanitize("a\x1bcb"), "ab");
        assert_eq!(sanitize("a\x1b7b\x1b8"), "ab");
        assert_eq!(sanitize("a\x1b(0lqk\x1b(Bb"), "alqkb");
        assert_eq!(sanitize("a\x1b#8b"), "ab");
        assert_eq!(sanitize("end\x1b"), "end");
        assert_eq!(sanitize("a\x1b\x1b[2Jb"), "ab");
        assert_eq!(sanitize("a\x1b日"), "a日");
        assert_eq!(sanitize("a\x1b\nb"), "a\nb");
    }

    #[test]
    fn sanitize_removes_c1_forms() {
        assert_eq!(sanitize("\u{9b}31mred"), "red");
        assert_eq!(sanitize("a\u{9d}0;title\u{7}b"), "ab");
        assert_eq!(sanitize("a\u{9d}0;title\u{9c}b"), "ab");
        assert_eq!(sanitize("a\u{90}dcs\u{9c}b"), "ab");
        assert_eq!(sanitize("a\u{98}x\u{9c}\u{9e}y\u{9c}\u{9f}z\u{9c}b"), "ab");
        assert_eq!(sanitize("a\u{85}\u{8e}\u{9c}\u{80}b"), "ab");
    }

    #[test]
    fn sanitize_aborted_sequences_leave_the_following_text() {
        assert_eq!(sanitize("\x1b]0;ti\x1b[31mred"), "red");
        assert_eq!(sanitize("\x1b[31\nnext"), "\nnext");
        assert_eq!(sanitize("\x1b[3日本"), "日本");
        assert_eq!(sanitize("\x1b]0;x\x18after"), "after");
    }

    #[test]
    fn sanitize_handles_c0_tab_cr_del() {
        assert_eq!(sanitize("a\tb"), "a    b");
        assert_eq!(sanitize("line\r\nnext\rover"), "line\nnextover");
        assert_eq!(sanitize("a\x07\x08\x00\x0b\x0c\x7fb"), "ab");
        assert_eq!(sanitize("keep\nnewlines\n"), "keep\nnewlines\n");
    }

    #[test]
    fn sanitize_removes_bidi_controls() {
        assert_eq!(sanitize("abc\u{202e}fed"), "abcfed");
        let all = "\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}\u{2066}\u{2067}\u{2068}\u{2069}\u{61c}\u{200e}\u{200f}";
        assert_eq!(sanitize(&format!("x{all}y")), "xy");
    }

    #[test]
    fn sanitize_keeps_ordinary_text() {
        for s in [
            "naïve 日本 👍🏽",
            FAMILY,
            FLAG,
            E_ACUTE,
            "❤\u{fe0f} ✌\u{fe0e}",
            "ﷺ مرحبا שלום",
            "zero\u{200b}width\u{200c}joiners\u{200d}",
            "₿ € ∑ ─│…•",
        ] {
            assert_eq!(sanitize(s), s);
        }
    }

    #[test]
    fn sanitize_output_has_no_controls_and_is_idempotent() {
        let hostile = [
            "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;QUJD\x07\u{9b}2J\u{9d}0;x\u{9c}",
            "\x1b\x1b\x1b[[[\x1b]]]\x1bP\x1b\\\x1b",
            "\u{9b}\u{9b}\u{9d}\u{9d}\u{90}\u{9c}",
            "\x1b[\u{9b}\x1b]\u{9d}text\x07\x1b\\",
            "\u{202e}\u{2066}\x7f\x01\x02\x1f",
        ];
        for s in hostile.iter().map(|s| s.to_string()).chain(corpus()) {
            let once = sanitize(&s);
            assert!(
                once.chars()
                    .all(|c| c == '\n' || !(c.is_control() || is_bidi_control(c))),
                "{once:?}"
            );
            assert_eq!(sanitize(&once), once, "{s:?}");
        }
    }

    #[test]
    fn sanitize_survives_long_chains_of_aborted_sequences() {
        let hostile = "\x1b]".repeat(100_000) + "\x07tail";
        assert_eq!(sanitize(&hostile), "tail");
        let hostile = "\x1b[".repeat(100_000) + "x";
        assert_eq!(sanitize(&hostile), "");
    }

    #[test]
    fn width_counts_columns() {
        assert_eq!(width(""), 0);
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本語"), 6);
        assert_eq!(width(FAMILY), 2);
        assert_eq!(FAMILY.graphemes(true).count(), 1);
        assert_eq!(width(FLAG), 2);
        assert_eq!(width("👍🏽"), 2);
        assert_eq!(width(E_ACUTE), 1);
        assert_eq!(width("naïve"), 5);
        assert_eq!(width("❤\u{fe0f}"), 2);
        assert_eq!(width("한국어"), 6);
    }

    #[test]
    fn fit_start_keeps_the_beginning() {
        assert_eq!(fit_start("hello world", 20), "hello world");
        assert_eq!(fit_start("hello world", 11), "hello world");
        assert_eq!(fit_start("hello world", 8), "hello w…");
        assert_eq!(fit_start("hello", 1), "…");
        assert_eq!(fit_start("hello", 0), "");
        assert_eq!(fit_start("", 0), "");
        assert_eq!(fit_start("日本語", 4), "日…");
        assert_eq!(fit_start("日本語", 5), "日本…");
        assert_eq!(
            fit_start(&format!("{FAMILY}{FAMILY}"), 3),
            format!("{FAMILY}…")
        );
        assert_eq!(
            fit_start(&format!("{E_ACUTE}{E_ACUTE}{E_ACUTE}"), 2),
            format!("{E_ACUTE}…")
        );
    }

    #[test]
    fn fit_end_keeps_the_end() {
        assert_eq!(fit_end("hello world", 11), "hello world");
        assert_eq!(fit_end("hello world", 6), "…world");
        assert_eq!(fit_end("hello", 1), "…");
        assert_eq!(fit_end("hello", 0), "");
        assert_eq!(fit_end("日本語", 4), "…語");
        assert_eq!(fit_end(&format!("a{FAMILY}{FLAG}"), 3), format!("…{FLAG}"));
    }

    #[test]
    fn fit_results_are_exact_and_whole_clusters() {
        for s in corpus().iter().map(|s| sanitize(s).replace('\n', " ")) {
            let all = graphemes_of(&s);
            for cols in 0..=12 {
                for (fitted, from_end) in [(fit_start(&s, cols), false), (fit_end(&s, cols), true)]
                {
                    assert!(width(&fitted) <= cols, "{s:?} {cols} {fitted:?}");
                    if width(&s) <= cols {
                        assert_eq!(fitted, s);
                        continue;
                    }
                    if cols == 0 {
                        assert_eq!(fitted, "");
                        continue;
                    }
                    assert!(width(&fitted) + 2 >= cols, "{s:?} {cols} {fitted:?}");
                    let kept = if from_end {
                        fitted.strip_prefix(ELLIPSIS)
                    } else {
                        fitted.strip_suffix(ELLIPSIS)
                    };
                    let kept = graphemes_of(kept.unwrap_or_else(|| panic!("{fitted:?}")));
                    if from_end {
                        assert_eq!(kept, all[all.len() - kept.len()..], "{s:?} {cols}");
                    } else {
                        assert_eq!(kept, all[..kept.len()], "{s:?} {cols}");
                    }
                }
            }
        }
    }

    #[test]
    fn live_line_shows_the_tail() {
        assert_eq!(live_line("", 20), "");
        assert_eq!(live_line("first line\nsecond line", 40), "second line");
        assert_eq!(live_line("first line\nsecond line\n", 40), "second line");
        assert_eq!(live_line("first\nsecond\n  \n\t\n", 40), "second");
        assert_eq!(live_line("  padded  ", 40), "padded");
        assert_eq!(
            live_line("so the answer must be forty two", 12),
            "…e forty two"
        );
        assert_eq!(live_line("a\nthe newest words", 9), "…st words");
        assert_eq!(live_line("\n\n   \n", 10), "");
        assert_eq!(live_line("x\x1b]0;pwned\x07 done\x1b[2J", 20), "x done");
        assert_eq!(live_line("real\n\x1b[2J\x1b[H", 20), "real");
        assert_eq!(live_line("考えています、答えは", 7), "…答えは");
        assert!(width(&live_line(&"思考".repeat(50), 9)) <= 9);
        assert_eq!(live_line("anything", 0), "");
    }

    #[test]
    fn wrap_words() {
        assert_eq!(wrap("hello world foo", 11), ["hello world", "foo"]);
        assert_eq!(wrap("hello world foo", 5), ["hello", "world", "foo"]);
        assert_eq!(wrap("a b c", 100), ["a b c"]);
        assert_eq!(wrap("two  spaces kept", 20), ["two  spaces kept"]);
        assert_eq!(wrap("trailing   ", 20), ["trailing"]);
        assert_eq!(wrap("break   here", 6), ["break", "here"]);
    }

    #[test]
    fn wrap_lines_and_empty_input() {
        assert!(wrap("", 10).is_empty());
        assert_eq!(wrap("\n", 10), [""]);
        assert_eq!(wrap("a\n", 10), ["a"]);
        assert_eq!(wrap("a\n\nb", 10), ["a", "", "b"]);
        assert_eq!(wrap("a\n\n\n", 10), ["a", "", ""]);
        assert_eq!(wrap("   ", 10), [""]);
    }

    #[test]
    fn wrap_keeps_indentation_on_the_first_row() {
        assert_eq!(
            wrap("    indented words here", 14),
            ["    indented", "words here"]
        );
        assert_eq!(wrap("  a\n    b", 10), ["  a", "    b"]);
        assert_eq!(wrap("          x", 4), ["   x"]);
        assert_eq!(wrap("  abcdefgh", 8), ["abcdefgh"]);
    }

    #[test]
    fn wrap_breaks_long_words() {
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("ab abcdefghij", 4), ["ab", "abcd", "efgh", "ij"]);
        let long = "x".repeat(200);
        let rows = wrap(&long, 30);
        assert_eq!(rows.len(), 7);
        assert_eq!(rows.concat(), long);
    }

    #[test]
    fn wrap_cjk_never_straddles() {
        assert_eq!(
            wrap("日本語のテキスト", 5),
            ["日本", "語の", "テキ", "スト"]
        );
        assert_eq!(wrap("日本語のテキスト", 6), ["日本語", "のテキ", "スト"]);
        assert_eq!(wrap("ab日本", 3), ["ab", "日", "本"]);
        assert_eq!(wrap("日本", 1), ["…", "…"]);
    }

    #[test]
    fn wrap_keeps_clusters_whole() {
        let text = FAMILY.repeat(3);
        assert_eq!(wrap(&text, 4), [FAMILY.repeat(2), FAMILY.to_string()]);
        assert_eq!(wrap(&text, 3), [FAMILY; 3]);
        let accents = E_ACUTE.repeat(5);
        assert_eq!(
            wrap(&accents, 2),
            [E_ACUTE.repeat(2), E_ACUTE.repeat(2), E_ACUTE.to_string()]
        );
        assert_eq!(wrap(&format!("{FLAG}{FLAG}"), 3), [FLAG; 2]);
    }

    #[test]
    fn wrap_zero_cols_is_one() {
        assert_eq!(wrap("ab c", 0), ["a", "b", "c"]);
    }

    #[test]
    fn wrap_rows_fit_and_lose_nothing() {
        for s in corpus().iter().map(|s| sanitize(s)) {
            let words: Vec<&str> = s
                .graphemes(true)
                .filter(|g| !is_break_space(g) && *g != "\n")
                .collect();
            for cols in 0..=12 {
                let rows = wrap(&s, cols);
                for row in &rows {
                    assert!(width(row) <= cols.max(1), "{s:?} {cols} {row:?}");
                    assert_eq!(row.trim_end(), row);
                }
                if cols >= 2 {
                    let joined = rows.concat();
                    let kept: Vec<&str> = joined
                        .graphemes(true)
                        .filter(|g| !is_break_space(g))
                        .collect();
                    assert_eq!(kept, words, "{s:?} {cols}");
                }
            }
        }
    }

    #[test]
    fn wrap_tagged_keeps_tags_across_rows() {
        let rows = wrap_tagged(&[(1, "plain "), (2, "bold"), (1, ", more")], 8);
        assert_eq!(
            rows,
            [
                vec![(1, "plain".to_string())],
                vec![(2, "bold".to_string()), (1, ",".to_string())],
                vec![(1, "more".to_string())],
            ]
        );
        let rows = wrap_tagged(&[(1, "ab"), (2, "cdef")], 3);
        assert_eq!(
            rows,
            [
                vec![(1, "ab".to_string()), (2, "c".to_string())],
                vec![(2, "def".to_string())],
            ]
        );
    }

    #[test]
    fn hard_wrap_breaks_anywhere() {
        assert_eq!(hard_wrap("", 4), [""]);
        assert_eq!(hard_wrap("    x = 1", 4), ["    ", "x = ", "1"]);
        assert_eq!(hard_wrap("a日本", 2), ["a", "日", "本"]);
        assert_eq!(hard_wrap("日", 1), ["…"]);
        assert_eq!(hard_wrap("abc", 0), ["a", "b", "c"]);
        for s in corpus() {
            let line = sanitize(&s).replace('\n', "");
            for cols in 1..=12 {
                let rows = hard_wrap(&line, cols);
                assert!(rows.iter().all(|r| width(r) <= cols), "{line:?} {cols}");
                if cols >= 2 {
                    assert_eq!(rows.concat(), line);
                }
            }
        }
    }
}
