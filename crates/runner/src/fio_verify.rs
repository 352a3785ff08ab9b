//! fio 3.33's verify blocks: the header and checksum fio writes into each block (or each
//! `verify_interval` of it) and checks on read, byte for byte as fio lays them out, so a file
//! either tool wrote passes the other's `verify_only`.
//!
//! The layout (fio verify.h, `struct verify_header`, all little-endian): magic `0xacca` (u16),
//! verify type (u16), interval length (u32), the data's random seed (u64), the interval's offset
//! (u64), write time (u32 seconds, u32 nanoseconds), thread number (u16), the job's write count
//! at that write (`numberio`, u16), then fio's crc32c of those 36 bytes (u32); then the
//! checksum's own part (`vhdr_*`), then data up to the interval's end, which the checksum
//! covers. `verify_offset` swaps the header with the bytes that far into the interval after
//! the checksum is taken. `meta` is the header alone, `pattern` no header at all.
//!
//! The data under the headers is fio's: the write's whole buffer filled from the write's seed
//! (`verify_data_seeds.rs`: fio's `verify_state` draws for a fio job) by fio's generator, the
//! job's `buffer_compress_percentage` share zeros or `buffer_pattern`. Where storlab differs from
//! fio in what it writes (never in what it checks): the write time is left 0, so that the
//! read-back can regenerate every byte of the last write to a block and compare it whole (see
//! `verify.rs`): a block that holds an older write with a valid header (a drive that dropped a
//! rewrite) fails there, where fio only notices it through `numberio` (fixed block size, not
//! time-based) or its verify state.
//!
//! Checksums as fio 3.33 computes them (each checked against files fio wrote, in
//! `crates/cli/tests/it/fio_verify.rs`): `crc32c` without its final inversion; `crc32` MSB-first
//! with zero init and no final xor; `crc64` the Jones polynomial reflected with zero init
//! (CRC-64/REDIS); `crc16` CRC-16/ARC; `crc7` CRC-7/MMC; `sha1` its five state words in host
//! (little-endian) order; `xxhash` XXH32 with seed 1; `md5` and `sha3-*` their digests.

use crate::pattern;
use crc::{Algorithm, Crc, CRC_16_ARC, CRC_64_REDIS, CRC_7_MMC};
use md5::Digest;
use storlab_job::{DataPattern, JobSpec, VerifyKind, VerifyPattern, VerifySpec};

/// Who wrote one write's blocks and with what seed (see `FioFormat::fill_within`).
#[derive(Clone, Copy)]
struct WriteSeeds {
    data_seed: u64,
    thread: u16,
    numberio: u16,
}

/// `FIO_HDR_MAGIC`.
pub const MAGIC: u16 = 0xacca;
/// Bytes of `struct verify_header`.
const COMMON_HEADER_BYTES: usize = 40;
const TYPE_AT: usize = 2;
const LEN_AT: usize = 4;
const SEED_AT: usize = 8;
const OFFSET_AT: usize = 16;
const THREAD_AT: usize = 32;
const NUMBERIO_AT: usize = 34;
/// Where the header's own crc32c goes; it covers the bytes before it.
const HEADER_CRC_AT: usize = 36;

/// fio's `crc32` (crc/crc32.c): MSB-first, zero init, no final xor; not a catalogued CRC.
const FIO_CRC32: Algorithm<u32> = Algorithm {
    width: 32,
    poly: 0x04c1_1db7,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
    // The CRC of "123456789" with these parameters.
    check: 0x89a1_897f,
    residue: 0,
};
// The CRC engines with their tables, built once at compile time (`Crc::new` builds a 256-entry
// table; called per block it would do that on every write and read-back).
static CRC64: Crc<u64> = Crc::<u64>::new(&CRC_64_REDIS);
static CRC32: Crc<u32> = Crc::<u32>::new(&FIO_CRC32);
static CRC16: Crc<u16> = Crc::<u16>::new(&CRC_16_ARC);
static CRC7: Crc<u8> = Crc::<u8>::new(&CRC_7_MMC);
/// Largest checksum a verify header holds (sha512's working buffer: 128 bytes).
const CHECKSUM_BYTES_MAX: usize = 128;
/// XXH32's seed in fio's `fill_xxhash` (`XXH32_init(1)`).
const XXHASH_SEED: u32 = 1;

/// fio 3.33's `verify_type` numbers (verify.h, enum from `VERIFY_NONE` = 0).
fn type_code(kind: VerifyKind) -> u16 {
    match kind {
        VerifyKind::Meta => 1,
        VerifyKind::Md5 => 2,
        VerifyKind::Crc64 => 3,
        VerifyKind::Crc32 => 4,
        VerifyKind::Crc32c => 5,
        VerifyKind::Crc16 => 7,
        VerifyKind::Crc7 => 8,
        VerifyKind::Sha256 => 9,
        VerifyKind::Sha512 => 10,
        VerifyKind::Sha3_224 => 11,
        VerifyKind::Sha3_256 => 12,
        VerifyKind::Sha3_384 => 13,
        VerifyKind::Sha3_512 => 14,
        VerifyKind::Xxhash => 15,
        VerifyKind::Sha1 => 16,
        VerifyKind::PatternHeader => 17,
        VerifyKind::Pattern => 18,
        VerifyKind::Null => 19,
    }
}

/// fio's crc32c: Castagnoli, reflected, init all ones, *without* the final inversion.
pub(crate) fn fio_crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

/// Write `kind`'s checksum of `data` into `out` (the header's checksum part) as fio stores it.
fn checksum(kind: VerifyKind, data: &[u8], out: &mut [u8]) {
    match kind {
        VerifyKind::Md5 => out.copy_from_slice(&md5::Md5::digest(data)),
        VerifyKind::Crc64 => out.copy_from_slice(&CRC64.checksum(data).to_le_bytes()),
        VerifyKind::Crc32 => out.copy_from_slice(&CRC32.checksum(data).to_le_bytes()),
        VerifyKind::Crc32c => out.copy_from_slice(&fio_crc32c(data).to_le_bytes()),
        VerifyKind::Crc16 => out.copy_from_slice(&CRC16.checksum(data).to_le_bytes()),
        VerifyKind::Crc7 => out[0] = CRC7.checksum(data),
        VerifyKind::Sha1 => {
            // fio keeps SHA-1's state words (`uint32_t H[5]`) in host order.
            let digest = sha1::Sha1::digest(data);
            for (word, bytes) in out.chunks_mut(4).zip(digest.chunks(4)) {
                word.copy_from_slice(&[bytes[3], bytes[2], bytes[1], bytes[0]]);
            }
        }
        VerifyKind::Sha256 => fio_sha256(data, out),
        VerifyKind::Sha512 => fio_sha512(data, out),
        VerifyKind::Sha3_224 => out.copy_from_slice(&sha3::Sha3_224::digest(data)),
        VerifyKind::Sha3_256 => out.copy_from_slice(&sha3::Sha3_256::digest(data)),
        VerifyKind::Sha3_384 => out.copy_from_slice(&sha3::Sha3_384::digest(data)),
        VerifyKind::Sha3_512 => out.copy_from_slice(&sha3::Sha3_512::digest(data)),
        VerifyKind::Xxhash => {
            out.copy_from_slice(&xxhash_rust::xxh32::xxh32(data, XXHASH_SEED).to_le_bytes())
        }
        VerifyKind::Meta | VerifyKind::PatternHeader | VerifyKind::Pattern | VerifyKind::Null => {}
    }
}

/// fio 3.33's `sha256` header (crc/sha256.c through verify.c `fill_sha256`): the context's
/// 64-byte working buffer is the header itself, and `fio_sha256_final` leaves in it the last
/// block it compressed (the data's tail, the 0x80 pad, zeros and the bit count, which fio
/// appends in host order, little-endian here, where SHA-256 puts it big-endian) with its first
/// 8 bytes overwritten by the low byte of each state word (`buf[i] = state[i]` into a byte
/// array). Not SHA-256's digest, but a function of the data alone, so storlab writes and checks
/// fio's bytes.
fn fio_sha256(data: &[u8], out: &mut [u8]) {
    const BLOCK: usize = 64;
    let mut state: [u32; 8] = [
        0x6a09_e667,
        0xbb67_ae85,
        0x3c6e_f372,
        0xa54f_f53a,
        0x510e_527f,
        0x9b05_688c,
        0x1f83_d9ab,
        0x5be0_cd19,
    ];
    let compress = |state: &mut [u32; 8], block: &[u8]| {
        sha2::compress256(
            state,
            &[*sha2::digest::generic_array::GenericArray::from_slice(
                block,
            )],
        );
    };
    let whole = data.len() - data.len() % BLOCK;
    for block in data[..whole].chunks_exact(BLOCK) {
        compress(&mut state, block);
    }
    let tail = &data[whole..];
    let mut last = [0u8; BLOCK];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    let bits = ((data.len() as u32 as u64) << 3).to_le_bytes();
    if tail.len() >= 56 {
        // The pad fills this block; the count goes alone into the next, after 56 zeros.
        compress(&mut state, &last);
        last = [0u8; BLOCK];
    }
    last[56..].copy_from_slice(&bits);
    compress(&mut state, &last);
    for (byte, word) in last.iter_mut().zip(state) {
        *byte = word as u8;
    }
    out.copy_from_slice(&last);
}

/// fio 3.33's `sha512` header (verify.c `fill_sha512`, which never calls a final step): the
/// context's 128-byte working buffer after `fio_sha512_update` of the data, i.e. the data's first
/// 128 bytes with its tail (what is left after the last whole block) copied over their start.
/// A block shorter than the buffer leaves the rest of it as it was (`out` as given).
fn fio_sha512(data: &[u8], out: &mut [u8]) {
    const BLOCK: usize = 128;
    if data.len() < BLOCK {
        out[..data.len()].copy_from_slice(data);
        return;
    }
    out.copy_from_slice(&data[..BLOCK]);
    let tail = &data[data.len() - data.len() % BLOCK..];
    out[..tail.len()].copy_from_slice(tail);
}

/// A failed check of one interval: fio's words for what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The interval's offset and length, as fio reports them.
    pub offset_bytes: u64,
    pub len_bytes: u64,
    pub reason: String,
    /// The header itself is bad (fio then dumps `.hdr_fail` instead of received/expected).
    pub bad_header: bool,
}

/// How one job's writes are laid out and checked.
#[derive(Debug, Clone)]
pub struct FioFormat {
    pub kind: VerifyKind,
    pattern: Option<VerifyPattern>,
    data_pattern: DataPattern,
    /// `buffer_pattern`: what the compressible share holds instead of zeros.
    buffer_pattern: Option<Vec<u8>>,
    granule_bytes: usize,
    interval_bytes: usize,
    header_bytes: usize,
    header_offset_bytes: usize,
    /// `verify_only`: check headers alone (the data may be another tool's).
    pub only: bool,
    pub dump: bool,
}

impl FioFormat {
    pub fn new(spec: &VerifySpec, job: &JobSpec) -> Self {
        let granule_bytes = job.verify_granule_bytes() as usize;
        FioFormat {
            kind: spec.kind,
            pattern: spec.pattern.clone(),
            // fio fills a verify block's data from its verify seed with the compressible share
            // (verify.c `fill_verify_pattern`, `__fill_buffer`), whatever `zero_buffers` says.
            // A share of 100 is no share to fio: its `fixup_options` turns it into
            // `zero_buffers` with a share of 0, which verify's fill ignores.
            data_pattern: match job.data_pattern {
                DataPattern::Zeros => DataPattern::Random,
                DataPattern::Compressible(percent) if percent >= 100 => DataPattern::Random,
                other => other,
            },
            buffer_pattern: job.buffer_pattern.clone().filter(|p| !p.is_empty()),
            granule_bytes,
            // fio's own interval (its `fixup_options`): the whole write of one size, else the
            // smallest. It may span several of storlab's granules (`fill_across_granules`).
            interval_bytes: spec
                .interval_bytes
                .unwrap_or_else(|| job.fio_verify_interval_bytes(None))
                as usize,
            header_bytes: spec.kind.header_bytes() as usize,
            header_offset_bytes: spec.header_offset_bytes as usize,
            only: spec.only,
            dump: spec.dump,
        }
    }

    /// Fill `buf` (whole granules from `offset_bytes`, the whole write) as write `generation`
    /// (its data from `data_seed`) of the worker with `thread` (fio's 1-based thread number)
    /// writes it.
    pub fn fill(
        &self,
        buf: &mut [u8],
        offset_bytes: u64,
        data_seed: u64,
        thread: u16,
        generation: u32,
    ) {
        let write = (offset_bytes, buf.len() as u64);
        self.fill_within(buf, offset_bytes, data_seed, thread, generation, write);
    }

    /// Whether the data's layout depends on where the write began and ended: fio fills the
    /// write's whole buffer from one seed, its compressible share at the end (verify.c
    /// `fill_verify_pattern`; lib/rand.c `__fill_random_buf_percentage` with the buffer's
    /// length as the segment); a verify pattern repeats from each interval's start.
    pub fn needs_write_extent(&self) -> bool {
        self.pattern.is_none() || self.spans_granules()
    }

    /// Whether fio's header interval is longer than storlab's granule (what divides every
    /// offset the job issues: a read of 2 KiB moves a sequential job's 8 KiB writes off 8 KiB
    /// marks), so that a header covers several granules and sits where the write began.
    pub fn spans_granules(&self) -> bool {
        self.header_bytes > 0 && self.interval_bytes > self.granule_bytes
    }

    /// `fill` for `buf`, part of the write `write` (its offset and length in bytes).
    pub fn fill_within(
        &self,
        buf: &mut [u8],
        offset_bytes: u64,
        data_seed: u64,
        thread: u16,
        generation: u32,
        write: (u64, u64),
    ) {
        let seeds = WriteSeeds {
            data_seed,
            thread,
            // fio's numberio: the job's writes issued before this one.
            numberio: generation.wrapping_sub(1) as u16,
        };
        if self.spans_granules() {
            self.fill_across_granules(buf, offset_bytes, &seeds, write);
            return;
        }
        self.fill_data(buf, offset_bytes, data_seed, write);
        self.put_headers(buf, offset_bytes, &seeds, self.interval_bytes);
    }

    /// Where fio puts a write's headers: every interval, or once for the whole write when it
    /// is shorter than the interval (verify.c `get_hdr_inc`; `bs_is_seq_rand` gives a job's
    /// writes its read size, under the interval its write size sets). The header's length
    /// field says the same.
    fn header_step(&self, write_len: u64) -> usize {
        if self.interval_bytes as u64 <= write_len {
            self.interval_bytes
        } else {
            write_len as usize
        }
    }

    /// `fill_within` where a header interval spans several granules: fio puts a header every
    /// interval from the write's start (verify.c, `populate_verify_io_u`); each interval that
    /// `buf` touches is built whole (its header's checksum covers all of it) and the part
    /// inside `buf` copied.
    fn fill_across_granules(
        &self,
        buf: &mut [u8],
        offset_bytes: u64,
        seeds: &WriteSeeds,
        write: (u64, u64),
    ) {
        let (write_start, write_len) = write;
        let step = self.header_step(write_len);
        let step_bytes = step as u64;
        let end = offset_bytes + buf.len() as u64;
        let write_end = (write_start + write_len).max(end);
        let mut at =
            write_start + offset_bytes.saturating_sub(write_start) / step_bytes * step_bytes;
        let mut scratch = Vec::new();
        while at < end {
            let len = step_bytes.min(write_end - at) as usize;
            // An interval inside `buf` is built in place; one `buf` cuts (a granule checked
            // alone) is built aside and the part inside copied.
            let inside = at >= offset_bytes && at + len as u64 <= end;
            let piece = if inside {
                let from = (at - offset_bytes) as usize;
                &mut buf[from..from + len]
            } else {
                scratch.resize(len, 0);
                &mut scratch[..len]
            };
            self.fill_data(piece, at, seeds.data_seed, write);
            self.put_headers(piece, at, seeds, step);
            if !inside {
                let from = at.max(offset_bytes);
                let to = (at + len as u64).min(end);
                buf[(from - offset_bytes) as usize..(to - offset_bytes) as usize]
                    .copy_from_slice(&scratch[(from - at) as usize..(to - at) as usize]);
            }
            at += len as u64;
        }
    }

    /// The data of `bytes` (from `offset_bytes`, inside the write `write`) before the headers
    /// go in: the verify pattern, else fio's fill of the whole write from `data_seed`, the
    /// random share first and the rest `buffer_pattern` or zeros (verify.c `__fill_buffer`).
    fn fill_data(&self, bytes: &mut [u8], offset_bytes: u64, data_seed: u64, write: (u64, u64)) {
        if let Some(p) = &self.pattern {
            fill_pattern(bytes, p, offset_bytes);
            return;
        }
        let percent = match self.data_pattern {
            DataPattern::Compressible(percent) => u64::from(percent),
            DataPattern::Random | DataPattern::Zeros => 0,
        };
        let (write_start, write_len) = write;
        crate::fio_buffers::fill_percentage_window(
            bytes,
            data_seed,
            percent,
            self.buffer_pattern.as_deref(),
            write_len as usize,
            (offset_bytes - write_start) as usize,
        );
    }

    /// A header at the start of each `step` of `bytes` (from `offset_bytes`), over its data.
    fn put_headers(&self, bytes: &mut [u8], offset_bytes: u64, seeds: &WriteSeeds, step: usize) {
        if self.header_bytes == 0 {
            return;
        }
        let WriteSeeds {
            data_seed,
            thread,
            numberio,
        } = *seeds;
        // With a verify pattern fio's seed is 0 (no random data behind it).
        let rand_seed = if self.pattern.is_some() { 0 } else { data_seed };
        for (k, interval) in bytes.chunks_mut(step).enumerate() {
            let at = offset_bytes + (k * step) as u64;
            let (header, data) = interval.split_at_mut(self.header_bytes);
            header[..2].copy_from_slice(&MAGIC.to_le_bytes());
            header[TYPE_AT..TYPE_AT + 2].copy_from_slice(&type_code(self.kind).to_le_bytes());
            header[LEN_AT..LEN_AT + 4].copy_from_slice(&(step as u32).to_le_bytes());
            header[SEED_AT..SEED_AT + 8].copy_from_slice(&rand_seed.to_le_bytes());
            header[OFFSET_AT..OFFSET_AT + 8].copy_from_slice(&at.to_le_bytes());
            // The write time stays 0: fio only prints it; storlab regenerates every byte.
            header[OFFSET_AT + 8..THREAD_AT].fill(0);
            header[THREAD_AT..THREAD_AT + 2].copy_from_slice(&thread.to_le_bytes());
            header[NUMBERIO_AT..NUMBERIO_AT + 2].copy_from_slice(&numberio.to_le_bytes());
            let crc = fio_crc32c(&header[..HEADER_CRC_AT]);
            header[HEADER_CRC_AT..COMMON_HEADER_BYTES].copy_from_slice(&crc.to_le_bytes());
            checksum(self.kind, data, &mut header[COMMON_HEADER_BYTES..]);
            if self.header_offset_bytes > 0 {
                swap_header(interval, self.header_bytes, self.header_offset_bytes);
            }
        }
    }

    /// What a granule whose header says how it was made should hold: fio's data from the
    /// header's seed, as if the write began at the granule, for `verify_dump` in `verify_only`.
    pub fn expected_from_header(&self, found: &[u8], offset_bytes: u64) -> Vec<u8> {
        let mut expected = vec![0; found.len()];
        let mut header = found[..self.header_bytes.min(found.len())].to_vec();
        if self.header_offset_bytes > 0
            && found.len() >= self.header_offset_bytes + self.header_bytes
        {
            header.copy_from_slice(
                &found[self.header_offset_bytes..self.header_offset_bytes + self.header_bytes],
            );
        }
        let field = |at: usize, len: usize| -> u64 {
            let mut bytes = [0u8; 8];
            if let Some(src) = header.get(at..at + len) {
                bytes[..len].copy_from_slice(src);
            }
            u64::from_le_bytes(bytes)
        };
        let seeds = WriteSeeds {
            data_seed: field(SEED_AT, 8),
            thread: field(THREAD_AT, 2) as u16,
            numberio: field(NUMBERIO_AT, 2) as u16,
        };
        let write = (offset_bytes, found.len() as u64);
        self.fill_data(&mut expected, offset_bytes, seeds.data_seed, write);
        self.put_headers(
            &mut expected,
            offset_bytes,
            &seeds,
            self.header_step(write.1),
        );
        expected
    }

    /// Check one granule read from `offset_bytes` as fio's `verify_io_u` does: each interval's
    /// header (magic, length, offset, its crc), then its checksum and the verify pattern.
    /// The seed and `numberio` are not compared (fio skips them in `verify_only` too).
    pub fn check_granule(&self, granule: &[u8], offset_bytes: u64) -> Result<(), Failure> {
        if self.spans_granules() {
            // A granule holds part of an interval: its header is checked with the whole write
            // (`check_read_block`), or the bytes compared with what was written.
            return Ok(());
        }
        let step = if self.header_bytes == 0 {
            self.granule_bytes
        } else {
            self.interval_bytes
        };
        self.check_in_steps(granule, offset_bytes, step)
    }

    /// The format a job that only reads checks its reads with: fio's `verify_interval` as
    /// fio's `fixup_options` derives it from the job's block sizes (storlab's write granule
    /// plays no part: the data is whoever wrote it).
    pub fn for_reads(spec: &VerifySpec, job: &JobSpec) -> Self {
        let mut format = FioFormat::new(spec, job);
        format.interval_bytes = job.fio_verify_interval_bytes(spec.interval_bytes) as usize;
        format
    }

    /// Check one block a reading job read from `offset_bytes`, as fio's `verify_io_u` does for
    /// a job that does not write: a header every `verify_interval` bytes, or one for the whole
    /// block when it is shorter (verify.c, `get_hdr_inc`); the seed and `numberio` are not
    /// compared (fio cannot know the last write of a block it did not write).
    pub fn check_read_block(&self, block: &[u8], offset_bytes: u64) -> Result<(), Failure> {
        let step = if self.interval_bytes > 0 && self.interval_bytes <= block.len() {
            self.interval_bytes
        } else {
            block.len()
        };
        self.check_in_steps(block, offset_bytes, step)
    }

    fn check_in_steps(
        &self,
        granule: &[u8],
        offset_bytes: u64,
        step: usize,
    ) -> Result<(), Failure> {
        if self.kind == VerifyKind::Null || step == 0 {
            return Ok(());
        }
        // The pattern runs from the granule's start, under the headers: built once per granule.
        let want = self.pattern.as_ref().map(|p| {
            let mut want = vec![0u8; granule.len()];
            fill_pattern(&mut want, p, offset_bytes);
            want
        });
        for (k, stored) in granule.chunks(step).enumerate() {
            let at = offset_bytes + (k * step) as u64;
            let fail = |reason: String, bad_header: bool| Failure {
                offset_bytes: at,
                len_bytes: stored.len() as u64,
                reason,
                bad_header,
            };
            let swapped;
            let interval = if self.header_offset_bytes > 0 && self.header_bytes > 0 {
                let mut copy = stored.to_vec();
                swap_header(&mut copy, self.header_bytes, self.header_offset_bytes);
                swapped = copy;
                &swapped[..]
            } else {
                stored
            };
            if self.header_bytes > 0 {
                self.check_header(interval, at)
                    .map_err(|reason| fail(reason, true))?;
                let (header, data) = interval.split_at(self.header_bytes);
                let stored_sum = &header[COMMON_HEADER_BYTES..];
                let mut computed_buf = [0u8; CHECKSUM_BYTES_MAX];
                let computed = &mut computed_buf[..stored_sum.len()];
                // What a checksum leaves as it found it (sha512's buffer past a short block)
                // is taken as stored.
                computed.copy_from_slice(stored_sum);
                checksum(self.kind, data, computed);
                if computed != stored_sum {
                    return Err(fail(
                        format!(
                            "{}: verify failed: expected checksum {}, received {}",
                            self.kind.fio_name(),
                            hex(stored_sum),
                            hex(computed)
                        ),
                        false,
                    ));
                }
            }
            if let Some(want) = &want {
                let start = k * step;
                let skip = self.header_bytes;
                let mismatch = interval
                    .iter()
                    .zip(&want[start..])
                    .enumerate()
                    .skip(skip)
                    .find(|(_, (have, want))| have != want);
                if let Some((i, (have, want))) = mismatch {
                    return Err(fail(
                        format!(
                            "pattern: got {have:02x}, wanted {want:02x} ({} bad bits) at byte {i} \
                             of the block",
                            (have ^ want).count_ones()
                        ),
                        false,
                    ));
                }
            }
        }
        Ok(())
    }

    /// fio's `verify_header`: magic, length, offset, then the header's own crc32c.
    fn check_header(&self, interval: &[u8], at: u64) -> Result<(), String> {
        let u16_at = |i: usize| u16::from_le_bytes([interval[i], interval[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(interval[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(interval[i..i + 8].try_into().expect("8 bytes"));
        let magic = u16_at(0);
        if magic != MAGIC {
            return Err(format!(
                "verify: bad magic header {magic:x}, wanted {MAGIC:x}"
            ));
        }
        let len = u32_at(LEN_AT);
        if len as usize != interval.len() {
            return Err(format!(
                "verify: bad header length {len}, wanted {}",
                interval.len()
            ));
        }
        let offset = u64_at(OFFSET_AT);
        if offset != at {
            return Err(format!("verify: bad header offset {offset}, wanted {at}"));
        }
        let crc = u32_at(HEADER_CRC_AT);
        let calculated = fio_crc32c(&interval[..HEADER_CRC_AT]);
        if crc != calculated {
            return Err(format!(
                "verify: bad header crc {crc:x}, calculated {calculated:x}"
            ));
        }
        Ok(())
    }
}

/// SplitMix64's output function: a bijective mix, so distinct inputs give distinct seeds.
pub(crate) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// fio's `verify_offset`: swap the header with the bytes `offset` into the interval, as
/// verify.c `memswp` does with three copies (glibc's memcpy moves overlapping bytes as memmove
/// does), so an offset inside the header (only the null engine runs one) moves the same bytes.
fn swap_header(interval: &mut [u8], header_bytes: usize, offset: usize) {
    // fio's own bound on a header (`char swap[200]`): sha512's is 168 bytes.
    let mut header = [0u8; 200];
    header[..header_bytes].copy_from_slice(&interval[..header_bytes]);
    interval.copy_within(offset..offset + header_bytes, 0);
    interval[offset..offset + header_bytes].copy_from_slice(&header[..header_bytes]);
}

/// The verify pattern repeated from `buf`'s start, each `%o` the block's offset.
fn fill_pattern(buf: &mut [u8], p: &VerifyPattern, offset_bytes: u64) {
    let mut one = p.bytes.clone();
    for &at in &p.offset_positions {
        one[at..at + 8].copy_from_slice(&offset_bytes.to_le_bytes());
    }
    pattern::fill_repeated(buf, &one);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_job::{EngineKind, Target};

    fn format(kind: VerifyKind, interval: Option<u64>, header_offset: u64) -> FioFormat {
        let mut job = JobSpec::new("f", EngineKind::Null, Target::None);
        job.verify = true;
        let spec = VerifySpec {
            interval_bytes: interval,
            header_offset_bytes: header_offset,
            ..VerifySpec::new(kind)
        };
        FioFormat::new(&spec, &job)
    }

    #[test]
    fn every_kinds_checksum_fits_the_check_buffer() {
        for (_, kind) in VerifyKind::NAMED {
            let checksum_bytes = kind
                .header_bytes()
                .saturating_sub(COMMON_HEADER_BYTES as u64);
            assert!(checksum_bytes as usize <= CHECKSUM_BYTES_MAX, "{kind:?}");
        }
    }

    #[test]
    fn catalogued_checksums_match_their_check_values() {
        // The CRC catalogue's check value for "123456789" pins each algorithm's parameters.
        let check = b"123456789";
        assert_eq!(Crc::<u32>::new(&FIO_CRC32).checksum(check), FIO_CRC32.check);
        assert_eq!(crc32c::crc32c(check), 0xe306_9283);
        assert_eq!(fio_crc32c(check), !0xe306_9283);
    }

    #[test]
    fn every_kind_checks_what_it_wrote_and_catches_a_flipped_byte() {
        for (_, kind) in VerifyKind::NAMED {
            if matches!(kind, VerifyKind::Pattern | VerifyKind::Null) {
                continue;
            }
            for (interval, header_offset) in [(None, 0), (Some(1024), 0), (None, 200)] {
                let f = format(kind, interval, header_offset);
                let mut block = vec![0u8; 4096];
                f.fill(&mut block, 8192, 7, 1, 3);
                assert_eq!(f.check_granule(&block, 8192), Ok(()), "{kind:?}");
                // Misplaced: the same block read at another offset.
                let misplaced = f.check_granule(&block, 4096).unwrap_err();
                assert!(
                    misplaced.reason.contains("bad header offset"),
                    "{misplaced:?}"
                );
                // A flipped data byte: the checksum fails (meta has none to fail; sha512's
                // buffer holds only the first 128 bytes and the tail: its own test below).
                let mut corrupt = block.clone();
                corrupt[3000] ^= 1;
                let result = f.check_granule(&corrupt, 8192);
                if kind == VerifyKind::Meta {
                    assert!(result.is_ok());
                } else if kind != VerifyKind::Sha512 {
                    let failure = result.unwrap_err();
                    let interval_start = interval.map_or(0, |i| 3000 / i * i);
                    assert_eq!(failure.offset_bytes, 8192 + interval_start, "{kind:?}");
                    assert!(failure.reason.contains("verify failed"), "{failure:?}");
                }
                assert_eq!(f.expected_from_header(&block, 8192), block, "{kind:?}");
            }
        }
    }

    /// fio's sha512 "checksum" is its hash's working buffer: the data's first 128 bytes with
    /// the tail past the last whole 128-byte block over their start. A byte flipped there fails
    /// the check, one in between passes it, as in fio 3.33.
    #[test]
    fn fios_sha512_covers_the_first_block_and_the_tail() {
        let f = format(VerifyKind::Sha512, None, 0);
        let mut block = vec![0u8; 4096];
        f.fill(&mut block, 0, 7, 1, 3);
        let data_at = 40 + 128;
        let tail_at = data_at + (4096 - data_at) / 128 * 128;
        for (at, caught) in [
            (data_at + 100, true),
            (tail_at + 5, true),
            (data_at + 1000, false),
        ] {
            let mut corrupt = block.clone();
            corrupt[at] ^= 1;
            assert_eq!(f.check_granule(&corrupt, 0).is_err(), caught, "byte {at}");
        }
    }

    #[test]
    fn the_header_is_fios_layout() {
        let f = format(VerifyKind::Crc32c, None, 0);
        let mut block = vec![0u8; 4096];
        f.fill(&mut block, 4096, 1, 1, 2);
        assert_eq!(&block[..2], &[0xca, 0xac]);
        assert_eq!(u16::from_le_bytes([block[2], block[3]]), 5);
        assert_eq!(&block[4..8], &4096u32.to_le_bytes());
        assert_eq!(&block[16..24], &4096u64.to_le_bytes());
        // Thread 1, numberio 1 (the job's second write).
        assert_eq!(&block[32..36], &[1, 0, 1, 0]);
        let crc = fio_crc32c(&block[44..]);
        assert_eq!(&block[40..44], &crc.to_le_bytes());
    }

    #[test]
    fn a_verify_pattern_carries_the_block_offset_and_is_checked() {
        let mut f = format(VerifyKind::Pattern, None, 0);
        f.header_bytes = 0;
        f.pattern = Some(VerifyPattern {
            bytes: vec![0xaa, 0, 0, 0, 0, 0, 0, 0, 0],
            offset_positions: vec![1],
        });
        let mut block = vec![0u8; 4096];
        f.fill(&mut block, 0x1000, 7, 1, 1);
        assert_eq!(&block[..10], &[0xaa, 0, 0x10, 0, 0, 0, 0, 0, 0, 0xaa]);
        assert_eq!(f.check_granule(&block, 0x1000), Ok(()));
        assert!(f.check_granule(&block, 0x2000).is_err());
    }

    /// fio's `memswp` with a header overlapping the bytes it swaps with: the copies move the
    /// overlap as memmove does, and the bytes between the header's end and the offset's end
    /// are lost (why fio fails every such block on a file that keeps data).
    #[test]
    fn an_overlapping_swap_moves_bytes_as_fio_copies_them() {
        let original: Vec<u8> = (0..200u8).collect();
        let mut interval = original.clone();
        swap_header(&mut interval, 104, 64);
        assert_eq!(&interval[..64], &original[64..128]);
        assert_eq!(&interval[64..168], &original[..104]);
        swap_header(&mut interval, 104, 64);
        assert_eq!(&interval[..128], &original[..128]);
        assert_eq!(&interval[128..168], &original[..40]);
        assert_eq!(&interval[168..], &original[168..]);
    }
}
