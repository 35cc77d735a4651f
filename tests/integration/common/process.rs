//! The real `ponder` binary as a child process: for what is about the process (logs, signals,
//! memory), not the library.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The real binary, with only the variables given (and none inherited).
pub struct Process {
    pub child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    pub addr: SocketAddr,
}

impl Process {
    pub fn start(vars: &[(&str, &str)]) -> Process {
        Self::start_with(vars, None, None)
    }

    /// Starts the binary with no file it writes allowed past `max_file_bytes` (RLIMIT_FSIZE,
    /// with SIGXFSZ ignored so a write past it fails instead of killing the process): a disk
    /// that is full, as the database sees it.
    pub fn start_limited(vars: &[(&str, &str)], max_file_bytes: u64) -> Process {
        Self::start_with(vars, Some(max_file_bytes), None)
    }

    /// Starts the binary inside a test host's network namespace (give it a
    /// `LEPTOS_SITE_ADDR` on one of the host's addresses).
    pub fn start_in(host: &super::netns::Host, vars: &[(&str, &str)]) -> Process {
        Self::start_with(vars, None, Some(host))
    }

    fn start_with(
        vars: &[(&str, &str)],
        max_file_bytes: Option<u64>,
        host: Option<&super::netns::Host>,
    ) -> Process {
        let program = env!("CARGO_BIN_EXE_ponder");
        let mut command = match host {
            Some(host) => host.command(program),
            None => Command::new(program),
        };
        if let Some(limit) = max_file_bytes {
            use std::os::unix::process::CommandExt;
            // SAFETY: only async-signal-safe calls (signal, setrlimit) between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    let rlim = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_FSIZE, &rlim) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        command
            .env_clear()
            .env("LEPTOS_SITE_ADDR", "127.0.0.1:0")
            .env("PONDER_LOG_FORMAT", "json")
            .env("PONDER_DEMO_DELAY_MS", "1")
            .env("PONDER_DATABASE_URL", super::temp_database())
            .envs(vars.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start ponder");
        let (tx, lines) = mpsc::channel();
        for pipe in [
            Box::new(child.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().expect("stderr")),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let mut seen = Vec::new();
        let addr = loop {
            let line = lines
                .recv_timeout(Duration::from_secs(20))
                .expect("ponder said where it listens");
            seen.push(line.clone());
            if let Some(rest) = line.split("listening on http://").nth(1) {
                let addr = rest.split('"').next().expect("address");
                break addr.parse().expect("socket address");
            }
        };
        Process {
            child,
            lines,
            seen,
            addr,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// Waits for the exit, up to `limit`; the process is killed if it overstays.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return Some(status);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every line printed so far, and until the pipes close.
    pub fn all_lines(&mut self) -> Vec<String> {
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.seen.push(line);
        }
        self.seen.clone()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Process {
    /// The process's resident memory and its peak so far, in KiB, from `/proc`.
    pub fn memory_kib(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc status");
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or_else(|| panic!("{name} in /proc status"))
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    /// Waits (bounded) for a printed line that contains `needle`, and returns it.
    pub fn wait_for_line(&mut self, needle: &str, limit: Duration) -> Option<String> {
        if let Some(line) = self.seen.iter().find(|l| l.contains(needle)) {
            return Some(line.clone());
        }
        let deadline = Instant::now() + limit;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Ok(line) = self.lines.recv_timeout(left) else {
                break;
            };
            self.seen.push(line.clone());
            if line.contains(needle) {
                return Some(line);
            }
        }
        None
    }
}
