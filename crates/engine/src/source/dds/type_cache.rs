//! Message definitions learnt from the network, kept in the state directory by type hash
//! (`<dir>/RIHS01_<hex>.msg`, the full `ros2msg` text), so that a type is asked for once
//! per machine rather than once per session.

use std::path::{Path, PathBuf};

use recd_ros2::type_hash;

/// The file of `hash`, or `None` when `hash` is not a type hash (it names no file then).
fn file(dir: &Path, hash: &str) -> Option<PathBuf> {
    let checked = type_hash::from_user_data(format!("typehash={hash};").as_bytes())?;
    (checked == hash).then(|| dir.join(format!("{hash}.msg")))
}

/// The definition kept for `hash`, if any.
pub(in crate::source) fn load(dir: &Path, hash: &str) -> Option<String> {
    std::fs::read_to_string(file(dir, hash)?).ok()
}

/// Keeps `definition` for `hash`: written beside and renamed into place, so that a
/// reader never sees half a file.
pub(in crate::source) fn store(dir: &Path, hash: &str, definition: &str) -> std::io::Result<()> {
    let Some(path) = file(dir, hash) else {
        return Err(std::io::Error::other(format!(
            "{hash:?} is not a type hash"
        )));
    };
    std::fs::create_dir_all(dir)?;
    let partial = dir.join(format!(".{hash}.msg.{}", std::process::id()));
    std::fs::write(&partial, definition)?;
    std::fs::rename(&partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_definitions_load_by_hash() {
        let dir = tempfile::tempdir().unwrap();
        let types = dir.path().join("types");
        let hash = format!("RIHS01_{}", "ab".repeat(32));
        assert_eq!(load(&types, &hash), None);
        store(&types, &hash, "string data\n").unwrap();
        assert_eq!(load(&types, &hash).as_deref(), Some("string data\n"));
        assert!(types.join(format!("{hash}.msg")).is_file());
        // Only hashes name files.
        assert!(store(&types, "../escape", "x").is_err());
        assert_eq!(load(&types, "../escape"), None);
        let upper = format!("RIHS01_{}", "AB".repeat(32));
        assert_eq!(load(&types, &upper), None);
    }
}
