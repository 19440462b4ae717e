//! Sealed recordings for the commands that read them: the identity files of `-i` and
//! telling a sealed file (age v1) from an MCAP file.

use std::io::Read;
use std::path::{Path, PathBuf};

use recd_seal::Identities;

/// The start of every age file.
const AGE_MAGIC: &[u8] = b"age-encryption.org/";

/// The identities of every `-i` file, in order.
pub fn load(files: &[PathBuf]) -> Result<Identities, String> {
    let mut all: Option<Identities> = None;
    for file in files {
        let identities = Identities::read_file(file).map_err(|e| e.to_string())?;
        match &mut all {
            Some(all) => all.extend(identities),
            None => all = Some(identities),
        }
    }
    all.ok_or_else(|| "give an identity file with -i (age-keygen writes one)".to_string())
}

/// Whether `path` is a sealed file: an age file by its first bytes.
pub fn is_sealed(path: &Path) -> bool {
    let mut start = [0u8; AGE_MAGIC.len()];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut start))
        .is_ok_and(|()| start == AGE_MAGIC)
}
