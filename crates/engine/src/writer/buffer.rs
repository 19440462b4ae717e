//! The pre-trigger buffer: the last messages of a session in one fixed block of memory,
//! oldest pushed out first, so that its memory is bounded by its size whatever the load.
//!
//! Each message is a record: a 32-byte header (length, topic, written flag, stamps), then
//! its bytes padded to 8. Records never wrap around the block's end: one that would is
//! put at its start, and the gap is skipped (a padding record where a header fits).
//! Positions are logical byte offsets that only grow; the block holds
//! `[tail, head)` of them.

use crate::config::MIN_BUFFER_BYTES;
use crate::handoff::Stamps;

const HEADER: u64 = 32;
/// The topic of a padding record.
const PADDING: u32 = u32::MAX;
const WRITTEN: u32 = 1;

/// A bounded ring of recent messages.
pub(crate) struct MessageBuffer {
    block: Vec<u8>,
    capacity: u64,
    tail: u64,
    head: u64,
    messages: u64,
    payload_bytes: u64,
    newest_log_time: u64,
}

/// One message in the buffer.
pub(crate) struct Buffered<'a> {
    /// Its position, for [`MessageBuffer::next`] and [`MessageBuffer::mark_written`].
    pub position: u64,
    pub topic: u32,
    pub stamps: Stamps,
    /// Already written to a trigger's file.
    pub written: bool,
    pub bytes: &'a [u8],
}

impl MessageBuffer {
    /// A buffer of `bytes` (at least [`MIN_BUFFER_BYTES`]). The block is allocated zeroed,
    /// so the kernel maps its pages only as messages first reach them.
    pub fn new(bytes: u64) -> Self {
        let capacity = bytes.max(MIN_BUFFER_BYTES) & !7;
        Self {
            block: vec![0; capacity as usize],
            capacity,
            tail: 0,
            head: 0,
            messages: 0,
            payload_bytes: 0,
            newest_log_time: 0,
        }
    }

    /// Messages held.
    pub fn messages(&self) -> u64 {
        self.messages
    }

    /// Their bytes (headers and padding not counted).
    pub fn payload_bytes(&self) -> u64 {
        self.payload_bytes
    }

    /// The time between the oldest and the newest message held, in ns.
    pub fn span_ns(&self) -> u64 {
        self.oldest().map_or(0, |oldest| {
            self.newest_log_time.saturating_sub(oldest.stamps.log_time)
        })
    }

    /// Where the next pushed message will be: the end of what is held.
    pub fn end(&self) -> u64 {
        self.head
    }

    /// The oldest message held.
    pub fn oldest(&self) -> Option<Buffered<'_>> {
        self.get(self.tail)
    }

    /// The message at `position` or the first one after it, if any is held.
    pub fn get(&self, position: u64) -> Option<Buffered<'_>> {
        let position = self.settle(position.max(self.tail));
        (position < self.head).then(|| self.read(position))
    }

    /// The position after the message at `position`.
    pub fn next(&self, position: u64) -> u64 {
        let position = self.settle(position);
        position + record_size(self.header_u32(position, 0) as u64)
    }

    /// Notes that the message at `position` went to a file.
    pub fn mark_written(&mut self, position: u64) {
        let at = self.physical(position) + 8;
        let flags = u32::from_le_bytes(self.block[at..at + 4].try_into().expect("4 bytes"));
        self.block[at..at + 4].copy_from_slice(&(flags | WRITTEN).to_le_bytes());
    }

    /// Copies a message in, pushing out the oldest ones (each shown to `evicted` first)
    /// until it fits. A message larger than the whole buffer is not kept: false.
    pub fn push(
        &mut self,
        topic: u32,
        stamps: Stamps,
        parts: &[&[u8]],
        mut evicted: impl FnMut(&Buffered<'_>),
    ) -> bool {
        let len: u64 = parts.iter().map(|p| p.len() as u64).sum();
        let size = record_size(len);
        if size > self.capacity {
            return false;
        }
        let start = loop {
            let room_to_end = self.capacity - self.head % self.capacity;
            let start = if size <= room_to_end {
                self.head
            } else {
                self.head + room_to_end
            };
            if start + size - self.tail <= self.capacity {
                break start;
            }
            self.evict_oldest(&mut evicted);
        };
        if start != self.head {
            self.write_padding(self.head, start - self.head);
        }
        self.write_record(start, topic, stamps, len, parts);
        self.head = start + size;
        self.messages += 1;
        self.payload_bytes += len;
        self.newest_log_time = self.newest_log_time.max(stamps.log_time);
        true
    }

    /// Pushes out the messages logged more than `max_age_ns` before the newest, but none
    /// at or after `keep_from`.
    pub fn evict_older_than(
        &mut self,
        max_age_ns: u64,
        keep_from: u64,
        mut evicted: impl FnMut(&Buffered<'_>),
    ) {
        let limit = self.newest_log_time.saturating_sub(max_age_ns);
        while let Some(oldest) = self.oldest() {
            if oldest.stamps.log_time >= limit || oldest.position >= keep_from {
                break;
            }
            self.evict_oldest(&mut evicted);
        }
    }

    /// Pushes out everything, oldest first.
    pub fn clear(&mut self, mut evicted: impl FnMut(&Buffered<'_>)) {
        while self.messages > 0 {
            self.evict_oldest(&mut evicted);
        }
    }

    fn evict_oldest(&mut self, evicted: &mut impl FnMut(&Buffered<'_>)) {
        let position = self.settle(self.tail);
        if position >= self.head {
            self.tail = self.head;
            return;
        }
        let oldest = self.read(position);
        let len = oldest.bytes.len() as u64;
        evicted(&oldest);
        self.tail = position + record_size(len);
        self.messages -= 1;
        self.payload_bytes -= len;
    }

    /// `position`, or past the padding there.
    fn settle(&self, mut position: u64) -> u64 {
        while position < self.head {
            let room_to_end = self.capacity - self.physical(position) as u64;
            if room_to_end < HEADER {
                position += room_to_end;
            } else if self.header_u32(position, 4) == PADDING {
                position += HEADER + self.header_u32(position, 0) as u64;
            } else {
                break;
            }
        }
        position
    }

    fn read(&self, position: u64) -> Buffered<'_> {
        let at = self.physical(position);
        let len = self.header_u32(position, 0) as usize;
        let u64_at = |offset: usize| {
            u64::from_le_bytes(
                self.block[at + offset..at + offset + 8]
                    .try_into()
                    .expect("8 bytes"),
            )
        };
        let body = at + HEADER as usize;
        Buffered {
            position,
            topic: self.header_u32(position, 4),
            written: self.header_u32(position, 8) & WRITTEN != 0,
            stamps: Stamps {
                log_time: u64_at(16),
                publish_time: u64_at(24),
            },
            bytes: &self.block[body..body + len],
        }
    }

    fn header_u32(&self, position: u64, offset: usize) -> u32 {
        let at = self.physical(position) + offset;
        u32::from_le_bytes(self.block[at..at + 4].try_into().expect("4 bytes"))
    }

    fn write_record(
        &mut self,
        position: u64,
        topic: u32,
        stamps: Stamps,
        len: u64,
        parts: &[&[u8]],
    ) {
        let at = self.physical(position);
        let header = &mut self.block[at..at + HEADER as usize];
        header[0..4].copy_from_slice(&(len as u32).to_le_bytes());
        header[4..8].copy_from_slice(&topic.to_le_bytes());
        header[8..16].fill(0);
        header[16..24].copy_from_slice(&stamps.log_time.to_le_bytes());
        header[24..32].copy_from_slice(&stamps.publish_time.to_le_bytes());
        let mut body = at + HEADER as usize;
        for part in parts {
            self.block[body..body + part.len()].copy_from_slice(part);
            body += part.len();
        }
    }

    /// Marks `gap` bytes at `position`, up to the block's end, as skipped.
    fn write_padding(&mut self, position: u64, gap: u64) {
        if gap >= HEADER {
            let at = self.physical(position);
            self.block[at..at + 4].copy_from_slice(&((gap - HEADER) as u32).to_le_bytes());
            self.block[at + 4..at + 8].copy_from_slice(&PADDING.to_le_bytes());
        }
    }

    fn physical(&self, position: u64) -> usize {
        (position % self.capacity) as usize
    }
}

/// A record's bytes: header, then `len` bytes padded to 8.
fn record_size(len: u64) -> u64 {
    HEADER + len.div_ceil(8) * 8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamps(log_time: u64) -> Stamps {
        Stamps {
            log_time,
            publish_time: log_time + 1,
        }
    }

    fn held(buffer: &MessageBuffer) -> Vec<(u32, u64, Vec<u8>)> {
        let mut all = Vec::new();
        let mut position = 0;
        while let Some(message) = buffer.get(position) {
            all.push((
                message.topic,
                message.stamps.log_time,
                message.bytes.to_vec(),
            ));
            position = buffer.next(message.position);
        }
        all
    }

    #[test]
    fn keeps_messages_in_order_and_pushes_out_the_oldest_when_full() {
        let mut buffer = MessageBuffer::new(MIN_BUFFER_BYTES);
        let mut evicted = Vec::new();
        // Sizes that do not divide the block, so that records meet its end at every
        // offset, some with room for a padding header and some without.
        for i in 0..20_000u64 {
            let payload = vec![i as u8; (i * 7919 % 3001) as usize];
            // In two parts, as a user header and a payload come.
            let (header, body) = payload.split_at(payload.len().min(1));
            assert!(buffer.push(i as u32 % 5, stamps(i), &[header, body], |m| {
                evicted.push(m.stamps.log_time)
            }));
        }
        let held = held(&buffer);
        assert_eq!(held.len() as u64, buffer.messages());
        let first = held[0].1;
        // Evicted are exactly the oldest, in order; held are the rest, in order.
        assert_eq!(evicted, (0..first).collect::<Vec<_>>());
        for (k, (topic, log_time, bytes)) in held.iter().enumerate() {
            let i = first + k as u64;
            assert_eq!((*topic, *log_time), (i as u32 % 5, i));
            assert_eq!(bytes, &vec![i as u8; (i * 7919 % 3001) as usize]);
        }
        assert_eq!(held.last().unwrap().1, 19_999);
        assert_eq!(
            buffer.payload_bytes(),
            held.iter().map(|m| m.2.len() as u64).sum::<u64>()
        );
        assert!(buffer.head - buffer.tail <= buffer.capacity);
    }

    #[test]
    fn ages_out_up_to_a_kept_position_and_remembers_what_was_written() {
        let mut buffer = MessageBuffer::new(MIN_BUFFER_BYTES);
        let mut positions = Vec::new();
        for i in 0..10u64 {
            positions.push(buffer.end());
            buffer.push(0, stamps(i * 1000), &[b"abc"], |_| panic!("room for all"));
        }
        buffer.mark_written(positions[3]);
        assert!(buffer.get(positions[3]).unwrap().written);
        assert!(!buffer.get(positions[4]).unwrap().written);
        assert_eq!(buffer.span_ns(), 9000);
        let mut evicted = Vec::new();
        buffer.evict_older_than(4500, positions[2], |m| evicted.push(m.stamps.log_time));
        assert_eq!(evicted, [0, 1000], "stops at the kept position");
        buffer.evict_older_than(4500, u64::MAX, |m| evicted.push(m.stamps.log_time));
        assert_eq!(evicted, [0, 1000, 2000, 3000, 4000]);
        assert_eq!(buffer.oldest().unwrap().stamps.log_time, 5000);
        let mut rest = 0;
        buffer.clear(|_| rest += 1);
        assert_eq!((rest, buffer.messages(), buffer.payload_bytes()), (5, 0, 0));
        assert!(buffer.oldest().is_none());
    }

    #[test]
    fn refuses_a_message_larger_than_itself() {
        let mut buffer = MessageBuffer::new(MIN_BUFFER_BYTES);
        buffer.push(0, stamps(1), &[b"kept"], |_| {});
        let huge = vec![0u8; MIN_BUFFER_BYTES as usize];
        assert!(!buffer.push(1, stamps(2), &[&huge], |_| panic!("nothing pushed out")));
        assert_eq!(buffer.messages(), 1);
    }
}
