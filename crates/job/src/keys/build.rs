//! `JobDraft::build`: a draft turned into a `JobSpec`, group by group, before validation.

use super::io_size::Extent;
use super::io_type::{RwMode, RWMIX_READ_DEFAULT_PERCENT};
use super::random::{
    seed_from_os_entropy, FioGenerator, FIO_DEFAULT_RANDSEED, RANDOM_DEFAULT_PERCENT,
};
use super::steady_state::STEADYSTATE_DEFAULT_LIMIT_MICROS;
use super::target::{on_a_file, trims_a_file};
use super::values::no_effect_reason;
use super::JobDraft;
use crate::model::{
    DedupeMode, DedupeSpec, FioLogKind, FioRandom, FlowSpec, JobSpec, RwModifier, SteadyStateSpec,
    StridedZones, SyncSpec, Target, TargetShares, ThinkSpec, TrimMode,
};
use std::path::PathBuf;

fn set_if<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

impl JobDraft {
    /// The job with every setting applied over storlab's defaults, not yet validated.
    pub(super) fn build(&self, name: &str) -> JobSpec {
        let (engine, target, warnings) = self.engine_and_target(name);
        let mut spec = JobSpec::new(name, engine, target);
        spec.warnings = warnings;
        if let Some(rw) = self.rw {
            spec.read_percent = match rw {
                RwMode::Read | RwMode::RandRead => 100,
                // A trim changes the target as a write does: opened for writing, under the
                // same safety rules for block devices.
                RwMode::Write
                | RwMode::RandWrite
                | RwMode::Trim
                | RwMode::RandTrim
                | RwMode::TrimWrite
                | RwMode::RandTrimWrite => 0,
                RwMode::Mixed | RwMode::RandMixed => {
                    self.rwmixread.unwrap_or(RWMIX_READ_DEFAULT_PERCENT)
                }
            };
        }
        spec.trim = self.rw.map_or(TrimMode::None, RwMode::trim);
        let mixed = matches!(self.rw, Some(RwMode::Mixed | RwMode::RandMixed));
        if self.rwmixread.is_some() && !mixed {
            spec.warnings.push(format!(
                "rwmixread/rwmixwrite has no effect with rw={}; use rw=rw or rw=randrw for a mix",
                spec.rw_name()
            ));
        }
        // An unset `rw` is fio's `read` in a job file or flags, storlab's random read in a
        // preset.
        let random = match self.rw {
            Some(rw) => rw.is_random(),
            None => self.storlab_rw_default,
        };
        let given = self.percentage_random_read.is_some() || self.percentage_random_write.is_some();
        if random {
            let read_share = self
                .percentage_random_read
                .unwrap_or(RANDOM_DEFAULT_PERCENT);
            let write_share = self
                .percentage_random_write
                .unwrap_or(RANDOM_DEFAULT_PERCENT);
            // A job in one direction keeps that direction's share in `random_percent`; only a
            // mix with two different shares needs the writes' own.
            match spec.read_percent {
                0 => spec.random_percent = write_share,
                100 => spec.random_percent = read_share,
                _ => {
                    spec.random_percent = read_share;
                    spec.random_percent_write = (write_share != read_share).then_some(write_share);
                }
            }
        } else {
            if given {
                spec.warnings.push(format!(
                    "percentage_random has no effect with sequential rw={}; use a rand* mode",
                    spec.rw_name()
                ));
            }
            spec.random_percent = 0;
        }
        if let Some(bs) = &self.block_size_read {
            spec.block_size_read = bs.clone();
        }
        if let Some(bs) = &self.block_size_write {
            spec.block_size_write = bs.clone();
        }
        if let (TrimMode::Trim | TrimMode::TrimWrite, Some(trim_bs)) =
            (spec.trim, &self.block_size_trim)
        {
            // A trim job reads nothing: its trims take the read stream and its sizes.
            spec.block_size_read = trim_bs.clone();
        }
        // fio's LFSR generator (lib/lfsr.c) visits every block once per pass by construction,
        // random map or not, so a job naming it draws without repeats even with
        // `norandommap`: storlab's map is a permutation too (fio's t0021 checks exactly this).
        spec.random_map =
            !self.norandommap.unwrap_or(false) || self.random_generator == Some(FioGenerator::Lfsr);
        set_if(&mut spec.direct, self.direct);
        set_if(&mut spec.invalidate, self.invalidate);
        set_if(&mut spec.fadvise_hint, self.fadvise_hint);
        set_if(&mut spec.align_bytes, self.align_bytes);
        spec.align_given = self.align_bytes.is_some();
        self.fio_blockalign_rules(&mut spec, random);
        set_if(&mut spec.iodepth, self.iodepth);
        set_if(&mut spec.numjobs, self.numjobs);
        set_if(&mut spec.offset_bytes, self.offset.and_then(Extent::bytes));
        set_if(
            &mut spec.offset_increment_bytes,
            self.offset_increment.and_then(Extent::bytes),
        );
        spec.size_bytes = self.size.and_then(Extent::bytes);
        spec.target_shares = TargetShares {
            offset_ppm: self.offset.and_then(Extent::share_ppm),
            offset_increment_ppm: self.offset_increment.and_then(Extent::share_ppm),
            size_ppm: self.size.and_then(Extent::share_ppm),
        };
        spec.number_ios = self.number_ios;
        spec.io_size_bytes = self.io_size_bytes;
        set_if(&mut spec.loops, self.loops);
        spec.runtime_ns = self.runtime_ns;
        set_if(&mut spec.time_based, self.time_based);
        set_if(&mut spec.ramp_time_ns, self.ramp_time_ns);
        spec.rate_iops.read = self.rate_iops_read;
        spec.rate_iops.write = self.rate_iops_write;
        spec.rate_bytes.read = self.rate_bytes_read;
        spec.rate_bytes.write = self.rate_bytes_write;
        set_if(&mut spec.data_pattern, self.data_pattern);
        set_if(&mut spec.seed, self.seed);
        // `randrepeat=0` without `randseed`: a fresh seed every run, for storlab's own streams
        // (data, and the jobs below that keep them) as for fio's.
        if self.seed.is_none() && self.randrepeat == Some(false) {
            spec.seed = seed_from_os_entropy();
        }
        // A fio job draws from fio's own generators seeded as fio seeds them, its LFSR too.
        spec.fio_random = (!self.storlab_rw_default).then(|| FioRandom {
            randseed: self.seed.unwrap_or(FIO_DEFAULT_RANDSEED),
            randrepeat: self.randrepeat.unwrap_or(true),
            randseed_given: self.seed.is_some(),
            tausworthe64: self.random_generator == Some(FioGenerator::Tausworthe64),
            lfsr: self.random_generator == Some(FioGenerator::Lfsr),
        });
        set_if(&mut spec.verify, self.verify);
        spec.verify_spec = self.verify_spec();
        // fio saves the state of any job with `verify` set, `do_verify=0` included.
        spec.verify_state_save =
            self.verify == Some(true) && self.verify_state_save.unwrap_or(!self.storlab_rw_default);
        spec.verify_state_load = self.verify_state_load == Some(true);
        if spec.verify_spec.as_ref().is_some_and(|v| v.only) {
            spec.verify = true;
        } else if self.do_verify == Some(false) {
            spec.verify = false;
        }
        set_if(&mut spec.continue_on_error, self.continue_on_error.clone());
        set_if(&mut spec.fill_device, self.fill_device);
        set_if(&mut spec.stonewall, self.stonewall);
        set_if(&mut spec.new_group, self.new_group);
        set_if(&mut spec.start_delay, self.start_delay);
        spec.wait_for = self.wait_for.clone();
        spec.exit_all = crate::ExitAll {
            on_end: self.exitall.unwrap_or(false),
            on_error: self.exitall_on_error.unwrap_or(false),
            what: self.exit_what.unwrap_or_default(),
        };
        // fio sets the priority only when either key is set (backend.c, fio_option_is_set).
        if self.io_priority_class.is_some() || self.io_priority_level.is_some() {
            spec.io_priority = Some(crate::IoPriority {
                class: self.io_priority_class.unwrap_or(0),
                level: self.io_priority_level.unwrap_or(0),
            });
        }
        set_if(&mut spec.group_reporting, self.group_reporting);
        spec.write_iolog = self.write_iolog.clone();
        spec.engine_tuning = self.engine_tuning.clone();
        let ignored = self.engine_tuning.ignored_by(spec.engine);
        if !ignored.is_empty() {
            spec.warnings.push(format!(
                "{} has no effect with ioengine={}",
                ignored.join(", "),
                spec.engine.as_str()
            ));
        }
        spec.sync = SyncSpec {
            fsync_every_writes: self.fsync_every_writes.unwrap_or(0),
            fdatasync_every_writes: self.fdatasync_every_writes.unwrap_or(0),
            end_fsync: self.end_fsync.unwrap_or(false),
            fsync_on_close: self.fsync_on_close.unwrap_or(false),
            open_sync: self.open_sync.unwrap_or_default(),
        };
        spec.think = ThinkSpec {
            think_ns: self.think_ns.unwrap_or(0),
            spin_ns: self.think_spin_ns.unwrap_or(0),
            every_ios: self.think_every_ios,
            count_issued: self.think_count_issued.unwrap_or(false),
            every_io_ns: self.think_every_io_ns.unwrap_or(0),
        };
        // fio's flow.c: a job joins a flow only with a weight (`flow=0`, the default, is none).
        spec.flow = self.flow_weight.filter(|w| *w > 0).map(|weight| FlowSpec {
            id: self.flow_id.unwrap_or(0),
            weight,
            sleep_ns: self.flow_sleep_ns.unwrap_or(0),
        });
        set_if(&mut spec.submit_offload, self.submit_offload);
        spec.latency_target = self.latency_target;
        spec.numa_mem_policy = self.numa_mem_policy.clone();
        // `rw=write:0` and `rw=randread:1` change nothing, as in fio.
        spec.rw_modifier = match self.rw_modifier {
            Some(
                RwModifier::SkipBytes(0) | RwModifier::BackBytes(0) | RwModifier::RandomEveryIos(1),
            )
            | None => RwModifier::None,
            Some(modifier) => modifier,
        };
        set_if(&mut spec.allow_file_create, self.allow_file_create);
        // fio: steady state is judged only with a duration; its default criterion is
        // iops_slope:0.01%.
        spec.steadystate = self
            .steadystate_duration_ns
            .filter(|d| *d > 0)
            .map(|duration_ns| {
                let (bandwidth, slope, limit_micros, percent) = self
                    .steadystate_criterion
                    .unwrap_or((false, true, STEADYSTATE_DEFAULT_LIMIT_MICROS, true));
                SteadyStateSpec {
                    bandwidth,
                    slope,
                    limit_micros,
                    percent,
                    duration_ns,
                    ramp_ns: self.steadystate_ramp_ns.unwrap_or(0),
                }
            });
        spec.fio_logs = self.fio_logs.clone();
        for kind in &self.log_named_by_job {
            let prefix = Some(PathBuf::from(name));
            match kind {
                FioLogKind::Bandwidth => spec.fio_logs.bandwidth_prefix = prefix,
                FioLogKind::Iops => spec.fio_logs.iops_prefix = prefix,
                FioLogKind::CompletionHistogram => spec.fio_logs.histogram_prefix = prefix,
                _ => spec.fio_logs.latency_prefix = prefix,
            }
        }
        set_if(&mut spec.unlink, self.unlink);
        set_if(&mut spec.rate_poisson, self.rate_poisson);
        spec.buffer_pattern = self.buffer_pattern.clone();
        spec.dedupe = self
            .dedupe_percentage
            .filter(|percent| *percent > 0)
            .map(|percent| DedupeSpec {
                percent,
                mode: self.dedupe_mode.unwrap_or(DedupeMode::Repeat),
                // fio's default (options.c: `.def = "5"`).
                working_set_percent: self.dedupe_working_set_percentage.unwrap_or(5),
                global: self.dedupe_global.unwrap_or(false),
            });
        // fio's `refill_buffers`: every write refilled from the thread's buffer stream (io_u.c,
        // `fill_io_buffer`), which storlab's fio buffers do when no write is a repeat.
        if spec.dedupe.is_none() && self.refill_buffers == Some(true) && !self.storlab_rw_default {
            spec.dedupe = Some(DedupeSpec {
                percent: 0,
                mode: DedupeMode::Repeat,
                working_set_percent: 5,
                global: false,
            });
        }
        if let Some((read, write)) = self.rate_min {
            spec.rate_min.read = read;
            spec.rate_min.write = write;
        }
        if let Some((read, write)) = self.rate_iops_min {
            spec.rate_iops_min.read = read;
            spec.rate_iops_min.write = write;
        }
        if self.size.is_none() {
            if let Some(filesize) = self.filesize_bytes {
                spec.size_bytes = Some(filesize);
            }
        }
        for key in &self.no_effect {
            if *key == "verify_pattern" && spec.verify_spec.is_some() {
                continue;
            }
            spec.warnings
                .push(format!("{key}: {}", no_effect_reason(key)));
        }
        if self.zonemode_strided == Some(true) {
            let size_bytes = self.zone_size_bytes.unwrap_or(0);
            spec.strided_zones = Some(StridedZones {
                size_bytes,
                // fio: `zonerange` defaults to `zonesize`.
                range_bytes: self.zone_range_bytes.unwrap_or(size_bytes),
                skip_bytes: self.zone_skip_bytes.unwrap_or(0),
            });
        }
        if let Some(distribution) = &self.random_distribution {
            spec.random_distribution = distribution.clone();
        }
        let partly_random = [spec.random_percent, spec.random_percent_writes()]
            .iter()
            .find(|share| (1..100).contains(*share))
            .copied();
        if let (Some(share), false, None) = (partly_random, spec.time_based, &spec.fio_random) {
            // On a region that ends before its file, fio 3.33 ends a partly random job when a
            // sequential I/O would pass the region's end, at a point set by its own random
            // streams: a fio job draws from them (and matches), storlab's generator does not.
            spec.warnings.push(format!(
                "storlab differs from fio here: with percentage_random={} fio ends the job when \
                 a sequential I/O would pass the end of a region that ends before its file, \
                 storlab goes round to the region's start and moves all of its bytes",
                share
            ));
        }
        self.apply_replay(&mut spec);
        self.fio_verify_fixups(&mut spec);
        let on_a_file = on_a_file(&spec.target);
        if trims_a_file(&spec) {
            spec.warnings.push(
                "storlab differs from fio here: on a regular file storlab trims by punching a \
                 hole (fallocate PUNCH_HOLE|KEEP_SIZE), where fio 3.33 fails the trim (its \
                 os_trim is BLKDISCARD alone: error 25, ENOTTY); use a block device or \
                 ioengine=null for fio's behaviour"
                    .into(),
            );
        }
        if spec.dedupe.is_some() && on_a_file && (1..100).contains(&spec.read_percent) {
            spec.warnings.push(
                "storlab differs from fio here: a dedupe job that also reads repeats fio's share \
                 of its writes, not fio's bytes, and blocks it does not write stay unique: fio \
                 lays a new file out with the same dedupe buffers first (filesetup.c), storlab \
                 with its own layout data"
                    .into(),
            );
        }
        // fio's init.c: no overlap check where nothing can race (a job that does not change
        // data, or one I/O at a time), unless the I/O is a replay's or offloaded.
        spec.serialize_overlap = self.serialize_overlap == Some(true)
            && (spec.replay.is_some()
                || (spec.read_percent < 100 && spec.iodepth > 1)
                || spec.submit_offload);
        let io_batch = crate::IoBatch::fio(
            spec.iodepth,
            self.io_batch_submit,
            self.io_batch_complete_min,
            self.io_batch_complete_max,
            self.io_depth_low,
        );
        spec.io_batch = (!io_batch.is_fio_default(spec.iodepth)).then_some(io_batch);
        if spec.io_batch.is_some() && spec.numjobs > 1 && matches!(spec.target, Target::Sim(_)) {
            spec.warnings.push(
                "storlab differs from fio here: the clones of a job on a simulated drive share \
                 one issue loop, which keeps one I/O submitted and one completion reaped at a \
                 time; iodepth_batch*, iodepth_low apply with numjobs=1 (or on a real target)"
                    .into(),
            );
        }
        // fio's policy applies to a CPU set; without `cpus_allowed` it has nothing to split.
        spec.cpus_allowed = self.cpus_allowed.clone().map(|cpus| crate::CpuAffinity {
            cpus,
            split: self.cpus_allowed_split == Some(true),
        });
        spec
    }
}
