//! Finding a search's words in the text the page shows, to highlight them where they are: the
//! positions are in UTF-16 code units, as the DOM's ranges count them.

/// Where `word` occurs in `text`, ignoring case, as `(start, end)` in UTF-16 code units; at most
/// `limit` of them, none overlapping. A character whose lower case has another length (rare
/// ligatures, `İ`) is compared as it is, so the positions always fit the text.
pub fn occurrences(text: &str, word: &str, limit: usize) -> Vec<(u32, u32)> {
    let needle = folded(word);
    if needle.is_empty() {
        return Vec::new();
    }
    let hay = folded(text);
    let mut found = Vec::new();
    let mut at = 0;
    while at + needle.len() <= hay.len() && found.len() < limit {
        if hay[at..at + needle.len()] == needle[..] {
            found.push((at as u32, (at + needle.len()) as u32));
            at += needle.len();
        } else {
            at += 1;
        }
    }
    found
}

fn folded(text: &str) -> Vec<u16> {
    let mut out = Vec::with_capacity(text.len());
    let mut buf = [0u16; 2];
    for c in text.chars() {
        let mut lower = c.to_lowercase();
        let one = match (lower.next(), lower.next()) {
            (Some(l), None) if l.len_utf16() == c.len_utf16() => l,
            _ => c,
        };
        out.extend_from_slice(one.encode_utf16(&mut buf));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::occurrences;

    #[test]
    fn words_are_found_without_case_in_utf16_positions() {
        assert_eq!(
            occurrences("Zebra and zebra", "zebra", 10),
            [(0, 5), (10, 15)]
        );
        assert_eq!(
            occurrences("🦓 ZEBRA", "zebra", 10),
            [(3, 8)],
            "the emoji counts two units"
        );
        assert_eq!(
            occurrences("aaaa", "aa", 10),
            [(0, 2), (2, 4)],
            "no overlap"
        );
        assert_eq!(occurrences("aaaa", "aa", 1), [(0, 2)], "at most the limit");
        assert_eq!(
            occurrences("İstanbul", "i̇stanbul", 10),
            Vec::<(u32, u32)>::new()
        );
        assert_eq!(occurrences("anything", "", 10), Vec::<(u32, u32)>::new());
        assert_eq!(occurrences("[1] brackets", "[1]", 10), [(0, 3)]);
    }
}
