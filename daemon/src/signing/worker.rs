//! The signing thread's work: reading a closed file back, and appending its entry to its
//! session's chain, then queueing the chain for upload.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use recd_catalog::Catalog;
use recd_chain::{ChainWriter, Kind, NewEntry, SigningKey, CHAIN_FILE, INCIDENTS_DIR};

use crate::uploads::Uploads;

/// Chains kept open at most (a daemon runs few sessions at once).
const OPEN_CHAINS: usize = 32;

/// The signing thread's state: the key and the chains it appended to lately.
pub struct Chaining {
    key: SigningKey,
    catalog: Arc<Mutex<Catalog>>,
    uploads: Option<Arc<Uploads>>,
    chains: HashMap<PathBuf, ChainWriter>,
}

impl Chaining {
    /// Chains signed with `key`, uploaded through `uploads` as their files are.
    pub fn new(
        key: SigningKey,
        catalog: Arc<Mutex<Catalog>>,
        uploads: Option<Arc<Uploads>>,
    ) -> Self {
        Self {
            key,
            catalog,
            uploads,
            chains: HashMap::new(),
        }
    }

    /// Enters the file at `path` in the chain of session directory `dir` as `kind`. Only
    /// a recorded or cut file starts a chain: a session recorded before signing was on
    /// gets none for its finished files.
    pub fn enter(&mut self, dir: &Path, path: &Path, kind: Kind) {
        let name = name_in_chain(dir, path);
        let starts = matches!(kind, Kind::Recorded | Kind::Cut);
        if !starts && !self.chains.contains_key(dir) && !dir.join(CHAIN_FILE).exists() {
            return;
        }
        let (bytes, sha256) = if kind.is_deletion() {
            (0, [0; 32])
        } else {
            match recd_chain::file_digest(path) {
                Ok(digest) => digest,
                Err(error) => {
                    tracing::warn!(file = %path.display(), "cannot read the file back to chain it: {error}");
                    return;
                }
            }
        };
        if self.chains.len() >= OPEN_CHAINS && !self.chains.contains_key(dir) {
            self.chains.clear();
        }
        let chain = match self.chains.entry(dir.to_path_buf()) {
            std::collections::hash_map::Entry::Occupied(open) => open.into_mut(),
            std::collections::hash_map::Entry::Vacant(vacant) => match ChainWriter::open(dir) {
                Ok(chain) => vacant.insert(chain),
                Err(error) => {
                    tracing::error!(file = %path.display(), "the file is not chained: {error}");
                    return;
                }
            },
        };
        if !kind.is_deletion() && chain.is_current(&name, bytes, &sha256) {
            return;
        }
        let new = NewEntry {
            kind,
            file: name,
            bytes,
            sha256,
            time_ns: crate::clock::now_ns().max(0) as u64,
        };
        match chain.append(&self.key, new) {
            Ok(entry) => {
                tracing::debug!(file = %path.display(), kind = %kind, seq = entry.seq, "chained");
            }
            Err(error) => {
                tracing::error!(file = %path.display(), "the file is not chained: {error}");
                // Read again before the next append: the file may hold part of a line.
                self.chains.remove(dir);
                return;
            }
        }
        let chain_path = chain.path().to_path_buf();
        if let Some(uploads) = &self.uploads {
            if let Err(error) = uploads.queue_chain(&self.catalog, &chain_path, path) {
                tracing::error!(file = %chain_path.display(), "cannot queue the chain for upload: {error}");
            }
        }
    }
}

/// The name of the file at `path` in the chain of `dir`: relative to it, and an incident's
/// cut (in the data directory's `incidents/`) as the bucket holds it beside the session's
/// files (`incidents/<name>`), whatever its entry says of it.
fn name_in_chain(dir: &Path, path: &Path) -> String {
    let file_name = path
        .file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let folder = path.parent().and_then(Path::file_name);
    if !path.starts_with(dir) && folder.is_some_and(|folder| folder == INCIDENTS_DIR) {
        return format!("{INCIDENTS_DIR}/{file_name}");
    }
    match path.strip_prefix(dir) {
        Ok(relative) => relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => file_name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_named_relative_to_their_session_and_cuts_as_the_bucket_has_them() {
        let dir = Path::new("/data/drive");
        assert_eq!(
            name_in_chain(dir, Path::new("/data/drive/drive_0000.mcap.age")),
            "drive_0000.mcap.age"
        );
        // Cut, or deleted by retention since: the same name either way.
        assert_eq!(
            name_in_chain(dir, Path::new("/data/incidents/x_drive_dds.mcap")),
            "incidents/x_drive_dds.mcap"
        );
    }
}
