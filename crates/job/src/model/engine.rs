//! The engines: storlab's one list of engine names, the fio engines it refuses by design, and the engines' own options (io_uring's, cmdprio).

use super::{is_false, is_zero_u8};
use serde::{Deserialize, Serialize};

/// Which engine carries the I/O (fio's `ioengine`).
///
/// This enum and [`EngineKind::ALL`] are storlab's one list of engine names: job validation,
/// the engine registry, help text and the docs test all read it (and [`OUT_OF_SCOPE_ENGINES`]
/// for the fio engines storlab refuses by design).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// No I/O at all: measures the tool itself.
    Null,
    /// `pread`/`pwrite`, one request at a time per worker.
    Psync,
    /// `lseek` then `read`/`write`, one request at a time per worker (fio's `sync`).
    Sync,
    /// `preadv`/`pwritev` of one iovec, one request at a time per worker.
    Pvsync,
    /// `preadv2`/`pwritev2` with per-I/O flags (`hipri`, `nowait`), one at a time per worker.
    Pvsync2,
    /// Linux native AIO (`io_setup`/`io_submit`/`io_getevents`), queued.
    Libaio,
    /// POSIX AIO (`aio_read`/`aio_write`, glibc's thread pool), queued.
    Posixaio,
    /// The target mapped into memory; I/O is `memcpy` (fio's `mmap`).
    Mmap,
    /// Linux io_uring with registered files and buffers.
    IoUring,
    /// The simulated USB/SATA stack (virtual time).
    Sim,
}

impl EngineKind {
    /// Every engine, in the order help text and docs list them.
    pub const ALL: [EngineKind; 10] = [
        EngineKind::Null,
        EngineKind::Psync,
        EngineKind::Sync,
        EngineKind::Pvsync,
        EngineKind::Pvsync2,
        EngineKind::Libaio,
        EngineKind::Posixaio,
        EngineKind::Mmap,
        EngineKind::IoUring,
        EngineKind::Sim,
    ];

    /// The name used on the command line and in fio files.
    pub const fn as_str(self) -> &'static str {
        match self {
            EngineKind::Null => "null",
            EngineKind::Psync => "psync",
            EngineKind::Sync => "sync",
            EngineKind::Pvsync => "pvsync",
            EngineKind::Pvsync2 => "pvsync2",
            EngineKind::Libaio => "libaio",
            EngineKind::Posixaio => "posixaio",
            EngineKind::Mmap => "mmap",
            EngineKind::IoUring => "io_uring",
            EngineKind::Sim => "sim",
        }
    }

    /// The engine called `name` (`ioengine=` value), if storlab has one.
    pub fn from_name(name: &str) -> Option<EngineKind> {
        EngineKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }

    /// Whether more than one request can be in flight per worker (fio's sync engines keep
    /// one: `iodepth` above 1 changes nothing for them).
    pub fn queued(self) -> bool {
        matches!(
            self,
            EngineKind::Null
                | EngineKind::Libaio
                | EngineKind::Posixaio
                | EngineKind::IoUring
                | EngineKind::Sim
        )
    }

    /// The names of every engine, joined for a help line (`null, psync, ...`).
    pub fn names_joined() -> String {
        EngineKind::ALL.map(EngineKind::as_str).join(", ")
    }
}

/// fio engines storlab refuses by design (issue #20): network, RDMA, HTTP, GPU-file, xNVMe,
/// zoned/SG passthrough, cluster and vendor engines. storlab measures local files, block devices
/// and its simulated stacks; each name here is refused with one line saying so.
pub const OUT_OF_SCOPE_ENGINES: &[&str] = &[
    // network
    "net",
    "netsplice",
    "http",
    "nbd",
    "nfs",
    "libiscsi",
    // RDMA
    "rdma",
    // GPU file I/O
    "libcufile",
    // xNVMe, SCSI generic and NVMe passthrough, user-space drivers
    "xnvme",
    "sg",
    "io_uring_cmd",
    "spdk",
    "spdk_bdev",
    // cluster and distributed filesystems
    "rados",
    "rbd",
    "libhdfs",
    "gfapi",
    "gfapi_async",
    "dfs",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    // RDMA persistent memory
    "librpma_apm_client",
    "librpma_apm_server",
    "librpma_gpspm_client",
    "librpma_gpspm_server",
    // persistent memory through DAX mappings, not the block layer
    "dev-dax",
    "libpmem",
    "pmemblk",
    // zoned and raw flash devices
    "libzbc",
    "mtd",
    // engines that do something other than read and write data: burn CPU, run a program,
    // create/stat/delete/truncate/preallocate files, defragment, C++ and external plug-ins
    "cpuio",
    "exec",
    "filecreate",
    "filestat",
    "filedelete",
    "ftruncate",
    "falloc",
    "e4defrag",
    "cpp_null",
];

/// fio's engine options (`hipri`, `fixedbufs`, `userspace_reap`, ...): what the chosen engine
/// does at setup or per I/O. Each has no effect on an engine that lacks it (validation warns).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineTuning {
    /// io_uring: poll for completions (`IORING_SETUP_IOPOLL`); pvsync2: `RWF_HIPRI`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub hipri: bool,
    /// pvsync2 and io_uring: `RWF_NOWAIT` (fail with EAGAIN rather than block).
    #[serde(default, skip_serializing_if = "is_false")]
    pub nowait: bool,
    /// io_uring `fixedbufs`: `Some(true)` requires registered buffers, `Some(false)` forbids
    /// them, `None` (unset) registers them when the kernel allows (storlab's cheapest path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixedbufs: Option<bool>,
    /// io_uring `registerfiles`: as `fixedbufs`, for the registered file table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registerfiles: Option<bool>,
    /// io_uring `sqthread_poll`: a kernel thread polls the submission queue.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sqthread_poll: bool,
    /// io_uring `nonvectored=0`: READV/WRITEV with one iovec instead of READ/WRITE.
    #[serde(default, skip_serializing_if = "is_false")]
    pub vectored: bool,
    /// fio's cmdprio family (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`,
    /// `cmdprio_bssplit`) for io_uring and libaio, per direction.
    #[serde(default, skip_serializing_if = "CmdPrio::is_unset")]
    pub cmdprio: CmdPrio,
    /// io_uring `sqthread_poll_cpu`: the CPU the `sqthread_poll` kernel thread is bound to
    /// (`IORING_SETUP_SQ_AFF`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqthread_poll_cpu: Option<u32>,
    /// libaio `userspace_reap`: read completions from the AIO ring in user space.
    #[serde(default, skip_serializing_if = "is_false")]
    pub userspace_reap: bool,
}

impl EngineTuning {
    pub(super) fn is_default(&self) -> bool {
        *self == EngineTuning::default()
    }

    /// The options set that `engine` has no use for, by fio name (for a warning).
    pub fn ignored_by(&self, engine: EngineKind) -> Vec<&'static str> {
        let uring = engine == EngineKind::IoUring;
        let mut ignored = Vec::new();
        let mut check = |set: bool, used: bool, name: &'static str| {
            if set && !used {
                ignored.push(name);
            }
        };
        check(self.hipri, uring || engine == EngineKind::Pvsync2, "hipri");
        check(
            self.nowait,
            uring || engine == EngineKind::Pvsync2,
            "nowait",
        );
        check(self.fixedbufs.is_some(), uring, "fixedbufs");
        check(self.registerfiles.is_some(), uring, "registerfiles");
        check(self.sqthread_poll, uring, "sqthread_poll");
        check(self.vectored, uring, "nonvectored");
        // The simulator stands in for the job's io_uring or libaio under `--target sim:`; it
        // records each request's priority (docs/job-format.md says what a drive does with it).
        let cmdprio_engine = uring || engine == EngineKind::Libaio || engine == EngineKind::Sim;
        let (read, write) = (&self.cmdprio.read, &self.cmdprio.write);
        check(
            read.percentage > 0 || write.percentage > 0,
            cmdprio_engine,
            "cmdprio_percentage",
        );
        check(
            !read.bssplit.is_empty() || !write.bssplit.is_empty(),
            cmdprio_engine,
            "cmdprio_bssplit",
        );
        // As in fio, the class and level are those of the I/Os `cmdprio_percentage` or
        // `cmdprio_bssplit` picks, and the CPU that of the `sqthread_poll` thread.
        let picks = cmdprio_engine && self.cmdprio.is_set();
        check(
            read.class.is_some() || write.class.is_some(),
            picks,
            "cmdprio_class",
        );
        check(
            read.level.is_some() || write.level.is_some(),
            picks,
            "cmdprio",
        );
        check(
            self.sqthread_poll_cpu.is_some(),
            uring && self.sqthread_poll,
            "sqthread_poll_cpu",
        );
        check(
            self.userspace_reap,
            engine == EngineKind::Libaio,
            "userspace_reap",
        );
        ignored
    }
}

/// fio's cmdprio family for reads and for writes (fio's `read,write` forms; trims carry no
/// priority in fio, so a third value is accepted and has no use): which I/Os io_uring and
/// libaio submit with an I/O priority (engines/cmdprio.c in fio 3.33).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmdPrio {
    #[serde(default, skip_serializing_if = "CmdPrioDirection::is_unset")]
    pub read: CmdPrioDirection,
    #[serde(default, skip_serializing_if = "CmdPrioDirection::is_unset")]
    pub write: CmdPrioDirection,
}

impl CmdPrio {
    /// Nothing given for either direction.
    pub fn is_unset(&self) -> bool {
        self.read.is_unset() && self.write.is_unset()
    }

    /// Some I/Os get a priority: `cmdprio_percentage` or `cmdprio_bssplit` is set.
    pub fn is_set(&self) -> bool {
        self.read.picks_ios() || self.write.picks_ios()
    }
}

/// One direction's share of fio's cmdprio family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmdPrioDirection {
    /// `cmdprio_percentage`: share of this direction's I/Os given the priority.
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub percentage: u8,
    /// `cmdprio_class` (linux/ioprio.h: 1 real-time, fio's default; 2 best-effort; 3 idle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
    /// `cmdprio`: the level (0 highest … 7) within that class; fio's default is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    /// `cmdprio_bssplit`: shares of the I/Os of each block size, sorted by size (fio sorts
    /// them; several entries of one size add up), entries of 0% dropped as fio drops them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bssplit: Vec<CmdPrioSplit>,
}

impl CmdPrioDirection {
    fn is_unset(&self) -> bool {
        *self == CmdPrioDirection::default()
    }

    /// `cmdprio_percentage` or `cmdprio_bssplit` picks some of this direction's I/Os.
    pub fn picks_ios(&self) -> bool {
        self.percentage > 0 || !self.bssplit.is_empty()
    }
}

/// One `cmdprio_bssplit` entry: `SIZE/PERCENT` (the class and level of `cmdprio_class` and
/// `cmdprio`) or fio's second form `SIZE/PERCENT/CLASS/LEVEL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmdPrioSplit {
    /// The I/O size the entry applies to (fio compares it with the I/O's length exactly).
    pub block_size_bytes: u64,
    /// Share of the I/Os of that size given this entry's priority.
    pub percent: u8,
    /// The entry's own class and level (second form); `None` takes the direction's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_level: Option<(u8, u8)>,
}

/// What fio's engine for a job does that decides fio's sequence (engines/*.c).
impl super::JobSpec {
    /// Whether fio's engine for this job answers a read or write with FIO_Q_QUEUED (its loops
    /// count bytes only then, backend.c `io_queue_event`): the queued engines, `null` only
    /// above depth 1 (engines/null.c sets FIO_SYNCIO at depth 1), and the simulator, which
    /// queues as they do.
    pub fn fio_engine_queues(&self) -> bool {
        match self.engine {
            EngineKind::Null => self.iodepth > 1,
            kind => kind.queued(),
        }
    }

    /// Whether fio's engine runs a sync as it is queued, beside the I/O in flight: libaio
    /// (Linux has no asynchronous fsync for it; engines/libaio.c returns busy only while I/O
    /// is queued but not yet submitted, which fio's default batch never leaves).
    pub fn fio_engine_syncs_beside_io(&self) -> bool {
        self.engine == EngineKind::Libaio && self.io_batch.is_none_or(|batch| batch.submit == 1)
    }

    /// Whether fio's engine queues a sync as an I/O unit beside the I/O in flight, to
    /// complete in its turn: posixaio (engines/posixaio.c, `aio_fsync`). fio then asks for a
    /// sync at every unit it fills until one completes (io_u.c, `get_rw_ddir` and
    /// `io_completed`'s `last_was_sync`). io_uring too (`IORING_OP_FSYNC`, engines/io_uring.c
    /// `fio_ioring_prep`).
    pub fn fio_engine_queues_syncs(&self) -> bool {
        self.fio_random.is_some()
            && (matches!(self.engine, EngineKind::Posixaio | EngineKind::IoUring)
                || self.fio_logs_busy_requeues())
    }

    /// Whether fio's engine puts each I/O at its offset less the region's start (mmap.c).
    pub fn fio_engine_shifts_to_file_start(&self) -> bool {
        self.engine == EngineKind::Mmap && self.fio_random.is_some()
    }

    /// Whether fio goes on past a loop that ended at its file's end while the job's bytes are
    /// short of `io_size` (backend.c `keep_running`): with `io_size` given, unless
    /// `do_verify=0` keeps the file done in a one-loop job (`fio_done_file_stays_done`).
    pub fn fio_loops_past_a_done_file(&self) -> bool {
        self.io_size_given
            && !(self.fio_done_file_stays_done && self.loops == 1 && !self.time_based)
    }

    /// Whether fio's engine for this job maps the file's `io_size` bytes and copies each I/O
    /// in or out of that mapping (mmap.c), past which an I/O cannot reach.
    pub fn fio_engine_maps_region(&self) -> bool {
        self.engine == EngineKind::Mmap
    }

    /// fio's `td_write`: the job's `rw` has writes (a mixed mode or `trimwrite` too; a trim
    /// mode alone does not, though storlab opens its target for writing).
    pub fn fio_writes(&self) -> bool {
        self.trim == super::TrimMode::TrimWrite || (self.read_percent < 100 && self.trim.is_none())
    }

    /// Whether fio's engine for this job fakes its I/O (`null`: FIO_FAKEIO), so its verify
    /// passes every read before looking at a header (verify.c `verify_io_u`).
    pub fn fio_engine_fakes_io(&self) -> bool {
        self.engine == EngineKind::Null
    }

    /// Whether fio's engine for this job never sizes its file (`null`: FIO_DISKLESSIO with
    /// FIO_FAKEIO), so filesetup.c `setup_files` makes the file end at the region's end.
    pub fn fio_engine_sizes_no_file(&self) -> bool {
        self.engine == EngineKind::Null
    }

    /// Whether fio, running this fio job, logs each I/O after the first of a run twice: its
    /// null engine above depth 1 refuses a request while its last batch is unreaped
    /// (engines/null.c, FIO_Q_BUSY), and fio logs the request again when it queues it anew.
    pub fn fio_logs_busy_requeues(&self) -> bool {
        self.fio_random.is_some() && self.engine == EngineKind::Null && self.iodepth > 1
    }

    /// Whether this job's I/Os of `direction` have a submission latency (slat), as fio 3.33
    /// records one: only for an I/O its engine queued (`io_u_queued`, on `FIO_Q_QUEUED`). fio's
    /// synchronous engines do each I/O inside `queue` (`FIO_Q_COMPLETED`), and so does its null
    /// engine at depth 1 (`FIO_SYNCIO`); libaio, io_uring and posixaio trim inside `queue`
    /// too; and io_uring with `sqthread_poll` hands its I/Os to the kernel's thread without
    /// `fio_ioring_queued`, which calls `io_u_queued` only after `io_uring_enter`. Such an I/O's
    /// whole time is its completion latency, and its total latency still counts from when it
    /// was chosen. The simulator's stack queues every command.
    pub fn has_submission_latency(&self, direction_is_trim: bool) -> bool {
        match self.engine {
            EngineKind::Psync
            | EngineKind::Sync
            | EngineKind::Pvsync
            | EngineKind::Pvsync2
            | EngineKind::Mmap => false,
            EngineKind::Null => self.iodepth > 1,
            EngineKind::IoUring if self.engine_tuning.sqthread_poll => false,
            EngineKind::Libaio | EngineKind::IoUring | EngineKind::Posixaio => !direction_is_trim,
            EngineKind::Sim => true,
        }
    }
}
