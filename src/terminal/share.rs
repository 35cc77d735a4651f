//! Shared links from `ponder chat`: `/share [thinking] [files] [instructions]` makes a link to the chat shown
//! (as the page's Share menu does) and prints it once; `/shares` lists the chat's links,
//! numbered; `/unshare N` revokes the Nth of that list. What a line asks and how a list reads
//! are decided here without I/O.

use crate::domain::share::{iso_day, ShareChoice, ShareLink};
use crate::i18n::{fill, Locale};

/// The command that makes a link.
pub const SHARE: &str = "/share";
/// The command that lists the chat's links.
pub const SHARES: &str = "/shares";
/// The command that revokes one.
pub const UNSHARE: &str = "/unshare";

/// What a line typed in `ponder chat` asks of the chat's links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `/share`, with `thinking`, `files` and `instructions` to include them.
    Make(ShareChoice),
    /// `/shares`.
    List,
    /// `/unshare N` (1 is the first of the last list).
    Revoke(usize),
    /// A `/share…` line that says something else: the usage is shown.
    Usage,
}

/// The command a typed line is, if it is one.
pub fn command(line: &str) -> Option<Command> {
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let rest: Vec<&str> = words.collect();
    match first {
        SHARES if rest.is_empty() => Some(Command::List),
        UNSHARE => match rest.as_slice() {
            [n] => n
                .parse()
                .ok()
                .filter(|n| *n > 0)
                .map_or(Some(Command::Usage), |n| Some(Command::Revoke(n))),
            _ => Some(Command::Usage),
        },
        SHARE => {
            let mut choice = ShareChoice::default();
            for word in rest {
                match word.trim_start_matches('+').to_ascii_lowercase().as_str() {
                    "thinking" => choice.thinking = true,
                    "files" => choice.files = true,
                    "instructions" => choice.instructions = true,
                    _ => return Some(Command::Usage),
                }
            }
            Some(Command::Make(choice))
        }
        SHARES => Some(Command::Usage),
        _ => None,
    }
}

/// The usage of the three commands.
pub const USAGE: &str = "/share [thinking] [files] [instructions] · /shares · /unshare N";

/// A link as one numbered line of `/shares`.
pub fn listed(n: usize, link: &ShareLink, l: Locale) -> String {
    let t = l.catalogue();
    let mut about = vec![
        fill(t.link_made, &[("date", &iso_day(link.created_at))]),
        if link.choice.thinking {
            t.with_thinking
        } else {
            t.without_thinking
        }
        .to_string(),
    ];
    if link.choice.files {
        about.push(t.with_files.to_string());
    }
    format!("{n}. {}", about.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commands_read_their_words() {
        assert_eq!(
            command("/share"),
            Some(Command::Make(ShareChoice::default()))
        );
        assert_eq!(
            command("/share thinking files instructions"),
            Some(Command::Make(ShareChoice {
                thinking: true,
                files: true,
                instructions: true,
            }))
        );
        assert_eq!(
            command(" /share +Thinking "),
            Some(Command::Make(ShareChoice {
                thinking: true,
                ..ShareChoice::default()
            }))
        );
        assert_eq!(command("/share everything"), Some(Command::Usage));
        assert_eq!(command("/shares"), Some(Command::List));
        assert_eq!(command("/shares 2"), Some(Command::Usage));
        assert_eq!(command("/unshare 2"), Some(Command::Revoke(2)));
        assert_eq!(command("/unshare 0"), Some(Command::Usage));
        assert_eq!(command("/unshare"), Some(Command::Usage));
        assert_eq!(command("/sharelock"), None);
        assert_eq!(command("share this"), None);
    }

    #[test]
    fn a_listed_link_says_when_and_what() {
        let link = ShareLink {
            id: "x".into(),
            conversation_id: "c".into(),
            title: "t".into(),
            choice: ShareChoice {
                thinking: true,
                files: true,
                instructions: false,
            },
            created_at: 1_764_892_800_000,
            updated_at: 0,
            messages: 2,
            owner: None,
            url: None,
        };
        assert_eq!(
            listed(2, &link, Locale::En),
            "2. Made 2025-12-05 · with thinking · with files"
        );
    }
}
