//! fio's I/O depth keys: `iodepth`, its batching (`iodepth_batch_*`, `iodepth_low`), `io_submit_mode` and `serialize_overlap`.

use super::values::set_if;
use super::values::to_u32;
use super::JobDraft;
use super::{ApplyError, KeyDef};
use crate::error::{JobError, Location};
use crate::model::{EngineKind, JobSpec, Target};
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_count};

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "iodepth",
        aliases: &[],
        bare: false,
        meaning: "outstanding I/Os per worker",
        field: "iodepth",
        path: KeyPath::None,
        apply: |d, v| {
            d.iodepth = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "iodepth_batch_submit",
        aliases: &["iodepth_batch"],
        bare: false,
        meaning: "queueing engines: I/Os queued before they are submitted together (default 1; 0: iodepth)",
        field: "iodepth_batch_submit",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_batch_submit = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "iodepth_batch_complete_min",
        aliases: &["iodepth_batch_complete"],
        bare: false,
        meaning: "queueing engines: completions a reap waits for (default 1; 0 with iodepth_batch_complete_max=0: poll after every I/O)",
        field: "iodepth_batch_complete_min",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_batch_complete_min = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "iodepth_batch_complete_max",
        aliases: &[],
        bare: false,
        meaning: "queueing engines: most completions one reap takes (default and at least iodepth_batch_complete_min)",
        field: "iodepth_batch_complete_max",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_batch_complete_max = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "iodepth_low",
        aliases: &[],
        bare: false,
        meaning: "queueing engines: once the queue is full, reap until this many I/Os are in flight (default iodepth)",
        field: "iodepth_low",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_depth_low = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "io_submit_mode",
        aliases: &[],
        bare: false,
        meaning: "inline or offload: storlab's worker submits and reaps its own I/O either way; \
                  offload makes serialize_overlap look across every offload job",
        field: "io_submit_mode",
        path: KeyPath::None,
        apply: |d, v| {
            d.submit_offload = Some(match v {
                "inline" => false,
                "offload" => true,
                _ => return Err(ApplyError::Invalid("use inline or offload".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "serialize_overlap",
        aliases: &[],
        bare: true,
        meaning: "issue no I/O while one that overlaps it is in flight (of the job; with \
                  io_submit_mode=offload, of every offload job that sets it)",
        field: "serialize_overlap",
        path: KeyPath::None,
        apply: |d, v| {
            d.serialize_overlap = Some(parse_bool(v)?);
            Ok(())
        },
    },
];

impl JobDraft {
    /// `io_submit_mode=offload` where fio 3.33 cannot run it (checked on every engine): its
    /// job dies of SIGSEGV with `write_iolog` (the submit workers have no log), io_uring
    /// refuses it (FIO_NO_OFFLOAD), posixaio never ends, libaio above depth 1 often does not.
    pub(super) fn check_submit_offload(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        if !spec.submit_offload || self.storlab_rw_default {
            return Ok(());
        }
        let reason = if spec.write_iolog.is_some() {
            "with write_iolog fio 3.33's job dies of a segmentation fault before any I/O (its \
             submit workers have no log); drop write_iolog or io_submit_mode=offload"
        } else if spec.engine == EngineKind::IoUring {
            "io_uring can't be used with offloaded submit (fio 3.33 refuses it); use a sync \
             engine or io_submit_mode=inline"
        } else if spec.engine == EngineKind::Posixaio {
            "fio 3.33 never ends a posixaio job with offloaded submit; use a sync engine or \
             io_submit_mode=inline"
        } else if spec.engine == EngineKind::Libaio && spec.iodepth > 1 {
            // Seed 9797: `--rw=randwrite --size=256k --ioengine=libaio --iodepth=N
            // --io_submit_mode=offload` hung in 1 of 6 runs at iodepth=2 and 2-4 of 5 at 3, 4,
            // 8 and 16, buffered or direct; none of 4 at iodepth=1.
            "above iodepth=1 fio 3.33 often never ends a libaio job with offloaded submit \
             (whether it ends varies run to run); use iodepth=1, a sync engine or \
             io_submit_mode=inline"
        } else {
            return Ok(());
        };
        Err(self.refused_at_key("io_submit_mode", job_location, reason.to_string()))
    }

    /// `iodepth` and `io_submit_mode`.
    pub(super) fn build_depth(&self, spec: &mut JobSpec) {
        set_if(&mut spec.iodepth, self.iodepth);
        set_if(&mut spec.submit_offload, self.submit_offload);
    }

    /// `serialize_overlap` where I/O can race, and the batching of submissions and completions,
    /// with a warning where a simulated drive's clones do not follow it.
    pub(super) fn build_io_batch(&self, spec: &mut JobSpec) {
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
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::draft;

    #[test]
    fn batching_and_cpu_keys_reach_the_spec_as_fio_leaves_them() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("ioengine", Some("io_uring")),
            ("iodepth", Some("16")),
            ("iodepth_batch", Some("4")),
            ("iodepth_batch_complete", Some("2")),
            ("iodepth_low", Some("8")),
            ("cpus_allowed", Some("1,0")),
            ("cpus_allowed_policy", Some("split")),
        ])
        .unwrap();
        assert_eq!(
            spec.io_batch,
            Some(crate::IoBatch {
                submit: 4,
                complete_min: 2,
                complete_max: 2,
                depth_low: 8
            })
        );
        assert_eq!(
            spec.cpus_allowed,
            Some(crate::CpuAffinity {
                cpus: vec![0, 1],
                split: true
            })
        );
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
        // fio's defaults spelled out are no batching at all.
        let spec = draft(&[
            ("size", Some("1M")),
            ("iodepth", Some("8")),
            ("iodepth_batch_submit", Some("1")),
            ("iodepth_batch_complete_max", Some("1")),
            ("iodepth_low", Some("8")),
            ("cpus_allowed_policy", Some("split")),
        ])
        .unwrap();
        assert_eq!((spec.io_batch, spec.cpus_allowed), (None, None));
        let bad = draft(&[("cpus_allowed_policy", Some("spread"))]).unwrap_err();
        assert!(bad.to_string().contains("use shared or split"), "{bad}");
        let bad = draft(&[("verify_async_cpus", Some("0-x"))]).unwrap_err();
        assert!(bad.to_string().contains("verify_async_cpus"), "{bad}");
    }

    #[test]
    fn serialize_overlap_is_on_only_where_io_can_race_as_fio_leaves_it() {
        let with = |extra: &[(&str, Option<&str>)]| {
            let mut all = vec![("size", Some("1M")), ("serialize_overlap", None)];
            all.extend_from_slice(extra);
            draft(&all).unwrap().serialize_overlap
        };
        assert!(with(&[("rw", Some("randwrite")), ("iodepth", Some("8"))]));
        assert!(!with(&[("rw", Some("randwrite")), ("iodepth", Some("1"))]));
        assert!(!with(&[("rw", Some("randread")), ("iodepth", Some("8"))]));
        assert!(with(&[
            ("rw", Some("read")),
            ("io_submit_mode", Some("offload"))
        ]));
    }

    /// Offloaded submit on the engines fio 3.33 does not end with it (seed 9797: libaio above
    /// depth 1 hangs in some runs); libaio at depth 1 and psync run.
    #[test]
    fn offloaded_submit_is_refused_where_fio_never_ends() {
        let with = |engine: &str, depth: &str| {
            draft(&[
                ("size", Some("1M")),
                ("ioengine", Some(engine)),
                ("iodepth", Some(depth)),
                ("io_submit_mode", Some("offload")),
            ])
        };
        for (engine, depth) in [("libaio", "2"), ("libaio", "8"), ("posixaio", "2")] {
            let error = with(engine, depth).unwrap_err().to_string();
            assert!(error.contains("never ends"), "{engine} {depth}: {error}");
        }
        for (engine, depth) in [("libaio", "1"), ("psync", "8")] {
            with(engine, depth).unwrap();
        }
    }
}
