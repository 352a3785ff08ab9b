//! Runs the job readers (fio job files, fio-style flags) and the value parsers over many
//! deterministic pseudo-random inputs: random files and flag lists built from the key table, and
//! mutations of the shipped `examples/jobs/*.fio`, the examples in the docs and the flag lines
//! the docs give. Every input must give jobs or an error, never a panic; every error must render
//! on one line; every accepted job must validate again unchanged and keep the sums the runner
//! makes (worker regions, ramp plus runtime) inside `u64`. The cargo-fuzz targets `jobfile`,
//! `flags` and `values` in `fuzz/` explore further with coverage guidance; this keeps the
//! guarantee in the normal test suite. `STORLAB_SOAK=1` runs 50 times as many inputs.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use storlab_job::keys::KEYS;
use storlab_job::size::{
    parse_block_size_splits, parse_block_sizes, parse_bool, parse_count, parse_percent,
    parse_share_ppm, parse_size, parse_size_range, parse_time_ns, NS_PER_S,
};
use storlab_job::steps::DeviceState;
use storlab_job::validate::{validate, TIME_MAX_NS};
use storlab_job::{parse_fio_str, parse_flags, JobError, JobSet, Target};

/// Inputs per test in a normal run (each is read with two or three targets).
const ITERATIONS: u64 = 30_000;
/// Multiplier under `STORLAB_SOAK`.
const SOAK_FACTOR: u64 = 50;

const FILE_NAME: &str = "fuzz.fio";

/// A seeded ChaCha8 stream (the workspace's deterministic generator) with the picks the
/// mutations need.
struct Rng(ChaCha8Rng);
impl Rng {
    fn seeded(seed: u64) -> Rng {
        Rng(ChaCha8Rng::seed_from_u64(seed))
    }
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn pick_str<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn iterations() -> u64 {
    if std::env::var_os("STORLAB_SOAK").is_some() {
        ITERATIONS * SOAK_FACTOR
    } else {
        ITERATIONS
    }
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Values that reach every branch of the value parsers: units, ranges, splits, pairs, modes, and
/// numbers at and past every limit.
const VALUES: &[&str] = &[
    "0",
    "1",
    "4k",
    "8K",
    "1m",
    "64MiB",
    "65m",
    "1g",
    "16000p",
    "16383p",
    "16384p",
    "99999999999p",
    "50%",
    "12.5%",
    "100%",
    "0.0001%",
    "18446744073709551615",
    "18446744073709551616",
    "0x1000",
    "0x",
    "0xffffffffffffffff",
    "1.5k",
    "0.3k",
    ".5",
    "1.",
    "1.2.3",
    "-4k",
    "+4",
    "10%",
    "4k-64k",
    "64k:4k",
    "4k,64k",
    ",64k",
    "4k,",
    ",",
    "4k,8k,16k",
    "4k/50:64k/50",
    "4k/10:64k",
    "4k:8k:16k",
    "4k/150",
    "4k/60:8k/60",
    "4k/50:64k,8k/40:64k/60",
    "10",
    "30s",
    "500ms",
    "250us",
    "2m",
    "3650d",
    "3651d",
    "10000000000",
    "100000000000h",
    "5y",
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "randrw",
    "trim",
    "randread:8",
    "null",
    "psync",
    "sync",
    "io_uring",
    "sim",
    "libaio",
    "sim:",
    "sim:usb3-uas-ssd",
    "/dev/sda:/dev/sdb",
    "/tmp/a#b",
    "random",
    "zeros",
    "compressible:40",
    "compressible:101",
    "crc32c",
    "md5",
    "none",
    "true",
    "off",
    "maybe",
    "1024",
    "1000",
    "",
    " ",
    "é",
    "\u{feff}",
];

/// Characters and fragments that break lines, sections, comments and keys.
const FRAGMENTS: &[&str] = &[
    "[", "]", "[global]", "[job]", "[]", "=", "==", "#", ";", " #", " ;", "\n", "\r", "\r\n", " ",
    "\t", ",", ":", "/", "-", ".", "%", "\u{feff}", "é", "\u{2028}", "\0", "--", "include ",
];

fn random_key(rng: &mut Rng) -> String {
    let key = rng.pick(KEYS);
    let name = match rng.below(4) {
        0 if !key.aliases.is_empty() => rng.pick(key.aliases),
        _ => key.name,
    };
    match rng.below(12) {
        0 => name.to_ascii_uppercase(),
        1 => format!("{name}x"),
        2 => name[..name.len() - 1].to_string(),
        _ => name.to_string(),
    }
}

fn random_value(rng: &mut Rng) -> String {
    let mut value = rng.pick(VALUES).to_string();
    if rng.below(6) == 0 {
        value.push_str(rng.pick_str(VALUES));
    }
    if rng.below(10) == 0 {
        value = format!(
            "{}{}",
            rng.next(),
            rng.pick(&["", "k", "p", "s", "d", "ms"])
        );
    }
    value
}

/// A job file from scratch: sections and key lines in any order, some broken.
fn random_file(rng: &mut Rng) -> String {
    let mut text = String::new();
    for _ in 0..rng.below(14) {
        let line = match rng.below(10) {
            0 => "[global]".to_string(),
            1 | 2 => format!("[{}]", rng.pick(&["a", "b", "job", " x ", "", "global "])),
            3 => random_key(rng),
            4 => rng.pick(FRAGMENTS).to_string(),
            _ => format!("{}={}", random_key(rng), random_value(rng)),
        };
        text.push_str(&line);
        text.push_str(rng.pick_str(&["\n", "\n", "\r\n", " ; note\n", "\n\n"]));
    }
    text
}

/// `text` with one to four random edits: a byte range dropped, a fragment, key or value put in,
/// a line doubled or dropped, a value replaced.
fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut text = text.to_string();
    for _ in 0..1 + rng.below(4) {
        let boundaries: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        let at = *rng.pick(&boundaries);
        match rng.below(7) {
            0 => {
                let to = *rng.pick(&boundaries);
                let (from, to) = (at.min(to), at.max(to));
                let span = (to - from).min(1 + rng.below(8));
                let to = (from..=from + span)
                    .rev()
                    .find(|&i| i <= text.len() && text.is_char_boundary(i))
                    .unwrap_or(from);
                text.replace_range(from..to, "");
            }
            1 => text.insert_str(at, rng.pick_str(FRAGMENTS)),
            2 => text.insert_str(at, &random_key(rng)),
            3 => text.insert_str(at, &random_value(rng)),
            4 | 5 => {
                // Replace one line's value (or the whole line) with a fresh one.
                let lines: Vec<&str> = text.split('\n').collect();
                let index = rng.below(lines.len());
                let line = lines[index];
                let replaced = match line.split_once('=') {
                    Some((key, _)) if rng.below(2) == 0 => format!("{key}={}", random_value(rng)),
                    _ => format!("{}={}", random_key(rng), random_value(rng)),
                };
                let mut lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                lines[index] = replaced;
                text = lines.join("\n");
            }
            _ => {
                let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
                let index = rng.below(lines.len());
                if rng.below(2) == 0 {
                    let line = lines[index].clone();
                    lines.insert(rng.below(lines.len() + 1), line);
                } else {
                    lines.remove(index);
                }
                text = lines.join("\n");
            }
        }
    }
    text
}

/// The shipped example job files and every ```ini block of the docs.
fn seed_files() -> Vec<String> {
    let root = repo_root();
    let mut seeds = Vec::new();
    let examples = root.join("examples/jobs");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&examples)
        .unwrap_or_else(|e| panic!("{}: {e}", examples.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "fio"))
        .collect();
    paths.sort();
    for path in paths {
        seeds.push(std::fs::read_to_string(path).unwrap());
    }
    for doc in doc_texts() {
        let mut rest = doc.as_str();
        while let Some(start) = rest.find("```ini\n") {
            let block = &rest[start + "```ini\n".len()..];
            let end = block.find("```").unwrap_or(block.len());
            seeds.push(block[..end].to_string());
            rest = &block[end..];
        }
    }
    assert!(
        seeds.len() >= 6,
        "examples and docs give {} seeds",
        seeds.len()
    );
    seeds
}

fn doc_texts() -> Vec<String> {
    let root = repo_root();
    let mut texts = vec![std::fs::read_to_string(root.join("README.md")).unwrap()];
    let docs = root.join("docs");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&docs)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    paths.sort();
    texts.extend(paths.iter().map(|p| std::fs::read_to_string(p).unwrap()));
    texts
}

/// Every `--key[=value]` job flag the README and docs show, in order of appearance.
fn seed_flags() -> Vec<String> {
    let mut flags = Vec::new();
    for text in doc_texts() {
        for word in text.split(|c: char| c.is_whitespace() || c == '`' || c == '|') {
            let Some(flag) = word.strip_prefix("--") else {
                continue;
            };
            let key = flag.split('=').next().unwrap_or_default();
            if storlab_job::flags::is_job_key(key) {
                flags.push(word.to_string());
            }
        }
    }
    assert!(flags.len() >= 20, "the docs show {} job flags", flags.len());
    flags
}

/// The targets the command line can impose; the first is "none imposed".
fn targets() -> Vec<Option<Target>> {
    vec![
        None,
        Some(Target::Sim("usb3-uas-ssd".into())),
        Some(Target::Path("/dev/sdz".into())),
        Some(Target::TempFileIn("/tmp".into())),
        Some(Target::None),
    ]
}

/// Runs `read` and checks what it returns; a panic is reported with the input.
fn check(input: &dyn std::fmt::Debug, read: impl FnOnce() -> Result<JobSet, JobError>) {
    let result = catch_unwind(AssertUnwindSafe(read))
        .unwrap_or_else(|_| panic!("the reader panicked on {input:?}"));
    match result {
        Ok(set) => {
            assert!(!set.jobs.is_empty(), "{input:?}");
            for job in &set.jobs {
                let mut again = job.clone();
                validate(&mut again).unwrap_or_else(|e| panic!("{input:?}: accepted, then {e}"));
                assert_eq!(&again, job, "validating twice changed the job: {input:?}");
                let end = job
                    .last_worker_offset_bytes()
                    .and_then(|last| last.checked_add(job.size_bytes.unwrap_or(0)));
                assert!(end.is_some(), "regions overflow: {input:?}");
                assert!(job.runtime_ns.unwrap_or(0) <= TIME_MAX_NS, "{input:?}");
                assert!(job.ramp_time_ns <= TIME_MAX_NS, "{input:?}");
            }
        }
        Err(error) => {
            let line = error.to_string();
            assert!(!line.is_empty(), "empty error for {input:?}");
            assert!(
                !line.contains(['\n', '\r']),
                "error on more than one line: {line:?} for {input:?}"
            );
        }
    }
}

fn check_file(text: &str, target: Option<&Target>) {
    check(&text, || parse_fio_str(text, FILE_NAME, target));
    if let Err(error) = parse_fio_str(text, FILE_NAME, target) {
        assert!(error.to_string().starts_with(FILE_NAME), "{error}");
    }
}

#[test]
fn job_files_random_and_mutated_never_panic() {
    let seeds = seed_files();
    let targets = targets();
    let mut rng = Rng::seeded(0x6a6f_6266_696c_6573);
    for seed in &seeds {
        for target in &targets {
            check_file(seed, target.as_ref());
        }
    }
    for i in 0..iterations() {
        let seed = &seeds[rng.below(seeds.len())];
        let text = match i % 3 {
            0 => random_file(&mut rng),
            1 => mutate(&mut rng, seed),
            // Mutations of mutations reach further from the seeds.
            _ => {
                let once = mutate(&mut rng, seed);
                mutate(&mut rng, &once)
            }
        };
        check_file(&text, None);
        let target = &targets[1 + rng.below(targets.len() - 1)];
        check_file(&text, target.as_ref());
    }
}

#[test]
fn flag_lists_random_and_mutated_never_panic() {
    let doc_flags = seed_flags();
    let targets = targets();
    let mut rng = Rng::seeded(0x666c_6167_735f_6c73);
    for i in 0..iterations() {
        let count = rng.below(10);
        let mut args: Vec<String> = (0..count)
            .map(|_| match rng.below(6) {
                0 => format!("--{}={}", random_key(&mut rng), random_value(&mut rng)),
                1 => format!("--{}", random_key(&mut rng)),
                2 => format!("--name={}", rng.pick(&["a", "b", "global", "", " "])),
                _ => rng.pick(&doc_flags).clone(),
            })
            .collect();
        if i % 2 == 1 && !args.is_empty() {
            let index = rng.below(args.len());
            args[index] = mutate(&mut rng, &args[index]);
        }
        check(&args, || parse_flags(&args, None));
        let target = &targets[1 + rng.below(targets.len() - 1)];
        check(&args, || parse_flags(&args, target.as_ref()));
    }
}

#[test]
fn value_parsers_and_state_never_panic() {
    let mut rng = Rng::seeded(0x7661_6c75_6573_2121);
    let mut values: Vec<String> = VALUES.iter().map(|v| v.to_string()).collect();
    values.extend(
        [
            "fresh",
            "seq-filled",
            "as-found",
            "fragmented:16g",
            "fragmented:",
        ]
        .map(String::from),
    );
    for _ in 0..iterations() * 4 {
        let seed = &values[rng.below(values.len())];
        let text = mutate(&mut rng, seed);
        let outcome = catch_unwind(|| {
            if let Ok(bytes) = parse_size(&text) {
                assert_eq!(parse_count(&text), Ok(bytes));
            }
            let _ = parse_time_ns(&text, NS_PER_S);
            let _ = parse_time_ns(&text, 1);
            if let Ok(percent) = parse_percent(&text) {
                assert!(percent <= 100);
            }
            if let Ok(ppm) = parse_share_ppm(&text) {
                assert!(ppm <= storlab_job::PPM_WHOLE);
            }
            let _ = parse_bool(&text);
            let _ = parse_size_range(&text);
            let _ = parse_block_sizes(&text);
            let _ = parse_block_size_splits(&text);
            match DeviceState::parse(&text) {
                Ok(state) => assert_eq!(DeviceState::parse(&state.label()), Ok(state)),
                Err(error) => assert!(!error.to_string().contains(['\n', '\r']), "{error:?}"),
            }
        });
        assert!(outcome.is_ok(), "a value parser panicked on {text:?}");
    }
}
