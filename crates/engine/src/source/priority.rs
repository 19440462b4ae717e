//! Receive threads run ahead of the writer and of the publishers.
//!
//! A receive thread does little work, but it must do it on time: a subscriber queue of 2
//! samples at 500 Hz overflows when the thread is 4 ms late, and on a machine whose cores
//! are busy (the writer copying into the page cache, the publishers, anything else the
//! ECU runs) an ordinary thread is that late. So receive threads ask for real-time
//! scheduling (`SCHED_FIFO`, `receive_priority`), which lets them preempt every ordinary
//! thread the moment they wake. Their work is bounded (see `shm::receive`'s pass limit,
//! and they sleep between passes), and the kernel keeps 5 % of each second for ordinary
//! threads besides (`kernel.sched_rt_runtime_us`). Without the privilege they fall back to
//! a nice boost, and say so.

/// How much nicer than the process the receive threads ask to be when they do not run
/// real-time.
const BOOST: i32 = 10;

/// How a receive thread got scheduled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scheduling {
    /// `SCHED_FIFO <priority>`, or `nice <value>`.
    pub description: String,
    /// Why it did not get the real-time priority asked for.
    pub warning: Option<String>,
}

/// Schedules the calling thread `SCHED_FIFO` at `priority` (1–99); with 0, or without
/// the privilege to (CAP_SYS_NICE, or an RLIMIT_RTPRIO of at least `priority`), raises its
/// priority by [`BOOST`] nice levels instead where it may.
pub(crate) fn schedule_this_thread(priority: u8) -> Scheduling {
    let mut warning = None;
    if priority > 0 {
        let param = libc::sched_param {
            sched_priority: i32::from(priority.min(99)),
        };
        // SAFETY: a plain syscall on the calling thread (pid 0) with a valid parameter.
        // SCHED_RESET_ON_FORK keeps anything the thread might start out of real time.
        let result = unsafe {
            libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param)
        };
        if result == 0 {
            return Scheduling {
                description: format!("SCHED_FIFO {}", param.sched_priority),
                warning: None,
            };
        }
        let error = std::io::Error::last_os_error();
        warning = Some(format!(
            "receive threads cannot run SCHED_FIFO {} ({error}): recd lacks CAP_SYS_NICE \
             (or an RLIMIT_RTPRIO of at least {}; the systemd unit grants both), so a busy \
             machine can make them late and publishers' queues overflow",
            param.sched_priority, param.sched_priority
        ));
    }
    Scheduling {
        description: format!("nice {}", nice_this_thread()),
        warning,
    }
}

/// Lowers the calling thread's nice value by 10 where permitted (as root, or with
/// CAP_SYS_NICE; otherwise nothing changes), for a thread that does little but must do
/// it on time beside ordinary ones; returns the nice value it has.
pub fn nice_this_thread() -> i32 {
    // SAFETY: plain syscalls on the calling thread; nothing is passed by pointer.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, tid);
        if *libc::__errno_location() != 0 {
            return 0;
        }
        if libc::setpriority(libc::PRIO_PROCESS, tid, (nice - BOOST).max(-20)) == 0 {
            (nice - BOOST).max(-20)
        } else {
            nice
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_a_thread(priority: u8) -> Scheduling {
        std::thread::spawn(move || schedule_this_thread(priority))
            .join()
            .unwrap()
    }

    #[test]
    fn zero_asks_for_no_real_time_and_warns_of_nothing() {
        let scheduling = on_a_thread(0);
        assert!(
            scheduling.description.starts_with("nice "),
            "{scheduling:?}"
        );
        assert_eq!(scheduling.warning, None);
    }

    #[test]
    fn real_time_is_granted_or_the_refusal_names_the_capability() {
        let scheduling = on_a_thread(10);
        match &scheduling.warning {
            None => assert_eq!(scheduling.description, "SCHED_FIFO 10"),
            Some(warning) => {
                assert!(warning.contains("CAP_SYS_NICE"), "{warning}");
                assert!(scheduling.description.starts_with("nice "));
            }
        }
    }
}
