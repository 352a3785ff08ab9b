//! Simulated usbmon captures are in time order, as usbmon's own are (issue 35: with several
//! commands in flight the recorder used to write a status arrival, known when the command was
//! issued, before URBs that happen earlier, and Wireshark's `frame.time_delta` went negative).
//! Every shipped USB stack runs 4 KiB random reads at queue depth 32 with `--pcap`; no record
//! may be earlier than the one before it.

use crate::common;
use storlab_wire::pcap::PcapReader;

#[test]
fn every_shipped_stack_writes_its_pcap_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let listing = common::stdout(&common::run_in(dir.path(), &["stacks"]));
    let mut checked = 0;
    let mut failures = Vec::new();
    for stack in listing
        .lines()
        .filter_map(|line| line.split_whitespace().next())
    {
        let pcap = dir.path().join("session.pcap");
        let _ = std::fs::remove_file(&pcap);
        let target = format!("sim:{stack}");
        let args = [
            "run",
            "--target",
            &target,
            "--rw=randread",
            "--bs=4k",
            "--size=4m",
            "--number_ios=512",
            "--ioengine=libaio",
            "--iodepth=32",
            "--pcap",
            "session.pcap",
        ];
        let out = common::run_in(dir.path(), &args);
        if !out.status.success() {
            // SATA stacks have no USB session to record; say so, and move on.
            assert!(
                common::stderr(&out).contains("USB session"),
                "storlab {}: {}",
                args.join(" "),
                common::stderr(&out)
            );
            continue;
        }
        let bytes = std::fs::read(&pcap).unwrap();
        let reader = PcapReader::new(&bytes).unwrap();
        let mut last = (i64::MIN, i32::MIN);
        let mut out_of_order = 0;
        for record in reader.records() {
            let usbmon = record.unwrap().usbmon;
            let at = (usbmon.ts_sec, usbmon.ts_usec);
            if at < last {
                out_of_order += 1;
            }
            last = last.max(at);
        }
        if out_of_order > 0 {
            failures.push(format!(
                "{stack}: {out_of_order} records out of time order (storlab {})",
                args.join(" ")
            ));
        }
        checked += 1;
    }
    assert!(checked > 10, "only {checked} USB stacks were checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
