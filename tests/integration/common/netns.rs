//! Hosts on one machine, in network namespaces the test makes itself: each host is a namespace
//! with its own loopback and addresses, cabled to one or both of two switches (bridges in a
//! namespace of their own). No address exists outside these namespaces, so what crosses
//! between hosts crosses a network that the test can cut (a cable pulled: the switch's port goes
//! down and packets are lost, not refused) and heal. Everything is removed on drop.
//!
//! The front network joins viewers and replicas; the back network joins replicas and
//! PostgreSQL. A thread enters a host with `setns(2)` ([`Host::run`]), and a process starts
//! inside one with the same call between fork and exec ([`Host::command`]).

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Which switch a cable goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    Front,
    Back,
}

impl Wire {
    fn bridge(self) -> &'static str {
        match self {
            Wire::Front => "front",
            Wire::Back => "back",
        }
    }

    fn subnet(self) -> u8 {
        match self {
            Wire::Front => 1,
            Wire::Back => 2,
        }
    }
}

/// The two switches and the hosts cabled to them.
pub struct Net {
    prefix: String,
    switch: String,
    hosts: u8,
}

/// One host: a namespace, its number on the networks, and the wires it has.
#[derive(Clone, Debug)]
pub struct Host {
    pub name: String,
    number: u8,
    wires: Vec<Wire>,
    switch: String,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("iproute2's ip (the Makefile installs it)");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Net {
    /// The switches, in a namespace of their own. Needs CAP_NET_ADMIN (root, as in CI).
    pub fn new() -> Net {
        assert_eq!(
            unsafe { libc::geteuid() },
            0,
            "the network fault tests make network namespaces: run them as root (CI does)"
        );
        sweep_left_namespaces();
        let prefix = format!(
            "pn{}x{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let switch = format!("{prefix}sw");
        ip(&["netns", "add", &switch]);
        for wire in [Wire::Front, Wire::Back] {
            ip(&[
                "-n",
                &switch,
                "link",
                "add",
                wire.bridge(),
                "type",
                "bridge",
            ]);
            ip(&["-n", &switch, "link", "set", wire.bridge(), "up"]);
        }
        Net {
            prefix,
            switch,
            hosts: 0,
        }
    }

    /// A new host cabled to `wires`, its loopback up.
    pub fn host(&mut self, role: &str, wires: &[Wire]) -> Host {
        self.hosts += 1;
        let number = self.hosts + 10;
        let name = format!("{}{role}", self.prefix);
        ip(&["netns", "add", &name]);
        ip(&["-n", &name, "link", "set", "lo", "up"]);
        let host = Host {
            name,
            number,
            wires: wires.to_vec(),
            switch: self.switch.clone(),
        };
        for &wire in wires {
            let port = host.port(wire);
            let inside = wire.bridge();
            ip(&[
                "-n",
                &self.switch,
                "link",
                "add",
                &port,
                "type",
                "veth",
                "peer",
                "name",
                inside,
                "netns",
                &host.name,
            ]);
            ip(&[
                "-n",
                &self.switch,
                "link",
                "set",
                &port,
                "master",
                wire.bridge(),
                "up",
            ]);
            let address = format!("{}/24", host.address(wire));
            ip(&["-n", &host.name, "addr", "add", &address, "dev", inside]);
            ip(&["-n", &host.name, "link", "set", inside, "up"]);
        }
        host
    }
}

/// Removes the namespaces of test processes that ended without removing theirs (killed).
fn sweep_left_namespaces() {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| {
        let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
            return;
        };
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let name = line.split_whitespace().next().unwrap_or("");
            let Some(pid) = name
                .strip_prefix("pn")
                .and_then(|rest| rest.split('x').next())
                .and_then(|pid| pid.parse::<u32>().ok())
            else {
                continue;
            };
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                let _ = Command::new("ip").args(["netns", "del", name]).status();
            }
        }
    });
}

impl Drop for Net {
    fn drop(&mut self) {
        let listed = Command::new("ip").args(["netns", "list"]).output();
        if let Ok(out) = listed {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let name = line.split_whitespace().next().unwrap_or("");
                if name.starts_with(&self.prefix) {
                    let _ = Command::new("ip").args(["netns", "del", name]).status();
                }
            }
        }
    }
}

impl Host {
    /// The switch's end of this host's cable on `wire` (a name under 16 bytes).
    fn port(&self, wire: Wire) -> String {
        format!("h{}{}", self.number, &wire.bridge()[..1])
    }

    /// This host's address on `wire`.
    pub fn address(&self, wire: Wire) -> String {
        assert!(
            self.wires.contains(&wire),
            "{} has no {wire:?} cable",
            self.name
        );
        format!("10.80.{}.{}", wire.subnet(), self.number)
    }

    /// Pulls this host's cable on `wire` out of the switch: packets both ways are lost.
    pub fn cut(&self, wire: Wire) {
        ip(&["-n", &self.switch, "link", "set", &self.port(wire), "down"]);
    }

    /// Plugs it back in.
    pub fn heal(&self, wire: Wire) {
        ip(&["-n", &self.switch, "link", "set", &self.port(wire), "up"]);
    }

    fn handle(&self) -> OwnedFd {
        std::fs::File::open(PathBuf::from("/var/run/netns").join(&self.name))
            .expect("the namespace's handle")
            .into()
    }

    /// A command that runs inside this host.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        use std::os::unix::process::CommandExt;
        let handle = self.handle();
        let mut command = Command::new(program);
        // SAFETY: setns(2) is async-signal-safe; the handle lives as long as the command.
        unsafe {
            command.pre_exec(move || {
                if libc::setns(handle.as_raw_fd(), libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        command
    }

    /// Runs `work` on a thread of its own inside this host (on a runtime of that thread, so
    /// every socket it opens is this host's) and gives back its result.
    pub async fn run<F, Fut, T>(&self, work: F) -> T
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: std::future::Future<Output = T>,
        T: Send + 'static,
    {
        let handle = self.handle();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let name = CString::new(self.name.clone()).expect("a name");
        std::thread::spawn(move || {
            // SAFETY: moves only this thread, which owns no socket yet, into the namespace.
            let entered = unsafe { libc::setns(handle.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(entered, 0, "setns into {name:?}");
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            let _ = tx.send(runtime.block_on(work()));
        });
        rx.await.expect("the host's thread finished its work")
    }
}
