//! `--seal`: the recording sealed as `[encryption]` seals it, to a throwaway identity the
//! recorder prints with its summary, so that the harness can decrypt the files to check
//! them after the measurement.

use std::path::{Path, PathBuf};

use age::secrecy::ExposeSecret;
use recd_engine::RecordingConfig;
use recd_seal::{Identities, Recipients, SealedReader};

/// Seals `config`'s files to a fresh identity; returns it, to be printed.
pub fn seal(config: &mut RecordingConfig) -> String {
    let identity = age::x25519::Identity::generate();
    let recipients =
        Recipients::parse(&[identity.to_public().to_string()]).expect("a fresh public key parses");
    config.sealing = Some(recd_storage::Sealing {
        recipients: std::sync::Arc::new(recipients),
        keys: recd_storage::SealKeys::default(),
    });
    identity.to_string().expose_secret().to_string()
}

/// Decrypts each sealed file with `identity` beside it (`….mcap.age` to `….mcap`); the
/// plaintext files.
pub fn decrypt_all(files: &[PathBuf], identity: &str) -> Result<Vec<PathBuf>, String> {
    let identities = Identities::parse(&[identity.to_string()]).map_err(|e| e.to_string())?;
    files
        .iter()
        .map(|file| {
            let plain = plain_path(file);
            let input =
                std::fs::File::open(file).map_err(|e| format!("{}: {e}", file.display()))?;
            let mut reader = SealedReader::open(input, &identities)
                .map_err(|e| format!("{}: {e}", file.display()))?;
            let mut output =
                std::fs::File::create(&plain).map_err(|e| format!("{}: {e}", plain.display()))?;
            std::io::copy(&mut reader, &mut output)
                .map_err(|e| format!("{}: {e}", file.display()))?;
            Ok(plain)
        })
        .collect()
}

fn plain_path(sealed: &Path) -> PathBuf {
    let name = sealed
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    sealed.with_file_name(name.trim_end_matches(".age"))
}
