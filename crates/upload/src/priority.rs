//! The uploader's threads give way: the lowest best-effort I/O priority and nice 10, so
//! that the recordings' writers and receivers always go first.

/// Lowers the calling thread's I/O and CPU priority.
pub(crate) fn lower_this_thread() -> std::io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_int = 1;
    const IOPRIO_CLASS_BE: libc::c_int = 2;
    const IOPRIO_CLASS_SHIFT: libc::c_int = 13;
    const LOWEST_BEST_EFFORT: libc::c_int = 7;
    // SAFETY: ioprio_set and setpriority on the calling thread (0 / its tid) take plain
    // integers and touch no memory of ours.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 10);
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
