//! Claims on files: whoever deletes or replaces a file claims it first, so that two
//! actors never act on one file at once (retention deleting what finishing is putting in
//! place, the uploader deleting what retention deletes). The claims' lock is held only to
//! look at and change the set, never while a file is read, renamed or deleted.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::locks::lock;

/// The files claimed now.
#[derive(Debug, Default, Clone)]
pub struct Claims(Arc<Mutex<HashSet<PathBuf>>>);

/// A claim on one file, given up when dropped.
#[derive(Debug)]
pub struct Claim {
    claims: Claims,
    path: PathBuf,
}

impl Claims {
    /// Claims the file at `path`; `None` while someone else holds it.
    pub fn claim(&self, path: &Path) -> Option<Claim> {
        lock(&self.0).insert(path.to_path_buf()).then(|| Claim {
            claims: self.clone(),
            path: path.to_path_buf(),
        })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        lock(&self.claims.0).remove(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_has_one_claim_at_a_time_until_it_is_given_up() {
        let claims = Claims::default();
        let a = Path::new("/data/s/a.mcap");
        let first = claims.claim(a).expect("free");
        assert!(claims.claim(a).is_none(), "held");
        let other = claims.claim(Path::new("/data/s/b.mcap"));
        assert!(other.is_some(), "another file is free");
        drop(first);
        assert!(claims.claim(a).is_some(), "given up");
    }
}
