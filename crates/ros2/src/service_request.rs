//! The request a recorded service event carries, as the request message itself, so that
//! it can be sent to a server again (`rec play --services-as-calls`).
//!
//! A `<Srv>_Event` is `service_msgs/ServiceEventInfo info`, `<Srv>_Request[<=1] request`,
//! `<Srv>_Response[<=1] response` (see [`crate::msgdef`]). In classic CDR (XCDR1, what
//! rmw sends) every primitive is aligned to its size from the start of the body, so the
//! request's bytes inside an event are aligned from the event's start, not from their own:
//! where the request holds an 8-byte field they differ from the request sent alone. The
//! request is therefore walked field by field with the event's `ros2msg` definition (the
//! schema recorded with the channel) and written out again aligned from its own start.
//!
//! Only little-endian XCDR1 events are taken (every rmw on every platform ROS 2 supports);
//! `wstring` fields, whose width rmw implementations disagree on, are refused.

use std::collections::HashMap;

/// `service_msgs/ServiceEventInfo`'s `event_type` of a client's event sending a request.
pub const REQUEST_SENT: u8 = 0;
/// `event_type` of a server's event receiving a request.
pub const REQUEST_RECEIVED: u8 = 1;

/// Who sent a recorded service event's call and in which order: the
/// `service_msgs/ServiceEventInfo` every event starts with, without its stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventInfo {
    /// [`REQUEST_SENT`], [`REQUEST_RECEIVED`], `RESPONSE_SENT` (2) or
    /// `RESPONSE_RECEIVED` (3).
    pub event_type: u8,
    /// The client's GID as the event's end knows it: one of the client's GUIDs (Kilted's
    /// rmw_fastrtps gives its response reader's on both ends; versions have differed),
    /// which share the client participant's GUID prefix (the first 12 bytes).
    pub client_gid: [u8; 16],
    /// The call's sequence number, the same on both sides.
    pub sequence_number: i64,
}

impl EventInfo {
    /// Reads the info at the start of a serialized event `cdr` (encapsulation header
    /// first; little-endian XCDR1, as [`EventLayout::request`] takes).
    pub fn of(cdr: &[u8]) -> Result<Self, String> {
        if cdr.get(..2) != Some(&[0x00, 0x01]) {
            return Err("the event is not little-endian CDR".into());
        }
        // Body: event_type (0), stamp (4..12), client_gid (12..28), sequence_number
        // aligned to 8 (32..40).
        let body = cdr
            .get(4..44)
            .ok_or_else(|| format!("an event of {} bytes is too short for its info", cdr.len()))?;
        Ok(Self {
            event_type: body[0],
            client_gid: body[12..28].try_into().expect("16 bytes"),
            sequence_number: i64::from_le_bytes(body[32..40].try_into().expect("8 bytes")),
        })
    }

    /// Whether the event tells of a request (sent or received) rather than a response.
    pub fn is_request(&self) -> bool {
        matches!(self.event_type, REQUEST_SENT | REQUEST_RECEIVED)
    }
}

/// A primitive field type, by its CDR size (strings have none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prim {
    Fixed(usize),
    Str,
    WStr,
}

/// The element type of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Base {
    Prim(Prim),
    /// A message type, by its normalized name (`pkg/Type`).
    Msg(String),
}

/// One value, a fixed array or a sequence (bounded or not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Single,
    Array(usize),
    Sequence,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Field {
    name: String,
    base: Base,
    shape: Shape,
}

/// How to find the request in the events of one service type.
#[derive(Debug, Clone)]
pub struct EventLayout {
    types: HashMap<String, Vec<Field>>,
    /// The event type's fields.
    root: Vec<Field>,
}

/// `pkg/msg/Type` or `pkg/srv/Type` → `pkg/Type`.
fn normalize(name: &str) -> String {
    match name.split('/').collect::<Vec<_>>().as_slice() {
        [pkg, _, ty] => format!("{pkg}/{ty}"),
        _ => name.to_owned(),
    }
}

fn primitive(name: &str) -> Option<Prim> {
    let name = name.split("<=").next().unwrap_or(name);
    Some(match name {
        "bool" | "byte" | "char" | "int8" | "uint8" => Prim::Fixed(1),
        "int16" | "uint16" => Prim::Fixed(2),
        "int32" | "uint32" | "float32" => Prim::Fixed(4),
        "int64" | "uint64" | "float64" => Prim::Fixed(8),
        "string" => Prim::Str,
        "wstring" => Prim::WStr,
        _ => return None,
    })
}

/// The fields of one type's text; `owner` is its `pkg/Type`.
fn fields(owner: &str, text: &str, sections: &HashMap<String, &str>) -> Result<Vec<Field>, String> {
    let package = owner.split('/').next().unwrap_or("");
    let mut fields = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        let (Some(written), Some(name)) = (words.next(), words.next()) else {
            if line.is_empty() {
                continue;
            }
            return Err(format!("{owner}: cannot read the line {line:?}"));
        };
        // A constant (`int8 FOO=3`, `int8 FOO = 3`) is no field.
        if name.contains('=') || words.next().is_some_and(|w| w.starts_with('=')) {
            continue;
        }
        let (ty, shape) = match written.strip_suffix(']').and_then(|t| t.rsplit_once('[')) {
            Some((ty, "")) => (ty, Shape::Sequence),
            Some((ty, bound)) if bound.starts_with("<=") => (ty, Shape::Sequence),
            Some((ty, size)) => (
                ty,
                Shape::Array(
                    size.parse()
                        .map_err(|_| format!("{owner}: {written} has no array size"))?,
                ),
            ),
            None => (written, Shape::Single),
        };
        let base = match (primitive(ty), ty) {
            (Some(prim), _) => Base::Prim(prim),
            (None, "time") => Base::Msg("builtin_interfaces/Time".into()),
            (None, "duration") => Base::Msg("builtin_interfaces/Duration".into()),
            (None, ty) if ty.contains('/') => Base::Msg(normalize(ty)),
            (None, ty) => {
                let local = format!("{package}/{ty}");
                if ty == "Header" && !sections.contains_key(&local) {
                    Base::Msg("std_msgs/Header".into())
                } else {
                    Base::Msg(local)
                }
            }
        };
        fields.push(Field {
            name: name.to_owned(),
            base,
            shape,
        });
    }
    if fields.is_empty() {
        // rosidl gives a type without fields one uint8 member, which its CDR carries.
        fields.push(Field {
            name: "structure_needs_at_least_one_member".into(),
            base: Base::Prim(Prim::Fixed(1)),
            shape: Shape::Single,
        });
    }
    Ok(fields)
}

/// The text of a builtin time type, where the definition leaves it out.
const TIME: &str = "int32 sec\nuint32 nanosec\n";

impl EventLayout {
    /// Reads the `ros2msg` `definition` of the event type `event_type`
    /// (`pkg/srv/S_Event`).
    pub fn parse(event_type: &str, definition: &str) -> Result<Self, String> {
        let root = normalize(event_type.trim());
        let mut sections: HashMap<String, &str> = HashMap::new();
        let mut current = root.clone();
        let mut start = 0;
        let mut offset = 0;
        let mut lines = definition.split_inclusive('\n');
        while let Some(line) = lines.next() {
            let trimmed = line.trim();
            if trimmed.len() >= 3 && trimmed.bytes().all(|b| b == b'=') {
                sections.insert(current.clone(), &definition[start..offset]);
                let header = lines.next().unwrap_or("");
                offset += line.len() + header.len();
                current = match header.trim().strip_prefix("MSG:") {
                    Some(name) => normalize(name.trim()),
                    None => return Err(format!("a line of = is followed by {header:?}")),
                };
                start = offset;
                continue;
            }
            offset += line.len();
        }
        sections.insert(current, &definition[start..]);
        let mut types = HashMap::new();
        for (name, text) in &sections {
            types.insert(name.clone(), fields(name, text, &sections)?);
        }
        for builtin in ["builtin_interfaces/Time", "builtin_interfaces/Duration"] {
            if !types.contains_key(builtin) {
                types.insert(builtin.into(), fields(builtin, TIME, &sections)?);
            }
        }
        let root_fields = types
            .get(&root)
            .cloned()
            .ok_or_else(|| format!("the definition does not define {root}"))?;
        let layout = Self {
            types,
            root: root_fields,
        };
        match layout.root.iter().find(|f| f.name == "request") {
            Some(Field {
                base: Base::Msg(_),
                shape: Shape::Sequence,
                ..
            }) => Ok(layout),
            _ => Err(format!("{root} has no field `request` of a request type")),
        }
    }

    /// The request `cdr` (a serialized event, encapsulation header first) carries, as the
    /// request message's CDR body (little-endian XCDR1, no header); `None` when the event
    /// carries none (a response's event, or one recorded with metadata only).
    pub fn request(&self, cdr: &[u8]) -> Result<Option<Vec<u8>>, String> {
        match cdr.get(..2) {
            Some([0x00, 0x01]) => {}
            Some([a, b]) => {
                return Err(format!(
                    "the event is in representation {a:02x}{b:02x}, not little-endian CDR"
                ))
            }
            _ => return Err("the event is shorter than its encapsulation header".into()),
        }
        let mut reader = Reader {
            body: &cdr[4.min(cdr.len())..],
            at: 0,
        };
        for field in &self.root {
            if field.name != "request" {
                self.field(field, &mut reader, &mut None, 0)?;
                continue;
            }
            let count = reader.u32()?;
            if count == 0 {
                return Ok(None);
            }
            let Base::Msg(request) = &field.base else {
                unreachable!("checked by parse");
            };
            let mut out = Some(Vec::new());
            self.message(request, &mut reader, &mut out, 0)?;
            return Ok(out);
        }
        unreachable!("checked by parse")
    }

    fn message(
        &self,
        name: &str,
        reader: &mut Reader<'_>,
        out: &mut Option<Vec<u8>>,
        depth: usize,
    ) -> Result<(), String> {
        if depth > 64 {
            return Err(format!("{name} nests too deeply"));
        }
        let fields = self
            .types
            .get(name)
            .ok_or_else(|| format!("the definition does not define {name}"))?;
        for field in fields {
            self.field(field, reader, out, depth + 1)?;
        }
        Ok(())
    }

    fn field(
        &self,
        field: &Field,
        reader: &mut Reader<'_>,
        out: &mut Option<Vec<u8>>,
        depth: usize,
    ) -> Result<(), String> {
        let count = match field.shape {
            Shape::Single => 1,
            Shape::Array(n) => n,
            Shape::Sequence => {
                let n = reader.u32()?;
                if let Some(out) = out {
                    write(out, 4, &n.to_le_bytes());
                }
                n as usize
            }
        };
        for _ in 0..count {
            match &field.base {
                Base::Prim(Prim::Fixed(size)) => {
                    let bytes = reader.take(*size, *size)?;
                    if let Some(out) = out {
                        write(out, *size, bytes);
                    }
                }
                Base::Prim(Prim::Str) => {
                    let length = reader.u32()?;
                    let bytes = reader.take(length as usize, 1)?;
                    if let Some(out) = out {
                        write(out, 4, &length.to_le_bytes());
                        out.extend_from_slice(bytes);
                    }
                }
                Base::Prim(Prim::WStr) => {
                    return Err(format!("the field {} is a wstring", field.name));
                }
                Base::Msg(name) => self.message(name, reader, out, depth)?,
            }
        }
        Ok(())
    }
}

/// Appends `bytes` to a CDR body, aligned to `align` from its start.
fn write(out: &mut Vec<u8>, align: usize, bytes: &[u8]) {
    out.resize(out.len().next_multiple_of(align), 0);
    out.extend_from_slice(bytes);
}

/// A cursor over a CDR body.
struct Reader<'a> {
    body: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// `n` bytes aligned to `align`.
    fn take(&mut self, n: usize, align: usize) -> Result<&'a [u8], String> {
        let start = self.at.next_multiple_of(align);
        let bytes = start
            .checked_add(n)
            .and_then(|end| self.body.get(start..end))
            .ok_or_else(|| format!("the event ends at byte {} of its body", self.body.len()))?;
        self.at = start + n;
        Ok(bytes)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let bytes = self.take(4, 4)?;
        Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event type whose request holds a float64 behind a string: aligned 8 in the
    /// event, and elsewhere once alone.
    const DEFINITION: &str = "service_msgs/ServiceEventInfo info\nrecd_test/Calc_Request[<=1] request\nrecd_test/Calc_Response[<=1] response\n\
================================================================================\n\
MSG: service_msgs/ServiceEventInfo\nuint8 REQUEST_SENT = 0\nuint8 event_type\nbuiltin_interfaces/Time stamp\nchar[16] client_gid\nint64 sequence_number\n\
================================================================================\n\
MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n\
================================================================================\n\
MSG: recd_test/Calc_Request\nstring name  # a comment\nfloat64 x\nint16[] small\nbool flag\n\
================================================================================\n\
MSG: recd_test/Calc_Response\n";

    /// The event's CDR: header, info, then `request` as given (or empty), empty response.
    fn event(request: Option<&[u8]>, event_type: u8) -> Vec<u8> {
        let mut body = vec![event_type, 0, 0, 0];
        body.extend(7i32.to_le_bytes());
        body.extend(8u32.to_le_bytes());
        body.extend([9; 16]);
        body.extend([0; 4]);
        body.extend(3i64.to_le_bytes());
        match request {
            Some(request) => {
                body.extend(1u32.to_le_bytes());
                body.extend(request);
            }
            None => body.extend(0u32.to_le_bytes()),
        }
        body.resize(body.len().next_multiple_of(4), 0);
        body.extend(0u32.to_le_bytes());
        let mut cdr = vec![0, 1, 0, 0];
        cdr.extend(body);
        cdr
    }

    #[test]
    fn the_request_is_written_aligned_from_its_own_start() {
        let layout = EventLayout::parse("recd_test/srv/Calc_Event", DEFINITION).unwrap();
        // In the event the request starts at body offset 44: "ab\0" (44..51), x aligned to
        // 56, small (64: count 2, then two int16), flag.
        let mut inside = Vec::new();
        inside.extend(3u32.to_le_bytes());
        inside.extend(b"ab\0");
        inside.extend([0; 5]);
        inside.extend(1.5f64.to_le_bytes());
        inside.extend(2u32.to_le_bytes());
        inside.extend(5i16.to_le_bytes());
        inside.extend(6i16.to_le_bytes());
        inside.push(1);
        // Alone: "ab\0" at 4..7, x aligned to 8.
        let mut alone = Vec::new();
        alone.extend(3u32.to_le_bytes());
        alone.extend(b"ab\0");
        alone.push(0);
        alone.extend(1.5f64.to_le_bytes());
        alone.extend(2u32.to_le_bytes());
        alone.extend(5i16.to_le_bytes());
        alone.extend(6i16.to_le_bytes());
        alone.push(1);
        assert_eq!(
            layout.request(&event(Some(&inside), 0)).unwrap(),
            Some(alone)
        );
        assert_eq!(layout.request(&event(None, 2)).unwrap(), None);
    }

    #[test]
    fn the_info_names_the_call() {
        let info = EventInfo::of(&event(None, 1)).unwrap();
        assert_eq!(
            info,
            EventInfo {
                event_type: REQUEST_RECEIVED,
                client_gid: [9; 16],
                sequence_number: 3,
            }
        );
        assert!(info.is_request());
        assert!(!EventInfo::of(&event(None, 2)).unwrap().is_request());
        let error = EventInfo::of(&event(None, 0)[..20]).unwrap_err();
        assert!(error.contains("too short"), "{error}");
        let error = EventInfo::of(&[0, 0, 0, 0]).unwrap_err();
        assert!(error.contains("not little-endian CDR"), "{error}");
    }

    #[test]
    fn what_cannot_be_read_is_said() {
        let layout = EventLayout::parse("recd_test/srv/Calc_Event", DEFINITION).unwrap();
        let mut big_endian = event(None, 0);
        big_endian[1] = 0;
        let error = layout.request(&big_endian).unwrap_err();
        assert!(error.contains("not little-endian CDR"), "{error}");
        // A string longer than what is left.
        let cut = event(Some(&[100, 0, 0, 0, b'a']), 0);
        let error = layout.request(&cut).unwrap_err();
        assert!(error.contains("the event ends"), "{error}");
        let error = EventLayout::parse("recd_test/srv/Calc_Response", DEFINITION).unwrap_err();
        assert!(error.contains("no field `request`"), "{error}");
        let error = EventLayout::parse("x/srv/Y_Event", "int32 a\n").unwrap_err();
        assert!(error.contains("no field `request`"), "{error}");
    }
}
