//! What a vehicle holds, as the cloud reads it from the retained `…/holdings`: per session
//! the spans of time its files cover (merged across files, each of one health verdict),
//! its topics and their message counts; the oldest moment held; the incidents; the disk.

use serde::{Deserialize, Serialize};

/// Files this close in time join one span: a split leaves no gap in time, but a file's
/// first message may follow the last of the file before by up to a few poll periods.
pub const SPAN_GAP_NS: u64 = 2_000_000_000;

/// What the vehicle holds now. Times are ns since the Unix epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holdings {
    /// The vehicle's id.
    pub vehicle: String,
    /// When this was taken.
    pub at_ns: u64,
    /// The oldest moment still held: a window starting earlier finds nothing before it.
    /// `None` when nothing is held.
    pub oldest_ns: Option<u64>,
    /// The recordings' disk.
    pub disk: Disk,
    /// The sessions with files on the disk, oldest first.
    pub sessions: Vec<SessionHoldings>,
    /// The incidents whose files are on the disk or in the bucket, oldest first.
    pub incidents: Vec<IncidentHolding>,
}

/// How full the recordings' disk is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disk {
    /// Bytes the recordings take.
    pub used_bytes: u64,
    /// The ring's bound (`max_total_size`), when one is set: retention deletes the oldest
    /// files beyond it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_bytes: Option<u64>,
    /// Bytes free on the data directory's file system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_bytes: Option<u64>,
}

/// One session's files on the disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHoldings {
    /// Its name.
    pub name: String,
    /// Its catalog id (names repeat; ids do not).
    pub id: i64,
    /// Whether it is recording now (its last span reaches the present).
    pub recording: bool,
    /// The spans of time its files cover, oldest first.
    pub spans: Vec<Span>,
    /// Its files on the disk.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Its topics, when known (a stopped session's final counts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<TopicHolding>,
}

/// A stretch of time held without a gap, of one health verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// Its first moment.
    pub from_ns: u64,
    /// Its last moment.
    pub to_ns: u64,
    /// Its files' health verdict (`ok`, `degraded`, `missing`); none before recd kept one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<String>,
}

/// One topic of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicHolding {
    /// Its name.
    pub name: String,
    /// Messages written.
    pub messages: u64,
}

/// One incident.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncidentHolding {
    /// Its id (unique within its session).
    pub id: String,
    /// Its session's name.
    pub session: String,
    /// The start of its window.
    pub from_ns: u64,
    /// The end of its window.
    pub to_ns: u64,
    /// Where its cut is: `waiting`, `cutting`, `cut`, `failed` …
    pub cut: String,
    /// Every file of its cut is uploaded.
    pub uploaded: bool,
    /// Its pin was released.
    pub released: bool,
}

/// One file's place in time, as [`merge_spans`] takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSpan {
    /// Its first message's time.
    pub start_ns: u64,
    /// Its last message's time (now, for a file being written).
    pub end_ns: u64,
    /// Its health verdict.
    pub health: Option<String>,
}

/// The spans `files` cover: files that follow one another within [`SPAN_GAP_NS`] and
/// share a verdict make one span; a gap or another verdict starts the next.
pub fn merge_spans(files: &[FileSpan]) -> Vec<Span> {
    let mut sorted: Vec<&FileSpan> = files.iter().collect();
    sorted.sort_by_key(|file| (file.start_ns, file.end_ns));
    let mut spans: Vec<Span> = Vec::new();
    for file in sorted {
        match spans.last_mut() {
            Some(last)
                if file.start_ns <= last.to_ns.saturating_add(SPAN_GAP_NS)
                    && file.health == last.health =>
            {
                last.to_ns = last.to_ns.max(file.end_ns);
            }
            _ => spans.push(Span {
                from_ns: file.start_ns,
                to_ns: file.end_ns.max(file.start_ns),
                health: file.health.clone(),
            }),
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn file(start_s: u64, end_s: u64, health: &str) -> FileSpan {
        FileSpan {
            start_ns: start_s * S,
            end_ns: end_s * S,
            health: Some(health.to_string()),
        }
    }

    fn span(from_s: u64, to_s: u64, health: &str) -> Span {
        Span {
            from_ns: from_s * S,
            to_ns: to_s * S,
            health: Some(health.to_string()),
        }
    }

    #[test]
    fn files_in_a_row_make_one_span_and_a_gap_or_another_verdict_starts_the_next() {
        let files = [
            file(21, 30, "ok"),
            file(0, 10, "ok"),
            file(11, 20, "ok"),
            file(40, 50, "ok"),
            file(50, 60, "degraded"),
            file(60, 70, "degraded"),
        ];
        assert_eq!(
            merge_spans(&files),
            [
                span(0, 30, "ok"),
                span(40, 50, "ok"),
                span(50, 70, "degraded")
            ]
        );
        assert_eq!(merge_spans(&[]), []);
    }

    #[test]
    fn holdings_serialize_compactly_without_absent_fields() {
        let holdings = Holdings {
            vehicle: "car-3".into(),
            at_ns: 5,
            oldest_ns: None,
            disk: Disk::default(),
            sessions: vec![SessionHoldings {
                name: "drive".into(),
                id: 1,
                recording: true,
                spans: vec![Span {
                    from_ns: 1,
                    to_ns: 2,
                    health: None,
                }],
                files: 1,
                bytes: 10,
                topics: Vec::new(),
            }],
            incidents: Vec::new(),
        };
        let json = serde_json::to_string(&holdings).unwrap();
        assert_eq!(
            json,
            r#"{"vehicle":"car-3","at_ns":5,"oldest_ns":null,"disk":{"used_bytes":0},"sessions":[{"name":"drive","id":1,"recording":true,"spans":[{"from_ns":1,"to_ns":2}],"files":1,"bytes":10}],"incidents":[]}"#
        );
        assert_eq!(serde_json::from_str::<Holdings>(&json).unwrap(), holdings);
    }

    /// A day of recording 200 topics, as the issue sizes it: one session, its topics with
    /// names as long as ROS 2's usually are, 24 spans (a gap an hour), 50 incidents.
    #[test]
    fn a_day_of_200_topics_fits_in_64_kib() {
        let hour = 3600 * S;
        let day = Holdings {
            vehicle: "vehicle-0123456789".into(),
            at_ns: 1_764_400_000 * S,
            oldest_ns: Some(1_764_300_000 * S),
            disk: Disk {
                used_bytes: 1 << 40,
                bound_bytes: Some(2 << 40),
                free_bytes: Some(1 << 40),
            },
            sessions: vec![SessionHoldings {
                name: "drive_20261129".into(),
                id: 4711,
                recording: false,
                spans: (0..24)
                    .map(|h| Span {
                        from_ns: 1_764_300_000 * S + h * hour,
                        to_ns: 1_764_300_000 * S + h * hour + hour - 60 * S,
                        health: Some("degraded".into()),
                    })
                    .collect(),
                files: 1440,
                bytes: 1 << 40,
                topics: (0..200)
                    .map(|i| TopicHolding {
                        name: format!("/vehicle/sensors/lidar_front_left_{i:03}/points_raw"),
                        messages: 864_000_000,
                    })
                    .collect(),
            }],
            incidents: (0..50)
                .map(|i| IncidentHolding {
                    id: format!("20261129T{i:02}0000Z-hard-brake"),
                    session: "drive_20261129".into(),
                    from_ns: 1_764_300_000 * S + i * hour / 2,
                    to_ns: 1_764_300_000 * S + i * hour / 2 + 40 * S,
                    cut: "cut".into(),
                    uploaded: true,
                    released: false,
                })
                .collect(),
        };
        let bytes = serde_json::to_vec(&day).unwrap().len();
        println!("a day of 200 topics: {bytes} bytes of holdings");
        assert!(bytes <= 64 << 10, "{bytes} bytes");
    }
}
