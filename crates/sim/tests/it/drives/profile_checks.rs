//! Impossible drive profiles are refused, naming the file and the key.

use super::*;

#[test]
fn impossible_drive_profiles_are_rejected_naming_file_and_key() {
    for (text, key) in impossible_ssd_profiles()
        .into_iter()
        .chain(impossible_hdd_profiles())
    {
        assert_rejected_naming_file_and_key(&text, key);
    }
}

/// SSD profiles (text) no drive could have, each with the key its error must name.
fn impossible_ssd_profiles() -> Vec<(String, &'static str)> {
    vec![
        (
            SMALL_SSD.replace("page_bytes = 4096", "page_bytes = 3000"),
            "page_bytes",
        ),
        (
            SMALL_SSD.replace(
                "user_capacity_bytes = 240001024",
                "user_capacity_bytes = 268435456",
            ),
            "user_capacity_bytes",
        ),
        (
            SMALL_SSD.replace(
                "gc_free_blocks_threshold = 3",
                "gc_free_blocks_threshold = 1",
            ),
            "gc_free_blocks_threshold",
        ),
        (format!("{SMALL_SSD}log_blocks = 4\n"), "log_blocks"),
        // The retired per-command latency key says what replaced it.
        (
            SMALL_SSD
                .replace("command_cpu_ns = 30000", "command_ns = 30000")
                .replace("controller_cores = 1\n", ""),
            "command_ns: no longer exists: the per-command firmware time is now `command_cpu_ns`",
        ),
        (
            SMALL_SSD.replace("command_cpu_ns = 30000\n", ""),
            "command_cpu_ns: required",
        ),
        (
            SMALL_SSD.replace("controller_cores = 1", "controller_cores = 0"),
            "controller_cores",
        ),
        (
            format!("{SMALL_SSD}mapping = \"log_block\"\nlog_blocks = 6\n"),
            "log_blocks",
        ),
        (
            format!("{SMALL_SSD}mapping = \"log_block\"\nlog_blocks = 400\n"),
            "log_blocks",
        ),
        (
            format!("{SMALL_SSD}mapping = \"log_block\"\nlog_blocks = 4\ncompression = true\n"),
            "compression",
        ),
    ]
}

/// HDD profiles (text) no drive could have, each with the key its error must name.
fn impossible_hdd_profiles() -> Vec<(String, &'static str)> {
    vec![
        (
            hdd_toml(HddProfile {
                average_seek_ns: 30_000_000,
                ..hdd_7200()
            }),
            "average_seek_ns",
        ),
        (
            hdd_toml(HddProfile {
                rpo_candidates: Some(0),
                ..hdd_7200()
            }),
            "rpo_candidates",
        ),
        (
            hdd_toml(HddProfile {
                cache_bytes: Some(16 << 20),
                ..hdd_7200()
            }),
            "cache_bytes",
        ),
        (
            hdd_toml(HddProfile {
                write_head_switch_ns: Some(500_000),
                ..hdd_7200()
            }),
            "write_head_switch_ns",
        ),
    ]
}

fn hdd_toml(profile: HddProfile) -> String {
    toml::to_string(&storlab_sim::profile::DriveProfile::Hdd(profile)).unwrap()
}

/// A stack on the drive profile `text` fails to resolve with one line that names the drive's
/// file and `key`.
fn assert_rejected_naming_file_and_key(text: &str, key: &str) {
    let mut set = ProfileSet::embedded();
    set.insert_text("drives", "bad", "test:drives/bad.toml", text)
        .unwrap();
    set.insert_text(
        "stacks",
        "bad-stack",
        "test:stacks/bad-stack.toml",
        "description = \"x\"\nhost = \"ahci\"\ncontroller = \"ahci-chipset\"\n\
         sata_link = \"sata-3g\"\ndrive = \"bad\"\n",
    )
    .unwrap();
    let err = set.resolve("bad-stack").unwrap_err().to_string();
    assert!(
        err.starts_with("test:drives/bad.toml: ") && err.contains(key),
        "{key}: {err}"
    );
    assert!(!err.contains('\n'), "one line: {err}");
}
