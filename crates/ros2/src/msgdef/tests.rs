use super::*;

use std::fs;
use std::path::Path;

// The upstream texts (ros2/common_interfaces and ros2/rcl_interfaces, rolling), byte for byte.
const POSE_STAMPED: &str = "\
# A Pose with reference coordinate frame and timestamp

std_msgs/Header header
Pose pose
";
const POSE: &str = "\
# A representation of pose in free space, composed of position and orientation.

Point position
Quaternion orientation
";
const POINT: &str = "\
# This contains the position of a point in free space
float64 x
float64 y
float64 z
";
const QUATERNION: &str = "\
# This represents an orientation in free space in quaternion form.

float64 x 0
float64 y 0
float64 z 0
float64 w 1
";
const HEADER: &str = "\
# Standard metadata for higher-level stamped data types.
# This is generally used to communicate timestamped data
# in a particular coordinate frame.

# Two-integer timestamp that is expressed as seconds and nanoseconds.
builtin_interfaces/Time stamp

# Transform frame with which this data is associated.
string frame_id
";
const TIME: &str = "\
# This message communicates ROS Time defined here:
# https://design.ros2.org/articles/clock_and_time.html

# The seconds component, valid over all int32 values.
int32 sec

# The nanoseconds component, valid in the range [0, 1e9).
uint32 nanosec
";

/// What rosbag2 writes for geometry_msgs/msg/PoseStamped: the root's text; then its
/// dependencies in name order (`geometry_msgs/Pose` < `std_msgs/Header`), each followed
/// depth-first by its own (`Point`, `Quaternion` under `Pose`; `Time` under `Header`).
const POSE_STAMPED_DEFINITION: &str = "\
# A Pose with reference coordinate frame and timestamp

std_msgs/Header header
Pose pose

================================================================================
MSG: geometry_msgs/Pose
# A representation of pose in free space, composed of position and orientation.

Point position
Quaternion orientation

================================================================================
MSG: geometry_msgs/Point
# This contains the position of a point in free space
float64 x
float64 y
float64 z

================================================================================
MSG: geometry_msgs/Quaternion
# This represents an orientation in free space in quaternion form.

float64 x 0
float64 y 0
float64 z 0
float64 w 1

================================================================================
MSG: std_msgs/Header
# Standard metadata for higher-level stamped data types.
# This is generally used to communicate timestamped data
# in a particular coordinate frame.

# Two-integer timestamp that is expressed as seconds and nanoseconds.
builtin_interfaces/Time stamp

# Transform frame with which this data is associated.
string frame_id

================================================================================
MSG: builtin_interfaces/Time
# This message communicates ROS Time defined here:
# https://design.ros2.org/articles/clock_and_time.html

# The seconds component, valid over all int32 values.
int32 sec

# The nanoseconds component, valid in the range [0, 1e9).
uint32 nanosec
";

/// Writes `text` to `dir/rel`, creating directories.
fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, text).unwrap();
    path
}

/// An ament prefix with geometry_msgs and std_msgs, and a plain directory with
/// builtin_interfaces, so both layouts are used in one definition.
fn pose_stamped_tree() -> (tempfile::TempDir, tempfile::TempDir, MessageDefinitions) {
    let prefix = tempfile::tempdir().unwrap();
    let plain = tempfile::tempdir().unwrap();
    write(
        prefix.path(),
        "share/geometry_msgs/msg/PoseStamped.msg",
        POSE_STAMPED,
    );
    write(prefix.path(), "share/geometry_msgs/msg/Pose.msg", POSE);
    write(prefix.path(), "share/geometry_msgs/msg/Point.msg", POINT);
    write(
        prefix.path(),
        "share/geometry_msgs/msg/Quaternion.msg",
        QUATERNION,
    );
    write(prefix.path(), "share/std_msgs/msg/Header.msg", HEADER);
    write(plain.path(), "builtin_interfaces/msg/Time.msg", TIME);
    let defs = MessageDefinitions::new(vec![prefix.path().to_owned(), plain.path().to_owned()]);
    (prefix, plain, defs)
}

#[test]
fn separator_is_80_equals_signs() {
    assert_eq!(SEPARATOR.len(), 80);
    assert!(SEPARATOR.bytes().all(|b| b == b'='));
}

#[test]
fn nested_definition_is_rosbag2_concatenation() {
    let (_prefix, _plain, defs) = pose_stamped_tree();
    let definition = defs.definition("geometry_msgs/msg/PoseStamped").unwrap();
    assert_eq!(definition, POSE_STAMPED_DEFINITION);
    let expected = [
        POSE_STAMPED,
        "MSG: geometry_msgs/Pose\n",
        POSE,
        "MSG: geometry_msgs/Point\n",
        POINT,
        "MSG: geometry_msgs/Quaternion\n",
        QUATERNION,
        "MSG: std_msgs/Header\n",
        HEADER,
        "MSG: builtin_interfaces/Time\n",
        TIME,
    ]
    .join("")
    .replace("\nMSG: ", &format!("\n\n{SEPARATOR}\nMSG: "));
    assert_eq!(definition, expected);
}

#[test]
fn short_and_long_type_names_give_the_same_definition() {
    let (_prefix, _plain, defs) = pose_stamped_tree();
    assert_eq!(
        defs.definition("geometry_msgs/PoseStamped").unwrap(),
        POSE_STAMPED_DEFINITION
    );
    assert_eq!(defs.definition("std_msgs/msg/Header").unwrap(), {
        let mut expected = HEADER.to_owned();
        expected.push_str(&format!(
            "\n{SEPARATOR}\nMSG: builtin_interfaces/Time\n{TIME}"
        ));
        expected
    });
}

#[test]
fn type_with_only_builtins_is_its_file_verbatim() {
    let dir = tempfile::tempdir().unwrap();
    // No trailing newline, CRLF, tabs: all kept as they are.
    let text = "# comment\r\nstring data\r\n\tint32 X=1 # c\r\nuint8[] raw";
    write(dir.path(), "std_msgs/msg/String.msg", text);
    let defs = MessageDefinitions::new(vec![dir.path().to_owned()]);
    assert_eq!(defs.definition("std_msgs/msg/String").unwrap(), text);
}

#[test]
fn every_field_form_is_understood_and_each_dependency_appears_once() {
    let dir = tempfile::tempdir().unwrap();
    let all_forms = "\
# Every kind of line.
bool a
byte b
char c
float32 d
float64 e
int8 f
uint8 g
int16 h
uint16 i
int32 j
uint32 k
int64 l
uint64 m
string n
wstring o
string<=5 p
wstring<=10 q
string<=5[<=3] r
string[] s
time t
duration u
int32[] v
int32[4] w
int32[<=4] x
int32 CONST=7
string GREETING=\"hi # not a comment\"
uint8 with_default 3
int32[] list_default [1, 2, 3]
   # an indented comment
Point[] points  # same package
Point[2] pair
pkg/Point[<=3] bounded
other_pkg/Thing thing
Point single
";
    write(dir.path(), "pkg/msg/AllForms.msg", all_forms);
    write(
        dir.path(),
        "pkg/msg/Point.msg",
        "float64 x\nother_pkg/Thing t\n",
    );
    write(dir.path(), "other_pkg/msg/Thing.msg", "int8 z\n");
    let defs = MessageDefinitions::new(vec![dir.path().to_owned()]);
    // other_pkg/Thing < pkg/Point in byte order; Thing is reached first from AllForms, so
    // it is not repeated under Point.
    let expected = format!(
        "{all_forms}\n{SEPARATOR}\nMSG: other_pkg/Thing\nint8 z\n\
         \n{SEPARATOR}\nMSG: pkg/Point\nfloat64 x\nother_pkg/Thing t\n"
    );
    assert_eq!(defs.definition("pkg/msg/AllForms").unwrap(), expected);
}

#[test]
fn dependencies_are_visited_in_name_order_not_field_order() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pkg/msg/Root.msg",
        "pkg/Zeta z\npkg/Alpha a\naaa_pkg/Mid m\n",
    );
    write(dir.path(), "pkg/msg/Zeta.msg", "int8 z\n");
    write(dir.path(), "pkg/msg/Alpha.msg", "int8 a\n");
    write(dir.path(), "aaa_pkg/msg/Mid.msg", "int8 m\n");
    let defs = MessageDefinitions::new(vec![dir.path().to_owned()]);
    let names: Vec<String> = defs
        .definition("pkg/Root")
        .unwrap()
        .lines()
        .filter_map(|line| line.strip_prefix("MSG: ").map(str::to_owned))
        .collect();
    assert_eq!(names, ["aaa_pkg/Mid", "pkg/Alpha", "pkg/Zeta"]);
}

#[test]
fn bare_header_is_same_package_first_then_std_msgs() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "std_msgs/msg/Header.msg", "string frame_id\n");
    write(dir.path(), "ros1_style/msg/Stamped.msg", "Header header\n");
    write(dir.path(), "own_header/msg/Stamped.msg", "Header header\n");
    write(dir.path(), "own_header/msg/Header.msg", "uint32 seq\n");
    let defs = MessageDefinitions::new(vec![dir.path().to_owned()]);
    assert_eq!(
        defs.definition("ros1_style/msg/Stamped").unwrap(),
        format!("Header header\n\n{SEPARATOR}\nMSG: std_msgs/Header\nstring frame_id\n")
    );
    assert_eq!(
        defs.definition("own_header/msg/Stamped").unwrap(),
        format!("Header header\n\n{SEPARATOR}\nMSG: own_header/Header\nuint32 seq\n")
    );
}

#[test]
fn cycles_end() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pkg/msg/A.msg", "B b\n");
    write(dir.path(), "pkg/msg/B.msg", "A[] a\nB[] b\n");
    let defs = MessageDefinitions::new(vec![dir.path().to_owned()]);
    assert_eq!(
        defs.definition("pkg/A").unwrap(),
        format!("B b\n\n{SEPARATOR}\nMSG: pkg/B\nA[] a\nB[] b\n")
    );
}

#[test]
fn missing_type_is_not_found() {
    let (prefix, plain, defs) = pose_stamped_tree();
    let err = defs.definition("geometry_msgs/msg/Twist").unwrap_err();
    let DefinitionError::NotFound { ros_type, searched } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(ros_type, "geometry_msgs/msg/Twist");
    assert_eq!(
        searched,
        &[prefix.path().to_owned(), plain.path().to_owned()]
    );
    let message = err.to_string();
    assert!(message.contains("geometry_msgs/msg/Twist"), "{message}");
    assert!(
        message.contains(&prefix.path().display().to_string()),
        "{message}"
    );

    let err = MessageDefinitions::new(Vec::new())
        .definition("std_msgs/String")
        .unwrap_err();
    assert!(
        err.to_string().contains("no directories to search"),
        "{err}"
    );
}

#[test]
fn missing_dependency_names_it_and_the_line_using_it() {
    let (prefix, _plain, defs) = pose_stamped_tree();
    fs::remove_file(prefix.path().join("share/geometry_msgs/msg/Quaternion.msg")).unwrap();
    let err = defs
        .definition("geometry_msgs/msg/PoseStamped")
        .unwrap_err();
    let DefinitionError::DependencyNotFound {
        ros_type,
        dependency,
        file,
        line,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(ros_type, "geometry_msgs/msg/PoseStamped");
    assert_eq!(dependency, "geometry_msgs/Quaternion");
    assert_eq!(
        file,
        &prefix.path().join("share/geometry_msgs/msg/Pose.msg")
    );
    assert_eq!(*line, 4);
    let message = err.to_string();
    assert!(message.contains("geometry_msgs/Quaternion"), "{message}");
    assert!(message.contains("Pose.msg:4"), "{message}");
}

#[test]
fn malformed_lines_are_errors_naming_file_and_line() {
    for (line_text, reason) in [
        ("justonetoken", "expected `type name`"),
        ("int32[3 x", "does not end with `]`"),
        ("int32[x] y", "array bound"),
        ("int32[<=] y", "array bound"),
        ("int32<=4 y", "only `string` and `wstring`"),
        ("string<=n y", "not a number"),
        ("a/b/c x", "not a builtin type"),
        ("pkg/ x", "not a builtin type"),
        ("Fo-o x", "not a builtin type"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "pkg/msg/Bad.msg",
            &format!("# ok\nint32 fine\n{line_text}\n"),
        );
        let defs = MessageDefinitions::new(vec![dir.path().to_owned()]);
        let err = defs.definition("pkg/msg/Bad").unwrap_err();
        let DefinitionError::Malformed {
            ros_type,
            file: bad_file,
            line,
            text,
            reason: why,
        } = &err
        else {
            panic!("{line_text}: {err:?}");
        };
        assert_eq!(ros_type, "pkg/msg/Bad");
        assert_eq!(bad_file, &file);
        assert_eq!(*line, 3, "{line_text}");
        assert_eq!(text, line_text);
        assert!(why.contains(reason), "{line_text}: {why}");
        assert!(err.to_string().contains("Bad.msg:3"), "{err}");
    }
}

#[test]
fn malformed_line_in_a_dependency_names_the_dependency_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pkg/msg/Root.msg", "Leaf leaf\n");
    let leaf = write(dir.path(), "pkg/msg/Leaf.msg", "int32\n");
    let defs = MessageDefinitions::new(vec![dir.path().to_owned()]);
    let err = defs.definition("pkg/Root").unwrap_err();
    assert!(
        matches!(&err, DefinitionError::Malformed { ros_type, file, line: 1, .. }
            if ros_type == "pkg/Root" && file == &leaf),
        "{err:?}"
    );
}

#[test]
fn unreadable_file_is_a_read_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pkg/msg/Binary.msg");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, b"uint8 x\n\xff\xfe\n").unwrap();
    let defs = MessageDefinitions::new(vec![dir.path().to_owned()]);
    let err = defs.definition("pkg/Binary").unwrap_err();
    assert!(
        matches!(&err, DefinitionError::Read { ros_type, file: f, .. }
            if ros_type == "pkg/Binary" && f == &file),
        "{err:?}"
    );
}

#[test]
fn names_that_are_not_message_types_are_refused() {
    let (_prefix, _plain, defs) = pose_stamped_tree();
    for name in [
        "PoseStamped",
        "geometry_msgs",
        "geometry_msgs/",
        "/PoseStamped",
        "geometry_msgs/srv/PoseStamped",
        "example_interfaces/srv/AddTwoInts",
        "example_interfaces/srv/_Event",
        "example_interfaces/srv/AddTwoInts_Goal",
        "example_interfaces/srv/AddTwoInts_Event/x",
        "example_interfaces/action/Fibonacci",
        "example_interfaces/action/Fibonacci_Request",
        "example_interfaces/action/_FeedbackMessage",
        "example_interfaces/actions/Fibonacci_Goal",
        "geometry_msgs/msg/Pose/Stamped",
        "geometry_msgs::msg::PoseStamped",
        "../geometry_msgs/PoseStamped",
        "",
    ] {
        let err = defs.definition(name).unwrap_err();
        assert!(
            matches!(&err, DefinitionError::InvalidTypeName { ros_type } if ros_type == name),
            "{name}: {err:?}"
        );
    }
}

#[test]
fn first_directory_wins_and_share_layout_before_plain_within_one() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    write(
        second.path(),
        "share/std_msgs/msg/String.msg",
        "string second\n",
    );
    write(
        first.path(),
        "std_msgs/msg/String.msg",
        "string first_plain\n",
    );
    let both = vec![first.path().to_owned(), second.path().to_owned()];
    let defs = MessageDefinitions::new(both.clone());
    assert_eq!(
        defs.definition("std_msgs/String").unwrap(),
        "string first_plain\n"
    );
    let reversed = MessageDefinitions::new(both.iter().rev().cloned().collect());
    assert_eq!(
        reversed.definition("std_msgs/String").unwrap(),
        "string second\n"
    );

    write(
        first.path(),
        "share/std_msgs/msg/String.msg",
        "string first_share\n",
    );
    assert_eq!(
        defs.definition("std_msgs/String").unwrap(),
        "string first_share\n"
    );

    // Each type is looked up on its own: a dependency missing in the first directory is
    // taken from the second.
    write(first.path(), "share/pkg/msg/Root.msg", "std_msgs/Empty e\n");
    write(second.path(), "share/std_msgs/msg/Empty.msg", "");
    assert_eq!(
        defs.definition("pkg/Root").unwrap(),
        format!("std_msgs/Empty e\n\n{SEPARATOR}\nMSG: std_msgs/Empty\n")
    );
}

#[test]
fn ament_prefix_path_value_is_appended_in_order() {
    let given = vec![PathBuf::from("/fixtures")];
    let defs = MessageDefinitions::with_ament_prefix_path_value(
        given.clone(),
        Some(OsStr::new("/ws/install/pkg::/opt/ros/jazzy:")),
    );
    assert_eq!(
        defs.dirs(),
        [
            PathBuf::from("/fixtures"),
            PathBuf::from("/ws/install/pkg"),
            PathBuf::from("/opt/ros/jazzy"),
        ]
    );
    assert_eq!(
        MessageDefinitions::with_ament_prefix_path_value(given.clone(), None).dirs(),
        given
    );
    assert_eq!(
        MessageDefinitions::with_ament_prefix_path_value(given.clone(), Some(OsStr::new("")))
            .dirs(),
        given
    );
}

#[test]
fn ament_prefix_path_reads_the_environment() {
    // Reads the variable as the process has it; never sets it.
    let given = vec![PathBuf::from("/fixtures")];
    assert_eq!(
        MessageDefinitions::with_ament_prefix_path(given.clone()),
        MessageDefinitions::with_ament_prefix_path_value(
            given,
            std::env::var_os("AMENT_PREFIX_PATH").as_deref()
        )
    );
}

#[test]
fn ament_prefixes_are_searched_after_the_given_dirs() {
    let fixtures = tempfile::tempdir().unwrap();
    let prefix = tempfile::tempdir().unwrap();
    write(
        fixtures.path(),
        "share/pkg/msg/Root.msg",
        "std_msgs/Header h\n",
    );
    write(prefix.path(), "share/pkg/msg/Root.msg", "int8 shadowed\n");
    write(
        prefix.path(),
        "share/std_msgs/msg/Header.msg",
        "string frame_id\n",
    );
    let defs = MessageDefinitions::with_ament_prefix_path_value(
        vec![fixtures.path().to_owned()],
        Some(prefix.path().as_os_str()),
    );
    assert_eq!(
        defs.definition("pkg/msg/Root").unwrap(),
        format!("std_msgs/Header h\n\n{SEPARATOR}\nMSG: std_msgs/Header\nstring frame_id\n")
    );
}

/// The fixture tree the end-to-end tests use holds the upstream std_msgs/String.
#[test]
fn fixture_tree_has_upstream_std_msgs_string() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ros2");
    let defs = MessageDefinitions::new(vec![fixtures]);
    assert_eq!(
        defs.definition("std_msgs/msg/String").unwrap(),
        "# This was originally provided as an example message.\n\
         # It is deprecated as of Foxy\n\
         # It is recommended to create your own semantically meaningful message.\n\
         # However if you would like to continue using this please use the equivalent in example_msgs.\n\
         \n\
         string data\n"
    );
}

// Services and actions. Upstream texts (ros2/example_interfaces, ros2/rcl_interfaces,
// ros2/unique_identifier_msgs), byte for byte, as in the fixture tree.
const ADD_TWO_INTS: &str = "int64 a\nint64 b\n---\nint64 sum\n";
const SERVICE_EVENT_INFO: &str = "\
uint8 REQUEST_SENT = 0
uint8 REQUEST_RECEIVED = 1
uint8 RESPONSE_SENT = 2
uint8 RESPONSE_RECEIVED = 3

# The type of event this message represents
uint8 event_type

# Timestamp for when the event occurred (sent or received time)
builtin_interfaces/Time stamp

# Unique identifier for the client that sent the service request
# Note, this is only unique for the current session.
# The size here has to match the size of rmw_dds_common/msg/Gid,
# but unfortunately we cannot use that message directly due to a
# circular dependency.
char[16] client_gid

# Sequence number for the request
# Combined with the client ID, this creates a unique ID for the service transaction
int64 sequence_number
";
const UUID: &str = "\
# A universally unique identifier (UUID).
#
#  http://en.wikipedia.org/wiki/Universally_unique_identifier
#  http://tools.ietf.org/html/rfc4122.html

uint8[16] uuid
";
const GOAL_INFO: &str = "\
# Goal ID
unique_identifier_msgs/UUID goal_id

# Time when the goal was accepted
builtin_interfaces/Time stamp
";
/// action_tutorials_interfaces' Fibonacci, whose feedback field differs from the result's.
const FIBONACCI: &str = "int32 order\n---\nint32[] sequence\n---\nint32[] partial_sequence\n";

/// What is built for example_interfaces/srv/AddTwoInts_Event: the generated event text, then
/// its dependencies in name order: the request and response sections, ServiceEventInfo and,
/// under it, Time.
const ADD_TWO_INTS_EVENT_DEFINITION: &str = "\
service_msgs/ServiceEventInfo info
example_interfaces/AddTwoInts_Request[<=1] request
example_interfaces/AddTwoInts_Response[<=1] response

================================================================================
MSG: example_interfaces/AddTwoInts_Request
int64 a
int64 b

================================================================================
MSG: example_interfaces/AddTwoInts_Response
int64 sum

================================================================================
MSG: service_msgs/ServiceEventInfo
uint8 REQUEST_SENT = 0
uint8 REQUEST_RECEIVED = 1
uint8 RESPONSE_SENT = 2
uint8 RESPONSE_RECEIVED = 3

# The type of event this message represents
uint8 event_type

# Timestamp for when the event occurred (sent or received time)
builtin_interfaces/Time stamp

# Unique identifier for the client that sent the service request
# Note, this is only unique for the current session.
# The size here has to match the size of rmw_dds_common/msg/Gid,
# but unfortunately we cannot use that message directly due to a
# circular dependency.
char[16] client_gid

# Sequence number for the request
# Combined with the client ID, this creates a unique ID for the service transaction
int64 sequence_number

================================================================================
MSG: builtin_interfaces/Time
# This message communicates ROS Time defined here:
# https://design.ros2.org/articles/clock_and_time.html

# The seconds component, valid over all int32 values.
int32 sec

# The nanoseconds component, valid in the range [0, 1e9).
uint32 nanosec
";

/// `root` followed by each `(pkg/Type, text)` as a `MSG:` section.
fn concatenated(root: &str, sections: &[(&str, &str)]) -> String {
    let mut out = root.to_owned();
    for (name, text) in sections {
        out.push_str(&format!("\n{SEPARATOR}\nMSG: {name}\n{text}"));
    }
    out
}

/// An ament prefix with example_interfaces' AddTwoInts and Fibonacci (`FIBONACCI`), and the
/// messages their generated types use.
fn interfaces_tree() -> (tempfile::TempDir, MessageDefinitions) {
    let prefix = tempfile::tempdir().unwrap();
    let dir = prefix.path();
    write(
        dir,
        "share/example_interfaces/srv/AddTwoInts.srv",
        ADD_TWO_INTS,
    );
    write(
        dir,
        "share/example_interfaces/action/Fibonacci.action",
        FIBONACCI,
    );
    write(
        dir,
        "share/service_msgs/msg/ServiceEventInfo.msg",
        SERVICE_EVENT_INFO,
    );
    write(dir, "share/builtin_interfaces/msg/Time.msg", TIME);
    write(dir, "share/unique_identifier_msgs/msg/UUID.msg", UUID);
    let defs = MessageDefinitions::new(vec![dir.to_owned()]);
    (prefix, defs)
}

#[test]
fn service_event_is_the_generated_message_with_its_dependencies() {
    let (_prefix, defs) = interfaces_tree();
    assert_eq!(
        defs.definition("example_interfaces/srv/AddTwoInts_Event")
            .unwrap(),
        ADD_TWO_INTS_EVENT_DEFINITION
    );
    assert_eq!(
        ADD_TWO_INTS_EVENT_DEFINITION,
        concatenated(
            "service_msgs/ServiceEventInfo info\n\
             example_interfaces/AddTwoInts_Request[<=1] request\n\
             example_interfaces/AddTwoInts_Response[<=1] response\n",
            &[
                (
                    "example_interfaces/AddTwoInts_Request",
                    "int64 a\nint64 b\n"
                ),
                ("example_interfaces/AddTwoInts_Response", "int64 sum\n"),
                ("service_msgs/ServiceEventInfo", SERVICE_EVENT_INFO),
                ("builtin_interfaces/Time", TIME),
            ]
        )
    );
}

#[test]
fn service_request_and_response_are_the_sections_verbatim() {
    let (_prefix, defs) = interfaces_tree();
    assert_eq!(
        defs.definition("example_interfaces/srv/AddTwoInts_Request")
            .unwrap(),
        "int64 a\nint64 b\n"
    );
    assert_eq!(
        defs.definition("example_interfaces/srv/AddTwoInts_Response")
            .unwrap(),
        "int64 sum\n"
    );
}

#[test]
fn sections_keep_their_text_and_line_numbers() {
    use generated::sections;
    assert_eq!(
        sections(ADD_TWO_INTS),
        [("int64 a\nint64 b\n", 1), ("int64 sum\n", 4)]
    );
    // Empty sections, CRLF and whitespace around `---`; no trailing newline.
    assert_eq!(
        sections("---\r\n# c\r\n  ---  \nbool b"),
        [("", 1), ("# c\r\n", 2), ("bool b", 4)]
    );
    assert_eq!(sections("---"), [("", 1), ("", 2)]);
    assert_eq!(sections("int8 a\n# ---\n"), [("int8 a\n# ---\n", 1)]);
}

#[test]
fn action_sections_are_goal_result_feedback() {
    let (_prefix, defs) = interfaces_tree();
    for (name, text) in [
        ("Fibonacci_Goal", "int32 order\n"),
        ("Fibonacci_Result", "int32[] sequence\n"),
        ("Fibonacci_Feedback", "int32[] partial_sequence\n"),
    ] {
        assert_eq!(
            defs.definition(&format!("example_interfaces/action/{name}"))
                .unwrap(),
            text,
            "{name}"
        );
    }
}

#[test]
fn action_feedback_message_is_generated() {
    let (_prefix, defs) = interfaces_tree();
    assert_eq!(
        defs.definition("example_interfaces/action/Fibonacci_FeedbackMessage")
            .unwrap(),
        concatenated(
            "unique_identifier_msgs/UUID goal_id\n\
             example_interfaces/Fibonacci_Feedback feedback\n",
            &[
                (
                    "example_interfaces/Fibonacci_Feedback",
                    "int32[] partial_sequence\n"
                ),
                ("unique_identifier_msgs/UUID", UUID),
            ]
        )
    );
}

#[test]
fn action_send_goal_and_get_result_services_are_generated() {
    let (_prefix, defs) = interfaces_tree();
    assert_eq!(
        defs.definition("example_interfaces/action/Fibonacci_SendGoal_Event")
            .unwrap(),
        concatenated(
            "service_msgs/ServiceEventInfo info\n\
             example_interfaces/Fibonacci_SendGoal_Request[<=1] request\n\
             example_interfaces/Fibonacci_SendGoal_Response[<=1] response\n",
            &[
                (
                    "example_interfaces/Fibonacci_SendGoal_Request",
                    "unique_identifier_msgs/UUID goal_id\n\
                     example_interfaces/Fibonacci_Goal goal\n"
                ),
                ("example_interfaces/Fibonacci_Goal", "int32 order\n"),
                ("unique_identifier_msgs/UUID", UUID),
                (
                    "example_interfaces/Fibonacci_SendGoal_Response",
                    "bool accepted\nbuiltin_interfaces/Time stamp\n"
                ),
                ("builtin_interfaces/Time", TIME),
                ("service_msgs/ServiceEventInfo", SERVICE_EVENT_INFO),
            ]
        )
    );
    assert_eq!(
        defs.definition("example_interfaces/action/Fibonacci_GetResult_Event")
            .unwrap(),
        concatenated(
            "service_msgs/ServiceEventInfo info\n\
             example_interfaces/Fibonacci_GetResult_Request[<=1] request\n\
             example_interfaces/Fibonacci_GetResult_Response[<=1] response\n",
            &[
                (
                    "example_interfaces/Fibonacci_GetResult_Request",
                    "unique_identifier_msgs/UUID goal_id\n"
                ),
                ("unique_identifier_msgs/UUID", UUID),
                (
                    "example_interfaces/Fibonacci_GetResult_Response",
                    "int8 status\nexample_interfaces/Fibonacci_Result result\n"
                ),
                ("example_interfaces/Fibonacci_Result", "int32[] sequence\n"),
                ("service_msgs/ServiceEventInfo", SERVICE_EVENT_INFO),
                ("builtin_interfaces/Time", TIME),
            ]
        )
    );
    // The request and response types on their own.
    assert_eq!(
        defs.definition("example_interfaces/action/Fibonacci_SendGoal_Response")
            .unwrap(),
        concatenated(
            "bool accepted\nbuiltin_interfaces/Time stamp\n",
            &[("builtin_interfaces/Time", TIME)]
        )
    );
    assert_eq!(
        defs.definition("example_interfaces/action/Fibonacci_GetResult_Request")
            .unwrap(),
        concatenated(
            "unique_identifier_msgs/UUID goal_id\n",
            &[("unique_identifier_msgs/UUID", UUID)]
        )
    );
}

/// The committed fixture tree, which the end-to-end tests use.
fn fixture_tree() -> (PathBuf, MessageDefinitions) {
    let share = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ros2/share");
    (share.clone(), MessageDefinitions::new(vec![share]))
}

#[test]
fn fixture_tree_holds_the_upstream_interface_texts() {
    let (share, _defs) = fixture_tree();
    for (rel, text) in [
        ("example_interfaces/srv/AddTwoInts.srv", ADD_TWO_INTS),
        ("service_msgs/msg/ServiceEventInfo.msg", SERVICE_EVENT_INFO),
        ("builtin_interfaces/msg/Time.msg", TIME),
        ("unique_identifier_msgs/msg/UUID.msg", UUID),
        ("action_msgs/msg/GoalInfo.msg", GOAL_INFO),
    ] {
        assert_eq!(fs::read_to_string(share.join(rel)).unwrap(), text, "{rel}");
    }
}

#[test]
fn cancel_goal_event_from_the_fixture_tree() {
    let (share, defs) = fixture_tree();
    let read = |rel: &str| fs::read_to_string(share.join(rel)).unwrap();
    let cancel_goal = read("action_msgs/srv/CancelGoal.srv");
    let (request, response) = cancel_goal.split_once("---\n").unwrap();
    assert!(request.ends_with("GoalInfo goal_info\n"), "{request}");
    assert!(response.contains("int8 ERROR_NONE=0\n"), "{response}");
    assert!(
        response.ends_with("int8 return_code\n\n# Goals that accepted the cancel request.\nGoalInfo[] goals_canceling\n"),
        "{response}"
    );
    // GoalInfo is reached from the request first, so not repeated under the response; Time
    // under GoalInfo, so not repeated under ServiceEventInfo.
    assert_eq!(
        defs.definition("action_msgs/srv/CancelGoal_Event").unwrap(),
        concatenated(
            "service_msgs/ServiceEventInfo info\n\
             action_msgs/CancelGoal_Request[<=1] request\n\
             action_msgs/CancelGoal_Response[<=1] response\n",
            &[
                ("action_msgs/CancelGoal_Request", request),
                ("action_msgs/GoalInfo", GOAL_INFO),
                ("builtin_interfaces/Time", TIME),
                ("unique_identifier_msgs/UUID", UUID),
                ("action_msgs/CancelGoal_Response", response),
                ("service_msgs/ServiceEventInfo", SERVICE_EVENT_INFO),
            ]
        )
    );
    // Every type the end-to-end tests record resolves.
    for ros_type in [
        "example_interfaces/srv/AddTwoInts_Event",
        "example_interfaces/action/Fibonacci_FeedbackMessage",
        "example_interfaces/action/Fibonacci_SendGoal_Event",
        "example_interfaces/action/Fibonacci_GetResult_Event",
        "action_msgs/msg/GoalStatusArray",
    ] {
        defs.definition(ros_type)
            .unwrap_or_else(|err| panic!("{ros_type}: {err}"));
    }
}

#[test]
fn missing_srv_is_not_found_naming_srv_files() {
    let (prefix, defs) = interfaces_tree();
    let err = defs
        .definition("example_interfaces/srv/AddThreeInts_Event")
        .unwrap_err();
    let DefinitionError::NotFound { ros_type, searched } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(ros_type, "example_interfaces/srv/AddThreeInts_Event");
    assert_eq!(searched, &[prefix.path().to_owned()]);
    let message = err.to_string();
    assert!(
        message.starts_with("no .srv file for `example_interfaces/srv/AddThreeInts_Event`"),
        "{message}"
    );
    assert!(
        message.contains("share/<pkg>/srv/<Service>.srv and <pkg>/srv/<Service>.srv"),
        "{message}"
    );
    assert!(!message.contains(".msg"), "{message}");

    let err = defs
        .definition("example_interfaces/action/Fibonacci2_Goal")
        .unwrap_err();
    assert!(err.to_string().starts_with("no .action file for"), "{err}");
    // A .srv file does not make an action type, nor a .msg file a srv type.
    write(prefix.path(), "share/example_interfaces/msg/Fib.msg", "");
    write(
        prefix.path(),
        "share/example_interfaces/srv/Fib.srv",
        "---\n",
    );
    for ros_type in [
        "example_interfaces/action/Fib_Goal",
        "example_interfaces/action/AddTwoInts_SendGoal_Request",
        "example_interfaces/srv/Fib2_Request",
    ] {
        let err = defs.definition(ros_type).unwrap_err();
        assert!(
            matches!(err, DefinitionError::NotFound { .. }),
            "{ros_type}: {err:?}"
        );
    }
    assert_eq!(
        defs.definition("example_interfaces/srv/Fib_Request")
            .unwrap(),
        ""
    );
}

#[test]
fn srv_and_action_without_their_separators_are_errors_naming_the_file() {
    for (rel, text, ros_type, expected, found) in [
        (
            "pkg/srv/NoSep.srv",
            "int64 a\nint64 sum\n",
            "pkg/srv/NoSep_Request",
            1,
            0,
        ),
        (
            "pkg/srv/NoSep.srv",
            "int64 a\nint64 sum\n",
            "pkg/srv/NoSep_Event",
            1,
            0,
        ),
        (
            "pkg/srv/Two.srv",
            "int8 a\n---\n---\n",
            "pkg/srv/Two_Response",
            1,
            2,
        ),
        (
            "pkg/action/One.action",
            "int8 a\n---\nint8 b\n",
            "pkg/action/One_Goal",
            2,
            1,
        ),
        (
            "pkg/action/One.action",
            "int8 a\n---\nint8 b\n",
            "pkg/action/One_SendGoal_Response",
            2,
            1,
        ),
        (
            "pkg/action/Four.action",
            "---\n---\n---\n",
            "pkg/action/Four_Result",
            2,
            3,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), rel, text);
        let defs = MessageDefinitions::new(vec![dir.path().to_owned()]);
        let err = defs.definition(ros_type).unwrap_err();
        let DefinitionError::Separators {
            ros_type: asked,
            file: bad_file,
            expected: e,
            found: f,
        } = &err
        else {
            panic!("{ros_type}: {err:?}");
        };
        assert_eq!(asked, ros_type);
        assert_eq!(bad_file, &file);
        assert_eq!((*e, *f), (expected, found), "{ros_type}");
        let message = err.to_string();
        assert!(message.contains(&file.display().to_string()), "{message}");
        assert!(
            message.contains(&format!("found {found} `---` lines, expected {expected}")),
            "{message}"
        );
    }
}

#[test]
fn a_service_itself_is_not_a_message_type() {
    let (_prefix, defs) = interfaces_tree();
    for name in [
        "example_interfaces/srv/AddTwoInts",
        "example_interfaces/action/Fibonacci",
    ] {
        let err = defs.definition(name).unwrap_err();
        assert!(
            matches!(&err, DefinitionError::InvalidTypeName { ros_type } if ros_type == name),
            "{err:?}"
        );
        let message = err.to_string();
        for accepted in ["`pkg/msg/Type`", "`pkg/srv/Service_Request`", "`_Event`"] {
            assert!(message.contains(accepted), "{message}");
        }
        assert!(message.contains("`_FeedbackMessage`"), "{message}");
        assert!(message.contains("a service or action itself"), "{message}");
    }
}

#[test]
fn errors_in_srv_sections_name_the_srv_file_and_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "pkg/srv/Bad.srv",
        "# request\nint8 a\n---\n# response\nMissing m\nint8\n",
    );
    let defs = MessageDefinitions::new(vec![dir.path().to_owned()]);
    let err = defs.definition("pkg/srv/Bad_Response").unwrap_err();
    assert!(
        matches!(&err, DefinitionError::Malformed { ros_type, file: f, line: 6, text, .. }
            if ros_type == "pkg/srv/Bad_Response" && f == &file && text == "int8"),
        "{err:?}"
    );
    assert!(err.to_string().contains("Bad.srv:6"), "{err}");

    write(
        dir.path(),
        "pkg/srv/Bad.srv",
        "# request\nint8 a\n---\n# response\nMissing m\n",
    );
    let err = defs.definition("pkg/srv/Bad_Response").unwrap_err();
    let DefinitionError::DependencyNotFound {
        dependency,
        file: f,
        line,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!((dependency.as_str(), f, *line), ("pkg/Missing", &file, 5));
    let message = err.to_string();
    assert!(
        message.contains("no .msg file for `pkg/Missing`"),
        "{message}"
    );
    assert!(message.contains("Bad.srv:5"), "{message}");
}

#[test]
fn missing_service_event_info_names_the_generated_type() {
    let (prefix, defs) = interfaces_tree();
    fs::remove_file(
        prefix
            .path()
            .join("share/service_msgs/msg/ServiceEventInfo.msg"),
    )
    .unwrap();
    let err = defs
        .definition("example_interfaces/srv/AddTwoInts_Event")
        .unwrap_err();
    let DefinitionError::GeneratedDependencyNotFound {
        ros_type,
        dependency,
        generated,
        file,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(ros_type, "example_interfaces/srv/AddTwoInts_Event");
    assert_eq!(dependency, "service_msgs/ServiceEventInfo");
    assert_eq!(generated, "example_interfaces/AddTwoInts_Event");
    assert_eq!(
        file,
        &prefix
            .path()
            .join("share/example_interfaces/srv/AddTwoInts.srv")
    );
    let message = err.to_string();
    assert!(
        message.contains("no .msg file for `service_msgs/ServiceEventInfo`"),
        "{message}"
    );
    assert!(message.contains("AddTwoInts.srv"), "{message}");
}

#[test]
fn referenced_generated_names_try_msg_then_srv_then_action() {
    let (prefix, defs) = interfaces_tree();
    // A name with a srv suffix that no file has: the message names every kind tried.
    write(
        prefix.path(),
        "share/pkg/msg/Root.msg",
        "pkg/Go_SendGoal_Request r\n",
    );
    let err = defs.definition("pkg/Root").unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("no .msg, .srv or .action file for `pkg/Go_SendGoal_Request`"),
        "{message}"
    );
    assert!(
        message.contains(
            "<pkg>/msg/<Type>.msg, then share/<pkg>/srv/<Service>.srv and \
             <pkg>/srv/<Service>.srv, then share/<pkg>/action/<Action>.action"
        ),
        "{message}"
    );
    // The action's generated type, then a srv shadowing it, then a msg shadowing both.
    write(
        prefix.path(),
        "share/pkg/action/Go.action",
        "int8 g\n---\n---\n",
    );
    assert_eq!(
        defs.definition("pkg/Root").unwrap(),
        concatenated(
            "pkg/Go_SendGoal_Request r\n",
            &[
                (
                    "pkg/Go_SendGoal_Request",
                    "unique_identifier_msgs/UUID goal_id\npkg/Go_Goal goal\n"
                ),
                ("pkg/Go_Goal", "int8 g\n"),
                ("unique_identifier_msgs/UUID", UUID),
            ]
        )
    );
    write(
        prefix.path(),
        "share/pkg/srv/Go_SendGoal.srv",
        "int8 s\n---\n",
    );
    assert_eq!(
        defs.definition("pkg/Root").unwrap(),
        concatenated(
            "pkg/Go_SendGoal_Request r\n",
            &[("pkg/Go_SendGoal_Request", "int8 s\n")]
        )
    );
    write(
        prefix.path(),
        "share/pkg/msg/Go_SendGoal_Request.msg",
        "int8 m\n",
    );
    assert_eq!(
        defs.definition("pkg/Root").unwrap(),
        concatenated(
            "pkg/Go_SendGoal_Request r\n",
            &[("pkg/Go_SendGoal_Request", "int8 m\n")]
        )
    );
}
