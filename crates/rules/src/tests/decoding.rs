//! Decoding: only the read fields, both byte orders, malformed input.

use super::*;
use crate::{Condition, EvalError, Expression, Fields, Layout};

fn vehicle_condition(when: &str) -> Condition {
    let schema = vehicle_schema();
    let layout = Layout::Ros2 {
        type_name: VEHICLE,
        definition: &schema,
    };
    Condition::compile(&Expression::parse(when).unwrap(), layout).unwrap()
}

fn diag_condition(when: &str) -> Condition {
    let schema = diag_schema();
    let layout = Layout::Ros2 {
        type_name: DIAG,
        definition: &schema,
    };
    Condition::compile(&Expression::parse(when).unwrap(), layout).unwrap()
}

#[test]
fn a_plan_stops_after_the_last_read_field() {
    let c = vehicle_condition("msg.speed > 30.0");
    let bytes = vehicle(true, 31.0, [0.0; 3], 4, "drive");
    // Header and speed only: nothing after it is looked at.
    let msg = c.decode(&bytes[..12]).unwrap();
    assert!(c.test(&msg, None).unwrap());
    assert!(c.decode(&bytes[..11]).is_err());
    // Reading the mode needs the whole message.
    let c = vehicle_condition("msg.mode == 'drive'");
    assert!(matches!(
        c.decode(&bytes[..bytes.len() - 1]),
        Err(EvalError::Truncated { .. })
    ));
    assert!(c.test(&c.decode(&bytes).unwrap(), None).unwrap());
}

#[test]
fn nested_messages_keep_only_their_read_fields() {
    let c = vehicle_condition("msg.accel.x < -6.0");
    let bytes = vehicle(true, 10.0, [-7.5, 1.0, 2.0], 3, "drive");
    let msg = c.decode(&bytes).unwrap();
    // accel is the last read field: the plan stops after accel.x.
    assert!(c.decode(&bytes[..4 + 16]).is_ok());
    let values = c.values(&msg, None);
    assert_eq!(values.len(), 1);
    assert_eq!(values["msg.accel.x"], serde_json::json!(-7.5));
    let c = vehicle_condition("msg.accel == prev.accel");
    let msg = c.decode(&bytes).unwrap();
    assert_eq!(
        c.values(&msg, Some(&msg))["prev.accel"],
        serde_json::json!({"x": -7.5, "y": 1.0, "z": 2.0})
    );
}

#[test]
fn big_endian_messages_decode_the_same() {
    for le in [true, false] {
        let c = vehicle_condition("msg.accel.x < -6.0 && msg.gear == 4 && msg.mode == 'sport'");
        let bytes = vehicle(le, 10.0, [-7.5, 1.0, 2.0], 4, "sport");
        assert!(c.test(&c.decode(&bytes).unwrap(), None).unwrap(), "le={le}");
        let d = diag_condition("msg.status.exists(s, s.level >= 2 && s.values[0].value == '40')");
        let bytes = diag(le, &[(0, "a"), (2, "b")]);
        assert!(d.test(&d.decode(&bytes).unwrap(), None).unwrap(), "le={le}");
    }
}

#[test]
fn unsupported_encapsulation_is_an_error() {
    let c = vehicle_condition("msg.speed > 1.0");
    let mut bytes = vehicle(true, 10.0, [0.0; 3], 0, "");
    bytes[1] = 7;
    assert_eq!(c.decode(&bytes).unwrap_err(), EvalError::Encapsulation(7));
    assert!(matches!(
        c.decode(&[0, 1]),
        Err(EvalError::Truncated { .. })
    ));
}

#[test]
fn a_sequence_longer_than_the_message_is_malformed() {
    let c = diag_condition("size(msg.status) > 0");
    let mut cdr = Cdr::new(true);
    cdr.i32(1).u32(2).string("f").u32(1_000_000);
    assert!(matches!(
        c.decode(&cdr.bytes()),
        Err(EvalError::Malformed(_))
    ));
}

/// A tiny deterministic generator (xorshift).
fn random(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn random_and_truncated_bytes_never_panic() {
    let conditions = [
        vehicle_condition("msg.mode != prev.mode || msg.accel.x < 0.0"),
        diag_condition("msg.status.exists(s, s.level >= 2 && size(s.values) > 0)"),
        diag_condition("msg == prev"),
    ];
    let valid = [
        vehicle(true, 1.0, [1.0, 2.0, 3.0], 1, "abc"),
        diag(true, &[(1, "x"), (2, "y"), (3, "z")]),
        diag(false, &[(1, "x")]),
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    for c in &conditions {
        for bytes in &valid {
            for cut in 0..=bytes.len() {
                let _ = c.decode(&bytes[..cut]).map(|m| c.test(&m, Some(&m)));
            }
            for _ in 0..300 {
                let mut b = bytes.clone();
                for _ in 0..1 + random(&mut seed) % 4 {
                    let i = (random(&mut seed) as usize) % b.len();
                    b[i] = random(&mut seed) as u8;
                }
                let _ = c.decode(&b).map(|m| c.test(&m, Some(&m)));
            }
        }
        for len in 0..200 {
            let mut b: Vec<u8> = (0..len).map(|_| random(&mut seed) as u8).collect();
            if len > 2 {
                b[0] = 0;
                b[1] = 1;
            }
            let _ = c.decode(&b).map(|m| c.test(&m, None));
        }
    }
}

#[test]
fn iceoryx2_fields_count_from_the_payload() {
    let specs = [("speed", "f32@8"), ("gear", "u8@12"), ("on", "bool@13")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let fields = Fields::parse(&specs).unwrap();
    let layout = Layout::Fields {
        fields: &fields,
        user_header_size: 16,
    };
    let e = Expression::parse("msg.speed > 30.0 && msg.gear == 4 && msg.on").unwrap();
    let c = Condition::compile(&e, layout).unwrap();
    let mut bytes = vec![0xAA; 16 + 14];
    bytes[16 + 8..16 + 12].copy_from_slice(&31.5f32.to_le_bytes());
    bytes[16 + 12] = 4;
    bytes[16 + 13] = 1;
    let msg = c.decode(&bytes).unwrap();
    assert!(c.test(&msg, None).unwrap());
    assert_eq!(c.values(&msg, None)["msg.speed"], serde_json::json!(31.5));
    assert!(matches!(
        c.decode(&bytes[..16 + 13]),
        Err(EvalError::Truncated { .. })
    ));
    let e = Expression::parse("msg.gear - 5 < 0").unwrap();
    let c = Condition::compile(&e, layout).unwrap();
    assert!(c.test(&c.decode(&bytes).unwrap(), None).unwrap());
}
