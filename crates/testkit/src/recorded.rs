//! What a recorded file says of the iceoryx2 services it recorded.

use std::path::Path;

use recd_storage::iceoryx2::SUBSCRIBER_MAX_BUFFER_SIZE;

/// The subscriber queue depth (`subscriber_max_buffer_size`) of the service recorded as
/// `topic`, from the channel metadata in `file`'s summary (the file is mapped, not read:
/// recordings of cameras are GiBs).
pub fn recorded_queue_depth(file: &Path, topic: &str) -> usize {
    let opened =
        std::fs::File::open(file).unwrap_or_else(|e| panic!("cannot open {}: {e}", file.display()));
    // SAFETY: a finished recording nothing writes to any more.
    let bytes = unsafe { memmap2::Mmap::map(&opened) }
        .unwrap_or_else(|e| panic!("cannot map {}: {e}", file.display()));
    let summary = mcap::Summary::read(&bytes)
        .unwrap_or_else(|e| panic!("{} has no readable summary: {e}", file.display()))
        .unwrap_or_else(|| panic!("{} has no summary", file.display()));
    let channel = (summary.channels.values())
        .find(|channel| channel.topic == topic)
        .unwrap_or_else(|| panic!("{} has no channel {topic}", file.display()));
    channel
        .metadata
        .get(SUBSCRIBER_MAX_BUFFER_SIZE)
        .and_then(|depth| depth.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "channel {topic} of {} records no {SUBSCRIBER_MAX_BUFFER_SIZE}: {:?}",
                file.display(),
                channel.metadata
            )
        })
}
