//! What the server tells the page at render time: the one piece of the page's setup both sides
//! name, so the server can render the page without importing it.

/// What the server tells the page at render time, through `<meta>` tags the client reads once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageSettings {
    /// The path prefix the app is served under ("" or "/ponder").
    pub base_path: String,
    /// Seconds the page waits for a first frame before giving up on a turn.
    pub guard_secs: u64,
    /// The split loader the page's script imports (`pkg/<stem>.split.js`), when the site has
    /// one: the page preloads it beside the script instead of finding it a round trip later.
    pub split_loader: Option<String>,
    /// Each translated catalogue's chunk (`pkg/<stem>.words_<locale>.wasm`) where the site has
    /// one, by its language's tag (`ja`): a page in that language preloads it, since it
    /// hydrates only once it is here.
    pub words_chunks: Vec<(&'static str, String)>,
}
