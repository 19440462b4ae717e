//! `rec`: the command-line tool of recd. It drives recd's recording sessions (start,
//! stop, status, pause, resume, mark, trigger), looks at what was and could be recorded
//! (list, topics, info), works on the files (reindex, decrypt, play), and runs a self-contained
//! demo of the recording path. `rec --help` lists the commands in those groups.

mod attach;
mod complete;
mod decrypt;
mod demo;
mod files;
mod fleet;
mod format;
mod health;
mod help;
mod identity;
mod incidents;
mod info;
mod man;
mod output;
mod play;
mod reindex;
mod request;
mod rules;
mod running;
mod session;
mod socket;
mod table;
mod topics;
mod topics_set;
mod upload;
mod verify;
mod window;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// Exit status of a command that failed.
const EXIT_FAILURE: u8 = 1;

#[derive(Debug, Parser)]
#[command(
    name = "rec",
    version,
    about = "Record with recd, then inspect, reindex and play the MCAP files"
)]
struct Cli {
    /// The DDS domain of `rec fleet`.
    #[arg(long, value_name = "N")]
    dds_domain: Option<u16>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Start(Box<session::StartArgs>),
    Stop(session::StopArgs),
    Status(session::StatusArgs),
    Pause(running::PauseArgs),
    /// Write again after `rec pause`.
    Resume(running::PauseArgs),
    Mark(running::MarkArgs),
    #[command(name = "topics-set")]
    TopicsSet(topics_set::TopicsSetArgs),
    Trigger(running::TriggerArgs),
    Incidents(incidents::IncidentsArgs),
    Rules(rules::RulesArgs),
    List(session::ListArgs),
    Topics(topics::TopicsArgs),
    Play(play::PlayArgs),
    Info(info::InfoArgs),
    Reindex(reindex::ReindexArgs),
    Decrypt(decrypt::DecryptArgs),
    Upload(upload::UploadArgs),
    Verify(verify::VerifyArgs),
    Fleet(fleet::FleetArgs),
    Demo(demo::DemoArgs),
    /// Print a shell completion script.
    ///
    /// For bash, zsh, fish, elvish or powershell. It completes commands, options and recd's session names (e.g. `rec completions bash > /etc/bash_completion.d/rec`, or
    /// `source <(rec completions bash)` in ~/.bashrc).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Write the manual pages: rec(1) and one per command.
    ///
    /// Into DIR as rec.1, rec-start.1, ..., rec-fleet-status.1 (e.g. `rec man
    /// /usr/local/share/man/man1`); without DIR, print rec.1 (`rec man | man -l -`).
    Man {
        /// The directory for the pages (created when missing).
        dir: Option<std::path::PathBuf>,
    },
}

fn main() -> ExitCode {
    complete::answer_if_asked(Cli::command);
    // iceoryx2 (rec play) would otherwise warn on stderr that it found no config file.
    iceoryx2::prelude::set_log_level(iceoryx2::prelude::LogLevel::Error);
    let matches = help::grouped(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    if cli.dds_domain.is_some() && !matches!(cli.command, Command::Fleet(_)) {
        eprintln!("rec: --dds-domain before the command is for rec fleet (rec start takes its own --dds-domain after it)");
        return ExitCode::from(2);
    }
    let outcome = match cli.command {
        Command::Start(args) => session::start(&args.socket.path, &args),
        Command::Stop(args) => session::stop(&args.socket.path, &args),
        Command::Status(args) => session::status(&args.socket.path, &args),
        Command::Pause(args) => running::pause(&args.socket.path, &args, true),
        Command::Resume(args) => running::pause(&args.socket.path, &args, false),
        Command::Mark(args) => running::mark(&args.socket.path, &args),
        Command::TopicsSet(args) => topics_set::run(&args.socket.path, &args),
        Command::Trigger(args) => running::trigger(&args.socket.path, &args),
        Command::Incidents(args) => incidents::run(&args),
        Command::Rules(args) => rules::run(&args),
        Command::List(args) => session::list(&args.socket.path, &args),
        Command::Topics(args) => topics::run(&args.socket.path, &args),
        Command::Play(args) => play::run(&args.socket.path, &args),
        Command::Info(args) => info::run(&args.socket.path, &args),
        Command::Reindex(args) => reindex::run(&args.socket.path, &args),
        Command::Decrypt(args) => decrypt::run(&args),
        Command::Upload(args) => upload::run(&args.socket.path, &args),
        Command::Verify(args) => verify::run(&args),
        Command::Fleet(args) => fleet::run(&args, cli.dds_domain),
        Command::Demo(args) => demo::run(&args),
        Command::Completions { shell } => complete::registration(shell).map(|script| {
            output::write_bytes(&script);
            ExitCode::SUCCESS
        }),
        Command::Man { dir: Some(dir) } => {
            man::write_pages(Cli::command(), &dir).map(|()| ExitCode::SUCCESS)
        }
        Command::Man { dir: None } => {
            output::write_bytes(&man::main_page(Cli::command()));
            Ok(ExitCode::SUCCESS)
        }
    };
    match outcome {
        Ok(code) => code,
        Err(message) => {
            eprintln!("rec: {message}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}
