//! recd holding keys (sealing, signing) leaves no core file when it is aborted, as
//! systemd's watchdog aborts it, even where `ulimit -c` allows one; the same recd without
//! keys does leave one, which shows the test's core pattern and limit at work.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_testkit::{openssl_keys, Domain, Recd};

const CORE_PATTERN: &str = "/proc/sys/kernel/core_pattern";

/// The kernel's core pattern pointed into a directory of the test's while it lives; the
/// pattern before is put back when it is dropped.
struct CoresInto {
    before: String,
}

impl CoresInto {
    fn dir(dir: &Path) -> Self {
        let before = std::fs::read_to_string(CORE_PATTERN).expect("the core pattern is readable");
        let pattern = format!("{}/core.%p\n", dir.display());
        std::fs::write(CORE_PATTERN, pattern).expect("the core pattern is writable (root)");
        Self { before }
    }
}

impl Drop for CoresInto {
    fn drop(&mut self) {
        let _ = std::fs::write(CORE_PATTERN, &self.before);
    }
}

/// The core files in `dir`.
fn cores(dir: &Path) -> Vec<PathBuf> {
    (std::fs::read_dir(dir).unwrap().flatten())
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("core.")
        })
        .collect()
}

/// Starts recd with `config` under a core limit of 256 MiB (enough for a core file to
/// appear, bounded), aborts it with SIGABRT and returns whether it said it dumped core
/// and the core files it left in `cores_dir`.
fn aborted(root: &Path, domain: &Domain, config: &str, cores_dir: &Path) -> (bool, Vec<PathBuf>) {
    let limit = "--core=268435456:268435456";
    let mut recd = Recd::start_wrapped(root, domain, &["prlimit", limit, "--"], config, "", &[]);
    recd.rec_json(&["start", "--name", "drive", "--topic", "*"]);
    let status = recd.signal_and_wait(libc::SIGABRT, Duration::from_secs(60));
    assert_eq!(
        status.signal(),
        Some(libc::SIGABRT),
        "{status:?}\n{}",
        recd.log()
    );
    (status.core_dumped(), cores(cores_dir))
}

#[test]
fn recd_holding_keys_leaves_no_core_file_when_aborted() {
    let suid_dumpable = std::fs::read_to_string("/proc/sys/fs/suid_dumpable").unwrap();
    assert_eq!(
        suid_dumpable.trim(),
        "0",
        "fs.suid_dumpable {suid_dumpable:?} dumps undumpable processes too: the test needs 0"
    );
    let cores_dir = tempfile::tempdir().unwrap();
    let _pattern = CoresInto::dir(cores_dir.path());
    let domain = Domain::new();

    let plain = tempfile::tempdir().unwrap();
    let (dumped, left) = aborted(plain.path(), &domain, "", cores_dir.path());
    assert!(
        dumped && left.len() == 1,
        "recd without keys, aborted, should leave a core file here: dumped {dumped}, {left:?}"
    );
    std::fs::remove_file(&left[0]).unwrap();

    let keyed = tempfile::tempdir().unwrap();
    let (key, _) = openssl_keys(keyed.path(), 0o600);
    let fleet = age::x25519::Identity::generate().to_public();
    let config =
        format!("[signing]\nkey_file = {key:?}\n\n[encryption]\nrecipients = \"{fleet}\"\n");
    let (dumped, left) = aborted(keyed.path(), &domain, &config, cores_dir.path());
    assert!(
        !dumped && left.is_empty(),
        "recd sealing and signing left a core file: dumped {dumped}, {left:?}"
    );
}
