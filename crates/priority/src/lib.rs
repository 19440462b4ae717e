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
//!   when the recordings lose more with it). Its slice is the shortest the kernel allows
//!   ([`BACKGROUND_SLICE_NS`], Linux 6.12 on; older kernels ignore it): the same share of
//!   the CPU, handed back to a woken process within 0.1 ms rather than up to a scheduler
//!   tick later (4 ms at 250 Hz: two periods of a 500 Hz publisher). Measured on a 2-core
//!   VM: a SCHED_BATCH loop cost a recording's 2-deep queues 433 and 613 samples in 40 s
//!   with the default slice, 111 and 288 with this one, 74 and 220 with nothing beside.
//!
//! Threads they start inherit both.

#![warn(missing_docs)]

/// The nice value of a thread that gives way ([`give_way`]).
pub const NICE: i32 = 10;

/// The nice value of a background thread ([`lower_to_background`]).
pub const BACKGROUND_NICE: i32 = 0;

/// The slice of a background thread in ns: the shortest the kernel takes.
pub const BACKGROUND_SLICE_NS: u64 = 100_000;

/// The kernel's `struct sched_attr` (its first version, 56 bytes).
#[repr(C)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    /// The slice, for SCHED_OTHER and SCHED_BATCH (Linux 6.12 on).
    runtime: u64,
    deadline: u64,
    period: u64,
    util_min: u32,
    util_max: u32,
}

/// Puts the calling thread in SCHED_BATCH at nice [`BACKGROUND_NICE`] with a slice of
/// [`BACKGROUND_SLICE_NS`], and in the idle I/O class; says why when the kernel refused
/// one of them.
pub fn lower_to_background() -> Result<(), String> {
    let mut refused = Vec::new();
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        policy: libc::SCHED_BATCH as u32,
        flags: 0,
        nice: BACKGROUND_NICE,
        priority: 0,
        runtime: BACKGROUND_SLICE_NS,
        deadline: 0,
        period: 0,
        util_min: 0,
        util_max: 0,
    };
    // SAFETY: sched_setattr reads the struct we own, of the size it states; pid 0 is the
    // calling thread.
    let with_slice = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr, 0) } == 0;
    if !with_slice {
        // A kernel or a seccomp filter without sched_setattr: SCHED_BATCH and the nice
        // value one call each (sched_setattr set both).
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

    #[test]
    fn a_background_thread_and_those_it_starts_take_the_shortest_slice() {
        // Kernels before 6.12 have no slice of their own per thread (nor the line).
        let slice = || {
            std::fs::read_to_string("/proc/thread-self/sched")
                .unwrap()
                .lines()
                .find(|line| line.starts_with("se.slice"))
                .map(|line| line.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        };
        let Some(default) = slice() else { return };
        let (own, child, nice) = std::thread::spawn(move || {
            // SAFETY: setpriority on the calling thread takes plain integers.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 5) };
            lower_to_background().unwrap();
            let nice = this_thread_nice();
            (slice(), std::thread::spawn(slice).join().unwrap(), nice)
        })
        .join()
        .unwrap();
        assert_eq!(
            (own, child),
            (Some(BACKGROUND_SLICE_NS), Some(BACKGROUND_SLICE_NS))
        );
        assert_eq!(nice, BACKGROUND_NICE, "the same call sets the nice value");
        assert_ne!(
            default, BACKGROUND_SLICE_NS,
            "the test's own thread keeps its slice"
        );
    }

    fn this_thread_nice() -> i32 {
        // SAFETY: getpriority on the calling thread takes plain integers.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }
}
