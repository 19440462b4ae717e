//! Keys made by the tools a fleet uses: Ed25519 signing keys by openssl.

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
