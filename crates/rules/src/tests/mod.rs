//! Tests of the crate, with a small CDR encoder and the schemas they use.

mod condition;
mod config;
mod decoding;
mod trigger;

/// A test-only CDR encoder: the encapsulation header, then values aligned to their size
/// from after it.
pub(crate) struct Cdr {
    buf: Vec<u8>,
    le: bool,
}

impl Cdr {
    pub fn new(le: bool) -> Cdr {
        Cdr {
            buf: vec![0, u8::from(le), 0, 0],
            le,
        }
    }

    pub fn put(&mut self, le_bytes: &[u8]) -> &mut Cdr {
        let size = le_bytes.len();
        while !(self.buf.len() - 4).is_multiple_of(size) {
            self.buf.push(0);
        }
        if self.le {
            self.buf.extend_from_slice(le_bytes);
        } else {
            self.buf.extend(le_bytes.iter().rev());
        }
        self
    }

    pub fn u8(&mut self, v: u8) -> &mut Cdr {
        self.put(&[v])
    }
    pub fn i8(&mut self, v: i8) -> &mut Cdr {
        self.put(&v.to_le_bytes())
    }
    pub fn i32(&mut self, v: i32) -> &mut Cdr {
        self.put(&v.to_le_bytes())
    }
    pub fn u32(&mut self, v: u32) -> &mut Cdr {
        self.put(&v.to_le_bytes())
    }
    pub fn f64(&mut self, v: f64) -> &mut Cdr {
        self.put(&v.to_le_bytes())
    }
    pub fn string(&mut self, s: &str) -> &mut Cdr {
        self.u32(s.len() as u32 + 1);
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
        self
    }
    pub fn bytes(&self) -> Vec<u8> {
        self.buf.clone()
    }
}

pub(crate) fn separator() -> String {
    "=".repeat(80)
}

/// `my_msgs/msg/VehicleStatus` as recd writes its schema.
pub(crate) fn vehicle_schema() -> String {
    format!(
        "float64 speed\ngeometry_msgs/Vector3 accel\nint8 gear\nstring mode\n\n{}\nMSG: geometry_msgs/Vector3\n\
         # This represents a vector in free space.\nfloat64 x\nfloat64 y\nfloat64 z\n",
        separator()
    )
}

pub(crate) const VEHICLE: &str = "my_msgs/msg/VehicleStatus";

/// A VehicleStatus message.
pub(crate) fn vehicle(le: bool, speed: f64, accel: [f64; 3], gear: i8, mode: &str) -> Vec<u8> {
    let mut cdr = Cdr::new(le);
    cdr.f64(speed).f64(accel[0]).f64(accel[1]).f64(accel[2]);
    cdr.i8(gear).string(mode);
    cdr.bytes()
}

/// `diagnostic_msgs/msg/DiagnosticArray`, with a bare `Header` as in the real file.
pub(crate) fn diag_schema() -> String {
    let s = separator();
    format!(
        "Header header\nDiagnosticStatus[] status\n\n{s}\nMSG: std_msgs/Header\n\
         builtin_interfaces/Time stamp\nstring frame_id\n\n{s}\nMSG: builtin_interfaces/Time\n\
         int32 sec\nuint32 nanosec\n\n{s}\nMSG: diagnostic_msgs/DiagnosticStatus\n\
         byte OK=0\nbyte WARN=1 # comment\nbyte level\nstring name\nstring message\n\
         string hardware_id\nKeyValue[] values\n\n{s}\nMSG: diagnostic_msgs/KeyValue\n\
         string key # what\nstring value\n"
    )
}

pub(crate) const DIAG: &str = "diagnostic_msgs/msg/DiagnosticArray";

/// A DiagnosticArray with one status per `(level, name)`, each with one key/value.
pub(crate) fn diag(le: bool, statuses: &[(u8, &str)]) -> Vec<u8> {
    let mut cdr = Cdr::new(le);
    cdr.i32(1_700_000_000).u32(5).string("base_link");
    cdr.u32(statuses.len() as u32);
    for (level, name) in statuses {
        cdr.u8(*level).string(name).string("all good").string("hw1");
        cdr.u32(1).string("temp").string("40");
    }
    cdr.bytes()
}

#[test]
fn rules_and_runners_can_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<crate::Rule>();
    send_sync::<crate::Condition>();
    send_sync::<crate::RuleRunner>();
    send_sync::<crate::Decoded>();
}
