//! The hash against the hashes rosidl generated for real types (their `.json` files in the
//! ROS 2 Kilted wheels), and definitions from sources against those from files.

use super::*;

fn field(
    name: &str,
    type_id: u8,
    capacity: u64,
    string_capacity: u64,
    nested_type_name: &str,
    default_value: &str,
) -> Field {
    Field {
        name: name.into(),
        field_type: FieldType {
            type_id,
            capacity,
            string_capacity,
            nested_type_name: nested_type_name.into(),
        },
        default_value: default_value.into(),
    }
}

fn individual(type_name: &str, fields: Vec<Field>) -> IndividualTypeDescription {
    IndividualTypeDescription {
        type_name: type_name.into(),
        fields,
    }
}

/// geometry_msgs/msg/PoseStamped, as its node describes it.
fn pose_stamped() -> TypeDescription {
    TypeDescription {
        type_description: individual(
            "geometry_msgs/msg/PoseStamped",
            vec![
                field("header", 1, 0, 0, "std_msgs/msg/Header", ""),
                field("pose", 1, 0, 0, "geometry_msgs/msg/Pose", ""),
            ],
        ),
        referenced_type_descriptions: vec![
            individual(
                "builtin_interfaces/msg/Time",
                vec![
                    field("sec", 6, 0, 0, "", ""),
                    field("nanosec", 7, 0, 0, "", ""),
                ],
            ),
            individual(
                "geometry_msgs/msg/Point",
                vec![
                    field("x", 11, 0, 0, "", ""),
                    field("y", 11, 0, 0, "", ""),
                    field("z", 11, 0, 0, "", ""),
                ],
            ),
            individual(
                "geometry_msgs/msg/Pose",
                vec![
                    field("position", 1, 0, 0, "geometry_msgs/msg/Point", ""),
                    field("orientation", 1, 0, 0, "geometry_msgs/msg/Quaternion", ""),
                ],
            ),
            individual(
                "geometry_msgs/msg/Quaternion",
                vec![
                    field("x", 11, 0, 0, "", "0.0"),
                    field("y", 11, 0, 0, "", "0.0"),
                    field("z", 11, 0, 0, "", "0.0"),
                    field("w", 11, 0, 0, "", "1.0"),
                ],
            ),
            individual(
                "std_msgs/msg/Header",
                vec![
                    field("stamp", 1, 0, 0, "builtin_interfaces/msg/Time", ""),
                    field("frame_id", 17, 0, 0, "", ""),
                ],
            ),
        ],
    }
}
const POSE_STAMPED_HASH: &str =
    "RIHS01_10f3786d7d40fd2b54367835614bff85d4ad3b5dab62bf8bca0cc232d73b4cd8";
/// sensor_msgs/msg/Imu, as its node describes it.
fn imu() -> TypeDescription {
    TypeDescription {
        type_description: individual(
            "sensor_msgs/msg/Imu",
            vec![
                field("header", 1, 0, 0, "std_msgs/msg/Header", ""),
                field("orientation", 1, 0, 0, "geometry_msgs/msg/Quaternion", ""),
                field("orientation_covariance", 59, 9, 0, "", ""),
                field("angular_velocity", 1, 0, 0, "geometry_msgs/msg/Vector3", ""),
                field("angular_velocity_covariance", 59, 9, 0, "", ""),
                field(
                    "linear_acceleration",
                    1,
                    0,
                    0,
                    "geometry_msgs/msg/Vector3",
                    "",
                ),
                field("linear_acceleration_covariance", 59, 9, 0, "", ""),
            ],
        ),
        referenced_type_descriptions: vec![
            individual(
                "builtin_interfaces/msg/Time",
                vec![
                    field("sec", 6, 0, 0, "", ""),
                    field("nanosec", 7, 0, 0, "", ""),
                ],
            ),
            individual(
                "geometry_msgs/msg/Quaternion",
                vec![
                    field("x", 11, 0, 0, "", "0.0"),
                    field("y", 11, 0, 0, "", "0.0"),
                    field("z", 11, 0, 0, "", "0.0"),
                    field("w", 11, 0, 0, "", "1.0"),
                ],
            ),
            individual(
                "geometry_msgs/msg/Vector3",
                vec![
                    field("x", 11, 0, 0, "", ""),
                    field("y", 11, 0, 0, "", ""),
                    field("z", 11, 0, 0, "", ""),
                ],
            ),
            individual(
                "std_msgs/msg/Header",
                vec![
                    field("stamp", 1, 0, 0, "builtin_interfaces/msg/Time", ""),
                    field("frame_id", 17, 0, 0, "", ""),
                ],
            ),
        ],
    }
}
const IMU_HASH: &str = "RIHS01_7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b";
const ESCAPED_HASH: &str =
    "RIHS01_fd3cd4e63318d560099eaa5feda68930c9e7cc8e1657bf7e31d7cad6daad18cb";

#[test]
fn string_hash_is_rosidls() {
    let string = TypeDescription {
        type_description: individual("std_msgs/msg/String", vec![field("data", 17, 0, 0, "", "")]),
        referenced_type_descriptions: vec![],
    };
    assert_eq!(
        type_hash(&string),
        "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
    );
}

#[test]
fn nested_types_hash_as_rosidl_hashes_them() {
    assert_eq!(type_hash(&pose_stamped()), POSE_STAMPED_HASH);
    assert_eq!(type_hash(&imu()), IMU_HASH);
}

#[test]
fn default_values_are_not_hashed_and_fields_are() {
    let mut changed = pose_stamped();
    changed.type_description.fields[0].default_value = "anything".into();
    assert_eq!(type_hash(&changed), POSE_STAMPED_HASH);
    changed.type_description.fields[0].field_type.capacity = 1;
    assert_ne!(type_hash(&changed), POSE_STAMPED_HASH);
}

#[test]
fn text_is_escaped_as_pythons_json() {
    // Computed with Python's json.dumps(ensure_ascii=True) and hashlib.
    let odd = TypeDescription {
        type_description: individual(
            "odd/msg/Ünïcode\"\\\n\t😀",
            vec![field("a\u{1}b", 1, 2, 3, "x/msg/Y", "")],
        ),
        referenced_type_descriptions: vec![],
    };
    assert_eq!(type_hash(&odd), ESCAPED_HASH);
}

fn source(type_name: &str, encoding: &str, text: &str) -> TypeSource {
    TypeSource {
        type_name: type_name.into(),
        encoding: encoding.into(),
        raw_file_contents: text.into(),
    }
}

#[test]
fn definition_from_sources_is_the_definition_from_files() {
    let files = [
        (
            "geometry_msgs/msg/PoseStamped",
            "# A pose\nstd_msgs/Header header\nPose pose\n",
        ),
        (
            "geometry_msgs/msg/Pose",
            "Point position\nQuaternion orientation\n",
        ),
        (
            "geometry_msgs/msg/Point",
            "float64 x\nfloat64 y\nfloat64 z\n",
        ),
        (
            "geometry_msgs/msg/Quaternion",
            "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n",
        ),
        (
            "std_msgs/msg/Header",
            "builtin_interfaces/Time stamp\nstring frame_id\n",
        ),
        ("builtin_interfaces/msg/Time", "int32 sec\nuint32 nanosec\n"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(format!("{name}.msg"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let expected = MessageDefinitions::new(vec![dir.path().to_path_buf()])
        .definition("geometry_msgs/msg/PoseStamped")
        .unwrap();
    assert!(
        expected.contains("MSG: builtin_interfaces/Time\n"),
        "{expected}"
    );
    // In the order a node sends them, with a source that is no file among them.
    // rosidl's sources lack the files' final newline.
    let mut sources: Vec<TypeSource> = files
        .iter()
        .rev()
        .map(|(name, text)| source(name, "msg", text.trim_end_matches('\n')))
        .collect();
    sources.push(source("odd_msgs/msg/Odd", "idl", "module odd_msgs {};"));
    assert_eq!(
        definition_from_sources("geometry_msgs/msg/PoseStamped", &sources).unwrap(),
        expected
    );
}

#[test]
fn a_missing_source_is_a_missing_dependency() {
    let sources = [
        source("geometry_msgs/msg/Pose", "msg", "Point position\n"),
        // An IDL-only type has no .msg text to record.
        source("geometry_msgs/msg/Point", "idl", "module geometry_msgs {};"),
    ];
    let error = definition_from_sources("geometry_msgs/msg/Pose", &sources).unwrap_err();
    assert!(
        matches!(&error, DefinitionError::DependencyNotFound { dependency, .. } if dependency == "geometry_msgs/Point"),
        "{error}"
    );
    assert!(error.to_string().contains("<type sources>"), "{error}");
    let error = definition_from_sources("std_msgs/msg/String", &sources).unwrap_err();
    assert!(matches!(error, DefinitionError::NotFound { .. }), "{error}");
}
