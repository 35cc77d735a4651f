//! What a catalogue holds: every word the page, its accessible names and the terminal client
//! show, as one struct per locale. A field missing from a locale does not compile, so every key
//! exists in every catalogue by construction.
//!
//! Templates name their values in braces (`{n}`, `{title}`); [`super::fill`] puts them in.
//! Counts are [`Plural`]s, chosen by the locale's CLDR rule; numbers inside them are already
//! formatted for the locale.

/// The forms of a counted phrase, one per CLDR plural category. A locale fills the categories
/// its rule uses (English: one, other; Arabic: all six); the others repeat `other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Plural {
    pub zero: &'static str,
    pub one: &'static str,
    pub two: &'static str,
    pub few: &'static str,
    pub many: &'static str,
    pub other: &'static str,
}

impl Plural {
    /// A phrase with one form (Japanese).
    pub const fn same(other: &'static str) -> Plural {
        Plural {
            zero: other,
            one: other,
            two: other,
            few: other,
            many: other,
            other,
        }
    }

    /// A phrase with a singular and a plural (English).
    pub const fn two(one: &'static str, other: &'static str) -> Plural {
        Plural {
            one,
            ..Plural::same(other)
        }
    }

    /// Portuguese: singular, plural, and the "many" of round millions ("1.000.000 de palavras").
    pub const fn three(one: &'static str, many: &'static str, other: &'static str) -> Plural {
        Plural {
            one,
            many,
            ..Plural::same(other)
        }
    }

    /// Arabic: all six forms.
    pub const fn six(
        zero: &'static str,
        one: &'static str,
        two: &'static str,
        few: &'static str,
        many: &'static str,
        other: &'static str,
    ) -> Plural {
        Plural {
            zero,
            one,
            two,
            few,
            many,
            other,
        }
    }
}

/// Every user-visible string of Ponder, in one language.
#[derive(Debug, serde::Serialize)]
pub struct Catalogue {
    // ---- the thinking block ----
    /// The live header: `{time}` is [`Catalogue::seconds_short`].
    pub thinking_live: &'static str,
    /// The bare word while thinking (announcements, the restored state, the peek's lead).
    pub thinking: &'static str,
    /// A finished block under one second.
    pub thought: &'static str,
    /// A finished block: `{time}` is a duration.
    pub thought_for: &'static str,
    /// A block the reader or a failure stopped, under one second.
    pub thinking_stopped: &'static str,
    /// A block stopped: `{time}` is a duration.
    pub thinking_stopped_after: &'static str,
    /// Put after the time of a block cut short by "Answer now": `{label}` is the header so far.
    pub cut_short: &'static str,
    /// Between the time and the word count.
    pub separator: &'static str,
    /// The word count of a block.
    pub words: Plural,
    /// Seconds with one decimal ("4.2s"), or whole seconds for the live counter ("12s").
    pub seconds_short: &'static str,
    /// Minutes and seconds ("1m 12s").
    pub minutes_seconds_short: &'static str,
    /// The polite announcement when a block ends under a second.
    pub announce_under_a_second: &'static str,
    /// The polite announcement when a block ends: "Thought for 4 seconds".
    pub announce_thought_for: Plural,
    pub announce_generating: &'static str,
    pub announce_done: &'static str,
    pub announce_stopped: &'static str,
    /// `{message}` is the error, already in this language.
    pub announce_error: &'static str,
    /// A tool started: `{tool}` is its label.
    pub announce_tool_running: &'static str,
    pub announce_tool_done: &'static str,
    pub announce_tool_failed: &'static str,
    /// Where the reasoning came from, when it is not the raw scratchpad.
    pub origin_summary: &'static str,
    pub origin_redacted: &'static str,
    /// The note on a block whose reasoning the provider did not show (not a safety redaction).
    pub origin_hidden: &'static str,
    /// The accessible name of a block's text region.
    pub reasoning_text: &'static str,
    /// The group of a turn's blocks.
    pub reasoning: &'static str,
    pub loading_reasoning: &'static str,
    pub summary_of_reasoning: &'static str,
    /// The three ways a block may behave, in settings.
    pub pref_auto: &'static str,
    pub pref_open: &'static str,
    pub pref_collapsed: &'static str,

    // ---- tools and sources ----
    pub tool_web_search: &'static str,
    pub tool_google_search: &'static str,
    pub tool_code_execution: &'static str,
    pub tool_web_page: &'static str,
    pub tool_file_search: &'static str,
    pub tool_running: &'static str,
    pub tool_done: &'static str,
    pub tool_failed: &'static str,
    /// The accessible name of a tool card: `{tool}` is its label.
    pub tool_card: &'static str,
    /// A run of tool steps folded into one line.
    pub tool_steps: Plural,
    pub tool_output: &'static str,
    pub sources: &'static str,

    // ---- the message bubble ----
    /// The chip every assistant answer carries.
    pub ai_disclaimer: &'static str,
    pub disclaimer_title: &'static str,
    pub disclaimer_body: &'static str,
    pub disclaimer_advice: &'static str,
    pub got_it: &'static str,
    pub message_from_you: &'static str,
    pub message_from_you_edited: &'static str,
    pub message_from_assistant: &'static str,
    /// The versions of a message the user edited.
    pub earlier_versions: Plural,
    pub copy: &'static str,
    pub copied: &'static str,
    pub copy_message: &'static str,
    pub edit_message: &'static str,
    pub branch_from_here: &'static str,
    /// The composer's button that picks files to send.
    pub attach_files: &'static str,
    /// The tray of files going with the message being written.
    pub attached_files: &'static str,
    pub drop_to_attach: &'static str,
    /// `{name}`: the file taken out of the tray.
    pub remove_file: &'static str,
    /// `{percent}`: how much of a file has been uploaded.
    pub uploading: &'static str,
    /// A file whose upload got no answer.
    pub upload_failed: &'static str,
    /// `{n}`: the most files one message carries.
    pub too_many_files: &'static str,
    /// The kinds of attached files, on their chips.
    pub kind_image: &'static str,
    pub kind_pdf: &'static str,
    pub kind_text: &'static str,
    /// A PDF's page count, on its chip.
    pub pdf_pages: Plural,
    /// How a file went to the model, on its chip under the sent message.
    pub sent_as_image: &'static str,
    pub sent_as_document: &'static str,
    pub sent_as_text: &'static str,
    pub sent_as_pages: &'static str,
    /// The tray's choice of how a PDF goes: `{name}` the file.
    pub send_file_as: &'static str,
    pub as_model_reads: &'static str,
    pub as_document: &'static str,
    pub as_text: &'static str,
    pub as_pages: &'static str,
    pub share_menu: &'static str,
    pub share_title: &'static str,
    pub share_explain: &'static str,
    pub include_files: &'static str,
    pub instructions_title: &'static str,
    pub instructions_admin: &'static str,
    pub instructions_personal: &'static str,
    pub instructions_workspace: &'static str,
    pub instructions_chat: &'static str,
    pub instructions_sent: &'static str,
    pub instructions_none: &'static str,
    pub instructions_saved: &'static str,
    pub include_instructions: &'static str,
    pub shortcuts_title: &'static str,
    pub shortcut_sheet: &'static str,
    pub shortcut_focus: &'static str,
    pub shortcut_thinking: &'static str,
    pub create_link: &'static str,
    pub copy_link: &'static str,
    pub link_shown_once: &'static str,
    pub links_of_chat: &'static str,
    pub no_links: &'static str,
    pub link_made: &'static str,
    pub with_thinking: &'static str,
    pub without_thinking: &'static str,
    pub with_files: &'static str,
    pub update_link: &'static str,
    pub update_link_label: &'static str,
    pub revoke_link: &'static str,
    pub link_revoked: &'static str,
    pub all_links: &'static str,
    pub link_by: &'static str,
    /// `{name}`: an image shown large.
    pub open_image: &'static str,
    pub download_file: &'static str,
    pub stopped: &'static str,
    pub retry: &'static str,
    pub send_without_setting: &'static str,
    /// The button that sends a turn again without the reasoning state of earlier answers.
    pub send_without_replay: &'static str,
    pub model_of_answer: &'static str,
    /// The answer's usage line (`{n}` a count): what went in, of it what the files took, what
    /// came out, of it what was thinking.
    pub usage_of_answer: &'static str,
    pub tokens_in: &'static str,
    pub from_files: &'static str,
    pub tokens_out: &'static str,
    pub of_thinking: &'static str,
    pub answer_versions: &'static str,
    pub previous_version: &'static str,
    pub next_version: &'static str,
    /// `{n}` of `{total}`, the version shown.
    pub version_of: &'static str,
    pub stop_answer: &'static str,
    pub copy_answer: &'static str,
    pub regenerate_answer: &'static str,
    pub answer_now: &'static str,
    pub think_more: &'static str,
    pub formula_not_typeset: &'static str,
    pub copy_code: &'static str,

    // ---- the composer ----
    pub editing_notice: &'static str,
    /// The empty chat's switch that makes it temporary.
    pub temporary_chat: &'static str,
    /// The composer's note while the chat is temporary.
    pub temporary_chat_note: &'static str,
    pub cancel_edit: &'static str,
    pub message: &'static str,
    pub message_placeholder: &'static str,
    pub send: &'static str,
    pub sending: &'static str,
    pub stop_generating: &'static str,
    pub composer_hint: &'static str,

    // ---- the conversation ----
    pub conversation: &'static str,
    pub jump_to_latest: &'static str,
    pub show_earlier_messages: Plural,
    pub empty_chat: &'static str,
    /// What a chat's address shows until the chat is here.
    pub opening_chat: &'static str,
    /// The skip link, the keyboard's first stop.
    pub skip_to_message: &'static str,
    /// The model an empty chat will ask (`{model}`).
    pub empty_chat_model: &'static str,
    /// What an empty chat offers to start from: three prompts that show reasoning well.
    pub example_prompt_1: &'static str,
    pub example_prompt_2: &'static str,
    pub example_prompt_3: &'static str,
    /// The label of the example prompts' group.
    pub try_asking: &'static str,
    pub connection_lost: &'static str,

    // ---- the sidebar ----
    pub conversations: &'static str,
    pub new_chat: &'static str,
    /// A branched chat's title: `{title}` is the title it was branched from.
    pub title_branch: &'static str,
    /// The copy a save conflict keeps: `{title}` is the chat's title.
    pub title_copy: &'static str,
    /// The title of an imported chat that had none.
    pub title_imported: &'static str,
    pub chats_in_browser: &'static str,
    pub browser_holds_chats: Plural,
    pub import_them: &'static str,
    pub not_now: &'static str,
    pub workspace: &'static str,
    pub new_workspace: &'static str,
    pub rename_workspace: &'static str,
    pub new_workspace_name: &'static str,
    pub workspace_name: &'static str,
    pub create: &'static str,
    pub save: &'static str,
    pub cancel: &'static str,
    pub search_chats: &'static str,
    pub include_thinking: &'static str,
    pub search_results: &'static str,
    pub nothing_found: &'static str,
    /// The menu of one chat: `{title}`.
    pub options_for: &'static str,
    pub rename: &'static str,
    pub delete: &'static str,
    pub new_title: &'static str,
    pub confirm_delete: &'static str,
    pub delete_this_chat: &'static str,
    pub yes_delete: &'static str,
    pub keep: &'static str,
    /// The list's group of pinned chats.
    pub pinned: &'static str,
    pub pin: &'static str,
    pub unpin: &'static str,
    pub tags: &'static str,
    pub tags_field: &'static str,
    /// The row menu's item; `{workspace}`.
    pub move_to: &'static str,
    pub filter_by_tag: &'static str,
    pub all_chats: &'static str,
    /// Settings: titles by the model.
    pub titles_setting: &'static str,
    pub today: &'static str,
    pub yesterday: &'static str,
    pub previous_7_days: &'static str,
    pub older: &'static str,
    pub open_sidebar: &'static str,
    pub close: &'static str,

    // ---- menus ----
    pub settings: &'static str,
    pub thinking_blocks: &'static str,
    pub new_chats_use: &'static str,
    pub model_used_last: &'static str,
    pub default_model: &'static str,
    pub language: &'static str,
    pub account: &'static str,
    pub signed_in_as: &'static str,
    pub tokens_and_users: &'static str,
    pub tokens: &'static str,
    pub sign_out: &'static str,
    pub sign_out_everywhere: &'static str,
    pub all_thinking_blocks: &'static str,
    pub expand_all: &'static str,
    pub collapse_all: &'static str,
    pub export: &'static str,
    pub download_markdown: &'static str,
    pub download_json: &'static str,
    pub import_json: &'static str,

    // ---- the model picker ----
    /// The sampling parameters' heading in the model picker.
    pub params: &'static str,
    pub param_temperature: &'static str,
    pub param_top_p: &'static str,
    pub param_max_tokens: &'static str,
    /// A parameter's placeholder: nothing is sent.
    pub param_default: &'static str,
    /// `{low}`, `{high}`.
    pub param_range: &'static str,
    pub params_reset: &'static str,
    pub presets: &'static str,
    pub preset_save: &'static str,
    pub preset_name: &'static str,
    pub preset_shared: &'static str,
    pub preset_shared_tag: &'static str,
    /// `{name}`.
    pub preset_delete: &'static str,
    pub preset_instructions: &'static str,
    pub preset_saved: &'static str,
    /// `{model}`.
    pub model_named: &'static str,
    pub search_models: &'static str,
    pub search_models_placeholder: &'static str,
    pub models: &'static str,
    pub no_model_matches: &'static str,
    /// `{shown}` of `{total}`.
    pub showing_models: &'static str,
    pub thinking_on: &'static str,
    pub thinking_off: &'static str,
    pub effort: &'static str,
    pub effort_default: &'static str,
    pub effort_minimal: &'static str,
    pub effort_low: &'static str,
    pub effort_medium: &'static str,
    pub effort_high: &'static str,
    pub effort_xhigh: &'static str,
    pub effort_max: &'static str,

    // ---- notices ----
    pub notices: &'static str,
    pub undo: &'static str,
    pub dismiss_notice: &'static str,
    /// The notices the page raises; `{detail}` is why, from the server or the browser.
    pub answer_now_failed: &'static str,
    pub workspaces_not_loaded: &'static str,
    pub workspace_settings_not_loaded: &'static str,
    pub workspace_not_made: &'static str,
    pub workspace_not_renamed: &'static str,
    pub some_chats_not_imported: &'static str,
    pub chats_moved_to_server: Plural,
    pub server_copy_not_exported: &'static str,
    pub not_an_export: &'static str,
    /// A part of the page's code (a chunk fetched on first use) could not be fetched.
    pub part_not_loaded: &'static str,
    /// `{title}`.
    pub imported: &'static str,
    pub imported_before: &'static str,
    pub import_failed: &'static str,
    pub chat_gone_from_server: &'static str,
    pub chat_not_loaded: &'static str,
    pub chats_not_listed: &'static str,
    pub storage_unreadable: &'static str,
    pub setting_kept_locally: &'static str,
    pub earlier_not_loaded: &'static str,
    pub chat_no_longer_saved: &'static str,
    pub chat_not_renamed: &'static str,
    pub deleted_chat: &'static str,
    pub chat_not_deleted: &'static str,
    pub chat_not_restored: &'static str,
    pub deleted_in_other_tab: &'static str,
    pub changed_in_other_tab: &'static str,
    pub version_not_kept: &'static str,
    pub chat_not_branched: &'static str,
    pub reasoning_not_loaded: &'static str,
    pub stop_failed: &'static str,
    pub search_failed: &'static str,
    pub storage_full: &'static str,
    pub storage_unavailable: &'static str,
    pub storage_failed: &'static str,

    // ---- signing in and the account panel ----
    pub create_admin: &'static str,
    pub sign_in_title: &'static str,
    /// A comparison's figures: "thought {time}", "no thinking", "{n} reasoning tokens",
    /// "first answer token at {time}", "{time} in all".
    pub compare_thought: &'static str,
    pub compare_no_thinking: &'static str,
    pub compare_reasoning_tokens: &'static str,
    pub compare_first_answer: &'static str,
    pub compare_total: &'static str,
    /// The composer's button (and the shortcut sheet's line) that asks several models at once.
    pub compare_models: &'static str,
    /// A comparison's model whose answer could not even begin: `{model}`, `{detail}`.
    pub compare_model_failed: &'static str,
    /// "Sign in with {provider}": single sign-on's button.
    pub sign_in_with: &'static str,
    /// The heading of the page a failed single sign-on shows.
    pub sign_in_failed: &'static str,
    pub sign_in_again: &'static str,
    pub first_account_note: &'static str,
    pub name: &'static str,
    pub password: &'static str,
    pub create_account: &'static str,
    pub sign_in: &'static str,
    /// The panel's title: `{name}`.
    pub account_of: &'static str,
    pub tokens_not_listed: &'static str,
    pub token_not_made: &'static str,
    pub token_not_revoked: &'static str,
    pub token_use: &'static str,
    /// `{name}`: the token, shown once.
    pub token_shown_once: &'static str,
    pub copy_token: &'static str,
    pub your_tokens: &'static str,
    /// `{when}`.
    pub last_used: &'static str,
    pub never_used: &'static str,
    /// `{name}`.
    pub revoke_token: &'static str,
    pub revoke: &'static str,
    pub new_token_name: &'static str,
    pub make_token: &'static str,
    pub users_not_listed: &'static str,
    pub user_not_added: &'static str,
    pub user_not_removed: &'static str,
    pub users: &'static str,
    /// `{name}`.
    pub remove_user: &'static str,
    pub remove: &'static str,
    pub their_chats_go: &'static str,
    pub remove_for_good: &'static str,
    pub new_user_name: &'static str,
    pub their_password: &'static str,
    pub admin: &'static str,
    pub add_user: &'static str,

    // ---- the page ----
    pub page_not_found: &'static str,
    pub back_to_chat: &'static str,

    // ---- exports ----
    pub export_you: &'static str,
    pub export_assistant: &'static str,
    /// `> Tool {tool} ({status})`.
    pub export_tool: &'static str,

    // ---- turn endings the page words itself (the server's arrive with a code, below) ----
    pub error_stream_ended: &'static str,
    pub error_no_answer_after_thinking: &'static str,
    pub error_tool_calls: &'static str,
    pub error_empty_answer: &'static str,
    /// `{seconds}`.
    pub error_first_frame_timeout: &'static str,
    pub error_closed_before_start: &'static str,
    pub error_interrupted: &'static str,

    // ---- added with the wiring ----
    /// The mark on a message the reader edited.
    pub edited: &'static str,
    /// Where a search result matched.
    pub hit_in_thinking: &'static str,
    pub hit_in_message: &'static str,
    pub hit_in_answer: &'static str,
    /// The tag on a model that reasons, in the model picker.
    pub model_tag_reasons: &'static str,
    /// How many models the picker lists.
    pub model_count: Plural,
    /// The account panel's tokens heading.
    pub api_tokens: &'static str,
    /// A tool step's state in a Markdown export.
    pub export_running: &'static str,
    pub export_finished: &'static str,
    pub export_failed: &'static str,
    /// The workspace every user starts with, while it keeps its first name.
    pub first_workspace: &'static str,

    /// What the server's failures say, by their code (see [`ErrorWords`]).
    pub errors: ErrorWords,
    /// Settings → Usage's button; the page's own words are [`UsageWords`], in its chunk.
    pub usage_title: &'static str,
    /// After an answer's usage line, when the turn took the reader to a limit: `{when}` it resets.
    pub limit_reached: &'static str,
    /// The terminal client's own words (`ponder chat`, `ponder ask`); not in the page's build,
    /// which never shows them.
    #[cfg(feature = "ssr")]
    pub terminal: TerminalWords,
    /// The shared page's own words (`/s/<token>`, drawn by the server only).
    #[cfg(feature = "ssr")]
    pub shared: SharedWords,
}

/// The usage page's words (Settings → Usage), and the administrator's view of everyone.
#[derive(Debug, serde::Serialize)]
pub struct UsageWords {
    pub loading: &'static str,
    pub this_month: &'static str,
    pub last_month: &'static str,
    pub everyone: &'static str,
    pub turns: &'static str,
    pub tokens: &'static str,
    pub input: &'static str,
    pub cached_input: &'static str,
    pub answer: &'static str,
    pub reasoning: &'static str,
    pub tokens_per_day: &'static str,
    pub thinking_per_day: &'static str,
    pub cost_per_day: &'static str,
    pub by_model: &'static str,
    pub by_reader: &'static str,
    pub share: &'static str,
    pub day: &'static str,
    pub model: &'static str,
    pub reader: &'static str,
    pub cost: &'static str,
    pub thinking_time: &'static str,
    pub total: &'static str,
    pub numbers: &'static str,
    /// `{n}`: how many turns of the month had a count estimated.
    pub estimated: &'static str,
    pub none: &'static str,
    pub limits: &'static str,
    /// `{used}` and `{limit}` (tokens, or an amount and its currency), `{period}` (per day or month), `{when}` the reset.
    pub limit_line: &'static str,
    pub per_day: &'static str,
    pub per_month: &'static str,
    pub export: &'static str,
    pub readers_limits: &'static str,
    /// `{limits}` the default limits as written, or no limit.
    pub default_limits: &'static str,
    pub no_limit: &'static str,
    pub limits_field: &'static str,
    pub back_to_default: &'static str,
    pub admins_exempt: &'static str,
    pub unpriced: &'static str,
    pub saved: &'static str,
}

/// The words of comparing models (the composer's bar, the answers side by side, the record
/// per model): apart from the catalogue, so that only the code that shows them carries them.
#[derive(Debug, serde::Serialize)]
pub struct CompareWords {
    pub models_compared: &'static str,
    /// `{n}`: the pane's place, from 1.
    pub model_n: &'static str,
    pub add_model: &'static str,
    pub remove_model: &'static str,
    pub stop_comparing: &'static str,
    /// The comparison's region and its tabs on a phone.
    pub answers: &'static str,
    pub keep: &'static str,
    pub good: &'static str,
    pub bad: &'static str,
    pub continue_all: &'static str,
    pub continue_all_explain: &'static str,
    pub not_done: &'static str,
    /// Settings' button to the record.
    pub record_open: &'static str,
    pub record_title: &'static str,
    pub record_intro: &'static str,
    pub wins_chart: &'static str,
    pub thinking_chart: &'static str,
    pub tokens_chart: &'static str,
    pub model: &'static str,
    pub comparisons: &'static str,
    pub wins: &'static str,
    pub thumbs_up: &'static str,
    pub thumbs_down: &'static str,
    pub median_thinking: &'static str,
    pub median_tokens: &'static str,
    pub none_yet: &'static str,
    pub loading: &'static str,
}

/// The chrome of a shared conversation's page; its content stays as written.
#[derive(Debug, serde::Serialize)]
pub struct SharedWords {
    pub shared_kicker: &'static str,
    pub shared_on: &'static str,
    pub continue_in_ponder: &'static str,
    pub continue_explain: &'static str,
    pub sign_in_to_continue: &'static str,
    pub share_gone: &'static str,
    pub share_needs_sign_in: &'static str,
}

/// The terminal client's words beside the ones it shares with the page (the thinking labels,
/// tools, sources).
#[derive(Debug, serde::Serialize)]
pub struct TerminalWords {
    pub share_needs_server: &'static str,
    pub share_nothing_yet: &'static str,
    pub no_such_link: &'static str,
    pub share_failed: &'static str,
    pub waiting: &'static str,
    pub hidden_reasoning: &'static str,
    /// `{size}`: bytes of hidden reasoning so far ("12 KB").
    pub received: &'static str,
    pub retry_hint: &'static str,
    /// After the header of a block whose stream ended before the block did.
    pub incomplete: &'static str,
    pub earlier_hidden: Plural,
    /// The key line: `{mode}` the view shown, `{other}` the one Tab switches to.
    pub hints: &'static str,
    /// The reader scrolled `{n}` lines up.
    pub lines_up: Plural,
    pub mode_overview: &'static str,
    pub mode_detail: &'static str,
    /// The input box's title while a turn runs, and otherwise.
    pub input_thinking: &'static str,
    pub input_message: &'static str,
    pub quit_again: &'static str,
    pub new_chat: &'static str,
    pub browser_history: &'static str,
    pub no_chats: &'static str,
    pub chats_not_listed: &'static str,
    pub chat_not_opened: &'static str,
    pub mode_not_kept: &'static str,
    /// The status line while a running turn's broken stream is being joined again.
    pub reconnecting: &'static str,
    /// The status line after Tab: `{mode}` the view now shown.
    pub mode_now: &'static str,
    /// The chat picker's frame title.
    pub picker_title: &'static str,
    /// The status line while files wait for the next message: `{files}` their chips.
    pub files_attached: &'static str,
    pub file_attached: &'static str,
    pub file_not_attached: &'static str,
    pub files_dropped: &'static str,
    pub files_need_server: &'static str,
    /// `/attach --as WAY` with a way no file goes: `{way}` as typed, `{ways}` the ones taken.
    pub file_way_unknown: &'static str,
}

/// The sentence for each [`crate::domain::ErrorCode`] the page may show, with the failure's
/// params in braces. A failure whose `detail` or `retry_after` its sentence does not name gets
/// [`ErrorWords::detail_suffix`] or [`ErrorWords::retry_after_suffix`] after it.
#[derive(Debug, serde::Serialize)]
pub struct ErrorWords {
    /// `{detail}`: what the model server or the system said, in its own words.
    pub detail_suffix: &'static str,
    /// `{retry_after}`: seconds.
    pub retry_after_suffix: &'static str,
    pub no_answer: &'static str,
    pub no_start: &'static str,
    pub silent: &'static str,
    pub shutting_down: &'static str,
    pub shutting_down_mid_answer: &'static str,
    pub redirected: &'static str,
    pub upstream_status: &'static str,
    pub setting_refused: &'static str,
    pub replay_refused: &'static str,
    pub connection_broke: &'static str,
    pub replica_lost: &'static str,
    pub replica_died: &'static str,
    pub stream_cut: &'static str,
    pub line_too_long: &'static str,
    pub unreachable: &'static str,
    pub connect_timeout: &'static str,
    pub request_failed: &'static str,
    pub model_error: &'static str,
    pub prompt_refused: &'static str,
    pub not_saved: &'static str,
    pub bad_request: &'static str,
    pub unsupported_media_type: &'static str,
    pub cross_origin: &'static str,
    pub too_large: &'static str,
    pub body_timeout: &'static str,
    pub body_unreadable: &'static str,
    pub rate_limited: &'static str,
    pub quota_exceeded: &'static str,
    pub too_many_messages: &'static str,
    pub conversation_too_long: &'static str,
    pub message_too_long: &'static str,
    pub empty_message: &'static str,
    pub unknown_model: &'static str,
    pub no_server_history: &'static str,
    pub sign_in_required: &'static str,
    pub session_ended: &'static str,
    pub invalid_token: &'static str,
    pub proxy_required: &'static str,
    pub proxy_no_user: &'static str,
    pub sign_in_expired: &'static str,
    pub sign_in_not_allowed: &'static str,
    pub sign_in_denied: &'static str,
    pub sign_in_unverified: &'static str,
    pub provider_unreachable: &'static str,
    pub proxy_bad_user: &'static str,
    pub unknown_host: &'static str,
    pub wrong_credentials: &'static str,
    pub too_many_attempts: &'static str,
    pub password_too_short: &'static str,
    pub admin_only: &'static str,
    pub sharing_off: &'static str,
    pub already_set_up: &'static str,
    pub no_accounts: &'static str,
    pub cannot_remove_self: &'static str,
    pub password_required: &'static str,
    pub not_found: &'static str,
    pub turn_not_found: &'static str,
    pub conflict: &'static str,
    pub database_unavailable: &'static str,
    pub attachment_too_large: &'static str,
    pub attachment_empty: &'static str,
    pub attachment_quota: &'static str,
    pub attachments_too_large: &'static str,
    pub attachment_unsupported: &'static str,
    pub attachment_misnamed: &'static str,
    pub attachment_heic: &'static str,
    pub attachment_not_taken: &'static str,
    pub attachment_damaged: &'static str,
    pub attachment_unreadable: &'static str,
    pub image_too_large: &'static str,
    pub server_busy: &'static str,
    pub ponder_unreachable: &'static str,
}
