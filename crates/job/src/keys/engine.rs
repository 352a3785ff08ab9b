//! fio's I/O engine keys: `ioengine` (storlab's engines, and the refusal of the ones it lacks) and the engines' own options (io_uring's, cmdprio).

use super::block_size::read_write_dropping_trim;
use super::threads::{parse_ioprio_class, parse_ioprio_level};
use super::values::to_u32;
use super::{ApplyError, JobDraft, KeyDef};
use crate::error::{JobError, Location};
use crate::model::{CmdPrioSplit, EngineKind, JobSpec, OUT_OF_SCOPE_ENGINES};
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_count, parse_percent, parse_size};

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "ioengine",
        aliases: &[],
        bare: false,
        meaning: "how I/O is issued (psync by default; `storlab engines` lists them)",
        field: "ioengine",
        path: KeyPath::None,
        apply: apply_ioengine,
    },
    KeyDef {
        name: "hipri",
        aliases: &[],
        bare: true,
        meaning: "io_uring: poll for completions (IOPOLL); pvsync2: RWF_HIPRI",
        field: "hipri",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.hipri = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "nowait",
        aliases: &[],
        bare: true,
        meaning: "io_uring, pvsync2: RWF_NOWAIT (EAGAIN instead of blocking)",
        field: "nowait",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.nowait = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "fixedbufs",
        aliases: &[],
        bare: true,
        meaning: "io_uring: registered buffers, required (unset: used when the kernel allows)",
        field: "fixedbufs",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.fixedbufs = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "registerfiles",
        aliases: &[],
        bare: true,
        meaning: "io_uring: registered file, required (unset: used when the kernel allows)",
        field: "registerfiles",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.registerfiles = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "sqthread_poll",
        aliases: &[],
        bare: true,
        meaning: "io_uring: a kernel thread polls the submission queue (SQPOLL)",
        field: "sqthread_poll",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.sqthread_poll = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "nonvectored",
        aliases: &[],
        bare: true,
        meaning: "io_uring: READ/WRITE (default) or, with 0, READV/WRITEV",
        field: "nonvectored",
        path: KeyPath::None,
        apply: |d, v| {
            // fio's default is -1, "non-vectored when the kernel has it": any non-zero value.
            let value: i64 = v.trim().parse().map_err(|_| {
                ApplyError::Invalid(format!(
                    "'{v}' is not an integer (0: vectored; 1 or -1: non-vectored)"
                ))
            })?;
            d.engine_tuning.vectored = value == 0;
            Ok(())
        },
    },
    KeyDef {
        name: "cmdprio_class",
        aliases: &[],
        bare: false,
        meaning: "io_uring, libaio: priority class of the I/Os cmdprio_percentage or cmdprio_bssplit picks: 1 real-time (default), 2 best-effort, 3 idle; or read,write classes",
        field: "cmdprio_class",
        path: KeyPath::None,
        apply: |d, v| {
            let (read, write) = read_write_dropping_trim(v, parse_ioprio_class)?;
            d.engine_tuning.cmdprio.read.class = read;
            d.engine_tuning.cmdprio.write.class = write;
            Ok(())
        },
    },
    KeyDef {
        name: "cmdprio",
        aliases: &[],
        bare: false,
        meaning: "io_uring, libaio: priority level (0 highest to 7) of the I/Os cmdprio_percentage or cmdprio_bssplit picks; or read,write levels",
        field: "cmdprio_level",
        path: KeyPath::None,
        apply: |d, v| {
            let (read, write) = read_write_dropping_trim(v, parse_ioprio_level)?;
            d.engine_tuning.cmdprio.read.level = read;
            d.engine_tuning.cmdprio.write.level = write;
            Ok(())
        },
    },
    KeyDef {
        name: "sqthread_poll_cpu",
        aliases: &[],
        bare: false,
        meaning: "io_uring: bind the sqthread_poll kernel thread to this CPU",
        field: "sqthread_poll_cpu",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.sqthread_poll_cpu = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "cmdprio_percentage",
        aliases: &[],
        bare: false,
        meaning: "io_uring, libaio: percent of I/Os issued with an I/O priority (cmdprio_class, cmdprio); or read,write percents",
        field: "cmdprio_percentage",
        path: KeyPath::None,
        apply: |d, v| {
            let (read, write) =
                read_write_dropping_trim(v, |t| parse_percent(t).map_err(ApplyError::from))?;
            d.engine_tuning.cmdprio.read.percentage = read.unwrap_or(0);
            d.engine_tuning.cmdprio.write.percentage = write.unwrap_or(0);
            Ok(())
        },
    },
    KeyDef {
        name: "cmdprio_bssplit",
        aliases: &[],
        bare: false,
        meaning: "io_uring, libaio: percent of the I/Os of each block size issued with an I/O priority, SIZE/PERCENT[/CLASS/LEVEL]:...; or read,write lists",
        field: "cmdprio_bssplit",
        path: KeyPath::None,
        apply: |d, v| {
            let (read, write) = parse_cmdprio_bssplit(v)?;
            d.engine_tuning.cmdprio.read.bssplit = read;
            d.engine_tuning.cmdprio.write.bssplit = write;
            Ok(())
        },
    },
    KeyDef {
        name: "userspace_reap",
        aliases: &[],
        bare: true,
        meaning: "libaio: read completions from the AIO ring in user space",
        field: "userspace_reap",
        path: KeyPath::None,
        apply: |d, v| {
            d.engine_tuning.userspace_reap = parse_bool(v)?;
            Ok(())
        },
    },
];

/// An `ioengine=` value fio knows (or nobody knows) but storlab has no engine of that name for.
#[derive(Clone, Debug)]
pub(super) struct ForeignEngine {
    /// The name as written (`libaio`).
    pub(super) name: String,
    /// Why it is refused and what to use instead, as the refusal says it.
    pub(super) hint: String,
    /// The storlab engine that does the same on a file or device, when a target given from
    /// outside the job (`--target FILE`) runs it anyway.
    pub(super) equivalent: EngineKind,
    /// An engine of [`OUT_OF_SCOPE_ENGINES`]: refused on every target, since its job describes
    /// something other than I/O to a local file or device (a network peer, a GPU, file creation).
    pub(super) out_of_scope: bool,
}

/// What the refusal of an engine of [`OUT_OF_SCOPE_ENGINES`] says after naming it.
pub(crate) const OUT_OF_SCOPE_HINT: &str =
    "out of scope: storlab measures local files, block devices and its simulated stacks";

/// Whether `ioengine=NAME` names an engine storlab refuses by design: one of
/// [`OUT_OF_SCOPE_ENGINES`], or an external engine loaded from a shared object
/// (`external:PATH`, fio's form; `cpp_null` is fio's example of one).
pub(crate) fn is_out_of_scope_engine(name: &str) -> bool {
    OUT_OF_SCOPE_ENGINES.contains(&name) || name.starts_with("external:")
}

/// `ioengine=`: a storlab engine (from the one list, [`EngineKind::ALL`]), or a name storlab has
/// no engine for, remembered and refused when the job is finished unless the command line's
/// target decides the engine ([`JobDraft::override_target`]): a job file written for fio still
/// runs on `--target`. Engines outside storlab's scope ([`OUT_OF_SCOPE_ENGINES`]) say so.
fn apply_ioengine(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let foreign = |hint: String, equivalent: EngineKind| ForeignEngine {
        name: v.to_string(),
        hint,
        equivalent,
        out_of_scope: false,
    };
    let (engine, foreign) = match EngineKind::from_name(v) {
        Some(engine) => (Some(engine), None),
        None if is_out_of_scope_engine(v) => (
            None,
            Some(ForeignEngine {
                out_of_scope: true,
                ..foreign(OUT_OF_SCOPE_HINT.to_string(), EngineKind::Psync)
            }),
        ),
        None => match v {
            "windowsaio" | "solarisaio" => (
                None,
                Some(foreign(
                    "that engine is for another OS; use ioengine=libaio or io_uring".into(),
                    EngineKind::Libaio,
                )),
            ),
            "vsync" => (
                None,
                Some(foreign(
                    "fio's vsync merges adjacent requests into one readv/writev; use \
                     ioengine=pvsync (preadv/pwritev) or psync"
                        .into(),
                    EngineKind::Pvsync,
                )),
            ),
            _ => (
                None,
                Some(foreign(
                    format!(
                        "unknown engine; storlab's engines are {}",
                        EngineKind::names_joined()
                    ),
                    EngineKind::Psync,
                )),
            ),
        },
    };
    d.engine = engine;
    d.foreign_engine = foreign;
    Ok(())
}

/// fio's limit on `cmdprio_bssplit` entries per direction (BSSPLIT_MAX).
const CMDPRIO_BSSPLIT_ENTRIES_MAX: usize = 64;

/// `cmdprio_bssplit` as fio 3.33 reads it (options.c, `split_parse_prio_ddir`): per direction
/// (`READ,WRITE[,TRIM]`, one list for all; the trim list is checked and has no use) a
/// `:`-separated list of `SIZE/PERCENT` or `SIZE/PERCENT/CLASS/LEVEL`, at most 64, sorted by
/// size with 0% entries dropped; the entries of one size may not add up past 100%.
fn parse_cmdprio_bssplit(text: &str) -> Result<(Vec<CmdPrioSplit>, Vec<CmdPrioSplit>), ApplyError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let (read, write) = match parts.as_slice() {
        [all] => (*all, *all),
        [read, write] => (*read, *write),
        [read, write, trim] => {
            parse_cmdprio_bssplit_list(trim)?;
            (*read, *write)
        }
        _ => {
            return Err(ApplyError::Invalid(format!(
                "'{text}' has more than three lists (read,write,trim)"
            )))
        }
    };
    let (read, write) = (
        parse_cmdprio_bssplit_list(read)?,
        parse_cmdprio_bssplit_list(write)?,
    );
    if read.is_empty() && write.is_empty() {
        return Err(ApplyError::Invalid(
            "a list SIZE/PERCENT[/CLASS/LEVEL]:... is needed".into(),
        ));
    }
    Ok((read, write))
}

/// One direction's `cmdprio_bssplit` list (see [`parse_cmdprio_bssplit`]).
fn parse_cmdprio_bssplit_list(list: &str) -> Result<Vec<CmdPrioSplit>, ApplyError> {
    let mut entries = Vec::new();
    // fio stops at the first empty entry (`4k/10::8k/20` is `4k/10`).
    for entry in list.split(':').take_while(|e| !e.trim().is_empty()) {
        let fields: Vec<&str> = entry.split('/').map(str::trim).collect();
        let invalid = || {
            ApplyError::Invalid(format!(
                "'{entry}' is not SIZE/PERCENT or SIZE/PERCENT/CLASS/LEVEL"
            ))
        };
        let (size, percent, class_level) = match fields.as_slice() {
            [size] => (*size, None, None),
            [size, percent] => (*size, Some(*percent), None),
            [size, percent, class, level] => (
                *size,
                Some(*percent),
                Some((parse_ioprio_class(class)?, parse_ioprio_level(level)?)),
            ),
            _ => return Err(invalid()),
        };
        let block_size_bytes = parse_size(size)?;
        // fio: a missing percentage is 0, one above 100 is 100.
        let percent = match percent {
            Some(p) => parse_count(p)?.min(100) as u8,
            None => 0,
        };
        if percent > 0 {
            entries.push(CmdPrioSplit {
                block_size_bytes,
                percent,
                class_level,
            });
        }
    }
    if entries.len() > CMDPRIO_BSSPLIT_ENTRIES_MAX {
        return Err(ApplyError::Invalid(format!(
            "more than {CMDPRIO_BSSPLIT_ENTRIES_MAX} entries (fio's limit)"
        )));
    }
    // Stable, as fio's qsort keeps equal sizes in no promised order; the order within one
    // size only decides which priority a draw lands on, not how many I/Os get one.
    entries.sort_by_key(|e| e.block_size_bytes);
    for size in entries.iter().map(|e| e.block_size_bytes) {
        let total: u32 = entries
            .iter()
            .filter(|e| e.block_size_bytes == size)
            .map(|e| u32::from(e.percent))
            .sum();
        if total > 100 {
            return Err(ApplyError::Invalid(format!(
                "the entries for {} add up to {total}%, above 100%",
                crate::size::format_size(size)
            )));
        }
    }
    Ok(entries)
}

impl JobDraft {
    /// fio's engines/cmdprio.c: `cmdprio_percentage` and `cmdprio_bssplit` are mutually
    /// exclusive, whichever directions they name.
    pub(super) fn check_cmdprio(&self, job_location: &Location) -> Result<(), JobError> {
        let cmdprio = &self.engine_tuning.cmdprio;
        let percentage = cmdprio.read.percentage > 0 || cmdprio.write.percentage > 0;
        let bssplit = !cmdprio.read.bssplit.is_empty() || !cmdprio.write.bssplit.is_empty();
        if !(percentage && bssplit) {
            return Ok(());
        }
        let setter = self
            .provenance
            .iter()
            .rev()
            .find(|p| p.field == "cmdprio_percentage" || p.field == "cmdprio_bssplit");
        Err(JobError::invalid(
            setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
            setter.map_or("cmdprio_bssplit", |p| p.key_as_written.as_str()),
            setter.and_then(|p| p.value.clone()),
            "cmdprio_percentage and cmdprio_bssplit are mutually exclusive (as in fio); keep one",
        ))
    }

    /// The one-line refusal of an `ioengine` storlab has no engine for, at the line or flag that
    /// named it.
    pub(super) fn engine_refusal(
        &self,
        foreign: &ForeignEngine,
        job_location: &Location,
    ) -> JobError {
        let setter = self.provenance.iter().rev().find(|p| p.field == "ioengine");
        JobError::unsupported(
            setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
            setter.map_or("ioengine", |p| p.key_as_written.as_str()),
            setter
                .and_then(|p| p.value.clone())
                .or_else(|| Some(foreign.name.clone())),
            foreign.hint.clone(),
        )
    }

    /// fio 3.33's mmap engine refuses a smallest block that is not whole pages when the job
    /// syncs or asks for direct I/O (engines/mmap.c, `fio_mmapio_init`: msync works on whole
    /// pages), so a fio job is refused there as fio refuses it.
    pub(super) fn check_mmap_pages(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        /// x86-64's page size, fio's `page_size` there.
        const PAGE_BYTES: u64 = 4096;
        let smallest = spec
            .block_size_read
            .min_bytes()
            .min(spec.block_size_write.min_bytes());
        let syncs = spec.direct || spec.sync.every_n_writes();
        if self.storlab_rw_default
            || spec.engine != EngineKind::Mmap
            || !syncs
            || smallest.is_multiple_of(PAGE_BYTES)
        {
            return Ok(());
        }
        Err(self.refused_at_key(
            "ioengine",
            job_location,
            format!(
                "with {smallest}-byte blocks and direct, fsync or fdatasync: fio 3.33 refuses \
                 blocks that are not whole {PAGE_BYTES}-byte pages there (engines/mmap.c)"
            ),
        ))
    }

    /// fio 3.33's mmap engine maps the file from its start, `io_size` long, and places each
    /// I/O at its offset less the region's start (engines/mmap.c, `fio_mmapio_prep`:
    /// `mmap_ptr + offset - mmap_off - file_offset` with `mmap_off` 0): a fio job whose region
    /// starts past 0 (`offset`, or `offset_increment` with clones) reads and writes the file's
    /// first bytes instead of its region. On a regular file the job named, storlab does as fio
    /// does and says so; on a device, where the bytes before the region are often what the
    /// region was chosen to spare (a partition table, another file system), it is refused.
    pub(super) fn check_mmap_region(
        &self,
        spec: &mut JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        let shares = &spec.target_shares;
        let starts_past_zero = spec.offset_bytes > 0
            || shares.offset_ppm.is_some_and(|ppm| ppm > 0)
            || (spec.numjobs > 1
                && (spec.offset_increment_bytes > 0
                    || shares.offset_increment_ppm.is_some_and(|ppm| ppm > 0)));
        if self.storlab_rw_default || spec.engine != EngineKind::Mmap || !starts_past_zero {
            return Ok(());
        }
        if super::target::on_a_file(&spec.target) {
            spec.warnings.push(
                "ioengine=mmap with a region past the file's start: as fio 3.33's mmap engine, \
                 each I/O goes to its offset less the region's start, in the file's first bytes \
                 (engines/mmap.c); ioengine=psync reads and writes the region itself"
                    .to_string(),
            );
            return Ok(());
        }
        Err(self.refused_at_key(
            "ioengine",
            job_location,
            "with a region that starts past 0 (offset, offset_increment) on a device: fio \
             3.33's mmap engine puts each I/O at its offset less the region's start, in the \
             device's first bytes (engines/mmap.c), where the job did not ask; use \
             ioengine=psync"
                .to_string(),
        ))
    }

    /// fio logs a sync with the offset its I/O unit last carried (the sync sets none): the
    /// unit on top of fio's freelist, which storlab's free slots follow one submit at a time.
    /// With `iodepth_batch_submit` above 1 fio takes that unit while the batch before is
    /// still unreaped, an older one (`--rw=randwrite --bs=32k --ioengine=libaio --iodepth=4
    /// --fsync=2 --iodepth_batch_submit=2` logs each sync at the write three before, storlab
    /// at the last): with `write_iolog` such a job is refused rather than logged otherwise.
    pub(super) fn check_batched_sync_log(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        let every_n = spec.sync.every_n_writes();
        let batched = spec.io_batch.as_ref().is_some_and(|b| b.submit > 1);
        if self.storlab_rw_default
            || spec.write_iolog.is_none()
            || !every_n
            || !batched
            || !spec.fio_engine_queues()
            || spec.engine == EngineKind::Null
        {
            return Ok(());
        }
        Err(self.refused_at_key(
            "iodepth_batch_submit",
            job_location,
            "with fsync or fdatasync every N writes and write_iolog: fio 3.33 logs each sync \
             at the offset its I/O unit last carried, which with batched submits is an older \
             unit's than storlab follows; drop iodepth_batch_submit or write_iolog"
                .to_string(),
        ))
    }

    /// The same null engine under `rate` or `rate_iops`: fio reaps everything whenever it
    /// waits for the rate (io_u.c, `rate_ddir` calls `io_u_quiesce`), so a request finds the
    /// engine busy, and is logged twice, only where fio fell behind its schedule, as its
    /// clock decides (`--size=512k --ioengine=null --iodepth=2 --rate_iops=50000`: 130, 131
    /// and 132 actions logged in three runs); storlab cannot follow that, so it refuses.
    pub(super) fn check_null_queue_pacing(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        let paced = !spec.rate_iops.is_unset() || !spec.rate_bytes.is_unset();
        if self.storlab_rw_default || !spec.fio_logs_busy_requeues() || !paced {
            return Ok(());
        }
        let key = if spec.rate_iops.is_unset() {
            "rate"
        } else {
            "rate_iops"
        };
        Err(self.refused_at_key(
            key,
            job_location,
            "with ioengine=null above iodepth=1: fio 3.33's null engine refuses a request \
             while one is unreaped, and under a rate whether one is depends on fio's clock \
             (it reaps all whenever it waits), so which requests fio logs twice varies run to \
             run; use iodepth=1"
                .to_string(),
        ))
    }

    /// A refusal of the job at the key that last set `field` (at the job when none did).
    pub(super) fn refused_at_key(
        &self,
        field: &str,
        job_location: &Location,
        reason: String,
    ) -> JobError {
        let setter = self.provenance.iter().rev().find(|p| p.field == field);
        JobError::unsupported(
            setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
            setter.map_or(field, |p| p.key_as_written.as_str()),
            setter.and_then(|p| p.value.clone()),
            reason,
        )
    }

    /// fio 3.33 knows an engine's options only with that engine: it refuses the job
    /// ("unrecognized option" among flags, "Bad option" in a job file). A preset, or a fio job
    /// run on a target the command line imposes (whose engine stands in for the job's), keeps
    /// the warning of `build_engine_tuning` instead.
    pub(super) fn check_engine_options(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        if self.storlab_rw_default || self.target_override.is_some() {
            return Ok(());
        }
        let foreign = self.provenance.iter().find(|given| {
            FIO_ENGINE_OPTIONS
                .iter()
                .any(|(field, engines)| *field == given.field && !engines.contains(&spec.engine))
        });
        let Some(foreign) = foreign else {
            return Ok(());
        };
        Err(self.refused_at_key(
            foreign.field,
            job_location,
            format!(
                "ioengine={} has no option {}: fio 3.33 refuses the job (\"unrecognized \
                 option\" among flags, \"Bad option\" in a job file); drop it or use an engine \
                 that has it",
                spec.engine.as_str(),
                foreign.key_as_written
            ),
        ))
    }

    /// The engines' options, with a warning naming those the job's engine does not have.
    pub(super) fn build_engine_tuning(&self, spec: &mut JobSpec) {
        spec.engine_tuning = self.engine_tuning.clone();
        let ignored = self.engine_tuning.ignored_by(spec.engine);
        if !ignored.is_empty() {
            spec.warnings.push(format!(
                "{} has no effect with ioengine={}",
                ignored.join(", "),
                spec.engine.as_str()
            ));
        }
    }
}

/// fio 3.33's engine options (by this table's field names) and the engines that define them
/// (engines/io_uring.c, libaio.c, sync.c for pvsync2, cmdprio.h).
const FIO_ENGINE_OPTIONS: &[(&str, &[EngineKind])] = &[
    ("hipri", &[EngineKind::IoUring, EngineKind::Pvsync2]),
    (
        "nowait",
        &[EngineKind::IoUring, EngineKind::Libaio, EngineKind::Pvsync2],
    ),
    ("fixedbufs", &[EngineKind::IoUring]),
    ("registerfiles", &[EngineKind::IoUring]),
    ("sqthread_poll", &[EngineKind::IoUring]),
    ("sqthread_poll_cpu", &[EngineKind::IoUring]),
    ("nonvectored", &[EngineKind::IoUring]),
    ("userspace_reap", &[EngineKind::Libaio]),
    (
        "cmdprio_percentage",
        &[EngineKind::IoUring, EngineKind::Libaio],
    ),
    ("cmdprio_class", &[EngineKind::IoUring, EngineKind::Libaio]),
    ("cmdprio_level", &[EngineKind::IoUring, EngineKind::Libaio]),
    (
        "cmdprio_bssplit",
        &[EngineKind::IoUring, EngineKind::Libaio],
    ),
];

#[cfg(test)]
mod tests {
    use crate::error::Location;
    use crate::keys::{draft, JobDraft};
    use crate::model::{CmdPrio, CmdPrioDirection, CmdPrioSplit, EngineKind, EngineTuning};

    /// One refusal line per `ioengine` storlab has no engine for: out-of-scope engines say why
    /// (issue #20), unknown names list storlab's engines from the one list.
    #[test]
    fn engines_storlab_lacks_are_refused_in_one_line() {
        let refusal = |engine: &str| {
            let mut d = JobDraft::new();
            d.set("ioengine", Some(engine), &Location::Flag).unwrap();
            d.set("size", Some("1M"), &Location::Flag).unwrap();
            d.finish("job", &Location::Job("job".into()))
                .unwrap_err()
                .to_string()
        };
        for engine in crate::model::OUT_OF_SCOPE_ENGINES {
            assert_eq!(
                refusal(engine),
                format!(
                    "--ioengine={engine}: out of scope: storlab measures local files, block \
                     devices and its simulated stacks"
                )
            );
        }
        assert_eq!(
            refusal("warp_drive"),
            "--ioengine=warp_drive: unknown engine; storlab's engines are null, psync, sync, \
             pvsync, pvsync2, libaio, posixaio, mmap, io_uring, sim"
        );
        for kind in EngineKind::ALL {
            assert_eq!(EngineKind::from_name(kind.as_str()), Some(kind));
            assert!(!crate::model::OUT_OF_SCOPE_ENGINES.contains(&kind.as_str()));
        }
    }

    #[test]
    fn engine_options_reach_the_job_and_warn_on_an_engine_without_them() {
        let job = |settings: &[(&str, Option<&str>)]| {
            let mut d = JobDraft::new();
            d.set("size", Some("1M"), &Location::Flag).unwrap();
            for (key, value) in settings {
                d.set(key, *value, &Location::Flag).unwrap();
            }
            d.finish("job", &Location::Job("job".into())).unwrap()
        };
        let uring = job(&[
            ("ioengine", Some("io_uring")),
            ("hipri", None),
            ("fixedbufs", None),
            ("registerfiles", Some("0")),
            ("sqthread_poll", Some("1")),
            ("nonvectored", Some("0")),
            ("cmdprio_percentage", Some("30")),
        ]);
        assert_eq!(
            uring.engine_tuning,
            EngineTuning {
                hipri: true,
                fixedbufs: Some(true),
                registerfiles: Some(false),
                sqthread_poll: true,
                vectored: true,
                cmdprio: CmdPrio {
                    read: CmdPrioDirection {
                        percentage: 30,
                        ..CmdPrioDirection::default()
                    },
                    write: CmdPrioDirection {
                        percentage: 30,
                        ..CmdPrioDirection::default()
                    },
                },
                ..EngineTuning::default()
            }
        );
        assert!(uring.warnings.is_empty(), "{:?}", uring.warnings);
        // fio's default `nonvectored=-1` means non-vectored, like 1.
        let default_nonvectored =
            job(&[("ioengine", Some("io_uring")), ("nonvectored", Some("-1"))]);
        assert!(!default_nonvectored.engine_tuning.vectored);
        let libaio = job(&[("ioengine", Some("libaio")), ("userspace_reap", None)]);
        assert!(libaio.engine_tuning.userspace_reap && libaio.warnings.is_empty());
        // fio refuses an engine's option on another engine; a preset only warns.
        let mut psync = JobDraft::new();
        psync.set("size", Some("1M"), &Location::Flag).unwrap();
        psync.set("userspace_reap", None, &Location::Flag).unwrap();
        let refusal = psync
            .finish("job", &Location::Job("job".into()))
            .unwrap_err();
        assert!(refusal
            .to_string()
            .starts_with("--userspace_reap: ioengine=psync has no option userspace_reap"));
        let mut preset = JobDraft::with_storlab_defaults();
        preset.set("size", Some("1M"), &Location::Flag).unwrap();
        preset.set("hipri", None, &Location::Flag).unwrap();
        preset.set("userspace_reap", None, &Location::Flag).unwrap();
        let preset = preset.finish("job", &Location::Job("job".into())).unwrap();
        assert!(preset
            .warnings
            .iter()
            .any(|w| w == "hipri, userspace_reap has no effect with ioengine=psync"));
        let sync = job(&[("ioengine", Some("sync")), ("iodepth", Some("8"))]);
        assert!(sync.warnings[0].starts_with("iodepth=8 has no effect with ioengine=sync"));
    }

    #[test]
    fn cmdprio_class_and_sqthread_poll_cpu_reach_the_engine_tuning() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("ioengine", Some("io_uring")),
            ("cmdprio_percentage", Some("10")),
            ("cmdprio_class", Some("2")),
            ("sqthread_poll", None),
            ("sqthread_poll_cpu", Some("3")),
        ])
        .unwrap();
        assert_eq!(spec.engine_tuning.cmdprio.read.class, Some(2));
        assert_eq!(spec.engine_tuning.cmdprio.write.class, Some(2));
        assert_eq!(spec.engine_tuning.sqthread_poll_cpu, Some(3));
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
        let class = |v: &str| {
            draft(&[
                ("size", Some("1M")),
                ("ioengine", Some("io_uring")),
                ("cmdprio_class", Some(v)),
            ])
            .map_err(|e| e.to_string())
        };
        assert!(class("4").unwrap_err().contains("use 1 (real-time)"));
        // fio's read,write[,trim] form: each direction its own class (trims carry none).
        let both = class("1,2").unwrap().engine_tuning.cmdprio;
        assert_eq!((both.read.class, both.write.class), (Some(1), Some(2)));
        let only_writes = class(",3,1").unwrap().engine_tuning.cmdprio;
        assert_eq!(
            (only_writes.read.class, only_writes.write.class),
            (None, Some(3))
        );
        assert!(class("1,2,4").unwrap_err().contains("use 1 (real-time)"));
        assert!(class("1,2,3,1").unwrap_err().contains("more than three"));
        // Without cmdprio_percentage the class changes nothing, as in fio: a warning.
        let warnings = class("2").unwrap().warnings;
        assert!(
            warnings.iter().any(|w| w.contains("cmdprio_class")),
            "{warnings:?}"
        );
    }

    #[test]
    fn cmdprio_sets_the_level_of_the_prioritized_ios() {
        let level = |v: &str, percentage: bool| {
            let mut pairs = vec![
                ("size", Some("1M")),
                ("ioengine", Some("io_uring")),
                ("cmdprio", Some(v)),
            ];
            if percentage {
                pairs.push(("cmdprio_percentage", Some("10")));
            }
            draft(&pairs).map_err(|e| e.to_string())
        };
        let spec = level("5", true).unwrap();
        assert_eq!(spec.engine_tuning.cmdprio.read.level, Some(5));
        assert_eq!(spec.engine_tuning.cmdprio.write.level, Some(5));
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
        let two = level("1,2", true).unwrap().engine_tuning.cmdprio;
        assert_eq!((two.read.level, two.write.level), (Some(1), Some(2)));
        assert!(level("8", true).unwrap_err().contains("0 (highest) to 7"));
        // Without cmdprio_percentage the level changes nothing, as in fio: a warning.
        let warnings = level("3", false).unwrap().warnings;
        assert!(
            warnings.iter().any(|w| w.contains("cmdprio")),
            "{warnings:?}"
        );
    }

    #[test]
    fn cmdprio_percentage_takes_a_share_per_direction() {
        let percentage = |v: &str| {
            draft(&[
                ("size", Some("1M")),
                ("ioengine", Some("libaio")),
                ("cmdprio_percentage", Some(v)),
            ])
            .map(|spec| {
                let cmdprio = spec.engine_tuning.cmdprio;
                (cmdprio.read.percentage, cmdprio.write.percentage)
            })
            .map_err(|e| e.to_string())
        };
        assert_eq!(percentage("20"), Ok((20, 20)));
        assert_eq!(percentage("20,70"), Ok((20, 70)));
        assert_eq!(percentage("0,70,50"), Ok((0, 70)));
        assert_eq!(percentage(",40"), Ok((0, 40)));
        assert!(percentage("20,101").unwrap_err().contains("101"));
    }

    #[test]
    fn cmdprio_bssplit_reads_both_of_fios_forms() {
        let bssplit = |v: &str| {
            draft(&[
                ("size", Some("1M")),
                ("ioengine", Some("io_uring")),
                ("cmdprio_bssplit", Some(v)),
            ])
            .map(|spec| spec.engine_tuning.cmdprio)
            .map_err(|e| e.to_string())
        };
        let split = |block_size_bytes, percent, class_level| CmdPrioSplit {
            block_size_bytes,
            percent,
            class_level,
        };
        // One list for both directions, sorted by size, 0% entries dropped.
        let both = bssplit("64k/50:4k/10:8k/0").unwrap();
        let expected = vec![split(4096, 10, None), split(65536, 50, None)];
        assert_eq!(both.read.bssplit, expected);
        assert_eq!(both.write.bssplit, expected);
        // The second form, per direction; a trim list is checked and has no use.
        let apart = bssplit("4k/30/2/7:4k/20/1/0,16k/100,4k/5").unwrap();
        assert_eq!(
            apart.read.bssplit,
            vec![split(4096, 30, Some((2, 7))), split(4096, 20, Some((1, 0)))]
        );
        assert_eq!(apart.write.bssplit, vec![split(16384, 100, None)]);
        // fio: a share above 100 is 100.
        assert_eq!(
            bssplit("4k/150").unwrap().read.bssplit,
            vec![split(4096, 100, None)]
        );
        for (bad, why) in [
            ("4k/60:4k/50", "above 100%"),
            ("4k/10/1", "SIZE/PERCENT/CLASS/LEVEL"),
            ("4k/10/4/0", "use 1 (real-time)"),
            ("4k/10/1/8", "0 (highest) to 7"),
            ("4k/0", "is needed"),
        ] {
            let error = bssplit(bad).unwrap_err();
            assert!(error.contains(why), "{bad}: {error}");
            assert!(!error.contains('\n'), "{error}");
        }
        // fio: mutually exclusive with cmdprio_percentage.
        let error = draft(&[
            ("size", Some("1M")),
            ("ioengine", Some("io_uring")),
            ("cmdprio_bssplit", Some("4k/10")),
            ("cmdprio_percentage", Some("5")),
        ])
        .unwrap_err()
        .to_string();
        assert!(error.contains("mutually exclusive"), "{error}");
        // On an engine without command priorities fio has no such option: refused.
        let psync = draft(&[("size", Some("1M")), ("cmdprio_bssplit", Some("4k/10"))])
            .unwrap_err()
            .to_string();
        assert!(
            psync.contains("ioengine=psync has no option cmdprio_bssplit"),
            "{psync}"
        );
    }
}
