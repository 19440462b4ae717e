//! `summarize`: a fixed number of reads on a closed file whatever its size, and an honest
//! scan of a file a crash left open.

mod common;

use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use common::{frame_records, write_sample};
use recd_storage::{summarize, summarize_from, MessageHeader, StreamWriter, WriterOptions};

/// Counts the reads, seeks and bytes that pass through it.
struct Counting<R> {
    inner: R,
    reads: usize,
    seeks: usize,
    bytes: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reads += 1;
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

impl<R: Seek> Seek for Counting<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.seeks += 1;
        self.inner.seek(to)
    }
}

fn count_io(path: &Path) -> (usize, usize, u64, recd_storage::FileInfo) {
    let file = std::fs::File::open(path).unwrap();
    let size = file.metadata().unwrap().len();
    let mut counting = Counting {
        inner: file,
        reads: 0,
        seeks: 0,
        bytes: 0,
    };
    let info = summarize_from(&mut counting, size, path).unwrap();
    (counting.reads, counting.seeks, counting.bytes, info)
}

#[test]
fn a_closed_file_is_summarized_in_the_same_reads_whatever_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.mcap");
    let large = dir.path().join("large.mcap");
    for (path, messages) in [(&small, 4u64), (&large, 20)] {
        // 4 messages of 4 KiB, or 20 of 64 MiB (1.25 GiB), written from one buffer.
        let size = if messages == 4 { 4 << 10 } else { 64 << 20 };
        let payload = vec![0x5a_u8; size];
        let mut writer = StreamWriter::create(path, WriterOptions::default()).unwrap();
        let channel = writer
            .add_channel(None, "/camera", "raw", &Default::default())
            .unwrap();
        for i in 0..messages {
            let header = MessageHeader {
                channel,
                sequence: i as u32,
                log_time: i + 1,
                publish_time: i + 1,
            };
            writer.write_message(&header, &payload).unwrap();
        }
        writer.close().unwrap();
    }
    assert!(std::fs::metadata(&large).unwrap().len() >= 1 << 30);

    let (small_reads, small_seeks, _, small_info) = count_io(&small);
    let (large_reads, large_seeks, large_bytes, large_info) = count_io(&large);
    assert_eq!(
        (small_info.message_count, large_info.message_count),
        (4, 20)
    );
    assert!(large_info.closed_cleanly);
    assert_eq!(large_info.channels[0].message_count, 20);
    assert_eq!(large_reads, small_reads, "reads do not grow with the file");
    assert_eq!(large_seeks, small_seeks, "seeks do not grow with the file");
    assert_eq!(
        (large_reads, large_seeks),
        (3, 2),
        "head, footer and summary reads"
    );
    assert!(
        large_bytes < 64 << 10,
        "read {large_bytes} bytes of a 1.25 GiB file"
    );
}

#[test]
fn a_file_left_open_is_scanned_and_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.mcap");
    let expected = write_sample(&path, WriterOptions::default(), 3);
    let bytes = std::fs::read(&path).unwrap();
    let messages: Vec<_> = frame_records(&bytes)
        .into_iter()
        .filter(|r| r.opcode == mcap::records::op::MESSAGE)
        .collect();
    // Cut in the middle of the 10th message, as a crash would.
    let tenth = messages[9];
    let cut = path.with_file_name("cut.mcap");
    std::fs::write(&cut, &bytes[..((tenth.start + tenth.end) / 2) as usize]).unwrap();

    let info = summarize(&cut).unwrap();
    assert!(!info.closed_cleanly);
    assert_eq!(info.message_count, 9);
    assert_eq!(info.start_time, Some(expected[0].log_time));
    assert_eq!(info.end_time, Some(expected[8].log_time));
    assert_eq!(info.channels.len(), 3);
    assert_eq!(info.library, recd_storage::LIBRARY);
    let counted: u64 = info.channels.iter().map(|c| c.message_count).sum();
    assert_eq!(counted, 9);
    let scan = info.scan.expect("scan outcome");
    let damage = scan.damage.expect("the cut is reported");
    assert_eq!(damage.offset, tenth.start);
    assert_eq!(scan.unusable_bytes, (tenth.end - tenth.start) / 2);
}

#[test]
fn bad_inputs_get_errors_that_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello, this is not an mcap file").unwrap();
    let empty = dir.path().join("empty.mcap");
    std::fs::write(&empty, "").unwrap();
    let missing = dir.path().join("missing.mcap");

    let message = |path: &Path| summarize(path).unwrap_err().to_string();
    assert!(
        message(&text).contains("not an MCAP file"),
        "{}",
        message(&text)
    );
    assert!(message(&empty).contains("is empty"), "{}", message(&empty));
    assert!(
        message(&missing).contains("No such file"),
        "{}",
        message(&missing)
    );
    assert!(
        message(dir.path()).contains("is a directory"),
        "{}",
        message(dir.path())
    );
}

#[test]
fn markers_and_triggers_are_listed_from_the_summary_and_from_a_scan() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("marked.mcap");
    let mut writer = StreamWriter::create(&path, WriterOptions::default()).unwrap();
    let marker = |time_ns, text: &str| recd_storage::Marker {
        time_ns,
        text: text.into(),
    };
    let marks = [marker(5, "start"), marker(9, "hard brake")];
    for m in &marks {
        writer.add_metadata("marker", &m.record()).unwrap();
        // A Metadata record of another name is not a marker.
        writer
            .add_metadata("user/marked.mcap", &m.record())
            .unwrap();
    }
    let trigger = recd_storage::Trigger {
        time_ns: 30,
        start_ns: 10,
        end_ns: 40,
        note: "hard brake".into(),
        id: "brake-17".into(),
        clock_sync: "kernel: synchronized, max error 16 ms".into(),
    };
    writer.add_metadata("trigger", &trigger.record()).unwrap();
    writer.flush().unwrap();
    let open = summarize(&path).unwrap();
    assert!(open.scan.is_some());
    assert_eq!(open.markers, marks);
    assert_eq!(open.triggers, std::slice::from_ref(&trigger));
    writer.close().unwrap();
    let closed = summarize(&path).unwrap();
    assert!(closed.scan.is_none());
    assert_eq!(closed.markers, marks);
    assert_eq!(closed.triggers, [trigger]);
}
