//! What a held topic's reader gathered while its type was asked of the network.
//!
//! A held topic's reader is not the receive thread's yet, and rustdds' history evicts the
//! oldest samples beyond its depth (64 at first) whether or not anybody took them: a topic
//! at 300 Hz overflowed it within a quarter of a second of asking, and the samples lost
//! were the topic's first, before any sequence number recd could count a gap from. So the
//! discovery thread takes them into memory as they come, up to a bound in bytes (the
//! reader memory a topic's history may take); beyond it the oldest go, and are counted.

use std::collections::VecDeque;

use super::raw::RawSample;
use super::reader::Taken;

/// A sample taken from a held reader, and when it was taken (ns since the Unix epoch).
pub(super) struct Early {
    pub taken: Taken,
    pub at: u64,
}

/// The samples a held topic's reader gathered, oldest first.
pub(super) struct Gathered {
    samples: VecDeque<Early>,
    bytes: usize,
    bound: usize,
    let_go: u64,
}

impl Gathered {
    /// Gathers up to `bound` bytes of samples (always the newest one, however large).
    pub fn new(bound: usize) -> Self {
        Self {
            samples: VecDeque::new(),
            bytes: 0,
            bound,
            let_go: 0,
        }
    }

    /// Keeps `taken`, letting the oldest samples go while the bound is passed.
    pub fn add(&mut self, taken: Taken, at: u64) {
        self.bytes += size_of(&taken.sample);
        self.samples.push_back(Early { taken, at });
        while self.bytes > self.bound && self.samples.len() > 1 {
            if let Some(oldest) = self.samples.pop_front() {
                self.bytes -= size_of(&oldest.taken.sample);
                self.let_go += 1;
            }
        }
    }

    /// How many samples the bound let go.
    pub fn let_go(&self) -> u64 {
        self.let_go
    }

    /// How many samples are kept.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// The samples kept, oldest first.
    pub fn into_samples(self) -> Vec<Early> {
        self.samples.into()
    }
}

fn size_of(sample: &RawSample) -> usize {
    match sample {
        RawSample::Heap(cdr) => cdr.len(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustdds::GUID;

    fn sample(sequence: i64, bytes: usize) -> Taken {
        Taken {
            sample: RawSample::Heap(vec![0; bytes]),
            writer: GUID::GUID_UNKNOWN,
            sequence,
            source_time: None,
        }
    }

    fn sequences(gathered: Gathered) -> Vec<i64> {
        (gathered.into_samples().iter())
            .map(|e| e.taken.sequence)
            .collect()
    }

    #[test]
    fn samples_within_the_bound_are_all_kept_in_order() {
        let mut gathered = Gathered::new(1000);
        for sequence in 1..=10 {
            gathered.add(sample(sequence, 100), 0);
        }
        assert_eq!(gathered.let_go(), 0);
        assert_eq!(sequences(gathered), (1..=10).collect::<Vec<_>>());
    }

    #[test]
    fn beyond_the_bound_the_oldest_go_and_are_counted() {
        let mut gathered = Gathered::new(1000);
        for sequence in 1..=15 {
            gathered.add(sample(sequence, 100), 0);
        }
        assert_eq!(gathered.let_go(), 5);
        assert_eq!(gathered.len(), 10);
        assert_eq!(sequences(gathered), (6..=15).collect::<Vec<_>>());
    }

    #[test]
    fn a_sample_larger_than_the_bound_is_kept_alone() {
        let mut gathered = Gathered::new(1000);
        gathered.add(sample(1, 10), 0);
        gathered.add(sample(2, 5000), 0);
        assert_eq!(gathered.let_go(), 1);
        assert_eq!(sequences(gathered), vec![2]);
    }
}
