//! The sessions' side of tamper evidence: each session's chain in its directory, an
//! incident's cut files entering the chain of their session, and the signing thread's
//! end.

use std::path::Path;

use super::Sessions;
use crate::signing::SessionChain;

impl Sessions {
    /// The chain of the session recording into `directory`, when files are signed.
    pub(super) fn session_chain(&self, directory: &Path) -> Option<SessionChain> {
        self.signing.as_ref().map(|signing| SessionChain {
            signing: signing.clone(),
            dir: directory.to_path_buf(),
        })
    }

    /// Enters the cut file at `path` in the chain of `session`, when files are signed.
    pub fn sign_cut(&self, session: &str, path: &Path) {
        let Some(signing) = &self.signing else {
            return;
        };
        match self.catalog().session_by_name(session) {
            Ok(Some(session)) => {
                signing.enter(&session.directory, path, recd_chain::Kind::Cut, false)
            }
            Ok(None) => {}
            Err(error) => {
                tracing::error!(file = %path.display(), "cannot find the cut's session to chain it: {error}")
            }
        }
    }

    /// Enters the files retention deleted at `paths` in their sessions' chains as
    /// deleted, so that `rec verify` tells them from files gone without recd.
    pub(super) fn sign_deleted(&self, paths: &[std::path::PathBuf]) {
        let Some(signing) = &self.signing else {
            return;
        };
        for path in paths {
            if let Some(dir) = path.parent() {
                signing.enter(dir, path, recd_chain::Kind::Deleted, false);
            }
        }
    }

    /// Chains what is queued and stops signing (after the sessions stopped).
    pub fn stop_signing(&self) {
        if let Some(signing) = &self.signing {
            signing.stop();
        }
    }
}
