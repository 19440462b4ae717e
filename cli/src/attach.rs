//! What `rec start --metadata KEY=VALUE` and `--attach FILE` put into every file of a
//! session, checked and read before anything starts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use recd_control::{AttachedFile, MAX_ATTACHMENT_BYTES};

use crate::format;

/// Parses one `--metadata KEY=VALUE`.
pub fn parse_metadata_entry(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!(
            "`{text}` is not KEY=VALUE (e.g. vehicle=test-car-3)"
        )),
    }
}

/// The `--metadata` entries as one record; a key given twice is refused.
pub fn metadata(entries: &[(String, String)]) -> Result<BTreeMap<String, String>, String> {
    let mut metadata = BTreeMap::new();
    for (key, value) in entries {
        if metadata.insert(key.clone(), value.clone()).is_some() {
            return Err(format!("--metadata {key} is given more than once"));
        }
    }
    Ok(metadata)
}

/// Reads the `--attach` files: each must be a readable regular file, no two may share a
/// name, and together they may hold at most [`MAX_ATTACHMENT_BYTES`].
pub fn read_attachments(paths: &[PathBuf]) -> Result<Vec<AttachedFile>, String> {
    let mut files: Vec<AttachedFile> = Vec::with_capacity(paths.len());
    let mut total = 0;
    for path in paths {
        let file = read_attachment(path)?;
        if files.iter().any(|f| f.name == file.name) {
            return Err(format!("two attachments are named {}", file.name));
        }
        total += file.data.len();
        if total > MAX_ATTACHMENT_BYTES {
            return Err(format!(
                "--attach {}: the attachments would hold {} together, more than the {} a session may attach (each file of the session holds them)",
                path.display(),
                format::bytes(total as u64),
                format::bytes(MAX_ATTACHMENT_BYTES as u64),
            ));
        }
        files.push(file);
    }
    Ok(files)
}

fn read_attachment(path: &Path) -> Result<AttachedFile, String> {
    let refused = |why: String| format!("--attach {}: {why}", path.display());
    let meta = std::fs::metadata(path).map_err(|e| refused(e.to_string()))?;
    if !meta.is_file() {
        return Err(refused("not a regular file".into()));
    }
    if meta.len() > MAX_ATTACHMENT_BYTES as u64 {
        return Err(refused(format!(
            "{} is more than the {} a session may attach",
            format::bytes(meta.len()),
            format::bytes(MAX_ATTACHMENT_BYTES as u64)
        )));
    }
    let data = std::fs::read(path).map_err(|e| refused(e.to_string()))?;
    let create_time_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    Ok(AttachedFile {
        name: path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        media_type: mime_guess::from_path(path)
            .first_or_octet_stream()
            .to_string(),
        create_time_ns,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_entries_are_key_equals_value_each_key_once() {
        assert_eq!(
            parse_metadata_entry("driver=a=b").unwrap(),
            ("driver".to_string(), "a=b".to_string())
        );
        assert!(parse_metadata_entry("=x")
            .unwrap_err()
            .contains("KEY=VALUE"));
        assert!(parse_metadata_entry("novalue").is_err());
        let twice = [
            ("k".to_string(), "1".to_string()),
            ("k".to_string(), "2".to_string()),
        ];
        assert!(metadata(&twice).unwrap_err().contains("more than once"));
    }

    #[test]
    fn missing_oversized_and_same_named_attachments_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.yaml");
        let error = read_attachments(&[missing]).unwrap_err();
        assert!(
            error.contains("missing.yaml") && error.contains("No such file"),
            "{error}"
        );

        let big = dir.path().join("big.bin");
        std::fs::write(&big, vec![0u8; MAX_ATTACHMENT_BYTES + 1]).unwrap();
        let error = read_attachments(&[big]).unwrap_err();
        assert!(error.contains("more than the 4.0 MiB"), "{error}");

        let calibration = dir.path().join("calibration.yaml");
        std::fs::write(&calibration, "k: 1\n").unwrap();
        let read = read_attachments(std::slice::from_ref(&calibration)).unwrap();
        assert_eq!(read[0].name, "calibration.yaml");
        assert_eq!(read[0].data, b"k: 1\n");
        assert!(read[0].create_time_ns > 0);
        let error = read_attachments(&[calibration.clone(), calibration]).unwrap_err();
        assert!(error.contains("two attachments"), "{error}");
    }
}
