//! A cheap test of whether the set of iceoryx2 services changed since the last look.
//!
//! `Service::list` reads and parses every service's static config and the state of every
//! node attached to it; doing that each discovery round was most of an idle recorder's
//! CPU. The static configs are files in one directory, and a service still being created
//! keeps its file writable until it is complete, so the names and modes of those files
//! change exactly when a full listing could find something new. Creating or removing a
//! file changes the directory's modification time, so while that time is old and no
//! file is half-made, a single `stat` of the directory answers.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use iceoryx2::config::Config;

/// The static-config directory of one iceoryx2 domain and what it held at the last look.
pub(crate) struct ServiceDirectory {
    path: PathBuf,
    prefix: String,
    suffix: String,
    last: Option<Vec<(OsString, u32)>>,
    last_modified: Option<SystemTime>,
}

/// A directory modified more recently than this is read in full: its time stamp comes
/// from a coarse clock, so a later change might not move it.
const SETTLE: Duration = Duration::from_secs(1);

/// The owner-write bit, which iceoryx2 clears once a service's static config is complete.
const BEING_CREATED: u32 = 0o200;

impl ServiceDirectory {
    /// The directory of the services under `config` (its root, service directory, prefix
    /// and suffix).
    pub fn new(config: &Config) -> Self {
        Self {
            path: PathBuf::from(config.global.service_dir().to_string()),
            prefix: config.global.prefix.to_string(),
            suffix: config
                .global
                .service
                .static_config_storage_suffix
                .to_string(),
            last: None,
            last_modified: None,
        }
    }

    /// True when the service files differ from the last call (always on the first call,
    /// and whenever the directory cannot be read).
    pub fn changed(&mut self) -> bool {
        let modified = std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok();
        let settled = modified.is_some_and(|m| m.elapsed().is_ok_and(|age| age > SETTLE));
        let all_complete = self
            .last
            .as_ref()
            .is_some_and(|files| files.iter().all(|(_, mode)| mode & BEING_CREATED == 0));
        if settled && all_complete && modified == self.last_modified {
            return false;
        }
        self.last_modified = modified;
        let current = self.snapshot();
        let changed = current.is_none() || current != self.last;
        self.last = current;
        changed
    }

    /// Forgets the last look, so the next [`changed`](Self::changed) is true.
    pub fn forget(&mut self) {
        self.last = None;
    }

    fn snapshot(&self) -> Option<Vec<(OsString, u32)>> {
        let mut entries: Vec<(OsString, u32)> = std::fs::read_dir(&self.path)
            .ok()?
            .filter_map(Result::ok)
            .filter(|entry| {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                name.starts_with(&self.prefix) && name.ends_with(&self.suffix)
            })
            .map(|entry| {
                let mode = entry.metadata().map_or(0, |m| m.permissions().mode());
                (entry.file_name(), mode)
            })
            .collect();
        entries.sort_unstable();
        Some(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iceoryx2::prelude::{Path, SemanticString};

    fn directory_in(root: &std::path::Path) -> ServiceDirectory {
        let mut config = Config::default();
        config
            .global
            .set_root_path(&Path::new(root.to_str().unwrap().as_bytes()).unwrap());
        ServiceDirectory::new(&config)
    }

    #[test]
    fn sees_new_removed_and_completed_service_files_only() {
        let root = tempfile::tempdir().unwrap();
        let mut dir = directory_in(root.path());
        assert!(dir.changed(), "first look, directory missing");
        std::fs::create_dir_all(&dir.path).unwrap();
        assert!(dir.changed(), "directory appeared");
        assert!(!dir.changed());

        let service = dir.path.join(format!("{}abc{}", dir.prefix, dir.suffix));
        std::fs::write(&service, b"x").unwrap();
        std::fs::set_permissions(&service, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(dir.changed(), "service file created");
        assert!(!dir.changed());
        std::fs::set_permissions(&service, std::fs::Permissions::from_mode(0o400)).unwrap();
        assert!(dir.changed(), "service file completed");

        std::fs::write(dir.path.join("unrelated.txt"), b"x").unwrap();
        assert!(!dir.changed(), "other files do not count");

        dir.forget();
        assert!(dir.changed());
        std::fs::remove_file(&service).unwrap();
        assert!(dir.changed(), "service file removed");
    }

    #[test]
    fn a_settled_directory_is_judged_by_its_time_stamp() {
        let root = tempfile::tempdir().unwrap();
        let mut dir = directory_in(root.path());
        std::fs::create_dir_all(&dir.path).unwrap();
        let service = dir.path.join(format!("{}abc{}", dir.prefix, dir.suffix));
        std::fs::write(&service, b"x").unwrap();
        std::fs::set_permissions(&service, std::fs::Permissions::from_mode(0o400)).unwrap();
        let age_directory = |dir: &ServiceDirectory| {
            let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
            std::fs::File::open(&dir.path)
                .unwrap()
                .set_modified(an_hour_ago)
                .unwrap();
        };
        age_directory(&dir);
        assert!(dir.changed());
        assert!(!dir.changed(), "settled, nothing new");

        let other = dir.path.join(format!("{}def{}", dir.prefix, dir.suffix));
        std::fs::write(&other, b"x").unwrap();
        assert!(dir.changed(), "a new file moves the time stamp");
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o600)).unwrap();
        age_directory(&dir);
        assert!(dir.changed(), "time stamp moved back");
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o400)).unwrap();
        assert!(
            dir.changed(),
            "a half-made file is watched until it is complete"
        );
        assert!(!dir.changed());
    }
}
