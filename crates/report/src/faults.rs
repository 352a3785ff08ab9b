//! What the simulated stack met and recovered from, in words: the simulator's fault counters
//! (`sim.faults` in the JSON) as one line for the table, `show` and the HTML report, so a
//! dropped command, a reset or a CRC retry behind a figure is never seen in the JSON alone.

use crate::model::JobReport;

/// The counters of `sim.faults`, in the order a reader follows a recovery, with their names
/// for people. A counter missing here is still listed, under its JSON name.
const COUNTER_NAMES: [(&str, &str); 22] = [
    ("injected", "faults injected"),
    ("usb_crc_retries", "USB CRC retries"),
    ("retried", "commands retried"),
    ("reported", "failed I/Os reported"),
    ("request_senses", "REQUEST SENSEs"),
    ("read_log_exts", "READ LOG EXTs"),
    ("bot_resets", "BOT reset recoveries"),
    ("uas_aborts", "UAS ABORT TASKs"),
    ("uas_lu_resets", "UAS logical unit resets"),
    ("uas_it_nexus_resets", "UAS I_T nexus resets"),
    ("uas_bot_fallbacks", "UAS-to-BOT fallbacks"),
    ("device_resets", "USB device resets"),
    ("bridge_resets", "bridge resets"),
    ("disconnects", "disconnects"),
    ("devices_removed", "devices removed"),
    ("comresets", "SATA COMRESETs"),
    ("sata_aborted", "SATA commands aborted and resent"),
    ("power_losses", "power losses"),
    ("lost_writes", "cached writes lost"),
    ("lost_bytes", "bytes lost"),
    ("not_ready", "NOT READY answers"),
    ("unit_attentions", "UNIT ATTENTIONs"),
];

/// The job's non-zero fault counters as `3 USB CRC retries, 1 bridge resets`-style text
/// (`name count` pairs), or `None` when the stack met no fault (or the job is not simulated).
pub fn fault_summary(job: &JobReport) -> Option<String> {
    let counters = job.notes.sim.as_ref()?.get("faults")?.as_object()?;
    let name_of = |key: &str| {
        COUNTER_NAMES
            .iter()
            .find(|(json, _)| *json == key)
            .map_or(key.to_string(), |(_, name)| name.to_string())
    };
    let order = |key: &str| COUNTER_NAMES.iter().position(|(json, _)| *json == key);
    let mut seen: Vec<(Option<usize>, String, u64)> = counters
        .iter()
        .filter_map(|(key, value)| Some((order(key), name_of(key), value.as_u64()?)))
        .filter(|(_, _, count)| *count > 0)
        .collect();
    // Known counters in reading order, then any newer ones by name.
    seen.sort_by(|a, b| (a.0.is_none(), a.0, &a.1).cmp(&(b.0.is_none(), b.0, &b.1)));
    let parts: Vec<String> = seen
        .into_iter()
        .map(|(_, name, count)| format!("{name} {count}"))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}
