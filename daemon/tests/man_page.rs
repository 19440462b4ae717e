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

/// Where man-db is installed, the page renders without a warning.
#[test]
fn man_renders_the_page_cleanly_where_installed() {
    let probe = Command::new("man").arg("--version").output();
    if !probe.is_ok_and(|output| output.status.success()) {
        eprintln!("man (man-db) is not installed: not rendering the page");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recd.8");
    std::fs::write(&path, man_page().stdout).unwrap();
    let output = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(&path)
        .env("LC_ALL", "C.UTF-8")
        .env("MANWIDTH", "80")
        .env_remove("MANPAGER")
        .env_remove("PAGER")
        .output()
        .expect("run man");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}: {stderr}", output.status);
    assert_eq!(stderr, "");
    assert!(stdout.contains("recd(8)"), "{stdout}");
    assert!(stdout.contains("print-config"), "{stdout}");
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
