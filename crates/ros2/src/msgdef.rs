//! The `ros2msg` schema text rosbag2 stores for a message type, built from `.msg` files, and
//! the same for the message types generated from `.srv` and `.action` files.
//!
//! The format is rosbag2's (`rosbag2_cpp/src/rosbag2_cpp/message_definitions/
//! local_message_definition_source.cpp`, `LocalMessageDefinitionSource::get_full_text`), which
//! the MCAP `ros2msg` schema encoding describes and Foxglove and `rosbags` parse:
//!
//! - first the type's own `.msg` file, verbatim (comments, blank lines and trailing newline
//!   kept);
//! - then, for each non-builtin type it references, `"\n"`, a line of exactly 80 `=`, a line
//!   `MSG: pkg/Type` (package and type name, no `/msg/`) and that type's own text, followed
//!   by the types *it* references, and so on: depth-first, pre-order;
//! - the types one file references are visited in byte order of their `pkg/Type` names
//!   (rosbag2 collects them in a `std::set<std::string>`), not in field order;
//! - every type appears once, the first time it is reached (one `seen` set for the whole
//!   walk). The root type is in that set from the start, so a cycle (which ROS does not
//!   allow anyway) ends instead of recursing.
//!
//! A referenced type is the first word of a field or constant line, with any array suffix
//! (`[]`, `[N]`, `[<=N]`) removed. Builtin types are rosidl's primitive types: `bool byte
//! char float32 float64 int8 uint8 int16 uint16 int32 uint32 int64 uint64 string wstring`,
//! bounded strings `string<=N`/`wstring<=N`, and the ROS 1 compatibility types `time` and
//! `duration` that rosidl_adapter still lists as primitive. A type without a package
//! (`Point`) is in the package of the file that names it (rosidl and rosbag2 alike, `Header`
//! included); only when that package has no `Header.msg` is a bare `Header` taken as
//! `std_msgs/Header`, the ROS 1 convention, which no ROS 2 package can rely on.
//!
//! Where this differs from rosbag2, it is stricter or more correct, never different on a
//! valid install tree: rosbag2 does not list `wstring`, `time` and `duration` as builtin and
//! so falls back to IDL for types that use them; a malformed line is an error here where
//! rosbag2 skips it; and a missing file is an error where rosbag2 falls back to the `.idl`
//! (`ros2idl`), which this module does not produce.
//!
//! # Services and actions
//!
//! The types rosidl generates from `.srv` and `.action` files (rosidl_parser's
//! `definition.py`, classes `Service` and `Action`) are built the same way, from
//! `share/<pkg>/srv/<Service>.srv` and `share/<pkg>/action/<Action>.action` (or without
//! `share/`), found like `.msg` files. A `.srv` is request, a line `---`, response; an
//! `.action` is goal `---` result `---` feedback (the `---` lines may have surrounding
//! whitespace). Asked for as `pkg/srv/<Name>` or `pkg/action/<Name>`, and named
//! `MSG: pkg/<Name>` (no `/srv/` or `/action/`) as dependencies:
//!
//! - `S_Request`, `S_Response`: the request and response sections of `S.srv`, verbatim;
//! - `S_Event`, the type of the service-introspection topic `<service>/_service_event`:
//!   `service_msgs/ServiceEventInfo info`, `pkg/S_Request[<=1] request`,
//!   `pkg/S_Response[<=1] response`;
//! - `A_Goal`, `A_Result`, `A_Feedback`: the sections of `A.action`, verbatim;
//! - `A_FeedbackMessage` (topic `<action>/_action/feedback`):
//!   `unique_identifier_msgs/UUID goal_id`, `pkg/A_Feedback feedback`;
//! - `A_SendGoal_Request`: `unique_identifier_msgs/UUID goal_id`, `pkg/A_Goal goal`;
//!   `A_SendGoal_Response`: `bool accepted`, `builtin_interfaces/Time stamp`;
//!   `A_GetResult_Request`: `unique_identifier_msgs/UUID goal_id`; `A_GetResult_Response`:
//!   `int8 status`, `pkg/A_Result result`; and their events `A_SendGoal_Event`,
//!   `A_GetResult_Event` built like `S_Event` (topics
//!   `<action>/_action/{send_goal,get_result}/_service_event`). The cancel service is the
//!   plain `action_msgs/srv/CancelGoal`.
//!
//! The generated texts are one line per member, as a `.msg` file would declare it. A type
//! named `pkg/Name` is looked up as `pkg/msg/Name.msg` first, then as a generated type of
//! `pkg/srv/<S>.srv`, then of `pkg/action/<A>.action`, where `Name` is `<S>` or `<A>` with
//! one of the suffixes above.
//!
//! rosbag2 stores the raw `.srv` text for `…_Event` types instead (rosbag2 issue #2365),
//! which viewers cannot decode as the event message; what is built here is the message
//! rosidl generates, which Foxglove, `mcap_ros2` and `@foxglove/ros2msg` decode.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsStr;
use std::fmt;
use std::path::PathBuf;

use describe::{dependency_kinds, root_kinds, Files, Searched};
use generated::{Kind, Part, Source};

mod describe;
mod generated;

/// The line between two definitions, without its newline.
const SEPARATOR: &str =
    "================================================================================";

/// The MCAP schema encoding of the definitions built here.
pub const SCHEMA_ENCODING: &str = "ros2msg";

/// rosidl_adapter's `PRIMITIVE_TYPES`: types with no `.msg` file of their own.
const BUILTIN_TYPES: &[&str] = &[
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
    "uint32", "int64", "uint64", "string", "wstring", "time", "duration",
];

/// Where to look for `.msg`, `.srv` and `.action` files, and the definitions built from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageDefinitions {
    dirs: Vec<PathBuf>,
    /// The files by path, when they are given as texts rather than read from disk.
    texts: Option<BTreeMap<PathBuf, String>>,
}

/// Why [`MessageDefinitions::definition`] could not build a definition. Every variant names
/// the type that was asked for; those about a file name the file.
#[derive(Debug, thiserror::Error)]
pub enum DefinitionError {
    /// The name is not a message type's: `pkg/msg/Type` or `pkg/Type`, or one of the types
    /// generated from a service or action (a service or action itself is not a message).
    #[error("`{ros_type}` is not a ROS 2 message type name: {ACCEPTED_NAMES}")]
    InvalidTypeName {
        /// The type asked for.
        ros_type: String,
    },
    /// No directory holds the type's `.msg` file (or, for a type generated from a service or
    /// action, its `.srv` or `.action` file).
    #[error(
        "no {} for `{ros_type}`: {}",
        Files(&root_kinds(.ros_type)), Searched(.searched, &root_kinds(.ros_type))
    )]
    NotFound {
        /// The type asked for.
        ros_type: String,
        /// The directories searched, in order.
        searched: Vec<PathBuf>,
    },
    /// No directory holds the file of a type the definition references.
    #[error(
        "definition of `{ros_type}`: no {} for `{dependency}`, used at {}:{line}: {}",
        Files(&dependency_kinds(.dependency)), .file.display(),
        Searched(.searched, &dependency_kinds(.dependency))
    )]
    DependencyNotFound {
        /// The type asked for.
        ros_type: String,
        /// The referenced type that was not found, as `pkg/Type`.
        dependency: String,
        /// The `.msg`, `.srv` or `.action` file that references it.
        file: PathBuf,
        /// The line of `file` that references it, from 1.
        line: usize,
        /// The directories searched, in order.
        searched: Vec<PathBuf>,
    },
    /// No directory holds the file of a type that a generated type (such as a service's
    /// `_Event`) references.
    #[error(
        "definition of `{ros_type}`: no {} for `{dependency}`, used by `{generated}` \
         (generated from {}): {}",
        Files(&dependency_kinds(.dependency)), .file.display(),
        Searched(.searched, &dependency_kinds(.dependency))
    )]
    GeneratedDependencyNotFound {
        /// The type asked for.
        ros_type: String,
        /// The referenced type that was not found, as `pkg/Type`.
        dependency: String,
        /// The generated type that references it, as `pkg/Type`.
        generated: String,
        /// The `.srv` or `.action` file it is generated from.
        file: PathBuf,
        /// The directories searched, in order.
        searched: Vec<PathBuf>,
    },
    /// A `.srv` file without exactly one `---` line, or an `.action` file without exactly two.
    #[error(
        "definition of `{ros_type}`: {}: found {found} `---` lines, expected {expected} \
         (.srv: request --- response; .action: goal --- result --- feedback)",
        .file.display()
    )]
    Separators {
        /// The type asked for.
        ros_type: String,
        /// The `.srv` or `.action` file.
        file: PathBuf,
        /// How many `---` lines it should have: 1 for a `.srv`, 2 for an `.action`.
        expected: usize,
        /// How many `---` lines it has.
        found: usize,
    },
    /// A `.msg`, `.srv` or `.action` file could not be read (or is not UTF-8).
    #[error("definition of `{ros_type}`: cannot read {}: {source}", .file.display())]
    Read {
        /// The type asked for.
        ros_type: String,
        /// The file that could not be read.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of a `.msg`, `.srv` or `.action` file is neither blank, a comment, a field nor
    /// a constant.
    #[error(
        "definition of `{ros_type}`: {}:{line}: malformed line {text:?}: {reason}",
        .file.display()
    )]
    Malformed {
        /// The type asked for.
        ros_type: String,
        /// The file with the malformed line.
        file: PathBuf,
        /// The malformed line's number in `file`, from 1.
        line: usize,
        /// The malformed line.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// The names [`MessageDefinitions::definition`] accepts, for error messages.
const ACCEPTED_NAMES: &str = "expected `pkg/msg/Type` or `pkg/Type`; \
    `pkg/srv/Service_Request`, `_Response` or `_Event`; or `pkg/action/Action_Goal`, \
    `_Result`, `_Feedback`, `_FeedbackMessage`, `_SendGoal_Request`, `_SendGoal_Response`, \
    `_SendGoal_Event`, `_GetResult_Request`, `_GetResult_Response` or `_GetResult_Event` \
    (a service or action itself is not a message type)";

/// A message type: its package and its name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct MsgType {
    package: String,
    name: String,
}

impl MsgType {
    fn new(package: &str, name: &str) -> Self {
        Self {
            package: package.to_owned(),
            name: name.to_owned(),
        }
    }
}

/// `pkg/Type`, as in rosbag2's `MSG:` lines.
impl fmt::Display for MsgType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.package, self.name)
    }
}

/// The types one text references, by `pkg/Type` name (so in rosbag2's order), each with the
/// line that first references it.
type Dependencies = BTreeMap<String, (MsgType, usize)>;

/// A type's file, and which of its generated types the type is (`None` for a `.msg`).
struct Located {
    /// The `.msg`, `.srv` or `.action` file.
    file: PathBuf,
    /// Which of those it is.
    kind: Kind,
    /// The part, and the file's name without extension (the service's or action's name).
    part: Option<(Part, String)>,
}

/// Where the lines of a type's text come from, for error messages.
enum Origin {
    /// The lines of the located file, the first being line `first_line` of it.
    File {
        /// The number of the text's first line in the file, from 1.
        first_line: usize,
    },
    /// Text generated from the located file.
    Generated,
}

impl MessageDefinitions {
    /// Searches `dirs` in order: each may be an ament prefix holding
    /// `share/<pkg>/msg/<Type>.msg` (and `srv/<Service>.srv`, `action/<Action>.action`), or a
    /// directory holding `<pkg>/msg/<Type>.msg` directly (tried in that order within one
    /// directory). Each type is looked up on its own: the first directory that has its file
    /// wins.
    pub fn new(dirs: Vec<PathBuf>) -> Self {
        Self { dirs, texts: None }
    }

    /// Definitions built from texts instead of files: `texts` maps a type's file, as a
    /// path relative to `root` such as `std_msgs/msg/String.msg`, to its contents; `root`
    /// names where they came from in error messages. Nothing is read from disk.
    pub fn from_texts(root: PathBuf, texts: impl IntoIterator<Item = (PathBuf, String)>) -> Self {
        let texts = texts
            .into_iter()
            .map(|(path, text)| (root.join(path), text))
            .collect();
        Self {
            dirs: vec![root],
            texts: Some(texts),
        }
    }

    /// `dirs` followed by every prefix of the `AMENT_PREFIX_PATH` environment variable (see
    /// [`with_ament_prefix_path_value`](Self::with_ament_prefix_path_value)).
    pub fn with_ament_prefix_path(dirs: Vec<PathBuf>) -> Self {
        Self::with_ament_prefix_path_value(dirs, std::env::var_os("AMENT_PREFIX_PATH").as_deref())
    }

    /// `dirs` followed by every prefix in `ament_prefix_path`, a value of the
    /// `AMENT_PREFIX_PATH` variable (`:`-separated, `;` on Windows; empty entries skipped),
    /// or `dirs` alone for `None`.
    pub fn with_ament_prefix_path_value(
        mut dirs: Vec<PathBuf>,
        ament_prefix_path: Option<&OsStr>,
    ) -> Self {
        if let Some(value) = ament_prefix_path {
            dirs.extend(std::env::split_paths(value).filter(|p| !p.as_os_str().is_empty()));
        }
        Self::new(dirs)
    }

    /// The directories searched, in order.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The concatenated definition of `ros_type` as rosbag2 stores it with schema encoding
    /// `ros2msg` (see the [module docs](self) for the format), or why it cannot be built: the
    /// name is not a message type's, the type or a type it references has no file, a file
    /// cannot be read, a `.srv` or `.action` file does not have its `---` lines, or a line is
    /// malformed.
    ///
    /// `ros_type` is a message (`"std_msgs/msg/String"` or `"std_msgs/String"`), or a type
    /// generated from a service or action: `"example_interfaces/srv/AddTwoInts_Event"`
    /// (also `_Request`, `_Response`), `"example_interfaces/action/Fibonacci_FeedbackMessage"`
    /// (also `_Goal`, `_Result`, `_Feedback`, `_SendGoal_Request`, `_SendGoal_Response`,
    /// `_SendGoal_Event`, `_GetResult_Request`, `_GetResult_Response`, `_GetResult_Event`).
    pub fn definition(&self, ros_type: &str) -> Result<String, DefinitionError> {
        let (kind, root) =
            parse_type_name(ros_type).ok_or_else(|| DefinitionError::InvalidTypeName {
                ros_type: ros_type.to_owned(),
            })?;
        let located = self
            .locate(kind, &root)
            .ok_or_else(|| DefinitionError::NotFound {
                ros_type: ros_type.to_owned(),
                searched: self.dirs.clone(),
            })?;
        let mut seen = HashSet::from([root.clone()]);
        let mut out = String::new();
        self.append(ros_type, &root, &located, &mut seen, &mut out)?;
        Ok(out)
    }

    /// The first candidate file `<pkg>/<kind>/<stem>.<kind>` that exists.
    fn find(&self, kind: Kind, package: &str, stem: &str) -> Option<PathBuf> {
        let file_name = format!("{stem}.{}", kind.dir());
        self.dirs
            .iter()
            .flat_map(|dir| [dir.join("share").join(package), dir.join(package)])
            .map(|package_dir| package_dir.join(kind.dir()).join(&file_name))
            .find(|candidate| match &self.texts {
                Some(texts) => texts.contains_key(candidate),
                None => candidate.is_file(),
            })
    }

    /// The file of `msg_type` as a type of `kind`: its `.msg` file, or the `.srv` or
    /// `.action` file it is generated from.
    fn locate(&self, kind: Kind, msg_type: &MsgType) -> Option<Located> {
        let (stem, part) = match kind {
            Kind::Msg => (msg_type.name.as_str(), None),
            Kind::Srv | Kind::Action => {
                let (stem, part) = Part::parse(kind, &msg_type.name)?;
                (stem, Some((part, stem.to_owned())))
            }
        };
        let file = self.find(kind, &msg_type.package, stem)?;
        Some(Located { file, kind, part })
    }

    /// The file of a referenced type: its `.msg` file, else the `.srv`, else the `.action`
    /// file it is generated from.
    fn locate_dependency(&self, msg_type: &MsgType) -> Option<Located> {
        [Kind::Msg, Kind::Srv, Kind::Action]
            .into_iter()
            .find_map(|kind| self.locate(kind, msg_type))
    }

    /// The text of `msg_type`, found at `located`, and where its lines come from.
    fn text(
        &self,
        root: &str,
        msg_type: &MsgType,
        located: &Located,
    ) -> Result<(String, Origin), DefinitionError> {
        let file = &located.file;
        let text = match &self.texts {
            Some(texts) => texts
                .get(file)
                .cloned()
                .ok_or_else(|| std::io::ErrorKind::NotFound.into()),
            None => std::fs::read_to_string(file),
        };
        let text = text.map_err(|source| DefinitionError::Read {
            ros_type: root.to_owned(),
            file: file.to_owned(),
            source,
        })?;
        let Some((part, stem)) = &located.part else {
            return Ok((text, Origin::File { first_line: 1 }));
        };
        let kind = located.kind;
        // Checked for generated parts too: rosidl refuses the whole file. The section
        // indices of `kind`'s parts are below `kind.sections()`.
        let sections = generated::sections(&text);
        if sections.len() != kind.sections() {
            return Err(DefinitionError::Separators {
                ros_type: root.to_owned(),
                file: file.to_owned(),
                expected: kind.sections() - 1,
                found: sections.len() - 1,
            });
        }
        Ok(match part.source(&msg_type.package, stem) {
            Source::Section(index) => {
                let (section, first_line) = sections[index];
                (section.to_owned(), Origin::File { first_line })
            }
            Source::Generated(generated) => (generated, Origin::Generated),
        })
    }

    /// Appends the text of `msg_type` (found at `located`) and, depth-first, those of the
    /// types it references that are not in `seen` yet.
    fn append(
        &self,
        root: &str,
        msg_type: &MsgType,
        located: &Located,
        seen: &mut HashSet<MsgType>,
        out: &mut String,
    ) -> Result<(), DefinitionError> {
        let (text, origin) = self.text(root, msg_type, located)?;
        let dependencies = self.dependencies(root, msg_type, located, &origin, &text)?;
        out.push_str(&text);
        for (name, (dependency, line)) in dependencies {
            if !seen.insert(dependency.clone()) {
                continue;
            }
            let dependency_located =
                self.locate_dependency(&dependency)
                    .ok_or_else(|| match origin {
                        Origin::File { .. } => DefinitionError::DependencyNotFound {
                            ros_type: root.to_owned(),
                            dependency: name.clone(),
                            file: located.file.clone(),
                            line,
                            searched: self.dirs.clone(),
                        },
                        Origin::Generated => DefinitionError::GeneratedDependencyNotFound {
                            ros_type: root.to_owned(),
                            dependency: name.clone(),
                            generated: msg_type.to_string(),
                            file: located.file.clone(),
                            searched: self.dirs.clone(),
                        },
                    })?;
            out.push('\n');
            out.push_str(SEPARATOR);
            out.push_str("\nMSG: ");
            out.push_str(&name);
            out.push('\n');
            self.append(root, &dependency, &dependency_located, seen, out)?;
        }
        Ok(())
    }

    /// The non-builtin types the text of `msg_type` references, each with the number of the
    /// line (in its file) that first does.
    fn dependencies(
        &self,
        root: &str,
        msg_type: &MsgType,
        located: &Located,
        origin: &Origin,
        text: &str,
    ) -> Result<Dependencies, DefinitionError> {
        let mut dependencies = Dependencies::new();
        for (index, line) in text.lines().enumerate() {
            let line_number = match origin {
                Origin::File { first_line } => first_line + index,
                Origin::Generated => index + 1,
            };
            let malformed = |reason: String| DefinitionError::Malformed {
                ros_type: root.to_owned(),
                file: located.file.clone(),
                line: line_number,
                text: line.to_owned(),
                reason: match origin {
                    Origin::File { .. } => reason,
                    Origin::Generated => {
                        format!("in the text generated for `{msg_type}`: {reason}")
                    }
                },
            };
            let Some(type_token) = field_type(line).map_err(malformed)? else {
                continue;
            };
            let dependency = match referenced_type(type_token).map_err(malformed)? {
                Reference::Builtin => continue,
                Reference::Qualified(package, name) => MsgType::new(package, name),
                Reference::Bare(name) => self.resolve_bare(msg_type, name),
            };
            dependencies
                .entry(dependency.to_string())
                .or_insert((dependency, line_number));
        }
        Ok(dependencies)
    }

    /// A type named without package in a file of `context`'s package: that package's, except
    /// a `Header` that package does not have, which is `std_msgs/Header` when that exists.
    fn resolve_bare(&self, context: &MsgType, name: &str) -> MsgType {
        let same_package = MsgType::new(&context.package, name);
        let has_msg = |msg_type: &MsgType| self.locate(Kind::Msg, msg_type).is_some();
        if name == "Header" && context.package != "std_msgs" && !has_msg(&same_package) {
            let std_header = MsgType::new("std_msgs", "Header");
            if has_msg(&std_header) {
                return std_header;
            }
        }
        same_package
    }
}

/// A type name [`MessageDefinitions::definition`] accepts, with the kind of file its text
/// comes from: `pkg/msg/Type` or `pkg/Type` (a `.msg`); `pkg/srv/S_Request` etc. (a `.srv`);
/// `pkg/action/A_Goal` etc. (an `.action`).
fn parse_type_name(ros_type: &str) -> Option<(Kind, MsgType)> {
    let parts: Vec<&str> = ros_type.split('/').collect();
    let (package, kind, name) = match parts[..] {
        [package, name] | [package, "msg", name] => (package, Kind::Msg, name),
        [package, "srv", name] => (package, Kind::Srv, name),
        [package, "action", name] => (package, Kind::Action, name),
        _ => return None,
    };
    let valid = is_identifier(package)
        && is_identifier(name)
        && (kind == Kind::Msg || Part::parse(kind, name).is_some());
    valid.then(|| (kind, MsgType::new(package, name)))
}

/// The type word of a field or constant line (`type name`, `type name default`,
/// `type NAME=value`, each possibly followed by a `#` comment), or `None` for a blank or
/// comment-only line.
fn field_type(line: &str) -> Result<Option<&str>, String> {
    let content = line.split('#').next().unwrap_or_default().trim();
    if content.is_empty() {
        return Ok(None);
    }
    match content.split_once(char::is_whitespace) {
        Some((type_token, _name_and_value)) => Ok(Some(type_token)),
        None => Err("expected `type name`, `type name default` or `type NAME=value`".to_owned()),
    }
}

/// What a field's type word refers to.
enum Reference<'a> {
    /// A builtin type, with no `.msg` file.
    Builtin,
    /// `pkg/Type`.
    Qualified(&'a str, &'a str),
    /// `Type`, in the package of the file that names it.
    Bare(&'a str),
}

/// Parses a type word: `T`, `T[]`, `T[N]`, `T[<=N]`, `string<=N`, `wstring<=N` (also as array
/// elements) for `T` builtin, `Type` or `pkg/Type`.
fn referenced_type(type_token: &str) -> Result<Reference<'_>, String> {
    let mut base = type_token;
    if let Some(open) = base.find('[') {
        let bound = base[open + 1..]
            .strip_suffix(']')
            .ok_or_else(|| format!("array type `{type_token}` does not end with `]`"))?;
        if !(bound.is_empty() || is_number(bound.strip_prefix("<=").unwrap_or(bound))) {
            return Err(format!(
                "array bound `[{bound}]` is not `[]`, `[N]` or `[<=N]`"
            ));
        }
        base = &base[..open];
    }
    if let Some((string, bound)) = base.split_once("<=") {
        if !matches!(string, "string" | "wstring") {
            return Err(format!(
                "`{base}`: only `string` and `wstring` take an upper bound"
            ));
        }
        if !is_number(bound) {
            return Err(format!("`{base}`: string bound `{bound}` is not a number"));
        }
        return Ok(Reference::Builtin);
    }
    if BUILTIN_TYPES.contains(&base) {
        return Ok(Reference::Builtin);
    }
    match base.split_once('/') {
        None if is_identifier(base) => Ok(Reference::Bare(base)),
        Some((package, name)) if is_identifier(package) && is_identifier(name) => {
            Ok(Reference::Qualified(package, name))
        }
        _ => Err(format!(
            "`{base}` is not a builtin type, `Type` or `pkg/Type`"
        )),
    }
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests;
