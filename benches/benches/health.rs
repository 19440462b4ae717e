//! What topic health costs the writer: one second of small100 (100 topics × 1 kHz) fed to
//! the per-topic state machines and checked every 20 ms, as the writer does, against the
//! one copy of each 100-byte message the recorder makes anyway (the reference).
//!
//! `cargo bench -p recd-benches --bench health`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use recd_health::TopicWatch;

const TOPICS: usize = 100;
const RATE_HZ: u64 = 1000;
const MESSAGE_BYTES: usize = 100;
const CHECK_EVERY_MS: u64 = 20;
const MS: u64 = 1_000_000;
const T0: u64 = 1_700_000_000_000 * MS;

/// One second of small100 through the health watch: every sample seen, every topic
/// checked every 20 ms.
fn one_second_watched(watches: &mut [TopicWatch], second: u64) -> usize {
    let mut changes = 0;
    for ms in 0..1000 {
        let now = T0 + (second * 1000 + ms) * MS;
        for watch in watches.iter_mut() {
            watch.saw(black_box(now));
        }
        if ms % CHECK_EVERY_MS == 0 {
            changes += watches.iter_mut().filter_map(|w| w.check(now)).count();
        }
    }
    changes
}

/// One second of small100's messages copied once into a ring, as the hand-over does.
fn one_second_copied(ring: &mut [u8], message: &[u8]) {
    let mut at = 0;
    for _ in 0..RATE_HZ as usize * TOPICS {
        if at + message.len() > ring.len() {
            at = 0;
        }
        ring[at..at + message.len()].copy_from_slice(black_box(message));
        at += message.len();
    }
    black_box(&ring);
}

fn health(c: &mut Criterion) {
    let mut group = c.benchmark_group("small100_one_second");
    group.throughput(Throughput::Elements(RATE_HZ * TOPICS as u64));
    let mut watches: Vec<TopicWatch> = (0..TOPICS).map(|_| TopicWatch::new(None)).collect();
    let mut second = 0;
    group.bench_function("health_watch", |b| {
        b.iter(|| {
            second += 1;
            one_second_watched(&mut watches, second)
        })
    });
    let mut ring = vec![0u8; 4 << 20];
    let message = [7u8; MESSAGE_BYTES];
    group.bench_function("copy_100_bytes_reference", |b| {
        b.iter(|| one_second_copied(&mut ring, &message))
    });
    group.finish();
}

criterion_group!(benches, health);
criterion_main!(benches);
