//! A type as a node describes it over the network: type_description_interfaces'
//! `TypeDescription` and `TypeSource` (REP-2011, ROS 2 Iron and later), the RIHS01 type hash
//! computed from the description, and the `ros2msg` definition built from the sources.
//!
//! A node serves `~/get_type_description` (`type_description_interfaces/srv/
//! GetTypeDescription`) for the types its endpoints use. Its reply holds the type's
//! description (fields of the type and of every type it references) and, when asked, the
//! source files they were generated from. The structs here are those messages, field for
//! field in IDL order, so that they serialize as CDR the way the service expects.
//!
//! The hash is rosidl_generator_type_description's `calculate_type_hash` (the same as rcl's
//! `rcl_calculate_type_hash`): SHA-256 over the description as JSON without the fields'
//! default values, written the way Python's `json.dumps(…, separators=(', ', ': '),
//! ensure_ascii=True)` writes it, keys in IDL order; `RIHS01_` and lowercase hex.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::msgdef::{DefinitionError, MessageDefinitions};

/// A field's type (`type_description_interfaces/msg/FieldType`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldType {
    /// The type's id (`FIELD_TYPE_*` constants: 1 nested, 17 string, …, +48 bounded
    /// sequence, …).
    pub type_id: u8,
    /// The array or bounded sequence's length, 0 otherwise.
    pub capacity: u64,
    /// The bounded string's upper bound, 0 otherwise.
    pub string_capacity: u64,
    /// The nested type's name (`pkg/msg/Type`), empty otherwise.
    pub nested_type_name: String,
}

/// One field of a type (`type_description_interfaces/msg/Field`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// Its type.
    pub field_type: FieldType,
    /// Its default value, as text (not part of the hash).
    pub default_value: String,
}

/// One type, without the types it references (`IndividualTypeDescription`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndividualTypeDescription {
    /// The type's name, `pkg/msg/Type`.
    pub type_name: String,
    /// Its fields, in order.
    pub fields: Vec<Field>,
}

/// A type and every type it references (`type_description_interfaces/msg/TypeDescription`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeDescription {
    /// The type itself.
    pub type_description: IndividualTypeDescription,
    /// The types it references, directly or not (sorted by name, as rcl sends them).
    pub referenced_type_descriptions: Vec<IndividualTypeDescription>,
}

/// A file a type was generated from (`type_description_interfaces/msg/TypeSource`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeSource {
    /// The type's name, `pkg/msg/Type`.
    pub type_name: String,
    /// The file's kind: `msg`, `srv`, `action`, `idl`, or empty when there is none.
    pub encoding: String,
    /// The file's contents.
    pub raw_file_contents: String,
}

/// The RIHS01 hash of `description` (`RIHS01_` and 64 lowercase hex digits), as rosidl
/// computes it at build time and rmw announces it in USER_DATA.
pub fn type_hash(description: &TypeDescription) -> String {
    let mut json = String::from("{\"type_description\": ");
    individual_json(&description.type_description, &mut json);
    json.push_str(", \"referenced_type_descriptions\": [");
    for (i, referenced) in description.referenced_type_descriptions.iter().enumerate() {
        if i > 0 {
            json.push_str(", ");
        }
        individual_json(referenced, &mut json);
    }
    json.push_str("]}");
    let digest = ring::digest::digest(&ring::digest::SHA256, json.as_bytes());
    let mut hash = String::from("RIHS01_");
    for byte in digest.as_ref() {
        hash.push_str(&format!("{byte:02x}"));
    }
    hash
}

/// One type as the hash's JSON writes it (no default values).
fn individual_json(description: &IndividualTypeDescription, out: &mut String) {
    out.push_str("{\"type_name\": ");
    json_string(&description.type_name, out);
    out.push_str(", \"fields\": [");
    for (i, field) in description.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str("{\"name\": ");
        json_string(&field.name, out);
        let t = &field.field_type;
        out.push_str(&format!(
            ", \"type\": {{\"type_id\": {}, \"capacity\": {}, \"string_capacity\": {}, \
             \"nested_type_name\": ",
            t.type_id, t.capacity, t.string_capacity
        ));
        json_string(&t.nested_type_name, out);
        out.push_str("}}");
    }
    out.push_str("]}");
}

/// A JSON string as Python's `json.dumps(ensure_ascii=True)` writes it.
fn json_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

/// Where the definitions built by [`definition_from_sources`] say their files came from.
const SOURCES_ROOT: &str = "<type sources>";

/// The `ros2msg` definition of `type_name` (`pkg/msg/Type`) built from a node's type
/// sources exactly as [`MessageDefinitions::definition`] builds it from an install tree:
/// each `msg`, `srv` or `action` source stands for its file (`pkg/msg/Type.msg`, …), given
/// back the final newline rosidl leaves out of the sources it generates, so that the text
/// is the one built from the files; other sources (`idl`, none) are ignored, and a type
/// that has only those is missing.
pub fn definition_from_sources(
    type_name: &str,
    sources: &[TypeSource],
) -> Result<String, DefinitionError> {
    let files = sources.iter().filter_map(|source| {
        let (package, kind, name) = split_type_name(&source.type_name)?;
        let file_kind = source.encoding.as_str();
        (kind == file_kind && matches!(kind, "msg" | "srv" | "action")).then(|| {
            let path = PathBuf::from(package)
                .join(kind)
                .join(format!("{name}.{kind}"));
            // rosidl's sources lose the file's final newline; a .msg file has one.
            let mut text = source.raw_file_contents.clone();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            (path, text)
        })
    });
    MessageDefinitions::from_texts(PathBuf::from(SOURCES_ROOT), files).definition(type_name)
}

/// `pkg/kind/Name` in its three parts.
fn split_type_name(type_name: &str) -> Option<(&str, &str, &str)> {
    let mut parts = type_name.split('/');
    let (package, kind, name) = (parts.next()?, parts.next()?, parts.next()?);
    parts.next().is_none().then_some((package, kind, name))
}

#[cfg(test)]
mod tests;
