//! The `info` of a recorded service event (`service_msgs/msg/ServiceEventInfo`, the first
//! field of every `<Srv>_Event`), read from its CDR bytes without the event's type, and the
//! calls a stream of events shows, counted as `ros2 bag info` counts them
//! (rosbag2_cpp's `info.cpp`): one request per distinct (client, sequence number) among
//! the REQUEST_SENT and REQUEST_RECEIVED events, one response likewise among the
//! RESPONSE_* events, so that a call seen by both its client and its server counts once.

use std::collections::HashSet;

/// What a service event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// A client sent a request (`REQUEST_SENT`, 0).
    RequestSent,
    /// A server received a request (`REQUEST_RECEIVED`, 1).
    RequestReceived,
    /// A server sent a response (`RESPONSE_SENT`, 2).
    ResponseSent,
    /// A client received a response (`RESPONSE_RECEIVED`, 3).
    ResponseReceived,
}

impl EventKind {
    fn of(event_type: u8) -> Option<Self> {
        Some(match event_type {
            0 => Self::RequestSent,
            1 => Self::RequestReceived,
            2 => Self::ResponseSent,
            3 => Self::ResponseReceived,
            _ => return None,
        })
    }

    /// Whether the event carries a request (else a response).
    pub fn is_request(self) -> bool {
        matches!(self, Self::RequestSent | Self::RequestReceived)
    }
}

/// The fields of a `ServiceEventInfo` that identify a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventInfo {
    /// What happened.
    pub kind: EventKind,
    /// The calling client's GID.
    pub client_gid: [u8; 16],
    /// The request's sequence number, per client.
    pub sequence_number: i64,
}

/// Reads the `info` at the start of a serialized `<Srv>_Event`: a 4-byte encapsulation
/// header, then `uint8 event_type`, `builtin_interfaces/Time stamp` (`int32`, `uint32`),
/// `char[16] client_gid`, `int64 sequence_number`. Classic CDR (XCDR1, what rmw sends)
/// aligns the `int64` to 8, XCDR2 to 4; an appendable XCDR2 struct starts with a 4-byte
/// length. `None` for bytes too short, an encapsulation that is neither, or an
/// `event_type` that is not one of the four.
pub fn event_info(cdr: &[u8]) -> Option<EventInfo> {
    let header = cdr.get(..4)?;
    let little_endian = header[1] & 1 == 1;
    let (body_offset, int64_align) = match header[1] {
        0x00 | 0x01 => (0, 8),
        0x06 | 0x07 => (0, 4),
        0x08 | 0x09 => (4, 4),
        _ => return None,
    };
    let body = cdr.get(4 + body_offset..)?;
    let kind = EventKind::of(*body.first()?)?;
    // event_type @0, stamp @4..12, client_gid @12..28, then the aligned sequence number.
    let client_gid: [u8; 16] = body.get(12..28)?.try_into().ok()?;
    let at = 28usize.next_multiple_of(int64_align);
    let bytes: [u8; 8] = body.get(at..at + 8)?.try_into().ok()?;
    let sequence_number = if little_endian {
        i64::from_le_bytes(bytes)
    } else {
        i64::from_be_bytes(bytes)
    };
    Some(EventInfo {
        kind,
        client_gid,
        sequence_number,
    })
}

/// The calls a service's events show.
#[derive(Debug, Clone, Default)]
pub struct CallCount {
    requests: HashSet<([u8; 16], i64)>,
    responses: HashSet<([u8; 16], i64)>,
    events: u64,
    unreadable: u64,
}

impl CallCount {
    /// Counts one event's bytes.
    pub fn add(&mut self, cdr: &[u8]) {
        self.events += 1;
        match event_info(cdr) {
            Some(info) => {
                let call = (info.client_gid, info.sequence_number);
                if info.kind.is_request() {
                    self.requests.insert(call);
                } else {
                    self.responses.insert(call);
                }
            }
            None => self.unreadable += 1,
        }
    }

    /// Distinct requests.
    pub fn requests(&self) -> u64 {
        self.requests.len() as u64
    }

    /// Distinct responses.
    pub fn responses(&self) -> u64 {
        self.responses.len() as u64
    }

    /// Events counted.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Events whose info could not be read (not counted as requests or responses).
    pub fn unreadable(&self) -> u64 {
        self.unreadable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event as classic little-endian CDR: header, info, empty request and response.
    fn xcdr1_event(event_type: u8, gid: u8, sequence: i64) -> Vec<u8> {
        let mut cdr = vec![0x00, 0x01, 0x00, 0x00, event_type, 0, 0, 0];
        cdr.extend(5i32.to_le_bytes());
        cdr.extend(6u32.to_le_bytes());
        cdr.extend([gid; 16]);
        cdr.extend([0; 4]); // int64 aligned to 8
        cdr.extend(sequence.to_le_bytes());
        cdr.extend([0; 8]); // two empty sequences
        cdr
    }

    #[test]
    fn a_call_seen_by_client_and_server_counts_once() {
        let mut count = CallCount::default();
        for sequence in 1..=3 {
            for event_type in 0..4 {
                count.add(&xcdr1_event(event_type, 9, sequence));
            }
        }
        count.add(&xcdr1_event(0, 10, 1)); // another client's first request, unanswered
        assert_eq!((count.requests(), count.responses()), (4, 3));
        assert_eq!((count.events(), count.unreadable()), (13, 0));
    }

    #[test]
    fn xcdr2_aligns_the_sequence_number_to_4_and_big_endian_is_read() {
        let mut cdr = vec![0x00, 0x07, 0x00, 0x00, 2, 0, 0, 0];
        cdr.extend([0; 8]);
        cdr.extend([3; 16]);
        cdr.extend(42i64.to_le_bytes());
        let info = event_info(&cdr).unwrap();
        assert_eq!(info.kind, EventKind::ResponseSent);
        assert_eq!((info.client_gid, info.sequence_number), ([3; 16], 42));

        let mut cdr = vec![0x00, 0x00, 0x00, 0x00, 1, 0, 0, 0];
        cdr.extend([0; 8]);
        cdr.extend([4; 16]);
        cdr.extend([0; 4]);
        cdr.extend(7i64.to_be_bytes());
        assert_eq!(event_info(&cdr).unwrap().sequence_number, 7);
    }

    #[test]
    fn bad_events_are_unreadable_not_guessed() {
        let mut count = CallCount::default();
        count.add(&xcdr1_event(4, 1, 1)); // no such event type
        count.add(&xcdr1_event(0, 1, 1)[..20]); // cut short
        count.add(&[0x00, 0x0b, 0, 0, 0, 0, 0, 0]); // parameter list encapsulation
        assert_eq!((count.requests(), count.unreadable()), (0, 3));
    }
}
