//! fio's I/O latency keys: the `latency_target` family, which lowers the depth until a latency is met.

use super::values::NS_PER_US;
use super::JobDraft;
use super::{ApplyError, KeyDef};
use crate::model::JobSpec;
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_time_ns};

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "latency_target",
        aliases: &[],
        bare: false,
        meaning: "search for the deepest queue (up to iodepth) whose I/Os meet this latency \
                  (microseconds by default), as fio's latency profile",
        field: "latency_target",
        path: KeyPath::None,
        apply: |d, v| {
            let target = d.latency_target.get_or_insert_with(Default::default);
            target.target_ns = parse_time_ns(v, NS_PER_US)?;
            Ok(())
        },
    },
    KeyDef {
        name: "latency_window",
        aliases: &[],
        bare: false,
        meaning: "how long each queue depth of the latency_target search runs before it is \
                  judged (microseconds by default)",
        field: "latency_window",
        path: KeyPath::None,
        apply: |d, v| {
            let target = d.latency_target.get_or_insert_with(Default::default);
            // fio keeps the window in whole µs (its option is a time in µs).
            target.window_us = parse_time_ns(v, NS_PER_US)? / NS_PER_US;
            Ok(())
        },
    },
    KeyDef {
        name: "latency_percentile",
        aliases: &[],
        bare: false,
        meaning: "percentage of I/Os in a latency_window that must meet latency_target \
                  (default 100)",
        field: "latency_percentile",
        path: KeyPath::None,
        apply: |d, v| {
            let target = d.latency_target.get_or_insert_with(Default::default);
            target.percentile =
                crate::latency_numa::parse_latency_percentile(v).map_err(ApplyError::Invalid)?;
            Ok(())
        },
    },
    KeyDef {
        name: "latency_run",
        aliases: &[],
        bare: true,
        meaning: "keep adjusting the queue depth to latency_target for the whole job instead \
                  of stopping once the search settles",
        field: "latency_run",
        path: KeyPath::None,
        apply: |d, v| {
            let target = d.latency_target.get_or_insert_with(Default::default);
            target.run = parse_bool(v)?;
            Ok(())
        },
    },
];

impl JobDraft {
    /// The `latency_target` family.
    pub(super) fn build_latency(&self, spec: &mut JobSpec) {
        spec.latency_target = self.latency_target;
    }
}
