//! The decoding plan: from a schema and the paths an expression reads, which fields to
//! decode into CEL values, which to skip, and where to stop.
//!
//! A read field of message type becomes a map of only its read fields; an unread field is
//! skipped without building a value (a fixed-size primitive or an array of them by size
//! and alignment, strings and sequences by their length, messages field by field). The
//! top-level message, and a message that is the last read single field of it, stop after
//! their last read field: nothing after it is looked at.

use std::collections::BTreeMap;

use crate::error::CompileError;
use crate::expression::ReadTree;
use crate::fields::{FieldSpec, Fields};
use crate::schema::{Base, Prim, Schema, Shape};

/// What to do with one field, in order.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    /// The name to decode it under; `None`: skip it.
    pub key: Option<String>,
    pub elem: Elem,
    pub shape: Shape,
}

/// The element of a step.
#[derive(Debug, Clone)]
pub(crate) enum Elem {
    Prim(Prim),
    Msg(MsgPlan),
}

/// The steps of one message, possibly cut after the last read one.
#[derive(Debug, Clone, Default)]
pub(crate) struct MsgPlan {
    pub steps: Vec<Step>,
}

/// A whole decoding plan.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    /// A ROS 2 CDR message.
    Cdr(MsgPlan),
    /// Declared fields of an iceoryx2 payload after a user header.
    Fields {
        fields: Vec<(String, FieldSpec)>,
        user_header_size: usize,
    },
}

/// Everything below is read.
static WHOLE: ReadTree = ReadTree {
    whole: true,
    children: BTreeMap::new(),
};

fn reads_all(tree: &ReadTree) -> bool {
    tree.whole || tree.children.is_empty()
}

/// Builds the plan of a ROS 2 message.
pub(crate) fn cdr_plan(schema: &Schema, tree: &ReadTree) -> Result<MsgPlan, CompileError> {
    build(schema, 0, Some(tree), true, "msg", 0)
}

fn build(
    schema: &Schema,
    ty: usize,
    tree: Option<&ReadTree>,
    tail: bool,
    path: &str,
    depth: usize,
) -> Result<MsgPlan, CompileError> {
    let def = &schema.types[ty];
    if depth > 64 {
        return Err(CompileError::Schema {
            type_name: def.name.clone(),
            problem: "it nests too deeply (a cycle?)".to_owned(),
        });
    }
    let child_of = |name: &str| -> Option<&ReadTree> {
        match tree {
            None => None,
            Some(t) if reads_all(t) => Some(&WHOLE),
            Some(t) => t.children.get(name),
        }
    };
    if let Some(t) = tree.filter(|t| !reads_all(t)) {
        if let Some(missing) = t
            .children
            .keys()
            .find(|name| !def.fields.iter().any(|f| &f.name == *name))
        {
            return Err(CompileError::NoField {
                type_name: def.short_name().to_owned(),
                field: missing.clone(),
                available: def
                    .fields
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    let last_read = def.fields.iter().rposition(|f| child_of(&f.name).is_some());
    let mut steps = Vec::with_capacity(def.fields.len());
    for (i, field) in def.fields.iter().enumerate() {
        let child = child_of(&field.name);
        let field_path = format!("{path}.{}", field.name);
        let elem = match field.base {
            Base::Prim(prim) => {
                if let Some(c) = child.filter(|c| !reads_all(c)) {
                    return Err(CompileError::NotAMessage {
                        path: field_path,
                        kind: field.written.clone(),
                        field: c.children.keys().next().cloned().unwrap_or_default(),
                    });
                }
                Elem::Prim(prim)
            }
            Base::Msg(sub) => {
                let tail = tail && Some(i) == last_read && field.shape == Shape::Single;
                Elem::Msg(build(schema, sub, child, tail, &field_path, depth + 1)?)
            }
        };
        steps.push(Step {
            key: child.map(|_| field.name.clone()),
            elem,
            shape: field.shape,
        });
    }
    if tail {
        steps.truncate(last_read.map_or(0, |i| i + 1));
    }
    Ok(MsgPlan { steps })
}

/// Builds the plan of declared fields.
pub(crate) fn fields_plan(
    fields: &Fields,
    user_header_size: usize,
    tree: &ReadTree,
) -> Result<Plan, CompileError> {
    let mut read = Vec::new();
    if reads_all(tree) {
        read.extend(fields.iter().map(|(n, s)| (n.to_owned(), *s)));
    } else {
        for (name, child) in &tree.children {
            let Some(spec) = fields.get(name) else {
                return Err(CompileError::NoField {
                    type_name: "the declared fields".to_owned(),
                    field: name.clone(),
                    available: fields.iter().map(|(n, _)| n).collect::<Vec<_>>().join(", "),
                });
            };
            if !reads_all(child) {
                return Err(CompileError::NotAMessage {
                    path: format!("msg.{name}"),
                    kind: spec.kind.name().to_owned(),
                    field: child.children.keys().next().cloned().unwrap_or_default(),
                });
            }
            read.push((name.clone(), *spec));
        }
    }
    Ok(Plan::Fields {
        fields: read,
        user_header_size,
    })
}
