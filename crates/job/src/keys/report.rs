//! fio's reporting keys whose default is the report storlab prints (fio's layout, units and percentiles): the default value is accepted, any other refused in one line.

use super::{ApplyError, KeyDef};
use crate::paths::KeyPath;

/// A key whose fio default storlab's report already is: `accepted` values pass, others are
/// refused with `what` storlab prints.
fn default_only(value: &str, accepted: &[&str], what: &str) -> Result<(), ApplyError> {
    if accepted.contains(&value) {
        Ok(())
    } else {
        Err(ApplyError::Unsupported(format!(
            "storlab's report is fio's default here: {what}; accepted: {}",
            accepted.join(", ")
        )))
    }
}

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "unified_rw_reporting",
        aliases: &[],
        bare: false,
        meaning: "fio: none (default, accepted): reads, writes and trims reported apart; mixed or both refused",
        field: "unified_rw_reporting",
        path: KeyPath::None,
        apply: |_, v| default_only(v, &["none", "0"], "each direction reported apart"),
    },
    KeyDef {
        name: "unit_base",
        aliases: &[],
        bare: false,
        meaning: "fio: 0 or 8 (bytes, fio's default) accepted; 1 (bits) refused",
        field: "unit_base",
        path: KeyPath::None,
        apply: |_, v| default_only(v, &["0", "8"], "rates in bytes"),
    },
    KeyDef {
        name: "clat_percentiles",
        aliases: &[],
        bare: true,
        meaning: "fio: 1 (default, accepted): completion latency percentiles reported",
        field: "clat_percentiles",
        path: KeyPath::None,
        apply: |_, v| default_only(v, &["1", "true"], "completion latency percentiles"),
    },
    KeyDef {
        name: "lat_percentiles",
        aliases: &[],
        bare: true,
        meaning: "fio: 0 (default, accepted): no total latency percentiles",
        field: "lat_percentiles",
        path: KeyPath::None,
        apply: |_, v| default_only(v, &["0", "false"], "no total latency percentiles"),
    },
    KeyDef {
        name: "slat_percentiles",
        aliases: &[],
        bare: true,
        meaning: "fio: 0 (default, accepted): no submission latency percentiles",
        field: "slat_percentiles",
        path: KeyPath::None,
        apply: |_, v| default_only(v, &["0", "false"], "no submission latency percentiles"),
    },
    KeyDef {
        name: "significant_figures",
        aliases: &[],
        bare: false,
        meaning: "fio: 4 (default, accepted): the human report's significant figures",
        field: "significant_figures",
        path: KeyPath::None,
        apply: |_, v| default_only(v, &["4"], "four significant figures"),
    },
];
