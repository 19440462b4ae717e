//! Checks the systemd integration files in `systemd/`: the unit passes
//! `systemd-analyze verify`, lets recd lock the spill pools of as many sessions as it
//! allows, and the example configuration is accepted by recd and only spells out the
//! defaults.
//!
//! Needs `systemd-analyze` (package `systemd`; CI installs it), but neither network nor a
//! running systemd.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const UNIT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../systemd/recd.service");
const EXAMPLE_CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../systemd/recd.toml");
const RECD: &str = env!("CARGO_BIN_EXE_recd");

/// What systemd says about a unit it does not fully accept: unknown keys or sections, values
/// it cannot parse (which it ignores), commands it cannot run.
const PROBLEM_MARKERS: &[&str] = &[
    "unknown",
    "failed to parse",
    "invalid",
    "ignoring",
    "not executable",
    "bad-setting",
    "missing",
    "error",
];

/// Writes `text` as `<dir>/recd.service` (the file name makes the unit's name).
fn write_unit(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("recd.service");
    std::fs::write(&path, text).expect("write the unit copy");
    path
}

/// Runs `systemd-analyze verify` on `unit`.
fn verify(unit: &Path) -> Output {
    match Command::new("systemd-analyze")
        .arg("verify")
        .arg(unit)
        .env("SYSTEMD_LOG_COLOR", "0")
        .env("SYSTEMD_PAGER", "")
        .env("LC_ALL", "C")
        .output()
    {
        Ok(output) => output,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => panic!(
            "systemd-analyze is missing: install systemd (`apt-get install -y systemd`) to run \
             this test; CI installs it"
        ),
        Err(error) => panic!("cannot run systemd-analyze: {error}"),
    }
}

/// The problems `systemd-analyze verify` reported about our unit, or why it failed;
/// empty when the unit is clean. Lines about other units or the environment are ignored.
fn unit_problems(output: &Output) -> Vec<String> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut problems: Vec<String> = stderr
        .lines()
        .chain(stdout.lines())
        .filter(|line| line.contains("recd.service"))
        .filter(|line| {
            let lower = line.to_lowercase();
            PROBLEM_MARKERS.iter().any(|marker| lower.contains(marker))
        })
        .map(str::to_string)
        .collect();
    if !output.status.success() {
        problems.push(format!(
            "systemd-analyze verify exited with {}",
            output.status
        ));
    }
    problems
}

#[test]
fn the_unit_passes_systemd_analyze_verify() {
    let unit = std::fs::read_to_string(UNIT).expect("read systemd/recd.service");
    assert!(
        unit.contains("ExecStart=/usr/bin/recd "),
        "the unit's ExecStart should run /usr/bin/recd:\n{unit}"
    );
    // verify checks that ExecStart's binary exists; point it at the one just built.
    let unit = unit.replace("ExecStart=/usr/bin/recd ", &format!("ExecStart={RECD} "));

    let good_dir = tempfile::tempdir().expect("temporary directory");
    let good = write_unit(good_dir.path(), &unit);
    let output = verify(&good);
    let problems = unit_problems(&output);
    assert!(
        problems.is_empty(),
        "systemd-analyze verify reports problems in systemd/recd.service:\n{}\n\
         --- stderr ---\n{}\n--- stdout ---\n{}",
        problems.join("\n"),
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout),
    );

    // The check must catch a broken unit: a bad value and an unknown key in [Service].
    let broken_text = unit.replacen("[Install]", "WatchdogSec=banana\nTypo=1\n\n[Install]", 1);
    assert_ne!(
        broken_text, unit,
        "the unit should have an [Install] section"
    );
    let broken_dir = tempfile::tempdir().expect("temporary directory");
    let broken = write_unit(broken_dir.path(), &broken_text);
    let output = verify(&broken);
    let problems = unit_problems(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        problems.iter().any(|line| line.contains("banana")),
        "the bad WatchdogSec value went unreported; problems: {problems:?}\n--- stderr ---\n{stderr}"
    );
    assert!(
        problems.iter().any(|line| line.contains("Typo")),
        "the unknown key went unreported; problems: {problems:?}\n--- stderr ---\n{stderr}"
    );
}

/// `recd --config <config> --print-config`'s output, asserting that it succeeded.
fn print_config(config: &Path) -> String {
    let output = Command::new(RECD)
        .arg("--config")
        .arg(config)
        .arg("--print-config")
        .output()
        .expect("run recd --print-config");
    assert!(
        output.status.success(),
        "recd --config {} --print-config failed with {}:\n{}",
        config.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("the printed configuration is UTF-8")
}

#[test]
fn the_example_config_is_accepted_and_keeps_the_defaults() {
    let example = print_config(Path::new(EXAMPLE_CONFIG));

    let dir = tempfile::tempdir().expect("temporary directory");
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").expect("write an empty configuration");
    let defaults = print_config(&empty);

    assert!(!defaults.trim().is_empty(), "recd printed no configuration");
    assert_eq!(
        example, defaults,
        "systemd/recd.toml should show exactly the defaults"
    );
}

/// A size as systemd reads a resource limit: bytes, or with K, M, G or T (powers of 1024).
fn systemd_size(value: &str) -> u64 {
    let (digits, unit) = value.split_at(value.trim_end_matches(['K', 'M', 'G', 'T']).len());
    let shift = match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        other => panic!("unit {other} of {value}"),
    };
    digits.parse::<u64>().expect("a number of bytes") << shift
}

/// The locked memory the unit leaves for keys beside the spill pools: 16,384 pages of
/// 4 KiB, one per key held (sealing's file and payload keys, the signing key).
const KEY_PAGES_HEADROOM: u64 = 64 << 20;

#[test]
fn the_memlock_limit_holds_the_spill_pools_of_max_sessions_sessions() {
    let unit = std::fs::read_to_string(UNIT).expect("read systemd/recd.service");
    let limit = unit
        .lines()
        .find_map(|line| line.strip_prefix("LimitMEMLOCK="))
        .map(systemd_size)
        .expect("the unit sets LimitMEMLOCK");

    let dir = tempfile::tempdir().expect("temporary directory");
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").expect("write an empty configuration");
    let defaults: toml::Table = print_config(&empty).parse().expect("TOML");
    let sessions = defaults["max_sessions"].as_integer().expect("max_sessions") as u64;
    let spill: bytesize::ByteSize = defaults["recording"]["spill_bytes"]
        .as_str()
        .expect("spill_bytes")
        .parse()
        .expect("a size");
    assert_eq!(
        limit,
        sessions * spill.as_u64() + KEY_PAGES_HEADROOM,
        "LimitMEMLOCK should be max_sessions ({sessions}) x spill_bytes ({spill}), plus 64 MiB \
         for key pages"
    );
    // The comment says the same.
    assert!(
        unit.contains(&format!("max_sessions ({sessions}) x spill_bytes"))
            && unit.contains("Plus 64 MiB for keys"),
        "{unit}"
    );
}

/// The most exposure `systemd-analyze security` may rate the unit at (0 is the safest,
/// 10 the most exposed; the unit before hardening was rated 7.8).
const MOST_EXPOSURE: f64 = 3.0;

/// The overall exposure `systemd-analyze security --offline=yes` rates `unit` at.
fn exposure(unit: &Path) -> f64 {
    let output = Command::new("systemd-analyze")
        .args(["security", "--offline=yes", "--no-pager"])
        .arg(unit)
        .env("SYSTEMD_LOG_COLOR", "0")
        .env("LC_ALL", "C")
        .output()
        .expect("run systemd-analyze security (package systemd)");
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find_map(|line| line.split_once("Overall exposure level for recd.service:"))
        .and_then(|(_, rest)| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "no overall exposure in systemd-analyze security's output:\n{text}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
}

#[test]
fn the_offline_security_analysis_rates_the_unit_at_3_or_below() {
    let unit = std::fs::read_to_string(UNIT).expect("read systemd/recd.service");
    let dir = tempfile::tempdir().expect("temporary directory");
    let hardened = exposure(&write_unit(dir.path(), &unit));
    assert!(
        hardened <= MOST_EXPOSURE,
        "systemd-analyze security --offline=yes systemd/recd.service rates it {hardened}, \
         above {MOST_EXPOSURE}: a hardening setting was lost or weakened"
    );

    // The check reads the score: without the sandboxing settings the unit is exposed.
    let hardening = [
        "CapabilityBoundingSet=",
        "SystemCallFilter=",
        "Protect",
        "Private",
        "RestrictNamespaces=",
        "RestrictSUIDSGID=",
        "MemoryDenyWriteExecute=",
        "UMask=",
    ];
    let bare: String = unit
        .lines()
        .filter(|line| !hardening.iter().any(|key| line.starts_with(key)))
        .map(|line| format!("{line}\n"))
        .collect();
    let exposed = exposure(&write_unit(dir.path(), &bare));
    assert!(
        exposed > MOST_EXPOSURE,
        "without its sandboxing the unit should rate above {MOST_EXPOSURE}, not {exposed}"
    );
}
