//! `rec verify`: a chain file of any bytes in a session directory of fixed files, read
//! and verified (links, digests, Ed25519 signatures against a fixed key, each file against
//! its newest entry). The seeds are chains signed with that key over these files.
#![no_main]

mod common;
mod keys;

use std::path::PathBuf;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use recd_chain::{PublicKey, CHAIN_FILE};

/// The session directory, its files written once.
static SESSION: LazyLock<PathBuf> = LazyLock::new(|| {
    let dir = common::scratch().join("session");
    for (name, content) in keys::SESSION_FILES {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("session folder");
        std::fs::write(path, content).expect("session file");
    }
    dir
});
static KEY: LazyLock<PublicKey> =
    LazyLock::new(|| PublicKey::from_pem(keys::CHAIN_PUBLIC, "fuzz").expect("test key"));

fuzz_target!(|data: &[u8]| {
    let dir = &*SESSION;
    std::fs::write(dir.join(CHAIN_FILE), data).expect("chain written");
    if recd_chain::read_chain(dir).is_err() {
        return;
    }
    if let Ok(report) = recd_chain::verify(dir, Some(&KEY)) {
        let _ = report.is_good();
    }
});
