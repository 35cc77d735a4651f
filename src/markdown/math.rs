//! LaTeX's own math delimiters, `\(…\)` and `\[…\]`, which models write as often as `$…$` and
//! `$$…$$`. Markdown reads `\(` and `\[` as escaped brackets (and so loses the backslashes
//! that made them math), so before parsing they become the dollar forms pulldown-cmark's math
//! option knows. Code (fenced blocks and inline spans) is left alone, and a delimiter pairs only
//! with a closing one in the same paragraph (before a blank line): an unpaired `\(` stays what
//! it was.

use std::borrow::Cow;

/// `text` with every paired `\(…\)` as `$…$` and `\[…\]` as `$$…$$`, outside code.
pub fn dollar_delimiters(text: &str) -> Cow<'_, str> {
    if !text.contains("\\(") && !text.contains("\\[") {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    let mut fence: Option<(u8, usize)> = None;
    let mut line_start = true;
    while i < bytes.len() {
        if line_start {
            line_start = false;
            if let Some((ch, len)) = fence_at(bytes, i) {
                match fence {
                    None => fence = Some((ch, len)),
                    Some((open, open_len)) if open == ch && len >= open_len => fence = None,
                    Some(_) => {}
                }
                i = next_line(bytes, i);
                line_start = true;
                continue;
            }
        }
        if fence.is_some() {
            i = next_line(bytes, i);
            line_start = true;
            continue;
        }
        match bytes[i] {
            b'\n' => {
                line_start = true;
                i += 1;
            }
            b'`' => i = skip_code_span(bytes, i),
            b'\\' if i + 1 < bytes.len() => {
                let close = match bytes[i + 1] {
                    b'(' => Some(("\\)", "$")),
                    b'[' => Some(("\\]", "$$")),
                    _ => None,
                };
                let Some((closing, dollars)) = close else {
                    i += 2;
                    continue;
                };
                let body_start = i + 2;
                match find_close(text, body_start, closing) {
                    Some(end) => {
                        let body = &text[body_start..end];
                        out.push_str(&text[copied..i]);
                        out.push_str(dollars);
                        out.push_str(if dollars == "$" { body.trim() } else { body });
                        out.push_str(dollars);
                        i = end + closing.len();
                        copied = i;
                    }
                    None => i += 2,
                }
            }
            _ => i += 1,
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// A code fence at `i` (the start of a line: up to three spaces, then three or more backticks
/// or tildes): its character and length.
fn fence_at(bytes: &[u8], i: usize) -> Option<(u8, usize)> {
    let mut j = i;
    while j < bytes.len() && j - i < 3 && bytes[j] == b' ' {
        j += 1;
    }
    let ch = *bytes.get(j)?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = bytes[j..].iter().take_while(|&&b| b == ch).count();
    (len >= 3).then_some((ch, len))
}

fn next_line(bytes: &[u8], i: usize) -> usize {
    bytes[i..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| i + p + 1)
}

/// Past the inline code span that starts at `i` (a run of backticks closed by a run of the same
/// length), or past the opening run when it is never closed.
fn skip_code_span(bytes: &[u8], i: usize) -> usize {
    let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
    let mut j = i + run;
    while j < bytes.len() {
        if bytes[j] == b'`' {
            let len = bytes[j..].iter().take_while(|&&b| b == b'`').count();
            if len == run {
                return j + len;
            }
            j += len;
        } else {
            j += 1;
        }
    }
    i + run
}

/// Where `closing` ends the formula that starts at `from`, if it does before a blank line (a
/// backslash-escaped backslash does not count as the start of one).
fn find_close(text: &str, from: usize, closing: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\n'
                if text[i + 1..]
                    .trim_start_matches([' ', '\t'])
                    .starts_with('\n') =>
            {
                return None
            }
            b'\\' if text[i..].starts_with(closing) => return Some(i),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latex_delimiters_become_dollars() {
        assert_eq!(dollar_delimiters(r"so \( x^2 \) holds"), "so $x^2$ holds");
        assert_eq!(
            dollar_delimiters("\\[ \\int_0^1 x^2\\,dx \\]"),
            "$$ \\int_0^1 x^2\\,dx $$"
        );
        assert_eq!(
            dollar_delimiters("a \\[\nx = 1\n\\] b"),
            "a $$\nx = 1\n$$ b"
        );
    }

    #[test]
    fn code_unpaired_and_other_escapes_are_left_alone() {
        for text in [
            "no math here",
            r"an escaped \( bracket alone",
            "`\\(x\\)` in code",
            "```\n\\(x\\)\n```",
            "~~~tex\n\\[x\\]\n~~~",
            r"\\ and \* stay",
            "\\(a\n\nb\\)",
        ] {
            assert_eq!(dollar_delimiters(text), text, "{text:?}");
        }
        assert_eq!(
            dollar_delimiters("```\ncode\n```\nthen \\(y\\)"),
            "```\ncode\n```\nthen $y$"
        );
        assert_eq!(dollar_delimiters("``a`b`` \\(z\\)"), "``a`b`` $z$");
    }
}
