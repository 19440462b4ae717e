//! Low CPU and idle I/O priority for the thread that finishes files (and the compression
//! threads it starts, which inherit both), so that a recording always comes first.
//!
//! SCHED_BATCH at nice 10 (as the uploader) rather than SCHED_IDLE at nice 19: on a CPU
//! kept busy by processes at normal priority, SCHED_IDLE gets nothing at all and nice 19
//! next to nothing (a weight of 15 against 1024 for each of them), so finishing never
//! ends; nice 10 gets about a tenth of what each of them gets (110 against 1024). How
//! much of the time it runs while recordings lose samples is the background policy's
//! (`crate::background`).

/// Finishing's nice value.
const NICE: libc::c_int = 10;

/// Puts the calling thread in SCHED_BATCH at nice 10 and in the idle I/O class; says why
/// when the kernel refused one of them.
pub fn lower_to_idle() -> Result<(), String> {
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
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, NICE) } != 0 {
        refused.push(format!("nice {NICE}: {}", std::io::Error::last_os_error()));
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
