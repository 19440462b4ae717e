//! `rec decrypt`: the MCAP file inside a sealed recording (`.mcap.age`), checked chunk by
//! chunk, finished off when recd could not finish it, or recovered from a file cut short.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::Args;
use recd_seal::{Identities, Recovered, SealedReader, CHUNK_SIZE};
use recd_storage::{ReindexError, ReindexOptions, ReindexReport};
use tempfile::NamedTempFile;

use crate::format;
use crate::output::outln;

/// Exit status when the file was damaged or cut: the output holds its authentic part.
const EXIT_DAMAGED: u8 = 3;
/// Exit status after Ctrl-C.
const EXIT_INTERRUPTED: u8 = 130;
/// The suffix of a sealed recording.
const SEALED_SUFFIX: &str = ".age";

/// Decrypt sealed recordings (.mcap.age); recover cut ones
///
/// Sealed recordings are age v1 files, encrypted to the fleet's
/// public keys; give a matching private key with -i (a file as
/// age-keygen writes it). Every 64 KiB chunk is authenticated:
/// a chunk that was altered, or a file cut short (a power cut),
/// is refused, naming the chunk, and nothing is written.
///
/// The output (FILE without .age unless -o) is written beside
/// its destination and renamed into place once complete; an
/// existing file is never overwritten. A recording recd could
/// not finish (no summary, not indexed) is finished off here:
/// reindexed, so that it opens in any viewer.
///
/// With --recover, a damaged or cut file gives every authentic
/// chunk up to the first that fails, then every complete MCAP
/// record in them, indexed.
///
/// Exit status: 0 when nothing was lost; 3 when the output
/// holds only what was recoverable (--recover on a damaged or
/// cut file, or an MCAP file recd left cut inside a record),
/// as rec reindex exits; 1 on failure (nothing written).
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct DecryptArgs {
    /// The sealed recording.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// A file of age private keys (repeatable)
    ///
    /// AGE-SECRET-KEY-1... lines, as age-keygen writes them;
    /// repeatable.
    #[arg(
        short,
        long = "identity",
        value_name = "IDENTITY",
        required = true,
        verbatim_doc_comment
    )]
    identity: Vec<PathBuf>,
    /// Where to write (default: FILE minus .age)
    ///
    /// A file, or a directory to write FILE's name without .age
    /// into; default: FILE without .age.
    #[arg(short, long, value_name = "OUTPUT", verbatim_doc_comment)]
    output: Option<PathBuf>,
    /// Keep the authentic part of a damaged file
    ///
    /// Every authentic chunk up to the first that fails, then
    /// the complete MCAP records in them, reindexed.
    #[arg(long, verbatim_doc_comment)]
    recover: bool,
    /// Print the report as one JSON object
    #[arg(long)]
    json: bool,
}

/// What `rec decrypt` did, as `--json` prints it.
#[derive(Debug, serde::Serialize)]
struct Report {
    input: PathBuf,
    output: PathBuf,
    sealed_bytes: u64,
    plaintext_bytes: u64,
    chunks: u64,
    /// The file was whole: its last chunk was reached and authentic.
    complete: bool,
    /// Why decrypting stopped early (--recover), naming the chunk.
    stopped: Option<String>,
    /// The plaintext is an MCAP file.
    mcap: bool,
    /// Messages in the output, when it is an MCAP file.
    messages: Option<u64>,
    /// Why the MCAP file was reindexed, if it was.
    finished_off: Option<String>,
    /// The reindex of the MCAP file, if there was one.
    reindex: Option<ReindexReport>,
}

pub fn run(args: &DecryptArgs) -> Result<ExitCode, String> {
    let identities = crate::identity::load(&args.identity)?;
    let output = output_path(&args.file, args.output.as_deref())?;
    if output.exists() || output.is_symlink() {
        return Err(format!(
            "{} already exists; remove it or give another -o",
            output.display()
        ));
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))?;
    let input = File::open(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let sealed_bytes = input
        .metadata()
        .map_err(|e| format!("{}: {e}", args.file.display()))?
        .len();
    let mut temporary = temporary_beside(&output)?;
    let decrypted = if args.recover {
        recover_into(input, &identities, &mut temporary, &args.file)?
    } else {
        match decrypt_into(input, &identities, &mut temporary, &args.file, &cancel) {
            Ok(recovered) => recovered,
            Err(Failure::Interrupted) => {
                eprintln!("rec: interrupted; nothing was written");
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            Err(Failure::Message(message)) => return Err(message),
        }
    };
    let mut report = Report {
        input: args.file.clone(),
        output: output.clone(),
        sealed_bytes,
        plaintext_bytes: decrypted.plaintext_bytes,
        chunks: decrypted.chunks,
        complete: decrypted.complete,
        stopped: decrypted.stopped.clone(),
        mcap: false,
        messages: None,
        finished_off: None,
        reindex: None,
    };
    match finish_mcap(temporary.path(), args.recover, &mut report, &cancel) {
        Ok(()) => {}
        Err(Failure::Interrupted) => {
            eprintln!("rec: interrupted; nothing was written");
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        Err(Failure::Message(message)) => return Err(message),
    }
    temporary.persist_noclobber(&output).map_err(|e| {
        format!(
            "cannot move the output into place at {}: {}",
            output.display(),
            e.error
        )
    })?;
    let lost = !report.complete || report.reindex.as_ref().is_some_and(|r| !r.lost_nothing());
    if args.json {
        crate::output::print_json(&report)?;
    } else {
        print_report(&report);
    }
    Ok(if lost {
        ExitCode::from(EXIT_DAMAGED)
    } else {
        ExitCode::SUCCESS
    })
}

/// Why decrypting stopped.
enum Failure {
    /// Ctrl-C.
    Interrupted,
    /// Anything else, told in one line.
    Message(String),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self::Message(message)
    }
}

/// Where the plaintext goes: `-o` (a file, or a directory to write FILE's name without
/// `.age` into), else FILE without `.age`.
fn output_path(file: &Path, output: Option<&Path>) -> Result<PathBuf, String> {
    let stripped = file
        .file_name()
        .and_then(|name| name.to_str())
        .and_then(|name| name.strip_suffix(SEALED_SUFFIX))
        .filter(|name| !name.is_empty());
    match (output, stripped) {
        (Some(output), Some(name)) if output.is_dir() => Ok(output.join(name)),
        (Some(output), None) if output.is_dir() => Err(format!(
            "{} does not end in .age: give -o the output file, not a directory",
            file.display()
        )),
        (Some(output), _) => Ok(output.to_path_buf()),
        (None, Some(name)) => Ok(file.with_file_name(name)),
        (None, None) => Err(format!(
            "{} does not end in .age: give the output file with -o",
            file.display()
        )),
    }
}

/// A temporary file in `output`'s directory, removed unless it is moved into place.
fn temporary_beside(output: &Path) -> Result<NamedTempFile, String> {
    let directory = match output.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = output.file_name().map_or_else(
        || "output".into(),
        |name| name.to_string_lossy().into_owned(),
    );
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".part")
        .tempfile_in(&directory)
        .map_err(|e| format!("cannot write in {}: {e}", directory.display()))
}

/// Decrypts all of `input` into `temporary`: every chunk authentic, the last one last.
fn decrypt_into(
    input: File,
    identities: &Identities,
    temporary: &mut NamedTempFile,
    file: &Path,
    cancel: &AtomicBool,
) -> Result<Recovered, Failure> {
    let mut reader =
        SealedReader::open(input, identities).map_err(|e| format!("{}: {e}", file.display()))?;
    let part = temporary.path().to_path_buf();
    let write_error = |e: std::io::Error| format!("cannot write {}: {e}", part.display());
    let mut out = BufWriter::with_capacity(CHUNK_SIZE, temporary.as_file_mut());
    let mut buf = vec![0u8; CHUNK_SIZE];
    let mut plaintext_bytes = 0u64;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(Failure::Interrupted);
        }
        let n = reader
            .read(&mut buf)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n]).map_err(write_error)?;
        plaintext_bytes += n as u64;
    }
    out.flush().map_err(write_error)?;
    Ok(Recovered {
        plaintext_bytes,
        chunks: plaintext_bytes.div_ceil(CHUNK_SIZE as u64).max(1),
        complete: true,
        stopped: None,
        stop: None,
    })
}

/// Recovers the authentic part of `input` into `temporary`.
fn recover_into(
    input: File,
    identities: &Identities,
    temporary: &mut NamedTempFile,
    file: &Path,
) -> Result<Recovered, String> {
    let mut out = BufWriter::with_capacity(CHUNK_SIZE, temporary.as_file_mut());
    let recovered = recd_seal::recover(input, identities, &mut out)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    if recovered.plaintext_bytes == 0 && !recovered.complete {
        return Err(format!(
            "{}: nothing authentic to recover: {}",
            file.display(),
            recovered.stopped.as_deref().unwrap_or("no chunk")
        ));
    }
    Ok(recovered)
}

/// When the plaintext is an MCAP file: reindexes it in place if recd could not finish it
/// (no summary, or not indexed) or after `--recover`, so that every viewer opens it.
fn finish_mcap(
    plaintext: &Path,
    recovered: bool,
    report: &mut Report,
    cancel: &AtomicBool,
) -> Result<(), Failure> {
    let summary = recd_storage::summarize(plaintext);
    let reason = match &summary {
        Err(_) if !starts_with_mcap_magic(plaintext) => return Ok(()),
        _ if recovered => "recovered from a damaged or cut file".to_string(),
        Ok(info) if info.closed_cleanly && info.indexed => {
            report.mcap = true;
            report.messages = Some(info.message_count);
            return Ok(());
        }
        Ok(info) if info.closed_cleanly => "recd had not indexed it".to_string(),
        _ => "recd could not finish it (it has no summary)".to_string(),
    };
    report.mcap = true;
    let options = ReindexOptions {
        compression: recd_storage::Compression::Zstd,
        ..ReindexOptions::default()
    };
    match recd_storage::reindex(plaintext, plaintext, &options, &mut |_, _| {}, cancel) {
        Ok(reindexed) => {
            report.messages = Some(reindexed.messages);
            report.finished_off = Some(reason);
            report.reindex = Some(reindexed);
            Ok(())
        }
        Err(ReindexError::Interrupted { .. }) => Err(Failure::Interrupted),
        Err(error) => Err(Failure::Message(format!(
            "the decrypted MCAP file could not be reindexed: {error}"
        ))),
    }
}

/// Whether `path` starts with the MCAP magic.
fn starts_with_mcap_magic(path: &Path) -> bool {
    let mut start = [0u8; 8];
    File::open(path)
        .and_then(|mut file| file.read_exact(&mut start))
        .is_ok_and(|()| start == *b"\x89MCAP0\r\n")
}

fn print_report(report: &Report) {
    outln!(
        "decrypted {} → {}: {} in {} chunks",
        report.input.display(),
        report.output.display(),
        format::bytes(report.plaintext_bytes),
        report.chunks
    );
    match &report.stopped {
        Some(why) => outln!("damaged: kept the authentic part only; {why}"),
        None => outln!("every chunk authentic, the last one included"),
    }
    if let Some(reason) = &report.finished_off {
        outln!("finished off the MCAP file ({reason}): reindexed so that any viewer opens it");
    }
    if let Some(reindexed) = &report.reindex {
        if let Some(damage) = &reindexed.damage {
            outln!(
                "its records end at offset {} ({}); the last {} held no complete record",
                damage.offset,
                damage.reason,
                format::bytes(reindexed.unusable_bytes)
            );
        }
    }
    if let Some(messages) = report.messages {
        outln!("{messages} messages");
    } else if !report.mcap {
        outln!("the plaintext is not an MCAP file; written as it is");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_is_the_file_without_age_unless_given() {
        let file = Path::new("/d/run.mcap.age");
        assert_eq!(output_path(file, None).unwrap(), Path::new("/d/run.mcap"));
        assert_eq!(
            output_path(file, Some(Path::new("x.mcap"))).unwrap(),
            Path::new("x.mcap")
        );
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            output_path(file, Some(dir.path())).unwrap(),
            dir.path().join("run.mcap")
        );
        let error = output_path(Path::new("run.mcap"), None).unwrap_err();
        assert!(error.contains("does not end in .age"), "{error}");
        assert!(output_path(Path::new(".age"), None).is_err());
    }
}
