//! The byte formats both sides speak, pure and tested natively: server-sent events (Ponder's
//! own turn stream and every provider's), and the line splitting under them.

pub mod sse;
