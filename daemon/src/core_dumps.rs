//! Keys out of core dumps: where recd holds keys (sealing's file keys, the signing key),
//! a crash must not write them to disk. The unit sets `LimitCORE=0`; this is the same
//! promise where recd runs without it (by hand, in a container, under another manager).

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
