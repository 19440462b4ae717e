//! Keys out of core dumps and swap: where recd holds keys (sealing's file keys, the
//! signing key), a crash must not write them to disk, nor may memory pressure. The unit
//! sets `LimitCORE=0`; [`forbid`] is the same promise where recd runs without it (by hand,
//! in a container, under another manager). The keys themselves live in locked pages left
//! out of core dumps ([`recd_locked::Locked`]); [`keys_may_swap`] tells whether such a
//! page can be locked here.

use recd_locked::Locked;

/// Makes this process undumpable (`PR_SET_DUMPABLE` 0): no core file on a crash or an
/// abort, whatever `ulimit -c` says, and no `ptrace` by other users. Inherited by threads,
/// not undone by recd itself.
pub fn forbid() -> std::io::Result<()> {
    // SAFETY: prctl(2) with PR_SET_DUMPABLE takes one integer argument and changes only
    // this process's dumpable flag.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Why the keys recd is about to hold may be written to swap, if they may: a probe key
/// page, made as each key's is, that the kernel would not lock into memory. `None` when
/// it locked.
pub fn keys_may_swap() -> Option<String> {
    let cause = match Locked::new([0u8; 32]) {
        Ok(probe) if probe.is_locked() => return None,
        Ok(_) => format!(
            "a key page could not be locked into memory (mlock): RLIMIT_MEMLOCK is {} and \
             recd lacks CAP_IPC_LOCK",
            memlock_limit()
        ),
        Err(error) => error.to_string(),
    };
    Some(format!(
        "keys may reach swap: {cause}; raise the unit's LimitMEMLOCK (each key held takes \
         one 4 KiB page; docs/operations.md, \"Keys out of core dumps and swap\") or give \
         recd CAP_IPC_LOCK, or use encrypted swap"
    ))
}

/// Logs [`keys_may_swap`]'s cause as one warning, if there is one.
pub fn warn_if_keys_may_swap() {
    if let Some(warning) = keys_may_swap() {
        tracing::warn!("{warning}");
    }
}

/// This process's soft `RLIMIT_MEMLOCK`, as a size (or "unlimited").
fn memlock_limit() -> String {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes one rlimit into `limit`, which lives across the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut limit) } != 0 {
        return "unknown".into();
    }
    if limit.rlim_cur == libc::RLIM_INFINITY {
        return "unlimited".into();
    }
    bytesize::ByteSize::b(limit.rlim_cur).to_string()
}
