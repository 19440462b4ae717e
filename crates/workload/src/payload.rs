//! Generators of sensor-like payloads.

/// An RGB8 frame of `width`×`height`: a lit scene of smooth gradients and a few hard-edged
/// objects, plus per-pixel sensor noise. `seed` moves the objects and changes the noise.
pub fn camera_frame(width: usize, height: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let objects: Vec<(usize, usize, usize, [u8; 3])> = (0..6)
        .map(|_| {
            let size = rng.usize(width.max(8) / 16..width.max(8) / 4);
            let color = [rng.u8(..), rng.u8(..), rng.u8(..)];
            (
                rng.usize(..width.max(1)),
                rng.usize(..height.max(1)),
                size,
                color,
            )
        })
        .collect();
    let mut frame = Vec::with_capacity(width * height * 3);
    for y in 0..height {
        for x in 0..width {
            let sky = (255 * y / height.max(1)) as u8;
            let mut pixel = [sky / 2 + 60, sky / 2 + 80, 200 - sky / 2];
            for &(ox, oy, size, color) in &objects {
                if x.abs_diff(ox) < size && y.abs_diff(oy) < size / 2 {
                    pixel = color;
                }
            }
            let noise = rng.u8(..8);
            frame.extend(pixel.iter().map(|c| c.saturating_add(noise)));
        }
    }
    frame
}

/// A lidar scan of `points` points, each x, y, z, intensity as little-endian f32: rings of
/// returns at ranges that vary smoothly, with noise.
pub fn lidar_scan(points: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let rings = 32;
    let mut scan = Vec::with_capacity(points * 16);
    for i in 0..points {
        let ring = (i % rings) as f32;
        let azimuth = (i / rings) as f32 * 0.0035;
        let range = 8.0 + 20.0 * (azimuth * 3.0).sin().abs() + rng.f32() * 0.05;
        let elevation = (ring - 16.0) * 0.035;
        let values = [
            range * azimuth.cos() * elevation.cos(),
            range * azimuth.sin() * elevation.cos(),
            range * elevation.sin(),
            (rng.f32() * 100.0).round(),
        ];
        for value in values {
            scan.extend_from_slice(&value.to_le_bytes());
        }
    }
    scan
}

/// An IMU sample: sequence number, orientation quaternion, angular velocity and linear
/// acceleration as little-endian f64 (112 bytes), gravity plus noise drawn from `seed`.
pub fn imu_sample(sequence: u64, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut sample = Vec::with_capacity(112);
    sample.extend_from_slice(&sequence.to_le_bytes());
    let t = sequence as f64 * 1e-3;
    let values = [
        (t * 0.1).cos(),
        0.0,
        0.0,
        (t * 0.1).sin(),
        rng.f64() * 0.01,
        rng.f64() * 0.01,
        0.02 + rng.f64() * 0.01,
        rng.f64() * 0.1,
        rng.f64() * 0.1,
        9.81 + rng.f64() * 0.05,
        0.0,
        0.0,
        0.0,
    ];
    for value in values {
        sample.extend_from_slice(&value.to_le_bytes());
    }
    sample
}

/// `len` bytes cut from a mix of camera, lidar and IMU data, for benchmarks that need a
/// given message size with real-looking content.
pub fn mixed_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut bytes = Vec::with_capacity(len + 4096);
    let mut part = 0u64;
    while bytes.len() < len {
        let piece = match part % 3 {
            0 => camera_frame(64, 48, seed + part),
            1 => lidar_scan(512, seed + part),
            _ => imu_sample(part, rng.u64(..)),
        };
        bytes.extend_from_slice(&piece);
        part += 1;
    }
    bytes.truncate(len);
    bytes
}

/// A few distinct payloads of one kind, handed out in turn with the message's sequence
/// number stamped into the first 8 bytes, so that consecutive messages differ without
/// generating a new payload each time.
#[derive(Debug, Clone)]
pub struct PayloadPool {
    payloads: Vec<Vec<u8>>,
}

impl PayloadPool {
    /// A pool of `variants` payloads made by `make(seed)`.
    pub fn new(variants: usize, make: impl Fn(u64) -> Vec<u8>) -> Self {
        Self {
            payloads: (0..variants.max(1) as u64).map(make).collect(),
        }
    }

    /// The payload for message `sequence`.
    pub fn payload(&mut self, sequence: u64) -> &[u8] {
        let index = (sequence % self.payloads.len() as u64) as usize;
        let payload = &mut self.payloads[index];
        let stamp = sequence.to_le_bytes();
        let n = stamp.len().min(payload.len());
        payload[..n].copy_from_slice(&stamp[..n]);
        payload
    }

    /// Size of the payloads in bytes (of the first, when they differ).
    pub fn payload_len(&self) -> usize {
        self.payloads[0].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_produce_the_requested_sizes() {
        assert_eq!(camera_frame(32, 24, 1).len(), 32 * 24 * 3);
        assert_eq!(lidar_scan(100, 1).len(), 1600);
        assert_eq!(imu_sample(5, 1).len(), 112);
        assert_eq!(mixed_bytes(10_000, 3).len(), 10_000);
    }

    #[test]
    fn content_is_neither_constant_nor_random() {
        let frame = camera_frame(64, 48, 7);
        let distinct: std::collections::HashSet<_> = frame.iter().collect();
        assert!(distinct.len() > 16, "a frame of near-constant bytes");
        // The same colour channel of horizontally neighbouring pixels.
        let alike = (0..frame.len() - 3)
            .filter(|&i| frame[i].abs_diff(frame[i + 3]) < 16)
            .count();
        assert!(
            alike > frame.len() / 2,
            "neighbouring pixels should be alike"
        );
    }

    #[test]
    fn pool_stamps_sequence_numbers() {
        let mut pool = PayloadPool::new(2, |seed| mixed_bytes(64, seed));
        assert_eq!(pool.payload(41)[..8], 41u64.to_le_bytes());
        assert_eq!(pool.payload(42)[..8], 42u64.to_le_bytes());
    }
}
