//! The spill pool: recorder memory that takes a large shared-memory sample when holding
//! it would use up the publisher's borrow budget.
//!
//! iceoryx2 lends a subscriber only so many samples per publisher
//! (`subscriber_max_borrowed_samples`, 2 by default). Were the writer to hold them all,
//! the receive thread could take no further sample, and the publisher would overwrite the
//! ones waiting in its queue without anyone knowing. So the last sample the budget allows
//! is copied here and released at once; when the pool is full the sample is taken and
//! dropped, counted.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::handoff::LoanedBytes;

/// A bounded amount of memory for spilled samples.
pub(crate) struct SpillPool {
    in_use: Arc<AtomicUsize>,
    limit: usize,
}

impl SpillPool {
    /// A pool that holds at most `limit` bytes at once.
    pub fn new(limit: usize) -> Self {
        Self {
            in_use: Arc::new(AtomicUsize::new(0)),
            limit,
        }
    }

    /// Copies a message (user header, then payload) into the pool; `None` when the pool
    /// has no room for it.
    pub fn spill(&self, user_header: &[u8], payload: &[u8]) -> Option<Spilled> {
        let len = user_header.len() + payload.len();
        let in_use = self.in_use.load(Ordering::Acquire);
        if in_use + len > self.limit {
            return None;
        }
        // Only the receive thread adds; the writer only subtracts, so the check holds.
        self.in_use.fetch_add(len, Ordering::AcqRel);
        let mut bytes = Vec::with_capacity(len);
        bytes.extend_from_slice(user_header);
        bytes.extend_from_slice(payload);
        Some(Spilled {
            bytes,
            header_len: user_header.len(),
            in_use: self.in_use.clone(),
        })
    }

    /// Bytes held by spilled samples now.
    #[cfg(test)]
    pub fn in_use(&self) -> usize {
        self.in_use.load(Ordering::Acquire)
    }
}

/// A spilled message; its bytes go back to the pool when it is dropped (once written).
pub(crate) struct Spilled {
    bytes: Vec<u8>,
    header_len: usize,
    in_use: Arc<AtomicUsize>,
}

impl LoanedBytes for Spilled {
    fn user_header(&self) -> &[u8] {
        &self.bytes[..self.header_len]
    }

    fn payload(&self) -> &[u8] {
        &self.bytes[self.header_len..]
    }
}

impl Drop for Spilled {
    fn drop(&mut self) {
        self.in_use.fetch_sub(self.bytes.len(), Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_is_bounded_and_gets_its_bytes_back() {
        let pool = SpillPool::new(100);
        let first = pool.spill(&[1, 2], &[3; 58]).unwrap();
        assert_eq!(first.user_header(), &[1, 2]);
        assert_eq!(first.payload(), &[3; 58]);
        assert!(pool.spill(&[], &[4; 41]).is_none(), "60 + 41 > 100");
        let second = pool.spill(&[], &[5; 40]).unwrap();
        assert_eq!(pool.in_use(), 100);
        drop(first);
        assert_eq!(pool.in_use(), 40);
        drop(second);
        assert_eq!(pool.in_use(), 0);
    }
}
