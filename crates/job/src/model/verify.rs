//! What a job checks and how it treats errors: fio's verify kinds and settings, and `continue_on_error`.

use super::is_false;
use serde::{Deserialize, Serialize};

/// fio's `verify=` kinds (fio 3.33 verify.h): the checksum in each block's header, or `meta`
/// (header only), `pattern` (`verify_pattern`, no header) or `null` (nothing checked).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifyKind {
    Md5,
    Crc64,
    Crc32,
    Crc32c,
    Crc16,
    Crc7,
    Sha1,
    /// fio 3.33's `sha256`: not a digest but its hash's last working block (verify.c
    /// `fill_sha256` points the context's buffer at the header).
    Sha256,
    /// fio 3.33's `sha512`: the hash's working buffer, never finalised.
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Xxhash,
    Meta,
    Pattern,
    /// fio's VERIFY_PATTERN, which `verify_pattern` sets when `verify` is not (options.c,
    /// `str_verify_pattern_cb`): the pattern under a header without checksum (`verify=pattern`
    /// is VERIFY_PATTERN_NO_HDR, the pattern alone). No `verify=` name selects it.
    PatternHeader,
    Null,
}

impl VerifyKind {
    /// Every kind with fio's name for it (`crc32c-intel` is fio's other name for `crc32c`).
    pub const NAMED: [(&'static str, VerifyKind); 18] = [
        ("md5", VerifyKind::Md5),
        ("crc64", VerifyKind::Crc64),
        ("crc32", VerifyKind::Crc32),
        ("crc32c", VerifyKind::Crc32c),
        ("crc32c-intel", VerifyKind::Crc32c),
        ("crc16", VerifyKind::Crc16),
        ("crc7", VerifyKind::Crc7),
        ("sha1", VerifyKind::Sha1),
        ("sha256", VerifyKind::Sha256),
        ("sha512", VerifyKind::Sha512),
        ("sha3-224", VerifyKind::Sha3_224),
        ("sha3-256", VerifyKind::Sha3_256),
        ("sha3-384", VerifyKind::Sha3_384),
        ("sha3-512", VerifyKind::Sha3_512),
        ("xxhash", VerifyKind::Xxhash),
        ("meta", VerifyKind::Meta),
        ("pattern", VerifyKind::Pattern),
        ("null", VerifyKind::Null),
    ];

    /// The kind fio names `name`.
    pub fn from_fio_name(name: &str) -> Option<VerifyKind> {
        Self::NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, kind)| *kind)
    }

    /// Bytes of fio 3.33's header for this kind (verify.h): `struct verify_header` (40 bytes)
    /// and the checksum's own part; `pattern` and `null` write no header.
    pub fn header_bytes(self) -> u64 {
        /// `struct verify_header`: magic, type, len, rand_seed, offset, time, thread,
        /// numberio and its own crc32c.
        const COMMON_BYTES: u64 = 40;
        let checksum_bytes = match self {
            VerifyKind::Pattern | VerifyKind::Null => return 0,
            VerifyKind::Meta | VerifyKind::PatternHeader => 0,
            VerifyKind::Crc7 => 1,
            VerifyKind::Crc16 => 2,
            VerifyKind::Crc32 | VerifyKind::Crc32c | VerifyKind::Xxhash => 4,
            VerifyKind::Crc64 => 8,
            VerifyKind::Md5 => 16,
            VerifyKind::Sha1 => 20,
            // `struct vhdr_sha256` / `vhdr_sha512`: the context's whole working buffer.
            VerifyKind::Sha256 => 64,
            VerifyKind::Sha512 => 128,
            VerifyKind::Sha3_224 => 28,
            VerifyKind::Sha3_256 => 32,
            VerifyKind::Sha3_384 => 48,
            VerifyKind::Sha3_512 => 64,
        };
        COMMON_BYTES + checksum_bytes
    }

    /// fio's name for this kind.
    pub fn fio_name(self) -> &'static str {
        Self::NAMED.iter().find(|(_, kind)| *kind == self).map_or(
            if self == VerifyKind::PatternHeader {
                "pattern"
            } else {
                "?"
            },
            |(n, _)| n,
        )
    }
}

/// fio's `verify_pattern`: bytes repeated from the start of each block, with the block's offset
/// (8 bytes, little-endian) written at each `%o` of the pattern.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyPattern {
    pub bytes: Vec<u8>,
    /// Where in `bytes` each `%o` puts the offset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offset_positions: Vec<usize>,
}

/// fio's verify family beyond the on/off switch (see `docs/job-format.md`, row `verify`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifySpec {
    pub kind: VerifyKind,
    /// fio's `verify_pattern`: the data under the headers (fio's random data without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<VerifyPattern>,
    /// fio's `verify_interval`: a header every this many bytes (default: every block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_bytes: Option<u64>,
    /// fio's `verify_offset`: the header is swapped with the bytes this far into its interval.
    #[serde(default, skip_serializing_if = "is_zero_bytes")]
    pub header_offset_bytes: u64,
    /// fio's `verify_only`: write nothing; read back what the job would have written and check
    /// its headers (data a previous run of the job wrote, storlab's or fio's).
    #[serde(default, skip_serializing_if = "is_false")]
    pub only: bool,
    /// fio's `verify_dump`: write a failed block's received and expected bytes to files.
    #[serde(default, skip_serializing_if = "is_false")]
    pub dump: bool,
    /// fio's `verify_backlog`: after this many writes, read back that many (`backlog_batch`)
    /// before writing on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<u64>,
    /// fio's `verify_backlog_batch` (default: `backlog`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_batch: Option<u64>,
    /// fio's `experimental_verify` over several loops: only the first loop is read back.
    /// fio 3.33 never resets the bytes its verify passes checked between loops (libfio.c,
    /// `reset_io_counters` with `all` = 0), and a pass stops once those reach the loop's
    /// written bytes (backend.c, `do_verify`), so every pass after the first reads nothing.
    #[serde(default, skip_serializing_if = "is_false")]
    pub first_loop_only: bool,
}

impl VerifySpec {
    /// `verify=KIND` alone: fio's defaults for every other verify key (a header per block at
    /// its start, fio's random data, no backlog, no dump, writes as well as reads).
    pub fn new(kind: VerifyKind) -> VerifySpec {
        VerifySpec {
            kind,
            pattern: None,
            interval_bytes: None,
            header_offset_bytes: 0,
            only: false,
            dump: false,
            backlog: None,
            backlog_batch: None,
            first_loop_only: false,
        }
    }
}

fn is_zero_bytes(value: &u64) -> bool {
    *value == 0
}

/// Linux errno of an I/O error (EIO), one of the two errors fio's `continue_on_error` passes by
/// default (`__NON_FATAL_ERR` in fio's td_error.c).
pub const ERRNO_EIO: i32 = 5;

/// Linux errno of a data integrity error (EILSEQ), the other default non-fatal error, and the
/// one fio files under `verify` whatever the I/O's direction.
pub const ERRNO_EILSEQ: i32 = 84;

/// Linux errno of a full file system (ENOSPC): what ends a `fill_device` job, as a success.
pub const ERRNO_ENOSPC: i32 = 28;

/// Linux errno of an exhausted disk quota (EDQUOT), which fio's `fill_device` takes as ENOSPC.
pub const ERRNO_EDQUOT: i32 = 122;

/// fio's `continue_on_error`: the kinds of error a job counts and goes on past instead of
/// ending (`none`, `read`, `write`, `io`, `verify`, `all`; `0`/`1` as `none`/`all`), and
/// `ignore_error`'s lists of the errors each kind passes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinueOnError {
    pub read: bool,
    pub write: bool,
    pub verify: bool,
    /// fio's `ignore_error` list for read errors; `None`: fio's default, EIO and EILSEQ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_read: Option<Vec<i32>>,
    /// fio's `ignore_error` list for write (and trim) errors; `None`: fio's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_write: Option<Vec<i32>>,
    /// fio's `ignore_error` list for verify errors (EILSEQ, whatever the direction); `None`:
    /// fio's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_verify: Option<Vec<i32>>,
}

impl ContinueOnError {
    /// fio's default: every error ends the job.
    pub fn is_none(&self) -> bool {
        !(self.read || self.write || self.verify)
    }

    /// Whether an I/O that failed with `errno` is counted and passed, as fio 3.33 decides it
    /// (td_error.c): EILSEQ is a `verify` error, any other error of a read a `read` error and
    /// of anything else a `write` error; the kind's `ignore_error` list, or without one fio's
    /// default EIO and EILSEQ, names the errors passed, so by default a medium error (ENODATA
    /// on Linux) still ends the job.
    pub fn passes(&self, is_read: bool, errno: i32) -> bool {
        let (kind_listed, ignored) = if errno == ERRNO_EILSEQ {
            (self.verify, &self.ignored_verify)
        } else if is_read {
            (self.read, &self.ignored_read)
        } else {
            (self.write, &self.ignored_write)
        };
        kind_listed
            && match ignored {
                Some(errnos) => errnos.contains(&errno),
                None => errno == ERRNO_EIO || errno == ERRNO_EILSEQ,
            }
    }
}
