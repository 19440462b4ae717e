//! The values of read paths as JSON, for a firing's record.

use cel::common::types::{CelList, CelMap, CelMapKey};
use cel::common::value::Val;
use cel::Value;
use serde_json::Value as Json;

/// At most this many elements of a list are written.
pub const MAX_LIST: usize = 16;

/// The value at `segments` below `value`, as JSON: through a list, the values of its first
/// [`MAX_LIST`] elements; `None` where a field is absent.
pub(crate) fn at(value: &dyn Val, segments: &[String]) -> Option<Json> {
    let Some((first, rest)) = segments.split_first() else {
        return Some(to_json(value));
    };
    if let Some(map) = value.downcast_ref::<CelMap>() {
        let (_, child) = map
            .inner()
            .iter()
            .find(|(k, _)| matches!(k, CelMapKey::String(s) if s.inner() == first))?;
        return at(child.as_ref(), rest);
    }
    if let Some(list) = value.downcast_ref::<CelList>() {
        return Some(Json::Array(
            list.inner()
                .iter()
                .take(MAX_LIST)
                .map(|item| at(item.as_ref(), segments).unwrap_or(Json::Null))
                .collect(),
        ));
    }
    None
}

fn to_json(value: &dyn Val) -> Json {
    match Value::try_from(value) {
        Ok(value) => convert(&value),
        Err(_) => Json::Null,
    }
}

fn convert(value: &Value) -> Json {
    match value {
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or_else(|| Json::String(f.to_string())),
        Value::String(s) => Json::String(s.to_string()),
        Value::Bool(b) => Json::Bool(*b),
        Value::Null => Json::Null,
        Value::Bytes(b) => Json::Array(b.iter().take(MAX_LIST).map(|&x| Json::from(x)).collect()),
        Value::List(items) => Json::Array(items.iter().take(MAX_LIST).map(convert).collect()),
        Value::Map(map) => {
            let mut entries: Vec<(String, Json)> = map
                .map
                .iter()
                .map(|(k, v)| (key_name(k), convert(v)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Json::Object(entries.into_iter().collect())
        }
        other => Json::String(format!("{other:?}")),
    }
}

fn key_name(key: &cel::objects::Key) -> String {
    match key {
        cel::objects::Key::String(s) => s.to_string(),
        cel::objects::Key::Int(i) => i.to_string(),
        cel::objects::Key::Uint(u) => u.to_string(),
        cel::objects::Key::Bool(b) => b.to_string(),
    }
}
