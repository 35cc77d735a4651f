//! How a thinking block opens and closes by itself, and the reader's preference for it.
//!
//! The rule of ownership: automatic behaviour only ever applies to blocks the reader has not
//! touched. Once the reader opens or closes a block, that block is theirs for good.

/// The reader's choice, in the settings menu, of what new thinking blocks do by themselves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ThinkingPref {
    /// Open while the model thinks, collapse when the answer starts (the default).
    #[default]
    OpenWhileThinking,
    /// Stay open.
    KeepOpen,
    /// Stay collapsed: the header still shows "Thinking…" and a one-line peek.
    KeepCollapsed,
}

crate::domain::wire::wire_names!(ThinkingPref {
    OpenWhileThinking = "open_while_thinking",
    KeepOpen = "keep_open",
    KeepCollapsed = "keep_collapsed",
});

impl ThinkingPref {
    pub const ALL: [ThinkingPref; 3] = [
        ThinkingPref::OpenWhileThinking,
        ThinkingPref::KeepOpen,
        ThinkingPref::KeepCollapsed,
    ];

    /// The words of the settings menu.
    pub fn label(self, c: &crate::i18n::Catalogue) -> &'static str {
        match self {
            ThinkingPref::OpenWhileThinking => c.pref_auto,
            ThinkingPref::KeepOpen => c.pref_open,
            ThinkingPref::KeepCollapsed => c.pref_collapsed,
        }
    }

    /// A stable value for form controls and storage.
    pub fn key(self) -> &'static str {
        crate::domain::wire::WireName::wire_name(self)
    }

    pub fn from_key(key: &str) -> Option<Self> {
        crate::domain::wire::WireName::from_wire_name(key)
    }
}

/// Whether a block the reader has not touched should be open now.
///
/// `live` is true for a block of a turn that is streaming on this page (a restored block is
/// not live: it starts collapsed).
pub fn auto_open(
    pref: ThinkingPref,
    live: bool,
    answer_followed: bool,
    turn_running: bool,
) -> bool {
    match pref {
        ThinkingPref::KeepOpen => true,
        ThinkingPref::KeepCollapsed => false,
        ThinkingPref::OpenWhileThinking => live && turn_running && !answer_followed,
    }
}

/// Whether an automatic change may be applied now: never to an owned block, and a collapse
/// never happens under a reader whose keyboard focus is inside the block.
pub fn may_apply(owned: bool, currently_open: bool, wanted_open: bool, has_focus: bool) -> bool {
    if owned || currently_open == wanted_open {
        return false;
    }
    !(currently_open && !wanted_open && has_focus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_opens_while_thinking_and_collapses_on_the_answer() {
        let p = ThinkingPref::OpenWhileThinking;
        assert!(auto_open(p, true, false, true));
        assert!(!auto_open(p, true, true, true));
        assert!(
            !auto_open(p, true, false, false),
            "the turn ended without answer"
        );
        assert!(
            !auto_open(p, false, false, false),
            "restored blocks start collapsed"
        );
    }

    #[test]
    fn the_other_preferences_are_constant() {
        for (live, followed, running) in [
            (true, false, true),
            (true, true, false),
            (false, true, false),
        ] {
            assert!(auto_open(ThinkingPref::KeepOpen, live, followed, running));
            assert!(!auto_open(
                ThinkingPref::KeepCollapsed,
                live,
                followed,
                running
            ));
        }
    }

    #[test]
    fn owned_or_focused_blocks_are_left_alone() {
        assert!(may_apply(false, true, false, false));
        assert!(!may_apply(true, true, false, false), "owned");
        assert!(
            !may_apply(false, true, false, true),
            "focus inside: no collapse"
        );
        assert!(
            may_apply(false, false, true, true),
            "opening under focus is harmless"
        );
        assert!(!may_apply(false, true, true, false), "nothing to change");
    }

    #[test]
    fn keys_round_trip() {
        for p in ThinkingPref::ALL {
            assert_eq!(ThinkingPref::from_key(p.key()), Some(p));
        }
        assert_eq!(ThinkingPref::from_key("bogus"), None);
    }
}
