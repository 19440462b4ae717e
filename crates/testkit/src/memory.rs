//! What a process holds in memory, read from `/proc`.

/// A process's private resident memory (`RssAnon`: heap, stacks, anonymous mappings; the
/// shared memory it maps does not count), in bytes.
pub fn anonymous_bytes(pid: u32) -> u64 {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("RssAnon:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("RssAnon in {path}"));
    kib * 1024
}
