//! Reading back 256 MiB sealed by `SealedWriter`, in 1 MiB reads: `SealedReader` (one
//! chunk opened in place at a time) against the age crate's own streaming reader.

use std::hint::black_box;
use std::io::{Cursor, Read, Write};

use age::secrecy::ExposeSecret;
use age::x25519::Identity;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use recd_seal::{Identities, Recipients, SealedReader, SealedWriter};

const TOTAL: usize = 256 << 20;
const READ: usize = 1 << 20;

/// Reads `reader` to its end in 1 MiB reads; the bytes read.
fn drain(mut reader: impl Read, buffer: &mut [u8]) -> usize {
    let mut total = 0;
    loop {
        match reader.read(buffer).unwrap() {
            0 => return total,
            n => total += black_box(n),
        }
    }
}

fn bench(c: &mut Criterion) {
    let mut data = vec![0u8; TOTAL];
    fastrand::Rng::with_seed(55).fill(&mut data);
    let identity = Identity::generate();
    let recipients = Recipients::parse(&[identity.to_public().to_string()]).unwrap();
    let identities = Identities::parse(&[identity.to_string().expose_secret().to_owned()]).unwrap();
    let mut writer = SealedWriter::new(Vec::new(), &recipients).unwrap();
    writer.write_all(&data).unwrap();
    let sealed = writer.finish().unwrap();
    drop(data);

    let mut group = c.benchmark_group("open_256MiB_in_1MiB_reads");
    group.throughput(Throughput::Bytes(TOTAL as u64));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    let mut buffer = vec![0u8; READ];

    group.bench_function("recd-seal SealedReader", |b| {
        b.iter(|| {
            let reader = SealedReader::open(Cursor::new(&sealed), &identities).unwrap();
            assert_eq!(drain(reader, &mut buffer), TOTAL);
        })
    });

    group.bench_function("age crate's StreamReader", |b| {
        b.iter(|| {
            let decryptor = age::Decryptor::new(Cursor::new(&sealed)).unwrap();
            let reader = decryptor
                .decrypt(std::iter::once(&identity as &dyn age::Identity))
                .unwrap();
            assert_eq!(drain(reader, &mut buffer), TOTAL);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
