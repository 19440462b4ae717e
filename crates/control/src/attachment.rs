//! Files a session puts into every one of its files (`rec start --attach FILE`): `rec`
//! reads them, as recd may not be allowed to, and sends their bytes with the start
//! request.

use serde::{Deserialize, Serialize};

/// The most bytes a session's attachments may hold together: they travel in one request
/// and are written into every file.
pub const MAX_ATTACHMENT_BYTES: usize = 4 << 20;

/// One attached file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttachedFile {
    /// Its name in the recording (the file's name, without its directory).
    pub name: String,
    /// Its media type, e.g. `application/yaml`.
    pub media_type: String,
    /// Its modification time, ns since the Unix epoch.
    pub create_time_ns: u64,
    /// Its bytes (base64 on the wire).
    #[serde(with = "base64_bytes")]
    pub data: Vec<u8>,
}

mod base64_bytes {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_travel_as_base64_and_come_back_unchanged() {
        let file = AttachedFile {
            name: "calibration.yaml".into(),
            media_type: "application/yaml".into(),
            create_time_ns: 1,
            data: (0..=255).collect(),
        };
        let json = serde_json::to_string(&file).unwrap();
        assert!(json.contains("\"data\":\"AAECAw"), "{json}");
        assert_eq!(serde_json::from_str::<AttachedFile>(&json).unwrap(), file);
    }
}
