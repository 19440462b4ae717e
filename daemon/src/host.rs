//! This host, as recd names it to others.

/// The host's name: the default vehicle id and recorder name (`vehicle` when it has
/// none).
pub fn hostname() -> String {
    let mut name = [0u8; 256];
    // SAFETY: gethostname writes at most the buffer's length into it.
    let result = unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) };
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    match std::str::from_utf8(&name[..end]) {
        Ok(name) if result == 0 && !name.is_empty() => name.to_string(),
        _ => "vehicle".into(),
    }
}
