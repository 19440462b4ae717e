//! What retention deletes, decided from what is on disk and what must stay: pure policy,
//! the time passed in, no file touched. The oldest finished files go first, those
//! already uploaded before the others; a file being written, pinned by an incident, or
//! (with `keep_until_uploaded`) still waiting for upload never goes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use recd_catalog::File;
use recd_control::{FileState, UploadState};

/// Why retention deletes, in the log's words, by bound.
pub const FOR_TOTAL: &str = "to keep within max_total_size";
/// See [`FOR_TOTAL`].
pub const FOR_RING: &str = "of the session's --max-files ring";
/// See [`FOR_TOTAL`].
pub const FOR_AGE: &str = "older than the session's --max-age";

/// What uploads ask of retention: files already uploaded go first, and with
/// `keep_until_uploaded` those still waiting for upload never go.
#[derive(Debug, Default)]
pub struct UploadGuard {
    /// The upload state of every queued file.
    pub states: HashMap<PathBuf, UploadState>,
    /// `[upload] keep_until_uploaded`.
    pub keep_until_uploaded: bool,
}

impl UploadGuard {
    fn uploaded(&self, file: &File) -> bool {
        self.states.get(&file.path) == Some(&UploadState::Uploaded)
    }

    /// The file must stay until it is uploaded.
    pub fn keeps(&self, file: &File) -> bool {
        self.keep_until_uploaded
            && self
                .states
                .get(&file.path)
                .is_some_and(|state| *state != UploadState::Uploaded)
    }

    /// `files` (oldest first) in the order retention deletes them: uploaded ones first.
    fn order<'a, T>(&self, files: &'a [T], file: impl Fn(&T) -> &File) -> Vec<&'a T> {
        let mut ordered: Vec<&T> = files.iter().collect();
        ordered.sort_by_key(|entry| !self.uploaded(file(entry)));
        ordered
    }
}

/// What retention must leave, whatever the bounds say.
#[derive(Debug, Default)]
pub struct Leave {
    /// The files sessions are writing now.
    pub writing: HashSet<PathBuf>,
    /// The files incidents pin (their windows' files and their own files).
    pub pinned: HashSet<PathBuf>,
    /// What uploads ask.
    pub uploads: UploadGuard,
}

/// A catalog file as it is on disk now.
#[derive(Debug, Clone)]
pub struct OnDisk {
    /// The catalog's file.
    pub file: File,
    /// Its size now.
    pub bytes: u64,
    /// The file system it is on.
    pub device: u64,
}

/// A file retention deletes, and for which bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doomed {
    /// The file.
    pub path: PathBuf,
    /// The bound, in words ([`FOR_TOTAL`], …).
    pub why: &'static str,
}

/// What one pass decided, bound after bound: a file doomed by one bound counts as gone
/// for the next.
#[derive(Default)]
pub struct Decided {
    /// The files to delete, in order.
    pub doomed: Vec<Doomed>,
    /// Files it would have deleted but keeps, as they wait for upload.
    pub kept_for_upload: usize,
    taken: HashSet<PathBuf>,
}

impl Decided {
    /// Whether `file` is doomed by a bound decided before.
    pub fn is_doomed(&self, path: &Path) -> bool {
        self.taken.contains(path)
    }

    /// Dooms `file` for `why` unless `leave` says it stays or `being_written` finds a
    /// writer on it; counts it as kept when it waits for upload. True when doomed.
    fn take(
        &mut self,
        file: &File,
        leave: &Leave,
        being_written: &dyn Fn(&Path) -> bool,
        why: &'static str,
    ) -> bool {
        if self.taken.contains(&file.path) {
            return false;
        }
        let finished = file.state.is_finished() || file.state == FileState::NeedsReindex;
        if !finished
            || leave.writing.contains(&file.path)
            || leave.pinned.contains(&file.path)
            || being_written(&file.path)
        {
            return false;
        }
        if leave.uploads.keeps(file) {
            self.kept_for_upload += 1;
            return false;
        }
        self.taken.insert(file.path.clone());
        self.doomed.push(Doomed {
            path: file.path.clone(),
            why,
        });
        true
    }
}

/// Dooms the oldest finished files of each file system whose recordings (`on_disk`,
/// oldest first) exceed `max_total` bytes.
pub fn over_total(
    decided: &mut Decided,
    on_disk: &[OnDisk],
    max_total: u64,
    leave: &Leave,
    being_written: &dyn Fn(&Path) -> bool,
) {
    let mut by_device: BTreeMap<u64, Vec<&OnDisk>> = BTreeMap::new();
    for entry in on_disk {
        by_device.entry(entry.device).or_default().push(entry);
    }
    for files in by_device.values() {
        let mut total: u64 = files.iter().map(|f| f.bytes).sum();
        for entry in leave.uploads.order(files, |entry| &entry.file) {
            if total <= max_total {
                break;
            }
            if decided.take(&entry.file, leave, being_written, FOR_TOTAL) {
                total -= entry.bytes;
            }
        }
    }
}

/// Dooms the oldest finished of a session's recording files (oldest first, the one being
/// written included, those gone or doomed already left out) while it has more than
/// `max_files`.
pub fn over_ring(
    decided: &mut Decided,
    files: &[File],
    max_files: u32,
    leave: &Leave,
    being_written: &dyn Fn(&Path) -> bool,
) {
    let files: Vec<&File> = (files.iter())
        .filter(|f| !matches!(f.state, FileState::Deleted | FileState::Missing))
        .filter(|f| !decided.is_doomed(&f.path))
        .collect();
    let mut excess = files.len().saturating_sub(max_files as usize);
    for file in leave.uploads.order(&files, |file| file) {
        if excess == 0 {
            break;
        }
        if decided.take(file, leave, being_written, FOR_RING) {
            excess -= 1;
        }
    }
}

/// Dooms the files of a session whose newest message is older than its `--max-age`
/// (`aged`, oldest first).
pub fn over_age(
    decided: &mut Decided,
    aged: &[File],
    leave: &Leave,
    being_written: &dyn Fn(&Path) -> bool,
) {
    for file in aged {
        decided.take(file, leave, being_written, FOR_AGE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, state: FileState) -> File {
        File {
            session: 1,
            path: PathBuf::from(format!("/d/s/{name}")),
            bytes: 100,
            messages: 1,
            state,
        }
    }

    fn on_disk(name: &str, device: u64) -> OnDisk {
        OnDisk {
            file: file(name, FileState::Complete),
            bytes: 100,
            device,
        }
    }

    fn names(decided: &Decided) -> Vec<String> {
        (decided.doomed.iter())
            .map(|d| d.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    const NOBODY_WRITES: &dyn Fn(&Path) -> bool = &|_| false;

    #[test]
    fn the_total_dooms_the_oldest_per_file_system_uploaded_first_and_never_what_stays() {
        let files = [
            on_disk("a", 1),
            on_disk("b", 1),
            on_disk("c", 1),
            on_disk("d", 1),
            on_disk("x", 2),
        ];
        let mut leave = Leave::default();
        leave.pinned.insert(PathBuf::from("/d/s/a"));
        leave
            .uploads
            .states
            .insert(PathBuf::from("/d/s/c"), UploadState::Uploaded);
        let mut decided = Decided::default();
        over_total(&mut decided, &files, 200, &leave, NOBODY_WRITES);
        // 400 bytes on device 1 above 200: c (uploaded) first, then b; a is pinned.
        assert_eq!(names(&decided), ["c", "b"]);
        assert!(decided.doomed.iter().all(|d| d.why == FOR_TOTAL));

        let mut decided = Decided::default();
        let written = |path: &Path| path.ends_with("b");
        leave.uploads.keep_until_uploaded = true;
        leave
            .uploads
            .states
            .insert(PathBuf::from("/d/s/d"), UploadState::Queued);
        over_total(&mut decided, &files, 200, &leave, &written);
        assert_eq!(names(&decided), ["c"], "b has a writer, d waits for upload");
        assert_eq!(decided.kept_for_upload, 1);
    }

    #[test]
    fn the_ring_counts_what_is_left_and_skips_what_cannot_go() {
        let files = [
            file("gone", FileState::Deleted),
            file("a", FileState::Complete),
            file("b", FileState::NeedsReindex),
            file("c", FileState::Complete),
            file("open", FileState::Recording),
        ];
        let mut decided = Decided::default();
        over_total(
            &mut decided,
            &[on_disk("a", 1)],
            0,
            &Leave::default(),
            NOBODY_WRITES,
        );
        assert_eq!(names(&decided), ["a"]);
        // a, doomed by the total, counts as gone: b, c and the open file are 3 for 2.
        over_ring(&mut decided, &files, 2, &Leave::default(), NOBODY_WRITES);
        assert_eq!(names(&decided), ["a", "b"]);
        assert_eq!(decided.doomed[1].why, FOR_RING);
        // The open file never goes, whatever the ring says.
        let mut decided = Decided::default();
        over_ring(&mut decided, &files, 0, &Leave::default(), NOBODY_WRITES);
        assert_eq!(names(&decided), ["a", "b", "c"]);
    }

    #[test]
    fn age_dooms_each_aged_file_that_may_go() {
        let aged = [
            file("a", FileState::Complete),
            file("b", FileState::Complete),
        ];
        let mut leave = Leave::default();
        leave.writing.insert(PathBuf::from("/d/s/b"));
        let mut decided = Decided::default();
        over_age(&mut decided, &aged, &leave, NOBODY_WRITES);
        assert_eq!(names(&decided), ["a"]);
        assert_eq!(decided.doomed[0].why, FOR_AGE);
    }
}
