//! Threads that must never hold up a recording give way to it.
//!
//! The uploader reads finished files and the HTTP listener answers whoever connects, as
//! fast as they are asked; on an ECU with two cores, either at the recording's priority
//! takes CPU time and disk reads from its writers. They run nice 10 and at the lowest
//! best-effort I/O priority instead, so that the recording's threads always go first and
//! they use what is left. Threads they start inherit both.

#![warn(missing_docs)]

/// The nice value of a thread that gives way.
pub const NICE: i32 = 10;

/// Lowers the calling thread's CPU priority to nice [`NICE`], then its I/O priority to
/// the lowest best-effort class; the error is the first change the kernel refused.
pub fn give_way() -> std::io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_int = 1;
    const IOPRIO_CLASS_BE: libc::c_int = 2;
    const IOPRIO_CLASS_SHIFT: libc::c_int = 13;
    const LOWEST_BEST_EFFORT: libc::c_int = 7;
    // SAFETY: setpriority and ioprio_set on the calling thread (its tid / 0) take plain
    // integers and touch no memory of ours.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        if libc::setpriority(libc::PRIO_PROCESS, tid, NICE) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            (IOPRIO_CLASS_BE << IOPRIO_CLASS_SHIFT) | LOWEST_BEST_EFFORT,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_gives_way_runs_nice_10_and_threads_it_starts_too() {
        let (own, child) = std::thread::spawn(|| {
            give_way().unwrap();
            let child = std::thread::spawn(this_thread_nice).join().unwrap();
            (this_thread_nice(), child)
        })
        .join()
        .unwrap();
        assert_eq!((own, child), (NICE, NICE));
        // Only the thread that asked: the test's own thread keeps its priority.
        assert_ne!(this_thread_nice(), NICE);
    }

    fn this_thread_nice() -> i32 {
        // SAFETY: getpriority on the calling thread takes plain integers.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }
}
