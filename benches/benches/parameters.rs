//! What the nodes' parameters cost the writer thread at a split (`rec start --parameters`):
//! the writer puts one Metadata record per node into the new file, copying what the
//! reading thread read and encoded (`writer`); `encode` is that thread's share, and
//! `encode-and-write` both on one thread, as a first version had it. Measured for a small
//! stack (20 nodes of 50 parameters) and a large one (200 nodes of 100), written into an
//! open file on /dev/shm (the temp directory without it), against the target of at most
//! 1 ms per split.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use recd_storage::iceoryx2::parameters_metadata_name;
use recd_storage::{EncodedMetadata, StreamWriter, WriterOptions};

/// `nodes` nodes of `parameters` parameters each, valued as the YAML a file keeps.
fn stack(nodes: usize, parameters: usize) -> Vec<(String, BTreeMap<String, String>)> {
    (0..nodes)
        .map(|n| {
            let values = (0..parameters)
                .map(|p| {
                    let value = match p % 4 {
                        0 => format!("{}.5", p),
                        1 => format!("{p}"),
                        2 => format!("'frame_{p}_link'"),
                        _ => "[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]".to_string(),
                    };
                    (format!("group_{}.parameter_{p}", p % 5), value)
                })
                .collect();
            (format!("/vehicle/stack/node_{n}"), values)
        })
        .collect()
}

fn parameters_at_split(c: &mut Criterion) {
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        tempfile::tempdir_in("/dev/shm").unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let mut group = c.benchmark_group("parameters-at-split");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (nodes, parameters) in [(20, 50), (200, 100)] {
        let stack = stack(nodes, parameters);
        let path = dir.path().join(format!("split_{nodes}.mcap"));
        let name = |node| parameters_metadata_name("drive_0001.mcap", node);
        // Each split's records go into a fresh file (a file of every iteration's would fill
        // /dev/shm); only the writing is timed.
        let timed = |iterations: u64, write: &dyn Fn(&mut StreamWriter)| {
            let mut spent = Duration::ZERO;
            for _ in 0..iterations {
                let _ = std::fs::remove_file(&path);
                let mut file = StreamWriter::create(&path, WriterOptions::default()).unwrap();
                let started = Instant::now();
                write(&mut file);
                spent += started.elapsed();
                file.close().unwrap();
            }
            spent
        };
        // What the writer does: copy the records the reading thread encoded.
        let encoded: Vec<EncodedMetadata> = (stack.iter())
            .map(|(node, values)| EncodedMetadata::new(&name(node), values).unwrap())
            .collect();
        let size = format!("{nodes}x{parameters}");
        group.bench_function(BenchmarkId::new("writer", &size), |b| {
            b.iter_custom(|iterations| {
                timed(iterations, &|file| {
                    for record in &encoded {
                        file.add_encoded_metadata(record).unwrap();
                    }
                })
            })
        });
        // What the reading thread does once per node and file.
        group.bench_function(BenchmarkId::new("encode", &size), |b| {
            b.iter(|| {
                for (node, values) in &stack {
                    std::hint::black_box(EncodedMetadata::new(&name(node), values).unwrap());
                }
            })
        });
        // Both on the writer, as a first version did.
        group.bench_function(BenchmarkId::new("encode-and-write", &size), |b| {
            b.iter_custom(|iterations| {
                timed(iterations, &|file| {
                    for (node, values) in &stack {
                        file.add_metadata(&name(node), values).unwrap();
                    }
                })
            })
        });
        let _ = std::fs::remove_file(&path);
    }
    group.finish();
}

criterion_group!(benches, parameters_at_split);
criterion_main!(benches);
