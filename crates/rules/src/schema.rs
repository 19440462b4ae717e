//! The `ros2msg` schema of a channel, as recd and rosbag2 write it: the main type's `.msg`
//! text, then for each type it depends on a line of `=`, a line `MSG: pkg/Type` (or
//! `pkg/msg/Type`) and that type's text.
//!
//! A field line is `TYPE NAME` with an optional default value after it (ignored); a
//! constant (`int8 FOO=3`) is ignored, as are comments and blank lines. Types are the
//! rosidl primitives, bounded strings (`string<=N`), `time` and `duration` (the ROS 1
//! compatibility names of `builtin_interfaces/Time` and `Duration`), and message types:
//! `Type` in the package of the type that names it (a bare `Header` not defined there is
//! `std_msgs/Header`), `pkg/Type` or `pkg/msg/Type`. Any of them may be a fixed array
//! `T[N]`, a sequence `T[]` or a bounded sequence `T[<=N]`. A type with no fields gets the
//! one `uint8` member rosidl generates for it, as its CDR carries that byte.

use std::collections::HashMap;

/// A primitive type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prim {
    Bool,
    Byte,
    Char,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    Str,
    WStr,
}

impl Prim {
    fn parse(name: &str) -> Option<Prim> {
        Some(match name {
            "bool" => Prim::Bool,
            "byte" => Prim::Byte,
            "char" => Prim::Char,
            "int8" => Prim::I8,
            "uint8" => Prim::U8,
            "int16" => Prim::I16,
            "uint16" => Prim::U16,
            "int32" => Prim::I32,
            "uint32" => Prim::U32,
            "int64" => Prim::I64,
            "uint64" => Prim::U64,
            "float32" => Prim::F32,
            "float64" => Prim::F64,
            "string" => Prim::Str,
            "wstring" => Prim::WStr,
            _ => return None,
        })
    }

    /// Its `.msg` name.
    pub fn name(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::Byte => "byte",
            Prim::Char => "char",
            Prim::I8 => "int8",
            Prim::U8 => "uint8",
            Prim::I16 => "int16",
            Prim::U16 => "uint16",
            Prim::I32 => "int32",
            Prim::U32 => "uint32",
            Prim::I64 => "int64",
            Prim::U64 => "uint64",
            Prim::F32 => "float32",
            Prim::F64 => "float64",
            Prim::Str => "string",
            Prim::WStr => "wstring",
        }
    }

    /// Its size in CDR (and alignment), `None` for strings.
    pub fn size(self) -> Option<usize> {
        Some(match self {
            Prim::Bool | Prim::Byte | Prim::Char | Prim::I8 | Prim::U8 => 1,
            Prim::I16 | Prim::U16 => 2,
            Prim::I32 | Prim::U32 | Prim::F32 => 4,
            Prim::I64 | Prim::U64 | Prim::F64 => 8,
            Prim::Str | Prim::WStr => return None,
        })
    }
}

/// The element type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Base {
    Prim(Prim),
    /// A message type: its index in [`Schema::types`].
    Msg(usize),
}

/// Single value, fixed array or sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Single,
    Array(usize),
    Sequence,
}

/// One field of a message type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldDef {
    pub name: String,
    pub base: Base,
    pub shape: Shape,
    /// The type as written, for messages (`float64[3]`).
    pub written: String,
}

/// One message type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MsgDef {
    /// `pkg/Type`.
    pub name: String,
    pub fields: Vec<FieldDef>,
}

impl MsgDef {
    /// `Type` of `pkg/Type`.
    pub fn short_name(&self) -> &str {
        self.name.rsplit('/').next().unwrap_or(&self.name)
    }
}

/// A parsed schema: the main type (index 0) and the types it reaches.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Schema {
    pub types: Vec<MsgDef>,
}

/// `pkg/msg/Type` → `pkg/Type`.
fn normalize(name: &str) -> String {
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        [pkg, "msg", ty] => format!("{pkg}/{ty}"),
        _ => name.to_owned(),
    }
}

fn package(name: &str) -> &str {
    name.split('/').next().unwrap_or("")
}

/// The texts of the builtin compatibility types, used where the schema lacks them.
const TIME: &str = "int32 sec\nuint32 nanosec\n";

struct Parser<'a> {
    /// Section texts by normalized type name.
    sections: HashMap<String, &'a str>,
    types: Vec<MsgDef>,
    index: HashMap<String, usize>,
    depth: usize,
}

impl Schema {
    /// Parses the definition of `type_name`.
    pub fn parse(type_name: &str, definition: &str) -> Result<Schema, String> {
        let root = normalize(type_name.trim());
        let mut sections = HashMap::new();
        let mut current = root.clone();
        let mut start = 0;
        let mut lines = definition.split_inclusive('\n').peekable();
        let mut offset = 0;
        while let Some(line) = lines.next() {
            let trimmed = line.trim();
            if trimmed.len() >= 3 && trimmed.bytes().all(|b| b == b'=') {
                sections.insert(current.clone(), &definition[start..offset]);
                offset += line.len();
                let header = lines.next().unwrap_or("");
                offset += header.len();
                let Some(name) = header.trim().strip_prefix("MSG:") else {
                    return Err(format!(
                        "a line of = is followed by {:?}, not MSG: pkg/Type",
                        header.trim()
                    ));
                };
                current = normalize(name.trim());
                start = offset;
                continue;
            }
            offset += line.len();
        }
        sections.insert(current, &definition[start..]);
        let mut parser = Parser {
            sections,
            types: Vec::new(),
            index: HashMap::new(),
            depth: 0,
        };
        parser.resolve(&root)?;
        Ok(Schema {
            types: parser.types,
        })
    }
}

impl Parser<'_> {
    /// The index of type `name` (normalized), parsing it the first time.
    fn resolve(&mut self, name: &str) -> Result<usize, String> {
        if let Some(&index) = self.index.get(name) {
            return Ok(index);
        }
        let text = match (self.sections.get(name), name) {
            (Some(text), _) => *text,
            (None, "builtin_interfaces/Time" | "builtin_interfaces/Duration") => TIME,
            (None, _) => return Err(format!("the type {name} is used but not defined")),
        };
        self.depth += 1;
        if self.depth > 64 {
            return Err(format!("the type {name} nests too deeply (a cycle?)"));
        }
        let index = self.types.len();
        self.types.push(MsgDef {
            name: name.to_owned(),
            fields: Vec::new(),
        });
        self.index.insert(name.to_owned(), index);
        let mut fields = Vec::new();
        for line in text.lines() {
            if let Some(field) = self.field(name, line)? {
                fields.push(field);
            }
        }
        if fields.is_empty() {
            fields.push(FieldDef {
                name: "structure_needs_at_least_one_member".to_owned(),
                base: Base::Prim(Prim::U8),
                shape: Shape::Single,
                written: "uint8".to_owned(),
            });
        }
        self.types[index].fields = fields;
        self.depth -= 1;
        Ok(index)
    }

    /// Parses one line of type `owner`: a field, or `None` for a blank, comment or
    /// constant line.
    fn field(&mut self, owner: &str, line: &str) -> Result<Option<FieldDef>, String> {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        let (Some(written), Some(name)) = (words.next(), words.next()) else {
            if line.is_empty() {
                return Ok(None);
            }
            return Err(format!("{owner}: cannot read the line {line:?}"));
        };
        if name.contains('=') || words.next().is_some_and(|w| w.starts_with('=')) {
            return Ok(None);
        }
        let (ty, shape) = match written.strip_suffix(']') {
            Some(rest) => {
                let open = rest
                    .rfind('[')
                    .ok_or_else(|| format!("{owner}: cannot read the type {written:?}"))?;
                let inside = &rest[open + 1..];
                let shape = if inside.is_empty() || inside.starts_with("<=") {
                    Shape::Sequence
                } else {
                    Shape::Array(inside.parse().map_err(|_| {
                        format!("{owner}: cannot read the array size of {written:?}")
                    })?)
                };
                (&rest[..open], shape)
            }
            None => (written, Shape::Single),
        };
        let ty = ty.split("<=").next().unwrap_or(ty);
        let base = match Prim::parse(ty) {
            Some(prim) => Base::Prim(prim),
            None => Base::Msg(self.resolve_type(owner, ty)?),
        };
        Ok(Some(FieldDef {
            name: name.to_owned(),
            base,
            shape,
            written: written.to_owned(),
        }))
    }

    fn resolve_type(&mut self, owner: &str, ty: &str) -> Result<usize, String> {
        let full = match ty {
            "time" => "builtin_interfaces/Time".to_owned(),
            "duration" => "builtin_interfaces/Duration".to_owned(),
            _ if ty.contains('/') => normalize(ty),
            _ => {
                let local = format!("{}/{ty}", package(owner));
                if ty == "Header" && !self.sections.contains_key(&local) {
                    "std_msgs/Header".to_owned()
                } else {
                    local
                }
            }
        };
        self.resolve(&full)
    }
}
