//! A synthetic message for checking a condition at compile time: every read field zero,
//! false or the empty string, every sequence with one element (so that macro bodies over
//! it run), every fixed array with its elements.

use std::collections::HashMap;

use cel::common::types::{CelBool, CelDouble, CelMapKey, CelString};

use crate::decode::{int_value, list_value, map_value, Boxed};
use crate::fields::FieldKind;
use crate::plan::{Elem, MsgPlan, Plan, Step};
use crate::schema::{Prim, Shape};

/// The synthetic message of `plan`.
pub(crate) fn synthetic(plan: &Plan) -> Boxed {
    match plan {
        Plan::Cdr(msg) => message(msg),
        Plan::Fields { fields, .. } => map_value(
            fields
                .iter()
                .map(|(name, spec)| (CelMapKey::from(name.clone()), declared(spec.kind)))
                .collect(),
        ),
    }
}

fn message(plan: &MsgPlan) -> Boxed {
    let entries: HashMap<_, _> = plan
        .steps
        .iter()
        .filter_map(|step| Some((CelMapKey::from(step.key.clone()?), field(step))))
        .collect();
    map_value(entries)
}

fn field(step: &Step) -> Boxed {
    let n = match step.shape {
        Shape::Single => return element(&step.elem),
        Shape::Array(n) => n,
        Shape::Sequence => 1,
    };
    list_value((0..n).map(|_| element(&step.elem)).collect())
}

fn element(elem: &Elem) -> Boxed {
    match elem {
        Elem::Msg(plan) => message(plan),
        Elem::Prim(Prim::Bool) => Box::new(CelBool::from(false)),
        Elem::Prim(Prim::F32 | Prim::F64) => Box::new(CelDouble::from(0.0)),
        Elem::Prim(Prim::Str | Prim::WStr) => Box::new(CelString::from(String::new())),
        Elem::Prim(_) => int_value(0),
    }
}

fn declared(kind: FieldKind) -> Boxed {
    match kind {
        FieldKind::Bool => Box::new(CelBool::from(false)),
        FieldKind::F32 | FieldKind::F64 => Box::new(CelDouble::from(0.0)),
        _ => int_value(0),
    }
}
