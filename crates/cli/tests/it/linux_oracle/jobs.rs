//! The jobs the oracle's guest runs on every disk, as (name, storlab job flags): a fixed set
//! chosen for what each shows (one size per driver limit, queueing beyond the driver's depth,
//! a trim, a flush), and a few generated from a seed (block size, engine, direction, queue
//! depth), so the comparison is not only of hand-picked cases. The seed is fixed, so every CI
//! run compares the same jobs; `STORLAB_ORACLE_SEED=N` draws others, and the test prints the
//! seed it used.

/// A job: its name (one word: init.sh reads "name flags" lines) and its storlab flags.
pub type Job = (String, String);

/// The fixed jobs, all O_DIRECT (so the page cache adds no command of its own): psync and
/// libaio, reads and writes of 4 KiB, 64 KiB and 1 MiB, one
/// and several in flight, a trim and a write with a flush after every fourth write.
const FIXED: [(&str, &str); 7] = [
    (
        "psync-4k-read",
        "--rw=read --bs=4k --size=256k --direct=1 --ioengine=psync",
    ),
    (
        "psync-64k-write",
        "--rw=write --bs=64k --size=2m --direct=1 --ioengine=psync",
    ),
    (
        "psync-1m-read",
        "--rw=read --bs=1m --size=4m --direct=1 --ioengine=psync",
    ),
    // Every other 4 KiB block: no two reads are adjacent, so the block layer merges none
    // (random reads would merge where two happen to be adjacent, differently in every run).
    (
        "libaio-4k-read-holes-qd32",
        "--rw=read:4k --bs=4k --size=4m --direct=1 --ioengine=libaio --iodepth=32",
    ),
    (
        "libaio-1m-write-qd4",
        "--rw=write --bs=1m --size=8m --direct=1 --ioengine=libaio --iodepth=4",
    ),
    // uas passes discards on as UNMAP; usb-storage has discard off (EOPNOTSUPP, no command).
    // O_DIRECT as every job: a buffered job's `invalidate` would flush the write cache first.
    (
        "psync-64k-trim",
        "--rw=trim --bs=64k --size=1m --direct=1 --ioengine=psync",
    ),
    // fsync on the block device: SYNCHRONIZE CACHE where sd found a volatile write cache
    // (blkdev_fsync -> blkdev_issue_flush), nothing where it assumed write-through.
    (
        "psync-64k-write-fsync4",
        "--rw=write --bs=64k --size=1m --direct=1 --ioengine=psync --fsync=4",
    ),
];

/// How many jobs the seed generates.
const GENERATED: usize = 4;
/// The seed CI uses.
pub const DEFAULT_SEED: u64 = 35;
/// Block sizes a generated psync job draws from (KiB): below, at and above every driver limit
/// (usb-storage's 120 KiB at High-Speed, uas's 512 KiB, usb-storage's 1 MiB at SuperSpeed).
/// Not above 1 MiB: Linux builds a larger O_DIRECT request from several bios of at most
/// BIO_MAX_VECS = 256 bvecs each (block/fops.c __blkdev_direct_IO, bio_iov_iter_get_pages),
/// and where a bio ends depends on how the user buffer's pages lie in physical memory (the
/// guest cut a 2 MiB write into bios of 1020 and 1028 KiB in one run, 132 and 1916 KiB in
/// another), which no model of the driver can know.
const BLOCK_KIB: [u32; 9] = [4, 8, 16, 64, 120, 128, 256, 512, 1024];
/// Block sizes and queue depths a generated libaio job draws from: small blocks, enough of
/// them to outlast the device's throttle burst (so the queue fills), depths below and above
/// uas's 14 (QEMU's 16 streams - 2) and 30 (32 - 2). Not above 16 KiB: usbmon copies each
/// event's data (up to a fifth of its ring) into a ring of 300 KiB (drivers/usb/mon/mon_bin.c
/// BUFF_DFL), so 14 writes of 64 KiB in flight overflowed it once the guest's capture fell
/// behind on a loaded machine, and a capture that lost events is refused.
const QUEUED_BLOCK_KIB: [u32; 3] = [4, 8, 16];
const QUEUE_DEPTHS: [u32; 6] = [2, 4, 8, 16, 32, 48];
/// I/Os of a generated libaio job.
const QUEUED_IOS: u64 = 160;
/// Directions of a generated psync job (one I/O at a time: nothing for the block layer to
/// merge, so random offsets are as deterministic on the kernel as in the simulator).
const PSYNC_DIRECTIONS: [&str; 6] = ["read", "write", "randread", "randwrite", "randrw", "trim"];
/// Bytes a generated job moves at most, and its I/Os at most and at least.
const GENERATED_BYTES: u64 = 4 << 20;
const GENERATED_IOS: u64 = 48;
const GENERATED_IOS_MIN: u64 = 4;

/// The seed: STORLAB_ORACLE_SEED, else [`DEFAULT_SEED`].
pub fn seed() -> u64 {
    std::env::var("STORLAB_ORACLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED)
}

/// The fixed jobs and those generated from `seed`.
pub fn all(seed: u64) -> Vec<Job> {
    let mut jobs: Vec<Job> = FIXED
        .iter()
        .map(|(name, flags)| (name.to_string(), flags.to_string()))
        .collect();
    let mut state = seed;
    for index in 0..GENERATED {
        jobs.push(generated(index, &mut state));
    }
    jobs
}

/// One generated job. Queued jobs (libaio) read or write every other block, as the fixed
/// queued job does, so the block layer merges none.
fn generated(index: usize, state: &mut u64) -> Job {
    let mut pick = |n: usize| (splitmix64(state) % n as u64) as usize;
    if pick(2) == 0 {
        let bs_kib = BLOCK_KIB[pick(BLOCK_KIB.len())];
        let bs = u64::from(bs_kib) << 10;
        let ios = (GENERATED_BYTES / bs).clamp(GENERATED_IOS_MIN, GENERATED_IOS);
        let rw = PSYNC_DIRECTIONS[pick(PSYNC_DIRECTIONS.len())];
        let name = format!("gen{index}-psync-{rw}-{bs_kib}k");
        let flags = format!(
            "--rw={rw} --bs={bs_kib}k --size={}k --direct=1 --ioengine=psync",
            ios * u64::from(bs_kib)
        );
        (name, flags)
    } else {
        let bs_kib = QUEUED_BLOCK_KIB[pick(QUEUED_BLOCK_KIB.len())];
        let rw = ["read", "write"][pick(2)];
        let depth = QUEUE_DEPTHS[pick(QUEUE_DEPTHS.len())];
        let name = format!("gen{index}-libaio-{rw}-holes-{bs_kib}k-qd{depth}");
        let flags = format!(
            "--rw={rw}:{bs_kib}k --bs={bs_kib}k --size={}k --direct=1 --ioengine=libaio --iodepth={depth}",
            2 * QUEUED_IOS * u64::from(bs_kib)
        );
        (name, flags)
    }
}

/// Whether the job keeps more I/Os queued than the driver's `queue_depth` long enough for the
/// driver to reach its limit whatever the timing: its depth exceeds the limit and it issues
/// more I/Os than the device's throttle lets through at once (`burst_ios`) plus two queues'
/// worth, so the throttled device, slower than the guest submits, holds the queue full.
pub fn binds_queue(flags: &str, queue_depth: u32, burst_ios: u64) -> bool {
    let depth = flag(flags, "--iodepth").map_or(1, |depth| depth.parse().unwrap());
    depth > queue_depth && ios(flags) > burst_ios + 2 * u64::from(depth)
}

/// The I/Os a job issues: its size over its block size, half that where `--rw` leaves holes.
fn ios(flags: &str) -> u64 {
    let bytes = |value: &str| -> u64 {
        let (number, unit) = value.split_at(value.len() - 1);
        match unit {
            "k" => number.parse::<u64>().unwrap() << 10,
            "m" => number.parse::<u64>().unwrap() << 20,
            _ => value.parse().unwrap(),
        }
    };
    let size = bytes(flag(flags, "--size").unwrap());
    let bs = bytes(flag(flags, "--bs").unwrap());
    let holes = flag(flags, "--rw").is_some_and(|rw| rw.contains(':'));
    size / bs / if holes { 2 } else { 1 }
}

/// The value of `--name=VALUE` among the flags.
fn flag<'a>(flags: &'a str, name: &str) -> Option<&'a str> {
    flags
        .split_whitespace()
        .find_map(|flag| flag.strip_prefix(name)?.strip_prefix('='))
}

/// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): a small, well-mixed generator, enough to
/// draw a few jobs reproducibly from a seed.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
fn generated_jobs_are_reproducible_and_valid_words() {
    let jobs = all(DEFAULT_SEED);
    assert_eq!(jobs, all(DEFAULT_SEED));
    assert_eq!(jobs.len(), FIXED.len() + GENERATED);
    assert_ne!(jobs, all(DEFAULT_SEED + 1));
    for (name, flags) in &jobs {
        assert!(!name.contains(char::is_whitespace), "{name}");
        assert!(ios(flags) >= GENERATED_IOS_MIN, "{flags}");
    }
    let queued = "--rw=read:4k --bs=4k --size=4m --direct=1 --ioengine=libaio --iodepth=32";
    assert_eq!(ios(queued), 512);
    assert!(binds_queue(queued, 30, 40));
    assert!(!binds_queue(queued, 32, 40));
    assert!(!binds_queue("--rw=read --bs=1m --size=4m", 1, 40));
}
