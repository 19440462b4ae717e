//! Threads that must never hold up a recording give way to it, in one of two ways; this
//! is the one home of both and of their priorities.
//!
//! - [`give_way`]: the uploader reads finished files and the HTTP listener answers whoever
//!   connects, as fast as they are asked; on an ECU with two cores, either at the
//!   recording's priority takes CPU time and disk reads from its writers. They run nice
//!   [`NICE`] and at the lowest best-effort I/O priority instead, so that the recording's
//!   threads always go first and they use what is left.
//! - [`lower_to_background`]: finishing files (and the compression threads it starts),
//!   cutting incidents and chaining files run in SCHED_BATCH at nice
//!   [`BACKGROUND_NICE`] and in the idle I/O class. Not SCHED_IDLE, nor a high nice
//!   value: on a CPU kept busy by processes at normal priority (a vehicle's perception),
//!   SCHED_IDLE gets nothing at all and nice 19 or 10 next to nothing (weights of 15 or
//!   110 against 1024 for each of them): finishing never ended (measured: 1 file of 256
//!   MiB in 5.6 minutes at nice 10 beside two CPU hogs). SCHED_BATCH at nice 0 gets a
//!   normal process's share and never preempts one on waking; what keeps it out of the
//!   recording's way is recd's background policy (a pace, windows kept off, backing off
//!   when the recordings lose more with it).
//!
//! Threads they start inherit both.

#![warn(missing_docs)]

/// The nice value of a thread that gives way ([`give_way`]).
pub const NICE: i32 = 10;

/// The nice value of a background thread ([`lower_to_background`]).
pub const BACKGROUND_NICE: i32 = 0;

/// Puts the calling thread in SCHED_BATCH at nice [`BACKGROUND_NICE`] and in the idle
/// I/O class; says why when the kernel refused one of them.
pub fn lower_to_background() -> Result<(), String> {
    let mut refused = Vec::new();
    // SAFETY: sched_param is plain old data; pid 0 is the calling thread.
    let scheduled = unsafe {
        let parameters: libc::sched_param = std::mem::zeroed();
        libc::sched_setscheduler(0, libc::SCHED_BATCH, &parameters)
    };
    if scheduled != 0 {
        refused.push(format!("SCHED_BATCH: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: plain syscall on the calling thread (who 0 = this thread).
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, BACKGROUND_NICE) } != 0 {
        refused.push(format!(
            "nice {BACKGROUND_NICE}: {}",
            std::io::Error::last_os_error()
        ));
    }
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    const IOPRIO_CLASS_IDLE: libc::c_long = 3;
    const IOPRIO_CLASS_SHIFT: libc::c_long = 13;
    // SAFETY: ioprio_set takes three integers; 0 names the calling thread.
    let io = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT,
        )
    };
    if io != 0 {
        refused.push(format!(
            "idle I/O class: {}",
            std::io::Error::last_os_error()
        ));
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(refused.join(", "))
    }
}

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

    #[test]
    fn a_background_thread_runs_sched_batch_in_the_idle_io_class() {
        let (policy, io_class) = std::thread::spawn(|| {
            lower_to_background().unwrap();
            // SAFETY: plain syscalls on the calling thread.
            unsafe {
                (
                    libc::sched_getscheduler(0),
                    libc::syscall(libc::SYS_ioprio_get, 1 as libc::c_long, 0 as libc::c_long) >> 13,
                )
            }
        })
        .join()
        .unwrap();
        assert_eq!((policy, io_class), (libc::SCHED_BATCH, 3));
    }

    fn this_thread_nice() -> i32 {
        // SAFETY: getpriority on the calling thread takes plain integers.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }
}
