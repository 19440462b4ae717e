//! What incidents and their files are called: ids recd makes, and the cut files'
//! names `<id>_<note>_<session>_<source>.mcap` in the data directory's `incidents/`.

use std::path::{Path, PathBuf};

use super::DIRECTORY;

/// The longest part of a note in a file name.
const NOTE_IN_NAME: usize = 40;

/// An id for an incident its asker gave none: its moment in UTC to the millisecond,
/// `20261127T081500.123Z`.
pub fn incident_id(time_ns: u64) -> String {
    crate::clock::rfc3339(time_ns).replace(['-', ':'], "")
}

/// The cut file of incident `id` for `session`'s files of `source` (`iceoryx2`,
/// `dds`): `<data_dir>/incidents/<id>_<note>_<session>_<source>.mcap`, each part made
/// safe for a file name (the note left out when empty).
pub fn cut_path(data_dir: &Path, id: &str, note: &str, session: &str, source: &str) -> PathBuf {
    let id = safe(id, usize::MAX);
    let mut parts = vec![if id.is_empty() {
        "incident".to_string()
    } else {
        id
    }];
    let note = safe(&note.to_lowercase(), NOTE_IN_NAME);
    if !note.is_empty() {
        parts.push(note);
    }
    parts.push(safe(session, usize::MAX));
    parts.push(source.to_string());
    data_dir
        .join(DIRECTORY)
        .join(format!("{}.mcap", parts.join("_")))
}

/// `text` with everything but letters, digits, '.' and '-' as '-', runs of them as one,
/// at most `longest` characters.
fn safe(text: &str, longest: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' {
            c
        } else {
            '-'
        };
        if c == '-' && (out.is_empty() || out.ends_with('-')) {
            continue;
        }
        out.push(c);
        if out.len() >= longest {
            break;
        }
    }
    out.trim_end_matches('-')
        .trim_start_matches(['.', '-'])
        .to_string()
}

/// The source family of a session file from its name: `<prefix>_<family>_<NNNN>.mcap`
/// or sealed `.mcap.age` (`iceoryx2`, `dds`, `zenoh`) when a session has more than one; `None` for a single-family name.
pub fn family_of(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".age").unwrap_or(name);
    let stem = stem.strip_suffix(".mcap").unwrap_or(stem);
    let (rest, number) = stem.rsplit_once('_')?;
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    ["iceoryx2", "dds", "zenoh"]
        .into_iter()
        .find(|family| rest.ends_with(&format!("_{family}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_files_are_named_by_id_note_session_and_source() {
        let path = cut_path(
            Path::new("/d"),
            "fleet/42",
            "Hard brake! at 30 km/h",
            "drive1",
            "dds",
        );
        assert_eq!(
            path,
            Path::new("/d/incidents/fleet-42_hard-brake-at-30-km-h_drive1_dds.mcap")
        );
        assert_eq!(
            cut_path(Path::new("/d"), "../x", "", "s", "iceoryx2"),
            Path::new("/d/incidents/x_s_iceoryx2.mcap")
        );
        assert_eq!(
            incident_id(1_700_000_000_123_000_000),
            "20231114T221320.123Z"
        );
    }

    #[test]
    fn the_family_comes_from_a_two_family_sessions_file_names() {
        assert_eq!(
            family_of(Path::new("/d/s/s_2026_dds_0003.mcap")),
            Some("dds")
        );
        assert_eq!(
            family_of(Path::new("/d/s/s_2026_zenoh_0001.mcap")),
            Some("zenoh")
        );
        assert_eq!(
            family_of(Path::new("/d/s/s_2026_iceoryx2_0000.mcap.age")),
            Some("iceoryx2")
        );
        assert_eq!(family_of(Path::new("/d/s/s_2026_0000.mcap")), None);
    }
}
