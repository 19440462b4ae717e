//! `rec verify`: checks a session directory against its signed hash chain.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use recd_chain::{Expected, FileReport, FileState, Kind, PublicKey, Report, Signatures};

use crate::output::{outln, print_json};

/// Exit status when a file is not as the chain says or the chain is broken.
const EXIT_TAMPERED: u8 = 1;
/// Exit status when the links and digests hold but no key was given: anyone could have
/// written such a chain, so the files are not shown to be recd's.
const EXIT_UNSIGNED: u8 = 3;
/// Why a report whose links and digests hold is still not "ok" without a key.
const NOT_CHECKED: &str = "signatures not checked (no --key): the links and digests hold, \
     but a chain rewritten from scratch would too; give the ECU's public key with --key";

/// Check a session's files against its signed hash chain.
///
/// recd with `[signing] key_file` enters every file a session closes
/// in the session's chain (recd-chain.jsonl beside the files): its
/// size, its SHA-256, a link to the entry before, and an Ed25519
/// signature. DIR is the session directory, or the folder the
/// session's objects were downloaded to from the bucket.
///
/// The chain's links and signatures are checked first, then each
/// file: intact (as its newest entry says), altered, missing, deleted
/// (by retention, as the chain records) or unlisted (on disk but not
/// in the chain). A finished file replaces its recording in place;
/// its older entry is shown as replaced, not altered.
///
/// Each entry is also kept as an object of its own in recd-chain.d/
/// beside the chain (uploaded once, never overwritten): an entry
/// there that the chain lacks is named, with its file, for the chain
/// was cut. Where recd reopened a chain it found cut or broken, it
/// began a new segment rather than extend it; the line is named.
/// --min-entries and --head check the chain against what the fleet
/// last saw of it.
///
/// Without --key the links and digests are checked, not the
/// signatures: a chain rewritten from scratch would pass, so the
/// verdict is never "ok".
///
/// Exit status: 0 when every file is intact, the chain whole and its
/// signatures checked; 1 when a file or the chain is at fault (named);
/// 3 when all holds but no --key was given (signatures not checked).
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The session directory (or its objects, downloaded).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The ECU's public key, PEM (`openssl pkey -pubout`).
    #[arg(long, value_name = "PUBLIC")]
    key: Option<PathBuf>,
    /// Fail unless the chain has at least N entries: as many as the
    /// fleet last saw (`entries` of an earlier report).
    #[arg(long, value_name = "N")]
    min_entries: Option<usize>,
    /// Fail unless the chain holds the entry of this digest: the head
    /// the fleet last saw (the `digest` of its last line, 64 hex digits).
    #[arg(long, value_name = "DIGEST", value_parser = parse_digest)]
    head: Option<String>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

/// A digest as `--head` takes it: 64 hex digits, either case.
fn parse_digest(text: &str) -> Result<String, String> {
    if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(text.to_ascii_lowercase())
    } else {
        Err(format!(
            "{text:?} is not an entry's digest: 64 hex digits, as the chain's `digest` field"
        ))
    }
}

/// The report with its verdict, as `--json` prints it.
#[derive(serde::Serialize)]
struct Verdict<'a> {
    ok: bool,
    /// Why a report that found nothing wrong is not ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(flatten)]
    report: &'a Report,
}

/// Runs `rec verify`.
pub fn run(args: &VerifyArgs) -> Result<ExitCode, String> {
    let key = match &args.key {
        Some(path) => Some(PublicKey::load(path).map_err(|e| e.to_string())?),
        None => None,
    };
    let expected = Expected {
        min_entries: args.min_entries,
        head: args.head.clone(),
    };
    let report = recd_chain::verify_expecting(&args.dir, key.as_ref(), &expected)
        .map_err(|e| e.to_string())?;
    let good = report.is_good();
    let checked = matches!(report.signatures, Signatures::Checked { .. });
    let reason = (good && !checked).then_some(NOT_CHECKED);
    if args.json {
        print_json(&Verdict {
            ok: good && checked,
            reason,
            report: &report,
        })?;
    } else {
        print_text(&report);
    }
    if let Some(reason) = reason {
        eprintln!("rec verify: {reason}");
        return Ok(ExitCode::from(EXIT_UNSIGNED));
    }
    if good {
        return Ok(ExitCode::SUCCESS);
    }
    if !report.problems.is_empty() {
        eprintln!("rec verify: the chain is broken or forged; its files cannot be trusted");
    }
    let bad: Vec<String> = (report.files.iter())
        .filter(|file| !file.state.is_good())
        .map(|file| format!("{} {}", file.file, file.state.name()))
        .collect();
    if !bad.is_empty() {
        eprintln!("rec verify: not intact: {}", bad.join(", "));
    }
    Ok(ExitCode::from(EXIT_TAMPERED))
}

fn print_text(report: &Report) {
    let signatures = match &report.signatures {
        Signatures::Checked { key } => format!("signatures checked against key {key}"),
        Signatures::NotChecked => {
            "signatures NOT checked (no --key): links and digests only".to_string()
        }
    };
    let links = if report.problems.is_empty() {
        "whole"
    } else {
        "BROKEN"
    };
    let origin = report.origin.as_ref().map_or_else(String::new, |origin| {
        format!(
            "; made in session {} on host {}",
            origin.session, origin.host
        )
    });
    outln!(
        "chain {}: {} entries, {links}; {signatures}{origin}",
        report.chain.display(),
        report.entries
    );
    for problem in &report.problems {
        outln!("  chain: {problem}");
    }
    let width = (report.files.iter())
        .map(|f| f.file.chars().count())
        .max()
        .unwrap_or(0);
    for file in &report.files {
        outln!(
            "{:<8}  {:<width$}  {}",
            file.state.name(),
            file.file,
            note(file)
        );
    }
}

/// What more there is to say of a file: what it is and what it replaced.
fn note(file: &FileReport) -> String {
    let Some(kind) = file.kind else {
        return "not in the chain".into();
    };
    let mut note = kind.name().to_string();
    if file.state == FileState::Deleted {
        note = "deleted by recd (retention)".into();
    } else if file.state == FileState::Offloaded {
        note = "deleted on the vehicle by recd once uploaded (delete_after_upload)".into();
    } else if kind.is_deletion() {
        note = format!("{kind} on the vehicle by recd; this copy holds the bytes it had");
    } else if kind == Kind::Finished && file.replaced.contains(&Kind::Recorded) {
        note += "; replaces the recorded file (reindexed in place)";
    } else if !file.replaced.is_empty() {
        let replaced: Vec<&str> = file.replaced.iter().map(|k| k.name()).collect();
        note += &format!("; replaces {}", replaced.join(", "));
    }
    note
}
