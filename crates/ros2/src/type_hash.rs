//! The ROS 2 type hash a writer announces in its USER_DATA QoS.
//!
//! Since Iron, rmw puts `typehash=RIHS01_<64 hex digits>;` into the USER_DATA QoS of every
//! reader and writer (rmw_dds_common's `encode_type_hash_for_user_data_qos`), possibly among
//! other `key=value;` pairs; readers take it back out with `parse_type_hash_from_user_data`.
//! rosbag2 stores it as the `topic_type_hash` channel metadata, stringified by rosidl's
//! `rosidl_stringify_type_hash` (`RIHS01_` and lowercase hex).

/// The only type hash version there is: `RIHS01` (ROS Interface Hashing Standard, v1).
const PREFIX: &str = "RIHS01_";
/// Hex digits of a version 1 hash (SHA-256).
const HEX_DIGITS: usize = 64;

/// The ROS 2 type hash (`"RIHS01_<64 lowercase hex>"`) in a writer's USER_DATA QoS, where rmw
/// writes it as `typehash=RIHS01_…;`, possibly among other `key=value;` pairs.
///
/// The bytes may be the octet sequence itself or its serialized form with a leading 4-byte
/// length (little-endian, or big-endian for a big-endian parameter list) and up to 3 bytes of
/// zero padding, as a DDS library may hand over the raw parameter; both are accepted, and so
/// are trailing NUL bytes. Hex digits are returned lowercase, as rosidl stringifies them.
///
/// `None` if there is no `typehash` pair or its value is not `RIHS01_` followed by exactly 64
/// hex digits.
pub fn from_user_data(user_data: &[u8]) -> Option<String> {
    let data = strip_length_prefix(user_data);
    let end = data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    data[..end]
        .split(|&b| b == b';')
        .filter_map(|pair| {
            let eq = pair.iter().position(|&b| b == b'=')?;
            (&pair[..eq] == b"typehash").then(|| &pair[eq + 1..])
        })
        .next()
        .and_then(parse_hash)
}

/// The octet sequence inside `data` if `data` is a serialized sequence (length prefix, the
/// octets, at most 3 zero padding bytes), else `data` unchanged. Text cannot be mistaken for
/// a prefix: its first four bytes read as a length far beyond any USER_DATA.
fn strip_length_prefix(data: &[u8]) -> &[u8] {
    let Some((head, body)) = data.split_first_chunk::<4>() else {
        return data;
    };
    for len in [u32::from_le_bytes(*head), u32::from_be_bytes(*head)] {
        let Ok(len) = usize::try_from(len) else {
            continue;
        };
        if len <= body.len() && body.len() - len < 4 && body[len..].iter().all(|&b| b == 0) {
            return &body[..len];
        }
    }
    data
}

fn parse_hash(value: &[u8]) -> Option<String> {
    let value = std::str::from_utf8(value).ok()?;
    let hex = value.strip_prefix(PREFIX)?;
    if hex.len() != HEX_DIGITS || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(format!("{PREFIX}{}", hex.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The type hash of std_msgs/msg/String (Iron and later).
    const HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

    fn prefixed_le(octets: &[u8]) -> Vec<u8> {
        let mut out = u32::try_from(octets.len()).unwrap().to_le_bytes().to_vec();
        out.extend_from_slice(octets);
        out
    }

    #[test]
    fn hash_from_plain_user_data() {
        let user_data = format!("typehash={HASH};");
        assert_eq!(from_user_data(user_data.as_bytes()).as_deref(), Some(HASH));
    }

    #[test]
    fn hash_from_length_prefixed_user_data() {
        // 81 octets, as they come without padding.
        let user_data = format!("typehash={HASH};");
        let unpadded = prefixed_le(user_data.as_bytes());
        assert_eq!(unpadded.len(), 4 + 81);
        assert_eq!(from_user_data(&unpadded).as_deref(), Some(HASH));

        // The same, padded to a multiple of 4 as a CDR stream would be.
        let mut padded = unpadded.clone();
        padded.resize(padded.len().next_multiple_of(4), 0);
        assert_eq!(padded.len(), 4 + 81 + 3);
        assert_eq!(from_user_data(&padded).as_deref(), Some(HASH));

        let user_data = format!("a=b;typehash={HASH};");

        let mut big_endian = u32::try_from(user_data.len())
            .unwrap()
            .to_be_bytes()
            .to_vec();
        big_endian.extend_from_slice(user_data.as_bytes());
        assert_eq!(from_user_data(&big_endian).as_deref(), Some(HASH));
    }

    #[test]
    fn hash_among_other_pairs_and_trailing_nuls() {
        for user_data in [
            format!("enclave=/;typehash={HASH};"),
            format!("typehash={HASH};enclave=/;"),
            format!("typehash={HASH}"),
            format!("typehash={HASH};\0\0"),
            format!("x=1;;typehash={HASH};y=2"),
        ] {
            assert_eq!(
                from_user_data(user_data.as_bytes()).as_deref(),
                Some(HASH),
                "{user_data:?}"
            );
        }
    }

    #[test]
    fn hash_hex_digits_come_back_lowercase() {
        let upper = format!("typehash=RIHS01_{};", HASH[7..].to_ascii_uppercase());
        assert_eq!(from_user_data(upper.as_bytes()).as_deref(), Some(HASH));
    }

    #[test]
    fn absent_or_malformed_hash_is_none() {
        let hex = &HASH[7..];
        for user_data in [
            String::new(),
            "enclave=/;".to_string(),
            "typehash=;".to_string(),
            format!("typehash={};", &HASH[..HASH.len() - 1]),
            format!("typehash={HASH}0;"),
            format!("typehash=RIHS02_{hex};"),
            format!("typehash={hex};"),
            format!("typehash=RIHS01_{}g;", &hex[..63]),
            format!("typehash2={HASH};"),
            format!("xtypehash={HASH};"),
            format!("{HASH};"),
        ] {
            assert_eq!(from_user_data(user_data.as_bytes()), None, "{user_data:?}");
        }
        assert_eq!(from_user_data(&[0, 0, 0, 0]), None);
        assert_eq!(from_user_data(&[0xff; 3]), None);
        // A length prefix that claims more than there is: taken as text, which has no hash.
        let mut lying = prefixed_le(format!("typehash={HASH};").as_bytes());
        lying[0] += 1;
        assert_eq!(from_user_data(&lying), None);
    }
}
