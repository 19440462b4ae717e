//! Keys made by the tools a fleet uses: Ed25519 signing keys by openssl, age identities by
//! Debian's `age-keygen`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// An Ed25519 key pair made by openssl in `dir` (`openssl genpkey -algorithm ed25519`,
/// `openssl pkey -pubout`): the private key, with mode `mode`, and the public one.
pub fn openssl_keys(dir: &Path, mode: u32) -> (PathBuf, PathBuf) {
    let key = dir.join("signing-key.pem");
    let public = dir.join("signing-public.pem");
    let made = Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(&key)
        .status()
        .expect("openssl runs");
    assert!(made.success());
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
    let derived = Command::new("openssl")
        .args(["pkey", "-pubout", "-in"])
        .arg(&key)
        .arg("-out")
        .arg(&public)
        .status()
        .expect("openssl runs");
    assert!(derived.success());
    (key, public)
}

/// A fleet identity made by Debian's `age-keygen` in `dir` (`fleet.key`): the identity
/// file and its public key (`age1…`).
pub fn age_identity(dir: &Path) -> (PathBuf, String) {
    let identity = dir.join("fleet.key");
    let made = Command::new("age-keygen")
        .arg("-o")
        .arg(&identity)
        .output()
        .expect("age-keygen runs (Debian package age, scripts/setup)");
    assert!(made.status.success(), "{made:?}");
    let public = Command::new("age-keygen")
        .arg("-y")
        .arg(&identity)
        .output()
        .unwrap();
    assert!(public.status.success(), "{public:?}");
    let public = String::from_utf8(public.stdout).unwrap().trim().to_string();
    assert!(public.starts_with("age1"), "{public}");
    (identity, public)
}
