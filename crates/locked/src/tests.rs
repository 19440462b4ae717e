use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::*;

/// What `/proc/self/smaps` says of the mapping holding `address`: its `VmFlags` and its
/// `Locked:` size in kB.
fn mapping_of(address: usize) -> (Vec<String>, u64) {
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("read /proc/self/smaps");
    let mut inside = false;
    let mut locked_kb = None;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if !first.ends_with(':') {
            // A mapping's first line: "start-end perms offset device inode [path]".
            let (start, end) = first.split_once('-').expect("a mapping's range");
            let start = usize::from_str_radix(start, 16).expect("hex start");
            let end = usize::from_str_radix(end, 16).expect("hex end");
            inside = (start..end).contains(&address);
        } else if inside && first == "Locked:" {
            locked_kb = line.split_whitespace().nth(1).map(|kb| kb.parse().unwrap());
        } else if inside && first == "VmFlags:" {
            let flags = line.split_whitespace().skip(1).map(String::from).collect();
            return (flags, locked_kb.expect("Locked: comes before VmFlags:"));
        }
    }
    panic!("no mapping in /proc/self/smaps holds {address:#x}");
}

#[test]
fn the_value_lives_in_a_locked_page_left_out_of_core_dumps() {
    let key = Locked::new([7u8; 32]).unwrap();
    assert!(key.is_locked(), "the tests run as root: mlock must hold");
    let (flags, locked_kb) = mapping_of(key.as_ptr() as usize);
    assert!(
        flags.iter().any(|f| f == "dd"),
        "not MADV_DONTDUMP: {flags:?}"
    );
    assert!(flags.iter().any(|f| f == "lo"), "not locked: {flags:?}");
    assert!(locked_kb > 0, "Locked: {locked_kb} kB");
    assert_eq!(*key, [7u8; 32]);
}

#[test]
fn the_value_reads_back_and_changes_in_place() {
    let mut pair = Locked::new((0x1234_5678_u32, String::from("ed25519"))).unwrap();
    assert_eq!(pair.0, 0x1234_5678);
    assert_eq!(pair.1, "ed25519");
    pair.0 += 1;
    pair.1.push_str(" key");
    assert_eq!(*pair, (0x1234_5679, String::from("ed25519 key")));
    let mut filled = Locked::new([0u64; 4]).unwrap();
    filled.copy_from_slice(&[1, 2, 3, 4]);
    assert_eq!(*filled, [1, 2, 3, 4]);
}

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn dropping_drops_the_value_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let value = Locked::new(Counted(drops.clone())).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(value);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn debug_never_shows_the_value() {
    let key = Locked::new(*b"secret key bytes").unwrap();
    let shown = format!("{key:?}");
    assert_eq!(shown, "Locked { locked: true, .. }");
}

#[test]
fn every_value_has_a_page_of_its_own() {
    let a = Locked::new(1u64).unwrap();
    let b = Locked::new(2u64).unwrap();
    let page = |l: &Locked<u64>| (&**l as *const u64 as usize) / MIN_PAGE_SIZE;
    assert_ne!(page(&a), page(&b));
    assert_eq!((*a, *b), (1, 2));
}
