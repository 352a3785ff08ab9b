//! Laying out a regular file's data before a job reads it: incompressible, non-zero bytes
//! written once, buffered, then synced, so reads hit real blocks.

use super::{target_error, LAYOUT_CHUNK_BYTES};
use crate::EngineError;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Extend the file open as `file` from `from_bytes` to `to_bytes` with incompressible, non-zero
/// data, then fsync, so that reads hit real blocks (not holes the filesystem answers from
/// nothing) and no compressing controller flatters the result. Buffered writes (O_DIRECT is set
/// only afterwards): this runs once, before timing.
pub(super) fn lay_out_file(
    file: &File,
    path: &Path,
    from_bytes: u64,
    to_bytes: u64,
) -> Result<(), EngineError> {
    let io_error = |source: io::Error| {
        if source.raw_os_error() == Some(libc::ENOSPC) {
            target_error(
                path,
                &format!(
                    "no space left on its filesystem to lay out {to_bytes} bytes; free some \
                     space or shrink the job's size"
                ),
            )
        } else {
            EngineError::Open {
                path: path.to_path_buf(),
                source,
            }
        }
    };
    crate::layout::check_free_space(file, path, from_bytes, to_bytes)?;
    let mut chunk = vec![0u8; LAYOUT_CHUNK_BYTES];
    let mut offset_bytes = from_bytes;
    while offset_bytes < to_bytes {
        if crate::layout::layouts_stopped() {
            return Err(EngineError::Interrupted {
                path: path.to_path_buf(),
            });
        }
        let len = (to_bytes - offset_bytes).min(LAYOUT_CHUNK_BYTES as u64) as usize;
        fill_layout_data(&mut chunk[..len], offset_bytes);
        file.write_all_at(&chunk[..len], offset_bytes)
            .map_err(io_error)?;
        offset_bytes += len as u64;
    }
    file.sync_all().map_err(io_error)
}

/// Pseudo-random bytes that depend on the file offset (every chunk differs, so nothing
/// deduplicates), never an all-zero 8-byte word (so nothing looks like a hole).
fn fill_layout_data(buf: &mut [u8], offset_bytes: u64) {
    // SplitMix64: one multiply-xorshift step per word, fast enough that layout is disk-bound.
    const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut state = offset_bytes ^ 0x5354_4f52_4c41_4221;
    for word in buf.chunks_mut(8) {
        state = state.wrapping_add(GOLDEN_GAMMA);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let bytes = (z | 1).to_le_bytes();
        word.copy_from_slice(&bytes[..word.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_data_is_nonzero_and_offset_dependent() {
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        fill_layout_data(&mut a, 0);
        fill_layout_data(&mut b, LAYOUT_CHUNK_BYTES as u64);
        assert_ne!(a, b);
        assert!(a.chunks(8).all(|w| w.iter().any(|&x| x != 0)));
    }
}
