//! Which files a command's argument means: an MCAP file, a directory of them, or a session
//! of the catalog by name (`rec info`, `rec play`, `rec reindex`, `rec upload`).

use std::path::{Path, PathBuf};

use recd_control::{Request, Response};

use crate::request::{ask, unexpected};

/// Whether `arg` can only be a path, never a session name: it has a `/` in it or ends in
/// `.mcap` (or sealed `.age`). Session names are single path components without that
/// extension.
pub fn names_a_path(arg: &Path) -> bool {
    arg.as_os_str().as_encoded_bytes().contains(&b'/')
        || arg.extension().is_some_and(|e| e == "mcap" || e == "age")
}

/// Whether a file of this name is a recording: `….mcap`, or sealed `….mcap.age`.
fn is_recording(path: &Path) -> bool {
    path.file_name()
        .map(|name| name.to_string_lossy())
        .is_some_and(|name| name.ends_with(".mcap") || name.ends_with(".mcap.age"))
}

/// Refuses sealed files, which a command that reads messages cannot open without a key.
pub fn refuse_sealed(files: &[PathBuf]) -> Result<(), String> {
    match files.iter().find(|file| recd_storage::is_sealed(file)) {
        Some(sealed) => Err(format!(
            "{} is sealed (an age file): decrypt it first with `rec decrypt {} -i IDENTITY`",
            sealed.display(),
            sealed.display()
        )),
        None => Ok(()),
    }
}

/// The MCAP files `path` stands for: a file itself, a directory's `.mcap` files in name
/// order (recd's split order), or the catalog's files of a session of that name that are
/// still on disk.
pub fn files_of(socket: &Path, path: &Path) -> Result<Vec<PathBuf>, String> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if path.is_dir() {
        let files =
            mcap_files_in(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if files.is_empty() {
            return Err(format!("{} holds no .mcap files", path.display()));
        }
        return Ok(files);
    }
    let name = path.to_string_lossy();
    if names_a_path(path) {
        return Err(format!("{name}: No such file or directory"));
    }
    let files: Vec<PathBuf> = session_files(socket, &name)
        .map_err(|e| format!("{name} is neither a file nor a directory, and as a session: {e}"))?
        .into_iter()
        .filter(|f| f.is_file())
        .collect();
    if files.is_empty() {
        return Err(format!("session {name} has no files left on disk"));
    }
    Ok(files)
}

/// The catalog's files of a session, as recd lists them (also those no longer on disk).
pub fn session_files(socket: &Path, name: &str) -> Result<Vec<PathBuf>, String> {
    match ask(
        socket,
        &Request::Files {
            name: name.to_string(),
        },
    )? {
        Response::Files { session } => Ok(session.files.into_iter().map(|f| f.path).collect()),
        other => Err(unexpected(&other)),
    }
}

/// The `.mcap` (and sealed `.mcap.age`) files directly in `dir`, in name order (recd's
/// split order).
pub fn mcap_files_in(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| is_recording(p))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_or_the_mcap_extension_names_a_path() {
        assert!(names_a_path(Path::new("drive1/a_0000.mcap")));
        assert!(names_a_path(Path::new("a_0000.mcap")));
        assert!(names_a_path(Path::new("./drive1")));
        assert!(names_a_path(Path::new("drive1/")));
        assert!(!names_a_path(Path::new("drive1")));
        assert!(!names_a_path(Path::new("session-20261124T185800Z")));
    }

    #[test]
    fn a_directory_means_its_mcap_files_in_split_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "d_0001.mcap",
            "d_0000.mcap",
            "metadata.yaml",
            "d_0010.mcap",
            "s_0000.mcap.age",
            "x.age",
        ] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let files = files_of(Path::new("/nonexistent.sock"), dir.path()).unwrap();
        let names: Vec<_> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "d_0000.mcap",
                "d_0001.mcap",
                "d_0010.mcap",
                "s_0000.mcap.age"
            ]
        );
        assert!(refuse_sealed(&files).unwrap_err().contains("rec decrypt"));
        assert!(refuse_sealed(&files[..3]).is_ok());
    }

    #[test]
    fn a_missing_path_is_not_taken_for_a_session() {
        let error = files_of(Path::new("/nonexistent.sock"), Path::new("gone/x.mcap")).unwrap_err();
        assert_eq!(error, "gone/x.mcap: No such file or directory");
    }
}
