//! Sealing 256 MiB written in 1 MiB pieces, against copying the same bytes (the reference:
//! what a plain write costs in memory), against the age crate's own streaming writer, and
//! against Debian's `age` CLI encrypting the same bytes from a pipe into /dev/null (left out
//! where `age` is not installed).

use std::hint::black_box;
use std::io::{self, Write};

use age::x25519::Identity;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use recd_seal::{Recipients, SealedWriter};

const TOTAL: usize = 256 << 20;
const WRITE: usize = 1 << 20;

fn bench(c: &mut Criterion) {
    let mut data = vec![0u8; TOTAL];
    fastrand::Rng::with_seed(55).fill(&mut data);
    let identity = Identity::generate();
    let recipients = Recipients::parse(&[identity.to_public().to_string()]).unwrap();

    let mut group = c.benchmark_group("seal_256MiB_in_1MiB_writes");
    group.throughput(Throughput::Bytes(TOTAL as u64));
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);

    group.bench_function("copy (reference)", |b| {
        let mut buffer = vec![0u8; WRITE];
        b.iter(|| {
            let mut sink = io::sink();
            for piece in data.chunks(WRITE) {
                buffer.copy_from_slice(piece);
                sink.write_all(black_box(&buffer)).unwrap();
            }
        })
    });

    group.bench_function("recd-seal (ring ChaCha20-Poly1305)", |b| {
        b.iter(|| {
            let mut writer = SealedWriter::new(io::sink(), &recipients).unwrap();
            for piece in data.chunks(WRITE) {
                writer.write_all(piece).unwrap();
            }
            writer.finish().unwrap()
        })
    });

    group.bench_function("age crate's StreamWriter", |b| {
        let recipient = identity.to_public();
        b.iter(|| {
            let encryptor =
                age::Encryptor::with_recipients(std::iter::once(&recipient as &dyn age::Recipient))
                    .unwrap();
            let mut writer = encryptor.wrap_output(io::sink()).unwrap();
            for piece in data.chunks(WRITE) {
                writer.write_all(piece).unwrap();
            }
            writer.finish().unwrap()
        })
    });
    if std::process::Command::new("age")
        .arg("--version")
        .output()
        .is_ok()
    {
        let recipient = identity.to_public().to_string();
        group.bench_function("Debian's age CLI (pipe in, /dev/null out)", |b| {
            b.iter(|| {
                let mut age = std::process::Command::new("age")
                    .args(["-r", &recipient, "-o", "/dev/null"])
                    .stdin(std::process::Stdio::piped())
                    .spawn()
                    .unwrap();
                let mut stdin = age.stdin.take().unwrap();
                for piece in data.chunks(WRITE) {
                    stdin.write_all(piece).unwrap();
                }
                drop(stdin);
                assert!(age.wait().unwrap().success());
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
