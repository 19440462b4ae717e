//! The fixed test keys of the sealed-file and chain targets, and the files of the session
//! the chain target verifies. The seeds (fuzz/examples/make_sealed_seeds.rs) are sealed
//! and signed with the same keys, so that a run starts past the header and the signatures.
//! Test keys only: nothing real is sealed to or signed with them.
#![allow(dead_code)] // each target uses part of it

/// An age X25519 identity made by `age-keygen` for fuzzing.
pub const AGE_IDENTITY: &str =
    "AGE-SECRET-KEY-1RDY7W4J0AENNZWTVZZ2VY0M2S7JKP2EH8AF8PDZNQV46VY4HT4PQGJKCVH";
/// Its public key.
pub const AGE_RECIPIENT: &str = "age1ajz44cqe6fcdeacv2nym9msp7mrh56ayzcle3m4p2r08kal0uy5q88hgcj";

/// An Ed25519 key as `openssl genpkey -algorithm ed25519` writes it (recd-chain's test
/// key), and its public half as `openssl pkey -pubout` writes it.
pub const CHAIN_PRIVATE: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIBwgS3EgHBvTn3U7JDuN616dp4dTWHEZ/dWsG4+kUMaO\n-----END PRIVATE KEY-----\n";
/// The public half of [`CHAIN_PRIVATE`].
pub const CHAIN_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAmJ30jCppnk9NZbAQO2wwL7V++vCZsX6pvcLK8DYrTNQ=\n-----END PUBLIC KEY-----\n";

/// The files of the session directory the chain target verifies: name and content.
pub const SESSION_FILES: [(&str, &str); 4] = [
    ("s_0000.mcap", "the bytes of s_0000.mcap as recorded"),
    (
        "s_0001.mcap.age",
        "the bytes of s_0001.mcap.age as recorded",
    ),
    ("metadata.yaml", "rosbag2_bagfile_information: {}"),
    ("incidents/s_cut_1.mcap", "the bytes of an incident's cut"),
];
