//! Each session directory's rosbag2 `metadata.yaml`, kept to the files on disk: a closed
//! ROS 2 file enters its directory's bag, and a file deleted or found gone leaves it, so
//! that ROS 2 tools opening the directory never look for a file that is not there. The
//! bag of a directory none of whose files closed since recd started (a session recorded
//! before a restart) is read back from the catalog's files the first time one leaves.
//!
//! The bags' lock is held while a directory's `metadata.yaml` is written (a few KB), so
//! that two renewals of one bag never interleave; nothing else waits for it.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use recd_control::FileState;
use recd_storage::{BagPart, BAG_METADATA_FILE};

use super::FileLife;
use crate::locks::lock;

/// The ROS 2 files of each directory with a bag, by path (name order is the order they
/// were written).
#[derive(Default)]
pub(super) struct Bags(Mutex<HashMap<PathBuf, BTreeMap<PathBuf, BagPart>>>);

impl FileLife {
    /// The closed file at `path` enters its directory's bag when it holds ROS 2 topics
    /// only. Not a sealed file: `metadata.yaml` would say in clear what it holds.
    pub(super) fn enter_bag(&self, path: &Path) {
        if recd_storage::is_sealed(path) {
            return;
        }
        let Some(part @ BagPart::Ros2(_)) = read_part(path) else {
            return;
        };
        let Some(dir) = path.parent() else { return };
        let mut bags = lock(&self.bags.0);
        let files = bags.entry(dir.to_path_buf()).or_default();
        files.insert(path.to_path_buf(), part);
        self.write_bag(dir, files);
    }

    /// The file at `path` left the disk (the catalog says so already): its directory's
    /// bag no longer lists it.
    pub(super) fn leave_bag(&self, path: &Path) {
        let Some(dir) = path.parent() else { return };
        {
            let mut bags = lock(&self.bags.0);
            if let Some(files) = bags.get_mut(dir) {
                if files.remove(path).is_some() {
                    self.write_bag(dir, files);
                }
                return;
            }
        }
        if !dir.join(BAG_METADATA_FILE).exists() {
            return;
        }
        let files = self.bag_on_disk(path, dir);
        let mut bags = lock(&self.bags.0);
        // Another file's leaving may have read the bag back meanwhile.
        let files = bags.entry(dir.to_path_buf()).or_insert(files);
        files.remove(path);
        self.write_bag(dir, files);
    }

    /// The ROS 2 files in `dir` of the session of the file at `left` that the catalog
    /// has on disk, read back.
    fn bag_on_disk(&self, left: &Path, dir: &Path) -> BTreeMap<PathBuf, BagPart> {
        let listed = {
            let catalog = self.catalog();
            match catalog.file(left) {
                Ok(Some(file)) => catalog.files(file.session),
                Ok(None) => Ok(Vec::new()),
                Err(error) => Err(error),
            }
        };
        let listed = match listed {
            Ok(files) => files,
            Err(error) => {
                tracing::error!(file = %left.display(), "cannot list the session's files for metadata.yaml: {error}");
                Vec::new()
            }
        };
        listed
            .into_iter()
            .filter(|file| !matches!(file.state, FileState::Deleted | FileState::Missing))
            .filter(|file| file.path.parent() == Some(dir) && !recd_storage::is_sealed(&file.path))
            .filter_map(|file| match read_part(&file.path) {
                Some(part @ BagPart::Ros2(_)) => Some((file.path, part)),
                _ => None,
            })
            .collect()
    }

    /// Rewrites `dir/metadata.yaml` to list `files`, entering it in the chain.
    fn write_bag(&self, dir: &Path, files: &BTreeMap<PathBuf, BagPart>) {
        let parts: Vec<BagPart> = files.values().cloned().collect();
        match recd_storage::write_bag_metadata(dir, &parts) {
            Ok(true) => self.rewritten(dir, &dir.join(BAG_METADATA_FILE)),
            Ok(false) => {}
            Err(error) => tracing::warn!("{error}"),
        }
    }
}

/// What the file at `path` is to rosbag2; `None` (logged) when it cannot be read back.
fn read_part(path: &Path) -> Option<BagPart> {
    // Reading a file back must not take recd down, whatever the file holds.
    let part = std::panic::catch_unwind(|| recd_storage::bag_part(path).map_err(|e| e.to_string()))
        .unwrap_or_else(|panic| Err(crate::recovery::panic_text(&panic)));
    match part {
        Ok(part) => Some(part),
        Err(error) => {
            tracing::warn!(file = %path.display(), "cannot read the file back for metadata.yaml: {error}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};

    use recd_catalog::Catalog;
    use recd_control::{FileEntry, FinishMode};
    use recd_engine::ClosedFile;
    use recd_testkit::bag_files;

    use super::*;
    use crate::files::{Closed, Deleted, Deletion};

    /// A ROS 2 file as a DDS session writes it: one `/chatter` message.
    fn ros2_file(path: &Path) {
        let mut writer = mcap::WriteOptions::new()
            .profile("ros2")
            .create(std::io::BufWriter::new(
                std::fs::File::create(path).unwrap(),
            ))
            .unwrap();
        let schema = writer
            .add_schema("std_msgs/msg/String", "ros2msg", b"string data\n")
            .unwrap();
        let channel = writer
            .add_channel(schema, "/chatter", "cdr", &BTreeMap::new())
            .unwrap();
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: 1,
            log_time: 1,
            publish_time: 1,
        };
        let hello = [0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0, 0];
        writer.write_to_known_channel(&header, &hello).unwrap();
        writer.finish().unwrap();
    }

    #[test]
    fn the_bag_lists_the_files_on_disk_as_they_close_are_deleted_and_go_missing() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        let bag = data.join("drive");
        std::fs::create_dir_all(&bag).unwrap();
        let catalog = Catalog::open(root.path(), &data).unwrap();
        let session = catalog.begin_session("drive", &bag, "{}", 0).unwrap();
        let catalog = Arc::new(Mutex::new(catalog));
        let life = || FileLife::new(catalog.clone(), None, None, None, false);
        let files = life();
        let names = [
            "drive_0000.mcap",
            "drive_0001.mcap",
            "drive_0002.mcap",
            "drive_0003.mcap",
        ];
        for name in names {
            let path = bag.join(name);
            files.created(session, &path);
            ros2_file(&path);
            let file = ClosedFile {
                path: path.clone(),
                bytes: std::fs::metadata(&path).unwrap().len(),
                messages: 1,
                indexed: true,
                health: None,
                time_range: Some((1, 1)),
                stored: None,
            };
            files.closed(Closed {
                session,
                file: &file,
                finish: FinishMode::None,
                upload: None,
            });
        }
        assert_eq!(bag_files(&bag), names);

        let retention = Deletion::Retention { why: "in a test" };
        let deleted = files.delete(&bag.join(names[0]), retention).unwrap();
        assert_eq!(deleted, Deleted::Done);
        assert_eq!(bag_files(&bag), names[1..]);

        // After a restart, the bag is read back from the catalog's files on disk.
        drop(files);
        let files = life();
        let deleted = files.delete(&bag.join(names[1]), retention).unwrap();
        assert_eq!(deleted, Deleted::Done);
        assert_eq!(bag_files(&bag), names[2..]);

        // Gone without recd: no longer listed either.
        std::fs::remove_file(bag.join(names[2])).unwrap();
        files.found_missing(&bag.join(names[2]));
        assert_eq!(bag_files(&bag), names[3..]);

        // Gone while the session ran, as its stop report says.
        let last = bag.join(names[3]);
        std::fs::remove_file(&last).unwrap();
        let missing = FileEntry {
            path: last,
            bytes: 1,
            messages: 1,
            state: FileState::Missing,
            upload: None,
            health: None,
            damaged_at: None,
        };
        files.session_stopped(session, &[missing]).unwrap();
        assert!(bag_files(&bag).is_empty());
    }
}
