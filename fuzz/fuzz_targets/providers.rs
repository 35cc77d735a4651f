//! Every provider's parser, and the turn assembler after it, on any bytes in any chunking: no
//! panic, at most one terminal event and nothing after it, and the line limit holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ponder::server::config::ProviderKind;
use ponder::server::providers::parser_with_limit;
use ponder::server::turn::TurnAssembler;

const PROVIDERS: [ProviderKind; 5] = [
    ProviderKind::OpenAi,
    ProviderKind::Anthropic,
    ProviderKind::Responses,
    ProviderKind::Gemini,
    ProviderKind::Ollama,
];

fuzz_target!(|data: &[u8]| {
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let provider = PROVIDERS[usize::from(control % 5)];
    let think_start = control & 0x08 != 0;
    let step = usize::from(control >> 4) + 1;
    let mut parser = parser_with_limit(provider, think_start, 4096);
    let mut asm = TurnAssembler::new(control & 0x80 == 0).with_char_limit(10_000);
    let mut pieces = Vec::new();
    let mut events = Vec::new();
    for (t, part) in body.chunks(step).enumerate() {
        parser.feed(part, &mut pieces);
        for piece in pieces.drain(..) {
            asm.push(piece, t as u64, &mut events);
        }
    }
    parser.finish(&mut pieces);
    for piece in pieces.drain(..) {
        asm.push(piece, body.len() as u64, &mut events);
    }
    asm.end_of_stream(body.len() as u64, &mut events);
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "{events:?}");
    assert!(events.last().is_some_and(|e| e.is_terminal()));
    assert!(asm.thinking_chars + asm.answer_chars <= 10_000);
});
