//! The key table as one slice, gathered from the groups' tables in the order `storlab run
//! --help` and the docs list the keys, and key lookup (with a suggestion for a typo).

use super::{
    block_size, buffers, depth, description, engine, errors, io_size, io_type, latency, logs,
    random, rate, replay, report, steady_state, sync, target, threads, time, verify, KeyDef,
};

/// Every key of the job language, in the order the docs list them.
pub static KEYS: &[KeyDef] = &IN_DOC_ORDER;

/// The groups' tables; each row is in exactly one of them.
const GROUPS: [&[KeyDef]; 20] = [
    description::GROUP_KEYS,
    report::GROUP_KEYS,
    time::GROUP_KEYS,
    target::GROUP_KEYS,
    io_type::GROUP_KEYS,
    random::GROUP_KEYS,
    sync::GROUP_KEYS,
    block_size::GROUP_KEYS,
    buffers::GROUP_KEYS,
    io_size::GROUP_KEYS,
    engine::GROUP_KEYS,
    depth::GROUP_KEYS,
    rate::GROUP_KEYS,
    latency::GROUP_KEYS,
    replay::GROUP_KEYS,
    threads::GROUP_KEYS,
    verify::GROUP_KEYS,
    steady_state::GROUP_KEYS,
    logs::GROUP_KEYS,
    errors::GROUP_KEYS,
];

/// The order `storlab run --help`, its man page and the docs list the keys in: the order keys
/// were added to storlab, which users of its help have seen since. A new key goes in its group's
/// file and here; the build fails if one is missing here or named twice.
const DOC_ORDER: [&str; 177] = [
    "name",
    "description",
    "ioengine",
    "filename",
    "directory",
    "direct",
    "invalidate",
    "fadvise_hint",
    "buffered",
    "rw",
    "rwmixread",
    "rwmixwrite",
    "percentage_random",
    "norandommap",
    "bs",
    "bsrange",
    "bssplit",
    "blockalign",
    "hipri",
    "nowait",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "nonvectored",
    "cmdprio_class",
    "cmdprio",
    "sqthread_poll_cpu",
    "cmdprio_percentage",
    "cmdprio_bssplit",
    "userspace_reap",
    "iodepth",
    "iodepth_batch_submit",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "numjobs",
    "offset",
    "offset_increment",
    "size",
    "number_ios",
    "io_size",
    "loops",
    "runtime",
    "write_iolog",
    "read_iolog",
    "replay_redirect",
    "replay_skip",
    "replay_no_stall",
    "replay_time_scale",
    "write_bw_log",
    "write_iops_log",
    "write_lat_log",
    "write_hist_log",
    "log_avg_msec",
    "log_hist_msec",
    "log_hist_coarseness",
    "log_max_value",
    "log_offset",
    "log_prio",
    "per_job_logs",
    "log_entries",
    "log_compression",
    "log_store_compressed",
    "log_unix_epoch",
    "fsync",
    "fdatasync",
    "end_fsync",
    "fsync_on_close",
    "sync",
    "thinktime",
    "thinktime_spin",
    "thinktime_blocks",
    "thinktime_blocks_type",
    "thinktime_iotime",
    "random_distribution",
    "random_generator",
    "zonemode",
    "zonesize",
    "zonerange",
    "zoneskip",
    "time_based",
    "ramp_time",
    "rate",
    "rate_iops",
    "data_pattern",
    "buffer_compress_percentage",
    "zero_buffers",
    "refill_buffers",
    "dedupe_percentage",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "dedupe_global",
    "seed",
    "randrepeat",
    "verify",
    "do_verify",
    "verify_only",
    "verify_fatal",
    "verify_dump",
    "verify_interval",
    "verify_offset",
    "verify_backlog",
    "verify_backlog_batch",
    "verify_async",
    "verify_async_cpus",
    "verify_state_save",
    "verify_state_load",
    "experimental_verify",
    "continue_on_error",
    "ignore_error",
    "error_dump",
    "fill_device",
    "create_serialize",
    "stonewall",
    "new_group",
    "startdelay",
    "wait_for",
    "exitall",
    "exit_what",
    "exitall_on_error",
    "prio",
    "prioclass",
    "group_reporting",
    "allow_file_create",
    "create_on_open",
    "steadystate",
    "steadystate_duration",
    "steadystate_ramp_time",
    "unlink",
    "filename_format",
    "filesize",
    "nrfiles",
    "openfiles",
    "file_service_type",
    "buffer_pattern",
    "verify_pattern",
    "rate_min",
    "rate_iops_min",
    "rate_process",
    "io_submit_mode",
    "serialize_overlap",
    "gtod_reduce",
    "clocksource",
    "fallocate",
    "flow",
    "flow_id",
    "flow_sleep",
    "cpus_allowed",
    "cpus_allowed_policy",
    "numa_cpu_nodes",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "numa_mem_policy",
    "thread",
    "kb_base",
    "scramble_buffers",
    "rw_sequencer",
    "allrandrepeat",
    "softrandommap",
    "offset_align",
    "bs_is_seq_rand",
    "bs_unaligned",
    "overwrite",
    "create_fsync",
    "unified_rw_reporting",
    "unit_base",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "significant_figures",
    "percentile_list",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
];

/// [`GROUPS`]' rows in [`DOC_ORDER`].
const IN_DOC_ORDER: [KeyDef; DOC_ORDER.len()] = in_order(&GROUPS, &DOC_ORDER);

/// The rows of `groups` in the order of `names`, checked while compiling: every name has exactly
/// one row, and every row a name.
const fn in_order<const N: usize>(groups: &[&[KeyDef]], names: &[&str; N]) -> [KeyDef; N] {
    let mut rows = [groups[0][0]; N];
    let mut rows_in_groups = 0;
    let mut group = 0;
    while group < groups.len() {
        rows_in_groups += groups[group].len();
        group += 1;
    }
    assert!(
        rows_in_groups == N,
        "a key is in a group's table but not in DOC_ORDER"
    );
    let mut index = 0;
    while index < N {
        rows[index] = row_named(groups, names[index]);
        index += 1;
    }
    rows
}

/// The one row of `groups` named `name`.
const fn row_named(groups: &[&[KeyDef]], name: &str) -> KeyDef {
    let mut found = None;
    let mut group = 0;
    while group < groups.len() {
        let mut row = 0;
        while row < groups[group].len() {
            if same_name(groups[group][row].name, name) {
                assert!(
                    found.is_none(),
                    "a key of DOC_ORDER is in two groups' tables"
                );
                found = Some(groups[group][row]);
            }
            row += 1;
        }
        group += 1;
    }
    match found {
        Some(row) => row,
        None => panic!("a key of DOC_ORDER is in no group's table"),
    }
}

/// The key definition for `name` or one of its aliases (case-insensitive, as fio).
pub fn find_key(name: &str) -> Option<&'static KeyDef> {
    let lower = name.to_ascii_lowercase();
    KEYS.iter()
        .find(|k| k.name == lower || k.aliases.contains(&lower.as_str()))
}

/// A known key within two edits of `name`, to suggest for a typo.
pub(super) fn suggest_key(name: &str) -> Option<&'static str> {
    const EDITS_MAX: usize = 2;
    let lower = name.to_ascii_lowercase();
    KEYS.iter()
        .flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied()))
        .map(|candidate| (edit_distance(&lower, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= EDITS_MAX && distance * 2 < candidate.len())
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance between two short ASCII strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

/// `a == b`, in a `const fn`.
const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{suggest_key, KEYS};

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for key in KEYS {
            for name in std::iter::once(key.name).chain(key.aliases.iter().copied()) {
                assert!(seen.insert(name), "duplicate key {name}");
                assert_eq!(name, name.to_ascii_lowercase());
            }
        }
    }

    #[test]
    fn typos_get_a_suggestion() {
        assert_eq!(suggest_key("iodeph"), Some("iodepth"));
        assert_eq!(suggest_key("bsplit"), Some("bssplit"));
        assert_eq!(suggest_key("foo"), None);
        assert_eq!(suggest_key("xyz"), None);
    }
}
