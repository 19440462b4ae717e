//! `rec play`'s keys on a terminal: space pauses and resumes, → sends the next message
//! while paused, ↑ and ↓ change the rate by 10 %. The terminal is put in cbreak mode
//! (keys arrive one by one, unechoed; Ctrl-C still stops) and restored when done.

use std::io::IsTerminal;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use recd_replay::Steering;

/// The line of help printed when keys steer the playback.
pub const HELP: &str =
    "keys: space pause/resume · → next message (paused) · ↑/↓ rate ±10% · Ctrl-C stop";

/// How much ↑ and ↓ change the rate.
const RATE_STEP: f64 = 1.1;

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Pause,
    Step,
    Faster,
    Slower,
}

/// Keys steering a playback until dropped; the terminal is restored then.
pub struct Keys {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    original: libc::termios,
}

impl Keys {
    /// Steers `steering` from stdin's keys, when stdin is a terminal.
    pub fn start(steering: Steering) -> Option<Self> {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return None;
        }
        let fd = stdin.as_raw_fd();
        // SAFETY: an all-zero termios is a valid value for tcgetattr to overwrite.
        let mut original: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` is stdin, open for the life of the process; `original` is writable.
        if unsafe { libc::tcgetattr(fd, &mut original) } != 0 {
            return None;
        }
        let mut cbreak = original;
        cbreak.c_lflag &= !(libc::ICANON | libc::ECHO);
        cbreak.c_cc[libc::VMIN] = 1;
        cbreak.c_cc[libc::VTIME] = 0;
        // SAFETY: as above; `cbreak` is a termios read from this terminal, changed.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &cbreak) } != 0 {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("recd-play-keys".into())
                .spawn(move || read_keys(fd, &steering, &stop))
                .ok()
        };
        Some(Self {
            stop,
            thread,
            original,
        })
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        // SAFETY: restores the settings read from this terminal at the start.
        unsafe { libc::tcsetattr(std::io::stdin().as_raw_fd(), libc::TCSANOW, &self.original) };
    }
}

/// Reads keys from `fd` and applies them until `stop`.
fn read_keys(fd: i32, steering: &Steering, stop: &AtomicBool) {
    let mut pending: Vec<u8> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, 100) };
        if ready <= 0 {
            continue;
        }
        let mut buffer = [0u8; 64];
        // SAFETY: reads at most the buffer's length into it.
        let read = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
        let Ok(read) = usize::try_from(read) else {
            return;
        };
        if read == 0 {
            return;
        }
        pending.extend_from_slice(&buffer[..read]);
        for key in parse_keys(&mut pending) {
            match key {
                Key::Pause => {
                    steering.toggle_pause();
                }
                Key::Step => steering.step(),
                Key::Faster => steering.set_rate(steering.rate() * RATE_STEP),
                Key::Slower => steering.set_rate(steering.rate() / RATE_STEP),
            }
        }
    }
}

/// The keys at the start of `bytes`, taken off; an escape sequence not yet complete
/// stays.
fn parse_keys(bytes: &mut Vec<u8>) -> Vec<Key> {
    let mut keys = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at..] {
            [b' ', ..] => {
                keys.push(Key::Pause);
                at += 1;
            }
            [0x1b, b'[', last, ..] | [0x1b, b'O', last, ..] => {
                keys.extend(match last {
                    b'A' => Some(Key::Faster),
                    b'B' => Some(Key::Slower),
                    b'C' => Some(Key::Step),
                    _ => None,
                });
                at += 3;
            }
            [0x1b] | [0x1b, b'[' | b'O'] => break,
            _ => at += 1,
        }
    }
    bytes.drain(..at);
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_arrows_are_recognized_and_a_split_sequence_waits() {
        let mut bytes = b" \x1b[C\x1b[A\x1bOBx\x1b[".to_vec();
        assert_eq!(
            parse_keys(&mut bytes),
            [Key::Pause, Key::Step, Key::Faster, Key::Slower]
        );
        assert_eq!(bytes, b"\x1b[");
        bytes.push(b'C');
        assert_eq!(parse_keys(&mut bytes), [Key::Step]);
        assert!(bytes.is_empty());
    }
}
