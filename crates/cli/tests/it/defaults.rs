//! Defaults that made real measurements wrong (issue 19), checked through the binary: the job
//! file's `ioengine` against `--target`, `blockalign` in the offsets actually issued, and presets
//! whose zones are larger than the target.

use crate::common;
use common::{run_in as run, stderr};

use std::path::Path;

#[test]
fn target_replaces_an_ioengine_storlab_has_no_engine_for() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("fio.job");
    std::fs::write(
        &job,
        "[j]\nioengine=windowsaio\nrw=randread\nnumber_ios=100\n",
    )
    .unwrap();
    let job = job.to_str().unwrap();

    let out = run(
        dir.path(),
        &["run", job, "--target", "sim:usb3-uas-ssd", "--no-db"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let notes: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.contains("windowsaio"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        notes,
        ["storlab: warning: job 'j': ioengine=windowsaio replaced by sim: storlab has no windowsaio engine and the target sim:usb3-uas-ssd decides the engine"],
        "{}",
        stderr(&out)
    );
}

/// An engine out of scope is refused with one line naming it on every target (issue 20): its
/// job is about something else (a network peer here), so `--target` does not stand in for it,
/// and it is named before the engine's own options (`hostname`) could be reported as unknown.
#[test]
fn an_out_of_scope_engine_is_refused_on_every_target_before_its_own_keys() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("fio.job");
    std::fs::write(
        &job,
        "[global]\nhostname=peer.example\nport=8765\n[j]\nioengine=rdma\nrw=randread\nnumber_ios=100\n",
    )
    .unwrap();
    let job = job.to_str().unwrap();
    for target in [&["--target", "sim:usb3-uas-ssd"][..], &[]] {
        let mut args = vec!["run", job, "--no-db"];
        args.extend_from_slice(target);
        let out = run(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!("storlab: error: {job}:5: ioengine=rdma: out of scope: storlab measures local files, block devices and its simulated stacks\n")
        );
    }
}

/// `sim.drive.read_modify_writes` of a 4 KiB random write job on a simulated SATA SSD.
fn read_modify_writes(dir: &Path, blockalign: &str) -> u64 {
    let out = run(
        dir,
        &[
            "run",
            "--rw=randwrite",
            "--bs=4k",
            &format!("--blockalign={blockalign}"),
            "--target",
            "sim:sata-ahci-ssd",
            "--number_ios=2000",
            "--no-db",
            "--output-format=json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["jobs"][0]["sim"]["drive"]["read_modify_writes"]
        .as_u64()
        .expect("the simulated drive reports its read-modify-writes")
}

#[test]
fn blockalign_512_reaches_the_simulated_drive_as_misaligned_writes() {
    let dir = tempfile::tempdir().unwrap();
    // The warning promises a read-modify-write for 512-byte alignment: the drive must see one.
    assert!(read_modify_writes(dir.path(), "512") > 1000);
    assert_eq!(read_modify_writes(dir.path(), "4k"), 0);
}

/// IOMeter Workstation's 32 GiB zone on a 32 GB (decimal) drive stopped the preset with "target
/// too small" after the full-span series; the zone now shrinks to the drive, with one note.
#[test]
fn a_preset_zone_larger_than_the_drive_shrinks_to_it_and_the_preset_runs_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        &[
            "run",
            "--preset",
            "iometer-workstation",
            "--target",
            "sim:usb3-uas-ssd",
            "--runtime=100ms",
            "--no-db",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let table = String::from_utf8_lossy(&out.stdout);
    let zone_row = table
        .lines()
        .find(|l| l.starts_with("zone-32g "))
        .unwrap_or_else(|| panic!("a zone-32g row: {table}"));
    let cells: Vec<&str> = zone_row.split_whitespace().skip(1).collect();
    assert_eq!(cells.len(), 6, "five depths and the rating: {zone_row}");
    assert!(
        cells
            .iter()
            .all(|c| c.parse::<f64>().is_ok_and(|v| v > 0.0)),
        "every depth measured: {zone_row}"
    );
    assert!(!table.contains("-0.0"), "{table}");
    let errors = stderr(&out);
    let notes: Vec<&str> = errors.lines().filter(|l| l.contains("shrinks")).collect();
    assert_eq!(
        notes,
        ["storlab: warning: iometer-workstation: series 'zone-32g' asks for 32 GiB but the target has 32000000000 bytes: its test area shrinks to 32000000000 bytes"]
    );
}
