//! Profiles: every shipped stack resolves, the embedded table matches `profiles/`, a user
//! directory can add and override, and bad files are rejected with one line naming file, key
//! and reason.

use std::path::Path;
use storlab_sim::{ProfileSet, SimError, Simulator};

fn workspace_profiles() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../profiles"))
}

#[test]
fn every_shipped_stack_resolves_and_builds() {
    let set = ProfileSet::embedded();
    set.validate_all().unwrap();
    let names: Vec<String> = set.stacks().into_iter().map(|(n, _)| n).collect();
    for required in [
        "usb2-bot-hdd",
        "usb3-bot-ssd",
        "usb3-uas-ssd",
        "sata-ahci-ssd",
        "sata-ide-ssd",
        "usb3-uas-ssd-gen1",
    ] {
        assert!(
            names.iter().any(|n| n == required),
            "missing stack {required}"
        );
    }
    for name in &names {
        Simulator::from_profiles(&set, name, 1).unwrap();
    }
}

#[test]
fn embedded_table_matches_profiles_dir() {
    fn walk(dir: &std::path::Path, prefix: &str, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                walk(&path, &format!("{prefix}{name}/"), out);
            } else if let Some(stem) = name.strip_suffix(".toml") {
                out.push(format!("{prefix}{stem}"));
            }
        }
    }
    let mut on_disk = Vec::new();
    for entry in std::fs::read_dir(workspace_profiles()).unwrap() {
        let dir = entry.unwrap().path();
        if dir.is_dir() {
            let category = dir.file_name().unwrap().to_string_lossy().into_owned();
            walk(&dir, &format!("{category}/"), &mut on_disk);
        }
    }
    on_disk.sort();
    let mut embedded: Vec<String> = storlab_sim::profiles::embedded::EMBEDDED_PROFILES
        .iter()
        .map(|(c, n, _)| format!("{c}/{n}"))
        .collect();
    embedded.sort();
    assert_eq!(
        embedded, on_disk,
        "run crates/sim/src/profiles/gen-embedded.sh"
    );
}

fn with(category: &str, name: &str, text: &str) -> ProfileSet {
    let mut set = ProfileSet::embedded();
    set.insert_text(
        category,
        name,
        &format!("test/{category}/{name}.toml"),
        text,
    )
    .unwrap();
    set
}

fn stack_using(part_key: &str, part: &str) -> String {
    let base = [
        ("host", "vendor-uas"),
        ("controller", "xhci-gen2-x1"),
        ("usb_link", "usb3-ss"),
        ("bridge", "uas-bridge"),
        ("sata_link", "sata-3g"),
        ("drive", "ssd-sata2"),
    ];
    let mut text = "description = \"test\"\n".to_string();
    for (k, v) in base {
        let v = if k == part_key { part } else { v };
        text += &format!("{k} = \"{v}\"\n");
    }
    text
}

fn assert_one_line_error(err: SimError, file: &str, key: &str, reason: &str) {
    let msg = err.to_string();
    assert!(!msg.contains('\n'), "error is not one line: {msg}");
    assert!(msg.contains(file), "no file in: {msg}");
    assert!(msg.contains(key), "no key `{key}` in: {msg}");
    assert!(msg.contains(reason), "no reason `{reason}` in: {msg}");
}

#[test]
fn unknown_key_is_rejected_with_file_and_line() {
    let set = with(
        "stacks",
        "typo",
        &format!("{}drvie = \"x\"\n", stack_using("", "")),
    );
    let err = set.resolve("typo").unwrap_err();
    assert_one_line_error(
        err,
        "test/stacks/typo.toml",
        "line 8",
        "unknown field `drvie`",
    );
}

#[test]
fn missing_part_is_rejected() {
    let set = with("stacks", "nobridge", "description = \"x\"\nhost = \"vendor-uas\"\ncontroller = \"xhci-gen2-x1\"\nusb_link = \"usb3-ss\"\nsata_link = \"sata-3g\"\ndrive = \"ssd-sata2\"\n");
    assert_one_line_error(
        set.resolve("nobridge").unwrap_err(),
        "test/stacks/nobridge.toml",
        "bridge",
        "missing",
    );
    let set = with("stacks", "ghost", &stack_using("drive", "no-such-drive"));
    assert_one_line_error(
        set.resolve("ghost").unwrap_err(),
        "test/stacks/ghost.toml",
        "drive",
        "no drives profile named `no-such-drive`",
    );
}

#[test]
fn impossible_values_are_rejected() {
    let usb3 = std::fs::read_to_string(workspace_profiles().join("links/usb3-ss.toml")).unwrap();
    let zero = usb3.replace("signal_rate_bps = 5000000000", "signal_rate_bps = 0");
    let set = with("links", "zero", &zero);
    let set = {
        let mut s = set;
        s.insert_text(
            "stacks",
            "s",
            "test/stacks/s.toml",
            &stack_using("usb_link", "zero"),
        )
        .unwrap();
        s
    };
    assert_one_line_error(
        set.resolve("s").unwrap_err(),
        "test/links/zero.toml",
        "signal_rate_bps",
        "greater than zero",
    );

    let host = std::fs::read_to_string(workspace_profiles().join("hosts/vendor-uas.toml")).unwrap();
    let mut set = with(
        "hosts",
        "h",
        &host.replace(
            "max_outstanding_commands = 32",
            "max_outstanding_commands = 70000",
        ),
    );
    set.insert_text(
        "stacks",
        "s",
        "test/stacks/s.toml",
        &stack_using("host", "h"),
    )
    .unwrap();
    assert_one_line_error(
        set.resolve("s").unwrap_err(),
        "test/hosts/h.toml",
        "max_outstanding_commands",
        "1..=65535",
    );

    let bridge =
        std::fs::read_to_string(workspace_profiles().join("bridges/uas-bridge.toml")).unwrap();
    let mut set = with(
        "bridges",
        "b",
        &bridge.replace("ncq_depth = 32", "ncq_depth = 33"),
    );
    set.insert_text(
        "stacks",
        "s",
        "test/stacks/s.toml",
        &stack_using("bridge", "b"),
    )
    .unwrap();
    assert_one_line_error(
        set.resolve("s").unwrap_err(),
        "test/bridges/b.toml",
        "ncq_depth",
        "at most 32 tags",
    );

    let mut set = with(
        "bridges",
        "b",
        &bridge.replace("max_uas_tags = 32", "max_uas_tags = 65536"),
    );
    set.insert_text(
        "stacks",
        "s",
        "test/stacks/s.toml",
        &stack_using("bridge", "b"),
    )
    .unwrap();
    assert_one_line_error(
        set.resolve("s").unwrap_err(),
        "test/bridges/b.toml",
        "max_uas_tags",
        "16-bit",
    );
}

#[test]
fn stack_overrides_change_one_key_of_a_shared_part() {
    let gen1 = format!(
        "{}\n[overrides.controller.pcie]\ngeneration = 1\n",
        stack_using("", "")
    );
    let set = with("stacks", "slot-gen1", &gen1);
    let spec = set.resolve("slot-gen1").unwrap();
    assert_eq!(spec.controller.pcie.generation, 1);
    let shipped = set.resolve("usb3-uas-ssd").unwrap();
    assert_eq!(shipped.controller.pcie.generation, 2);
    // Everything else of the part is shared.
    assert_eq!(
        spec.controller.per_transfer_ns,
        shipped.controller.per_transfer_ns
    );
}

#[test]
fn bad_stack_overrides_are_rejected_naming_the_stack_and_role() {
    let unknown_role = format!("{}\n[overrides.cable]\nlength = 1\n", stack_using("", ""));
    let err = with("stacks", "bad", &unknown_role)
        .resolve("bad")
        .unwrap_err();
    assert_one_line_error(
        err,
        "test/stacks/bad.toml",
        "overrides.cable",
        "unknown part",
    );

    let unknown_key = format!(
        "{}\n[overrides.controller]\nstreams = true\n",
        stack_using("", "")
    );
    let err = with("stacks", "bad", &unknown_key)
        .resolve("bad")
        .unwrap_err();
    assert_one_line_error(
        err,
        "test/stacks/bad.toml",
        "overrides.controller",
        "streams",
    );

    let impossible = format!(
        "{}\n[overrides.controller.pcie]\ngeneration = 0\n",
        stack_using("", "")
    );
    assert!(with("stacks", "bad", &impossible).resolve("bad").is_err());
}

#[test]
fn published_stacks_live_in_lab_folders() {
    let set = ProfileSet::embedded();
    for name in [
        "lucidport/x25e-uas-gen2",
        "hwfr2013/asm1042-win7-bot",
        "hwfr2013/intel-win8-uas",
        "xbit2010/vantec-usb3",
        "xbit2010/vantec-usb2",
        "xbit2010/sata300",
    ] {
        set.resolve(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
