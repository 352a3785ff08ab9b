//! Snapshot of a fixed-seed simulation table: MB/s, bottleneck and transport of three workloads
//! on every shipped stack. Any change to the model or a shipped profile shows up here for review
//! (`cargo insta review`), so numbers never move unnoticed.

use storlab_sim::workload::ClosedLoop;
use storlab_sim::{Op, ProfileSet, Simulator};

#[test]
fn fixed_seed_table_of_every_shipped_stack() {
    let profiles = ProfileSet::embedded();
    let workloads: [(&str, Op, u32, u32, bool, u64); 3] = [
        ("read 1M QD4 seq", Op::Read, 1 << 20, 4, false, 40),
        ("read 4K QD32 rand", Op::Read, 4096, 32, true, 1500),
        ("write 4K QD32 rand", Op::Write, 4096, 32, true, 1500),
    ];
    let mut table = String::new();
    for (stack, _) in profiles.stacks() {
        for (name, op, block_bytes, queue_depth, random, ios) in workloads {
            let mut sim = Simulator::from_profiles(&profiles, &stack, 11).unwrap();
            sim.setup_slots(queue_depth, block_bytes as usize).unwrap();
            let r = ClosedLoop {
                op,
                block_bytes,
                queue_depth,
                random,
                region_bytes: 4 << 30,
                ios,
                seed: 11,
            }
            .run(&mut sim);
            let report = sim.report();
            table += &format!(
                "{stack:24} {name:19} {:7.1} MB/s  bottleneck {:16} {:5.1}%  transport {}\n",
                r.mb_per_s(),
                report.bottleneck,
                report.bottleneck_utilisation * 100.0,
                report.transport
            );
        }
    }
    insta::assert_snapshot!(table);
}
