//! Serde helpers for sizes and durations in recd.toml: written as `"4GiB"` or `"10min"`
//! (a size may also be a plain number of bytes), and a bad value gets the same help as on
//! `rec`'s command line.

use std::time::Duration;

use bytesize::ByteSize;
use serde::{de::Error, Deserialize, Deserializer, Serializer};

#[derive(Deserialize)]
#[serde(untagged)]
enum SizeText {
    Bytes(u64),
    Text(String),
}

fn size_from<'de, D: Deserializer<'de>>(value: SizeText) -> Result<ByteSize, D::Error> {
    match value {
        SizeText::Bytes(n) => Ok(ByteSize::b(n)),
        SizeText::Text(text) => recd_control::units::parse_size(&text)
            .map(ByteSize::b)
            .map_err(D::Error::custom),
    }
}

fn duration_from<'de, D: Deserializer<'de>>(text: String) -> Result<Duration, D::Error> {
    recd_control::units::parse_duration(&text).map_err(D::Error::custom)
}

/// A size.
pub mod size {
    use super::*;

    /// Reads a size.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ByteSize, D::Error> {
        size_from::<D>(SizeText::deserialize(deserializer)?)
    }

    /// Writes a size as bytesize spells it.
    pub fn serialize<S: Serializer>(size: &ByteSize, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&size.to_string())
    }
}

/// A size that may be absent.
pub mod option_size {
    use super::*;

    /// Reads a size.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<ByteSize>, D::Error> {
        size_from::<D>(SizeText::deserialize(deserializer)?).map(Some)
    }

    /// Writes a size; absent ones are skipped by the field's `skip_serializing_if`.
    pub fn serialize<S: Serializer>(
        size: &Option<ByteSize>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match size {
            Some(size) => super::size::serialize(size, serializer),
            None => serializer.serialize_none(),
        }
    }
}

/// A duration.
pub mod duration {
    use super::*;

    /// Reads a duration.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        duration_from::<D>(String::deserialize(deserializer)?)
    }

    /// Writes a duration as humantime spells it.
    pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&humantime::format_duration(*duration).to_string())
    }
}

/// A duration that may be absent.
pub mod option_duration {
    use super::*;

    /// Reads a duration.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        duration_from::<D>(String::deserialize(deserializer)?).map(Some)
    }

    /// Writes a duration; absent ones are skipped by the field's `skip_serializing_if`.
    pub fn serialize<S: Serializer>(
        duration: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match duration {
            Some(duration) => super::duration::serialize(duration, serializer),
            None => serializer.serialize_none(),
        }
    }
}
