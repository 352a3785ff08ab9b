//! fio's verification keys: `verify` and its family, checked together when the job is finished.

use super::buffers::parse_pattern_elements;
use super::io_type::RwMode;
use super::values::accept_without_effect;
use super::values::set_if;
use super::{ApplyError, JobDraft, KeyDef};
use crate::error::{JobError, Location};
use crate::model::{
    EngineKind, JobSpec, RandomDistribution, RwModifier, Target, VerifyKind, VerifyPattern,
    VerifySpec,
};
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_count, parse_size};

/// The verification keys as set (`verify` and its family).
#[derive(Clone, Debug, Default)]
pub(super) struct VerifyDraft {
    /// `verify`: on (`1` or a fio kind) or off.
    pub(super) enabled: Option<bool>,
    /// `verify=` named a fio kind (`verify=1` is storlab's own check alone).
    pub(super) kind: Option<VerifyKind>,
    /// fio's `verify_pattern`: written and checked with `verify`, no effect without.
    pub(super) pattern: Option<VerifyPattern>,
    pub(super) do_verify: Option<bool>,
    pub(super) only: Option<bool>,
    /// fio's `verify_state_save` (fio's default on; off in storlab's presets).
    pub(super) state_save: Option<bool>,
    /// fio's `verify_state_load`: read the clone's saved state before the job's verify pass.
    pub(super) state_load: Option<bool>,
    pub(super) dump: Option<bool>,
    pub(super) interval_bytes: Option<u64>,
    pub(super) offset_bytes: Option<u64>,
    pub(super) backlog: Option<u64>,
    pub(super) backlog_batch: Option<u64>,
    /// fio's `experimental_verify`: the read-back regenerates the workload's writes.
    pub(super) experimental: Option<bool>,
    /// fio's `verify_async`: helper threads that check completed reads.
    pub(super) async_threads: Option<u64>,
}

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "verify",
        aliases: &[],
        bare: false,
        meaning: "fio's verify: a header with a checksum in each block, checked on read-back (md5, crc32c, crc64, sha1, sha3-*, xxhash, meta, pattern, null; 1: storlab's own check alone)",
        field: "verify",
        path: KeyPath::None,
        apply: apply_verify,
    },
    KeyDef {
        name: "do_verify",
        aliases: &[],
        bare: true,
        meaning: "read back and check after writing (default 1); 0 writes verify headers without checking",
        field: "do_verify",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify.do_verify = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_only",
        aliases: &[],
        bare: true,
        meaning: "write nothing: read back what the job would write and check the headers a previous run left",
        field: "verify_only",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify.only = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_fatal",
        aliases: &[],
        bare: true,
        meaning: "stop at the first bad header of a block (storlab always stops the job at its first bad block, as fio)",
        field: "verify_fatal",
        path: KeyPath::None,
        apply: |_, v| {
            parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "verify_dump",
        aliases: &[],
        bare: true,
        meaning: "write a failed block to FILE.OFFSET.received and .expected (.hdr_fail for a bad header) in the current directory",
        field: "verify_dump",
        path: KeyPath::WrittenOnFailure,
        apply: |d, v| {
            d.verify.dump = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_interval",
        aliases: &[],
        bare: false,
        meaning: "a verify header every this many bytes instead of one per block",
        field: "verify_interval",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify.interval_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_offset",
        aliases: &[],
        bare: false,
        meaning: "swap the verify header with the bytes this far into its block",
        field: "verify_offset",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify.offset_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_backlog",
        aliases: &[],
        bare: false,
        meaning: "check written blocks after every this many writes instead of after all of them",
        field: "verify_backlog",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify.backlog = Some(parse_count(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_backlog_batch",
        aliases: &[],
        bare: false,
        meaning: "blocks checked each time verify_backlog is reached (default: verify_backlog)",
        field: "verify_backlog_batch",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify.backlog_batch = Some(parse_count(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_async",
        aliases: &[],
        bare: false,
        meaning: "fio's helper threads for checks: accepted, storlab checks in the reaping thread",
        field: "verify_async",
        path: KeyPath::None,
        apply: |d, v| {
            let threads = parse_count(v)?;
            if threads > 0 {
                accept_without_effect(d, "verify_async");
            }
            d.verify.async_threads = Some(threads);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_async_cpus",
        aliases: &[],
        bare: false,
        meaning: "CPUs of fio's verify_async threads: accepted, storlab checks in the reaping thread",
        field: "verify_async_cpus",
        path: KeyPath::None,
        apply: |d, v| {
            crate::queueing::parse_cpu_list(v).map_err(ApplyError::Invalid)?;
            accept_without_effect(d, "verify_async");
            Ok(())
        },
    },
    KeyDef {
        name: "verify_state_save",
        aliases: &[],
        bare: true,
        meaning: "write fio's verify state file local-JOB-N-verify.state at a writing verify job's end (default 1, as fio)",
        field: "verify_state_save",
        path: KeyPath::WrittenAfterJob,
        apply: |d, v| {
            d.verify.state_save = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_state_load",
        aliases: &[],
        bare: true,
        meaning: "read fio's verify state file local-JOB-N-verify.state first; the verify pass stops where fio's would (writes the saved run had not completed are not checked)",
        field: "verify_state_load",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify.state_load = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "experimental_verify",
        aliases: &[],
        bare: true,
        meaning: "fio's replay-based verify: the writes read back in the order they were written",
        field: "experimental_verify",
        path: KeyPath::None,
        apply: |d, v| {
            d.verify.experimental = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "verify_pattern",
        aliases: &[],
        bare: false,
        meaning: "the data verify writes under its headers and checks (verify=pattern: with no header); %o is the block's offset",
        field: "verify_pattern",
        path: KeyPath::None,
        apply: |d, v| {
            let (bytes, offset_positions) = parse_pattern_elements(v, true)?;
            d.verify.pattern = Some(VerifyPattern {
                bytes,
                offset_positions,
            });
            // options.c, `str_verify_pattern_cb`: a pattern with `verify` not set (yet) makes
            // the job verify it, as `verify=pattern`; a later `verify` overrides.
            if d.verify.enabled.is_none() {
                d.verify.enabled = Some(true);
                d.verify.kind = Some(VerifyKind::PatternHeader);
                return Ok(());
            }
            // Dropped again when the job verifies (`finish`).
            accept_without_effect(d, "verify_pattern");
            Ok(())
        },
    },
];

fn apply_verify(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let (verify, kind) =
        match v {
            "0" | "none" => (false, None),
            // storlab's own check alone: per-write data compared byte for byte, no fio header.
            "1" => (true, None),
            _ => match VerifyKind::from_fio_name(v) {
                Some(kind) => (true, Some(kind)),
                None => return Err(ApplyError::Invalid(
                    "unknown verify kind; use a fio checksum name (md5, crc32c, sha1, xxhash...), \
                     meta, pattern, null or 0"
                        .into(),
                )),
            },
        };
    d.verify.enabled = Some(verify);
    d.verify.kind = kind;
    Ok(())
}

impl JobDraft {
    /// fio's verify family as set, when `verify=` named a fio kind.
    pub(super) fn verify_spec(&self) -> Option<VerifySpec> {
        let kind = self
            .verify
            .kind
            .filter(|_| self.verify.enabled == Some(true))?;
        Some(VerifySpec {
            kind,
            pattern: self.verify.pattern.clone(),
            interval_bytes: self.verify.interval_bytes.filter(|b| *b > 0),
            header_offset_bytes: self.verify.offset_bytes.unwrap_or(0),
            only: self.verify.only == Some(true),
            dump: self.verify.dump == Some(true),
            backlog: self.verify.backlog.filter(|b| *b > 0),
            backlog_batch: self.verify.backlog_batch.filter(|b| *b > 0),
            first_loop_only: false,
        })
    }

    /// Verify settings that only make sense together.
    pub(super) fn check_verify(&self, job_location: &Location) -> Result<(), JobError> {
        let at = |field: &str| self.setter(field, job_location);
        let fio_kind = self
            .verify
            .kind
            .filter(|_| self.verify.enabled == Some(true));
        if fio_kind == Some(VerifyKind::Pattern) && self.verify.pattern.is_none() {
            let (location, key, value) = at("verify");
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "verify=pattern checks verify_pattern, which is not set",
            ));
        }
        let needs_fio_kind = [
            ("verify_only", self.verify.only == Some(true)),
            ("verify_backlog", self.verify.backlog.is_some_and(|b| b > 0)),
            (
                "verify_interval",
                self.verify.interval_bytes.is_some_and(|b| b > 0),
            ),
            (
                "verify_offset",
                self.verify.offset_bytes.is_some_and(|b| b > 0),
            ),
        ];
        if let (None, Some((field, _))) = (fio_kind, needs_fio_kind.iter().find(|(_, set)| *set)) {
            let (location, key, value) = at(field);
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "needs verify= with a fio kind (md5, crc32c, meta, pattern...)",
            ));
        }
        if self.verify.only == Some(true) && self.time_based == Some(true) {
            let (location, key, value) = at("verify_only");
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "verify_only replays the writes of a size-bounded job; a time_based job has no \
                 end to replay (drop time_based)",
            ));
        }
        let verifies = self.verify.enabled == Some(true)
            && (self.verify.do_verify != Some(false) || self.verify.only == Some(true));
        if self.verify.only == Some(true) && self.verify.backlog.is_some_and(|b| b > 0) {
            let (location, key, value) = at("verify_backlog");
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "verify_only writes nothing, so there is no backlog of writes to check",
            ));
        }
        if verifies && self.verify.state_load == Some(true) {
            let not_followed = self.state_load_not_followed();
            if let Some(reason) = not_followed {
                let (location, key, value) = at("verify_state_load");
                return Err(JobError::unsupported(location, &key, value, reason));
            }
        }
        Ok(())
    }

    /// Why storlab cannot stop a `verify_state_load` job's verify pass where fio's would, if it
    /// cannot.
    fn state_load_not_followed(&self) -> Option<&'static str> {
        if self.rw != Some(RwMode::Write) {
            Some(
                "storlab stops the verify pass where fio's would for a sequential writing \
                 job (rw=write) only: fio reads a random job's writes back in offset order \
                 and a reading job checks as it reads, which storlab does not follow",
            )
        } else if self.loops.is_some_and(|l| l > 1) {
            Some(
                "fio verifies after each loop and counts the reads of every loop against \
                 the saved state; storlab follows a single pass (drop loops)",
            )
        } else if self.time_based == Some(true) {
            Some(
                "a time_based job's writes wrap over its region, and fio's stop within a \
                 wrapped log is not followed (drop time_based)",
            )
        } else if self.verify.backlog.is_some_and(|b| b > 0) {
            Some(
                "fio stops the backlog's reads at the saved state too; storlab stops only \
                 the verify pass after the writes (drop verify_backlog)",
            )
        } else {
            None
        }
    }

    /// fio's verify settings as fio's `fixup_options` leaves them (a `verify_interval` fio
    /// would change is changed, with a warning, by `validate`): a job that only reads has no
    /// read-back phase: fio checks the
    /// headers of each block as it reads it (backend.c gives a read the `verify_io_u`
    /// completion when the job does not write), so the read-back (`verify`) is off and the
    /// worker checks every read against `verify_spec`.
    ///
    /// A time-based fio job on a synchronous engine never reaches its read-back either: fio's
    /// `do_io` leaves its loop for the verify pass once the bytes it issued reach the job's
    /// size, but counts only I/O its engine queued (`io_queue_event` adds to `bytes_issued`
    /// on FIO_Q_QUEUED alone), so the writes go on until the runtime ends the job, which then
    /// stops before `do_verify` (init.c warns "verification read phase will never start"
    /// for a job that only writes). Such a job writes its headers and reads nothing back, as
    /// `do_verify=0` (`verify_backlog` still reads between the writes, so it keeps its phase).
    pub(super) fn fio_verify_fixups(&self, spec: &mut JobSpec) {
        let reads_only = spec.read_percent == 100 && spec.replay.is_none();
        let Some(verify) = spec.verify_spec.as_ref() else {
            return;
        };
        let runtime_ends_writes = spec.time_based
            && !self.storlab_rw_default
            && !spec.fio_engine_queues()
            && verify.backlog.is_none();
        if (reads_only || runtime_ends_writes) && !verify.only {
            if runtime_ends_writes && spec.read_percent == 0 && spec.runtime_ns.is_some() {
                spec.warnings.push(
                    "verification read phase will never start because write phase uses all \
                     of runtime (fio's words: on a synchronous engine a time_based job writes \
                     until its runtime ends)"
                        .into(),
                );
            }
            spec.verify = false;
        }
    }

    /// A fio job's clones that write the same bytes with verify each read back and check only
    /// their own writes, which another clone overwrites meanwhile: fio 3.33 then fails with
    /// "bad header" (its verify header names another thread, seed and `numberio`), at a point
    /// thread timing decides (`--rw=randwrite --size=4m --numjobs=2 --verify=crc32c` fails
    /// every run). storlab
    /// would accept whichever clone's bytes landed last, so such a job is refused rather than
    /// pass where fio fails.
    pub(super) fn check_clones_verify_shared_bytes(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        let writes = spec.read_percent < 100 || spec.trim == crate::TrimMode::TrimWrite;
        // Every clone writes the same bytes with a headerless pattern, and `null` checks
        // nothing (neither does the `null` engine, which stores nothing): those pass in fio.
        // Random writes, or sequential ones from shifted starts: sequential clones from one
        // start write each block in step and fio passes them (`--rw=write --numjobs=2
        // --verify=crc32c`, every run on an idle machine; under a loaded CI run one clone
        // once read back a block the other was rewriting, torn; `rw=rw` some runs), random
        // ones fail every run, and
        // shifted ones (`offset_increment` below `size`) pass or fail as the clones' pace
        // decides (seed 6174: `rw=readwrite bsrange=512-8k size=512k numjobs=2
        // offset_increment=256k verify=sha256` passes on psync, fails on posixaio). A
        // simulated target is storlab's alone.
        // Mixed sequential clones from one start pass only some runs (seed 1618:
        // `rw=readwrite size=128k fsync=4 verify=sha256 numjobs=2` failed). Over several
        // loops each clone reads back after each of its own loops while the other writes its
        // next: `--rw=write --size=64k --loops=2 --numjobs=2 --verify=crc32` failed 2 of 6
        // runs, with `loops=3` 1 of 6 (seed 3137).
        let shifted = spec.offset_increment_bytes > 0;
        let mixed = spec.read_percent > 0;
        let looped = spec.loops > 1;
        // A simulated target is storlab's alone.
        let real_target = !matches!(spec.target, Target::Sim(_));
        let racing_writes =
            (spec.random_percent_writes() > 0 || shifted || mixed || looped) && real_target;
        let checks_headers = spec.verify
            && writes
            && spec.engine != EngineKind::Null
            && spec.verify_spec.as_ref().is_some_and(|v| {
                !v.only && !matches!(v.kind, VerifyKind::Pattern | VerifyKind::Null)
            });
        let checks_own_writes = checks_headers && racing_writes;
        let shares = &spec.target_shares;
        let apart = shares.offset_increment_ppm.is_some()
            || (spec.offset_increment_bytes > 0
                && spec
                    .size_bytes
                    .is_some_and(|size| spec.offset_increment_bytes >= size));
        if self.storlab_rw_default || spec.numjobs < 2 || apart {
            return Ok(());
        }
        // Sequential clones from one start that draw their own sizes (fio seeds each thread
        // apart) write the same bytes out of step. fio 3.33 passes them every run, its
        // backlog reads included (seed 6666: `rw=write bsrange=1k-64k numjobs=2 verify=md5
        // verify_backlog=4`, and with size=64m); storlab's backlog check of one clone finds
        // some runs the block the other clone rewrote with a seed of its own. Refused until
        // storlab follows what fio's check makes of it.
        let several_sizes = spec.block_size_write.min_bytes() != spec.block_size_write.max_bytes();
        let backlog = self.verify.backlog.is_some_and(|b| b > 0);
        if !checks_own_writes && checks_headers && several_sizes && backlog && real_target {
            let (location, key, value) = self.setter("numjobs", job_location);
            return Err(JobError::unsupported(
                location,
                &key,
                value,
                "with verify_backlog, clones of several block sizes write the same bytes out of \
                 step, and storlab's backlog check of one clone can find a block the other \
                 rewrote where fio 3.33 passes (seed 6666); give each clone its own region \
                 (offset_increment >= size), one block size, or numjobs=1",
            ));
        }
        if !checks_own_writes {
            return Ok(());
        }
        let (location, key, value) = self.setter("numjobs", job_location);
        Err(JobError::unsupported(
            location,
            &key,
            value,
            "with verify, clones that write the same bytes each check only their own writes, \
             which another overwrites: fio 3.33 fails with a bad header where timing decides; \
             give each clone its own region (offset_increment >= size) or use numjobs=1",
        ))
    }

    /// fio's `experimental_verify` (backend.c, `do_verify`): instead of reading back a log of
    /// the writes, fio resets its random state and generates the workload again, reading each
    /// write's block in the order it was written. storlab's logged read-back issues the same
    /// reads in the same order where its log is kept in write order and holds every write:
    /// a random job with fio's random map (fio logs such writes in a list,
    /// `verify_seeds::fio_logs_writes_in_a_list`), or a sequential job, each writing one pass
    /// forward. Over several loops fio 3.33 reads back the first loop alone, and counts those
    /// reads against the loops' write bytes (`td_io_queue` accounts a regenerated write turned
    /// read as a write, `acct_ddir`): a job that only writes then writes one loop fewer than
    /// `loops` (`loops=8`: 7 passes written, the first read back, fio's t0026), which the job
    /// here becomes. Anywhere else (overwrites without the map, `lfsr`, a skewed distribution,
    /// backward holes, passes that wrap, a random mixed job, a mixed job or `number_ios` over
    /// several loops, several loops of an `io_size` below `size`) the orders or the reads
    /// differ, and the job is refused with why. `verify_backlog` reads nothing then (fio keeps
    /// no log of the writes to read back from).
    pub(super) fn fit_experimental_verify(
        &self,
        spec: &mut JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        if self.verify.experimental != Some(true) || !spec.verify {
            return Ok(());
        }
        if spec.sync.every_n_writes() {
            // fio's regenerated pass draws the syncs again too, and never ends: `--rw=write
            // --size=64k --fsync=4 --verify=crc32c --experimental_verify=1` ran until killed
            // (seed 5858; likewise `fdatasync=1`, and `randwrite` with `fsync=3`).
            let (location, key, value) = self.setter("experimental_verify", job_location);
            return Err(JobError::unsupported(
                location,
                &key,
                value,
                "with fsync or fdatasync every N writes fio 3.33's experimental pass never \
                 ends (it regenerates the syncs too); drop experimental_verify for fio's \
                 default verify"
                    .to_string(),
            ));
        }
        match self.experimental_verify_refusal(spec) {
            None => {
                // fio's backlog reads come from its log of writes (`check_get_verify` needs
                // `io_hist_len`), which an experimental job never keeps (`log_io_piece` is
                // skipped): `verify_backlog` reads nothing there.
                if let Some(verify) = spec.verify_spec.as_mut() {
                    verify.backlog = None;
                    verify.backlog_batch = None;
                }
                if spec.loops > 1 {
                    spec.loops -= 1;
                    if let Some(verify) = spec.verify_spec.as_mut() {
                        verify.first_loop_only = spec.loops > 1;
                    }
                }
                Ok(())
            }
            Some(why) => {
                let (location, key, value) = self.setter("experimental_verify", job_location);
                Err(JobError::unsupported(
                    location,
                    &key,
                    value,
                    format!(
                        "fio regenerates the writes in the order they were written, which \
                         storlab's logged read-back does not reproduce {why}; drop \
                         experimental_verify for fio's default verify"
                    ),
                ))
            }
        }
    }

    /// A time-based fio job with a read-back on an engine that queues: fio 3.33's `do_io`
    /// leaves its loop for a verify pass each time the bytes it queued reach the job's size,
    /// then writes on (`keep_running` is always true when time-based), pass after pass until
    /// the runtime (`--rw=randwrite --size=64k --ioengine=libaio --time_based --runtime=1
    /// --verify=md5`: 20 360 reads, 20 368 writes); storlab reads back once at the end, so the
    /// job is refused rather than run differently. A synchronous engine never leaves for the
    /// pass (`fio_verify_fixups`); a simulated drive is storlab's alone.
    pub(super) fn check_time_based_read_back(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        let passes_between_writes = spec.time_based
            && spec.verify
            && !self.storlab_rw_default
            && spec.fio_engine_queues()
            && spec.engine != EngineKind::Sim
            && spec
                .verify_spec
                .as_ref()
                .is_some_and(|v| v.backlog.is_none() && !v.only);
        if !passes_between_writes {
            return Ok(());
        }
        let (location, key, value) = self.setter("time_based", job_location);
        Err(JobError::unsupported(
            location,
            &key,
            value,
            "with verify on an engine that queues, fio 3.33 stops its writes for a verify pass \
             each time the bytes it queued reach the job's size, then writes on, until the \
             runtime; storlab reads back once at the end: drop time_based, set do_verify=0, or \
             use a synchronous engine (psync), where the runtime ends fio's writes before any \
             verify pass",
        ))
    }

    /// fio's null engine above depth 1 refuses a request while one is unreaped, and with
    /// `verify_async` a checked read's I/O unit comes back when a helper thread has checked
    /// it, as threads run: which requests fio logs twice then varies run to run (seed 7575:
    /// `--size=64k --number_ios=100 --ioengine=null --iodepth=2 --verify_pattern=0xabcd
    /// --verify_async=2` logged 30, 30 and 24 actions in three runs).
    pub(super) fn check_null_async_checks(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        let async_checks = self.verify.async_threads.unwrap_or(0) > 0;
        if self.storlab_rw_default
            || !async_checks
            || spec.verify_spec.is_none()
            || !spec.fio_logs_busy_requeues()
        {
            return Ok(());
        }
        Err(self.refused_at_key(
            "verify_async",
            job_location,
            "with ioengine=null above iodepth=1: fio 3.33's null engine refuses a request while \
             one is unreaped, and a read its helper threads check comes back as they run, so \
             which requests fio logs twice varies run to run; use iodepth=1 or drop \
             verify_async"
                .to_string(),
        ))
    }

    /// Why storlab's read-back is not fio's `experimental_verify` pass for `spec`, if it is not.
    fn experimental_verify_refusal(&self, spec: &JobSpec) -> Option<&'static str> {
        let random = spec.random_percent > 0 || spec.random_percent_writes() > 0;
        // init.c `fixup_options`: every distribution but the uniform one, zoned ones too,
        // turns fio's random map off.
        let map_kept = matches!(spec.random_distribution, RandomDistribution::Random);
        let lfsr = spec.fio_random.as_ref().is_some_and(|fio| fio.lfsr);
        let reseeds = spec
            .fio_random
            .as_ref()
            .is_none_or(|fio| fio.reseeds_each_loop());
        let several_sizes = spec.block_size_write.min_bytes() != spec.block_size_write.max_bytes();
        let holes = !matches!(
            spec.rw_modifier,
            RwModifier::None | RwModifier::BackBytes(_)
        );
        // A mixed job draws each direction from fio's rwmix stream, which the pass draws again.
        let mixed = spec.read_percent > 0 && spec.read_percent < 100;
        // Strided zones that skip part of the region come back to its start to make up the
        // job's bytes (seed 2233445: zonesize=16k zoneskip=64k wrote 124 times over 51 blocks).
        let wraps = spec.time_based
            || spec.strided_zones.is_some()
            || spec
                .io_size_bytes
                .is_some_and(|io| spec.size_bytes.is_none_or(|size| io > size))
            || matches!(spec.rw_modifier, RwModifier::BackBytes(_));
        match () {
            _ if !reseeds && (random || several_sizes || mixed) => Some(
                "where fio does not re-seed its streams (randseed given, or randrepeat=0): its \
                 regenerated pass draws new sizes, offsets and directions (seed 5858: \
                 bsrange=4k-16k randseed=47798 read 4 KiB where 12 KiB were written; seed \
                 2828: a readwrite job's new draws ran its reads out after 2 of 4 writes)",
            ),
            _ if random && mixed => Some(
                "for a random job that reads and writes: fio's regenerated pass draws the \
                 read/write mix again with the writes' issue counts kept (libfio.c \
                 reset_io_counters), so from some point it reads back blocks the workload \
                 only read, as the seeds fall (seed 6767: randrw size=256k, fio's second \
                 thread read back 25 blocks it never wrote)",
            ),
            _ if random && !(spec.random_map && map_kept && !lfsr) => Some(
                "for random writes without fio's random map (norandommap, lfsr, a skewed or \
                 zoned random_distribution), where its log is sorted by offset",
            ),
            _ if spec.loops > 1 && (spec.read_percent > 0 || spec.number_ios.is_some()) => Some(
                "for a job that reads or has number_ios over several loops: fio 3.33 reads \
                 back the first loop alone and counts those reads against the loops' bytes \
                 and I/Os, which storlab follows only for a job that just writes",
            ),
            _ if spec.loops > 1
                && spec
                    .io_size_bytes
                    .is_some_and(|io| spec.size_bytes.is_some_and(|size| io < size)) =>
            {
                Some(
                    "over several loops of an io_size below size: fio's first loop runs past \
                     io_size where its engine does not queue, its pass reads back all of it, \
                     and the reads count against the loops' bytes, which the loop storlab \
                     runs for the job does not follow (seed 1414: rw=write size=512k \
                     io_size=256k loops=2, fio 32 writes and 32 reads)",
                )
            }
            _ if holes => Some(
                "with rw=...:N (holes, or a new random offset every N I/Os): fio's pass ends, \
                 wraps and starts its sequential stretches where its state leaves them, and \
                 reads back the first pass alone (seed 5353: rw=write:16k size=128k read back 6 \
                 of 12 writes; randrw:4 failed where storlab passed)",
            ),
            _ if wraps => Some(
                "for writes that pass over the region more than once per verify or go \
                 backwards (time_based, io_size above size, rw=write:-N, zonemode=strided): \
                 fio reads a block as often as it was written, storlab its last write once",
            ),
            _ if spec.fio_logs_busy_requeues() => Some(
                "on ioengine=null above iodepth=1: fio 3.33's null engine refuses a request \
                 while its last one is unreaped, and its experimental pass drops a refused read \
                 instead of retrying it (backend.c do_verify: the requeued unit comes back from \
                 get_io_u as a read and is put back), so fio reads back every other write \
                 (seed 1618033: 64 of 128); use iodepth=1",
            ),
            _ if mixed && spec.engine == EngineKind::Sync => Some(
                "on ioengine=sync for a sequential job that reads and writes: fio 3.33 fails \
                 its own regenerated pass there ('bad header rand_seed', or 'bad magic' where a \
                 block the workload read is read back; seeds 1111 and 4444, at every size, mix \
                 and verify kind tried), where psync, vsync, pvsync, libaio, posixaio and mmap \
                 pass as storlab does",
            ),
            _ => None,
        }
    }

    /// `verify` and its family as the job runs them.
    pub(super) fn build_verify(&self, spec: &mut JobSpec) {
        set_if(&mut spec.verify, self.verify.enabled);
        spec.verify_spec = self.verify_spec();
        // fio saves the state of any job with `verify` set, `do_verify=0` included.
        spec.verify_state_save = self.verify.enabled == Some(true)
            && self.verify.state_save.unwrap_or(!self.storlab_rw_default);
        spec.verify_state_load = self.verify.state_load == Some(true);
        if spec.verify_spec.as_ref().is_some_and(|v| v.only) {
            spec.verify = true;
        } else if self.verify.do_verify == Some(false) {
            spec.verify = false;
        }
        spec.fio_done_file_stays_done = self.verify.do_verify == Some(false);
    }
}

#[cfg(test)]
mod tests;
