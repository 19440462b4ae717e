//! Manual pages: `rec man DIR` writes rec(1) and one page per command (rec-start.1, and
//! nested ones as rec-fleet-status.1), generated from the same clap definitions as
//! `--help`, so an install needs no other tool; `rec man` alone prints rec(1).

use std::path::Path;

use clap::Command;
use clap_mangen::roff::{bold, roman, Roff};
use clap_mangen::Man;

/// The manual section of `rec` and its commands (user commands).
const SECTION: &str = "1";

/// rec(1) as roff.
pub fn main_page(command: Command) -> Vec<u8> {
    let command = prepared(command);
    render(&command, &[("recd", "8")])
}

/// Writes rec.1 and a page for every command into `dir`, creating it when missing.
pub fn write_pages(command: Command, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let command = prepared(command);
    write_tree(&command, &[], dir)
}

/// `command` as the pages show it: built (so subcommands know their full names), without
/// clap's `help` commands, which have no page.
fn prepared(command: Command) -> Command {
    let mut command = without_help_commands(command);
    command.build();
    command
}

fn without_help_commands(command: Command) -> Command {
    let names: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .collect();
    let mut command = command.disable_help_subcommand(true);
    for name in names {
        command = command.mut_subcommand(name, without_help_commands);
    }
    command
}

/// Writes the page of `command` and of each of its commands; `parents` are the pages
/// above it, nearest first.
fn write_tree(command: &Command, parents: &[String], dir: &Path) -> Result<(), String> {
    let name = page_name(command);
    let mut see_also: Vec<(&str, &str)> = parents.iter().map(|p| (p.as_str(), SECTION)).collect();
    if parents.is_empty() {
        see_also.push(("recd", "8"));
    }
    let path = dir.join(format!("{name}.{SECTION}"));
    std::fs::write(&path, render(command, &see_also))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut above = vec![name];
    above.extend_from_slice(parents);
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        write_tree(sub, &above, dir)?;
    }
    Ok(())
}

/// The page's name: `rec`, `rec-start`, `rec-fleet-status`.
fn page_name(command: &Command) -> String {
    (command.get_display_name())
        .unwrap_or_else(|| command.get_name())
        .to_owned()
}

/// The page of `command` with a SEE ALSO section naming `see_also` (page, section).
fn render(command: &Command, see_also: &[(&str, &str)]) -> Vec<u8> {
    let mut page = Vec::new();
    Man::new(command.clone())
        .section(SECTION)
        // Quoted, as roff drops an empty argument and would take the source for the date.
        .date("\"\"")
        .source(concat!("rec ", env!("CARGO_PKG_VERSION")))
        .render(&mut page)
        .expect("writing to memory cannot fail");
    if !see_also.is_empty() {
        let mut refs = Vec::new();
        for (i, (name, section)) in see_also.iter().enumerate() {
            if i > 0 {
                refs.push(roman(", "));
            }
            refs.push(bold(*name));
            refs.push(roman(format!("({section})")));
        }
        let mut roff = Roff::new();
        roff.control("SH", ["SEE ALSO"]).text(refs);
        page.extend_from_slice(roff.to_roff().as_bytes());
    }
    page
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_command_gets_a_page_and_no_help_command_does() {
        let dir = tempfile::tempdir().unwrap();
        write_pages(crate::Cli::command(), dir.path()).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert!(names.contains(&"rec.1".to_owned()), "{names:?}");
        assert!(
            names.contains(&"rec-fleet-status.1".to_owned()),
            "{names:?}"
        );
        assert!(!names.iter().any(|n| n.contains("help")), "{names:?}");
        let page = std::fs::read_to_string(dir.path().join("rec-fleet-status.1")).unwrap();
        assert!(
            page.contains(".SH \"SEE ALSO\"\n\\fBrec\\-fleet\\fR(1), \\fBrec\\fR(1)\n"),
            "{page}"
        );
    }
}
