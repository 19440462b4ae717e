//! A ROS 2 parameter's value (rcl_interfaces/msg/ParameterValue) as the YAML a file keeps
//! it in, typed as `ros2 param dump` writes it: `true`, `42`, `1.5`, `'text'`,
//! `[1, 2]`, `null` for a parameter that is declared but not set.

use recd_ros2::yaml::string_scalar;
use ros2_client::parameters::raw::{ParameterType, ParameterValue};

/// `value` as YAML; a type rcl_interfaces does not define is named as such.
pub(super) fn yaml(value: &ParameterValue) -> String {
    match value.ptype {
        ParameterType::NOT_SET => "null".to_string(),
        ParameterType::BOOL => value.boolean_value.to_string(),
        ParameterType::INTEGER => value.int_value.to_string(),
        ParameterType::DOUBLE => double(value.double_value),
        ParameterType::STRING => string_scalar(&value.string_value),
        ParameterType::BYTE_ARRAY => list(value.byte_array.iter().map(u8::to_string)),
        ParameterType::BOOL_ARRAY => list(value.bool_array.iter().map(bool::to_string)),
        ParameterType::INTEGER_ARRAY => list(value.int_array.iter().map(i64::to_string)),
        ParameterType::DOUBLE_ARRAY => list(value.double_array.iter().copied().map(double)),
        ParameterType::STRING_ARRAY => list(value.string_array.iter().map(|s| string_scalar(s))),
        other => format!("'<parameter type {other}>'"),
    }
}

/// A float that YAML 1.1 (PyYAML, `ros2 param load`) reads back as a float: always with
/// a point, an exponent always signed.
fn double(value: f64) -> String {
    if value.is_nan() {
        return ".nan".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { ".inf" } else { "-.inf" }.to_string();
    }
    // Debug writes the shortest text that reads back exact: `1.0`, `1e-9`, `1e20`.
    let text = format!("{value:?}");
    let (mantissa, exponent) = match text.split_once('e') {
        Some((mantissa, exponent)) => (mantissa.to_string(), Some(exponent.to_string())),
        None => (text, None),
    };
    let mantissa = if mantissa.contains('.') {
        mantissa
    } else {
        format!("{mantissa}.0")
    };
    match exponent {
        Some(exponent) if exponent.starts_with('-') => format!("{mantissa}e{exponent}"),
        Some(exponent) => format!("{mantissa}e+{exponent}"),
        None => mantissa,
    }
}

fn list(items: impl Iterator<Item = String>) -> String {
    format!("[{}]", items.collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(ptype: u8, fill: impl FnOnce(&mut ParameterValue)) -> String {
        let mut value = ParameterValue {
            ptype,
            boolean_value: false,
            int_value: 0,
            double_value: 0.0,
            string_value: String::new(),
            byte_array: vec![],
            bool_array: vec![],
            int_array: vec![],
            double_array: vec![],
            string_array: vec![],
        };
        fill(&mut value);
        yaml(&value)
    }

    #[test]
    fn each_type_is_written_as_yaml_reads_it_back() {
        assert_eq!(of(ParameterType::NOT_SET, |_| ()), "null");
        assert_eq!(of(ParameterType::BOOL, |v| v.boolean_value = true), "true");
        assert_eq!(of(ParameterType::INTEGER, |v| v.int_value = -42), "-42");
        assert_eq!(of(ParameterType::DOUBLE, |v| v.double_value = 2.0), "2.0");
        assert_eq!(
            of(ParameterType::DOUBLE, |v| v.double_value = 1e-9),
            "1.0e-9"
        );
        assert_eq!(
            of(ParameterType::DOUBLE, |v| v.double_value = 2.5e20),
            "2.5e+20"
        );
        assert_eq!(
            of(ParameterType::DOUBLE, |v| v.double_value =
                f64::NEG_INFINITY),
            "-.inf"
        );
        assert_eq!(
            of(ParameterType::STRING, |v| v.string_value = "it's 42".into()),
            "'it''s 42'"
        );
        assert_eq!(
            of(ParameterType::STRING, |v| v.string_value =
                "two\nlines".into()),
            "\"two\\nlines\"",
            "a single-quoted scalar would fold the line break"
        );
        assert_eq!(
            of(ParameterType::BYTE_ARRAY, |v| v.byte_array = vec![0, 255]),
            "[0, 255]"
        );
        assert_eq!(
            of(ParameterType::DOUBLE_ARRAY, |v| v.double_array =
                vec![1.0, 0.5]),
            "[1.0, 0.5]"
        );
        assert_eq!(
            of(ParameterType::STRING_ARRAY, |v| v.string_array =
                vec!["a".into(), "b".into()]),
            "['a', 'b']"
        );
        assert_eq!(of(ParameterType::INTEGER_ARRAY, |_| ()), "[]");
        assert_eq!(of(42, |_| ()), "'<parameter type 42>'");
    }
}
