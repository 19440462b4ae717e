//! A file's own view of each topic's health: the samples it holds, their rate over 1 s
//! windows and the gaps between them, summarized when the file closes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::state::{Expected, HealthState};

/// Gaps kept in a file's gap map per topic; the rest are counted.
pub const GAP_MAP_LEN: usize = 100;

const SECOND_NS: u64 = 1_000_000_000;

/// One topic's samples in one file, as they are written.
#[derive(Debug, Clone, Default)]
pub struct FileHealth {
    samples: u64,
    last_ns: Option<u64>,
    /// Samples of each whole second so far (aligned to the first sample of a stretch).
    windows: Vec<u32>,
    /// The second now filling: its start and its samples.
    window_start_ns: u64,
    window_count: u32,
    gaps: u32,
    longest_gap_ns: u64,
    gap_map: Vec<[u64; 2]>,
    more_gaps: u32,
}

impl FileHealth {
    /// Counts a sample of `t_ns` written to the file; a silence before it longer than
    /// `max_gap_ns` is a gap.
    pub fn add(&mut self, t_ns: u64, max_gap_ns: Option<u64>) {
        self.samples += 1;
        match self.last_ns {
            None => self.start_window(t_ns),
            Some(last) => {
                let gap = t_ns.saturating_sub(last);
                self.longest_gap_ns = self.longest_gap_ns.max(gap);
                if max_gap_ns.is_some_and(|max| gap > max) {
                    self.gaps += 1;
                    if self.gap_map.len() < GAP_MAP_LEN {
                        self.gap_map.push([last, t_ns]);
                    } else {
                        self.more_gaps += 1;
                    }
                }
                while t_ns >= self.window_start_ns + SECOND_NS {
                    self.windows.push(self.window_count);
                    self.window_count = 0;
                    self.window_start_ns += SECOND_NS;
                }
            }
        }
        self.window_count += 1;
        self.last_ns = Some(t_ns.max(self.last_ns.unwrap_or(0)));
    }

    /// The session paused (or a pre-trigger buffer let messages go): the time until the
    /// next sample is no gap, and the second then filling is left out of the rates.
    pub fn break_continuity(&mut self) {
        self.last_ns = None;
        self.window_count = 0;
    }

    /// The newest sample's time, if any (since the last break).
    pub fn last_ns(&self) -> Option<u64> {
        self.last_ns
    }

    /// Whether the file holds any sample of the topic.
    pub fn is_empty(&self) -> bool {
        self.samples == 0
    }

    fn start_window(&mut self, t_ns: u64) {
        self.window_start_ns = t_ns;
        self.window_count = 0;
    }

    /// The summary at the file's end, under `expected`; `file_last_ns` is the newest
    /// sample of any topic in the file: a topic silent since longer than its `max_gap`
    /// before that went silent while others went on, which is a gap to the file's end
    /// (a silence all topics share, as when everything stops, is not).
    pub fn summary(&self, expected: &Expected, file_last_ns: u64) -> TopicFileHealth {
        let silent_at_end = match (self.last_ns, expected.max_gap_ns) {
            (Some(last), Some(max)) if file_last_ns.saturating_sub(last) > max => Some(last),
            _ => None,
        };
        let mut gap_map = self.gap_map.clone();
        let mut more_gaps = self.more_gaps;
        if let Some(last) = silent_at_end {
            if gap_map.len() < GAP_MAP_LEN {
                gap_map.push([last, file_last_ns]);
            } else {
                more_gaps += 1;
            }
        }
        let mut sorted = self.windows.clone();
        sorted.sort_unstable();
        let rate = (!sorted.is_empty()).then(|| RateStats {
            min: f64::from(sorted[0]),
            median: f64::from(sorted[sorted.len() / 2]),
            max: f64::from(sorted[sorted.len() - 1]),
        });
        let slow_windows = expected.min_rate.map_or(0, |min| {
            self.windows.iter().filter(|&&n| f64::from(n) < min).count() as u32
        });
        TopicFileHealth {
            expected: expected.clone(),
            samples: self.samples,
            rate,
            slow_windows,
            gaps: self.gaps + u32::from(silent_at_end.is_some()),
            longest_gap_ns: self
                .longest_gap_ns
                .max(silent_at_end.map_or(0, |last| file_last_ns - last)),
            gap_map,
            more_gaps,
            silent_at_end_ns: silent_at_end.map(|last| file_last_ns - last),
        }
    }
}

/// Samples per second over a file's whole 1 s windows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateStats {
    /// The fewest in one window.
    pub min: f64,
    /// The median window.
    pub median: f64,
    /// The most in one window.
    pub max: f64,
}

/// One topic's health in one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopicFileHealth {
    /// The expectation it was checked against (as of the file's end).
    pub expected: Expected,
    /// Samples in the file.
    pub samples: u64,
    /// Its rate over the file's whole 1 s windows; `None` for less than a second.
    pub rate: Option<RateStats>,
    /// Windows with fewer samples than `min_rate`.
    pub slow_windows: u32,
    /// Silences longer than `max_gap`.
    pub gaps: u32,
    /// The longest silence between two of its samples in the file, ns.
    pub longest_gap_ns: u64,
    /// The first [`GAP_MAP_LEN`] of those silences: [last sample before, first after], ns.
    pub gap_map: Vec<[u64; 2]>,
    /// Silences beyond the map.
    pub more_gaps: u32,
    /// How long it had been silent when the file's last message came, where that was
    /// longer than `max_gap` (the last gap of the map, ending at that message).
    #[serde(default)]
    pub silent_at_end_ns: Option<u64>,
}

impl TopicFileHealth {
    /// Whether the topic fell short in the file: a gap or a slow window.
    pub fn is_degraded(&self) -> bool {
        self.gaps > 0 || self.slow_windows > 0
    }
}

/// A file's or a session's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every expectation held.
    Ok,
    /// A topic stalled or was slow.
    Degraded,
    /// A required topic never came.
    Missing,
}

impl Verdict {
    /// Its name, as `rec list` and the catalog write it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Degraded => "degraded",
            Verdict::Missing => "missing",
        }
    }

    /// Reads a name written by [`Self::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        [Verdict::Ok, Verdict::Degraded, Verdict::Missing]
            .into_iter()
            .find(|v| v.name() == name)
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A file's health, as its `health/<file>` metadata record holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileHealthSummary {
    /// The file's verdict.
    pub verdict: Verdict,
    /// Per topic, by channel name.
    pub topics: BTreeMap<String, TopicFileHealth>,
    /// Required topics (or patterns) with no sample in the session when the file ended.
    pub missing: Vec<String>,
}

impl FileHealthSummary {
    /// The summary of `topics` with `missing` required topics.
    pub fn new(topics: BTreeMap<String, TopicFileHealth>, missing: Vec<String>) -> Self {
        let verdict = if !missing.is_empty() {
            Verdict::Missing
        } else if topics.values().any(TopicFileHealth::is_degraded) {
            Verdict::Degraded
        } else {
            Verdict::Ok
        };
        Self {
            verdict,
            topics,
            missing,
        }
    }

    /// Whether no topic has a sample in the file (latched repeats and health messages are
    /// no samples).
    pub fn holds_nothing(&self) -> bool {
        self.topics.values().all(|t| t.samples == 0)
    }

    /// The metadata record's entries: `verdict`, `missing` (JSON list) and `topics` (JSON
    /// object by channel name).
    pub fn to_metadata(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("verdict".to_string(), self.verdict.name().to_string()),
            (
                "missing".to_string(),
                serde_json::to_string(&self.missing).expect("names serialize"),
            ),
            (
                "topics".to_string(),
                serde_json::to_string(&self.topics).expect("health serializes"),
            ),
        ])
    }

    /// Reads the entries [`Self::to_metadata`] wrote.
    pub fn from_metadata(entries: &BTreeMap<String, String>) -> Result<Self, String> {
        let entry = |key: &str| {
            entries
                .get(key)
                .ok_or_else(|| format!("health record without {key:?}"))
        };
        let verdict = entry("verdict")?;
        Ok(Self {
            verdict: Verdict::from_name(verdict)
                .ok_or_else(|| format!("health record with unknown verdict {verdict:?}"))?,
            missing: serde_json::from_str(entry("missing")?).map_err(|e| e.to_string())?,
            topics: serde_json::from_str(entry("topics")?).map_err(|e| e.to_string())?,
        })
    }
}

/// The health of several files together: the worst verdict, and each topic's gaps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HealthTally {
    /// The worst verdict of a file so far; `None` before the first.
    pub worst: Option<Verdict>,
    /// Gaps per topic over the files (silences shared by every topic at a file's end are
    /// none).
    pub gaps: BTreeMap<String, u32>,
}

impl HealthTally {
    /// Adds a file's summary.
    pub fn add(&mut self, file: &FileHealthSummary) {
        self.worst = self.worst.max(Some(file.verdict));
        for (name, topic) in &file.topics {
            *self.gaps.entry(name.clone()).or_default() += topic.gaps;
        }
    }

    /// Adds another tally (of another writer's files).
    pub fn merge(&mut self, other: &HealthTally) {
        self.worst = self.worst.max(other.worst);
        for (name, gaps) in &other.gaps {
            *self.gaps.entry(name.clone()).or_default() += gaps;
        }
    }
}

/// The state a topic's file summary shows at worst, for one-word displays.
pub fn worst_state(topic: &TopicFileHealth) -> HealthState {
    if topic.gaps > 0 {
        HealthState::Stalled
    } else if topic.slow_windows > 0 {
        HealthState::Slow
    } else if topic.expected.max_gap_ns.is_none() && topic.expected.min_rate.is_none() {
        HealthState::Unchecked
    } else {
        HealthState::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const T0: u64 = 1_700_000_000_000 * MS;

    fn expected(min_rate: Option<f64>, max_gap_ms: Option<u64>) -> Expected {
        Expected {
            min_rate,
            max_gap_ns: max_gap_ms.map(|ms| ms * MS),
            ..Expected::default()
        }
    }

    #[test]
    fn gaps_over_the_threshold_are_mapped_and_rates_come_from_whole_seconds() {
        let mut file = FileHealth::default();
        // 50 Hz for 2 s, silent 700 ms, 50 Hz for 2.3 s.
        let mut times: Vec<u64> = (0..100).map(|i| T0 + i * 20 * MS).collect();
        times.extend((0..115).map(|i| T0 + 2680 * MS + i * 20 * MS));
        for t in &times {
            file.add(*t, Some(200 * MS));
        }
        let summary = file.summary(&expected(Some(40.0), Some(200)), T0 + 4960 * MS);
        assert_eq!(summary.samples, 215);
        assert_eq!(summary.gaps, 1);
        assert_eq!(summary.gap_map, vec![[T0 + 1980 * MS, T0 + 2680 * MS]]);
        assert_eq!(summary.longest_gap_ns, 700 * MS);
        let rate = summary.rate.unwrap();
        assert_eq!(rate.max, 50.0);
        assert!(rate.min < 40.0, "the second of the silence: {rate:?}");
        assert_eq!(summary.slow_windows, 1);
        assert!(summary.is_degraded());
    }

    #[test]
    fn a_pause_is_no_gap_and_the_map_keeps_the_first_hundred() {
        let mut file = FileHealth::default();
        file.add(T0, Some(10 * MS));
        file.break_continuity();
        file.add(T0 + 5000 * MS, Some(10 * MS));
        assert_eq!(file.summary(&Expected::default(), T0 + 5000 * MS).gaps, 0);
        let mut file = FileHealth::default();
        for i in 0..150 {
            file.add(T0 + i * 100 * MS, Some(50 * MS));
        }
        let summary = file.summary(&Expected::default(), T0 + 14_900 * MS);
        assert_eq!(summary.gaps, 149);
        assert_eq!(summary.gap_map.len(), GAP_MAP_LEN);
        assert_eq!(summary.more_gaps, 49);
    }

    #[test]
    fn a_topic_that_fell_silent_while_others_went_on_has_a_gap_to_the_end() {
        let mut file = FileHealth::default();
        (0..10).for_each(|i| file.add(T0 + i * 100 * MS, Some(300 * MS)));
        let dead = file.summary(&expected(None, Some(300)), T0 + 40_000 * MS);
        assert_eq!(dead.gaps, 1);
        assert_eq!(dead.gap_map, vec![[T0 + 900 * MS, T0 + 40_000 * MS]]);
        assert_eq!(dead.silent_at_end_ns, Some(39_100 * MS));
        let together = file.summary(&expected(None, Some(300)), T0 + 1000 * MS);
        assert_eq!((together.gaps, together.silent_at_end_ns), (0, None));
    }

    #[test]
    fn the_verdict_and_the_record_round_trip() {
        let mut ok = FileHealth::default();
        (0..100).for_each(|i| ok.add(T0 + i * 10 * MS, Some(100 * MS)));
        let topics = BTreeMap::from([(
            "a".to_string(),
            ok.summary(&expected(None, Some(100)), T0 + 990 * MS),
        )]);
        let summary = FileHealthSummary::new(topics.clone(), vec![]);
        assert_eq!(summary.verdict, Verdict::Ok);
        let missing = FileHealthSummary::new(topics, vec!["/imu".into()]);
        assert_eq!(missing.verdict, Verdict::Missing);
        let back = FileHealthSummary::from_metadata(&missing.to_metadata()).unwrap();
        assert_eq!(back, missing);
    }
}
