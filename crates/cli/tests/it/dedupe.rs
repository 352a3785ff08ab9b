//! fio's dedupe write buffers (`dedupe_percentage`, `dedupe_mode`, `dedupe_working_set_percentage`,
//! `dedupe_global`): files byte for byte as fio 3.33 writes them (when fio is installed), the
//! share of repeated 4 KiB blocks asked for (always), the same bytes across a simulated drive
//! and back, verify unaffected, and bad settings refused in one line.

use crate::common::{run_in, stderr};
use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use storlab_wire::pcap::{EventType, PcapReader, TransferType};

/// The block a deduplicating drive compares (fio's `t/fio-dedupe -b 4096`).
const BLOCK_BYTES: usize = 4096;
/// usbmon keeps this much of each transfer's data (storlab's captures as the kernel's).
const CAPTURED_BYTES: usize = 512;

fn fio_present() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// The share of `data`'s 4 KiB blocks that repeat an earlier one.
fn repeated_share(data: &[u8]) -> f64 {
    let blocks: Vec<&[u8]> = data.chunks(BLOCK_BYTES).collect();
    let unique: HashSet<&[u8]> = blocks.iter().copied().collect();
    1.0 - unique.len() as f64 / blocks.len() as f64
}

/// One job body (`@F@` stands for the data files' stem), the files it writes (suffixes of the
/// stem), and the repeated share each file should show with the tolerance the share's binomial
/// spread gives (at least 3.5 standard deviations over the file's blocks; the draws are seeded,
/// so a run is the same every time).
struct Case {
    name: &'static str,
    body: &'static str,
    files: &'static [&'static str],
    repeated_share: f64,
    tolerance: f64,
}

const CASES: &[Case] = &[
    Case {
        name: "repeat",
        body: "[j]\nioengine=psync\nrw=write\nbs=4k\nsize=2m\ndedupe_percentage=30\n\
               filename=@F@.d\n",
        files: &["d"],
        repeated_share: 0.30,
        tolerance: 0.05,
    },
    Case {
        name: "working_set",
        body: "[j]\nioengine=psync\nrw=write\nbs=4k\nsize=2m\ndedupe_mode=working_set\n\
               dedupe_percentage=40\ndedupe_working_set_percentage=20\nfilename=@F@.d\n",
        files: &["d"],
        repeated_share: 0.40,
        tolerance: 0.05,
    },
    // fio's own dedupe-global example, smaller: each file repeats about a third of its blocks
    // (half the repeats land in the other job's share of the working set), and half of every
    // 512-byte piece is zeros.
    Case {
        name: "global",
        body: "[global]\nioengine=libaio\niodepth=16\nsize=2m\nbs=4k\nrw=write\n\
               dedupe_mode=working_set\ndedupe_global=1\ndedupe_percentage=50\n\
               buffer_compress_percentage=50\ndedupe_working_set_percentage=50\n\
               [a]\nfilename=@F@.a\n[b]\nfilename=@F@.b\n",
        files: &["a", "b"],
        repeated_share: 0.33,
        tolerance: 0.06,
    },
    Case {
        name: "random_sizes",
        body: "[j]\nioengine=psync\nrw=randwrite\nbsrange=4k-16k\nsize=4m\nrandseed=77\n\
               dedupe_percentage=25\nbuffer_compress_percentage=30\n\
               buffer_pattern=0xdeadbeef\nfilename=@F@.d\n",
        files: &["d"],
        // A repeated write of up to 16 KiB repeats all of its blocks.
        repeated_share: 0.25,
        tolerance: 0.06,
    },
    Case {
        name: "clones",
        body: "[j]\nioengine=psync\nrw=write\nbs=4k\nsize=1m\noffset_increment=1m\nnumjobs=3\n\
               dedupe_mode=working_set\ndedupe_global=1\ndedupe_percentage=30\n\
               dedupe_working_set_percentage=40\nfilename=@F@.d\n",
        files: &["d"],
        repeated_share: 0.30,
        tolerance: 0.06,
    },
];

fn write_job(dir: &Path, stem: &str, body: &str) -> String {
    let name = format!("{stem}.fio");
    std::fs::write(dir.join(&name), body.replace("@F@", stem)).unwrap();
    name
}

#[test]
fn dedupe_files_repeat_the_asked_share_and_are_fios_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let fio = fio_present();
    for case in CASES {
        let storlab_stem = format!("{}-storlab", case.name);
        let job = write_job(dir.path(), &storlab_stem, case.body);
        let out = run_in(dir.path(), &["run", job.as_str()]);
        assert!(out.status.success(), "{}: {}", case.name, stderr(&out));
        let fio_stem = format!("{}-fio", case.name);
        if fio {
            let job = write_job(dir.path(), &fio_stem, case.body);
            let out = Command::new("fio")
                .current_dir(dir.path())
                .args(["--output=/dev/null", job.as_str()])
                .output()
                .unwrap();
            assert!(out.status.success(), "fio {}: {}", case.name, stderr(&out));
        }
        for suffix in case.files {
            let ours = std::fs::read(dir.path().join(format!("{storlab_stem}.{suffix}"))).unwrap();
            let share = repeated_share(&ours);
            assert!(
                (share - case.repeated_share).abs() <= case.tolerance,
                "{} .{suffix}: {share:.3} of the blocks repeat, wanted {} ± {}",
                case.name,
                case.repeated_share,
                case.tolerance
            );
            if fio {
                let theirs =
                    std::fs::read(dir.path().join(format!("{fio_stem}.{suffix}"))).unwrap();
                assert!(
                    ours == theirs,
                    "{} .{suffix}: storlab's file differs from fio's (repeated shares {share:.4} \
                     and {:.4})",
                    case.name,
                    repeated_share(&theirs)
                );
            }
        }
        if case.name == "global" {
            // Half of every piece is zeros, as buffer_compress_percentage=50 asks.
            let data = std::fs::read(dir.path().join(format!("{storlab_stem}.a"))).unwrap();
            let zeros = data.iter().filter(|b| **b == 0).count() as f64 / data.len() as f64;
            assert!((0.49..0.52).contains(&zeros), "zero share {zeros}");
            // Across both files more blocks repeat than within either: the jobs share blocks.
            let mut both = data;
            both.extend(std::fs::read(dir.path().join(format!("{storlab_stem}.b"))).unwrap());
            assert!(repeated_share(&both) > case.repeated_share + case.tolerance);
        }
    }
}

/// The first captured bytes of each 4 KiB data transfer of a usbmon capture, OUT (what the host
/// wrote) and IN (what the drive returned), in capture order.
fn transfer_heads(pcap: &[u8]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let reader = PcapReader::new(pcap).unwrap();
    let (mut written, mut read) = (Vec::new(), Vec::new());
    for record in reader.records() {
        let record = record.unwrap();
        let usbmon = record.usbmon;
        if usbmon.transfer != TransferType::Bulk || usbmon.urb_len as usize != BLOCK_BYTES {
            continue;
        }
        let head = record.data.to_vec();
        match (usbmon.endpoint & 0x80 != 0, usbmon.event) {
            (false, EventType::Submission) if !head.is_empty() => written.push(head),
            (true, EventType::Completion) if !head.is_empty() => read.push(head),
            _ => {}
        }
    }
    (written, read)
}

#[test]
fn dedupe_buffers_cross_a_simulated_drive_and_come_back() {
    let dir = tempfile::tempdir().unwrap();
    let body = "[global]\nioengine=psync\nbs=4k\nsize=1m\ndedupe_percentage=30\n\
                [w]\nrw=write\n[r]\nstonewall\nrw=read\n";
    std::fs::write(dir.path().join("sim.fio"), body).unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "sim.fio",
            "--target",
            "sim:usb3-uas-ssd",
            "--pcap",
            "sim.pcap",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (written, read) = transfer_heads(&std::fs::read(dir.path().join("sim.pcap")).unwrap());
    assert_eq!(written.len(), 256, "one 4 KiB transfer per write");
    assert_eq!(
        read, written,
        "the drive returns what was written, repeats included"
    );
    // The same job on a file writes the same buffers: the heads of its blocks.
    std::fs::write(
        dir.path().join("file.fio"),
        "[w]\nioengine=psync\nbs=4k\nsize=1m\ndedupe_percentage=30\nrw=write\nfilename=f.d\n",
    )
    .unwrap();
    let out = run_in(dir.path(), &["run", "file.fio"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let file = std::fs::read(dir.path().join("f.d")).unwrap();
    let heads: Vec<Vec<u8>> = file
        .chunks(BLOCK_BYTES)
        .map(|block| block[..CAPTURED_BYTES].to_vec())
        .collect();
    assert_eq!(written, heads);
    // A repeated block repeats its head too (each 512-byte piece has its own seed).
    let share = 1.0 - written.iter().collect::<HashSet<_>>().len() as f64 / written.len() as f64;
    assert!((share - 0.30).abs() < 0.07, "{share}");
}

/// A job that reads and writes draws fio's repeat share, and says its bytes are not fio's (fio
/// lays the file out with the buffer stream first).
#[test]
fn a_reading_dedupe_job_repeats_the_share_and_says_its_bytes_differ() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--name=rw",
            "--rw=randrw",
            "--bs=4k",
            "--size=2m",
            "--filename=rw.d",
            "--dedupe_percentage=35",
        ],
    );
    let text = stderr(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("a dedupe job that also reads"), "{text}");
    // Only the written blocks carry dedupe buffers; the layout's blocks are all unique. About
    // half of the blocks are written (randrw at 50%, each block once): 0.35 of those repeat.
    let share = repeated_share(&std::fs::read(dir.path().join("rw.d")).unwrap());
    assert!((0.10..0.25).contains(&share), "{share}");
}

#[test]
fn verify_checks_a_dedupe_job_and_says_dedupe_has_no_effect() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "run",
            "--name=v",
            "--rw=write",
            "--size=1m",
            "--filename=v.d",
            "--dedupe_percentage=60",
            "--verify=md5",
        ],
    );
    let text = stderr(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("dedupe_percentage has no effect with verify"),
        "{text}"
    );
}

#[test]
fn bad_dedupe_settings_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for (args, expected) in [
        (
            &["--size=1m", "--dedupe_mode=sometimes"][..],
            "--dedupe_mode=sometimes: use repeat or working_set",
        ),
        (
            &["--dedupe_percentage=20", "--dedupe_mode=working_set"][..],
            "needs size in bytes",
        ),
        (
            &[
                "--size=1m",
                "--dedupe_percentage=60",
                "--dedupe_mode=working_set",
                "--dedupe_working_set_percentage=50",
            ][..],
            "need more than 100% of size",
        ),
        (
            &["--size=1m", "--dedupe_percentage=101"][..],
            "--dedupe_percentage=101",
        ),
    ] {
        let mut all = vec!["run", "--name=x", "--rw=write", "--filename=bad.d"];
        all.extend(args);
        let out = run_in(dir.path(), &all);
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains(expected), "{args:?}: {text}");
        assert_eq!(text.trim().lines().count(), 1, "{text}");
        assert!(!dir.path().join("bad.d").exists(), "nothing written");
    }
}
