//! `recd_storage::cut`: exactly a window of a session's files (one streamed and closed,
//! one finished with zstd, one still being recorded) in one chunked, indexed file, with
//! the latched message before the window first, the markers in it and a health record,
//! reading only the window's chunks of a finished file, and of an unfinished one only the
//! records' headers outside the window.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use recd_health::{Expected, FileHealth, FileHealthSummary};
use recd_storage::iceoryx2::{health_metadata_name, HISTORY_SIZE, MARKER};
use recd_storage::{
    cut, ChannelId, CheckpointBook, Compression, CutError, CutOptions, CutTopics, LogWindow,
    Marker, MessageHeader, ReindexOptions, StreamWriter, WriterOptions, CHECKPOINTS,
};

const MS: u64 = 1_000_000;
const T0: u64 = 1_700_000_000_000 * MS;

/// One message as the session wrote it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Sent {
    log_time: u64,
    topic: String,
    sequence: u32,
    publish_time: u64,
    payload: Vec<u8>,
}

/// The recorder of a test session: `/camera` every 10 ms (a few KiB), `/imu` every 2 ms,
/// and the latched `/map` every 300 ms, split into files as the tests say.
struct Session {
    sent: Vec<Sent>,
    /// The latched message the last file ended with, repeated at the start of the next.
    last_map: Option<Sent>,
}

struct Channels {
    camera: ChannelId,
    imu: ChannelId,
    map: ChannelId,
}

fn payload(topic: &str, sequence: u32) -> Vec<u8> {
    let size = match topic {
        "/camera" => 3000 + (sequence as usize % 7) * 100,
        _ => 64,
    };
    let seed = topic.bytes().map(u64::from).sum::<u64>() * 1_000_003 + u64::from(sequence);
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..size).map(|_| rng.u8(..)).collect()
}

impl Session {
    fn new() -> Self {
        Self {
            sent: Vec::new(),
            last_map: None,
        }
    }

    /// Opens `path`, repeating the last `/map` message first (as the recorder does in
    /// every new file), and writes the messages of [from_ms, to_ms) after T0 and a marker
    /// at `marker_ms`.
    fn record(&mut self, path: &Path, from_ms: u64, to_ms: u64, marker_ms: u64) -> StreamWriter {
        let mut writer = StreamWriter::create(path, WriterOptions::default()).unwrap();
        let image = writer
            .add_schema("sensor_msgs/msg/Image", "ros2msg", b"uint32 height")
            .unwrap();
        let channels = Channels {
            camera: writer
                .add_channel(Some(image), "/camera", "cdr", &BTreeMap::new())
                .unwrap(),
            imu: writer
                .add_channel(None, "/imu", "raw", &BTreeMap::new())
                .unwrap(),
            map: writer
                .add_channel(
                    None,
                    "/map",
                    "raw",
                    &BTreeMap::from([(HISTORY_SIZE.to_string(), "1".to_string())]),
                )
                .unwrap(),
        };
        if let Some(map) = self.last_map.clone() {
            // Numbered anew, as recd's writer numbers the message it repeats.
            let repeat = Sent {
                sequence: map.sequence + 1000,
                ..map
            };
            write(&mut writer, channels.map, &repeat);
        }
        for ms in from_ms..to_ms {
            let time = T0 + ms * MS + 17;
            let mut topics = Vec::new();
            if ms % 10 == 0 {
                topics.push(("/camera", channels.camera, (ms / 10) as u32));
            }
            if ms % 2 == 0 {
                topics.push(("/imu", channels.imu, (ms / 2) as u32));
            }
            if ms % 300 == 0 {
                topics.push(("/map", channels.map, (ms / 300) as u32));
            }
            for (topic, channel, sequence) in topics {
                let sent = Sent {
                    log_time: time,
                    topic: topic.to_string(),
                    sequence,
                    publish_time: time - 1000,
                    payload: payload(topic, sequence),
                };
                write(&mut writer, channel, &sent);
                if topic == "/map" {
                    self.last_map = Some(sent.clone());
                }
                self.sent.push(sent);
            }
            if ms == marker_ms {
                let marker = Marker {
                    time_ns: T0 + ms * MS,
                    text: format!("at {ms} ms"),
                };
                writer.add_metadata(MARKER, &marker.record()).unwrap();
            }
        }
        writer
    }

    /// What the session sent in the window, in log-time order.
    fn in_window(&self, window: LogWindow) -> Vec<Sent> {
        let mut sent: Vec<Sent> = self
            .sent
            .iter()
            .filter(|s| (window.start_ns..=window.end_ns).contains(&s.log_time))
            .cloned()
            .collect();
        sent.sort();
        sent
    }

    /// The last `/map` message before `start`.
    fn latched_before(&self, start: u64) -> Sent {
        self.sent
            .iter()
            .filter(|s| s.topic == "/map" && s.log_time < start)
            .max()
            .unwrap()
            .clone()
    }
}

fn write(writer: &mut StreamWriter, channel: ChannelId, sent: &Sent) {
    let header = MessageHeader {
        channel,
        sequence: sent.sequence,
        log_time: sent.log_time,
        publish_time: sent.publish_time,
    };
    writer.write_message(&header, &sent.payload).unwrap();
}

/// The health record the recorder closes a file with: `/camera` expected every 50 ms at
/// most, `/imu` unchecked (no expectation), `/gps` required.
fn close_with_health(mut writer: StreamWriter) {
    let name = writer
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let camera = Expected {
        max_gap_ns: Some(50 * MS),
        min_rate: Some(50.0),
        ..Expected::default()
    };
    let gps = Expected {
        required: true,
        ..Expected::default()
    };
    let topics = BTreeMap::from([
        (
            "/camera".to_string(),
            FileHealth::default().summary(&camera, 0),
        ),
        ("/gps".to_string(), FileHealth::default().summary(&gps, 0)),
    ]);
    let health = FileHealthSummary::new(topics, vec![]);
    writer
        .add_metadata(&health_metadata_name(&name), &health.to_metadata())
        .unwrap();
    writer.close().unwrap();
}

/// A session of three files: `s_0000` streamed and closed [0, 1000) ms, `s_0001` finished
/// (reindexed with zstd, small chunks) [1000, 2000) ms, `s_0002` still being recorded
/// [2000, 3000) ms, its writer (and lock) handed back. Markers at 100, 1600 and 2600 ms.
fn three_files(dir: &Path) -> (Session, Vec<PathBuf>, StreamWriter) {
    let mut session = Session::new();
    let paths: Vec<PathBuf> = (0..3).map(|i| dir.join(format!("s_{i:04}.mcap"))).collect();
    close_with_health(session.record(&paths[0], 0, 1000, 100));
    close_with_health(session.record(&paths[1], 1000, 2000, 1600));
    let finished = ReindexOptions {
        compression: Compression::Zstd,
        chunk_size: 64 << 10,
        ..ReindexOptions::default()
    };
    common::reindex(&paths[1], &paths[1], &finished).unwrap();
    let mut open = session.record(&paths[2], 2000, 3000, 2600);
    open.flush().unwrap();
    (session, paths, open)
}

fn window(from_ms: u64, to_ms: u64) -> LogWindow {
    LogWindow {
        start_ns: T0 + from_ms * MS,
        end_ns: T0 + to_ms * MS + 17,
    }
}

/// Every message of `path` as the `mcap` crate's indexed reader finds it, in file order.
fn read_back(path: &Path) -> Vec<Sent> {
    let bytes = std::fs::read(path).unwrap();
    let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
    assert!(!summary.chunk_indexes.is_empty(), "the output is chunked");
    let mut messages = Vec::new();
    for index in &summary.chunk_indexes {
        for message in summary.stream_chunk(&bytes, index).unwrap() {
            let message = message.unwrap();
            messages.push(Sent {
                log_time: message.log_time,
                topic: message.channel.topic.clone(),
                sequence: message.sequence,
                publish_time: message.publish_time,
                payload: message.data.into_owned(),
            });
        }
    }
    messages
}

/// The Metadata records of `path` by name, read through the summary's metadata indexes.
fn metadata_of(path: &Path) -> Vec<mcap::records::Metadata> {
    let bytes = std::fs::read(path).unwrap();
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    summary
        .metadata_indexes
        .iter()
        .map(|index| mcap::read::metadata(&bytes, index).unwrap())
        .collect()
}

#[test]
fn a_cut_holds_exactly_the_window_with_the_latched_message_first() {
    let dir = tempfile::tempdir().unwrap();
    let (session, paths, open) = three_files(dir.path());
    assert!(recd_storage::is_being_recorded(&paths[2]).unwrap());
    let output = dir.path().join("incident.mcap");
    let window = window(1500, 2500);
    let incident = mcap::records::Metadata {
        name: "incident".to_string(),
        metadata: BTreeMap::from([("id".to_string(), "7".to_string())]),
    };
    let options = CutOptions {
        compression: Compression::Zstd,
        metadata: vec![incident.clone()],
        ..CutOptions::default()
    };
    let report = cut(&paths, window, &output, &options).unwrap();
    drop(open);

    let expected = session.in_window(window);
    let latched = session.latched_before(window.start_ns);
    assert_eq!(latched.log_time, T0 + 1200 * MS + 17);
    let written = read_back(&output);
    assert_eq!(written[0], latched, "the latched message comes first");
    let mut rest = written[1..].to_vec();
    assert!(
        rest.windows(2).all(|w| w[0].log_time <= w[1].log_time),
        "in log-time order"
    );
    rest.sort();
    assert_eq!(rest, expected, "exactly the window, each message once");
    assert_eq!(report.messages, expected.len() as u64);
    assert_eq!(report.latched, 1);
    assert_eq!(report.topics["/camera"], 101);
    assert_eq!(
        report.output_bytes,
        std::fs::metadata(&output).unwrap().len()
    );

    // The first input holds nothing of the window; the finished one is read by its
    // index; the open one is scanned.
    let read: Vec<_> = report
        .inputs
        .iter()
        .map(|i| (i.indexed, i.fallback.is_some()))
        .collect();
    assert_eq!(read, [(false, false), (true, false), (false, false)]);

    let metadata = metadata_of(&output);
    let markers: Vec<Marker> = metadata
        .iter()
        .filter_map(|m| Marker::from_record(&m.name, &m.metadata))
        .collect();
    assert_eq!(
        markers.iter().map(|m| m.time_ns).collect::<Vec<_>>(),
        [T0 + 1600 * MS]
    );
    assert_eq!(report.markers, 1);
    assert!(metadata.contains(&incident), "the caller's record");
    let health = metadata
        .iter()
        .find(|m| m.name == health_metadata_name("incident.mcap"))
        .expect("a health record");
    let health = FileHealthSummary::from_metadata(&health.metadata).unwrap();
    let camera = &health.topics["/camera"];
    assert_eq!(camera.samples, 101, "the window's /camera messages");
    assert_eq!(
        camera.expected.max_gap_ns,
        Some(50 * MS),
        "the inputs' expectation"
    );
    assert_eq!(camera.gaps, 0);
    assert!(
        !health.topics.contains_key("/imu"),
        "no expectation, no health"
    );
    assert_eq!(health.missing, ["/gps"], "required, and not in the window");
}

#[test]
fn a_cut_of_chosen_topics_holds_only_their_messages_channels_and_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let (session, paths, open) = three_files(dir.path());
    let window = window(1500, 2500);
    // `/camera` has a schema, `/imu` none; the latched `/map` is chosen by neither.
    for (chosen, schemas) in [("/camera", 1), ("/imu", 0)] {
        let output = dir
            .path()
            .join(format!("incident{}.mcap", chosen.replace('/', "_")));
        let options = CutOptions {
            compression: Compression::Zstd,
            topics: Some(CutTopics::new(move |topic: &str| topic == chosen)),
            ..CutOptions::default()
        };
        let report = cut(&paths, window, &output, &options).unwrap();

        let expected: Vec<Sent> = (session.in_window(window).into_iter())
            .filter(|sent| sent.topic == chosen)
            .collect();
        assert!(expected.len() > 100, "{} of {chosen}", expected.len());
        let mut written = read_back(&output);
        written.sort();
        assert_eq!(
            written, expected,
            "exactly {chosen}'s messages of the window"
        );
        assert_eq!(report.messages, expected.len() as u64);
        assert_eq!(report.latched, 0, "the latched /map is not chosen");
        assert_eq!(report.topics.keys().collect::<Vec<_>>(), [chosen]);

        let bytes = std::fs::read(&output).unwrap();
        let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
        let topics: Vec<&str> = (summary.channels.values())
            .map(|channel| channel.topic.as_str())
            .collect();
        assert_eq!(topics, [chosen], "{chosen}'s channel only");
        assert_eq!(summary.schemas.len(), schemas, "{chosen}'s schema only");

        let metadata = metadata_of(&output);
        let health = (metadata.iter())
            .find(|m| m.name == health_metadata_name(output.file_name().unwrap().to_str().unwrap()))
            .expect("a health record");
        let health = FileHealthSummary::from_metadata(&health.metadata).unwrap();
        assert!(
            health.missing.is_empty() && health.topics.keys().all(|topic| topic == chosen),
            "no health of topics left out: {health:?}"
        );
    }
    drop(open);
}

#[test]
fn a_latched_repeat_at_the_start_of_a_split_file_is_written_once() {
    let dir = tempfile::tempdir().unwrap();
    let (session, paths, open) = three_files(dir.path());
    drop(open);
    let output = dir.path().join("incident.mcap");
    // /map at 900 ms lies in the first file and is repeated at the start of the second.
    let window = window(500, 1500);
    let report = cut(&paths, window, &output, &CutOptions::default()).unwrap();
    let expected = session.in_window(window);
    let written = read_back(&output);
    assert_eq!(written[0], session.latched_before(window.start_ns));
    assert_eq!(written[0].log_time, T0 + 300 * MS + 17, "found by the scan");
    let mut rest = written[1..].to_vec();
    rest.sort();
    assert_eq!(rest, expected);
    assert_eq!(report.duplicates, 1);
    assert_eq!(report.messages, expected.len() as u64);
}

/// Options whose pace hook counts the bytes it hears of, and the count.
fn counting_pace() -> (Arc<AtomicU64>, CutOptions) {
    let read = Arc::new(AtomicU64::new(0));
    let paced = Arc::clone(&read);
    let options = CutOptions {
        pace: Some(Arc::new(move |bytes| {
            paced.fetch_add(bytes, Ordering::Relaxed);
        })),
        ..CutOptions::default()
    };
    (read, options)
}

#[test]
fn a_finished_file_is_read_only_where_the_window_lies() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new();
    let path = dir.path().join("big.mcap");
    // 20 s: about 6.5 MB in 100 chunks of 64 KiB.
    close_with_health(session.record(&path, 0, 20_000, 10_050));
    let finished = ReindexOptions {
        chunk_size: 64 << 10,
        ..ReindexOptions::default()
    };
    common::reindex(&path, &path, &finished).unwrap();
    let output = dir.path().join("narrow.mcap");
    let window = window(10_000, 10_200);
    let (read, options) = counting_pace();
    let report = cut(std::slice::from_ref(&path), window, &output, &options).unwrap();

    let bytes = std::fs::read(&path).unwrap();
    let size = bytes.len() as u64;
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let overlapping: u64 = summary
        .chunk_indexes
        .iter()
        .filter(|c| c.message_start_time <= window.end_ns && c.message_end_time >= window.start_ns)
        .map(|c| c.chunk_length)
        .sum();
    let notes: u64 = summary
        .metadata_indexes
        .iter()
        .filter(|m| m.name == MARKER || m.name.starts_with("health/"))
        .map(|m| m.length)
        .sum();
    // The latched /map: the message index of its chunks before the window, then the one
    // chunk that holds the last (at 9900 ms).
    let map = summary
        .channels
        .values()
        .find(|c| c.topic == "/map")
        .unwrap()
        .id;
    let holding_map = |c: &&mcap::records::ChunkIndex| {
        c.message_start_time < window.start_ns && c.message_index_offsets.contains_key(&map)
    };
    let map_chunk = summary
        .chunk_indexes
        .iter()
        .filter(holding_map)
        .max_by_key(|c| c.message_start_time)
        .unwrap();
    assert!(map_chunk.message_end_time < window.start_ns);
    let summary_start = u64::from_le_bytes(bytes[bytes.len() - 37 + 9..][..8].try_into().unwrap());
    let head = 4096;
    let footer = 37;
    let input = &report.inputs[0];
    assert!(input.indexed);
    let map_index_bytes = input.bytes_read
        - (head + footer + (size - summary_start) + overlapping + notes + map_chunk.chunk_length);
    assert!(
        map_index_bytes > 0 && map_index_bytes < 1024,
        "only the /map message index of the chunk that holds it: {map_index_bytes}"
    );
    assert!(
        input.bytes_read * 10 < size,
        "{} of {size}",
        input.bytes_read
    );
    assert_eq!(
        read.load(Ordering::Relaxed),
        input.bytes_read - head - footer - (size - summary_start)
    );

    let written = read_back(&output);
    assert_eq!(written[0], session.latched_before(window.start_ns));
    let mut rest = written[1..].to_vec();
    rest.sort();
    assert_eq!(rest, session.in_window(window));
    assert_eq!(report.markers, 1);
}

/// A camera's frames of `frame_bytes` every 100 ms, `frames` of them, the latched `/map`
/// with every `map_every`-th frame (50 ms after it), and a marker for `marker.1` ms
/// written after the frame at `marker.0` ms, streamed into `path` with `options`; the
/// session, and the writer still open.
struct Stream {
    frames: u32,
    frame_bytes: usize,
    map_every: u32,
    marker: (u64, u64),
}

impl Stream {
    fn write(&self, path: &Path, options: WriterOptions) -> (Session, StreamWriter) {
        let mut writer = StreamWriter::create(path, options).unwrap();
        let camera = writer
            .add_channel(None, "/camera", "raw", &BTreeMap::new())
            .unwrap();
        let latched = BTreeMap::from([(HISTORY_SIZE.to_string(), "1".to_string())]);
        let map = writer.add_channel(None, "/map", "raw", &latched).unwrap();
        let mut session = Session::new();
        for i in 0..self.frames {
            let ms = u64::from(i) * 100;
            let frame = vec![(i % 251) as u8; self.frame_bytes];
            let mut messages = vec![("/camera", camera, i, ms, frame)];
            if i % self.map_every == 0 {
                let sequence = i / self.map_every;
                messages.push(("/map", map, sequence, ms + 50, payload("/map", i)));
            }
            for (topic, channel, sequence, ms, payload) in messages {
                let sent = Sent {
                    log_time: T0 + ms * MS,
                    topic: topic.to_string(),
                    sequence,
                    publish_time: T0 + ms * MS,
                    payload,
                };
                write(&mut writer, channel, &sent);
                session.sent.push(sent);
            }
            if ms == self.marker.0 {
                let marker = Marker {
                    time_ns: T0 + self.marker.1 * MS,
                    text: "brake".to_string(),
                };
                writer.add_metadata(MARKER, &marker.record()).unwrap();
            }
        }
        (session, writer)
    }
}

/// A camera's 256 KiB frames every 100 ms for 20 s, the latched `/map` every 2 s from 50 ms
/// and a marker at 10.5 s, streamed into `path`; the session, and the writer still open.
fn frames(path: &Path) -> (Session, StreamWriter) {
    let stream = Stream {
        frames: 200,
        frame_bytes: 256 << 10,
        map_every: 20,
        marker: (10_500, 10_500),
    };
    stream.write(path, WriterOptions::default())
}

/// The window of `frames` from `from_ms` to just before `to_ms`.
fn frames_window(from_ms: u64, to_ms: u64) -> LogWindow {
    LogWindow {
        start_ns: T0 + from_ms * MS,
        end_ns: T0 + to_ms * MS - 1,
    }
}

#[test]
fn an_unfinished_file_is_read_only_where_the_window_lies() {
    let dir = tempfile::tempdir().unwrap();
    let closed = dir.path().join("closed.mcap");
    let (session, writer) = frames(&closed);
    close_with_health(writer);
    let open = dir.path().join("open.mcap");
    let (_, mut writer) = frames(&open);
    writer.flush().unwrap();
    // 10 % of the span: 20 frames and the /map at 10.05 s; /map at 8.05 s is latched.
    let window = frames_window(10_000, 12_000);
    let expected = session.in_window(window);
    let bodies: u64 = expected.iter().map(|s| s.payload.len() as u64).sum();
    for path in [&closed, &open] {
        let output = dir.path().join("out.mcap");
        let (read, options) = counting_pace();
        let report = cut(std::slice::from_ref(path), window, &output, &options).unwrap();
        let written = read_back(&output);
        assert_eq!(written[0], session.latched_before(window.start_ns));
        let mut rest = written[1..].to_vec();
        rest.sort();
        assert_eq!(rest, expected, "{}: exactly the window", path.display());
        assert_eq!(report.markers, 1, "the marker at 10.5 s");

        let input = &report.inputs[0];
        assert!(!input.indexed && input.damage.is_none(), "{input:?}");
        let size = std::fs::metadata(path).unwrap().len();
        // The window's messages, each record's header (with the rest of its page) and the
        // file's header and summary.
        assert!(input.bytes_read > bodies);
        assert!(
            input.bytes_read * 100 < size * 15,
            "{}: {} of {size} bytes read, {bodies} in the window",
            path.display(),
            input.bytes_read,
        );
        let paced = read.load(Ordering::Relaxed);
        assert!(paced > bodies && paced <= input.bytes_read, "{paced}");
    }
    drop(writer);
}

/// Renames the checkpoints record of the closed file at `path` (same length), so that a
/// cut no longer finds it.
fn hide_checkpoints(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let name = CHECKPOINTS.as_bytes();
    let at = (bytes.windows(name.len()))
        .position(|w| w == name)
        .expect("the file has checkpoints");
    bytes[at + name.len() - 1] = b'X';
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_closed_streamed_file_is_scanned_from_its_last_checkpoint_before_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.mcap");
    let (session, writer) = frames(&with);
    close_with_health(writer);
    let without = dir.path().join("without.mcap");
    std::fs::copy(&with, &without).unwrap();
    hide_checkpoints(&without);
    // The checkpoint 10 s into the frames lies just before the window; /map's last message
    // before the window (at 8.05 s) lies before the checkpoint.
    let window = frames_window(10_010, 12_000);
    let mut reads = Vec::new();
    for path in [&with, &without] {
        let output = dir.path().join("out.mcap");
        let report = cut(
            std::slice::from_ref(path),
            window,
            &output,
            &CutOptions::default(),
        )
        .unwrap();
        let written = read_back(&output);
        assert_eq!(written[0], session.latched_before(window.start_ns));
        let mut rest = written[1..].to_vec();
        rest.sort();
        assert_eq!(rest, session.in_window(window), "{}", path.display());
        assert_eq!(report.markers, 1, "the marker at 10.5 s");
        let input = &report.inputs[0];
        assert!(!input.indexed && input.damage.is_none(), "{input:?}");
        reads.push(input.bytes_read);
    }
    // Without the checkpoint, the scan reads up to a page of each of the 100 frames before
    // it (2.8 KB each on average here).
    assert!(
        reads[0] + 100 * 1024 <= reads[1],
        "bytes read with checkpoints {}, without {}",
        reads[0],
        reads[1]
    );
    // A finished copy is indexed; the streamed file's checkpoints are not carried into it.
    let finished = dir.path().join("finished.mcap");
    common::reindex(&with, &finished, &ReindexOptions::default()).unwrap();
    let names: Vec<String> = metadata_of(&finished).into_iter().map(|m| m.name).collect();
    assert!(!names.iter().any(|name| name == CHECKPOINTS), "{names:?}");
    assert!(metadata_of(&with).iter().any(|m| m.name == CHECKPOINTS));
}

/// A camera's 4 KiB frames every 100 ms for 60 s, the latched `/map` every 15 s from
/// 50 ms, and a marker for 22 s written at 5 s, streamed into `path` with `options`: a
/// checkpoint every 10 s of log time. The session, and the writer still open.
fn ticks(path: &Path, options: WriterOptions) -> (Session, StreamWriter) {
    let stream = Stream {
        frames: 600,
        frame_bytes: 4096,
        map_every: 150,
        marker: (5_000, 22_000),
    };
    stream.write(path, options)
}

#[test]
fn a_scan_of_a_closed_or_growing_file_reads_from_the_checkpoint_before_the_window_to_the_one_after()
{
    let dir = tempfile::tempdir().unwrap();
    let book = CheckpointBook::default();
    let with_book = WriterOptions {
        checkpoints: Some(book.clone()),
        ..WriterOptions::default()
    };
    let closed = dir.path().join("closed.mcap");
    let (session, writer) = ticks(&closed, with_book.clone());
    close_with_health(writer);
    assert!(book.is_empty(), "a closed file's checkpoints are in it");
    let hidden = dir.path().join("hidden.mcap");
    std::fs::copy(&closed, &hidden).unwrap();
    hide_checkpoints(&hidden);
    let open = dir.path().join("open.mcap");
    let (_, mut writer) = ticks(&open, with_book);
    writer.flush().unwrap();
    assert_eq!(book.len(), 1);

    let window = frames_window(21_000, 23_000);
    let read = |path: &Path, checkpoints: Option<CheckpointBook>| {
        let output = dir.path().join("out.mcap");
        let options = CutOptions {
            checkpoints,
            ..CutOptions::default()
        };
        let report = cut(&[path.to_path_buf()], window, &output, &options).unwrap();
        let written = read_back(&output);
        assert_eq!(
            written[0],
            session.latched_before(window.start_ns),
            "/map at 15.05 s"
        );
        let mut rest = written[1..].to_vec();
        rest.sort();
        assert_eq!(rest, session.in_window(window), "{}", path.display());
        assert_eq!(report.markers, 1, "{}: the marker for 22 s", path.display());
        let input = &report.inputs[0];
        assert!(!input.indexed && input.damage.is_none(), "{input:?}");
        input.bytes_read
    };
    // From 20 s to 30 s of the 60 rather than from the start to 10 s past the window.
    let closed_read = read(&closed, None);
    let hidden_read = read(&hidden, None);
    assert!(
        closed_read * 100 < hidden_read * 40,
        "with checkpoints {closed_read} bytes, without {hidden_read}"
    );
    // The growing file too, its checkpoint at 50 s being past the window's end by more
    // than the reorder margin.
    let open_read = read(&open, Some(book.clone()));
    let open_scanned = read(&open, None);
    assert!(
        open_read * 100 < open_scanned * 40,
        "with checkpoints {open_read} bytes, without {open_scanned}"
    );
    println!("bytes read: closed {closed_read} ({hidden_read} without checkpoints), growing {open_read} ({open_scanned})");
    drop(writer);
}

#[test]
fn a_scan_stops_once_the_messages_are_past_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crashed.mcap");
    let (session, mut writer) = frames(&path);
    writer.flush().unwrap();
    drop(writer);
    // A crash cuts the file in a frame at about 18 s.
    let size = std::fs::metadata(&path).unwrap().len() * 9 / 10;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(size)
        .unwrap();

    let output = dir.path().join("out.mcap");
    let cut_window = |window: LogWindow| {
        let inputs = std::slice::from_ref(&path);
        let report = cut(inputs, window, &output, &CutOptions::default()).unwrap();
        let mut written = read_back(&output);
        // (the latched message before the window)
        written.retain(|s| s.log_time >= window.start_ns);
        written.sort();
        assert_eq!(written, session.in_window(window));
        report.inputs[0].clone()
    };

    let input = cut_window(frames_window(0, 1000));
    // The messages past 11 s end the scan: the cut tail is never reached.
    assert!(input.damage.is_none(), "{input:?}");
    assert!(input.bytes_read * 100 < size * 7, "{input:?} of {size}");

    // A window near the tail is read up to its last complete record.
    let input = cut_window(frames_window(15_000, 16_000));
    let damage = input.damage.expect("the cut tail");
    assert!(
        size - damage.offset < 9 + 22 + (256 << 10),
        "in the last frame: {damage:?}"
    );
}

#[test]
fn a_corrupt_chunk_makes_the_cut_scan_that_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new();
    let path = dir.path().join("damaged.mcap");
    close_with_health(session.record(&path, 0, 4000, 0));
    let finished = ReindexOptions {
        chunk_size: 64 << 10,
        compression: Compression::Zstd,
        ..ReindexOptions::default()
    };
    common::reindex(&path, &path, &finished).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let window = window(2000, 3000);
    let chunk = summary
        .chunk_indexes
        .iter()
        .find(|c| c.message_start_time > T0 + 2500 * MS)
        .unwrap()
        .clone();
    // Flip bytes in the middle of its compressed data.
    let middle = (chunk.chunk_start_offset + chunk.chunk_length / 2) as usize;
    bytes[middle..middle + 16]
        .iter_mut()
        .for_each(|b| *b ^= 0xff);
    std::fs::write(&path, &bytes).unwrap();

    let output = dir.path().join("out.mcap");
    let report = cut(&[path], window, &output, &CutOptions::default()).unwrap();
    let input = &report.inputs[0];
    assert!(!input.indexed);
    let fallback = input.fallback.as_deref().unwrap();
    assert!(
        fallback.contains(&format!("chunk at {}", chunk.chunk_start_offset)),
        "{fallback}"
    );
    assert_eq!(
        input.damage.as_ref().unwrap().offset,
        chunk.chunk_start_offset
    );
    // Everything before the damaged chunk, once.
    let written = read_back(&output);
    let mut rest = written[1..].to_vec();
    rest.sort();
    let before: Vec<Sent> = session
        .in_window(window)
        .into_iter()
        .filter(|s| s.log_time < chunk.message_start_time)
        .collect();
    assert_eq!(rest, before);
}

#[test]
fn a_cancelled_cut_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (_, paths, open) = three_files(dir.path());
    drop(open);
    let output = dir.path().join("incident.mcap");
    let options = CutOptions {
        cancel: Some(Arc::new(AtomicBool::new(true))),
        ..CutOptions::default()
    };
    let result = cut(&paths, window(500, 2500), &output, &options);
    assert!(matches!(result, Err(CutError::Cancelled)), "{result:?}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with("s_"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_cut_names_an_input_that_is_no_mcap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.mcap");
    std::fs::write(&path, b"hello, this is text").unwrap();
    let output = dir.path().join("out.mcap");
    let result = cut(
        std::slice::from_ref(&path),
        window(0, 1),
        &output,
        &CutOptions::default(),
    );
    assert!(
        matches!(&result, Err(CutError::NotMcap { path: p }) if *p == path),
        "{result:?}"
    );
    assert!(!output.exists());
}

#[test]
fn a_file_a_power_cut_left_empty_is_an_input_with_nothing_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let (session, mut paths, open) = three_files(dir.path());
    drop(open);
    // The file begun just before the power cut: none of its bytes, or only some of the
    // magic, reached the disk.
    let empty = dir.path().join("s_0003.mcap");
    let begun = dir.path().join("s_0004.mcap");
    std::fs::write(&empty, b"").unwrap();
    std::fs::write(&begun, &mcap::MAGIC[..3]).unwrap();
    paths.extend([empty, begun]);
    let output = dir.path().join("incident.mcap");
    let window = window(800, 2900);
    let report = cut(&paths, window, &output, &CutOptions::default()).unwrap();
    let expected = session.in_window(window);
    let written = read_back(&output);
    let mut rest = written[1..].to_vec();
    rest.sort();
    assert_eq!(rest, expected);
    assert_eq!(report.inputs[3].bytes_read, 0);
}

#[test]
fn independent_readers_read_a_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (session, paths, open) = three_files(dir.path());
    drop(open);
    let output = dir.path().join("incident.mcap");
    let window = window(800, 2200);
    let options = CutOptions {
        compression: Compression::Zstd,
        ..CutOptions::default()
    };
    let report = cut(&paths, window, &output, &options).unwrap();
    let total = report.messages + report.latched;
    let python = recd_testkit::read_mcap(&output);
    assert_eq!(python["message_count"].as_u64(), Some(total));
    assert_eq!(
        python["messages"].as_array().unwrap().len() as u64,
        total,
        "the Python mcap reader"
    );
    let core = &recd_testkit::read_with_mcap_core(std::slice::from_ref(&output))[0];
    assert_eq!(core.stream_messages, total);
    assert_eq!(
        core.indexed_messages,
        Some(total),
        "@mcap/core's indexed reader"
    );
    assert_eq!(
        core.indexed_digest.as_deref(),
        Some(core.stream_digest.as_str())
    );
    assert_eq!(session.in_window(window).len() as u64, report.messages);
}
