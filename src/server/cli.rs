//! `ponder user …`: accounts made and listed from a shell, on the database the server uses
//! (`PONDER_DATABASE_URL`), so an operator can create the first admin before exposing Ponder, or
//! get back in after forgetting a password.

use std::io::BufRead;

use super::accounts::{hash_password, AccountError};
use super::store::identity::Rank;
use super::store::Store;

const USAGE: &str = "usage: ponder user add NAME [--admin] (the password is read from \
PONDER_NEW_PASSWORD or the first line of stdin) | ponder user password NAME | ponder user list";

/// Why `ponder user` did not do what it was asked, and so the exit code.
#[derive(Debug, PartialEq, Eq)]
pub enum UserError {
    /// The command line was not one it knows: exit 2 with the usage.
    Usage,
    /// The command could not be carried out: exit 1 with why.
    Failed(String),
}

impl UserError {
    pub fn exit_code(&self) -> i32 {
        match self {
            UserError::Usage => 2,
            UserError::Failed(_) => 1,
        }
    }
}

impl std::fmt::Display for UserError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserError::Usage => f.write_str(USAGE),
            UserError::Failed(why) => f.write_str(why),
        }
    }
}

impl From<String> for UserError {
    fn from(why: String) -> Self {
        UserError::Failed(why)
    }
}

/// Runs `ponder user <args>`; the text to print on success, or what went wrong.
pub async fn user(args: &[String]) -> Result<String, UserError> {
    let known = matches!(
        args,
        [cmd, _, ..] if cmd == "add" || cmd == "password"
    ) || matches!(args, [cmd] if cmd == "list");
    if !known {
        return Err(UserError::Usage);
    }
    let config = super::config::Config::from_env().map_err(|e| e.to_string())?;
    let store = Store::open(&config.database_url)
        .await
        .map_err(|e| format!("the database could not be opened: {e}"))?;
    match args {
        [cmd, name, flags @ ..] if cmd == "add" => {
            let admin_flag = match flags {
                [] => false,
                [f] if f == "--admin" => true,
                _ => return Err(UserError::Usage),
            };
            let rank = if admin_flag {
                Rank::Admin
            } else {
                Rank::AdminIfFirst
            };
            let hash = hash_password(&new_password()?).map_err(refused)?;
            let user = store
                .create_user(name, Some(&hash), rank)
                .await
                .map_err(|e| e.to_string())?;
            Ok(format!(
                "added {}{}",
                user.name,
                if user.is_admin { " (admin)" } else { "" }
            ))
        }
        [cmd, name] if cmd == "password" => {
            let hash = hash_password(&new_password()?).map_err(refused)?;
            let changed = store
                .set_password(name, &hash)
                .await
                .map_err(|e| e.to_string())?;
            if changed {
                Ok(format!(
                    "{name}'s password is changed: their sessions are ended and their API tokens revoked"
                ))
            } else {
                Err(UserError::Failed(format!("no user is named {name:?}")))
            }
        }
        [cmd] if cmd == "list" => {
            let users = store.list_users().await.map_err(|e| e.to_string())?;
            Ok(users
                .iter()
                .map(|u| format!("{}{}", u.name, if u.is_admin { "\tadmin" } else { "" }))
                .collect::<Vec<_>>()
                .join("\n"))
        }
        _ => Err(UserError::Usage),
    }
}

fn new_password() -> Result<String, String> {
    if let Ok(p) = std::env::var("PONDER_NEW_PASSWORD") {
        return Ok(p);
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("the password could not be read from stdin: {e}"))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

fn refused(e: AccountError) -> String {
    match e {
        AccountError::Invalid(failure) => failure.message,
        AccountError::NotAllowed(code) => crate::server::accounts::refused(code).message,
        other => format!("{other:?}"),
    }
}
