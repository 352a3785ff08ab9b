//! Checks with a real compressor (DEFLATE, as compressing SSD controllers and tools use) that
//! the data patterns compress as their names promise: `random` not at all, `zeros` almost
//! entirely, and `compressible:N` to about (100 − N)% of its size, including after the
//! per-write stamp the worker adds.

use crate::pattern::{fill, stamp, PATTERN_CHUNK_BYTES};
use flate2::write::DeflateEncoder;
use flate2::Compression;
use std::io::Write;
use storlab_job::DataPattern;

/// Size of the sample: many chunks, so per-chunk overheads average out.
const SAMPLE_BYTES: usize = 256 * PATTERN_CHUNK_BYTES;
/// Allowed distance from the promised share, in percentage points: DEFLATE's own framing and
/// Huffman tables cost a little on the random part.
const TOLERANCE_POINTS: f64 = 3.0;

/// Compressed size as a percentage of the original.
fn compressed_percent(data: &[u8]) -> f64 {
    let mut encoder = DeflateEncoder::new(Vec::new(), Compression::best());
    encoder.write_all(data).expect("in-memory write");
    let compressed = encoder.finish().expect("in-memory finish");
    compressed.len() as f64 * 100.0 / data.len() as f64
}

/// A sample as the worker writes it: filled once, then stamped per 4 KiB write.
fn written_sample(pattern: DataPattern, seed: u64) -> Vec<u8> {
    let mut buf = vec![0xA5u8; SAMPLE_BYTES];
    fill(&mut buf, pattern, seed);
    for (i, chunk) in buf.chunks_mut(PATTERN_CHUNK_BYTES).enumerate() {
        stamp(chunk, pattern, (i * PATTERN_CHUNK_BYTES) as u64, i as u64);
    }
    buf
}

#[test]
fn compressible_n_compresses_to_about_100_minus_n_percent() {
    for percent in [10u8, 25, 50, 75, 90] {
        let got = compressed_percent(&written_sample(DataPattern::Compressible(percent), 3));
        let want = f64::from(100 - percent);
        assert!(
            (got - want).abs() <= TOLERANCE_POINTS,
            "compressible:{percent} compressed to {got:.1}%, want about {want}%"
        );
    }
}

#[test]
fn random_is_incompressible_and_zeros_vanish() {
    let random = compressed_percent(&written_sample(DataPattern::Random, 4));
    assert!(random > 99.0, "random compressed to {random:.1}%");
    let zeros = compressed_percent(&written_sample(DataPattern::Zeros, 4));
    assert!(zeros < 1.0, "zeros compressed to {zeros:.2}%");
}
