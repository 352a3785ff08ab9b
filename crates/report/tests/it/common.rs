//! A fixed synthetic `RunReport` shared by the output tests: deterministic (seeded latencies,
//! fixed timestamps and host), covering read-only, write-only, mixed and trim jobs with warnings.

use storlab_report::{HostInfo, JobNotes, JobReport, JobSetup, RunReport, TargetInfo, ToolInfo};
use storlab_stats::{CpuTime, WorkerStats};

const MS: u64 = 1_000_000;
const INTERVAL_NS: u64 = 250 * MS;

/// splitmix64, so the fixture needs no RNG crate and never changes.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low)
    }
}

struct Workload {
    read_percent: u64,
    trim_percent: u64,
    block_bytes: u64,
    ios: u64,
    clat_ns: (u64, u64),
}

fn worker(seed: u64, workload: &Workload, elapsed_ns: u64) -> WorkerStats {
    let mut rng = SplitMix64(seed);
    let mut stats = WorkerStats::new(INTERVAL_NS);
    stats.elapsed_ns = elapsed_ns;
    for index in 0..workload.ios {
        let t_ns = index * elapsed_ns / workload.ios;
        let slat_ns = rng.between(200, 2_000);
        let clat_ns = rng.between(workload.clat_ns.0, workload.clat_ns.1);
        let roll = rng.between(0, 100);
        let direction = if roll < workload.trim_percent {
            &mut stats.trim
        } else if roll < workload.trim_percent + workload.read_percent {
            &mut stats.read
        } else {
            &mut stats.write
        };
        direction.record(t_ns, workload.block_bytes, slat_ns, clat_ns);
    }
    stats.cpu = CpuTime {
        user_ns: elapsed_ns / 10,
        system_ns: elapsed_ns / 4,
    };
    stats.context_switches = workload.ios / 2;
    stats.minor_faults = 12;
    stats
}

fn meta(name: &str, rw: &str, block_size: &str, iodepth: u32, numjobs: u32) -> JobSetup {
    JobSetup {
        name: name.to_owned(),
        job: serde_json::json!({
            "name": name,
            "engine": "sim",
            "iodepth": iodepth,
            "numjobs": numjobs,
            "runtime_ns": 1_000_000_000u64,
            "block_size_read": { "fixed": block_size },
        }),
        engine: "sim".to_owned(),
        target: TargetInfo {
            description: "usb3-uas-asm1051e-ssd".to_owned(),
            kind: "sim".to_owned(),
            size_bytes: 8 << 30,
            path: None,
        },
        device_state: "fresh-trimmed".to_owned(),
        data_pattern: "random".to_owned(),
        align_bytes: 4096,
        seed: 42,
        iodepth,
        numjobs,
        rw: rw.to_owned(),
        block_size: block_size.to_owned(),
    }
}

/// What every fixed job notes: one engine fact, no warning, no simulator report.
fn notes() -> JobNotes {
    JobNotes {
        warnings: Vec::new(),
        engine_details: vec![("streams".to_owned(), "yes".to_owned())],
        sim: None,
    }
}

fn job(meta: JobSetup, notes: JobNotes, workload: &Workload, elapsed_ns: u64) -> JobReport {
    let mut merged = WorkerStats::new(INTERVAL_NS);
    for worker_index in 0..u64::from(meta.numjobs) {
        // Workers finish a little apart, as real ones do; the job lasts as long as the slowest.
        let worker_elapsed_ns = elapsed_ns - worker_index * MS;
        merged.merge(&worker(
            meta.seed + worker_index,
            workload,
            worker_elapsed_ns,
        ));
    }
    JobReport::new(meta, notes, &merged)
}

/// The fixed report every snapshot is taken of.
pub fn fixed_report() -> RunReport {
    let mut report = RunReport::new(
        ToolInfo {
            name: "storlab".to_owned(),
            version: "0.1.0".to_owned(),
        },
        1_700_000_000_123,
        HostInfo {
            hostname: "lab-host".to_owned(),
            kernel: "6.1.0-test".to_owned(),
            cpus: 8,
        },
    );
    let second = 1_000 * MS;
    report.jobs.push(job(
        meta("seq-read", "read", "1MiB", 8, 1),
        notes(),
        &Workload {
            read_percent: 100,
            trim_percent: 0,
            block_bytes: 1 << 20,
            ios: 400,
            clat_ns: (2_000_000, 3_000_000),
        },
        second,
    ));
    let mut random_write_notes = notes();
    random_write_notes
        .warnings
        .push("writes exceed the simulated drive's sustained rate".to_owned());
    report.jobs.push(job(
        meta("4k-qd32-write", "randwrite", "4KiB", 32, 2),
        random_write_notes,
        &Workload {
            read_percent: 0,
            trim_percent: 0,
            block_bytes: 4096,
            ios: 2_000,
            clat_ns: (50_000, 900_000),
        },
        second,
    ));
    let mut mixed_notes = notes();
    mixed_notes.sim = Some(serde_json::json!({ "profile": "usb3-uas", "bridge": "asm1051e" }));
    report.jobs.push(job(
        meta("db-8k-70r", "randrw:70", "8KiB", 4, 1),
        mixed_notes,
        &Workload {
            read_percent: 65,
            trim_percent: 5,
            block_bytes: 8192,
            ios: 1_000,
            clat_ns: (100, 40_000),
        },
        second / 2,
    ));
    report
        .warnings
        .push("alignment 512 B requested for job \"none\"; default is 4 KiB".to_owned());
    report
}
