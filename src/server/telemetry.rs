//! Logs and metrics: tracing set-up, and the Prometheus registry behind `/metrics`.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::outcome::{Outcome, UpstreamFailure};
use super::redact::Redactor;

/// Starts the log subscriber on stdout: human-readable lines (coloured only on a terminal, so
/// `docker logs` stays clean), or one JSON object per line when `json` is set, with the event's
/// fields at the top level for log shippers. `RUST_LOG` filters as usual (default `info`).
/// Every line goes through `redactor`, so no secret reaches the log, whatever a message holds.
pub fn init_tracing(json: bool, redactor: Arc<Redactor>) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(RedactingStdout { redactor })
        .with_target(false);
    let _ = if json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init()
    } else {
        builder
            .with_ansi(std::io::stdout().is_terminal())
            .try_init()
    };
}

/// Standard output, with every secret masked. The formatter writes each log line in one call,
/// so a secret is never split between two writes.
struct RedactingStdout {
    redactor: Arc<Redactor>,
}

struct RedactingWriter<'a> {
    redactor: &'a Redactor,
}

impl Write for RedactingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stdout()
            .lock()
            .write_all(self.redactor.redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RedactingStdout {
    type Writer = RedactingWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter {
            redactor: &self.redactor,
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabel {
    model: String,
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: String,
}

fn latency_buckets() -> Histogram {
    Histogram::new([
        0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ])
}

/// Ponder's metrics. Each app has its own registry, so tests in one process do not mix counts.
pub struct Metrics {
    registry: Mutex<Registry>,
    turns: Family<OutcomeLabel, Counter>,
    upstream_errors: Family<KindLabel, Counter>,
    refused: Family<ReasonLabel, Counter>,
    active: Gauge,
    first_thinking: Histogram,
    first_answer: Histogram,
    duration: Histogram,
    thinking_chars: Counter,
    answer_chars: Counter,
    answered_now: Counter,
    tokens: Family<TokenLabel, Counter>,
    estimated: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let m = Metrics {
            registry: Mutex::new(Registry::with_prefix("ponder")),
            turns: Family::default(),
            upstream_errors: Family::default(),
            refused: Family::default(),
            active: Gauge::default(),
            first_thinking: latency_buckets(),
            first_answer: latency_buckets(),
            duration: latency_buckets(),
            thinking_chars: Counter::default(),
            answer_chars: Counter::default(),
            answered_now: Counter::default(),
            tokens: Family::default(),
            estimated: Counter::default(),
        };
        // Every outcome is exported from the start, so a rate over it exists before the first
        // failure.
        for outcome in [
            Outcome::Done,
            Outcome::Error,
            Outcome::ClientClosed,
            Outcome::Stopped,
        ] {
            let _ = m.turns.get_or_create(&OutcomeLabel {
                outcome: outcome.name().into(),
            });
        }
        for kind in UpstreamFailure::ALL {
            let _ = m.upstream_errors.get_or_create(&KindLabel {
                kind: kind.name().into(),
            });
        }
        if let Ok(mut r) = m.registry.lock() {
            r.register(
                "turns",
                "Finished turns by outcome (done, error, client_closed)",
                m.turns.clone(),
            );
            r.register(
                "upstream_errors",
                "Upstream failures by kind",
                m.upstream_errors.clone(),
            );
            r.register(
                "requests_refused",
                "Requests refused before any work, by reason (origin, content_type, too_large, body_timeout, body_broken, rate_limited, invalid)",
                m.refused.clone(),
            );
            r.register(
                "active_streams",
                "Turns streaming right now",
                m.active.clone(),
            );
            r.register(
                "time_to_first_thinking_seconds",
                "From the request to the first reasoning piece",
                m.first_thinking.clone(),
            );
            r.register(
                "time_to_first_answer_seconds",
                "From the request to the first answer piece",
                m.first_answer.clone(),
            );
            r.register(
                "turn_duration_seconds",
                "From the request to the end of the turn",
                m.duration.clone(),
            );
            r.register(
                "thinking_chars",
                "Characters of reasoning streamed",
                m.thinking_chars.clone(),
            );
            r.register(
                "answer_chars",
                "Characters of answer streamed",
                m.answer_chars.clone(),
            );
            r.register(
                "tokens",
                "Tokens turns spent, by model and kind (input, cached_input, output, reasoning); output includes reasoning, input includes cached_input, as in the usage ledger",
                m.tokens.clone(),
            );
            r.register(
                "usage_estimated_turns",
                "Turns whose provider reported no count for some kind, estimated from characters",
                m.estimated.clone(),
            );
            r.register(
                "answer_now",
                "Turns whose reasoning the reader cut short with Answer now",
                m.answered_now.clone(),
            );
        }
        m
    }

    /// A turn's tokens, by kind, as its ledger line counts them.
    pub fn tokens(&self, model: &str, spend: &crate::domain::usage::Spend) {
        for (kind, n) in [
            ("input", spend.input_tokens),
            ("cached_input", spend.cached_input_tokens),
            ("output", spend.output_tokens),
            ("reasoning", spend.reasoning_tokens),
        ] {
            self.tokens
                .get_or_create(&TokenLabel {
                    model: model.to_string(),
                    kind: kind.to_string(),
                })
                .inc_by(n);
        }
        if spend.estimated {
            self.estimated.inc();
        }
    }

    /// A reader cut a turn's reasoning short ("Answer now").
    pub fn answer_now(&self) {
        self.answered_now.inc();
    }

    pub fn turn_started(&self) {
        self.active.inc();
    }

    pub fn turn_finished(
        &self,
        outcome: Outcome,
        first_thinking_ms: Option<u64>,
        first_answer_ms: Option<u64>,
        total: Duration,
        thinking_chars: u64,
        answer_chars: u64,
    ) {
        self.active.dec();
        self.turns
            .get_or_create(&OutcomeLabel {
                outcome: outcome.name().into(),
            })
            .inc();
        if let Some(ms) = first_thinking_ms {
            self.first_thinking.observe(ms as f64 / 1000.0);
        }
        if let Some(ms) = first_answer_ms {
            self.first_answer.observe(ms as f64 / 1000.0);
        }
        self.duration.observe(total.as_secs_f64());
        self.thinking_chars.inc_by(thinking_chars);
        self.answer_chars.inc_by(answer_chars);
    }

    /// Turns streaming right now, for the shutdown log lines.
    pub fn active_streams(&self) -> i64 {
        self.active.get()
    }

    /// A request the guard or the validation turned away.
    pub fn request_refused(&self, reason: &str) {
        self.refused
            .get_or_create(&ReasonLabel {
                reason: reason.into(),
            })
            .inc();
    }

    pub fn upstream_error(&self, kind: UpstreamFailure) {
        self.upstream_errors
            .get_or_create(&KindLabel {
                kind: kind.name().into(),
            })
            .inc();
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Ok(r) = self.registry.lock() {
            let _ = prometheus_client::encoding::text::encode(&mut out, &r);
        }
        out
    }
}
