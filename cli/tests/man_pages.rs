//! The real `rec` writes its manual pages: rec(1) naming every command, a page per
//! command (nested ones as rec-fleet-status.1) with its real options and a way back to
//! rec(1), and pages that `man` renders cleanly where it is installed.

mod common;

use std::path::Path;

use common::{outcome, run};

/// The commands `rec --help` lists (clap's `help` aside): each should have its page.
fn listed_commands() -> Vec<String> {
    let (code, help, stderr) = outcome(&run(&["--help"]));
    assert_eq!(code, 0, "{stderr}");
    let listing = &help[help.find("Usage:").expect(&help)..help.find("Options:").expect(&help)];
    let commands: Vec<String> = listing
        .lines()
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    for expected in ["start", "stop", "fleet", "completions", "man"] {
        assert!(
            commands.iter().any(|c| c == expected),
            "{expected}: {commands:?}"
        );
    }
    commands
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn rec_man_writes_rec_1_and_a_page_per_command() {
    let dir = tempfile::tempdir().unwrap();
    // A directory not there yet, as /usr/local/share/man/man1 may be.
    let man1 = dir.path().join("share/man/man1");
    let (code, stdout, stderr) = outcome(&run(&["man", man1.to_str().unwrap()]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "");

    let main = read(&man1.join("rec.1"));
    assert!(main.contains("\n.TH rec 1 "), "{main}");
    assert!(main.contains("\\fBrecd\\fR(8)"), "SEE ALSO recd(8): {main}");
    for command in listed_commands() {
        let page = format!("rec-{command}");
        assert!(
            main.contains(&format!("{}(1)", page.replace('-', "\\-"))),
            "rec.1 should name {page}(1):\n{main}"
        );
        let text = read(&man1.join(format!("{page}.1")));
        assert!(text.contains(&format!("\n.TH {page} 1 ")), "{text}");
        assert!(
            text.contains(".SH \"SEE ALSO\"\n\\fBrec\\fR(1)\n"),
            "{page}.1 should point back to rec(1):\n{text}"
        );
    }
    assert!(!man1.join("rec-help.1").exists(), "clap's help has no page");

    let start = read(&man1.join("rec-start.1"));
    assert!(start.contains("\\fB\\-\\-pre\\-trigger\\fR"), "{start}");
    assert!(start.contains("\\fB\\-\\-topic\\fR"), "{start}");
    assert!(start.contains("rec start"), "the synopsis: {start}");

    let fleet_status = read(&man1.join("rec-fleet-status.1"));
    assert!(
        fleet_status.contains(".SH \"SEE ALSO\"\n\\fBrec\\-fleet\\fR(1), \\fBrec\\fR(1)\n"),
        "{fleet_status}"
    );
    assert!(
        read(&man1.join("rec-fleet.1")).contains("rec\\-fleet\\-status(1)"),
        "rec-fleet.1 names its commands"
    );

    // Without a directory, rec.1 goes to standard output.
    let (code, stdout, stderr) = outcome(&run(&["man"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, main);
}

#[test]
fn rec_man_into_something_not_a_directory_fails_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let (code, _, stderr) = outcome(&run(&["man", file.to_str().unwrap()]));
    assert_eq!(code, 1);
    assert!(stderr.starts_with("rec: cannot create "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// Every page renders without a warning (man-db's `man -l`).
#[test]
fn man_renders_every_page_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = outcome(&run(&["man", dir.path().to_str().unwrap()]));
    assert_eq!(code, 0, "{stderr}");
    let mut pages = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let text = recd_testkit::render_man_page(&path);
        assert!(text.contains("SEE ALSO"), "{}: {text}", path.display());
        pages += 1;
    }
    assert!(pages > 10, "{pages} pages");
}
