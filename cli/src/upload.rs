//! `rec upload`: queue a session's files (or one file) for upload to object storage, or
//! list the upload queue; and the one-line upload summary `rec status` prints.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use recd_control::{Request, Response, UploadRequest, UploadState, UploadStatus, UploadsMode};

use crate::format;
use crate::output::outln;
use crate::request::{ask, unexpected};
use crate::table::table;

/// Upload files to object storage; list the queue.
///
/// recd uploads the finished files of every session to the bucket of `[upload]` in
/// recd.toml (unless started with --no-upload): one file at a time, resumable, every
/// part checksummed, each file verified (size and ETag) before it counts as uploaded.
/// `rec upload SESSION` queues a session's finished files by hand (a session started
/// with --no-upload, or files whose upload failed); `rec upload FILE` one file.
/// `rec upload --status` lists the queue: state, progress, and why a file waits or
/// failed.
#[derive(Debug, Args)]
pub struct UploadArgs {
    /// A session name or a file of one (a path containing '/' or ending in .mcap).
    #[arg(add = crate::complete::session_names(), required_unless_present = "status")]
    target: Option<String>,
    /// List the upload queue and what the uploader is doing.
    #[arg(long, conflicts_with = "target")]
    status: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// Runs `rec upload`.
pub fn run(socket: &Path, args: &UploadArgs) -> Result<ExitCode, String> {
    let Some(target) = &args.target else {
        let status = fetch_status(socket)?;
        if args.json {
            crate::output::print_json(&status)?;
        } else {
            print_queue(&status);
        }
        return Ok(ExitCode::SUCCESS);
    };
    let request = if crate::files::names_a_path(Path::new(target)) {
        let path = std::path::absolute(target).unwrap_or_else(|_| PathBuf::from(target));
        UploadRequest {
            session: None,
            file: Some(path),
        }
    } else {
        UploadRequest {
            session: Some(target.clone()),
            file: None,
        }
    };
    let response = ask(socket, &Request::Upload(request))?;
    let Response::UploadsQueued(queued) = &response else {
        return Err(unexpected(&response));
    };
    if args.json {
        crate::output::print_json(queued)?;
    } else {
        outln!(
            "queued {} files for upload; {} already queued or uploaded",
            queued.queued.len(),
            queued.unchanged.len()
        );
        for path in &queued.queued {
            outln!("    {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The uploader's state from recd.
pub fn fetch_status(socket: &Path) -> Result<UploadStatus, String> {
    let response = ask(socket, &Request::UploadStatus)?;
    match response {
        Response::Uploads(status) => Ok(status),
        other => Err(unexpected(&other)),
    }
}

fn print_queue(status: &UploadStatus) {
    if !status.enabled {
        outln!("uploads are off (recd.toml has no [upload] section)");
        return;
    }
    if let Some(line) = summary_line(status) {
        outln!("{line}");
    }
    if status.files.is_empty() {
        outln!("nothing queued yet");
        return;
    }
    let listed = (status.files.iter())
        .filter(|f| f.state == UploadState::Uploaded)
        .count() as u64;
    if listed < status.uploaded_files {
        outln!(
            "(the newest {listed} of {} uploaded files are listed)",
            status.uploaded_files
        );
    }
    let rows: Vec<Vec<String>> = (status.files.iter())
        .map(|file| {
            vec![
                file.state.to_string(),
                progress(file.sent, file.bytes),
                if file.priority { "first" } else { "" }.into(),
                file.key.clone(),
            ]
        })
        .collect();
    let text = table(&["state", "progress", "priority", "key"], &rows);
    for (line, file) in text.lines().skip(1).zip(&status.files) {
        outln!("{line}");
        outln!("    {}", file.path.display());
        if let Some(reason) = &file.reason {
            outln!("    {}", reason);
        }
    }
}

fn progress(sent: u64, bytes: u64) -> String {
    let percent = if bytes == 0 {
        100.0
    } else {
        sent as f64 * 100.0 / bytes as f64
    };
    format!(
        "{} of {} ({percent:.0} %)",
        format::bytes(sent),
        format::bytes(bytes)
    )
}

/// One line on uploads for `rec status`: where to, what waits, the rate, what is wrong;
/// none when uploads are off.
pub fn summary_line(status: &UploadStatus) -> Option<String> {
    if !status.enabled {
        return None;
    }
    let count = |state| status.files.iter().filter(|f| f.state == state).count();
    let waiting: u64 = (status.files.iter())
        .filter(|f| matches!(f.state, UploadState::Queued | UploadState::Uploading))
        .map(|f| f.bytes - f.sent.min(f.bytes))
        .sum();
    let mut line = format!(
        "upload to {}: {} uploaded ({}), {} waiting ({} to send), {} failed",
        status.destination.as_deref().unwrap_or("?"),
        status.uploaded_files,
        format::bytes(status.uploaded_bytes),
        count(UploadState::Queued) + count(UploadState::Uploading),
        format::bytes(waiting),
        count(UploadState::Failed),
    );
    match status.mode {
        UploadsMode::All => {}
        UploadsMode::Incidents => line += "; the fleet allows only incidents' files now",
        UploadsMode::None => line += "; the fleet holds every upload back now",
    }
    if let Some(file) = status
        .files
        .iter()
        .find(|f| f.state == UploadState::Uploading)
    {
        line += &format!(
            "; sending {} {} at {}",
            file.key,
            progress(file.sent, file.bytes),
            format::rate(status.bytes_per_s)
        );
    }
    if let Some(why) = &status.yielding {
        line += &format!("; waiting: {why}");
    }
    if let Some(error) = &status.error {
        line += &format!("\n  upload problem: {error}");
    }
    Some(line)
}
