//! The one icon set: inline SVG paths on a 24-unit grid, drawn with the text colour (the
//! stylesheet sets stroke and fill), so there is no icon font to download and every icon follows
//! the theme. Icons are decoration: the button around one carries the accessible name.

use leptos::prelude::*;

/// An icon of the set. `Flip` ones point along the reading direction and mirror right to left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Icon {
    Menu,
    Plus,
    Copy,
    Check,
    Edit,
    Branch,
    Regenerate,
    Previous,
    Next,
    Stop,
    Send,
    Download,
    Settings,
    More,
    Close,
    Trash,
    /// A light bulb: think more.
    ThinkMore,
    /// A paper clip: attach files.
    Attach,
    /// A box with an arrow out of it: share by link.
    Share,
    /// A thumb up and down: a comparison's answer rated.
    ThumbUp,
    ThumbDown,
}

impl Icon {
    fn path(self) -> &'static str {
        match self {
            Icon::Menu => "M4 6h16M4 12h16M4 18h16",
            Icon::Plus => "M12 5v14M5 12h14",
            Icon::Copy => "M9 9h10v10H9zM15 9V5H5v10h4",
            Icon::Check => "M5 12.5l4.5 4.5L19 7",
            Icon::Edit => "M4 20h4L19 9l-4-4L4 16zM13.5 6.5l4 4",
            Icon::Branch => "M7 4v16M7 14c0-4 3-6 7-6h3M14 5l3 3-3 3",
            Icon::Regenerate => "M19.5 13a7.5 7.5 0 1 1-2.2-6.3L20 9.5M20 4v5.5h-5.5",
            Icon::Previous => "M15 6l-6 6 6 6",
            Icon::Next => "M9 6l6 6-6 6",
            Icon::Stop => "M7 7h10v10H7z",
            Icon::ThumbUp => "M7 11v9H4v-9zM7 11l4-7c1.5 0 2.5 1 2 3l-1 3h6c1 0 2 1 1.7 2l-1.7 6c-.3 1-1 2-2 2H7",
            Icon::ThumbDown => "M7 13V4H4v9zM7 13l4 7c1.5 0 2.5-1 2-3l-1-3h6c1 0 2-1 1.7-2l-1.7-6c-.3-1-1-2-2-2H7",
            Icon::Send => "M12 19V5M6 11l6-6 6 6",
            Icon::Download => "M12 4v11M7 10l5 5 5-5M5 20h14",
            Icon::Settings => "M4 7h9M17 7h3M4 17h3M11 17h9M15 5v4M9 15v4",
            Icon::More => "M6 12h.01M12 12h.01M18 12h.01",
            Icon::Close => "M6 6l12 12M18 6L6 18",
            Icon::Trash => "M5 7h14M10 7V4h4v3M7 7l1 13h8l1-13",
            Icon::Share => "M12 15V4M8 8l4-4 4 4M5 12v7h14v-7",
            Icon::Attach => "M16.5 6.5l-8 8a2.1 2.1 0 0 0 3 3l8.5-8.5a4 4 0 0 0-5.7-5.7L5.6 12a6 6 0 0 0 8.5 8.5l6.4-6.4",
            Icon::ThinkMore => "M9.5 18h5M10.5 21h3M12 3a6 6 0 0 0-3.5 10.9c.6.5 1 1.2 1 2.1h5c0-.9.4-1.6 1-2.1A6 6 0 0 0 12 3z",
        }
    }

    fn class(self) -> &'static str {
        match self {
            Icon::Previous | Icon::Next | Icon::Branch => "icon flip",
            Icon::Stop => "icon solid",
            Icon::More => "icon dots",
            _ => "icon",
        }
    }
}

/// The icon as inline SVG, hidden from assistive technology.
pub fn icon(which: Icon) -> impl IntoView {
    view! {
        <svg class=which.class() viewBox="0 0 24 24" aria-hidden="true" focusable="false">
            <path d=which.path()></path>
        </svg>
    }
}
