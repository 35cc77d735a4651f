//! The line, SSE and turn decoders on any bytes in any chunking: no panic, the held bytes stay
//! under the limit, and the turn decoder reads the same events whatever the split.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ponder::wire::sse::{LineDecoder, SseDecoder, TurnDecoder};

fuzz_target!(|data: &[u8]| {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let cut = usize::from(cut).min(body.len());
    let limit = 64;

    let mut lines = LineDecoder::with_limit(limit);
    let mut longest = 0;
    for part in [&body[..cut], &body[cut..]] {
        if lines.push(part, |l| longest = longest.max(l.len())).is_err() {
            break;
        }
        assert!(lines.buffered() <= limit + part.len());
    }
    lines.finish(|l| longest = longest.max(l.len()));
    assert!(longest <= limit);

    let mut sse = SseDecoder::with_limit(limit);
    let mut frames = Vec::new();
    for part in [&body[..cut], &body[cut..]] {
        if sse.push(part, &mut frames).is_err() {
            break;
        }
    }
    sse.finish(&mut frames);
    assert!(frames.iter().all(|f| f.data.len() <= limit));

    let decode = |parts: &[&[u8]]| {
        let mut decoder = TurnDecoder::new();
        let mut events = Vec::new();
        for part in parts {
            decoder.push(part, &mut events);
        }
        decoder.finish(&mut events);
        events
    };
    assert_eq!(decode(&[body]), decode(&[&body[..cut], &body[cut..]]));
});
