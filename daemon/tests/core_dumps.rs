//! recd holding keys (sealing, signing) leaves no core file when it is aborted, as
//! systemd's watchdog aborts it, even where `ulimit -c` allows one; the same recd without
//! keys does leave one, which shows the test's core pattern and limit at work. Its keys
//! live in pages locked into memory and left out of core dumps (`/proc/PID/smaps` shows
//! them), and where no page can be locked it says at start-up that keys may reach swap.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_testkit::{openssl_keys, wait_until, Domain, Recd};

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
    let config = keys_config(keyed.path());
    let (dumped, left) = aborted(keyed.path(), &domain, &config, cores_dir.path());
    assert!(
        !dumped && left.is_empty(),
        "recd sealing and signing left a core file: dumped {dumped}, {left:?}"
    );
}

/// Mappings of process `pid` left out of core dumps (`VmFlags` `dd`): how many of them are
/// locked into memory too (`lo`), and how many are not.
fn undumped_mappings(pid: u32) -> (usize, usize) {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).expect("recd's smaps");
    let (mut locked, mut unlocked) = (0, 0);
    for flags in smaps.lines().filter_map(|l| l.strip_prefix("VmFlags:")) {
        let flags: Vec<&str> = flags.split_whitespace().collect();
        if flags.contains(&"dd") {
            if flags.contains(&"lo") {
                locked += 1;
            } else {
                unlocked += 1;
            }
        }
    }
    (locked, unlocked)
}

/// The sealed files in `root`'s data directory.
fn sealed_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root.join("data")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().ends_with(".age") {
                files.push(path);
            }
        }
    }
    files
}

/// `[signing]` with a key made in `dir`, and `[encryption]` to a fresh fleet key.
fn keys_config(dir: &Path) -> String {
    let (key, _) = openssl_keys(dir, 0o600);
    let fleet = age::x25519::Identity::generate().to_public();
    format!("[signing]\nkey_file = {key:?}\n\n[encryption]\nrecipients = \"{fleet}\"\n")
}

#[test]
fn recd_keeps_its_keys_in_locked_pages_left_out_of_core_dumps() {
    let domain = Domain::new();
    // Without keys: no page is both undumped and locked (the kernel's own undumped
    // mappings, such as [vvar], are not locked; the spill pools are locked, not undumped).
    let plain = tempfile::tempdir().unwrap();
    let recd = Recd::start(plain.path(), &domain);
    recd.rec_json(&["start", "--name", "drive", "--topic", "*"]);
    let (locked, kernel_undumped) = undumped_mappings(recd.pid());
    assert_eq!(locked, 0, "recd without keys has locked undumped pages");
    drop(recd);

    let keyed = tempfile::tempdir().unwrap();
    let config = keys_config(keyed.path());
    let recd = Recd::start_with(keyed.path(), &domain, &config, &[]);
    // Before any session: the signing key's page alone (start-up's probe page is gone).
    assert_eq!(
        undumped_mappings(recd.pid()),
        (1, kernel_undumped),
        "{}",
        recd.log()
    );
    recd.rec_json(&["start", "--name", "drive", "--topic", "*"]);
    assert!(
        wait_until(Duration::from_secs(10), || !sealed_files(keyed.path())
            .is_empty()),
        "the session opened no sealed file\n{}",
        recd.log()
    );
    let files = sealed_files(keyed.path()).len();
    // Each file being written holds its file key and its payload key in pages of their
    // own (and recd's map of the keys it keeps, a copy of the file key).
    let (locked, unlocked) = undumped_mappings(recd.pid());
    assert!(
        locked > 2 * files && unlocked == kernel_undumped,
        "{files} sealed file(s), {locked} locked undumped pages, {unlocked} unlocked\n{}",
        recd.log()
    );
    assert!(
        !recd.log().contains("keys may reach swap"),
        "{}",
        recd.log()
    );
    drop(recd);

    // No page can be locked (no lock budget, no CAP_IPC_LOCK): recd says so, and its key
    // is still left out of core dumps.
    let unlockable = tempfile::tempdir().unwrap();
    let config = keys_config(unlockable.path());
    let wrapper = [
        "setpriv",
        "--bounding-set=-ipc_lock",
        "prlimit",
        "--memlock=0:0",
        "--",
    ];
    let recd = Recd::start_wrapped(unlockable.path(), &domain, &wrapper, &config, "", &[]);
    let log = recd.log();
    let warning = log.lines().find(|l| l.contains("keys may reach swap"));
    assert!(
        warning.is_some_and(|w| w.contains("WARN")
            && w.contains("LimitMEMLOCK")
            && w.contains("CAP_IPC_LOCK")),
        "{log}"
    );
    assert_eq!(
        undumped_mappings(recd.pid()),
        (0, kernel_undumped + 1),
        "{log}"
    );
}
