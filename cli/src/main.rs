//! `rec`: the command-line tool of recd. It summarizes MCAP files (`rec info`), reindexes
//! them (`rec reindex`), and runs a self-contained demo of the recording path (`rec demo`).

mod demo;
mod format;
mod info;
mod reindex;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit status of a command that failed.
const EXIT_FAILURE: u8 = 1;

#[derive(Debug, Parser)]
#[command(
    name = "rec",
    version,
    about = "Record, inspect and reindex MCAP files with recd"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Info(info::InfoArgs),
    Reindex(reindex::ReindexArgs),
    Demo(demo::DemoArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Info(args) => info::run(&args),
        Command::Reindex(args) => reindex::run(&args),
        Command::Demo(args) => demo::run(&args),
    };
    match outcome {
        Ok(code) => code,
        Err(message) => {
            eprintln!("rec: {message}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}
