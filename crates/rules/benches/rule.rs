//! Decoding and evaluating a rule's condition on one ~200-byte ROS 2 message, against the
//! reference of copying the same bytes.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use recd_rules::{Condition, Expression, Layout};

/// A little CDR writer (little-endian, alignment counted after the 4-byte header).
struct Cdr(Vec<u8>);

impl Cdr {
    fn new() -> Cdr {
        Cdr(vec![0, 1, 0, 0])
    }
    fn put(&mut self, bytes: &[u8]) -> &mut Cdr {
        while !(self.0.len() - 4).is_multiple_of(bytes.len()) {
            self.0.push(0);
        }
        self.0.extend_from_slice(bytes);
        self
    }
    fn u32(&mut self, v: u32) -> &mut Cdr {
        self.put(&v.to_le_bytes())
    }
    fn string(&mut self, s: &str) -> &mut Cdr {
        self.u32(s.len() as u32 + 1);
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
        self
    }
}

fn sep() -> String {
    "=".repeat(80)
}

fn vehicle() -> (String, Vec<u8>) {
    let schema = format!(
        "float64 speed\ngeometry_msgs/Vector3 accel\nint8 gear\nstring mode\nstring notes\n\n{}\n\
         MSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n",
        sep()
    );
    let mut cdr = Cdr::new();
    cdr.put(&12.5f64.to_le_bytes());
    for v in [-7.25f64, 0.5, 9.81] {
        cdr.put(&v.to_le_bytes());
    }
    cdr.put(&[3]).string("drive").string(&"n".repeat(139));
    (schema, cdr.0)
}

fn diagnostics() -> (String, Vec<u8>) {
    let s = sep();
    let schema = format!(
        "Header header\nDiagnosticStatus[] status\n\n{s}\nMSG: std_msgs/Header\n\
         builtin_interfaces/Time stamp\nstring frame_id\n\n{s}\nMSG: builtin_interfaces/Time\n\
         int32 sec\nuint32 nanosec\n\n{s}\nMSG: diagnostic_msgs/DiagnosticStatus\n\
         byte level\nstring name\nstring message\nstring hardware_id\nKeyValue[] values\n\n{s}\n\
         MSG: diagnostic_msgs/KeyValue\nstring key\nstring value\n"
    );
    let mut cdr = Cdr::new();
    cdr.u32(1_700_000_000).u32(5).string("base_link").u32(4);
    for (level, name) in [(0u8, "lidar"), (0, "camera"), (1, "gps"), (2, "imu")] {
        cdr.put(&[level]).string(name).string("ok").string("hw");
        cdr.u32(1).string("t").string("40");
    }
    (schema, cdr.0)
}

fn condition(type_name: &str, schema: &str, when: &str) -> Condition {
    let layout = Layout::Ros2 {
        type_name,
        definition: schema,
    };
    Condition::compile(&Expression::parse(when).unwrap(), layout).unwrap()
}

fn bench(c: &mut Criterion) {
    let (schema, bytes) = vehicle();
    let hard_brake = condition("my_msgs/msg/VehicleStatus", &schema, "msg.accel.x < -6.0");
    let mode = condition(
        "my_msgs/msg/VehicleStatus",
        &schema,
        "msg.mode != 'park' && msg.gear == 3",
    );
    let (dschema, dbytes) = diagnostics();
    let diag = condition(
        "diagnostic_msgs/msg/DiagnosticArray",
        &dschema,
        "msg.status.exists(s, s.level >= 2)",
    );
    eprintln!(
        "VehicleStatus: {} B, DiagnosticArray: {} B",
        bytes.len(),
        dbytes.len()
    );
    let mut group = c.benchmark_group("rule");
    group.bench_function("copy_vehicle_to_vec", |b| {
        b.iter(|| black_box(&bytes).to_vec())
    });
    group.bench_function("hard_brake_decode_test", |b| {
        b.iter(|| {
            let msg = hard_brake.decode(black_box(&bytes)).unwrap();
            hard_brake.test(&msg, None).unwrap()
        })
    });
    group.bench_function("hard_brake_decode_only", |b| {
        b.iter(|| hard_brake.decode(black_box(&bytes)).unwrap())
    });
    let decoded = hard_brake.decode(&bytes).unwrap();
    group.bench_function("hard_brake_test_only", |b| {
        b.iter(|| hard_brake.test(black_box(&decoded), None).unwrap())
    });
    group.bench_function("mode_gear_decode_test", |b| {
        b.iter(|| {
            let msg = mode.decode(black_box(&bytes)).unwrap();
            mode.test(&msg, None).unwrap()
        })
    });
    group.bench_function("copy_diagnostics_to_vec", |b| {
        b.iter(|| black_box(&dbytes).to_vec())
    });
    group.bench_function("diagnostics_exists_decode_test", |b| {
        b.iter(|| {
            let msg = diag.decode(black_box(&dbytes)).unwrap();
            diag.test(&msg, None).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
