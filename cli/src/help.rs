//! `rec --help`: the commands grouped as a recording goes, one short line each (clap lists
//! subcommands under one heading only).

use clap::Command;

/// The command groups in the order `rec --help` shows them; a command missing here is
/// listed under the last group.
const GROUPS: &[(&str, &[&str])] = &[
    (
        "Record",
        &[
            "start",
            "stop",
            "status",
            "pause",
            "resume",
            "mark",
            "topics-set",
            "trigger",
            "incidents",
            "rules",
        ],
    ),
    ("Fleet", &["fleet"]),
    ("Look", &["list", "topics", "info"]),
    ("Files", &["reindex", "decrypt", "play", "upload", "verify"]),
    ("Other", &["demo", "completions", "man", "help"]),
];

/// `rec`'s command with its help listing the commands by [`GROUPS`].
pub fn grouped(mut command: Command) -> Command {
    command.build();
    command = command.mut_subcommand("help", |help| help.about("Print this help, or a command's"));
    let listing = listing(&command);
    command
        .help_template(format!(
            "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{listing}\nOptions:\n{{options}}{{after-help}}"
        ))
        .after_help("'rec COMMAND --help' gives a command's options and details.")
}

/// The groups' headings and their commands' one-line summaries.
fn listing(command: &Command) -> String {
    let mut groups: Vec<(&str, Vec<&Command>)> =
        GROUPS.iter().map(|(name, _)| (*name, Vec::new())).collect();
    for subcommand in command.get_subcommands() {
        let group = GROUPS
            .iter()
            .position(|(_, names)| names.contains(&subcommand.get_name()))
            .unwrap_or(GROUPS.len() - 1);
        groups[group].1.push(subcommand);
    }
    let width = command
        .get_subcommands()
        .map(|c| c.get_name().len())
        .max()
        .unwrap_or(0);
    let mut sections = Vec::new();
    for (heading, mut commands) in groups {
        let order = |c: &Command| {
            GROUPS
                .iter()
                .flat_map(|(_, names)| names.iter())
                .position(|name| *name == c.get_name())
        };
        commands.sort_by_key(|c| order(c));
        let mut text = format!("{heading}:\n");
        for subcommand in commands {
            let about = subcommand
                .get_about()
                .map(|about| about.to_string())
                .unwrap_or_default();
            text += &format!("  {:width$}  {about}\n", subcommand.get_name());
        }
        sections.push(text);
    }
    sections.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn demo() -> Command {
        Command::new("demo")
            .about("What it is")
            .subcommand(Command::new("play").about("Play"))
            .subcommand(Command::new("start").about("Start"))
            .subcommand(Command::new("new-one").about("Not grouped yet"))
    }

    #[test]
    fn commands_are_listed_by_group_in_workflow_order_and_none_is_left_out() {
        let mut command = grouped(demo());
        let help = command.render_help().to_string();
        let record = help.find("Record:\n  start").expect(&help);
        let files = help.find("Files:\n  play").expect(&help);
        let other = help.find("Other:\n").expect(&help);
        assert!(record < files && files < other, "{help}");
        assert!(help[other..].contains("new-one  Not grouped yet"), "{help}");
        assert!(
            help[other..].contains("help"),
            "clap's own help command: {help}"
        );
        assert!(help.starts_with("What it is\n"), "{help}");
    }

    #[test]
    fn recs_help_gives_every_command_one_short_line_in_its_group() {
        let command = crate::Cli::command();
        let ungrouped: Vec<&str> = (command.get_subcommands())
            .map(Command::get_name)
            .filter(|name| !GROUPS.iter().any(|(_, names)| names.contains(name)))
            .collect();
        assert_eq!(ungrouped, Vec::<&str>::new(), "every command has a group");
        let help = grouped(command).render_help().to_string();
        for line in help.lines() {
            assert!(line.chars().count() <= 70, "too long: {line:?}");
        }
        for (_, names) in GROUPS {
            for name in *names {
                let listed = help
                    .lines()
                    .filter(|line| line.split_whitespace().next() == Some(*name))
                    .count();
                assert_eq!(listed, 1, "{name} in {help}");
            }
        }
    }
}
