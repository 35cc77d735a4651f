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

/// Put on a page request by the server when its address names no conversation of the caller's:
/// both sides then render the not-found page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChatMissing;

/// Put on a page request by the server when its address names one of the caller's
/// conversations: its last messages, which the page draws at once on its first load (the
/// server's render, before the page can ask for them), so no empty chat flashes first.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatFound(pub std::sync::Arc<crate::domain::history::Conversation>);

impl ChatFound {
    /// How many of the conversation's last messages the first load draws: enough to fill a
    /// tall screen from the end, where a chat opens.
    pub const MESSAGES: usize = 12;
}

/// Where a page of the app is: a new chat (the base path), one conversation (`/c/<id>` under
/// it) or somewhere the app has nothing. The server routes by it, the page reads and writes its
/// address by it, so both sides agree on every URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Address {
    NewChat,
    Chat(String),
    Elsewhere,
}

/// The longest conversation id an address carries.
const MAX_ID_BYTES: usize = 200;

impl Address {
    /// The address of `path` (no query or fragment) under the app's `base` ("" or "/ponder").
    pub fn of(path: &str, base: &str) -> Address {
        let Some(rest) = path.strip_prefix(base) else {
            return Address::Elsewhere;
        };
        if rest.is_empty() || rest == "/" {
            return Address::NewChat;
        }
        rest.strip_prefix("/c/")
            .map(|id| id.strip_suffix('/').unwrap_or(id))
            .and_then(decode)
            .map_or(Address::Elsewhere, Address::Chat)
    }

    /// The path of this address under `base`; anywhere else is the base itself.
    pub fn path(&self, base: &str) -> String {
        match self {
            Address::Chat(id) => format!("{base}/c/{}", encode(id)),
            Address::NewChat | Address::Elsewhere => format!("{base}/"),
        }
    }

    /// The conversation this address names.
    pub fn chat(&self) -> Option<&str> {
        match self {
            Address::Chat(id) => Some(id),
            _ => None,
        }
    }

    pub fn is_app(&self) -> bool {
        !matches!(self, Address::Elsewhere)
    }
}

fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn encode(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if unreserved(b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = segment.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b if unreserved(b) => {
                out.push(b);
                i += 1;
            }
            _ => return None,
        }
    }
    let id = String::from_utf8(out).ok()?;
    let fits = !id.is_empty() && id.len() <= MAX_ID_BYTES && !id.chars().any(char::is_control);
    fits.then_some(id)
}

#[cfg(test)]
mod tests {
    use super::Address;

    #[test]
    fn an_address_names_a_new_chat_a_conversation_or_nothing() {
        for base in ["", "/ponder"] {
            assert_eq!(Address::of(&format!("{base}/"), base), Address::NewChat);
            assert_eq!(
                Address::of(&format!("{base}/c/19a2b3c"), base),
                Address::Chat("19a2b3c".into())
            );
            assert_eq!(
                Address::of(&format!("{base}/c/19a2b3c/"), base),
                Address::Chat("19a2b3c".into())
            );
            for elsewhere in [
                "/c/", "/c", "/c/a/b", "/x", "/c/a%2", "/c/a%zz", "/c/%00", "/c/a b",
            ] {
                assert_eq!(
                    Address::of(&format!("{base}{elsewhere}"), base),
                    Address::Elsewhere,
                    "{base}{elsewhere}"
                );
            }
        }
        assert_eq!(Address::of("/ponder", "/ponder"), Address::NewChat);
        assert_eq!(Address::of("/other/c/1", "/ponder"), Address::Elsewhere);
        assert_eq!(
            Address::of(&format!("/c/{}", "a".repeat(201)), ""),
            Address::Elsewhere,
            "too long"
        );
    }

    #[test]
    fn any_id_goes_there_and_back() {
        for id in ["19a2b3c", "imported chat/1?é", "a.b~c_d-e", "%41"] {
            let chat = Address::Chat(id.into());
            let path = chat.path("/ponder");
            assert!(path.starts_with("/ponder/c/"), "{path}");
            assert!(
                !path["/ponder/c/".len()..].contains(['/', '?', '#', ' ']),
                "{path}"
            );
            assert_eq!(Address::of(&path, "/ponder"), chat, "{path}");
        }
        assert_eq!(Address::NewChat.path("/ponder"), "/ponder/");
        assert_eq!(Address::NewChat.path(""), "/");
    }
}
