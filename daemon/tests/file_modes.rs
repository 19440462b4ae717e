//! recd's own files are not for everyone: started with umask 022 (what a shell or an
//! init system commonly gives), the recordings, their directories and the catalog it
//! makes are still 0640 / 0750 at most, readable by its group (members read them with
//! `rec`) and by nobody else. Camera frames of public roads are personal data.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_testkit::{finish_load, stopped_files, Domain, Recd, RecdLoad};

/// Every file and directory under `dir`, `dir` included.
fn everything_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = vec![dir.to_path_buf()];
    let mut next = 0;
    while next < found.len() {
        let path = found[next].clone();
        next += 1;
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("list a directory") {
                found.push(entry.expect("a directory entry").path());
            }
        }
    }
    found
}

#[test]
fn recordings_their_directories_and_the_catalog_are_closed_to_others_whatever_the_umask() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start_wrapped(
        root.path(),
        &domain,
        &["sh", "-c", "umask 022 && exec \"$@\"", "sh"],
        "",
        "",
        &[],
    );
    recd.rec_json(&["start", "--name", "modes", "--topic", "fm/*"]);
    let load = domain.load(
        &RecdLoad::new("fm/")
            .cameras(0)
            .small_topics(1)
            .small_rate(100)
            .count(50)
            .duration(Duration::from_secs(20))
            .wait_subscribers(1),
    );
    finish_load(load);
    let files = stopped_files(&recd.rec_json(&["stop", "modes"]));
    assert!(!files.is_empty(), "the session wrote a file");

    let data = root.path().join("data");
    let state = root.path().join("state");
    let made: Vec<PathBuf> = everything_under(&data)
        .into_iter()
        .chain(everything_under(&state))
        .collect();
    for path in files.iter().chain(&made) {
        let metadata = std::fs::metadata(path).expect("what recd made is there");
        let mode = metadata.permissions().mode() & 0o777;
        assert_eq!(
            mode & 0o007,
            0,
            "{} is {mode:o}: others may not read, write or enter what recd makes",
            path.display()
        );
    }
    let recording = std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(recording, 0o640, "{} is {recording:o}", files[0].display());
    let directory = files[0].parent().unwrap();
    let directory_mode = std::fs::metadata(directory).unwrap().permissions().mode() & 0o777;
    assert_eq!(directory_mode, 0o750, "{}", directory.display());
    let catalog = made
        .iter()
        .find(|path| path.extension().is_some_and(|e| e == "sqlite" || e == "db"))
        .unwrap_or_else(|| panic!("a catalog among {made:?}"));
    let catalog_mode = std::fs::metadata(catalog).unwrap().permissions().mode() & 0o777;
    assert_eq!(catalog_mode, 0o640, "{}", catalog.display());
}
