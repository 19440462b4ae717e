//! The attachment rmw_zenoh puts on every sample: the publisher's sequence number, the
//! source time stamp and the publisher's GID, in Zenoh's serialization (little-endian
//! integers, LEB128 lengths). rmw_zenoh wrote the field names before each value at
//! first (`sequence_number`, `source_timestamp`, `source_gid`); both layouts are read.

/// A publisher's GID (`RMW_GID_STORAGE_SIZE` bytes).
pub type Gid = [u8; GID_SIZE];

/// rmw's GID size since Iron.
pub const GID_SIZE: usize = 16;

/// What a sample's attachment says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attachment {
    /// The publisher's sequence number (from 1).
    pub sequence: u64,
    /// When it was published, ns since the epoch (0 when not given).
    pub source_time_ns: u64,
    /// The publisher's GID.
    pub gid: Gid,
}

impl Attachment {
    /// Reads an attachment; `None` for one of neither layout.
    pub fn parse(bytes: &zenoh::bytes::ZBytes) -> Option<Self> {
        let mut slices = bytes.slices();
        match (slices.next(), slices.next()) {
            (Some(one), None) => Self::from_bytes(one),
            _ => Self::from_bytes(&bytes.to_bytes()),
        }
    }

    /// Reads an attachment from its bytes.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let mut reader = Reader(bytes);
        let named = reader.peek_name("sequence_number");
        let sequence = reader.field(named, "sequence_number")?;
        let source_time = reader.field(named, "source_timestamp")?;
        if named {
            reader.name("source_gid")?;
        }
        let gid = reader.gid()?;
        Some(Self {
            sequence: u64::try_from(i64::from_le_bytes(sequence)).unwrap_or(0),
            source_time_ns: u64::try_from(i64::from_le_bytes(source_time)).unwrap_or(0),
            gid,
        })
    }

    /// The attachment's bytes, in the layout of current rmw_zenoh (no names).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(8 + 8 + 1 + GID_SIZE);
        bytes.extend_from_slice(&(self.sequence as i64).to_le_bytes());
        bytes.extend_from_slice(&(self.source_time_ns as i64).to_le_bytes());
        bytes.push(GID_SIZE as u8);
        bytes.extend_from_slice(&self.gid);
        bytes
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    /// Whether a length-prefixed `name` comes next.
    fn peek_name(&self, name: &str) -> bool {
        self.0.first() == Some(&(name.len() as u8)) && self.0[1..].starts_with(name.as_bytes())
    }

    fn name(&mut self, name: &str) -> Option<()> {
        self.peek_name(name).then_some(())?;
        self.take(1 + name.len()).map(drop)
    }

    fn field(&mut self, named: bool, name: &str) -> Option<[u8; 8]> {
        if named {
            self.name(name)?;
        }
        self.take(8)?.try_into().ok()
    }

    /// The GID: its bytes, with or without their length in front.
    fn gid(&mut self) -> Option<Gid> {
        let bytes = match self.0.len() {
            n if n == GID_SIZE + 1 && self.0[0] as usize == GID_SIZE => &self.0[1..],
            n if n == GID_SIZE => self.0,
            _ => return None,
        };
        bytes.try_into().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_are_read() {
        let attachment = Attachment {
            sequence: 42,
            source_time_ns: 1_700_000_000_123_456_789,
            gid: [7; GID_SIZE],
        };
        assert_eq!(
            Attachment::from_bytes(&attachment.to_bytes()),
            Some(attachment)
        );
        let mut plain = attachment.to_bytes();
        plain.remove(16);
        assert_eq!(Attachment::from_bytes(&plain), Some(attachment));
        let mut named = Vec::new();
        for (name, value) in [
            ("sequence_number", &42i64.to_le_bytes()[..]),
            (
                "source_timestamp",
                &1_700_000_000_123_456_789i64.to_le_bytes()[..],
            ),
            ("source_gid", &[GID_SIZE as u8][..]),
        ] {
            named.push(name.len() as u8);
            named.extend_from_slice(name.as_bytes());
            named.extend_from_slice(value);
        }
        named.extend_from_slice(&[7; GID_SIZE]);
        assert_eq!(Attachment::from_bytes(&named), Some(attachment));
        assert_eq!(Attachment::from_bytes(&[1, 2, 3]), None);
    }
}
