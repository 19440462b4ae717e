//! Standard output for every command. A reader that goes away early (`rec list | head -1`)
//! ends the command quietly and successfully, as it ends `ls`, instead of a panic; any
//! other write error is reported on standard error.

use std::io::{self, Write};

/// Writes `bytes` to standard output and flushes it; see the module.
pub fn write_bytes(bytes: &[u8]) {
    let mut stdout = io::stdout().lock();
    if let Err(error) = stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        exit_after(&error)
    }
}

/// Writes formatted text to standard output and flushes it; see the module.
pub fn write(text: std::fmt::Arguments) {
    let mut stdout = io::stdout().lock();
    if let Err(error) = stdout.write_fmt(text).and_then(|()| stdout.flush()) {
        exit_after(&error)
    }
}

/// Prints `value` as one pretty-printed JSON document.
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<(), String> {
    let json = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    write(format_args!("{json}\n"));
    Ok(())
}

/// Ends the process after standard output refused a write: with success when the
/// reader closed the pipe, with status 1 otherwise.
pub fn exit_after(error: &io::Error) -> ! {
    if error.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    let _ = writeln!(
        io::stderr(),
        "rec: cannot write to standard output: {error}"
    );
    std::process::exit(1)
}

/// `print!` through [`write`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*))
    };
}

/// `println!` through [`write`].
macro_rules! outln {
    () => {
        $crate::output::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};
