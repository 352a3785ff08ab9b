//! Prints MB/s of a few workloads on every shipped stack (a quick look at the model's shape).
use storlab_sim::workload::ClosedLoop;
use storlab_sim::{Op, ProfileSet, Simulator};

fn main() {
    let profiles = ProfileSet::embedded();
    let cases: [(&str, Op, u32, u32, bool); 6] = [
        ("seq read 1M qd4", Op::Read, 1 << 20, 4, false),
        ("seq write 1M qd4", Op::Write, 1 << 20, 4, false),
        ("rand read 4K qd1", Op::Read, 4096, 1, true),
        ("rand read 4K qd32", Op::Read, 4096, 32, true),
        ("rand write 4K qd32", Op::Write, 4096, 32, true),
        ("seq read 4K qd32", Op::Read, 4096, 32, false),
    ];
    for (name, _) in profiles.stacks() {
        let mut line = format!("{name:28}");
        for (_, op, bs, qd, random) in cases {
            let mut sim = Simulator::from_profiles(&profiles, &name, 1).unwrap();
            sim.setup_slots(qd, bs as usize).unwrap();
            let ios = if bs >= 1 << 20 { 200 } else { 4000 };
            let r = ClosedLoop {
                op,
                block_bytes: bs,
                queue_depth: qd,
                random,
                region_bytes: 1 << 30,
                ios,
                seed: 7,
            }
            .run(&mut sim);
            line += &format!(" {:8.1}", r.mb_per_s());
        }
        println!("{line}");
    }
    println!("{:28} {}", "", cases.map(|c| c.0).join(" | "));
}
