//! The signing thread's work: reading a closed file back, and appending its entry to its
//! session's chain, then queueing the chain for upload.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use recd_catalog::Catalog;
use recd_chain::{
    ChainWriter, Entry, Head, Kind, NewEntry, Origin, SigningKey, CHAIN_FILE, INCIDENTS_DIR,
};

use crate::locks::lock;
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

    /// Enters the file at `path` in the chain of session directory `dir` as `kind`, with
    /// the size and SHA-256 its writer `stored`, or else read back from it. Only
    /// a recorded or cut file starts a chain: a session recorded before signing was on
    /// gets none for its finished files. Each entry is also written as its own object
    /// (`recd-chain.d/`) and queued for upload when uploads are on, and what recd appended
    /// last is kept in the catalog.
    pub fn enter(&mut self, dir: &Path, path: &Path, kind: Kind, stored: Option<(u64, [u8; 32])>) {
        let name = name_in_chain(dir, path);
        let starts = matches!(kind, Kind::Recorded | Kind::Cut);
        if !starts && !self.chains.contains_key(dir) && !self.has_chain(dir) {
            return;
        }
        let (bytes, sha256) = if kind.is_deletion() {
            (0, [0; 32])
        } else if let Some(stored) = stored {
            stored
        } else {
            match read_digest(path) {
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
        if !self.chains.contains_key(dir) {
            match self.reopen(dir) {
                Ok(chain) => self.chains.insert(dir.to_path_buf(), chain),
                Err(error) => {
                    tracing::error!(file = %path.display(), "the file is not chained: {error}");
                    return;
                }
            };
        }
        let chain = self.chains.get_mut(dir).expect("opened above");
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
        let appended = match chain.append(&self.key, new) {
            Ok(appended) => appended,
            Err(error) => {
                tracing::error!(file = %path.display(), "the file is not chained: {error}");
                // Read again before the next append: the file may hold part of a line.
                self.chains.remove(dir);
                return;
            }
        };
        let chain_path = chain.path().to_path_buf();
        self.keep_head(dir, &appended);
        for entry in &appended {
            tracing::debug!(file = %path.display(), kind = %entry.kind, seq = entry.seq, "chained");
        }
        if let Some(uploads) = &self.uploads {
            for entry in &appended {
                let queued = recd_chain::write_object(dir, entry)
                    .map_err(|error| error.to_string())
                    .and_then(|object| {
                        (uploads.queue_chain_entry(&self.catalog, &object, &chain_path, path))
                            .map_err(|error| error.to_string())
                    });
                if let Err(error) = queued {
                    tracing::error!(file = %chain_path.display(), seq = entry.seq, "cannot queue the chain's entry for upload: {error}");
                }
            }
            if let Err(error) = uploads.queue_chain(&self.catalog, &chain_path, path) {
                tracing::error!(file = %chain_path.display(), "cannot queue the chain for upload: {error}");
            }
        }
    }

    /// Whether the session directory `dir` has a chain: its file, or (where it was deleted)
    /// recd's record of having appended to it.
    fn has_chain(&self, dir: &Path) -> bool {
        dir.join(CHAIN_FILE).exists()
            || lock(&self.catalog)
                .chain_head(dir)
                .is_ok_and(|head| head.is_some())
    }

    /// Opens the chain of `dir`, checked against what recd last appended to it; a chain
    /// found broken or cut is not extended (the next entry begins a new segment), and the
    /// log says so. Its new entries name the session's directory and this host.
    fn reopen(&self, dir: &Path) -> Result<ChainWriter, String> {
        let known = lock(&self.catalog)
            .chain_head(dir)
            .map_err(|error| format!("cannot read the chain's head from the catalog: {error}"))?;
        let mut chain =
            ChainWriter::open(dir, &self.key, known).map_err(|error| error.to_string())?;
        chain.set_origin(Origin {
            session: dir
                .file_name()
                .map_or_else(String::new, |name| name.to_string_lossy().into_owned()),
            host: crate::host::hostname(),
        });
        if let Some(damage) = chain.damage() {
            tracing::warn!(
                chain = %chain.path().display(),
                "recd does not extend the chain: {damage}; its next entry begins a new segment (rec verify names it)"
            );
        }
        Ok(chain)
    }

    /// Records in the catalog the last of the entries just `appended` to the chain of
    /// `dir`: what the chain must still hold when recd reopens it.
    fn keep_head(&self, dir: &Path, appended: &[Entry]) {
        let Some(last) = appended.last() else {
            return;
        };
        let head = Head {
            entries: last.seq + 1,
            digest: last.digest.clone(),
        };
        if let Err(error) = lock(&self.catalog).set_chain_head(dir, &head) {
            tracing::error!(dir = %dir.display(), "cannot keep the chain's head in the catalog: a cut of the chain will not be noticed on reopening: {error}");
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

/// The size and SHA-256 of the file at `path`, read past the page cache where its file
/// system allows: the file is one recd just wrote past it (finished, cut), and reading it
/// through the cache would crowd out what the recordings need.
fn read_digest(path: &Path) -> std::io::Result<(u64, [u8; 32])> {
    let file = std::fs::File::open(path)?;
    recd_chain::digest_of(recd_storage::direct_read::past_the_cache(&file))
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
