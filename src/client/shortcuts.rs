//! The page's keyboard shortcuts, decided from a key press alone (no DOM), so every binding is
//! tested natively. `⌘` stands for Ctrl on every system but Apple's, where it is Command.

/// What a shortcut does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shortcut {
    /// `?` outside a text field: the sheet of shortcuts.
    Sheet,
    /// `⌘⇧O`: a new chat.
    NewChat,
    /// `⌘K`: the search field.
    Search,
    /// `⇧Esc`: the message field.
    FocusComposer,
    /// `⌘⇧E`: opens or closes the latest thinking block.
    ToggleThinking,
    /// `Esc` while an answer is written (nothing else to close): stops it.
    Stop,
    /// `⌘⇧Enter`: a new version of the last answer.
    Regenerate,
    /// `⌘⇧M`: compare models (the next question to several at once), or stop comparing.
    Compare,
}

impl Shortcut {
    /// Every shortcut, in the order the sheet lists them.
    pub const ALL: [Shortcut; 8] = [
        Shortcut::Sheet,
        Shortcut::NewChat,
        Shortcut::Search,
        Shortcut::FocusComposer,
        Shortcut::ToggleThinking,
        Shortcut::Stop,
        Shortcut::Regenerate,
        Shortcut::Compare,
    ];

    /// Its keys as the sheet shows them, `command` being the system's name for `⌘`.
    pub fn keys(self, command: &'static str) -> Vec<&'static str> {
        match self {
            Shortcut::Sheet => vec!["?"],
            Shortcut::NewChat => vec![command, "Shift", "O"],
            Shortcut::Search => vec![command, "K"],
            Shortcut::FocusComposer => vec!["Shift", "Esc"],
            Shortcut::ToggleThinking => vec![command, "Shift", "E"],
            Shortcut::Stop => vec!["Esc"],
            Shortcut::Regenerate => vec![command, "Shift", "Enter"],
            Shortcut::Compare => vec![command, "Shift", "M"],
        }
    }
}

/// One key press, as a `keydown` event says it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Press<'a> {
    /// `KeyboardEvent.key`.
    pub key: &'a str,
    pub ctrl: bool,
    pub meta: bool,
    pub shift: bool,
    pub alt: bool,
    /// The focus is in a field that takes text (where `?` is a character, not a shortcut).
    pub typing: bool,
    /// An input method is composing (nothing is a shortcut then).
    pub composing: bool,
}

/// The shortcut `press` is, if any. `Esc` alone is [`Shortcut::Stop`]; the page gives it to a
/// menu, the drawer or an edit first.
pub fn shortcut(press: Press<'_>) -> Option<Shortcut> {
    if press.composing || press.alt {
        return None;
    }
    let command = press.ctrl || press.meta;
    let letter = |l: &str| press.key.eq_ignore_ascii_case(l);
    match (command, press.shift) {
        (false, _) if press.key == "?" && !press.typing => Some(Shortcut::Sheet),
        (false, true) if press.key == "Escape" => Some(Shortcut::FocusComposer),
        (false, false) if press.key == "Escape" => Some(Shortcut::Stop),
        (true, true) if letter("o") => Some(Shortcut::NewChat),
        (true, false) if letter("k") => Some(Shortcut::Search),
        (true, true) if letter("e") => Some(Shortcut::ToggleThinking),
        (true, true) if press.key == "Enter" => Some(Shortcut::Regenerate),
        (true, true) if letter("m") => Some(Shortcut::Compare),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(key: &str) -> Press<'_> {
        Press {
            key,
            ..Press::default()
        }
    }

    #[test]
    fn each_binding_is_its_shortcut_with_ctrl_or_command() {
        let cmd_shift = |key| Press {
            ctrl: true,
            shift: true,
            ..press(key)
        };
        assert_eq!(shortcut(press("?")), Some(Shortcut::Sheet));
        assert_eq!(shortcut(cmd_shift("O")), Some(Shortcut::NewChat));
        assert_eq!(
            shortcut(Press {
                meta: true,
                shift: true,
                ..press("o")
            }),
            Some(Shortcut::NewChat)
        );
        assert_eq!(
            shortcut(Press {
                meta: true,
                ..press("k")
            }),
            Some(Shortcut::Search)
        );
        assert_eq!(
            shortcut(Press {
                shift: true,
                ..press("Escape")
            }),
            Some(Shortcut::FocusComposer)
        );
        assert_eq!(shortcut(cmd_shift("E")), Some(Shortcut::ToggleThinking));
        assert_eq!(shortcut(press("Escape")), Some(Shortcut::Stop));
        assert_eq!(shortcut(cmd_shift("Enter")), Some(Shortcut::Regenerate));
        assert_eq!(shortcut(cmd_shift("M")), Some(Shortcut::Compare));
    }

    #[test]
    fn typing_composing_and_other_keys_are_no_shortcut() {
        let typing_question = Press {
            typing: true,
            ..press("?")
        };
        assert_eq!(
            shortcut(typing_question),
            None,
            "? is a character in a field"
        );
        assert_eq!(
            shortcut(Press {
                composing: true,
                ctrl: true,
                ..press("k")
            }),
            None
        );
        for key in ["a", "Enter", "O", "k", "/"] {
            assert_eq!(shortcut(press(key)), None, "{key}");
        }
        assert_eq!(
            shortcut(Press {
                ctrl: true,
                ..press("o")
            }),
            None,
            "⌘O alone is the browser's"
        );
        assert_eq!(
            shortcut(Press {
                ctrl: true,
                alt: true,
                shift: true,
                ..press("o")
            }),
            None
        );
    }

    #[test]
    fn the_sheet_lists_every_shortcut_with_the_systems_command_key() {
        assert_eq!(Shortcut::NewChat.keys("⌘"), ["⌘", "Shift", "O"]);
        assert_eq!(Shortcut::Search.keys("Ctrl"), ["Ctrl", "K"]);
        let typed: Vec<Option<Shortcut>> = Shortcut::ALL
            .iter()
            .map(|s| {
                let keys = s.keys("Ctrl");
                let key = match *keys.last().unwrap_or(&"") {
                    "Esc" => "Escape",
                    other => other,
                };
                shortcut(Press {
                    key,
                    ctrl: keys.contains(&"Ctrl"),
                    shift: keys.contains(&"Shift"),
                    ..Press::default()
                })
            })
            .collect();
        let all: Vec<Option<Shortcut>> = Shortcut::ALL.iter().copied().map(Some).collect();
        assert_eq!(typed, all, "what the sheet says is what the keys do");
    }
}
