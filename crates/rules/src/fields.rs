//! Declared fields of an iceoryx2 payload, which carries no schema: `speed = "f32@8"`
//! reads a little-endian `f32` at byte 8 of the payload (the user header is not counted).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The kinds a declared field may have.
pub const FIELD_KINDS: &str = "bool, u8, i8, u16, i16, u32, i32, u64, i64, f32, f64";

/// The type of a declared field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// One byte, true when not zero.
    Bool,
    /// `u8`.
    U8,
    /// `i8`.
    I8,
    /// `u16`.
    U16,
    /// `i16`.
    I16,
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `u64`.
    U64,
    /// `i64`.
    I64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl FieldKind {
    /// Its size in bytes.
    pub fn size(self) -> usize {
        match self {
            FieldKind::Bool | FieldKind::U8 | FieldKind::I8 => 1,
            FieldKind::U16 | FieldKind::I16 => 2,
            FieldKind::U32 | FieldKind::I32 | FieldKind::F32 => 4,
            FieldKind::U64 | FieldKind::I64 | FieldKind::F64 => 8,
        }
    }

    /// Its name as written in a spec.
    pub fn name(self) -> &'static str {
        match self {
            FieldKind::Bool => "bool",
            FieldKind::U8 => "u8",
            FieldKind::I8 => "i8",
            FieldKind::U16 => "u16",
            FieldKind::I16 => "i16",
            FieldKind::U32 => "u32",
            FieldKind::I32 => "i32",
            FieldKind::U64 => "u64",
            FieldKind::I64 => "i64",
            FieldKind::F32 => "f32",
            FieldKind::F64 => "f64",
        }
    }

    fn parse(name: &str) -> Option<FieldKind> {
        [
            FieldKind::Bool,
            FieldKind::U8,
            FieldKind::I8,
            FieldKind::U16,
            FieldKind::I16,
            FieldKind::U32,
            FieldKind::I32,
            FieldKind::U64,
            FieldKind::I64,
            FieldKind::F32,
            FieldKind::F64,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }
}

/// One declared field: its kind and its byte offset in the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// Its type.
    pub kind: FieldKind,
    /// Its offset from the start of the payload, in bytes.
    pub offset: usize,
}

impl FromStr for FieldSpec {
    type Err = String;

    /// Parses `KIND@OFFSET`, e.g. `f32@8`.
    fn from_str(spec: &str) -> Result<FieldSpec, String> {
        let bad = || {
            format!(
                "{spec:?} is not a field spec; write KIND@OFFSET, e.g. \"f32@8\", \
                 with KIND one of {FIELD_KINDS} and OFFSET the byte offset in the payload"
            )
        };
        let (kind, offset) = spec.trim().split_once('@').ok_or_else(bad)?;
        let kind = FieldKind::parse(kind.trim()).ok_or_else(bad)?;
        let offset = offset.trim().parse().map_err(|_| bad())?;
        Ok(FieldSpec { kind, offset })
    }
}

impl fmt::Display for FieldSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.kind.name(), self.offset)
    }
}

/// The declared fields of an iceoryx2 topic, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fields {
    fields: BTreeMap<String, FieldSpec>,
}

impl Fields {
    /// Parses every spec of a `fields = { name = "kind@offset" }` table; an error names the
    /// field and says what is wrong with its spec.
    pub fn parse(specs: &BTreeMap<String, String>) -> Result<Fields, (String, String)> {
        let mut fields = BTreeMap::new();
        for (name, spec) in specs {
            let parsed = spec.parse().map_err(|e| (name.clone(), e))?;
            fields.insert(name.clone(), parsed);
        }
        Ok(Fields { fields })
    }

    /// The field `name`.
    pub fn get(&self, name: &str) -> Option<&FieldSpec> {
        self.fields.get(name)
    }

    /// The fields, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &FieldSpec)> {
        self.fields.iter().map(|(n, s)| (n.as_str(), s))
    }
}

impl FromIterator<(String, FieldSpec)> for Fields {
    fn from_iter<I: IntoIterator<Item = (String, FieldSpec)>>(iter: I) -> Self {
        Fields {
            fields: iter.into_iter().collect(),
        }
    }
}
