//! How [`DefinitionError`](super::DefinitionError) names the files it looked for and where.

use std::fmt;
use std::path::PathBuf;

use super::generated::{Kind, Part};
use super::parse_type_name;

/// The kinds of file a type asked for is looked up in (none for an invalid name).
pub(super) fn root_kinds(ros_type: &str) -> Vec<Kind> {
    parse_type_name(ros_type)
        .map(|(kind, _)| vec![kind])
        .unwrap_or_default()
}

/// The kinds of file a referenced type `pkg/Name` is looked up in, in order: `.msg`, then
/// `.srv` and `.action` where `Name` has one of their suffixes.
pub(super) fn dependency_kinds(dependency: &str) -> Vec<Kind> {
    let name = dependency.rsplit('/').next().unwrap_or_default();
    [Kind::Msg, Kind::Srv, Kind::Action]
        .into_iter()
        .filter(|&kind| kind == Kind::Msg || Part::parse(kind, name).is_some())
        .collect()
}

/// The files looked for, for error messages: `.msg file`, `.msg or .srv file`, ….
pub(super) struct Files<'a>(pub &'a [Kind]);

impl fmt::Display for Files<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, kind) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == self.0.len() { " or " } else { ", " })?;
            }
            write!(f, ".{}", kind.dir())?;
        }
        f.write_str(" file")
    }
}

/// The directories searched and the files looked for there, for error messages.
pub(super) struct Searched<'a>(pub &'a [PathBuf], pub &'a [Kind]);

impl fmt::Display for Searched<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("no directories to search (is AMENT_PREFIX_PATH set?)");
        }
        f.write_str("looked for ")?;
        for (i, kind) in self.1.iter().enumerate() {
            if i > 0 {
                f.write_str(", then ")?;
            }
            let (dir, file) = (kind.dir(), kind.placeholder());
            write!(
                f,
                "share/<pkg>/{dir}/<{file}>.{dir} and <pkg>/{dir}/<{file}>.{dir}"
            )?;
        }
        f.write_str(" in ")?;
        for (i, dir) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", dir.display())?;
        }
        Ok(())
    }
}
