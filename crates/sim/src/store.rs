//! Sparse payload store of the simulated drive: what was written, in 4 KiB chunks keyed by
//! chunk index, so a read returns what was written and memory grows only with data written.
//! Never-written and trimmed ranges read as zeros. Memory is bounded: a drive of terabytes
//! filled whole would otherwise take as much RAM, so past a budget new chunks are not kept and
//! the count of bytes lost says so (the report warns; timing never depends on the store).

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Bytes per stored chunk.
pub const CHUNK_BYTES: usize = 4096;
/// Payload memory a simulated drive keeps by default: room for a 1000 MB benchmark file many
/// times over, and a quarter or less of a machine that runs the suite.
pub const DEFAULT_BUDGET_BYTES: u64 = 4 << 30;

/// A fixed, seedless multiplicative hasher: chunk indices are already well spread, and a
/// fixed hash keeps memory layout (and so speed) identical from run to run.
#[derive(Default, Clone, Copy)]
pub struct ChunkHasher(u64);

impl Hasher for ChunkHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type Chunk = Box<[u8; CHUNK_BYTES]>;

/// The drive's contents.
pub struct Store {
    chunks: HashMap<u64, Chunk, BuildHasherDefault<ChunkHasher>>,
    /// Chunks kept at most (the budget).
    max_chunks: usize,
    /// Chunks written while the budget was full, not kept: reading them returns zeros.
    dropped_chunks: u64,
}

impl Default for Store {
    fn default() -> Self {
        Store::with_budget(DEFAULT_BUDGET_BYTES)
    }
}

impl Store {
    pub fn new() -> Store {
        Store::default()
    }

    /// A store that keeps at most `budget_bytes` of written data (whole chunks).
    pub fn with_budget(budget_bytes: u64) -> Store {
        Store {
            chunks: HashMap::default(),
            max_chunks: usize::try_from(budget_bytes / CHUNK_BYTES as u64).unwrap_or(usize::MAX),
            dropped_chunks: 0,
        }
    }

    /// Bytes of memory held by stored chunks.
    pub fn stored_bytes(&self) -> u64 {
        (self.chunks.len() * CHUNK_BYTES) as u64
    }

    /// The budget, in bytes.
    pub fn budget_bytes(&self) -> u64 {
        self.max_chunks as u64 * CHUNK_BYTES as u64
    }

    /// Bytes written while the budget was full and so not kept (whole chunks, counted each
    /// time one is written).
    pub fn dropped_bytes(&self) -> u64 {
        self.dropped_chunks * CHUNK_BYTES as u64
    }

    /// Store `data` at byte `offset`.
    pub fn write(&mut self, offset: u64, data: &[u8]) {
        let mut done = 0usize;
        while done < data.len() {
            let pos = offset + done as u64;
            let index = pos / CHUNK_BYTES as u64;
            let within = (pos % CHUNK_BYTES as u64) as usize;
            let n = (CHUNK_BYTES - within).min(data.len() - done);
            let full = self.chunks.len() >= self.max_chunks;
            match self.chunks.entry(index) {
                Entry::Occupied(mut chunk) => {
                    chunk.get_mut()[within..within + n].copy_from_slice(&data[done..done + n]);
                }
                Entry::Vacant(_) if full => self.dropped_chunks += 1,
                Entry::Vacant(slot) => {
                    let chunk = slot.insert(Box::new([0u8; CHUNK_BYTES]));
                    chunk[within..within + n].copy_from_slice(&data[done..done + n]);
                }
            }
            done += n;
        }
    }

    /// Fill `out` with the bytes at `offset`.
    pub fn read(&self, offset: u64, out: &mut [u8]) {
        self.read_into(offset, out, false);
    }

    /// Fill `out` with the bytes at `offset`; when the caller knows `out` already holds only
    /// zeros (`out_is_zero`), never-written ranges are left as they are instead of zeroed
    /// again. Returns whether `out` holds only zeros afterwards (false when unsure).
    pub fn read_into(&self, offset: u64, out: &mut [u8], out_is_zero: bool) -> bool {
        let mut all_zero = true;
        if self.chunks.is_empty() {
            // Nothing was ever written (read-only sessions): every byte reads as zero.
            if !out_is_zero {
                out.fill(0);
            }
            return all_zero;
        }
        let mut done = 0usize;
        while done < out.len() {
            let pos = offset + done as u64;
            let index = pos / CHUNK_BYTES as u64;
            let within = (pos % CHUNK_BYTES as u64) as usize;
            let n = (CHUNK_BYTES - within).min(out.len() - done);
            match self.chunks.get(&index) {
                Some(chunk) => {
                    out[done..done + n].copy_from_slice(&chunk[within..within + n]);
                    all_zero = false;
                }
                None if out_is_zero => {}
                None => out[done..done + n].fill(0),
            }
            done += n;
        }
        all_zero
    }

    /// Forget `len` bytes at `offset`: whole chunks are dropped, partial ones zeroed.
    pub fn trim(&mut self, offset: u64, len: u64) {
        let end = offset + len;
        let mut pos = offset;
        while pos < end {
            let index = pos / CHUNK_BYTES as u64;
            let within = pos % CHUNK_BYTES as u64;
            let n = (CHUNK_BYTES as u64 - within).min(end - pos);
            if within == 0 && n == CHUNK_BYTES as u64 {
                self.chunks.remove(&index);
            } else if let Some(chunk) = self.chunks.get_mut(&index) {
                chunk[within as usize..(within + n) as usize].fill(0);
            }
            pos += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_was_written_across_chunks_and_zeros_elsewhere() {
        let mut store = Store::new();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + 3) as u8).collect();
        store.write(1000, &data);
        let mut out = vec![0xAAu8; 12_000];
        store.read(0, &mut out);
        assert!(out[..1000].iter().all(|&b| b == 0));
        assert_eq!(&out[1000..11_000], &data[..]);
        assert!(out[11_000..].iter().all(|&b| b == 0));
        assert_eq!(store.stored_bytes(), 3 * CHUNK_BYTES as u64);
    }

    #[test]
    fn read_into_skips_zeroing_a_known_zero_buffer_and_reports_zeros() {
        let mut store = Store::new();
        // A buffer the caller claims is zero is left alone where nothing was written.
        let mut out = vec![0u8; 2 * CHUNK_BYTES];
        assert!(store.read_into(0, &mut out, true));
        let mut dirty = vec![7u8; CHUNK_BYTES];
        assert!(store.read_into(0, &mut dirty, false));
        assert!(dirty.iter().all(|&b| b == 0), "unknown buffers are zeroed");
        store.write(CHUNK_BYTES as u64 + 5, &[9u8; 3]);
        assert!(
            !store.read_into(0, &mut out, true),
            "stored bytes were copied"
        );
        assert_eq!(&out[CHUNK_BYTES + 4..CHUNK_BYTES + 9], &[0, 9, 9, 9, 0]);
        let mut dirty = vec![7u8; 2 * CHUNK_BYTES];
        store.read_into(0, &mut dirty, false);
        assert_eq!(dirty, out);
    }

    #[test]
    fn past_its_budget_the_store_keeps_what_it_has_and_counts_what_it_drops() {
        let mut store = Store::with_budget(2 * CHUNK_BYTES as u64);
        store.write(0, &[1u8; 2 * CHUNK_BYTES]);
        store.write(2 * CHUNK_BYTES as u64, &[2u8; 3 * CHUNK_BYTES]);
        assert_eq!(store.stored_bytes(), 2 * CHUNK_BYTES as u64);
        assert_eq!(store.dropped_bytes(), 3 * CHUNK_BYTES as u64);
        // Chunks it holds still take new data; the dropped ones read as zeros.
        store.write(0, &[3u8; CHUNK_BYTES]);
        let mut out = vec![9u8; 5 * CHUNK_BYTES];
        store.read(0, &mut out);
        assert!(out[..CHUNK_BYTES].iter().all(|&b| b == 3));
        assert!(out[CHUNK_BYTES..2 * CHUNK_BYTES].iter().all(|&b| b == 1));
        assert!(out[2 * CHUNK_BYTES..].iter().all(|&b| b == 0));
        // A trim frees room for new chunks.
        store.trim(0, CHUNK_BYTES as u64);
        store.write(4 * CHUNK_BYTES as u64, &[4u8; CHUNK_BYTES]);
        store.read(4 * CHUNK_BYTES as u64, &mut out[..CHUNK_BYTES]);
        assert!(out[..CHUNK_BYTES].iter().all(|&b| b == 4));
        assert_eq!(store.budget_bytes(), 2 * CHUNK_BYTES as u64);
    }

    #[test]
    fn trim_drops_whole_chunks_and_zeros_partial_ones() {
        let mut store = Store::new();
        store.write(0, &[1u8; 3 * CHUNK_BYTES]);
        store.trim(100, 2 * CHUNK_BYTES as u64);
        let mut out = vec![0u8; 3 * CHUNK_BYTES];
        store.read(0, &mut out);
        assert!(out[..100].iter().all(|&b| b == 1));
        assert!(out[100..100 + 2 * CHUNK_BYTES].iter().all(|&b| b == 0));
        assert!(out[100 + 2 * CHUNK_BYTES..].iter().all(|&b| b == 1));
        assert_eq!(store.stored_bytes(), 2 * CHUNK_BYTES as u64);
    }
}
