//! The chat's frame trace, for the benchmark of `ponder chat` under a long stream.

/// With `PONDER_CHAT_TRACE=<file>`, the times (ms since start) at which each piece of a turn
/// arrived (`e`) and each frame was drawn (`f`), written to the file on quitting: what
/// `make bench-ui` reads to tell how long the screen lags behind the stream.
pub struct FrameTrace {
    path: Option<std::path::PathBuf>,
    start: tokio::time::Instant,
    marks: Vec<(char, f64)>,
}

/// The most marks kept (16 MB): a trace left on in a long session stops growing.
const MAX_MARKS: usize = 1_000_000;

impl FrameTrace {
    pub fn from_env(start: tokio::time::Instant) -> Self {
        let path = std::env::var_os("PONDER_CHAT_TRACE").map(std::path::PathBuf::from);
        FrameTrace {
            path,
            start,
            marks: Vec::new(),
        }
    }

    pub fn note(&mut self, mark: char) {
        if self.path.is_some() && self.marks.len() < MAX_MARKS {
            let at = self.start.elapsed().as_secs_f64() * 1000.0;
            self.marks.push((mark, at));
        }
    }

    pub fn write(&self) {
        if let Some(path) = &self.path {
            let text: String = self
                .marks
                .iter()
                .map(|(mark, at)| format!("{mark} {at:.3}\n"))
                .collect();
            let _ = std::fs::write(path, text);
        }
    }
}
