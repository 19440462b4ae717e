//! `rec info` on a sealed recording (`.mcap.age`): what its header and stored length tell
//! without a key, or, with `-i`, its summary read through the decryption (nothing of the
//! plaintext is written to disk).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use recd_seal::{SealedHeader, SealedReader};
use recd_storage::FileInfo;

use super::{interfaces, print_one, render, InfoArgs, EXIT_DAMAGED};
use crate::format;
use crate::output::out;
use recd_ros2::names::Interface;

/// What a sealed file tells without a key, as `rec info --json` prints it.
#[derive(Debug, serde::Serialize)]
struct SealedJson {
    path: PathBuf,
    sealed: &'static str,
    /// Bytes of the file as stored.
    size: u64,
    /// Modification time, ns since the Unix epoch.
    modified: Option<u64>,
    recipient_stanzas: usize,
    stanza_types: Vec<String>,
    header_bytes: u64,
    complete_chunks: u64,
    /// The stored length can end in a last chunk (false: the file was cut short).
    can_end_in_last_chunk: bool,
    /// The stored length ends exactly at a chunk boundary.
    ends_at_chunk_boundary: bool,
    /// The plaintext bytes, if the file is whole.
    plaintext_bytes: u64,
}

/// `rec info` of the sealed file `path`.
pub fn run(path: &Path, args: &InfoArgs) -> Result<ExitCode, String> {
    if args.identity.is_empty() {
        return without_key(path, args.json);
    }
    let identities = crate::identity::load(&args.identity)?;
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let header = SealedHeader::read(&file).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut reader =
        SealedReader::open(file, &identities).map_err(|e| format!("{}: {e}", path.display()))?;
    let size = reader.plaintext_len();
    let info = recd_storage::summarize_from(&mut reader, size, path).map_err(|e| e.to_string())?;
    let interfaces = interfaces_of(&info, &mut reader)?;
    let text = render_with_key(path, &info, &interfaces, &header);
    print_one(&info, &interfaces, &text, args)
}

/// The summary of a sealed file read with its key: the plain summary, its recipient
/// stanzas after the file's line, and `rec decrypt` where `rec reindex` would be said
/// (with `--recover` when the plaintext is damaged).
fn render_with_key(
    path: &Path,
    info: &FileInfo,
    interfaces: &interfaces::Interfaces,
    header: &SealedHeader,
) -> String {
    let damaged = info.scan.as_ref().is_some_and(|s| s.damage.is_some());
    let decrypt = if damaged {
        "rec decrypt --recover -i IDENTITY"
    } else {
        "rec decrypt -i IDENTITY"
    };
    let text = render(info, interfaces).replace(
        &format!("rec reindex {}", path.display()),
        &format!("{decrypt} {}", path.display()),
    );
    match text.split_once('\n') {
        Some((file, rest)) => format!("{file}\n{}{rest}", stanzas_line(header)),
        None => text,
    }
}

/// The services and actions of the file. Counting their calls reads their messages by
/// path: then the plaintext is decrypted into an anonymous memory file (`memfd`), which
/// is never linked into any directory and goes when `rec` ends.
fn interfaces_of(
    info: &FileInfo,
    reader: &mut SealedReader<File>,
) -> Result<interfaces::Interfaces, String> {
    let needs_messages = info
        .channels
        .iter()
        .any(|c| c.message_count > 0 && interfaces::interface_of(c) != Interface::Topic);
    if !needs_messages {
        return interfaces::of(std::slice::from_ref(info));
    }
    let mut memory = memory_file().map_err(|e| format!("cannot make a memory file: {e}"))?;
    reader
        .seek(SeekFrom::Start(0))
        .and_then(|_| io::copy(reader, &mut memory))
        .map_err(|e| format!("{}: {e}", info.path.display()))?;
    let mut in_memory = info.clone();
    in_memory.path = PathBuf::from(format!("/proc/self/fd/{}", memory.as_raw_fd()));
    let interfaces = interfaces::of(std::slice::from_ref(&in_memory));
    drop(memory);
    interfaces
}

/// An anonymous file in memory (`memfd_create`), closed on exec.
fn memory_file() -> io::Result<File> {
    // SAFETY: the name is a NUL-terminated string; the call has no other preconditions.
    let fd = unsafe { libc::memfd_create(c"rec-info".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// The line naming the file's recipient stanzas.
fn stanzas_line(header: &SealedHeader) -> String {
    format!(
        "sealed:      age v1, {} recipient stanza{} ({})\n",
        header.stanza_types().len(),
        if header.stanza_types().len() == 1 {
            ""
        } else {
            "s"
        },
        header.stanza_types().join(", ")
    )
}

/// `rec info` of a sealed file without a key.
fn without_key(path: &Path, json: bool) -> Result<ExitCode, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let modified = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as u64);
    let header = SealedHeader::read(file).map_err(|e| format!("{}: {e}", path.display()))?;
    let cut = !header.can_end_in_last_chunk();
    if json {
        crate::output::print_json(&SealedJson {
            path: path.to_path_buf(),
            sealed: "age v1",
            size: header.stored_len(),
            modified,
            recipient_stanzas: header.stanza_types().len(),
            stanza_types: header.stanza_types().to_vec(),
            header_bytes: header.header_len(),
            complete_chunks: header.complete_chunks(),
            can_end_in_last_chunk: header.can_end_in_last_chunk(),
            ends_at_chunk_boundary: header.ends_at_chunk_boundary(),
            plaintext_bytes: header.plaintext_len(),
        })?;
    } else {
        out!("{}", render_without_key(path, &header, modified));
    }
    Ok(if cut {
        ExitCode::from(EXIT_DAMAGED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The text of `rec info` on a sealed file without a key.
fn render_without_key(path: &Path, header: &SealedHeader, modified: Option<u64>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "file:        {} ({})",
        path.display(),
        format::bytes(header.stored_len())
    );
    out += &stanzas_line(header);
    if let Some(modified) = modified {
        let _ = writeln!(out, "modified:    {}", format::timestamp(modified));
    }
    let _ = writeln!(out, "header:      {} bytes", header.header_len());
    let _ = writeln!(
        out,
        "chunks:      {} complete (64 KiB each, the last one shorter)",
        header.complete_chunks()
    );
    let end = if !header.can_end_in_last_chunk() {
        "cut short: the file ends inside a chunk (or right after its header), without its \
         last chunk"
    } else if header.ends_at_chunk_boundary() {
        "at a chunk boundary: whole if that chunk is marked last, or cut at a sync point \
         (a power cut?); only a key tells"
    } else {
        "in a shorter chunk, as a whole file does (only a key tells whether it is authentic)"
    };
    let _ = writeln!(out, "ends:        {end}");
    if header.can_end_in_last_chunk() {
        let _ = writeln!(
            out,
            "plaintext:   {} if the file is whole",
            format::bytes(header.plaintext_len())
        );
    }
    let _ = writeln!(
        out,
        "\nIts contents are sealed: `rec info {0} -i IDENTITY` reads them, `rec decrypt {0} \
         -i IDENTITY` writes its MCAP file{1}.",
        path.display(),
        if header.can_end_in_last_chunk() {
            ""
        } else {
            " (with --recover, the authentic part of it)"
        }
    );
    out
}
