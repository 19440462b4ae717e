//! The recorder engine against real publisher processes over real iceoryx2 shared memory.

use std::collections::BTreeMap;
use std::time::Duration;

use recd_engine::{IoMode, Recording, RecordingSummary};
use recd_testkit::{finish_load, kill_group, recorded_queue_depth, wait_until, Domain, RecdLoad};
use recd_workload::verify::{check_files, TopicCheck};

/// The queue depth (`subscriber_max_buffer_size`) of the slow-writer tests' publisher:
/// 320 ms at 50 fps.
const QUEUE_DEPTH: usize = 16;

/// Every message of every file of a recording, proven by the mcap crate.
fn check_recording(summary: &RecordingSummary) -> BTreeMap<String, TopicCheck> {
    let paths: Vec<_> = summary.files.iter().map(|f| f.path.clone()).collect();
    check_files(&paths).unwrap()
}

#[test]
fn every_message_of_every_topic_is_recorded_byte_exact_in_order() {
    assert_eq!(record_cameras_and_small_topics(IoMode::Buffered), 0);
}

#[test]
fn direct_io_records_every_message_byte_exact_with_payloads_aligned_by_padding() {
    // One padding record before each 300 kB frame written in place (2 cameras × 60), and
    // more where the writer flushed when idle.
    assert!(record_cameras_and_small_topics(IoMode::Direct) >= 120);
}

/// Padding records (recd's private opcode) in the files of a recording.
fn padding_records(summary: &RecordingSummary) -> usize {
    let mut count = 0;
    for file in &summary.files {
        let bytes = std::fs::read(&file.path).unwrap();
        let mut at = 8;
        while at + 9 <= bytes.len() - 8 {
            let opcode = bytes[at];
            let len = u64::from_le_bytes(bytes[at + 1..at + 9].try_into().unwrap()) as usize;
            count += usize::from(opcode == recd_storage::direct::PADDING_OPCODE);
            at += 9 + len;
            if opcode == mcap::records::op::FOOTER {
                break;
            }
        }
    }
    count
}

/// Records 2 cameras and 3 small topics, 60 messages each, and checks that every message
/// is in the files byte-exact, in order, with its user header; returns how many padding
/// records the files hold.
fn record_cameras_and_small_topics(io_mode: IoMode) -> usize {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["t/*"]);
    config.io_mode = io_mode;
    let recording = Recording::start(config).unwrap();
    assert_eq!(recording.status().io_mode, io_mode);
    let load = domain.load(
        &RecdLoad::new("t/")
            .cameras(2)
            .frame_size(300_000)
            .fps(100)
            .small_topics(3)
            .small_size(100)
            .small_rate(100)
            .count(60)
            .duration(Duration::from_secs(20))
            .wait_subscribers(1),
    );
    let sent = finish_load(load);
    let summary = recording.stop().unwrap();
    assert!(summary.write_error.is_none());

    let checks = check_recording(&summary);
    assert_eq!(sent.topics.len(), 5);
    for topic in &sent.topics {
        assert_eq!(topic.sent, 60, "{} sent everything", topic.service);
        let check = &checks[&topic.service];
        assert!(check.bad.is_empty(), "{}: {:?}", topic.service, check.bad);
        assert_eq!(
            check.sequences,
            (0..60).collect::<Vec<u64>>(),
            "{}",
            topic.service
        );
        for (header, sequence) in check.user_headers.iter().zip(&check.sequences) {
            assert_eq!(header.len(), 16);
            assert_eq!(
                u64::from_ne_bytes(header[8..16].try_into().unwrap()),
                *sequence
            );
        }
        let status = summary
            .topics
            .iter()
            .find(|t| t.service == topic.service)
            .unwrap();
        assert_eq!(status.counts.received, 60);
        assert_eq!(status.counts.written, 60);
        assert_eq!(status.counts.dropped + status.counts.lost, 0);
    }
    assert_channels_describe_the_services(&summary);
    padding_records(&summary)
}

/// Each channel names its service and keeps the iceoryx2 type details of payload and user
/// header (keys of `recd_storage::iceoryx2`); the schema is named after the payload type.
fn assert_channels_describe_the_services(summary: &RecordingSummary) {
    use recd_storage::iceoryx2 as keys;
    let bytes = std::fs::read(&summary.files[0].path).unwrap();
    let file = mcap::Summary::read(&bytes).unwrap().expect("a summary");
    assert_eq!(file.channels.len(), 5);
    for channel in file.channels.values() {
        let metadata = &channel.metadata;
        assert_eq!(channel.message_encoding, keys::MESSAGE_ENCODING);
        assert_eq!(metadata[keys::SERVICE_NAME], channel.topic);
        assert_eq!(metadata[keys::PAYLOAD_TYPE_NAME], "u8");
        assert_eq!(metadata[keys::PAYLOAD_SIZE], "1");
        assert_eq!(metadata[keys::PAYLOAD_VARIANT], "Dynamic");
        assert_eq!(
            metadata[keys::USER_HEADER_TYPE_NAME],
            keys::RMW_MESSAGE_INFO_HEADER
        );
        assert_eq!(metadata[keys::USER_HEADER_SIZE], "16");
        assert_eq!(metadata[keys::USER_HEADER_ALIGNMENT], "8");
        assert_eq!(metadata[keys::HISTORY_SIZE], "0");
        let schema = channel.schema.as_ref().expect("a schema");
        assert_eq!(schema.name, "u8");
        assert_eq!(schema.encoding, keys::SCHEMA_ENCODING);
    }
}

#[test]
fn late_topics_are_recorded_from_their_first_sample_and_a_killed_publisher_harms_nothing() {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let recording = Recording::start(domain.config(dir.path(), &["t/*"])).unwrap();
    let steady = domain.load(
        &RecdLoad::new("t/steady/")
            .cameras(0)
            .small_topics(1)
            .small_rate(200)
            .count(300)
            .wait_subscribers(1),
    );
    let victim = domain.load_in_own_group(
        &RecdLoad::new("t/victim/")
            .cameras(0)
            .small_topics(1)
            .small_rate(200)
            .duration(Duration::from_secs(20))
            .wait_subscribers(1),
    );
    let unrelated = domain.load(
        &RecdLoad::new("other/")
            .cameras(0)
            .small_topics(1)
            .count(50)
            .small_rate(200),
    );
    std::thread::sleep(Duration::from_millis(400));
    kill_group(victim);
    let late = domain.load(
        &RecdLoad::new("t/late/")
            .cameras(1)
            .frame_size(100_000)
            .fps(100)
            .count(100)
            .wait_subscribers(1),
    );
    let steady = finish_load(steady);
    let late = finish_load(late);
    finish_load(unrelated);
    let summary = recording.stop().unwrap();

    let checks = check_recording(&summary);
    for sent in steady.topics.iter().chain(&late.topics) {
        let check = &checks[&sent.service];
        assert!(check.bad.is_empty(), "{}: {:?}", sent.service, check.bad);
        assert_eq!(
            check.sequences,
            (0..sent.sent).collect::<Vec<u64>>(),
            "{}",
            sent.service
        );
    }
    let victim = &checks["t/victim/small/0"];
    assert!(victim.messages > 0 && victim.bad.is_empty() && victim.in_order());
    assert!(
        checks.keys().all(|topic| topic.starts_with("t/")),
        "only selected services are recorded: {:?}",
        checks.keys().collect::<Vec<_>>()
    );
}

#[test]
fn drops_from_a_full_ring_are_counted_exactly() {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["t/*"]);
    config.ring.items = 4;
    config.test_hooks.writer_delay = Some(Duration::from_millis(20));
    let recording = Recording::start(config).unwrap();
    let load = domain.load(
        &RecdLoad::new("t/")
            .cameras(0)
            .small_topics(2)
            .small_rate(500)
            .count(300)
            .wait_subscribers(1),
    );
    let sent = finish_load(load);
    let summary = recording.stop().unwrap();

    let checks = check_recording(&summary);
    let mut total_dropped = 0;
    for topic in &sent.topics {
        // A topic whose every message was dropped has none in the file.
        let check = checks.get(&topic.service).cloned().unwrap_or_default();
        let counts = summary
            .topics
            .iter()
            .find(|t| t.service == topic.service)
            .unwrap()
            .counts;
        assert_eq!(counts.lost, 0, "the publisher's queue never overflowed");
        assert_eq!(counts.received, topic.sent);
        assert_eq!(counts.written, check.messages);
        assert_eq!(
            counts.dropped,
            topic.sent - check.messages,
            "{}",
            topic.service
        );
        assert!(check.in_order() && check.bad.is_empty());
        assert!(
            check.messages > 0,
            "{}: drops fall on every topic in turn, not always on the same one",
            topic.service
        );
        total_dropped += counts.dropped;
    }
    assert!(
        total_dropped > 0,
        "the slowed writer made the ring overflow"
    );
}

#[test]
fn large_samples_are_released_after_writing_so_two_borrows_suffice() {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let recording = Recording::start(domain.config(dir.path(), &["t/*"])).unwrap();
    let load = domain.load(
        &RecdLoad::new("t/")
            .cameras(1)
            .frame_size(2_000_000)
            .fps(100)
            .count(200)
            .borrowed(2)
            .wait_subscribers(1),
    );
    let sent = finish_load(load);
    let summary = recording.stop().unwrap();

    let topic = &sent.topics[0];
    assert_eq!(topic.errors, 0, "no loan or send error");
    assert_eq!(topic.sent, 200);
    let checks = check_files(&[&summary.files[0].path]).unwrap();
    let check = &checks[&topic.service];
    let counts = summary.topics[0].counts;
    assert!(check.bad.is_empty() && check.in_order());
    assert_eq!(counts.written, check.messages);
    assert_eq!(check.messages + counts.dropped + counts.lost, topic.sent);
    assert!(check.messages > 0);
}

/// Records 100 frames of 1 MB at 50 fps from a publisher with iceoryx2's default borrow
/// limit (2) while the writer takes 30 ms per message, slower than the publisher: the
/// writer holds samples as long as it can, so the receive thread must take back the loans
/// it has not reached whenever a sample waits in the queue. Without that the queue would
/// fill within a second and overflow. The queue holds [`QUEUE_DEPTH`] frames, as an
/// integrator configures a recorded service: iceoryx2's 2 would also overflow where a
/// receive pass is one period late on a loaded machine, which is not these tests' point.
fn record_with_the_default_borrow_limit_and_a_slow_writer(
    spill_bytes: usize,
    copy_slice: Option<Duration>,
) -> (
    recd_workload::report::TopicSent,
    recd_engine::TopicCounts,
    TopicCheck,
    recd_engine::ReceiveThreadStatus,
) {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["t/*"]);
    config.spill_bytes = spill_bytes;
    config.test_hooks.copy_slice = copy_slice;
    config.test_hooks.writer_delay = Some(Duration::from_millis(30));
    let recording = Recording::start(config).unwrap();
    let load = domain.load(
        &RecdLoad::new("t/")
            .cameras(1)
            .frame_size(1_000_000)
            .fps(50)
            .count(100)
            .buffer(QUEUE_DEPTH)
            .borrowed(2)
            .wait_subscribers(1),
    );
    let sent = finish_load(load);
    let summary = recording.stop().unwrap();
    let topic = sent.topics[0].clone();
    assert_eq!(topic.errors, 0, "no loan or send error");
    assert_eq!(
        recorded_queue_depth(&summary.files[0].path, &topic.service),
        QUEUE_DEPTH
    );
    let counts = summary.topics[0].counts;
    let check = check_recording(&summary)
        .remove(&topic.service)
        .unwrap_or_default();
    let receive = summary.receive_threads[0].clone();
    assert_eq!(receive.source, "iceoryx2");
    (topic, counts, check, receive)
}

#[test]
fn a_slow_writer_never_leaves_samples_to_be_overwritten_in_the_publishers_queue() {
    let (sent, counts, check, receive) =
        record_with_the_default_borrow_limit_and_a_slow_writer(256 << 20, None);
    assert_nothing_overwritten_and_only_given_up_loans_dropped(&sent, &counts, &check, &receive);
}

/// Every frame sent was received, none overwritten in the queue; each one is in the file
/// intact and in order, or was dropped because its loan was given up. The pool has room
/// for every frame: a loan is given up only when copying would take more of the receive
/// thread's time than its budget (a heavily loaded machine: the other tests run beside).
fn assert_nothing_overwritten_and_only_given_up_loans_dropped(
    sent: &recd_workload::report::TopicSent,
    counts: &recd_engine::TopicCounts,
    check: &TopicCheck,
    receive: &recd_engine::ReceiveThreadStatus,
) {
    assert!(check.bad.is_empty() && check.in_order(), "{check:?}");
    assert!(receive.spilled > 0, "loans were taken back: {receive:?}");
    assert_eq!(counts.lost, 0, "no sample was overwritten in the queue");
    assert_eq!(counts.received, sent.sent);
    assert_eq!(
        counts.dropped,
        receive.reclaimed - receive.spilled,
        "only given-up loans are dropped: {receive:?}"
    );
    assert_eq!(counts.written + counts.dropped, sent.sent);
    assert_eq!(
        check.messages, counts.written,
        "every frame written is in the file"
    );
}

/// The bytes one pass copies of a taken-back sample when its copying time is zero.
const COPY_STEP: u64 = 256 << 10;

#[test]
fn a_taken_back_frame_is_copied_a_slice_per_pass_and_written_whole() {
    // No copying time per pass: each pass copies one step, so a 1 MB frame's copy spans
    // at least four passes, its loan held (and the next frame waiting in the queue) until
    // the copy is whole, or the writer came to the frame first and wrote it from shared
    // memory (the copy then ends unused).
    let (sent, counts, check, receive) =
        record_with_the_default_borrow_limit_and_a_slow_writer(256 << 20, Some(Duration::ZERO));
    assert_nothing_overwritten_and_only_given_up_loans_dropped(&sent, &counts, &check, &receive);
    let steps_per_frame = 1_000_000_u64.div_ceil(COPY_STEP);
    assert!(
        receive.copy_passes >= steps_per_frame * receive.spilled,
        "each copy spans {steps_per_frame} passes or more: {receive:?}"
    );
}

#[test]
fn a_full_spill_pool_drops_samples_and_counts_every_one() {
    // Room for two frames: the writer's lag soon fills it.
    let (sent, counts, check, receive) =
        record_with_the_default_borrow_limit_and_a_slow_writer(2_100_000, None);
    assert!(check.bad.is_empty() && check.in_order(), "{check:?}");
    assert_eq!(
        receive.reclaimed - receive.spilled,
        counts.dropped,
        "each loan given up unwritten is a drop: {receive:?}"
    );
    assert_eq!(counts.lost, 0, "no sample was overwritten in the queue");
    assert_eq!(counts.received, sent.sent);
    assert!(counts.dropped > 0, "the pool filled up: {counts:?}");
    assert_eq!(counts.written, check.messages);
    assert_eq!(counts.written + counts.dropped, sent.sent, "{counts:?}");
}

#[test]
fn a_late_receive_thread_is_counted_as_overflows() {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["t/*"]);
    config.test_hooks.receive_delay = Some(Duration::from_millis(40));
    let load = domain.load(
        &RecdLoad::new("t/")
            .cameras(0)
            .small_topics(1)
            .small_rate(500)
            // 2 s: passes late by 40 ms find the queue full many times over, however late
            // a loaded machine makes the first.
            .count(1000)
            .buffer(4)
            .wait_subscribers(1),
    );
    // The recorder subscribes with the publisher already there. (Subscribed between the
    // creation of the service and of its publisher, it would rightly take the publisher
    // for one joining late, whose loss before its first sample taken cannot be known:
    // the next test.)
    assert!(
        domain.wait_for_load_publisher("t/small/0", Duration::from_secs(10)),
        "recd-load's publisher is up"
    );
    let recording = Recording::start(config).unwrap();
    let sent = finish_load(load);
    let summary = recording.stop().unwrap();
    let counts = summary.topics[0].counts;
    assert!(counts.overflows > 0, "{counts:?}");
    assert!(
        counts.lost > 0,
        "the sequence numbers show what was overwritten: {counts:?}"
    );
    // The publisher sent only once the recorder had subscribed: every sample is the
    // recorder's. Those overwritten before its first pass show in no sequence gap, so
    // the counts say they cannot say (the first pass found the queue full).
    let sent = sent.topics[0].sent;
    assert!(counts.received + counts.lost <= sent);
    assert!(
        counts.received + counts.lost == sent || counts.unknown_loss,
        "{} sent, {} received, {} lost, and no unknown loss said: {counts:?}",
        sent,
        counts.received,
        counts.lost
    );
    assert_eq!(counts.received, counts.written + counts.dropped);
    let receive = &summary.receive_threads[0];
    assert!(receive.passes > 0);
    assert!(
        receive.lateness_max >= Duration::from_millis(30),
        "the 40 ms stall shows as lateness: {receive:?}"
    );
}

#[test]
fn a_latched_topic_s_history_filling_the_queue_is_no_unknown_loss() {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let config = domain.config(dir.path(), &["t/*"]);
    // A latched topic (history 1, a 2-deep queue) publishing before the recorder comes.
    let load = domain.load(
        &RecdLoad::new("t/")
            .cameras(0)
            .small_topics(1)
            .small_rate(20)
            .count(60)
            .buffer(2)
            .history(1),
    );
    assert!(
        domain.wait_for_load_publisher("t/small/0", Duration::from_secs(10)),
        "recd-load's publisher is up"
    );
    std::thread::sleep(Duration::from_millis(500));
    // Subscribed now: the next send hands over the history first, then the new sample,
    // which fill the queue though nothing the recorder was owed is lost.
    let recording = Recording::start(config).unwrap();
    finish_load(load);
    let summary = recording.stop().unwrap();
    let counts = summary.topics[0].counts;
    assert!(counts.received > 0, "{counts:?}");
    assert!(
        !counts.unknown_loss,
        "a history is no overwritten sample: {counts:?}"
    );
}

#[test]
fn a_publisher_joining_late_whose_first_samples_may_be_overwritten_is_an_unknown_loss() {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["t/*"]);
    config.test_hooks.receive_delay = Some(Duration::from_millis(40));
    let recording = Recording::start(config).unwrap();
    let small = |rate: u32| {
        RecdLoad::new("t/")
            .cameras(0)
            .small_topics(1)
            .small_rate(rate)
            .buffer(2)
    };
    // A publisher the recorder subscribed to: what it sent is counted by its sequence
    // numbers, however late the receive thread.
    let first = domain.load(
        &small(20)
            .duration(Duration::from_secs(3))
            .wait_subscribers(1),
    );
    let taken = recd_testkit::wait_until(Duration::from_secs(10), || {
        recording
            .status()
            .topics
            .first()
            .is_some_and(|t| t.counts.received >= 5)
    });
    assert!(taken, "the first publisher's samples arrive");
    assert!(!recording.status().topics[0].counts.unknown_loss);
    // A second publisher joins the service at 500 Hz: 20 samples reach the 2-deep queue
    // before each pass, and those overwritten before its first sample was taken show in
    // no gap of its sequence numbers.
    let second = domain.load(&small(500).count(200));
    finish_load(second);
    finish_load(first);
    let summary = recording.stop().unwrap();
    let counts = summary.topics[0].counts;
    assert!(counts.overflows > 0, "{counts:?}");
    assert!(counts.lost > 0, "later gaps are counted: {counts:?}");
    assert!(
        counts.unknown_loss,
        "what the joining publisher sent before its first sample was taken may be lost: {counts:?}"
    );
}

#[test]
fn a_late_receive_thread_on_a_topic_without_sequence_numbers_is_an_unknown_loss() {
    use iceoryx2::prelude::*;
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["t/*"]);
    config.test_hooks.receive_delay = Some(Duration::from_millis(40));
    let recording = Recording::start(config).unwrap();
    // A raw publisher with iceoryx2's default limits: a plain u64, no rmw header.
    let node = recd_engine::iceoryx2_node(Some(&domain.prefix)).unwrap();
    let service = node
        .service_builder(&ServiceName::new("t/raw").unwrap())
        .publish_subscribe::<u64>()
        .open_or_create()
        .unwrap();
    let publisher = service.publisher_builder().create().unwrap();
    let subscribed = recd_testkit::wait_until(Duration::from_secs(10), || {
        service.dynamic_config().number_of_subscribers() > 0
    });
    assert!(subscribed, "the recorder subscribes");
    for i in 0..200u64 {
        publisher.send_copy(i).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(Duration::from_millis(200));
    let summary = recording.stop().unwrap();
    let counts = summary.topics[0].counts;
    assert!(counts.overflows > 0, "{counts:?}");
    assert!(
        counts.unknown_loss,
        "nothing can count what was overwritten"
    );
    assert_eq!(counts.lost, 0);
    assert!(
        counts.received < 200,
        "the publisher overwrote some: {counts:?}"
    );
    drop((publisher, service, node));
}

#[test]
fn split_files_stand_alone_and_together_hold_every_message_once() {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["t/*"]);
    config.split.max_bytes = Some(1_000_000);
    let recording = Recording::start(config).unwrap();
    let latched = domain.load(
        &RecdLoad::new("t/map/")
            .cameras(0)
            .small_topics(1)
            .count(1)
            .history(1)
            .linger(Duration::from_secs(5))
            .wait_subscribers(1),
    );
    assert!(wait_until(Duration::from_secs(5), || {
        recording
            .status()
            .topics
            .iter()
            .any(|t| t.counts.written == 1)
    }));
    let cameras = domain.load(
        &RecdLoad::new("t/")
            .cameras(1)
            .frame_size(300_000)
            .fps(100)
            .count(50)
            .wait_subscribers(1),
    );
    let cameras = finish_load(cameras);
    let summary = recording.stop().unwrap();
    finish_load(latched);

    assert!(summary.files.len() >= 4, "{} files", summary.files.len());
    let mut frames = Vec::new();
    for file in &summary.files {
        // Each file alone: a complete MCAP whose summary the mcap crate reads.
        let bytes = std::fs::read(&file.path).unwrap();
        let info = mcap::Summary::read(&bytes)
            .unwrap()
            .expect("file has a summary");
        assert_eq!(info.stats.unwrap().message_count, file.message_count);
        let checks = check_files(&[&file.path]).unwrap();
        assert_eq!(
            checks["t/map/small/0"].sequences,
            vec![0],
            "latched message in every file"
        );
        if let Some(check) = checks.get(&cameras.topics[0].service) {
            frames.extend(check.sequences.iter().copied());
        }
    }
    assert_eq!(frames, (0..50).collect::<Vec<u64>>());
}

#[test]
fn an_event_service_wakes_the_receive_thread_long_before_the_next_poll() {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["t/*"]);
    // Polls alone would come every 5 s: a queue of 16 at 200 Hz would overflow between
    // two of them, so every sample in the file was received because a notification woke
    // the thread.
    config.max_poll_interval = Duration::from_secs(5);
    let recording = Recording::start(config).unwrap();
    let load = domain.load(
        &RecdLoad::new("t/")
            .cameras(0)
            .small_topics(2)
            .small_rate(200)
            .count(200)
            .buffer(16)
            .notify()
            .wait_subscribers(1),
    );
    let sent = finish_load(load);
    let summary = recording.stop().unwrap();
    let checks = check_recording(&summary);
    for topic in &sent.topics {
        let check = &checks[&topic.service];
        assert_eq!(
            check.sequences,
            (0..topic.sent).collect::<Vec<_>>(),
            "{}",
            topic.service
        );
    }
}

#[test]
fn a_split_leaves_no_empty_last_file_behind() {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["t/*"]);
    // Four 300 kB frames pass 1 MB: eight frames split twice, the second time after the
    // last frame.
    config.split.max_bytes = Some(1_000_000);
    let recording = Recording::start(config).unwrap();
    let cameras = domain.load(
        &RecdLoad::new("t/")
            .cameras(1)
            .frame_size(300_000)
            .fps(100)
            .count(8)
            .wait_subscribers(1),
    );
    finish_load(cameras);
    assert!(wait_until(Duration::from_secs(5), || {
        recording
            .status()
            .topics
            .iter()
            .any(|t| t.counts.written == 8)
    }));
    assert_eq!(recording.status().files_closed, 2, "split twice");
    let summary = recording.stop().unwrap();
    let counts: Vec<u64> = summary.files.iter().map(|f| f.message_count).collect();
    assert_eq!(counts, [4, 4]);
    let on_disk = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "mcap")
        })
        .count();
    assert_eq!(on_disk, 2, "the empty third file is gone");
}
