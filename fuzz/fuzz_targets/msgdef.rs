//! ROS 2 `.msg` definitions of any text: `fz/msg/A.msg` and `fz/msg/B.msg` (the input
//! split at its first line `===`), and the concatenated definition of `fz/msg/A`.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use recd_ros2::msgdef::MessageDefinitions;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (a, b) = text.split_once("\n===\n").unwrap_or((&text, ""));
    let root = common::scratch().join("msg");
    let dir = root.join("fz/msg");
    std::fs::create_dir_all(&dir).expect("msg directory");
    std::fs::write(dir.join("A.msg"), a).expect("A.msg");
    std::fs::write(dir.join("B.msg"), b).expect("B.msg");
    let _ = MessageDefinitions::new(vec![root]).definition("fz/msg/A");
});
