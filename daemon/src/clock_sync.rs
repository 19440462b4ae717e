//! What the host knows of its clock's synchronisation, kept with each trigger so that
//! files cut on several ECUs can be judged for how well their times line up.
//!
//! Three sources, each said for what it is: the kernel's NTP status (`adjtimex`, set by
//! chrony and ntpd, not by every PTP setup), `chronyc tracking` and linuxptp's `pmc`
//! where installed. When none says the clock is synchronised the evidence starts with
//! `unknown`: an unmarked kernel clock may still be disciplined by PTP.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a clock tool may take to answer.
const TOOL_TIMEOUT: Duration = Duration::from_millis(500);

/// One line of evidence, e.g. `kernel: synchronized, max error 16.0 ms, estimated
/// error 0.1 ms; chrony: offset +0.000012 s, root dispersion 0.000210 s, leap Normal`.
pub fn evidence() -> String {
    let mut parts = Vec::new();
    let mut synchronized = false;
    let (kernel, kernel_synchronized) = kernel_status();
    parts.push(kernel);
    synchronized |= kernel_synchronized;
    if let Some(chrony) = chrony_tracking() {
        synchronized |= !chrony.contains("leap Not synchronised");
        parts.push(chrony);
    }
    if let Some(ptp) = ptp_offset() {
        synchronized = true;
        parts.push(ptp);
    }
    let joined = parts.join("; ");
    if synchronized {
        joined
    } else {
        format!("unknown ({joined})")
    }
}

/// The kernel's view (`adjtimex` without changing anything), and whether it is marked
/// synchronised.
fn kernel_status() -> (String, bool) {
    // SAFETY: adjtimex with modes 0 only reads into the zeroed struct it is given.
    let mut timex: libc::timex = unsafe { std::mem::zeroed() };
    let state = unsafe { libc::adjtimex(&mut timex) };
    if state < 0 {
        return ("kernel: status unreadable".to_string(), false);
    }
    if state == libc::TIME_ERROR || timex.status & libc::STA_UNSYNC != 0 {
        return ("kernel: not marked synchronized".to_string(), false);
    }
    let text = format!(
        "kernel: synchronized, max error {:.1} ms, estimated error {:.1} ms",
        timex.maxerror as f64 / 1000.0,
        timex.esterror as f64 / 1000.0
    );
    (text, true)
}

/// `chronyc -c tracking`, summarised; `None` where chrony is not installed or running.
fn chrony_tracking() -> Option<String> {
    let output = run_tool("chronyc", &["-c", "tracking"])?;
    let fields: Vec<&str> = output.trim().split(',').collect();
    if fields.len() < 14 {
        return None;
    }
    Some(format!(
        "chrony: reference {}, stratum {}, offset {} s, root dispersion {} s, leap {}",
        fields[1], fields[2], fields[4], fields[11], fields[13]
    ))
}

/// linuxptp's offset from its master (`pmc … GET TIME_STATUS_NP`); `None` where pmc is
/// not installed or no ptp4l answers.
fn ptp_offset() -> Option<String> {
    let output = run_tool("pmc", &["-u", "-b", "0", "GET TIME_STATUS_NP"])?;
    let offset = output
        .lines()
        .find_map(|line| line.trim().strip_prefix("master_offset"))?
        .trim();
    Some(format!("ptp: master offset {offset} ns"))
}

/// A tool's standard output when it ran and succeeded within [`TOOL_TIMEOUT`].
fn run_tool(program: &str, args: &[&str]) -> Option<String> {
    let path = installed(program)?;
    let mut child = Command::new(path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + TOOL_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let mut text = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut()?, &mut text).ok()?;
    Some(text)
}

/// Where `program` is on `PATH`, if it is (no process is started for a missing tool).
fn installed(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_names_the_kernel_view_and_never_claims_what_it_cannot_know() {
        let evidence = evidence();
        assert!(evidence.contains("kernel: "), "{evidence}");
        let (_, kernel_synchronized) = kernel_status();
        if !kernel_synchronized && chrony_tracking().is_none() && ptp_offset().is_none() {
            assert!(evidence.starts_with("unknown ("), "{evidence}");
        }
    }

    #[test]
    fn a_missing_tool_gives_no_evidence() {
        assert_eq!(run_tool("recd-no-such-clock-tool", &[]), None);
    }
}
