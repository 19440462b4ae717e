//! Session names: they become directory names under the data directory, so only plain
//! names are accepted.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The longest session name.
const MAX_LEN: usize = 64;

/// Checks that `name` can be a directory name directly under the data directory.
pub fn validate(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a session name cannot be empty".into());
    }
    if name.len() > MAX_LEN {
        return Err(format!(
            "session name {name:?} is longer than {MAX_LEN} characters"
        ));
    }
    if name.contains('/') || name.contains("..") || name.starts_with('.') {
        return Err(format!(
            "session name {name:?} would leave the data directory: names cannot contain '/' or '..' or start with '.'"
        ));
    }
    if name == recd_chain::INCIDENTS_DIR {
        return Err(format!(
            "session name {name:?} is where recd keeps incidents' files; pick another"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "session name {name:?} contains {bad:?}; use letters, digits, '-', '_' and '.'"
        ));
    }
    Ok(())
}

/// A UTC time stamp for names: `20261121T185500Z`.
pub fn timestamp(at: SystemTime) -> String {
    humantime::format_rfc3339_seconds(at)
        .to_string()
        .replace(['-', ':'], "")
}

/// The directory a new session called `name` records into under `data_dir`: `<name>`
/// unless an older session's recordings (`.mcap` files) are there. Then the first
/// `<name>_2`, `<name>_3`, … without any, next to it, or inside it when `<name>` is a
/// file system mounted for this name's sessions (they stay on that disk). A session never
/// writes into an older one's directory.
pub fn fresh_directory(data_dir: &Path, name: &str) -> PathBuf {
    let first = data_dir.join(name);
    if !holds_recordings(&first) {
        return first;
    }
    let base = if is_mount_point(&first) {
        first
    } else {
        data_dir.to_path_buf()
    };
    (2u32..)
        .map(|n| base.join(format!("{name}_{n}")))
        .find(|path| !holds_recordings(path))
        .expect("some suffix is free")
}

/// A name for a session started without one: `session-<time stamp>`, with `-2`, `-3`, …
/// when `taken` says that one is in use (two starts within a second).
pub fn default_name(at: SystemTime, taken: impl Fn(&str) -> bool) -> String {
    let base = format!("session-{}", timestamp(at));
    std::iter::once(base.clone())
        .chain((2u32..).map(|n| format!("{base}-{n}")))
        .find(|name| !taken(name))
        .expect("some suffix is free")
}

/// Whether a file of this name is a recording: `….mcap`, or sealed `….mcap.age`.
pub fn is_recording_name(name: &str) -> bool {
    name.ends_with(".mcap") || name.ends_with(".mcap.age")
}

fn holds_recordings(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|entry| is_recording_name(&entry.file_name().to_string_lossy()))
    })
}

fn is_mount_point(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let device = |path: &Path| std::fs::metadata(path).map(|m| m.dev()).ok();
    match dir.parent() {
        Some(parent) => device(dir) != device(parent),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass_and_escapes_are_refused() {
        for good in ["drive1", "2026-11-21_run.3", "A"] {
            assert!(validate(good).is_ok(), "{good}");
        }
        for bad in [
            "", "..", "../etc", "a/b", "/abs", ".hidden", "sp ace", "x\n",
        ] {
            assert!(validate(bad).is_err(), "{bad:?}");
        }
        assert!(validate(&"x".repeat(65)).is_err());
    }

    #[test]
    fn time_stamps_are_compact_utc() {
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_795_000_000);
        assert_eq!(timestamp(at), "20261118T110640Z");
    }

    #[test]
    fn a_used_name_gets_a_directory_of_its_own() {
        let data = tempfile::tempdir().unwrap();
        assert_eq!(
            fresh_directory(data.path(), "drive"),
            data.path().join("drive")
        );
        // A directory without recordings (a mount point, with lost+found or ballast) is free.
        std::fs::create_dir_all(data.path().join("drive/lost+found")).unwrap();
        std::fs::write(data.path().join("drive/ballast"), b"x").unwrap();
        assert_eq!(
            fresh_directory(data.path(), "drive"),
            data.path().join("drive")
        );
        std::fs::write(data.path().join("drive/drive_1.mcap"), b"x").unwrap();
        assert_eq!(
            fresh_directory(data.path(), "drive"),
            data.path().join("drive_2")
        );
        std::fs::create_dir(data.path().join("drive_2")).unwrap();
        std::fs::write(data.path().join("drive_2/a.mcap"), b"x").unwrap();
        assert_eq!(
            fresh_directory(data.path(), "drive"),
            data.path().join("drive_3")
        );
    }

    #[test]
    fn default_names_within_one_second_differ() {
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_795_000_000);
        let first = default_name(at, |_| false);
        assert_eq!(first, "session-20261118T110640Z");
        let second = default_name(at, |name| name == first);
        assert_eq!(second, "session-20261118T110640Z-2");
    }
}
