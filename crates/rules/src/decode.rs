//! Runs a [`Plan`] over a message's bytes, building CEL values of only the read fields.
//!
//! CDR: a 4-byte encapsulation header (`00 00` big-endian, `00 01` little-endian, then two
//! option bytes), then the fields, each primitive aligned to its size counted from after
//! the header; a string is a `u32` length including its NUL and the bytes; a sequence a
//! `u32` count and the elements; a fixed array just the elements. A `wstring` is read as a
//! `u32` count of UTF-16 code units and the units (what rmw_cyclonedds and Fast-CDR 2 write).
//!
//! Every read is bounds-checked: truncated or malformed bytes give an [`EvalError`].

use std::collections::HashMap;

use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelString, CelUInt,
};
use cel::common::value::Val;

use crate::error::EvalError;
use crate::fields::FieldKind;
use crate::plan::{Elem, MsgPlan, Plan, Step};
use crate::schema::{Prim, Shape};

/// A CEL value of its own.
pub(crate) type Boxed = Box<dyn Val + 'static>;

/// The integer as CEL sees it: an `int`, or a `uint` above `i64::MAX`.
pub(crate) fn int_value(value: u64) -> Boxed {
    match i64::try_from(value) {
        Ok(v) => Box::new(CelInt::from(v)),
        Err(_) => Box::new(CelUInt::from(value)),
    }
}

pub(crate) fn map_value(entries: HashMap<CelMapKey<'static>, Boxed>) -> Boxed {
    Box::new(CelMap::from(entries))
}

pub(crate) fn list_value(items: Vec<Boxed>) -> Boxed {
    Box::new(CelList::from(items))
}

/// Decodes `bytes` with `plan` into the message's map of read fields.
pub(crate) fn decode(plan: &Plan, bytes: &[u8]) -> Result<Boxed, EvalError> {
    match plan {
        Plan::Cdr(msg) => {
            let header = bytes.get(..4).ok_or(EvalError::Truncated {
                offset: 0,
                needed: 4,
                len: bytes.len(),
            })?;
            let le = match (header[0], header[1]) {
                (0, 0) => false,
                (0, 1) => true,
                _ => {
                    return Err(EvalError::Encapsulation(u16::from_be_bytes([
                        header[0], header[1],
                    ])))
                }
            };
            let mut reader = Reader {
                buf: bytes,
                pos: 4,
                le,
            };
            reader.message(msg)
        }
        Plan::Fields {
            fields,
            user_header_size,
        } => {
            let mut entries = HashMap::with_capacity(fields.len());
            for (name, spec) in fields {
                let mut reader = Reader {
                    buf: bytes,
                    pos: user_header_size.saturating_add(spec.offset),
                    le: true,
                };
                let value = reader.declared(spec.kind)?;
                entries.insert(CelMapKey::from(name.clone()), value);
            }
            Ok(map_value(entries))
        }
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    le: bool,
}

impl<'a> Reader<'a> {
    fn align(&mut self, size: usize) {
        let rel = self.pos.saturating_sub(4);
        self.pos = self.pos.saturating_add((size - rel % size) % size);
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], EvalError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let Some(end) = end else {
            return Err(EvalError::Truncated {
                offset: self.pos,
                needed: n,
                len: self.buf.len(),
            });
        };
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], EvalError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        if !self.le {
            out.reverse();
        }
        Ok(out)
    }

    /// Reads an aligned `u32`, as lengths are.
    fn length(&mut self) -> Result<usize, EvalError> {
        self.align(4);
        let n = u32::from_le_bytes(self.fixed()?) as usize;
        Ok(n)
    }

    /// A count of elements of at least `min` bytes each, checked against what is left.
    fn count(&mut self, min: usize) -> Result<usize, EvalError> {
        let n = self.length()?;
        let left = self.buf.len().saturating_sub(self.pos);
        if n.saturating_mul(min.max(1)) > left && n > 0 {
            return Err(EvalError::Malformed(format!(
                "a sequence of {n} elements at offset {} with {left} bytes left",
                self.pos
            )));
        }
        Ok(n)
    }

    fn message(&mut self, plan: &MsgPlan) -> Result<Boxed, EvalError> {
        let mut entries = HashMap::with_capacity(plan.steps.len());
        for step in &plan.steps {
            match &step.key {
                Some(key) => {
                    let value = self.field(step)?;
                    entries.insert(CelMapKey::from(key.clone()), value);
                }
                None => self.skip(step)?,
            }
        }
        Ok(map_value(entries))
    }

    fn field(&mut self, step: &Step) -> Result<Boxed, EvalError> {
        let n = match step.shape {
            Shape::Single => return self.element(&step.elem),
            Shape::Array(n) => n,
            Shape::Sequence => self.count(min_size(&step.elem))?,
        };
        let mut items = Vec::with_capacity(n.min(self.buf.len()));
        for _ in 0..n {
            items.push(self.element(&step.elem)?);
        }
        Ok(list_value(items))
    }

    fn element(&mut self, elem: &Elem) -> Result<Boxed, EvalError> {
        match elem {
            Elem::Prim(prim) => self.prim(*prim),
            Elem::Msg(plan) => self.message(plan),
        }
    }

    fn skip(&mut self, step: &Step) -> Result<(), EvalError> {
        let n = match step.shape {
            Shape::Single => return self.skip_element(&step.elem),
            Shape::Array(n) => n,
            Shape::Sequence => self.count(min_size(&step.elem))?,
        };
        if let Elem::Prim(prim) = step.elem {
            if let Some(size) = prim.size() {
                if n > 0 {
                    self.align(size);
                }
                let total = n.checked_mul(size).ok_or_else(|| {
                    EvalError::Malformed(format!("an array of {n} {} elements", prim.name()))
                })?;
                self.take(total)?;
                return Ok(());
            }
        }
        for _ in 0..n {
            self.skip_element(&step.elem)?;
        }
        Ok(())
    }

    fn skip_element(&mut self, elem: &Elem) -> Result<(), EvalError> {
        match elem {
            Elem::Prim(Prim::Str) => {
                let n = self.length()?;
                self.take(n).map(drop)
            }
            Elem::Prim(Prim::WStr) => {
                let n = self.length()?;
                self.take(n.saturating_mul(2)).map(drop)
            }
            Elem::Prim(prim) => {
                let size = prim.size().unwrap_or(1);
                self.align(size);
                self.take(size).map(drop)
            }
            Elem::Msg(plan) => plan.steps.iter().try_for_each(|s| self.skip(s)),
        }
    }

    fn prim(&mut self, prim: Prim) -> Result<Boxed, EvalError> {
        if let Some(size) = prim.size() {
            self.align(size);
        }
        Ok(match prim {
            Prim::Bool => Box::new(CelBool::from(self.take(1)?[0] != 0)),
            Prim::Byte | Prim::Char | Prim::U8 => int_value(u64::from(self.take(1)?[0])),
            Prim::I8 => Box::new(CelInt::from(i64::from(self.take(1)?[0] as i8))),
            Prim::I16 => Box::new(CelInt::from(i64::from(i16::from_le_bytes(self.fixed()?)))),
            Prim::U16 => int_value(u64::from(u16::from_le_bytes(self.fixed()?))),
            Prim::I32 => Box::new(CelInt::from(i64::from(i32::from_le_bytes(self.fixed()?)))),
            Prim::U32 => int_value(u64::from(u32::from_le_bytes(self.fixed()?))),
            Prim::I64 => Box::new(CelInt::from(i64::from_le_bytes(self.fixed()?))),
            Prim::U64 => int_value(u64::from_le_bytes(self.fixed()?)),
            Prim::F32 => Box::new(CelDouble::from(f64::from(f32::from_le_bytes(
                self.fixed()?,
            )))),
            Prim::F64 => Box::new(CelDouble::from(f64::from_le_bytes(self.fixed()?))),
            Prim::Str => {
                let n = self.length()?;
                let bytes = self.take(n)?;
                let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
                Box::new(CelString::from(String::from_utf8_lossy(bytes).into_owned()))
            }
            Prim::WStr => {
                let n = self.length()?;
                let mut units = Vec::with_capacity(n.min(self.buf.len()));
                for _ in 0..n {
                    units.push(u16::from_le_bytes(self.fixed()?));
                }
                let units = units.strip_suffix(&[0]).unwrap_or(&units);
                Box::new(CelString::from(String::from_utf16_lossy(units)))
            }
        })
    }

    /// A declared iceoryx2 field: little-endian, unaligned, at `pos`.
    fn declared(&mut self, kind: FieldKind) -> Result<Boxed, EvalError> {
        Ok(match kind {
            FieldKind::Bool => Box::new(CelBool::from(self.take(1)?[0] != 0)),
            FieldKind::U8 => int_value(u64::from(self.take(1)?[0])),
            FieldKind::I8 => Box::new(CelInt::from(i64::from(self.take(1)?[0] as i8))),
            FieldKind::U16 => int_value(u64::from(u16::from_le_bytes(self.fixed()?))),
            FieldKind::I16 => Box::new(CelInt::from(i64::from(i16::from_le_bytes(self.fixed()?)))),
            FieldKind::U32 => int_value(u64::from(u32::from_le_bytes(self.fixed()?))),
            FieldKind::I32 => Box::new(CelInt::from(i64::from(i32::from_le_bytes(self.fixed()?)))),
            FieldKind::U64 => int_value(u64::from_le_bytes(self.fixed()?)),
            FieldKind::I64 => Box::new(CelInt::from(i64::from_le_bytes(self.fixed()?))),
            FieldKind::F32 => Box::new(CelDouble::from(f64::from(f32::from_le_bytes(
                self.fixed()?,
            )))),
            FieldKind::F64 => Box::new(CelDouble::from(f64::from_le_bytes(self.fixed()?))),
        })
    }
}

/// The fewest bytes one element takes (for checking a sequence's count).
fn min_size(elem: &Elem) -> usize {
    match elem {
        Elem::Prim(prim) => prim.size().unwrap_or(4),
        Elem::Msg(_) => 1,
    }
}
