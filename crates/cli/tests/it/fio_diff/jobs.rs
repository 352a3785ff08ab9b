//! The fuzzer's job generator: random valid fio jobs over the keys storlab accepts
//! (crates/job/src/keys.rs), on one small file, drawn from a seeded stream so a corpus is the
//! same on every machine.

/// The data file both tools run on: small enough that a job takes a fraction of a second.
pub const FILE_BYTES: u64 = 1 << 20;

/// SplitMix64: a tiny, well-mixed stream, fixed here so the corpus never changes with a crate.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub(crate) fn pick<'a>(&mut self, choices: &[&'a str]) -> &'a str {
        choices[self.below(choices.len() as u64) as usize]
    }
}

/// One job: its keys in the order given, each `(key, value)`; an empty value is a bare key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub keys: Vec<(String, String)>,
}

impl Job {
    /// The keys as fio command-line flags (`--key=value`, `--key` for a bare one).
    pub fn flags(&self) -> Vec<String> {
        self.keys
            .iter()
            .map(|(key, value)| {
                if value.is_empty() {
                    format!("--{key}")
                } else {
                    format!("--{key}={value}")
                }
            })
            .collect()
    }

    /// The flags on one line: the job's name in reports and in the known-divergence list.
    pub fn line(&self) -> String {
        self.flags().join(" ")
    }

    pub fn value(&self, key: &str) -> Option<&str> {
        self.keys
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The same job without its `index`th key (the shrinker's one step).
    pub fn without(&self, index: usize) -> Job {
        let mut keys = self.keys.clone();
        keys.remove(index);
        Job { keys }
    }

    fn set(&mut self, key: &str, value: impl Into<String>) {
        self.keys.push((key.to_owned(), value.into()));
    }
}

const KIB: u64 = 1024;

/// Job `index` of the corpus drawn from `seed`: each job from its own stream, so one job can be
/// rerun alone and a generator change moves only the jobs it touches.
pub fn job(seed: u64, index: u64) -> Job {
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0xA24B_AED4_963E_E407));
    let mut job = Job { keys: Vec::new() };
    let rw = pattern(&mut rng, &mut job);
    block_sizes(&mut rng, &mut job);
    region(&mut rng, &mut job);
    randomness(&mut rng, &mut job, &rw);
    engine(&mut rng, &mut job);
    syncs(&mut rng, &mut job);
    buffers_and_verify(&mut rng, &mut job, &rw);
    workers(&mut rng, &mut job);
    rarer_keys(&mut rng, &mut job, &rw);
    later_keys(&mut rng, &mut job, &rw);
    file_choice_keys(&mut rng, &mut job);
    undrawn_keys(&mut rng, &mut job, &rw);
    job
}

/// `rw` (with a hole modifier now and then) and `rwmixread` for a mix; the `rw` value.
fn pattern(rng: &mut Rng, job: &mut Job) -> String {
    if rng.chance(5) {
        return "read".to_owned(); // fio's default: no `rw` at all
    }
    let mut rw = rng
        .pick(&[
            "read",
            "write",
            "randread",
            "randwrite",
            "rw",
            "randrw",
            "readwrite",
            "trim",
            "randtrim",
            "trimwrite",
        ])
        .to_owned();
    if rng.chance(8) {
        rw = format!("{rw}:{}", rng.pick(&["4k", "8k", "16k"]));
    }
    job.set("rw", rw.clone());
    if rw.contains("rw") && rng.chance(50) {
        job.set("rwmixread", (10 * (1 + rng.below(9))).to_string());
    }
    rw
}

/// `bs` (one size or read,write), `bsrange`, `bssplit`, and `blockalign`.
fn block_sizes(rng: &mut Rng, job: &mut Job) {
    let sizes = ["512", "1k", "2k", "4k", "8k", "16k", "32k", "64k"];
    match rng.below(20) {
        0..=10 => job.set("bs", rng.pick(&sizes)),
        11..=12 => job.set("bs", format!("{},{}", rng.pick(&sizes), rng.pick(&sizes))),
        13..=15 => job.set(
            "bsrange",
            rng.pick(&["512-8k", "4k-16k", "1k-64k", "2k-4k"]),
        ),
        16..=17 => job.set(
            "bssplit",
            rng.pick(&["4k/50:8k/50", "512/20:4k/80", "16k/10:4k/90"]),
        ),
        _ => {}
    }
    if rng.chance(15) {
        job.set("blockalign", rng.pick(&["512", "1k", "4k", "8k"]));
    }
}

/// `offset`, `size`, `io_size`, `loops`, `number_ios`: a region inside the file, walked once
/// or more.
fn region(rng: &mut Rng, job: &mut Job) {
    let mut offset_bytes = 0;
    if rng.chance(25) {
        offset_bytes = [0, 4 * KIB, 64 * KIB, 128 * KIB, 512, 6 * KIB][rng.below(6) as usize];
        job.set("offset", offset_bytes.to_string());
    }
    let mut size_bytes = FILE_BYTES - offset_bytes;
    if rng.chance(85) {
        let choices = [64 * KIB, 128 * KIB, 256 * KIB, 512 * KIB];
        size_bytes = choices[rng.below(4) as usize];
        job.set("size", format!("{}k", size_bytes / KIB));
    }
    if rng.chance(10) {
        let io = if rng.chance(50) {
            2 * size_bytes
        } else {
            size_bytes / 2
        };
        job.set("io_size", format!("{}k", io / KIB));
    }
    if rng.chance(15) {
        job.set("loops", rng.pick(&["2", "3"]));
    }
    if rng.chance(8) {
        job.set("number_ios", rng.pick(&["10", "37", "100"]));
    }
}

/// The random offset streams' keys (they matter to random patterns only, but fio takes them
/// on any job).
fn randomness(rng: &mut Rng, job: &mut Job, rw: &str) {
    let random = rw.starts_with("rand");
    if rng.chance(if random { 25 } else { 5 }) {
        job.set("norandommap", "");
    }
    if rng.chance(20) {
        job.set("randseed", (1 + rng.below(100_000)).to_string());
    }
    if rng.chance(12) {
        job.set(
            "random_generator",
            rng.pick(&["tausworthe", "lfsr", "tausworthe64"]),
        );
    }
    if random && rng.chance(15) {
        job.set(
            "random_distribution",
            rng.pick(&[
                "random",
                "zipf:1.1",
                "pareto:0.5",
                "normal:30",
                "zoned:50/10:50/90",
            ]),
        );
    }
    if random && rng.chance(10) {
        job.set("percentage_random", rng.pick(&["0", "25", "50", "100"]));
    }
}

/// `ioengine` and `iodepth`, `direct`, `fallocate`, `invalidate`.
fn engine(rng: &mut Rng, job: &mut Job) {
    if rng.chance(40) {
        job.set(
            "ioengine",
            rng.pick(&[
                "psync", "sync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap",
                "null",
            ]),
        );
    }
    if rng.chance(20) {
        job.set("iodepth", rng.pick(&["1", "2", "4", "8"]));
    }
    if rng.chance(5) {
        job.set("direct", "1");
    }
    if rng.chance(5) {
        job.set("fallocate", rng.pick(&["none", "posix", "keep"]));
    }
    if rng.chance(5) {
        job.set("invalidate", "0");
    }
}

/// `fsync`, `fdatasync`, `end_fsync`, `fsync_on_close`.
fn syncs(rng: &mut Rng, job: &mut Job) {
    if rng.chance(15) {
        job.set("fsync", (1 + rng.below(8)).to_string());
    }
    if rng.chance(10) {
        job.set("fdatasync", (1 + rng.below(8)).to_string());
    }
    if rng.chance(10) {
        job.set("end_fsync", "1");
    }
    if rng.chance(10) {
        job.set("fsync_on_close", "1");
    }
}

/// What writes carry (`zero_buffers`, `refill_buffers`, `buffer_compress_percentage`,
/// `buffer_pattern`, `dedupe_percentage`) and `verify`.
fn buffers_and_verify(rng: &mut Rng, job: &mut Job, rw: &str) {
    if rng.chance(8) {
        job.set("zero_buffers", "");
    }
    if rng.chance(10) {
        job.set("refill_buffers", "");
    }
    if rng.chance(10) {
        job.set(
            "buffer_compress_percentage",
            rng.pick(&["0", "25", "50", "90"]),
        );
    }
    if rng.chance(5) {
        job.set("buffer_pattern", rng.pick(&["0xdeadbeef", "'abcd'"]));
    }
    if rng.chance(5) {
        job.set("dedupe_percentage", rng.pick(&["25", "50"]));
    }
    let writes = rw.contains("write") || rw.contains("rw");
    if writes && rng.chance(15) {
        let kind = rng.pick(&["crc32c", "md5", "crc32", "sha256", "xxhash", "pattern"]);
        job.set("verify", kind);
        if kind == "pattern" {
            job.set("verify_pattern", "0xabcd");
        }
    }
}

/// `numjobs` (with `offset_increment` now and then) and, rarely, `nrfiles`.
fn workers(rng: &mut Rng, job: &mut Job) {
    if rng.chance(10) {
        job.set("numjobs", "2");
        if rng.chance(50) {
            job.set("offset_increment", "256k");
        }
    }
    if rng.chance(3) {
        job.set("nrfiles", "2");
    }
}

/// Keys drawn last, so adding them left every earlier draw of a job as it was: the random
/// mode's sequencer, fio's seeding and buffer stamp, size rules, a share as the region's start.
fn rarer_keys(rng: &mut Rng, job: &mut Job, rw: &str) {
    if rw.starts_with("rand") && rng.chance(6) {
        if !rw.contains(':') {
            job.keys.retain(|(key, _)| key != "rw");
            job.keys
                .insert(0, ("rw".into(), format!("{rw}:{}", rng.pick(&["2", "4"]))));
        }
        job.set("rw_sequencer", rng.pick(&["identical", "sequential"]));
    }
    if rng.chance(5) {
        job.set("allrandrepeat", "1");
    }
    if rng.chance(5) {
        job.set("scramble_buffers", "0");
    }
    if rng.chance(4) {
        job.set("bs_is_seq_rand", "1");
    }
    let ranged = job.value("bsrange").is_some() || job.value("bssplit").is_some();
    if ranged && job.value("verify").is_none() && rng.chance(10) {
        job.set("bs_unaligned", "1");
    }
    if job.value("offset").is_none() && rng.chance(4) {
        job.set("offset", rng.pick(&["10%", "25%"]));
        if rng.chance(50) {
            job.set("offset_align", rng.pick(&["8k", "64k"]));
        }
    }
}

/// Keys added after the corpus had settled (drawn after every earlier one, so a job that draws
/// none is the job it was): mix shares written the other way, verify's layout and backlog,
/// strided zones, the queue's batching, file sizes, pacing that leaves the I/O alone, the
/// buffers' repeat modes, and keys that must change nothing the oracle sees.
fn later_keys(rng: &mut Rng, job: &mut Job, rw: &str) {
    if rw.contains("rw") && job.value("rwmixread").is_none() && rng.chance(10) {
        job.set("rwmixwrite", (10 * (1 + rng.below(9))).to_string());
    }
    if job.value("verify").is_some() {
        later_verify_keys(rng, job);
    }
    if rng.chance(3) {
        job.set("zonemode", "strided");
        job.set("zonesize", rng.pick(&["16k", "64k"]));
        if rng.chance(50) {
            job.set("zonerange", rng.pick(&["64k", "128k"]));
        }
        if rng.chance(50) {
            job.set("zoneskip", rng.pick(&["32k", "64k"]));
        }
    }
    let queued = matches!(
        job.value("ioengine"),
        Some("libaio" | "io_uring" | "posixaio")
    );
    if queued && job.value("iodepth").is_some_and(|d| d != "1") && rng.chance(20) {
        match rng.below(3) {
            0 => job.set("iodepth_batch_submit", rng.pick(&["1", "2"])),
            1 => job.set("iodepth_batch_complete_min", rng.pick(&["0", "1", "2"])),
            _ => job.set("iodepth_low", "1"),
        }
    }
    if rng.chance(4) {
        job.set("filesize", rng.pick(&["512k", "1m"]));
    }
    if rng.chance(3) {
        job.set("thinktime", rng.pick(&["10", "50"]));
    }
    // Not in a mix: fio's `rate_ddir` switches direction by how its last I/O's time compares
    // with the rate's spacing, so fio's own order varies run to run (`--rw=rw --size=256k
    // --rate_iops=20000`: two orders in three runs of fio 3.33).
    let mixed = rw.contains("rw") || rw.starts_with("readwrite") || rw.starts_with("trimwrite");
    if !mixed && rng.chance(3) {
        job.set("rate_iops", rng.pick(&["20000", "50000"]));
    }
    later_buffer_keys(rng, job);
    if job.value("numjobs").is_some() && rng.chance(30) {
        job.set("group_reporting", "");
    }
    if rng.chance(3) {
        job.set(rng.pick(&["thread", "exitall", "stonewall"]), "");
    }
    if rng.chance(3) {
        job.set(
            "continue_on_error",
            rng.pick(&["none", "read", "write", "all"]),
        );
    }
    if rng.chance(2) {
        job.set("create_on_open", "1");
    }
    report_keys(rng, job);
}

/// fio's reporting keys, every value fio takes (they change the report, never the I/O).
fn report_keys(rng: &mut Rng, job: &mut Job) {
    if rng.chance(4) {
        job.set("unified_rw_reporting", rng.pick(&["none", "mixed", "both"]));
    }
    if rng.chance(3) {
        job.set("unit_base", rng.pick(&["0", "8", "1"]));
    }
    for key in ["clat_percentiles", "lat_percentiles", "slat_percentiles"] {
        if rng.chance(3) {
            job.set(key, rng.pick(&["0", "1"]));
        }
    }
    if rng.chance(3) {
        job.set(
            "percentile_list",
            rng.pick(&["99:99.9:99.99", "50", "1:5:10:99.5"]),
        );
    }
    if rng.chance(2) {
        job.set("significant_figures", rng.pick(&["2", "6"]));
    }
    if rng.chance(3) {
        let key = rng.pick(&[
            "disable_lat",
            "disable_clat",
            "disable_slat",
            "disable_bw_measurement",
            "gtod_reduce",
        ]);
        job.set(key, "1");
    }
}

/// Verify's layout (`verify_interval`, `verify_offset`), its backlog, `do_verify=0`,
/// `verify_fatal` and fio's experimental pass, for a job that verifies.
fn later_verify_keys(rng: &mut Rng, job: &mut Job) {
    if rng.chance(15) {
        job.set("verify_interval", rng.pick(&["512", "1k", "4k"]));
    }
    if rng.chance(8) {
        job.set("verify_offset", rng.pick(&["64", "512"]));
    }
    if rng.chance(15) {
        job.set("verify_backlog", rng.pick(&["4", "16"]));
        if rng.chance(50) {
            job.set("verify_backlog_batch", rng.pick(&["2", "8"]));
        }
    }
    if rng.chance(8) {
        job.set("do_verify", "0");
    }
    if rng.chance(8) {
        job.set("verify_fatal", "1");
    }
    if rng.chance(8) {
        job.set("experimental_verify", "1");
    }
}

/// `dedupe_mode` (with its working set) and `dedupe_global`.
fn later_buffer_keys(rng: &mut Rng, job: &mut Job) {
    if job.value("dedupe_percentage").is_some() && rng.chance(40) {
        job.set("dedupe_mode", rng.pick(&["repeat", "working_set"]));
        if rng.chance(50) {
            job.set("dedupe_working_set_percentage", rng.pick(&["10", "50"]));
        }
        if rng.chance(30) {
            job.set("dedupe_global", "1");
        }
    }
}

/// fio's keys for choosing among a job's several files (`file_service_type`, `openfiles`): on
/// the job's one file fio's I/O is the same whatever they say, which storlab claims; drawn last
/// so every earlier draw stays as it was.
fn file_choice_keys(rng: &mut Rng, job: &mut Job) {
    if rng.chance(4) {
        let service = rng.pick(&[
            "random",
            "roundrobin:2",
            "sequential",
            "zipf:1.2",
            "pareto:0.5",
            "normal:20:0.5",
        ]);
        job.set("file_service_type", service);
    }
    if rng.chance(3) {
        job.set("openfiles", rng.pick(&["1", "4"]));
    }
}

/// Keys storlab accepts that no earlier draw gave (drawn after every other, so a job that
/// draws none is the job it was): thinktime's variants, layout and cache hints, the engines'
/// own options, bandwidth pacing, fio's unit base, logs and priorities that must change no I/O.
fn undrawn_keys(rng: &mut Rng, job: &mut Job, rw: &str) {
    if job.value("thinktime").is_some() && rng.chance(40) {
        job.set("thinktime_blocks", rng.pick(&["2", "4"]));
        if rng.chance(50) {
            job.set("thinktime_blocks_type", rng.pick(&["complete", "issue"]));
        }
        if rng.chance(30) {
            // fio 3.33 sleeps forever once a spin overruns the thinktime (storlab refuses a
            // margin under 1 ms): a stall long enough that fio's spin never does.
            job.set("thinktime_spin", "5");
            job.set("thinktime", "1010");
        }
    }
    let writes = rw.contains("write") || rw.contains("rw");
    if writes && rng.chance(4) {
        job.set("overwrite", "1");
    }
    if rng.chance(3) {
        job.set(
            "fadvise_hint",
            rng.pick(&["0", "1", "sequential", "random"]),
        );
    }
    if rng.chance(2) {
        job.set("softrandommap", "1");
    }
    if rng.chance(2) {
        job.set("create_fsync", rng.pick(&["0", "1"]));
    }
    engine_options(rng, job);
    let mixed = rw.contains("rw") || rw.starts_with("readwrite") || rw.starts_with("trimwrite");
    if !mixed && job.value("rate_iops").is_none() && rng.chance(3) {
        job.set("rate", rng.pick(&["1m", "4m"]));
        if rng.chance(30) {
            job.set("rate_process", "poisson");
        }
    }
    if rng.chance(3) {
        job.set("kb_base", rng.pick(&["1000", "1024"]));
    }
    if rng.chance(3) {
        let log = rng.pick(&["write_lat_log", "write_bw_log", "write_iops_log"]);
        job.set(log, "perf");
        if rng.chance(50) {
            job.set("log_avg_msec", "10");
        }
    }
    if rng.chance(2) {
        job.set(
            "clocksource",
            rng.pick(&["gettimeofday", "clock_gettime", "cpu"]),
        );
    }
    if rng.chance(2) {
        job.set("prioclass", rng.pick(&["2", "3"]));
    }
    if job.value("verify").is_some() && rng.chance(5) {
        job.set("verify_async", "2");
    }
    if rng.chance(2) {
        job.set("unlink", "1");
    }
}

/// The chosen engine's own options (fio's per-engine option lists) and the queue's reaping
/// bound, each on the engine that takes it.
fn engine_options(rng: &mut Rng, job: &mut Job) {
    match job.value("ioengine") {
        Some("libaio") if rng.chance(15) => job.set("userspace_reap", "1"),
        Some("io_uring") if rng.chance(20) => {
            let key = rng.pick(&["fixedbufs", "registerfiles", "nonvectored", "sqthread_poll"]);
            job.set(key, "1");
        }
        Some("pvsync2") if rng.chance(15) => job.set("hipri", "1"),
        _ => {}
    }
    let queued = matches!(
        job.value("ioengine"),
        Some("libaio" | "io_uring" | "posixaio")
    );
    if queued && job.value("iodepth").is_some_and(|d| d != "1") && rng.chance(10) {
        match rng.below(3) {
            0 => job.set("iodepth_batch_complete_max", rng.pick(&["2", "4"])),
            1 => job.set("serialize_overlap", "1"),
            _ => job.set("io_submit_mode", "offload"),
        }
    }
    if matches!(job.value("ioengine"), Some("libaio" | "io_uring")) && rng.chance(5) {
        job.set("cmdprio_percentage", "50");
    }
}
