//! A pseudo-terminal for the tests that type keys into a program: the program's stdin
//! and stderr are the terminal (its controlling terminal, so that Ctrl-C typed there
//! raises SIGINT as in a shell), the test writes keys to the other end and collects what
//! the program printed there; and a child process that is killed if the test ends (or
//! fails) before it does.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::wait_until;

/// The space bar.
pub const SPACE: &[u8] = b" ";
/// The Right arrow key as a terminal sends it (`ESC [ C`).
pub const RIGHT: &[u8] = b"\x1b[C";
/// The Up arrow key (`ESC [ A`).
pub const UP: &[u8] = b"\x1b[A";
/// The Down arrow key (`ESC [ B`).
pub const DOWN: &[u8] = b"\x1b[B";
/// Ctrl-C (ETX), which the terminal turns into SIGINT while `ISIG` is set.
pub const CTRL_C: &[u8] = b"\x03";

/// A pseudo-terminal pair: the test holds the master end (keys in, output out) and hands
/// the slave end to one program with [`Pty::attach`]. Everything the program writes to
/// the terminal is collected in the background.
pub struct Pty {
    master: File,
    slave: OwnedFd,
    output: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    /// Opens a pseudo-terminal of 120 × 40 characters with the default settings
    /// (canonical mode, echo, signals).
    pub fn open() -> Self {
        let mut master: libc::c_int = -1;
        let mut slave: libc::c_int = -1;
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty(3) writes two descriptors into our two ints; the name buffer
        // may be null, and the termios null (defaults); the winsize outlives the call.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty failed: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors are fresh from openpty and owned by nobody else.
        let (master, slave) = unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master
            .try_clone()
            .expect("a second descriptor of the master");
        let collected = Arc::clone(&output);
        // Drains the terminal so that the program never blocks writing to it; ends when
        // every slave descriptor is closed (EIO) or on any error.
        thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = reader.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                collected.lock().unwrap().extend_from_slice(&buffer[..read]);
            }
        });
        Self {
            master,
            slave,
            output,
        }
    }

    /// Makes the terminal `command`'s stdin and stderr (stdout stays as the caller sets
    /// it) and its controlling terminal: the program runs in a session of its own
    /// (`setsid`) and takes the terminal (`TIOCSCTTY`), so that Ctrl-C typed there reaches
    /// it as SIGINT.
    pub fn attach(&self, command: &mut Command) {
        let stdin = self.slave.try_clone().expect("a slave descriptor");
        let stderr = self.slave.try_clone().expect("a slave descriptor");
        command
            .stdin(Stdio::from(stdin))
            .stderr(Stdio::from(stderr));
        // SAFETY: between fork and exec the closure calls only setsid(2) and ioctl(2),
        // which are async-signal-safe, and allocates nothing. std has already made the
        // slave the child's stdin (descriptor 0) when pre_exec closures run.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }

    /// Types `keys` on the terminal.
    pub fn send(&self, keys: &[u8]) {
        (&self.master)
            .write_all(keys)
            .expect("keys written to the terminal");
    }

    /// Everything the program wrote to the terminal so far.
    pub fn output(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Waits (at most `limit`) until the program has written `text` to the terminal.
    pub fn wait_for_output(&self, text: &str, limit: Duration) -> bool {
        wait_until(limit, || self.output().contains(text))
    }

    /// Whether the terminal is in its ordinary line mode: canonical input (`ICANON`),
    /// echo (`ECHO`) and signals (`ISIG`) on, as a program that changed them must leave
    /// it when it exits.
    pub fn in_line_mode(&self) -> bool {
        let flags = self.local_flags();
        flags & libc::ICANON != 0 && flags & libc::ECHO != 0 && flags & libc::ISIG != 0
    }

    /// The terminal's local mode flags (`c_lflag`: `ICANON`, `ECHO`, `ISIG`, …) now.
    pub fn local_flags(&self) -> libc::tcflag_t {
        // SAFETY: termios is plain old data; tcgetattr(3) fills it from our own slave
        // descriptor.
        unsafe {
            let mut termios: libc::termios = std::mem::zeroed();
            let rc = libc::tcgetattr(self.slave.as_raw_fd(), &mut termios);
            assert_eq!(rc, 0, "tcgetattr: {}", std::io::Error::last_os_error());
            termios.c_lflag
        }
    }
}

/// A child process that is killed (SIGKILL) and reaped if it is still running when this
/// is dropped, so that a failing test leaves nothing behind.
pub struct Killed {
    child: Option<Child>,
}

impl Killed {
    /// Starts `command`; panics naming it if it cannot start.
    pub fn spawn(command: &mut Command) -> Self {
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("{command:?} does not start: {e}"));
        Self { child: Some(child) }
    }

    /// Its process id.
    pub fn id(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Whether it has exited.
    pub fn exited(&mut self) -> bool {
        self.child
            .as_mut()
            .expect("running")
            .try_wait()
            .expect("child status")
            .is_some()
    }

    /// Sends `signal` to it.
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) on our own child, which has not been reaped yet.
        unsafe { libc::kill(self.id() as libc::pid_t, signal) };
    }

    /// Waits at most `limit` for it to exit and returns its status and its piped output;
    /// kills it and panics if it does not exit in time.
    pub fn finish(&mut self, limit: Duration) -> Output {
        let deadline = Instant::now() + limit;
        while !self.exited() {
            if Instant::now() > deadline {
                let child = self.child.take().expect("running");
                kill(child);
                panic!("the child process did not finish within {limit:?}");
            }
            thread::sleep(Duration::from_millis(10));
        }
        self.child
            .take()
            .expect("running")
            .wait_with_output()
            .expect("child output")
    }
}

fn kill(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Killed {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            kill(child);
        }
    }
}
