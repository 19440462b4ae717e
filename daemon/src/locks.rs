//! One policy for a lock whose holder panicked: the others go on with what it guards.
//!
//! A panic in one of recd's threads is a bug, and it is logged where it happens (the
//! panic message goes to the journal). What recd's locks guard stays whole between
//! statements: counters, maps of plain values, the catalog's connection (whose
//! transactions roll back when dropped unfinished). Passing the panic on to every thread
//! that takes the lock next would stop recordings that still work, and lose what their
//! writers had not finished; so the lock is taken as it was left.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Locks `mutex`, whoever panicked while holding it before.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Waits on `condvar` for at most `timeout` with `guard`, as [`lock`] does.
pub fn wait_timeout<'a, T>(
    condvar: &Condvar,
    guard: MutexGuard<'a, T>,
    timeout: Duration,
) -> MutexGuard<'a, T> {
    match condvar.wait_timeout(guard, timeout) {
        Ok((guard, _)) => guard,
        Err(poisoned) => poisoned.into_inner().0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_whose_holder_panicked_is_taken_as_it_was_left() {
        let shared = std::sync::Arc::new(Mutex::new(1));
        let holder = shared.clone();
        let panicked = std::thread::spawn(move || {
            let mut value = holder.lock().unwrap();
            *value = 2;
            panic!("a bug while holding the lock");
        })
        .join();
        assert!(panicked.is_err());
        assert!(shared.is_poisoned());
        assert_eq!(*lock(&shared), 2);
    }
}
