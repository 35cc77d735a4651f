//! Which `Host` a server without accounts answers to. With `PONDER_AUTH=none` anyone who
//! reaches Ponder is its one user, so a page on `http://attacker.example:3000` whose name the
//! attacker re-resolves to 127.0.0.1 (DNS rebinding) would be "same origin" with Ponder and
//! could read every chat and spend the operator's key. A rebound request still carries the
//! attacker's name in `Host`, so Ponder answers only to names it knows: an IP address (which no
//! DNS answer can stand for), `localhost` and its subdomains, and the hosts of
//! `PONDER_PUBLIC_URL`. Anything else gets `421` before any handler runs.

use std::net::{IpAddr, SocketAddr};

/// The hosts a `none`-mode server answers to, read once from the configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostRule {
    /// Lower-cased host names (no port) of `PONDER_PUBLIC_URL`.
    public_hosts: Vec<String>,
    /// Listening on every address (`0.0.0.0`, `::`): any IP address is this machine's.
    any_ip: bool,
    /// The one address listened on, when it is a specific one.
    listen_ip: Option<IpAddr>,
}

impl HostRule {
    pub fn new(public_hosts: Vec<String>, listen: SocketAddr) -> Self {
        let ip = listen.ip();
        HostRule {
            public_hosts,
            any_ip: ip.is_unspecified(),
            listen_ip: (!ip.is_unspecified()).then_some(ip),
        }
    }

    /// Whether a request with this `Host` header (name or address, optional port) is for this
    /// server. A missing `Host` (HTTP/1.0 tools) is this machine's own client.
    pub fn allows(&self, host: Option<&str>) -> bool {
        let Some(host) = host else {
            return true;
        };
        let Some(name) = host_name(host) else {
            return false;
        };
        if let Ok(ip) = name
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        {
            return ip.is_loopback() || self.any_ip || self.listen_ip == Some(ip);
        }
        name == "localhost" || name.ends_with(".localhost") || self.public_hosts.contains(&name)
    }
}

/// The lower-cased host part of a `Host` value (`[::1]:3000` → `[::1]`), without a trailing
/// dot; `None` when it is not a host at all (empty, a user part, a path).
fn host_name(host: &str) -> Option<String> {
    let host = host.trim().to_ascii_lowercase();
    if host.is_empty() || host.contains(['/', '@', ' ', '\\']) {
        return None;
    }
    let name = if host.starts_with('[') {
        let end = host.find(']')?;
        let rest = &host[end + 1..];
        if !(rest.is_empty() || rest.strip_prefix(':').is_some_and(is_port)) {
            return None;
        }
        host[..=end].to_string()
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if is_port(port) && !name.contains(':') => name.to_string(),
            Some(_) => return None,
            None => host,
        }
    };
    let name = name.trim_end_matches('.').to_string();
    (!name.is_empty()).then_some(name)
}

fn is_port(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
}

/// The hosts of `PONDER_PUBLIC_URL`: comma-separated `http(s)://` addresses people reach
/// Ponder by (`http://ponder.lan:3000`, `https://chat.example.com`).
pub fn public_hosts(value: &str) -> Result<Vec<String>, String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .map(|u| {
            url::Url::parse(u)
                .ok()
                .filter(|url| matches!(url.scheme(), "http" | "https"))
                .and_then(|url| url.host_str().map(|h| h.trim_end_matches('.').to_string()))
                .filter(|h| !h.is_empty())
                .ok_or_else(|| {
                    format!(
                        "PONDER_PUBLIC_URL: {u:?} must be an address like http://ponder.lan:3000"
                    )
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> HostRule {
        HostRule::new(Vec::new(), "127.0.0.1:3000".parse().unwrap())
    }

    #[test]
    fn a_loopback_server_answers_to_this_machine_only() {
        let rule = loopback();
        for host in [
            "127.0.0.1:3000",
            "127.0.0.1",
            "127.1.2.3:80",
            "[::1]:3000",
            "[::1]",
            "localhost:3000",
            "LOCALHOST",
            "localhost.:3000",
            "app.localhost:3000",
        ] {
            assert!(rule.allows(Some(host)), "{host}");
        }
        assert!(rule.allows(None));
        for host in [
            "attacker.example:3000",
            "attacker.example",
            "localhost.attacker.example",
            "192.168.1.10:3000",
            "",
            "127.0.0.1:3000/x",
            "user@127.0.0.1",
            "127.0.0.1:99999999",
            "[::1]x",
        ] {
            assert!(!rule.allows(Some(host)), "{host}");
        }
    }

    #[test]
    fn public_urls_and_every_address_of_a_wildcard_listener_are_allowed() {
        let hosts = public_hosts("http://Ponder.LAN:3000, https://chat.example.com/").unwrap();
        assert_eq!(hosts, ["ponder.lan", "chat.example.com"]);
        let rule = HostRule::new(hosts, "0.0.0.0:3000".parse().unwrap());
        assert!(rule.allows(Some("ponder.lan:3000")));
        assert!(rule.allows(Some("chat.example.com")));
        assert!(rule.allows(Some("192.168.1.10:3000")));
        assert!(rule.allows(Some("[fd00::5]:3000")));
        assert!(!rule.allows(Some("evil.example:3000")));
        let specific = HostRule::new(Vec::new(), "192.168.1.10:3000".parse().unwrap());
        assert!(specific.allows(Some("192.168.1.10:3000")));
        assert!(!specific.allows(Some("10.0.0.9:3000")));
        assert!(public_hosts("ponder.lan").is_err());
        assert!(public_hosts("ftp://ponder.lan").is_err());
        assert_eq!(public_hosts(" , ").unwrap(), Vec::<String>::new());
    }
}
