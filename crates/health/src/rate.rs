//! Samples counted over a sliding 1 s window in 100 ms slots: a fixed array, no
//! allocation.

/// Slots in the window.
const SLOTS: u64 = 10;
/// One slot, in ns.
pub(crate) const SLOT_NS: u64 = 100_000_000;

/// Samples per 100 ms slot of the last second (plus the slot now filling).
#[derive(Debug, Clone, Default)]
pub(crate) struct RateWindow {
    /// Counts by slot number modulo the array's length.
    counts: [u32; SLOTS as usize + 1],
    /// The newest slot number (ns / `SLOT_NS`) counted so far.
    head: u64,
}

impl RateWindow {
    /// Counts a sample at `t_ns` (one more than a second older than the newest is
    /// ignored).
    pub fn add(&mut self, t_ns: u64) {
        let slot = t_ns / SLOT_NS;
        self.advance(slot);
        if slot + SLOTS < self.head {
            return;
        }
        let len = self.counts.len() as u64;
        self.counts[(slot % len) as usize] += 1;
    }

    /// Samples in the last complete second before `now_ns`: the ten whole slots before the
    /// one `now_ns` falls in.
    pub fn last_second(&mut self, now_ns: u64) -> u32 {
        let now = now_ns / SLOT_NS;
        self.advance(now);
        let len = self.counts.len() as u64;
        (1..=SLOTS)
            .filter_map(|back| now.checked_sub(back))
            .map(|slot| self.counts[(slot % len) as usize])
            .sum()
    }

    /// Moves the head to `slot`, emptying the slots it passes.
    fn advance(&mut self, slot: u64) {
        if slot <= self.head {
            return;
        }
        let len = self.counts.len() as u64;
        let passed = (slot - self.head).min(len);
        for step in 0..passed {
            self.counts[((slot - step) % len) as usize] = 0;
        }
        self.head = slot;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn counts_the_last_whole_second() {
        let mut window = RateWindow::default();
        let start = 1_000_000 * SLOT_NS;
        // 50 Hz for 3 s.
        for i in 0..150 {
            window.add(start + i * 20 * MS);
        }
        assert_eq!(window.last_second(start + 3000 * MS), 50);
        // 200 ms later, the last second holds 40 of them.
        assert_eq!(window.last_second(start + 3200 * MS), 40);
        // Long after: nothing.
        assert_eq!(window.last_second(start + 60_000 * MS), 0);
        window.add(start + 60_010 * MS);
        assert_eq!(window.last_second(start + 60_150 * MS), 1);
    }
}
