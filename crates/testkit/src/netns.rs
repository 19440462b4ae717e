//! A network namespace of a test's own: its loopback only, multicast on, so DDS
//! discovery works as on a vehicle's network and no other test's participants are seen.

use std::ffi::OsStr;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// A network namespace with `lo` up and multicast on it; deleted on drop.
pub struct NetNs {
    /// Its name (`ip netns`).
    pub name: String,
}

impl NetNs {
    /// Creates `recdtns<pid>x<n>` with `lo` up, multicast on and a multicast route.
    pub fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "recdtns{}x{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let _ = Command::new("ip").args(["netns", "delete", &name]).output();
        let netns = Self { name };
        netns.ip(&["netns", "add", &netns.name]);
        netns.ip(&["-n", &netns.name, "link", "set", "lo", "up"]);
        netns.ip(&["-n", &netns.name, "link", "set", "lo", "multicast", "on"]);
        netns.ip(&[
            "-n",
            &netns.name,
            "route",
            "add",
            "224.0.0.0/4",
            "dev",
            "lo",
        ]);
        netns
    }

    fn ip(&self, args: &[&str]) {
        let output = Command::new("ip").args(args).output().expect("ip runs");
        assert!(
            output.status.success(),
            "ip {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The command prefix that runs a program inside: `ip netns exec NAME`.
    pub fn wrapper(&self) -> Vec<String> {
        ["ip", "netns", "exec", &self.name]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    /// A command running `program` inside the namespace.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.name]).arg(program);
        command
    }
}

impl Default for NetNs {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "delete", &self.name])
            .output();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_has_loopback_up_with_multicast_and_goes_on_drop() {
        let netns = NetNs::new();
        let name = netns.name.clone();
        let shown = netns
            .command("ip")
            .args(["addr", "show", "lo"])
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(
            shown.contains("MULTICAST") && shown.contains("UP"),
            "{shown}"
        );
        drop(netns);
        let listed = Command::new("ip").args(["netns", "list"]).output().unwrap();
        assert!(!String::from_utf8_lossy(&listed.stdout).contains(&name));
    }
}
