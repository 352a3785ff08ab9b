//! fio's job description keys (its HOWTO's "Job description"): a job's name, how many clones run it and how often it repeats.

use super::values::set_if;
use super::values::to_u32;
use super::JobDraft;
use super::{ApplyError, KeyDef};
use crate::model::JobSpec;
use crate::paths::KeyPath;
use crate::size::parse_count;

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "name",
        aliases: &[],
        bare: false,
        meaning: "job name (on the command line, starts a new job)",
        field: "name",
        path: KeyPath::None,
        apply: |d, v| {
            d.name = Some(v.to_string());
            Ok(())
        },
    },
    KeyDef {
        name: "description",
        aliases: &[],
        bare: false,
        meaning: "free text, ignored",
        field: "description",
        path: KeyPath::None,
        apply: |_, _| Ok(()),
    },
    KeyDef {
        name: "numjobs",
        aliases: &[],
        bare: false,
        meaning: "workers (threads) running this job",
        field: "numjobs",
        path: KeyPath::None,
        apply: |d, v| {
            d.numjobs = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "loops",
        aliases: &[],
        bare: false,
        meaning: "repeat the job's I/O this many times (default 1)",
        field: "loops",
        path: KeyPath::None,
        apply: |d, v| {
            d.loops = Some(to_u32(parse_count(v)?, v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "kb_base",
        aliases: &[],
        bare: false,
        meaning: "units of sizes: 1024 (k is 1024, KiB 1000, fio's default) or 1000 (k is 1000, KiB 1024)",
        field: "kb_base",
        path: KeyPath::None,
        apply: |d, v| match v {
            "1024" => {
                d.kb_base = Some(1024);
                Ok(())
            }
            "1000" => {
                d.kb_base = Some(1000);
                Ok(())
            }
            _ => Err(ApplyError::Invalid("use 1024 or 1000 (as fio)".into())),
        },
    },
];

impl JobDraft {
    /// `numjobs` and `loops`.
    pub(super) fn build_description(&self, spec: &mut JobSpec) {
        set_if(&mut spec.numjobs, self.numjobs);
        set_if(&mut spec.loops, self.loops);
    }
}
