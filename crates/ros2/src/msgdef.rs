//! The `ros2msg` schema text rosbag2 stores for a message type, built from `.msg` files.
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

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

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

/// Where to look for `.msg` files, and the definitions built from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageDefinitions {
    dirs: Vec<PathBuf>,
}

/// Why [`MessageDefinitions::definition`] could not build a definition. Every variant names
/// the type that was asked for; those about a file name the file.
#[derive(Debug, thiserror::Error)]
pub enum DefinitionError {
    /// The name is not `pkg/msg/Type` or `pkg/Type` (services and actions have no `.msg`).
    #[error("`{ros_type}` is not a ROS 2 message type name (`pkg/msg/Type` or `pkg/Type`)")]
    InvalidTypeName {
        /// The type asked for.
        ros_type: String,
    },
    /// No directory holds the type's `.msg` file.
    #[error("no .msg file for `{ros_type}`: {}", Searched(.searched))]
    NotFound {
        /// The type asked for.
        ros_type: String,
        /// The directories searched, in order.
        searched: Vec<PathBuf>,
    },
    /// No directory holds the `.msg` file of a type the definition references.
    #[error(
        "definition of `{ros_type}`: no .msg file for `{dependency}`, used at {}:{line}: {}",
        .file.display(), Searched(.searched)
    )]
    DependencyNotFound {
        /// The type asked for.
        ros_type: String,
        /// The referenced type that was not found, as `pkg/Type`.
        dependency: String,
        /// The `.msg` file that references it.
        file: PathBuf,
        /// The line of `file` that references it, from 1.
        line: usize,
        /// The directories searched, in order.
        searched: Vec<PathBuf>,
    },
    /// A `.msg` file could not be read (or is not UTF-8).
    #[error("definition of `{ros_type}`: cannot read {}: {source}", .file.display())]
    Read {
        /// The type asked for.
        ros_type: String,
        /// The file that could not be read.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of a `.msg` file is neither blank, a comment, a field nor a constant.
    #[error(
        "definition of `{ros_type}`: {}:{line}: malformed line {text:?}: {reason}",
        .file.display()
    )]
    Malformed {
        /// The type asked for.
        ros_type: String,
        /// The file with the malformed line.
        file: PathBuf,
        /// The malformed line's number, from 1.
        line: usize,
        /// The malformed line.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// The directories searched, for error messages.
struct Searched<'a>(&'a [PathBuf]);

impl fmt::Display for Searched<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("no directories to search (is AMENT_PREFIX_PATH set?)");
        }
        f.write_str("looked for share/<pkg>/msg/<Type>.msg and <pkg>/msg/<Type>.msg in ")?;
        for (i, dir) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", dir.display())?;
        }
        Ok(())
    }
}

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

/// The types one `.msg` file references, by `pkg/Type` name (so in rosbag2's order), each
/// with the first line that references it.
type Dependencies = BTreeMap<String, (MsgType, usize)>;

impl MessageDefinitions {
    /// Searches `dirs` in order: each may be an ament prefix holding
    /// `share/<pkg>/msg/<Type>.msg`, or a directory holding `<pkg>/msg/<Type>.msg` directly
    /// (tried in that order within one directory). Each type is looked up on its own: the
    /// first directory that has its file wins.
    pub fn new(dirs: Vec<PathBuf>) -> Self {
        Self { dirs }
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

    /// The concatenated definition of `ros_type` (`"std_msgs/msg/String"` or
    /// `"std_msgs/String"`) as rosbag2 stores it with schema encoding `ros2msg` (see the
    /// [module docs](self) for the format), or why it cannot be built: the name is not a
    /// message type's, the type or a type it references has no `.msg` file, a file cannot
    /// be read, or a line is malformed.
    pub fn definition(&self, ros_type: &str) -> Result<String, DefinitionError> {
        let root = parse_type_name(ros_type).ok_or_else(|| DefinitionError::InvalidTypeName {
            ros_type: ros_type.to_owned(),
        })?;
        let file = self.find(&root).ok_or_else(|| DefinitionError::NotFound {
            ros_type: ros_type.to_owned(),
            searched: self.dirs.clone(),
        })?;
        let mut seen = HashSet::from([root.clone()]);
        let mut out = String::new();
        self.append(ros_type, &root, &file, &mut seen, &mut out)?;
        Ok(out)
    }

    /// The `.msg` file of `msg_type`: the first candidate that is a file.
    fn find(&self, msg_type: &MsgType) -> Option<PathBuf> {
        let file_name = format!("{}.msg", msg_type.name);
        self.dirs
            .iter()
            .flat_map(|dir| {
                [
                    dir.join("share").join(&msg_type.package),
                    dir.join(&msg_type.package),
                ]
            })
            .map(|package_dir| package_dir.join("msg").join(&file_name))
            .find(|candidate| candidate.is_file())
    }

    /// Appends the text of `msg_type` (read from `file`) and, depth-first, those of the types
    /// it references that are not in `seen` yet.
    fn append(
        &self,
        root: &str,
        msg_type: &MsgType,
        file: &Path,
        seen: &mut HashSet<MsgType>,
        out: &mut String,
    ) -> Result<(), DefinitionError> {
        let text = std::fs::read_to_string(file).map_err(|source| DefinitionError::Read {
            ros_type: root.to_owned(),
            file: file.to_owned(),
            source,
        })?;
        let dependencies = self.dependencies(root, msg_type, file, &text)?;
        out.push_str(&text);
        for (name, (dependency, line)) in dependencies {
            if !seen.insert(dependency.clone()) {
                continue;
            }
            let dependency_file =
                self.find(&dependency)
                    .ok_or_else(|| DefinitionError::DependencyNotFound {
                        ros_type: root.to_owned(),
                        dependency: name.clone(),
                        file: file.to_owned(),
                        line,
                        searched: self.dirs.clone(),
                    })?;
            out.push('\n');
            out.push_str(SEPARATOR);
            out.push_str("\nMSG: ");
            out.push_str(&name);
            out.push('\n');
            self.append(root, &dependency, &dependency_file, seen, out)?;
        }
        Ok(())
    }

    /// The non-builtin types the `.msg` text of `msg_type` references.
    fn dependencies(
        &self,
        root: &str,
        msg_type: &MsgType,
        file: &Path,
        text: &str,
    ) -> Result<Dependencies, DefinitionError> {
        let mut dependencies = Dependencies::new();
        for (index, line) in text.lines().enumerate() {
            let malformed = |reason: String| DefinitionError::Malformed {
                ros_type: root.to_owned(),
                file: file.to_owned(),
                line: index + 1,
                text: line.to_owned(),
                reason,
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
                .or_insert((dependency, index + 1));
        }
        Ok(dependencies)
    }

    /// A type named without package in a file of `context`'s package: that package's, except
    /// a `Header` that package does not have, which is `std_msgs/Header` when that exists.
    fn resolve_bare(&self, context: &MsgType, name: &str) -> MsgType {
        let same_package = MsgType::new(&context.package, name);
        if name == "Header" && context.package != "std_msgs" && self.find(&same_package).is_none() {
            let std_header = MsgType::new("std_msgs", "Header");
            if self.find(&std_header).is_some() {
                return std_header;
            }
        }
        same_package
    }
}

/// `pkg/msg/Type` or `pkg/Type`.
fn parse_type_name(ros_type: &str) -> Option<MsgType> {
    let parts: Vec<&str> = ros_type.split('/').collect();
    let (package, name) = match parts[..] {
        [package, name] | [package, "msg", name] => (package, name),
        _ => return None,
    };
    (is_identifier(package) && is_identifier(name)).then(|| MsgType::new(package, name))
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
