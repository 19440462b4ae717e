//! Receive threads run ahead of the writer and of the publishers.
//!
//! A receive thread does little work, but it must do it on time: a subscriber queue of 2
//! samples at 30 fps overflows when the thread is 60 ms late, and on a machine whose
//! cores are busy copying frames (the writer into the page cache, the publishers into
//! shared memory) the scheduler made it that late. A lower nice value lets it preempt
//! them when it wakes.

/// How much nicer than the process the receive threads ask to be.
const BOOST: i32 = 10;

/// Raises the calling thread's scheduling priority by [`BOOST`] nice levels; without the
/// privilege to (CAP_SYS_NICE, or an RLIMIT_NICE that allows it) the thread keeps the
/// process's priority.
pub(crate) fn favour_this_thread() {
    // SAFETY: plain syscalls on the calling thread; nothing is passed by pointer.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, tid);
        if *libc::__errno_location() != 0 {
            return;
        }
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid, (nice - BOOST).max(-20));
    }
}
