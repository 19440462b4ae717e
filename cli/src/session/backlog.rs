//! `rec status`'s lines on background work: what waits to be finished and uploaded, for
//! how long, what retention deleted before it left the vehicle, and the policy's state.

use std::time::Duration;

use recd_control::Backlog;

/// A session's (or every session's) backlog in a line after `label`; `None` when nothing
/// waits and nothing was lost.
pub fn backlog_line(label: &str, backlog: &Backlog) -> Option<String> {
    if backlog.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if backlog.finish_waiting > 0 {
        parts.push(format!(
            "{} to finish{}",
            files(backlog.finish_waiting),
            oldest(backlog.finish_oldest_s)
        ));
    }
    if backlog.upload_waiting > 0 {
        parts.push(format!(
            "{} to upload{}",
            files(backlog.upload_waiting),
            oldest(backlog.upload_oldest_s)
        ));
    }
    if backlog.deleted_unfinished > 0 || backlog.deleted_unuploaded > 0 {
        parts.push(format!(
            "deleted by retention before finished {}, before uploaded {}",
            backlog.deleted_unfinished, backlog.deleted_unuploaded
        ));
    }
    Some(format!("{label}{}\n", parts.join("; ")))
}

/// Every session's backlog and the background policy's state, for the end of `rec
/// status`; empty from an older recd.
pub fn backlog_text(backlog: Option<&Backlog>) -> String {
    let Some(backlog) = backlog else {
        return String::new();
    };
    let mut text = backlog_line("waiting (all sessions): ", backlog).unwrap_or_default();
    if !backlog.background.is_empty() {
        text += &format!("background work: {}\n", backlog.background);
    }
    text
}

fn files(count: u64) -> String {
    if count == 1 {
        "1 file".into()
    } else {
        format!("{count} files")
    }
}

fn oldest(seconds: Option<f64>) -> String {
    seconds.map_or(String::new(), |seconds| {
        let waited = Duration::from_secs(seconds as u64);
        format!(" (oldest {})", humantime::format_duration(waited))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_what_waits_since_when_and_what_was_lost() {
        assert_eq!(backlog_line("  ", &Backlog::default()), None);
        let backlog = Backlog {
            finish_waiting: 2,
            finish_oldest_s: Some(182.4),
            upload_waiting: 1,
            upload_oldest_s: Some(30.0),
            deleted_unfinished: 169,
            deleted_unuploaded: 170,
            background_mode: "throttled".into(),
            background: "throttled: …".into(),
            background_on: true,
            max_delay_s: Some(600.0),
        };
        assert_eq!(
            backlog_line("  waiting: ", &backlog).unwrap(),
            "  waiting: 2 files to finish (oldest 3m 2s); 1 file to upload (oldest 30s); deleted by retention before finished 169, before uploaded 170\n"
        );
        assert!(backlog_text(Some(&backlog)).ends_with("background work: throttled: …\n"));
        assert_eq!(backlog_text(None), "");
    }
}
