//! `--socket`: where recd listens, an option of the commands that talk to it.

use std::path::PathBuf;

use clap::Args;

/// Where recd listens unless told otherwise.
pub const DEFAULT_SOCKET: &str = "/run/recd/recd.sock";

/// recd's control socket, for the commands that ask recd.
#[derive(Debug, Args)]
pub struct SocketArg {
    /// recd's control socket.
    #[arg(
        long = "socket",
        value_name = "PATH",
        env = "RECD_SOCKET",
        default_value = DEFAULT_SOCKET
    )]
    pub path: PathBuf,
}
