//! Manual pages as man-db renders them.

use std::path::Path;
use std::process::Command;

/// Renders the page in file `page` as `man --warnings -l` does (80 columns, C.UTF-8, no
/// pager), asserts that man-db rendered it without a warning, and returns the text.
/// man-db must be installed (`scripts/setup` installs it): a test of the pages never
/// passes without looking at them.
pub fn render_man_page(page: &Path) -> String {
    let output = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(page)
        .env("LC_ALL", "C.UTF-8")
        .env("MANWIDTH", "80")
        .env_remove("MANPAGER")
        .env_remove("PAGER")
        .output()
        .unwrap_or_else(|e| panic!("cannot run man ({e}): install man-db (scripts/setup does)"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "man -l {}: {}: {stderr}",
        page.display(),
        output.status
    );
    assert_eq!(stderr, "", "man -l {} warned", page.display());
    String::from_utf8_lossy(&output.stdout).into_owned()
}
