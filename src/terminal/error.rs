//! What can go wrong for `ponder chat` and `ponder ask`, typed: the command line, reaching a
//! Ponder (or starting the built-in one), its refusals, its answers and the terminal itself.
//! `main` prints it and exits with its code; the chat shows it on its status line.

use crate::domain::Failure;

#[derive(Debug)]
pub enum ClientError {
    /// The command line could not be read: the usage, or what was wrong with it.
    Usage(String),
    /// No Ponder answered at the address, or the built-in one could not start.
    Unreachable(String),
    /// The server refused the request, saying why.
    Refused(Failure),
    /// The server's answer could not be read.
    Unreadable(String),
    /// The terminal could not be set up or drawn.
    Terminal(String),
}

impl ClientError {
    /// The process exit code: 2 for a command line that could not be read, 1 for the rest.
    pub fn exit_code(&self) -> i32 {
        match self {
            ClientError::Usage(_) => 2,
            _ => 1,
        }
    }
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Usage(what)
            | ClientError::Unreachable(what)
            | ClientError::Unreadable(what)
            | ClientError::Terminal(what) => f.write_str(what),
            ClientError::Refused(failure) => f.write_str(&failure.message),
        }
    }
}

impl std::error::Error for ClientError {}
