//! The bounds of one fio thread's sequence as fio 3.33 sets them up (filesetup.c, backend.c):
//! what its random map spans, its `io_size`, the bytes a loop and the job issue, its loops.

use crate::offsets::{PlannedIo, Region};
use storlab_engine::IoDirection;
use storlab_job::{JobSpec, RwModifier, TrimMode};

/// The page size the kernel rounds fio's mappings up to (x86-64).
const PAGE_BYTES: u64 = 4096;

impl super::FioSequence {
    /// fio's `file_offset`: the region's start, a strided job's current zone's.
    pub(crate) fn file_offset_bytes(&self) -> u64 {
        self.region.start_bytes
    }

    /// A `verify_backlog` read of the piece written at `offset_bytes`: fio's read-back during
    /// the loop, counted in the bytes `keep_running` weighs (`io_bytes`) and out of the log the
    /// loop's end pass reads, as in fio's one log (a later write over it drops nothing there).
    pub fn note_backlog_read(&mut self, offset_bytes: u64, len_bytes: u64) {
        // fio's loop counts the backlog's reads in its `bytes_issued` (backend.c `do_io`).
        self.moved_bytes += len_bytes;
        if self.verify_reopens_files {
            self.loop_written.remove(offset_bytes);
            self.read_back_bytes += len_bytes;
        }
    }

    /// Why the mmap engine's next I/O `io` is not followed (see [`mmap_overrun`]).
    pub(super) fn mmap_overrun(&self, io: &PlannedIo) -> Option<String> {
        mmap_overrun(self.mmap_window_bytes, self.region, io)
    }
}

/// fio's mmap engine maps the file's `io_size` bytes from its start and puts each I/O at its
/// offset less the region's start (engines/mmap.c, `fio_mmapio_prep`): an I/O that reaches
/// past the mapping's last page (a hole's stride overshooting the region's end) is copied
/// past the mapping, into whatever fio's process maps next, if anything. A write there kills
/// fio's job with SIGSEGV (`--rw=write:4k --bs=8k --size=64k --ioengine=mmap`: six writes
/// logged, then the crash, every run); a read there does or not as fio's memory layout
/// decides (on this machine, `--rw=read:8k --bs=16k --ioengine=mmap` dies with `size=512k`,
/// every run, and completes with `size=256k` or `1m`; seed 2121). storlab stops the job
/// there, saying so, rather than read the file where fio reads memory or crashes.
fn mmap_overrun(mapped_bytes: Option<u64>, region: Region, io: &PlannedIo) -> Option<String> {
    let mapped_bytes = mapped_bytes?;
    let end_bytes = io.offset_bytes.checked_sub(region.start_bytes)? + u64::from(io.len_bytes);
    let what = match io.direction {
        IoDirection::Write => "fio's job dies of SIGSEGV there",
        _ => "fio's job reads whatever memory lies beyond or dies of SIGSEGV there, as its memory layout decides",
    };
    (end_bytes > mapped_bytes).then(|| {
        format!(
            "fio 3.33's mmap engine maps {mapped_bytes} bytes for the region and puts each I/O at its offset less the region's start, so the {}-byte I/O at {} runs past the mapping and {what} (engines/mmap.c); storlab stops the job there (holes that overshoot the region's end: use another ioengine, or a size the stride divides)",
            io.len_bytes, io.offset_bytes
        )
    })
}

/// The bytes fio's mmap engine maps for `job` over `region` (its `io_size`, rounded up to
/// pages by the kernel), or None on another engine.
pub(super) fn fio_mmap_window_bytes(job: &JobSpec, region: Region) -> Option<u64> {
    job.fio_engine_maps_region()
        .then(|| fio_io_size_bytes(job, region).next_multiple_of(PAGE_BYTES))
}

/// What fio's random blocks and map span (io_u.c `last_block`, filesetup.c `init_random_map`):
/// the region or the file if shorter, one zone's range in a strided job.
pub(super) fn fio_map_bytes(job: &JobSpec, region: Region, file_size_bytes: u64) -> u64 {
    match job.strided_zones {
        Some(zones) => zones.range_bytes,
        None => region.len_bytes.min(file_size_bytes),
    }
}

/// fio's `io_size` of the file (`td->o.size` for one file): the region's length, but a strided
/// job's region spans the target while its `size` is what it moves and what `io_u_fits` and
/// `get_next_offset` measure from fio's start.
pub(super) fn fio_io_size_bytes(job: &JobSpec, region: Region) -> u64 {
    match job.strided_zones {
        Some(_) => job.size_bytes.unwrap_or(region.len_bytes),
        None => region.len_bytes,
    }
}

/// backend.c's bounds of `job` over `region` (`random_job`: some of its I/O is random): the
/// bytes one loop issues at most (`do_io`'s `total_bytes`), the bytes the whole job issues at
/// most (`io_bytes_exceeded`), and the loops.
pub(super) fn loop_bounds(job: &JobSpec, region: Region, random_job: bool) -> (u64, u64, u32) {
    let size = fio_io_size_bytes(job, region);
    // backend.c `do_io`: a writing job (`td_write`: any `rw=` with writes, a mixed one too)
    // with random offsets and no random map issues `io_size` in one loop.
    let writes = job.fio_writes();
    // init.c `fixup_options` sets `norandommap` for any distribution but the uniform one; an
    // LFSR job keeps storlab's `random_map` on, fio's `norandommap` as given.
    let map_off = !job.random_map || job.fio_norandommap || !job.random_distribution.is_random();
    // `td_random`: a rand* mode, `percentage_random=0` too (seed 8686: `--rw=randwrite
    // --blockalign=8k --io_size=2048k --percentage_random=0` on libaio runs on past the file's
    // end to a random block, not into a second loop from 0).
    let rand_mode = job.fio_random.as_ref().is_some_and(|f| f.rand_mode);
    let random_write_unmapped = writes && (random_job || rand_mode) && map_off;
    // fio's `size` under `filesize` with a smaller `size` and no `io_size`: a loop's bytes,
    // while the region runs on to `filesize` (the job crate keeps it as `io_size_bytes`).
    let io_size_bytes = crate::offsets::clone_io_size_bytes(job, region);
    let size = match io_size_bytes {
        Some(bytes) if job.filesize_bytes.is_some() && !job.io_size_given => bytes,
        _ => size,
    };
    let pass_bytes = match io_size_bytes {
        // backend.c counts a loop's `bytes_issued` only for an I/O the engine queued
        // (`io_queue_event`, FIO_Q_QUEUED) or cut short: with an engine that completes each
        // I/O inside its queue call, the loop's `total_bytes` never ends it, only the job's
        // bytes and the file's end do (measured against fio 3.33: `--rw=rw --offset=64k
        // --io_size=1920k` on 1 MiB with psync reads on past the region's first 960 KiB).
        _ if !job.fio_engine_queues() => u64::MAX,
        Some(io_size) if random_write_unmapped => size.max(io_size),
        // A `size` below `filesize`'s region with `io_size` given too: `do_io` ends each loop
        // at `o->size` bytes, the smaller `size`, and `keep_running` starts the next one while
        // the job's `io_size` is not done.
        Some(_) if job.filesize_bytes.is_some() && job.io_size_given => {
            job.size_given_bytes.map_or(size, |given| given.min(size))
        }
        _ => size,
    };
    let passes = job.loops.max(1);
    // backend.c `do_io`: "in trimwrite mode, each byte is trimmed and then written", so a
    // loop may issue the job's whole bytes (`total_io_size`, every loop's) on top of `size`.
    let pass_bytes = if job.trim == TrimMode::TrimWrite && pass_bytes != u64::MAX {
        let total_io_bytes = io_size_bytes.unwrap_or(size) * u64::from(passes);
        pass_bytes.saturating_add(total_io_bytes)
    } else {
        pass_bytes
    };
    // backend.c `do_io`: with `verify_backlog` a writing job's loop may issue `size` more
    // (its backlog reads count in `bytes_issued`, `FioSequence::note_backlog_read`), with
    // `do_verify=0` too (`td->o.verify` is the kind), where no backlog read comes.
    let backlog = job
        .verify_spec
        .as_ref()
        .is_some_and(|v| v.backlog.is_some());
    let pass_bytes = if backlog && writes && pass_bytes != u64::MAX {
        pass_bytes.saturating_add(size)
    } else {
        pass_bytes
    };
    let job_bytes = io_size_bytes
        .unwrap_or(size)
        .saturating_mul(u64::from(passes));
    if let RwModifier::BackBytes(_) = job.rw_modifier {
        // Backward holes always wrap, so the file is never done, and fio 3.33 goes on where
        // the last loop ended: every loop's bytes come as one sequence (measured against fio:
        // `--rw=read:-8k --bs=4k --size=32k --loops=2` on 64 KiB reads 0, 24, 20, ... 4, 0,
        // 24, 20, ... 4, 0, 24).
        return (job_bytes, job_bytes, 1);
    }
    (pass_bytes, job_bytes, passes)
}

/// fio's `ddir_seq_add` of `modifier` (`rw=MODE:SIZE`, negative for `rw=MODE:-SIZE`).
pub(super) fn seq_add_bytes(modifier: RwModifier) -> i64 {
    match modifier {
        RwModifier::SkipBytes(n) => i64::try_from(n).unwrap_or(i64::MAX),
        RwModifier::BackBytes(n) => i64::try_from(n).map_or(i64::MIN, |n| -n),
        _ => 0,
    }
}
