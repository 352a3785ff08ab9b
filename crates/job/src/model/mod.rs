//! The job model: what a workload is, independent of where it comes from (fio file, flags, preset).
//!
//! Every field is already validated when a `JobSpec` exists: build one with
//! [`crate::validate::validate`] (or the fio reader, which calls it), never by hand in library code
//! that takes user input. Sizes are bytes, times are nanoseconds.

mod data;
mod engine;
mod logs;
mod offsets;
mod report;
mod verify;

pub use data::*;
pub use engine::*;
pub use logs::*;
pub use offsets::*;
pub use report::*;
pub use verify::*;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One kibibyte; the default alignment is four of them (a NAND page).
pub const KIB: u64 = 1024;

/// Default offset and length alignment: 4 KiB, so no write straddles two flash pages.
pub const DEFAULT_ALIGN_BYTES: u64 = 4 * KIB;

/// Default seed, fixed so two runs of the same job issue the same offsets.
pub const DEFAULT_SEED: u64 = 0x5354_4f52_4c41_4221; // "STORLAB!"

fn is_zero_u8(value: &u8) -> bool {
    *value == 0
}

/// What storlab tells the kernel about a worker's access pattern on its region (fio's
/// `fadvise_hint`, applied with `posix_fadvise`): random access turns the page cache's readahead
/// off, so a buffered random read job reads from the device what it asks for and no more.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FadviseHint {
    /// `fadvise_hint=0`: no hint; the descriptor keeps the kernel's default readahead.
    Off,
    /// `fadvise_hint=1` (the default, as in fio): random for a job with random offsets,
    /// sequential otherwise.
    #[default]
    JobType,
    /// `fadvise_hint=random`.
    Random,
    /// `fadvise_hint=sequential`.
    Sequential,
}

/// The advice a hint gives the kernel for one job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessAdvice {
    /// The kernel's default (`POSIX_FADV_NORMAL`).
    Normal,
    /// `POSIX_FADV_RANDOM`: no readahead.
    Random,
    /// `POSIX_FADV_SEQUENTIAL`: more readahead.
    Sequential,
}

impl FadviseHint {
    fn is_default(&self) -> bool {
        *self == FadviseHint::JobType
    }
}

/// Where the I/O goes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum Target {
    /// A regular file (created and laid out if missing) or a block device.
    Path(PathBuf),
    /// A temporary file storlab creates in this directory and deletes afterwards.
    TempFileIn(PathBuf),
    /// A simulated stack, by its profile name (`sim:NAME` on the command line).
    Sim(String),
    /// No target (null engine).
    None,
}

/// How block sizes are chosen for one direction (fio `bs`, `bsrange`, `bssplit`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockSizeSpec {
    /// Every I/O has this size.
    Fixed(u64),
    /// Uniformly chosen in `[min, max]`, in multiples of the alignment.
    Range { min_bytes: u64, max_bytes: u64 },
    /// fio `bssplit`: each entry is (size, share in percent); shares sum to 100.
    Split(Vec<BlockSizeShare>),
}

/// One entry of a `bssplit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSizeShare {
    pub size_bytes: u64,
    pub percent: u32,
}

impl BlockSizeSpec {
    /// The largest size this spec can produce (buffers are sized by it).
    pub fn max_bytes(&self) -> u64 {
        match self {
            BlockSizeSpec::Fixed(b) => *b,
            BlockSizeSpec::Range { max_bytes, .. } => *max_bytes,
            BlockSizeSpec::Split(v) => v.iter().map(|s| s.size_bytes).max().unwrap_or(0),
        }
    }
    /// The smallest size this spec can produce.
    pub fn min_bytes(&self) -> u64 {
        match self {
            BlockSizeSpec::Fixed(b) => *b,
            BlockSizeSpec::Range { min_bytes, .. } => *min_bytes,
            BlockSizeSpec::Split(v) => v.iter().map(|s| s.size_bytes).min().unwrap_or(0),
        }
    }
}

/// How writes reach stable storage (fio's `fsync`, `fdatasync`, `end_fsync`, `fsync_on_close`
/// and `sync`). All off by default, as in fio: writes may sit in the page cache and the drive's
/// write cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncSpec {
    /// `fsync=N`: after every N writes, wait for the worker's I/O to finish and `fsync` (0: never).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fsync_every_writes: u32,
    /// `fdatasync=N`: as `fsync`, with `fdatasync` (data, and only the metadata needed to read it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fdatasync_every_writes: u32,
    /// `end_fsync`: `fsync` once after the job's last write.
    #[serde(default, skip_serializing_if = "is_false")]
    pub end_fsync: bool,
    /// `fsync_on_close`: `fsync` when the worker closes the target.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fsync_on_close: bool,
    /// `sync=`: open the target with `O_SYNC` or `O_DSYNC`.
    #[serde(default, skip_serializing_if = "OpenSync::is_none")]
    pub open_sync: OpenSync,
}

impl SyncSpec {
    /// Nothing asks for a flush: writes go as the engine and the kernel please.
    pub fn is_unset(&self) -> bool {
        *self == SyncSpec::default()
    }
    /// `fsync` or `fdatasync` every N writes.
    pub fn every_n_writes(&self) -> bool {
        self.fsync_every_writes > 0 || self.fdatasync_every_writes > 0
    }

    /// The job asks the engine to flush at some point (not only to open with `O_SYNC`).
    pub fn flushes(&self) -> bool {
        self.fsync_every_writes > 0
            || self.fdatasync_every_writes > 0
            || self.end_fsync
            || self.fsync_on_close
    }
}

/// fio's `sync=`: the open flag that makes every write synchronous.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenSync {
    /// `sync=0` / `none` (the default).
    #[default]
    None,
    /// `sync=1` / `sync`: `O_SYNC`, each write returns once data and metadata are stable.
    Sync,
    /// `sync=dsync`: `O_DSYNC`, each write returns once its data is stable.
    Dsync,
}

impl OpenSync {
    fn is_none(&self) -> bool {
        *self == OpenSync::None
    }
}

/// fio's trim modes: `rw=trim`/`randtrim` discard blocks; `rw=trimwrite`/`randtrimwrite` discard
/// each block and then write it (fio 3.33, io_u.c `set_rw_ddir`: a write at the offset and length
/// of the trim before it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrimMode {
    /// No trims: reads and writes as `read_percent` says.
    #[default]
    None,
    /// Every I/O is a trim.
    Trim,
    /// A trim, then a write of the same block, in turn.
    TrimWrite,
}

impl TrimMode {
    pub fn is_none(&self) -> bool {
        *self == TrimMode::None
    }
}

/// fio's `flow`: jobs sharing a `flow_id` hold their I/O in the ratio of their weights (fio 3.33,
/// flow.c). Each job's issued I/Os, over the I/Os of every job in the flow, may not pass its
/// weight over the flow's total weight; a job ahead of its share waits (`flow_sleep`) or tries
/// again at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowSpec {
    /// `flow_id`: the jobs that share one flow (fio's default 0).
    pub id: u32,
    /// `flow`: this job's weight in the flow (1 to fio's `FLOW_MAX_WEIGHT`, 1000).
    pub weight: u32,
    /// `flow_sleep`: how long a job ahead of its share waits before it looks again (0: it
    /// looks again at once, as fio's loop does).
    pub sleep_ns: u64,
}

/// fio's `thinktime` family: the worker stalls as an application would between batches of I/O.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkSpec {
    /// `thinktime`: how long each stall lasts, spin included (0: no stalls).
    pub think_ns: u64,
    /// `thinktime_spin`: the first part of the stall burns CPU instead of sleeping.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub spin_ns: u64,
    /// `thinktime_blocks`: stall after this many I/Os (fio's default 1); `None` when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_ios: Option<u32>,
    /// `thinktime_blocks_type=issue`: count I/Os issued; fio's default, `complete`, counts I/Os
    /// completed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub count_issued: bool,
    /// `thinktime_iotime`: stall after this much time of I/O since the last stall.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub every_io_ns: u64,
}

impl ThinkSpec {
    /// No stalls.
    pub fn is_unset(&self) -> bool {
        *self == ThinkSpec::default()
    }
}

/// fio's `steadystate` (`ss`), `steadystate_duration` (`ss_dur`) and `steadystate_ramp_time`
/// (`ss_ramp`): once `duration_ns` of per-second samples, taken after `ramp_ns`, meet the
/// criterion, the worker stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SteadyStateSpec {
    /// Judge bandwidth (`bw`, `bw_slope`) instead of IOPS (`iops`, `iops_slope`).
    pub bandwidth: bool,
    /// Judge the least-squares slope (`*_slope`) instead of the largest deviation from the mean.
    pub slope: bool,
    /// The limit, in millionths: of a percent of the mean when `percent`, else of I/Os (or
    /// bytes) per second.
    pub limit_micros: u64,
    pub percent: bool,
    pub duration_ns: u64,
    pub ramp_ns: u64,
}

/// fio's `zonemode=strided` (`zonesize`, `zonerange`, `zoneskip`): the worker does `size_bytes`
/// of I/O inside a zone of `range_bytes` (going round it when it is smaller), then moves
/// `range_bytes + skip_bytes` on, wrapping to its start at the target's end; `size` is the total
/// it moves, over the whole target from `offset` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StridedZones {
    pub size_bytes: u64,
    pub range_bytes: u64,
    pub skip_bytes: u64,
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

fn is_zero_u64(value: &u64) -> bool {
    *value == 0
}

/// Requests-per-second ceiling per direction (fio `rate_iops=R,W`).
/// Parts per million in the whole target: the unit of a share of its size.
pub const PPM_WHOLE: u32 = 1_000_000;

/// Parts per million in one percent.
pub const PPM_PER_PERCENT: u32 = 10_000;

/// `offset`, `offset_increment` and `size` given as shares of the target's size (fio's `N%`,
/// e.g. `offset=50%`), in parts per million of it. A share replaces the byte setting of the same
/// name; it becomes bytes only when the target is opened and its size is known
/// (`storlab_runner::plan_regions`), so one job file covers drives of any size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetShares {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_ppm: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_increment_ppm: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_ppm: Option<u32>,
}

impl TargetShares {
    /// No setting is a share: the job's regions are in bytes alone.
    pub fn is_unset(&self) -> bool {
        *self == TargetShares::default()
    }
}

/// A share as a percentage for messages: `500000` → `50%`, `125000` → `12.5%`.
pub fn format_share(ppm: u32) -> String {
    let whole = ppm / PPM_PER_PERCENT;
    let fraction = ppm % PPM_PER_PERCENT;
    if fraction == 0 {
        format!("{whole}%")
    } else {
        let digits = format!("{fraction:04}");
        format!("{whole}.{}%", digits.trim_end_matches('0'))
    }
}

/// `ppm` parts per million of `target_size_bytes`, rounded down (exact for any u64 size).
pub fn share_of_bytes(target_size_bytes: u64, ppm: u32) -> u64 {
    let bytes = u128::from(target_size_bytes) * u128::from(ppm) / u128::from(PPM_WHOLE);
    // ppm ≤ PPM_WHOLE is checked when a share is read; clamp for shares built in code.
    u64::try_from(bytes).unwrap_or(u64::MAX)
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateIops {
    pub read: Option<u64>,
    pub write: Option<u64>,
}

impl RateIops {
    pub fn is_unset(&self) -> bool {
        self.read.is_none() && self.write.is_none()
    }
}

/// Bandwidth ceiling per direction, bytes per second (fio `rate=R,W`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateBytes {
    pub read: Option<u64>,
    pub write: Option<u64>,
}

impl RateBytes {
    pub fn is_unset(&self) -> bool {
        *self == RateBytes::default()
    }
}

fn default_true() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn default_loops() -> u32 {
    1
}

impl JobSpec {
    /// Whether the job writes until its file system is full: fio's `fill_device`, or writes
    /// that go on past ENOSPC (`ignore_error` lists it). Its file is then not laid out before
    /// it runs (fio does not lay out a file a job writes; storlab's layout would fail or fill
    /// the file system first).
    pub fn writes_until_full(&self) -> bool {
        self.fill_device || self.continue_on_error.passes(false, ERRNO_ENOSPC)
    }
}

/// One workload, fully resolved: what fio calls a job section after `[global]` was merged in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSpec {
    /// Section name (fio) or a generated name.
    pub name: String,
    pub engine: EngineKind,
    pub target: Target,
    /// The name fio gives this job's (clone's) file where the target does not say it (`null`'s
    /// `filename`, a temporary `NAME.SUBJOB.0`): fio hashes it into its distributions' seeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_file_name: Option<String>,
    /// Open with O_DIRECT (bypass the page cache).
    pub direct: bool,
    /// Drop the target's cached pages before the job starts (fio `invalidate`, default on), so
    /// a buffered read job measures the device, not what an earlier job left in memory.
    #[serde(default = "default_true")]
    pub invalidate: bool,
    /// Share of I/Os that are reads, 0..=100 (`rw=read` → 100, `rw=write` → 0, `rwmixread`).
    pub read_percent: u8,
    /// Share of I/Os at a random offset, 0..=100 (`rw=rand*` → 100, `percentage_random`).
    pub random_percent: u8,
    /// Writes' share of random offsets when fio's `percentage_random=READ,WRITE` gives a mixed
    /// job two different shares; `None`: writes take `random_percent` too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_percent_write: Option<u8>,
    /// fio's random map (on unless `norandommap`): a fully random job with one block size
    /// visits every block of its region once per pass. Off, offsets are drawn independently and
    /// may repeat, as IOMeter and CrystalDiskMark draw them. (Records written before this field
    /// existed ran without a map, hence the serde default.)
    #[serde(default)]
    pub random_map: bool,
    /// fio's `norandommap` as its init.c leaves it (given, or set by a `blockalign` other than
    /// the smallest block): fio's loop bounds read it, where an LFSR keeps `random_map` on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fio_norandommap: bool,
    pub block_size_read: BlockSizeSpec,
    pub block_size_write: BlockSizeSpec,
    /// A trim job's smallest read block as `bs` gave it, before its trims took the read sizes
    /// (`None` elsewhere): fio's random map counts in the smallest block of all three
    /// directions (init.c, `rw_min_bs`), which a read size below the trims' makes finer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_job_read_min_bytes: Option<u64>,
    /// The access pattern storlab advises the kernel of for each worker's region (fio
    /// `fadvise_hint`); by default the job's own: random or sequential.
    #[serde(default, skip_serializing_if = "FadviseHint::is_default")]
    pub fadvise_hint: FadviseHint,
    /// Offsets (and range/split sizes) are multiples of this (fio `blockalign`); default 4 KiB.
    pub align_bytes: u64,
    /// `blockalign` was given. fio's random map then draws among the places `align_bytes` apart
    /// (`bs=4k blockalign=512` issues 512-byte-aligned I/O); left unset, as fio's `blockalign`
    /// defaults to the block size, the map's places are one block apart (rounded up to the
    /// alignment), so a random job visits every block once per pass.
    #[serde(default, skip_serializing_if = "is_false")]
    pub align_given: bool,
    /// Outstanding I/Os per worker.
    pub iodepth: u32,
    /// Number of workers (threads) running this job.
    pub numjobs: u32,
    /// Start of worker 0's region.
    pub offset_bytes: u64,
    /// Worker `i` starts at `offset_bytes + i * offset_increment_bytes` (fio semantics).
    pub offset_increment_bytes: u64,
    /// fio's `offset_align`: what a region start given as a share of the target is rounded
    /// up to (fio's default: the job's smallest block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_align_bytes: Option<u64>,
    /// fio's `bs_is_seq_rand`: `bs`'s read sizes go to sequential I/O, its write sizes to
    /// random I/O, whatever the direction.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bs_is_seq_rand: bool,
    /// fio's `bs_unaligned`: a size drawn from a range or split is any byte count, not a
    /// multiple of the smallest size.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bs_unaligned: bool,
    /// The clone index of this job's worker 0 in `offset_increment`: 0, except in a multi-client
    /// run, where client (MPI rank) `r` of a job with `numjobs = n` numbers its workers from
    /// `r * n`, so the clients' regions of one shared file follow each other as fio's clones do
    /// (docs/distributed.md).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clone_index_base: u32,
    /// Length of each worker's region; `None` means "to the end of the target".
    pub size_bytes: Option<u64>,
    /// Any of `offset`, `offset_increment` and `size` given as a share of the target's size
    /// (then it replaces the byte field above).
    #[serde(default, skip_serializing_if = "TargetShares::is_unset")]
    pub target_shares: TargetShares,
    /// Stop after this many I/Os per worker (fio `number_ios`).
    pub number_ios: Option<u64>,
    /// Bytes each worker moves in one loop (fio `io_size`); `None` = its region's size. More
    /// than the region goes round it again.
    #[serde(default)]
    pub io_size_bytes: Option<u64>,
    /// `io_size` written in the job (not `size` made into it by `filesize`): fio then starts
    /// a file that is done over while the bytes are short (backend.c `keep_running`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub io_size_given: bool,
    /// fio's `do_verify=0`: a new loop of a one-loop job that is not time based keeps its file
    /// done (libfio.c `reset_io_counters` clears `nr_done_files` only with `time_based`, loops
    /// left or `do_verify`), so a loop that ended at the file's end is the job's last
    /// (`--rw=write --size=256k --io_size=512k --do_verify=0`: 64 writes, not 128).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fio_done_file_stays_done: bool,
    /// fio's `file_service_type` zipf, pareto or normal: where no I/O can be placed, fio resets
    /// the file and goes on in the same loop instead of ending it (io_u.c `set_io_u_file`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fio_file_service_resets: bool,
    /// With `filesize`, `size` as written in the job, in bytes (not a share): `size_bytes` is
    /// then the file's region and this the job's own figure, which sizes fio's null engine's
    /// file (filesetup.c `get_file_sizes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_given_bytes: Option<u64>,
    /// fio's `filesize`: each clone's region runs from its own start to there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesize_bytes: Option<u64>,
    /// Times the job repeats its `io_size` (fio `loops`), statistics adding up.
    #[serde(default = "default_loops")]
    pub loops: u32,
    /// Run length limit after ramp (fio `runtime`).
    pub runtime_ns: Option<u64>,
    /// Keep going over the region until `runtime_ns` ends (fio `time_based`).
    pub time_based: bool,
    /// Run for this long before statistics start counting.
    pub ramp_time_ns: u64,
    pub rate_iops: RateIops,
    /// Bytes-per-second ceiling per direction (fio `rate=R,W`), on top of `rate_iops`.
    #[serde(default)]
    pub rate_bytes: RateBytes,
    pub data_pattern: DataPattern,
    /// Seed for offsets, sizes, directions and data.
    pub seed: u64,
    /// Check that data read back equals what was written (needs a write-then-read job): fio's
    /// `verify` with `do_verify` (or `verify_only`).
    pub verify: bool,
    /// fio's verify family: the block format writes carry (fio's header and checksum) and how
    /// the read-back checks it. `None` with `verify`: storlab's own per-write data only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_spec: Option<VerifySpec>,
    /// fio's `verify_state_save` (set only with `verify`, `do_verify=0` included): a writing job
    /// leaves fio's verify state file
    /// `local-NAME-N-verify.state` (N the clone's thread index from 0) in the current
    /// directory at its end. On by default in fio job files and flags, as in fio; off in
    /// storlab's presets and in jobs built in code.
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_state_save: bool,
    /// fio's `verify_state_load`: each clone reads `local-NAME-N-verify.state` from the current
    /// directory before the job starts, and its verify pass stops where fio's would (at the
    /// first write the saved run had not completed). Sequential writing jobs only.
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify_state_load: bool,
    /// fio's `continue_on_error`: failed I/Os of these kinds are counted and the job goes on.
    #[serde(default, skip_serializing_if = "ContinueOnError::is_none")]
    pub continue_on_error: ContinueOnError,
    /// fio's `fill_device` (`fill_fs`): a write failing with ENOSPC (or EDQUOT) ends the job as
    /// a success; on a regular file the file is not laid out and, without `size`, the job may
    /// write the file's length plus its file system's free space.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fill_device: bool,
    /// Wait for previous jobs to finish before starting (fio `stonewall`).
    pub stonewall: bool,
    /// Start a new reporting group without waiting (fio `new_group`): the fio-shaped outputs
    /// give this job the next `groupid`, as a `stonewall` does.
    #[serde(default, skip_serializing_if = "is_false")]
    pub new_group: bool,
    /// fio's `startdelay`: the job starts this long after the run did.
    #[serde(default, skip_serializing_if = "crate::StartDelay::is_unset")]
    pub start_delay: crate::StartDelay,
    /// fio's `wait_for`: the job starts once every clone of the earlier job of this name has
    /// finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for: Option<String>,
    /// fio's `exitall`, `exit_what`, `exitall_on_error`: the jobs this one's end stops.
    #[serde(default, skip_serializing_if = "crate::ExitAll::is_unset")]
    pub exit_all: crate::ExitAll,
    /// fio's `prio` and `prioclass`: the I/O priority the job's threads run at (`None`: the
    /// priority storlab was started with, as fio leaves it unless either key is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_priority: Option<crate::IoPriority>,
    /// Report all workers of this job as one (fio `group_reporting`).
    pub group_reporting: bool,
    /// fio's reporting keys: what the fio-shaped outputs print for this job.
    #[serde(default, skip_serializing_if = "FioReport::is_default")]
    pub fio_report: FioReport,
    /// Record every I/O issued in this file, in fio's iolog format version 2 (fio's
    /// `write_iolog`); worker `i` of a job with `numjobs` above 1 writes `FILE.i`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iolog: Option<PathBuf>,
    /// fio's engine options (`hipri`, `fixedbufs`, ...), all off unless set.
    #[serde(default, skip_serializing_if = "EngineTuning::is_default")]
    pub engine_tuning: EngineTuning,
    /// When writes are made stable (fio's `fsync`, `fdatasync`, `end_fsync`, `fsync_on_close`,
    /// `sync`).
    #[serde(default, skip_serializing_if = "SyncSpec::is_unset")]
    pub sync: SyncSpec,
    /// Stalls between batches of I/O (fio's `thinktime` family).
    #[serde(default, skip_serializing_if = "ThinkSpec::is_unset")]
    pub think: ThinkSpec,
    /// fio's trim modes (`read_percent` is then 0: a trim changes the target as a write does).
    #[serde(default, skip_serializing_if = "TrimMode::is_none")]
    pub trim: TrimMode,
    /// The job's share of a flow of jobs (fio's `flow`, `flow_id`, `flow_sleep`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowSpec>,
    /// fio's `serialize_overlap`, as fio's `fixup_options` leaves it: no I/O is issued while
    /// one that overlaps it is in flight (off when nothing can race: a job that only reads,
    /// or one I/O at a time, unless submitted by offload).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub serialize_overlap: bool,
    /// fio's `iodepth_batch_submit`, `iodepth_batch_complete_min`/`_max` and `iodepth_low`
    /// (`None`: fio's defaults, one I/O submitted and one completion reaped at a time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_batch: Option<crate::IoBatch>,
    /// fio's `cpus_allowed` and `cpus_allowed_policy`: the CPUs the job's threads run on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_allowed: Option<crate::CpuAffinity>,
    /// fio's `io_submit_mode=offload`. storlab's worker issues the I/O either way; what it
    /// changes is `serialize_overlap`, which then checks against the in-flight I/O of every
    /// offload job of the group that sets it, whatever its file (fio 3.33, rate-submit.c).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub submit_offload: bool,
    /// Where random offsets fall (fio's `random_distribution`).
    #[serde(default, skip_serializing_if = "RandomDistribution::is_random")]
    pub random_distribution: RandomDistribution,
    /// fio's `rw=...:N` modifier: `N` bytes skipped after each sequential I/O, or, in a random
    /// job, a new random offset every `N` I/Os with sequential ones in between.
    #[serde(default, skip_serializing_if = "RwModifier::is_none")]
    pub rw_modifier: RwModifier,
    /// fio's own random streams (jobs from a fio job file or fio-style flags): offsets, sizes,
    /// directions and the random/sequential choice are drawn from fio's Tausworthe generators
    /// seeded as fio seeds them, so the I/O sequence is fio's. `None`: storlab's presets and
    /// quick set, which draw from ChaCha8 keyed by `seed` (ADR 0021).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_random: Option<FioRandom>,
    /// fio's `allow_file_create` (default on): off, a job whose file does not exist is refused
    /// instead of creating it.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub allow_file_create: bool,
    /// fio's `unlink`: delete the job's regular file after the job.
    #[serde(default, skip_serializing_if = "is_false")]
    pub unlink: bool,
    /// fio's `buffer_pattern` (and `verify_pattern`): every write carries these bytes repeated,
    /// unstamped, instead of the data pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_pattern: Option<Vec<u8>>,
    /// fio's dedupe family (`dedupe_percentage` above 0): every write's buffer is refilled from
    /// fio's own buffer streams, a share of them repeating earlier content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe: Option<DedupeSpec>,
    /// fio's write buffers, byte for byte, in a fio job whose bytes fio does not stamp with
    /// the clock (`None`: storlab's data pattern, stamped per write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_buffers: Option<FioBufferFill>,
    /// fio's `rate_min` (`ratemin`): the bandwidth each direction must keep, bytes per second;
    /// a worker that falls below it over a whole interval fails.
    #[serde(default, skip_serializing_if = "RateBytes::is_unset")]
    pub rate_min: RateBytes,
    /// fio's `rate_iops_min`: the I/Os per second each direction must keep, judged as
    /// `rate_min`.
    #[serde(default, skip_serializing_if = "RateIops::is_unset")]
    pub rate_iops_min: RateIops,
    /// fio's `rate_process=poisson`: rated I/Os go at exponentially distributed intervals around
    /// the rate's mean instead of evenly spaced.
    #[serde(default, skip_serializing_if = "is_false")]
    pub rate_poisson: bool,
    /// fio's `steadystate`: stop the job once its throughput has been steady for a while.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<SteadyStateSpec>,
    /// fio's `zonemode=strided`: I/O in zones spread over the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strided_zones: Option<StridedZones>,
    /// fio's per-I/O logs (`write_bw_log`, `write_iops_log`, `write_lat_log`,
    /// `write_hist_log` and their settings).
    #[serde(default, skip_serializing_if = "FioLogs::is_unset")]
    pub fio_logs: FioLogs,
    /// fio's `read_iolog`: the job replays this trace instead of drawing its own I/O. Not
    /// stored with results (the trace may be large); the job's options as written name it.
    #[serde(skip)]
    pub replay: Option<crate::iolog::ReplaySpec>,
    /// fio's latency-target keys (`latency_target`...: the queue-depth search), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<crate::LatencyTargetSpec>,
    /// fio's `numa_mem_policy`: where the kernel places the job's I/O buffers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_mem_policy: Option<crate::NumaMemPolicy>,
    /// Which of `run --repeat N`'s repeats this job is (`crate::repeat`); `None` for a job run
    /// once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<crate::Repeat>,
    /// Non-fatal remarks found while validating (e.g. alignment below 4 KiB).
    pub warnings: Vec<String>,
}

impl JobSpec {
    /// A job with storlab's defaults: 4 KiB random read, QD1, one worker, random data.
    pub fn new(name: impl Into<String>, engine: EngineKind, target: Target) -> Self {
        JobSpec {
            name: name.into(),
            engine,
            target,
            direct: false,
            invalidate: true,
            read_percent: 100,
            random_percent: 100,
            random_percent_write: None,
            random_map: true,
            block_size_read: BlockSizeSpec::Fixed(DEFAULT_ALIGN_BYTES),
            block_size_write: BlockSizeSpec::Fixed(DEFAULT_ALIGN_BYTES),
            fadvise_hint: FadviseHint::JobType,
            align_bytes: DEFAULT_ALIGN_BYTES,
            align_given: false,
            trim_job_read_min_bytes: None,
            iodepth: 1,
            numjobs: 1,
            offset_bytes: 0,
            offset_increment_bytes: 0,
            offset_align_bytes: None,
            bs_is_seq_rand: false,
            bs_unaligned: false,
            clone_index_base: 0,
            fio_file_name: None,
            size_bytes: None,
            target_shares: TargetShares::default(),
            number_ios: None,
            io_size_bytes: None,
            io_size_given: false,
            fio_done_file_stays_done: false,
            fio_file_service_resets: false,
            fio_norandommap: false,
            size_given_bytes: None,
            filesize_bytes: None,
            loops: 1,
            runtime_ns: None,
            time_based: false,
            ramp_time_ns: 0,
            rate_iops: RateIops::default(),
            rate_bytes: RateBytes::default(),
            data_pattern: DataPattern::Random,
            seed: DEFAULT_SEED,
            verify: false,
            verify_spec: None,
            verify_state_save: false,
            verify_state_load: false,
            continue_on_error: ContinueOnError::default(),
            fill_device: false,
            stonewall: false,
            new_group: false,
            start_delay: crate::StartDelay::default(),
            wait_for: None,
            exit_all: crate::ExitAll::default(),
            io_priority: None,
            group_reporting: false,
            fio_report: FioReport::default(),
            write_iolog: None,
            engine_tuning: EngineTuning::default(),
            sync: SyncSpec::default(),
            think: ThinkSpec::default(),
            trim: TrimMode::None,
            flow: None,
            serialize_overlap: false,
            io_batch: None,
            cpus_allowed: None,
            submit_offload: false,
            random_distribution: RandomDistribution::Random,
            rw_modifier: RwModifier::None,
            fio_random: None,
            allow_file_create: true,
            unlink: false,
            rate_poisson: false,
            rate_min: RateBytes::default(),
            rate_iops_min: RateIops::default(),
            buffer_pattern: None,
            dedupe: None,
            fio_buffers: None,
            steadystate: None,
            strided_zones: None,
            fio_logs: FioLogs::default(),
            replay: None,
            latency_target: None,
            numa_mem_policy: None,
            repeat: None,
            warnings: Vec::new(),
        }
    }

    /// fio's cmdprio family picks some of this job's requests: it is set and the engine carries
    /// a priority per request (io_uring, libaio; the simulator in their place records it).
    pub fn uses_cmdprio(&self) -> bool {
        self.engine_tuning.cmdprio.is_set()
            && matches!(
                self.engine,
                EngineKind::IoUring | EngineKind::Libaio | EngineKind::Sim
            )
    }

    /// The largest size that divides every offset (from the region's start) and length this
    /// job can issue: the greatest common divisor of the alignment (random offsets only), every
    /// block size (`bs`, `bsrange`, `bssplit`; the read sizes only in a job that reads, as a
    /// writing job's verify reads back its writes' own extents), the `rw=write:N` hole, strided
    /// zones' sizes, the clones' `offset_increment` and `io_size`. Verify keeps its record, and
    /// writes its headers, per granule.
    pub fn verify_granule_bytes(&self) -> u64 {
        let sizes = |spec: &BlockSizeSpec| -> u64 {
            match spec {
                BlockSizeSpec::Fixed(size) => *size,
                // `bsrange` draws `min + k * align`.
                BlockSizeSpec::Range { min_bytes, .. } => *min_bytes,
                BlockSizeSpec::Split(shares) => shares.iter().fold(0, |g, s| gcd(g, s.size_bytes)),
            }
        };
        let random_offsets = self.random_percent > 0 || self.random_percent_writes() > 0;
        // The alignment places random offsets only (fio's `blockalign`): a sequential job's
        // offsets are its region's start plus whole I/Os, fio's holes and zone steps, so a
        // 64 KiB block keeps one header as in fio rather than one per 4 KiB.
        // A fio job without `blockalign` draws random offsets in fio's steps, the smallest block.
        let align_bytes = if self.fio_random.is_some() && !self.align_given {
            gcd(
                self.block_size_read.min_bytes(),
                self.block_size_write.min_bytes(),
            )
        } else {
            self.align_bytes
        };
        let mut granule = if random_offsets {
            gcd(align_bytes.max(1), sizes(&self.block_size_write))
        } else {
            sizes(&self.block_size_write)
        };
        if let RwModifier::SkipBytes(hole_bytes) | RwModifier::BackBytes(hole_bytes) =
            self.rw_modifier
        {
            granule = gcd(granule, hole_bytes);
        }
        if let Some(zones) = &self.strided_zones {
            granule = gcd(granule, zones.size_bytes);
            granule = gcd(granule, zones.range_bytes);
            granule = gcd(granule, zones.skip_bytes);
        }
        // Clones' regions start `offset_increment` apart and each checks its peers' writes
        // too; an increment given as a share of the target is resolved at run time, rounded
        // to the alignment, which then stands in for it.
        if self.numjobs > 1 {
            granule = gcd(granule, self.offset_increment_bytes);
            if self.target_shares.offset_increment_ppm.is_some() {
                granule = gcd(granule, self.align_bytes.max(1));
            }
        }
        if self.read_percent > 0 {
            granule = gcd(granule, sizes(&self.block_size_read));
        }
        // A size-bounded run trims its last I/O to the bytes left of `io_size`.
        if let Some(io_size) = self.io_size_bytes {
            granule = gcd(granule, io_size);
        }
        granule.max(1)
    }

    /// The header interval fio 3.33 gives this job's writes (init.c `fixup_options`, verify
    /// part): `verify_interval` as set (0 when not), or the smallest write size when write
    /// sizes vary; no larger than the smallest write (or, in a job that reads, read) size; and
    /// replaced by the greatest common divisor of the smallest and largest write sizes when it
    /// does not divide both. fio then puts a header at every interval of each block.
    pub fn fio_verify_interval_bytes(&self, set_bytes: Option<u64>) -> u64 {
        let min_write = self.block_size_write.min_bytes();
        let max_write = self.block_size_write.max_bytes();
        let mut interval = set_bytes.unwrap_or(0);
        if max_write != min_write && interval == 0 {
            interval = min_write;
        }
        if interval > min_write {
            interval = min_write;
        } else if self.read_percent > 0 && interval > self.block_size_read.min_bytes() {
            interval = self.block_size_read.min_bytes();
        }
        if interval == 0
            || !min_write.is_multiple_of(interval)
            || !max_write.is_multiple_of(interval)
        {
            interval = gcd(min_write, max_write);
        }
        interval
    }

    /// The advice `fadvise_hint` gives for this job (fio: random for a job with random offsets,
    /// `td_random`; sequential otherwise). `Off` asks for the kernel's default, so a descriptor
    /// an earlier job advised is as a freshly opened one.
    pub fn access_advice(&self) -> AccessAdvice {
        match self.fadvise_hint {
            FadviseHint::Off => AccessAdvice::Normal,
            FadviseHint::JobType if self.random_percent > 0 || self.random_percent_writes() > 0 => {
                AccessAdvice::Random
            }
            FadviseHint::JobType => AccessAdvice::Sequential,
            FadviseHint::Random => AccessAdvice::Random,
            FadviseHint::Sequential => AccessAdvice::Sequential,
        }
    }

    /// fio's `td_min_bs`: the smallest block of reads, writes and (a trim job's) trims.
    pub fn fio_smallest_block_bytes(&self) -> u64 {
        self.block_size_read
            .min_bytes()
            .min(self.block_size_write.min_bytes())
            .min(self.trim_job_read_min_bytes.unwrap_or(u64::MAX))
            .max(1)
    }

    /// Writes' share of random offsets (`random_percent` unless fio's `read,write` form of
    /// `percentage_random` gave them their own).
    pub fn random_percent_writes(&self) -> u8 {
        self.random_percent_write.unwrap_or(self.random_percent)
    }

    /// Every I/O of the job, in either direction, goes to a random offset.
    pub fn fully_random(&self) -> bool {
        self.random_percent == 100 && self.random_percent_writes() == 100
    }

    /// Largest I/O this job can issue in either direction.
    pub fn max_block_bytes(&self) -> u64 {
        self.block_size_read
            .max_bytes()
            .max(self.block_size_write.max_bytes())
    }

    /// Where the last worker's region starts: `offset + (numjobs - 1) * offset_increment`, or
    /// `None` when that lies beyond 2^64 bytes (validation refuses such a job, so for a validated
    /// job this, and this plus `size`, never overflow).
    pub fn last_worker_offset_bytes(&self) -> Option<u64> {
        (u64::from(self.clone_index_base) + u64::from(self.numjobs.saturating_sub(1)))
            .checked_mul(self.offset_increment_bytes)?
            .checked_add(self.offset_bytes)
    }

    /// The fio-style `rw=` name of this job's direction/randomness mix.
    pub fn rw_name(&self) -> &'static str {
        let random = self.fully_random();
        match (self.trim, random) {
            (TrimMode::Trim, false) => return "trim",
            (TrimMode::Trim, true) => return "randtrim",
            (TrimMode::TrimWrite, false) => return "trimwrite",
            (TrimMode::TrimWrite, true) => return "randtrimwrite",
            (TrimMode::None, _) => {}
        }
        match (self.read_percent, random) {
            (100, false) => "read",
            (100, true) => "randread",
            (0, false) => "write",
            (0, true) => "randwrite",
            (_, false) => "rw",
            (_, true) => "randrw",
        }
    }
}

/// An ordered list of jobs, as read from one fio file or one command line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSet {
    pub jobs: Vec<JobSpec>,
}

impl JobSet {
    /// fio's thread number of the first clone of job `job_index`: 1 for the first job, each
    /// earlier job's `numjobs` clones counted before (the `N` of `PREFIX_bw.N.log`).
    pub fn first_thread_number(&self, job_index: usize) -> u32 {
        let before: u32 = self.jobs[..job_index.min(self.jobs.len())]
            .iter()
            .map(|job| job.numjobs)
            .fold(0, u32::saturating_add);
        before.saturating_add(1)
    }

    /// Every fio log file the set's jobs write with the key asking for it, each once
    /// (`per_job_logs=0` clones share one).
    pub fn fio_log_paths(&self) -> Vec<(&'static str, PathBuf)> {
        let mut paths = Vec::new();
        for (index, job) in self.jobs.iter().enumerate() {
            let first = self.first_thread_number(index);
            for clone in 0..job.numjobs {
                for kind in FioLogKind::ALL {
                    if let Some(path) = job.fio_logs.path(kind, first.saturating_add(clone)) {
                        if !paths.iter().any(|(_, p)| *p == path) {
                            paths.push((kind.key(), path));
                        }
                    }
                }
            }
        }
        paths
    }
}

/// Greatest common divisor (0 with 0 is 0).
pub(crate) fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
