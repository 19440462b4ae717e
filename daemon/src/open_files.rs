//! Room for thousands of topics: iceoryx2 keeps about five descriptors open per recorded
//! topic (BENCHMARKS.md, "Thousands of topics"), so a login shell's soft limit of 1,024
//! ends recording at about 200 topics. recd.service sets `LimitNOFILE`; run any other way,
//! recd raises its soft limit to the hard one, as the kernel lets any process do.

/// The soft and hard limits on open descriptors once the soft one is raised to the hard
/// one; the error of getrlimit or setrlimit if either refused.
pub fn raise_to_hard_limit() -> std::io::Result<(libc::rlim_t, libc::rlim_t)> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: setrlimit reads one rlimit; raising the soft limit up to the hard one
        // needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok((limit.rlim_cur, limit.rlim_max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as above; lowering the soft limit of this test process needs no privilege.
        unsafe {
            assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
            let lowered = libc::rlimit {
                rlim_cur: limit.rlim_cur.min(256),
                rlim_max: limit.rlim_max,
            };
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lowered), 0);
        }
        let (soft, hard) = raise_to_hard_limit().expect("raised");
        assert_eq!((soft, hard), (limit.rlim_max, limit.rlim_max));
        let mut now = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as above.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) }, 0);
        assert_eq!(
            now.rlim_cur, limit.rlim_max,
            "the process's own limit is raised"
        );
    }
}
