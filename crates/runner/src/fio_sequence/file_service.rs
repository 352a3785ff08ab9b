//! fio's `file_service_type` as it bears on a job's one file: a non-uniform choice (zipf,
//! pareto, normal) makes fio reset the file where no I/O finds room instead of ending the loop;
//! and the close fio makes there fails on the null engine under `fsync_on_close`.

use storlab_job::{JobSpec, TrimMode};

/// `JobSpec::fio_file_service_resets` for one fio sequence, and where its resets stand.
#[derive(Clone, Copy, Debug)]
pub(super) struct FileService {
    pub(super) resets: bool,
    /// fio's engine queues I/O and the job's depth is above 1: I/Os are in flight at a reset.
    units_in_flight: bool,
    depth: u32,
    /// The file was reset and no I/O placed since: a second failure ends the job.
    pub(super) reset_without_io: bool,
    /// fio's close of the file where no I/O finds room fails: the null engine opens no
    /// descriptor (engines/null.c `null_open` leaves `fd` at -1), so `fsync_on_close`'s
    /// `fsync` of a writing job fails with EBADF (filesetup.c `put_file`) when the close
    /// comes at an in-flight I/O's completion, which reports it (io_u.c `put_file_log`); at
    /// depth 1 nothing is in flight and `set_io_u_file` ignores the failure.
    close_fails: bool,
}

/// What follows a fill that found no room, with a non-uniform `file_service_type`.
pub(super) enum ResetStep {
    /// fio resets the file and fills the same I/O unit again, its BUSY_OK flag kept, in the
    /// same loop (io_u.c `set_io_u_file`).
    Reset,
    /// fio 3.33 never ends the job here; why, in one line.
    FioHangs(String),
}

impl FileService {
    pub(super) fn of(job: &JobSpec) -> Self {
        FileService {
            resets: job.fio_file_service_resets,
            units_in_flight: job.iodepth > 1 && job.fio_engine_queues(),
            depth: job.iodepth,
            reset_without_io: false,
            close_fails: job.fio_engine_fakes_io()
                && job.sync.fsync_on_close
                && job.iodepth > 1
                && (job.trim == TrimMode::TrimWrite
                    || (job.read_percent < 100 && job.trim.is_none())),
        }
    }

    /// A fill found no room mid-run (not at a reset): fio closes the file there. Why
    /// storlab stops the job there, where that close fails in fio.
    pub(super) fn close_after_failed_fill(&self) -> Option<String> {
        self.close_fails.then(|| {
            "fio 3.33 fails this job with EBADF where its file is closed because no I/O finds room: the null engine opens no file descriptor and fsync_on_close's fsync at the completion of the last I/O in flight fails (filesetup.c put_file), unless that I/O was a sync; storlab stops the job there (iodepth=1 runs as fio)".to_owned()
        })
    }

    /// A fill found no room in the file.
    pub(super) fn after_failed_fill(&mut self) -> ResetStep {
        if std::mem::replace(&mut self.reset_without_io, true) {
            // Seen with strided zones and several block sizes (`--bssplit=4k/50:8k/50
            // --size=64k --zonemode=strided --zonesize=16k --zonerange=64k
            // --file_service_type=pareto:0.5`: fio 3.33 still running after 300 s).
            return ResetStep::FioHangs(
                "fio 3.33 never ends this job: with a non-uniform file_service_type it resets the file where no I/O finds room, and right after the reset no I/O finds room either, so it resets the file again forever (io_u.c, set_io_u_file); storlab stops the job there".to_owned(),
            );
        }
        if self.units_in_flight {
            // The reset closes the file first (`td_io_close_file`), which the I/Os of a
            // queueing engine's queue hold open: fio 3.33 then never gets a file again (null
            // at depth 4, posixaio at 2, libaio at 4 hang there; at depth 1 or on a
            // synchronous engine fio goes on).
            return ResetStep::FioHangs(format!(
                "fio 3.33 never ends this job: with a non-uniform file_service_type it closes and resets the file where no I/O finds room, with the I/Os of its queue (iodepth={}) still in flight holding it, and waits for a file forever (io_u.c, set_io_u_file); storlab stops the job there (iodepth=1 or a synchronous engine runs as fio)",
                self.depth
            ));
        }
        ResetStep::Reset
    }
}
