//! `recd --man-page` prints recd(8) from recd's own options, without reading a
//! configuration, and systemd/README.md's install steps put it where `man` finds it.

use std::process::{Command, Output};

const RECD: &str = env!("CARGO_BIN_EXE_recd");
const SYSTEMD_README: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../systemd/README.md");

fn man_page() -> Output {
    // A configuration that is not there: the page must not depend on one.
    Command::new(RECD)
        .args(["--config", "/nonexistent/recd.toml", "--man-page"])
        .output()
        .expect("run recd --man-page")
}

#[test]
fn recd_prints_its_section_8_page_with_its_real_options() {
    let output = man_page();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}: {stderr}", output.status);
    assert_eq!(stderr, "");
    let page = String::from_utf8(output.stdout).expect("the page is UTF-8");
    assert!(page.contains("\n.TH recd 8 "), "{page}");
    assert!(page.contains(".SH NAME\nrecd \\- "), "{page}");
    for flag in ["config", "print\\-config", "data\\-dir", "man\\-page"] {
        assert!(
            page.contains(&format!("\\fB\\-\\-{flag}\\fR")),
            "--{flag}: {page}"
        );
    }
    assert!(
        page.contains(".SH \"SEE ALSO\"\n\\fBrec\\fR(1)\n"),
        "{page}"
    );
}

/// The page renders without a warning (man-db's `man -l`).
#[test]
fn man_renders_the_page_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recd.8");
    std::fs::write(&path, man_page().stdout).unwrap();
    let text = recd_testkit::render_man_page(&path);
    assert!(text.contains("recd(8)"), "{text}");
    assert!(text.contains("print-config"), "{text}");
}

#[test]
fn the_systemd_install_steps_install_the_pages() {
    let readme = std::fs::read_to_string(SYSTEMD_README).expect("read systemd/README.md");
    let install = &readme[readme.find("## Install").expect("an Install section")..];
    assert!(
        install.contains("recd --man-page > /usr/local/share/man/man8/recd.8"),
        "{install}"
    );
    assert!(
        install.contains("rec man /usr/local/share/man/man1"),
        "{install}"
    );
}
