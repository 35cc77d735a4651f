//! Ids for stored rows, and the secrets handed to clients (session ids, API tokens), which are
//! stored only as digests.

use base64::Engine;
use sha2::{Digest, Sha256};

/// A fresh row id: the time in ms then 64 random bits, as hex, so ids sort by creation.
pub fn new_id() -> String {
    let mut random = [0u8; 8];
    fill(&mut random);
    format!("{:012x}{}", super::now_ms(), hex(&random))
}

/// A fresh secret for a client: 32 random bytes, URL-safe base64, with a prefix that says what
/// it is (`ps_` sessions, `pt_` API tokens) so a leaked one is recognisable.
pub fn new_secret(prefix: &str) -> String {
    let mut random = [0u8; 32];
    fill(&mut random);
    format!(
        "{prefix}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random)
    )
}

/// A secret that must not be guessed by anyone (a shared link's token): 32 bytes from the
/// system's randomness, URL-safe base64 (43 characters), or nothing when the system gives none
/// (no weaker fallback).
pub fn strong_secret() -> Option<String> {
    let mut random = [0u8; 32];
    getrandom::fill(&mut random).ok()?;
    Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random))
}

/// What is stored of a secret: its SHA-256, as hex. A stolen database gives no usable session
/// or token; the secrets have 256 bits, so no slow hash is needed.
pub fn digest(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

/// The SHA-256 of a file's bytes, as hex: what a stored file is known by.
pub fn content_digest(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn fill(buf: &mut [u8]) {
    if getrandom::fill(buf).is_err() {
        // The OS gave no randomness (it never does on Linux): fall back to the clock and a
        // counter, which still never repeats within the process.
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let seed = super::now_ms() as u64 ^ COUNTER.fetch_add(1, Ordering::Relaxed).rotate_left(17);
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (seed >> ((i % 8) * 8)) as u8 ^ i as u8;
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_sort_by_time() {
        let a = new_id();
        let b = new_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 28);
        assert!(a[..12] <= b[..12]);
    }

    #[test]
    fn secrets_are_long_prefixed_and_stored_as_digests() {
        let s = new_secret("pt_");
        assert!(s.starts_with("pt_") && s.len() == 3 + 43, "{s}");
        assert_ne!(s, new_secret("pt_"));
        assert_eq!(digest("abc").len(), 64);
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
