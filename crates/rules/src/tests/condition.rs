//! Expressions, compiling against schemas, and evaluating.

use super::*;
use crate::{CompileError, Condition, Expression, FieldPath, Layout, Root};

fn compile(type_name: &str, schema: &str, when: &str) -> Result<Condition, CompileError> {
    let layout = Layout::Ros2 {
        type_name,
        definition: schema,
    };
    Condition::compile(&Expression::parse(when)?, layout)
}

fn vehicle_test(when: &str, msg: &[u8], prev: Option<&[u8]>) -> bool {
    let c = compile(VEHICLE, &vehicle_schema(), when).unwrap();
    let m = c.decode(msg).unwrap();
    let p = prev.map(|p| c.decode(p).unwrap());
    c.test(&m, p.as_ref()).unwrap()
}

fn paths(when: &str) -> Vec<String> {
    let e = Expression::parse(when).unwrap();
    e.paths().iter().map(FieldPath::to_string).collect()
}

#[test]
fn expressions_know_their_paths() {
    assert_eq!(paths("msg.accel.x < -6.0"), ["msg.accel.x"]);
    assert_eq!(paths("msg.mode != prev.mode"), ["msg.mode", "prev.mode"]);
    assert_eq!(paths("msg.status.exists(s, s.level >= 2)"), ["msg.status"]);
    assert_eq!(paths("msg.status[0].level == 1"), ["msg.status.level"]);
    assert_eq!(paths("has(msg.a.b) && msg['c'] > 1"), ["msg.a.b", "msg.c"]);
    let e = Expression::parse("msg.status.exists(s, s.level >= 2)").unwrap();
    assert!(!e.reads_prev());
    let status = &e.tree().children["status"];
    assert!(status.children["level"].whole);
    assert!(Expression::parse("prev.speed > msg.speed")
        .unwrap()
        .reads_prev());
    assert_eq!(
        Expression::parse("msg.speed > 1.0").unwrap().paths()[0],
        FieldPath {
            root: Root::Msg,
            segments: vec!["speed".to_owned()]
        }
    );
}

#[test]
fn hard_brake() {
    let braking = vehicle(true, 20.0, [-7.0, 0.0, 0.0], 3, "drive");
    let cruising = vehicle(true, 20.0, [-1.0, 0.0, 0.0], 3, "drive");
    assert!(vehicle_test("msg.accel.x < -6.0", &braking, None));
    assert!(!vehicle_test("msg.accel.x < -6.0", &cruising, None));
}

#[test]
fn mode_changes_compare_with_prev() {
    let a = vehicle(true, 0.0, [0.0; 3], 0, "park");
    let b = vehicle(true, 0.0, [0.0; 3], 0, "drive");
    assert!(vehicle_test("msg.mode != prev.mode", &b, Some(&a)));
    assert!(!vehicle_test("msg.mode != prev.mode", &b, Some(&b)));
    let c = compile(VEHICLE, &vehicle_schema(), "msg.mode != prev.mode").unwrap();
    let m = c.decode(&b).unwrap();
    let p = c.decode(&a).unwrap();
    let values = c.values(&m, Some(&p));
    assert_eq!(values["msg.mode"], serde_json::json!("drive"));
    assert_eq!(values["prev.mode"], serde_json::json!("park"));
    // Without prev, an expression reading it fails (the runner treats that as false).
    assert!(c.test(&m, None).is_err());
}

#[test]
fn integers_compare_with_int_literals() {
    let m = vehicle(true, 0.0, [0.0; 3], 4, "");
    assert!(vehicle_test("msg.gear == 4", &m, None));
    assert!(vehicle_test(
        "msg.gear + 1 == 5 && msg.gear - 10 == -6",
        &m,
        None
    ));
    // uint8, uint32 and uint64 are ints too.
    let schema = "uint8 gear\nuint32 count\nuint64 big\nuint8[] data\n";
    let c = compile(
        "p/msg/U",
        schema,
        "msg.gear == 4 && msg.count - 10 < 0 && msg.big > 1 && msg.data[1] == 255",
    )
    .unwrap();
    let mut cdr = Cdr::new(true);
    cdr.u8(4)
        .u32(3)
        .f64(f64::from_bits(u64::MAX))
        .u32(2)
        .u8(1)
        .u8(255);
    let msg = c.decode(&cdr.bytes()).unwrap();
    assert!(c.test(&msg, None).unwrap());
    assert_eq!(c.values(&msg, None)["msg.big"], serde_json::json!(u64::MAX));
    assert_eq!(
        c.values(&msg, None)["msg.data"],
        serde_json::json!([1, 255])
    );
}

#[test]
fn a_double_compares_with_an_int_literal() {
    let fast = vehicle(true, 31.0, [0.0; 3], 0, "");
    let slow = vehicle(true, 29.5, [0.0; 3], 0, "");
    assert!(vehicle_test("msg.speed > 30", &fast, None));
    assert!(!vehicle_test("msg.speed > 30", &slow, None));
}

#[test]
fn diagnostics_exists_over_a_sequence_of_messages() {
    let schema = diag_schema();
    let c = compile(DIAG, &schema, "msg.status.exists(s, s.level >= 2)").unwrap();
    let warn = diag(true, &[(0, "a"), (2, "b")]);
    let ok = diag(true, &[(0, "a"), (1, "b")]);
    let empty = diag(true, &[]);
    let msg = c.decode(&warn).unwrap();
    assert!(c.test(&msg, None).unwrap());
    assert!(!c.test(&c.decode(&ok).unwrap(), None).unwrap());
    assert!(!c.test(&c.decode(&empty).unwrap(), None).unwrap());
    // Only the levels are decoded.
    assert_eq!(
        c.values(&msg, None)["msg.status"],
        serde_json::json!([{"level": 0}, {"level": 2}])
    );
    let c = compile(
        DIAG,
        &schema,
        "msg.header.frame_id == 'base_link' && msg.header.stamp.sec > 0",
    )
    .unwrap();
    assert!(c.test(&c.decode(&warn).unwrap(), None).unwrap());
}

#[test]
fn values_of_long_lists_are_capped() {
    let statuses: Vec<(u8, &str)> = (0..40).map(|i| (i as u8, "n")).collect();
    let c = compile(DIAG, &diag_schema(), "size(msg.status) > 30").unwrap();
    let msg = c.decode(&diag(true, &statuses)).unwrap();
    assert!(c.test(&msg, None).unwrap());
    let serde_json::Value::Array(items) = &c.values(&msg, None)["msg.status"] else {
        panic!("a list");
    };
    assert_eq!(items.len(), crate::MAX_LIST);
    assert_eq!(items[1]["name"], serde_json::json!("n"));
}

fn error(type_name: &str, schema: &str, when: &str) -> String {
    compile(type_name, schema, when).unwrap_err().to_string()
}

#[test]
fn compile_errors_say_what_is_wrong() {
    let v = vehicle_schema();
    assert_eq!(
        error(VEHICLE, &v, "msg.acel.x < -6.0"),
        "when: VehicleStatus has no field \"acel\"; it has speed, accel, gear, mode"
    );
    assert_eq!(
        error(VEHICLE, &v, "msg.accel.w < -6.0"),
        "when: Vector3 has no field \"w\"; it has x, y, z"
    );
    assert_eq!(
        error(VEHICLE, &v, "msg.speed.x > 1.0"),
        "when: msg.speed is float64, it has no field \"x\""
    );
    let e = error(VEHICLE, &v, "msg.mode < 3");
    assert!(e.starts_with("when: no such overload: string < int"), "{e}");
    assert_eq!(
        error(VEHICLE, &v, "msg.speed + 1.0"),
        "when: the condition gives a double, not a bool (true or false)"
    );
    assert_eq!(
        error(VEHICLE, &v, "speed > 1.0"),
        "when: unknown variable \"speed\"; a condition reads only msg (the message) and prev (the one before it)"
    );
    let e = error(VEHICLE, &v, "msg.speed >");
    assert!(e.starts_with("when: does not parse: "), "{e}");
    // Macro bodies are checked on one synthetic element.
    let e = error(DIAG, &diag_schema(), "msg.status.exists(s, s.name > 2)");
    assert!(e.starts_with("when: no such overload: string > int"), "{e}");
    let e = error(DIAG, &diag_schema(), "msg.status.exists(s, s.levl > 2)");
    assert!(e.contains("DiagnosticStatus has no field \"levl\""), "{e}");
    let e = error("p/msg/T", "p/Missing m\n", "msg.m == 1");
    assert!(e.contains("p/Missing is used but not defined"), "{e}");
    // A division by a synthetic zero is not a type error.
    assert!(compile(VEHICLE, &v, "msg.gear / msg.gear == 1").is_ok());
}

#[test]
fn schemas_resolve_relative_names_arrays_and_constants() {
    let s = separator();
    let schema = format!(
        "int8 FOO=3\nint8 BAR = 4\nstring<=8 name \"x\"\nPoint[2] pts\nPoint[<=3] more\nfloat32[3] v\ntime t\nHeader header\nEmpty e\nint16 last\n\
         \n{s}\nMSG: pkg/Point\nfloat64 x\n{s}\nMSG: pkg/msg/Empty\n\n{s}\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n"
    );
    let c = compile(
        "pkg/msg/T",
        &schema,
        "msg.name == 'ab' && msg.pts[1].x == 2.0 && size(msg.more) == 1 && msg.v[2] == 0.5 && msg.t.nanosec == 7 && msg.last == -2",
    )
    .unwrap();
    let mut cdr = Cdr::new(true);
    cdr.string("ab").f64(1.0).f64(2.0).u32(1).f64(3.0);
    cdr.i32(0).i32(0).put(&0.5f32.to_le_bytes());
    cdr.i32(1)
        .u32(7)
        .i32(0)
        .u32(0)
        .string("")
        .u8(0)
        .put(&(-2i16).to_le_bytes());
    let msg = c.decode(&cdr.bytes()).unwrap();
    assert!(c.test(&msg, None).unwrap());
}
