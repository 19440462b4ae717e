//! The priorities of background threads (finishing files and the compression threads it
//! starts, which inherit them; cutting incidents; chaining files): the idle I/O class,
//! and SCHED_BATCH at nice 0.
//!
//! Not SCHED_IDLE, nor a high nice value: on a CPU kept busy by processes at normal
//! priority (a vehicle's perception), SCHED_IDLE gets nothing at all and nice 19 or 10
//! next to nothing (weights of 15 or 110 against 1024 for each of them): finishing never
//! ended (measured: 1 file of 256 MiB in 5.6 minutes at nice 10 beside two CPU hogs).
//! SCHED_BATCH at nice 0 gets a normal process's share and never preempts one on waking.
//! What keeps it out of the recording's way is the background policy
//! (the rest of this module): one compression thread on 2 cores, a pace, windows kept off,
//! and backing off when the recordings lose more with it.

/// Finishing's nice value.
const NICE: libc::c_int = 0;

/// Puts the calling thread in SCHED_BATCH at nice [`NICE`] and in the idle I/O class;
/// says why when the kernel refused one of them.
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
