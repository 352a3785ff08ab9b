//! The simulator's fuzz checks (`fuzz/fuzz_targets/common/sim_checks.rs`) over seeded inputs in
//! the normal suite: fault plan texts built from the grammar's pieces and mutated, shipped
//! profile files mutated (values replaced by edge values, lines dropped, text cut short), and
//! random operation sequences. The fuzz targets `sim_faults`, `sim_profiles` and `sim_ops` run
//! the same checks with coverage guidance (`docs/fuzzing.md`). A failure names its case; replay
//! one with `STORLAB_NO_PANIC_SEED=N cargo test -p storlab-sim --test it no_panic`.

#[path = "../../../../fuzz/fuzz_targets/common/sim_checks.rs"]
mod sim_checks;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use storlab_sim::profile::CATEGORIES;
use storlab_sim::profiles::embedded::EMBEDDED_PROFILES;

const CASES: u64 = 100;
const SOAK_CASES: u64 = 5_000;

fn pick<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items[(rng.next_u64() % items.len() as u64) as usize]
}

/// The seeds to run: one replayed from the environment, or `0..CASES` (`0..SOAK_CASES` with
/// `STORLAB_SOAK=1`).
fn seeds() -> Vec<u64> {
    match std::env::var("STORLAB_NO_PANIC_SEED") {
        Ok(s) => vec![s.parse().expect("STORLAB_NO_PANIC_SEED is a number")],
        Err(_) if std::env::var_os("STORLAB_SOAK").is_some() => (0..SOAK_CASES).collect(),
        Err(_) => (0..CASES).collect(),
    }
}

/// Runs `check` for `seed`, turning a panic into a message that says how to replay it.
fn run_case(what: &str, seed: u64, input: &str, check: impl FnOnce() + std::panic::UnwindSafe) {
    if let Err(panic) = std::panic::catch_unwind(check) {
        let why = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!(
            "{what} case {seed} failed: {why}\n  input: {input:?}\n  replay: \
             STORLAB_NO_PANIC_SEED={seed} cargo test -p storlab-sim --test it no_panic"
        );
    }
}

const FAULT_ITEMS: &[&str] = &[
    "seed=7",
    "seed=18446744073709551615",
    "timeout=1ns",
    "timeout=30s",
    "timeout=3600s",
    "timeout=2h",
    "retries=0",
    "retries=5",
    "retries=99999999999999999999",
    "reset_delay=0ms",
    "reset_delay=6s",
    "usb_crc=0.5",
    "usb_crc=1",
    "usb_crc=1e-300",
    "drop=1",
    "drop=0.3",
    "drop@cmd=1",
    "drop@t=0ns",
    "phase_error=1",
    "phase_error@cmd=3",
    "media_error=1",
    "media_error@lba=0",
    "media_error@lba=18446744073709551615",
    "media_error@t=1ms",
    "drop@lba=5",
    "flood=0.1",
    "=",
    "@",
    ",",
    "drop=NaN",
    "drop=-0",
    "timeout=1e3s",
    "hang=1",
    "hang@cmd=2",
    "hang_recovery=none",
    "hang_recovery=lu_reset",
    "hang_recovery=it_nexus_reset",
    "tm_timeout=1ns",
    "tm_timeout=3s",
    "power_loss@cmd=1",
    "power_loss@cmd=3",
    "power_loss@t=0ns",
    "power_loss@t=1ms",
    "power_loss=0.5",
    "hang_recovery=device_reset",
    "bridge_reset=1",
    "bridge_reset@cmd=2",
    "bridge_reset@t=1ms",
    "disconnect=1",
    "disconnect@cmd=1",
    "disconnect@t=0ns",
    "disconnect_for=1ns",
    "disconnect_for=23ms",
    "disconnect_for=24ms",
    "disconnect_for=2h",
    "usb\n_crc=1",
    "seed=\r1",
];

#[test]
fn fault_plan_texts_parse_or_are_refused_and_what_runs_completes() {
    for seed in seeds() {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = 1 + rng.next_u64() % 5;
        let mut text = (0..n)
            .map(|_| pick(&mut rng, FAULT_ITEMS))
            .collect::<Vec<_>>()
            .join(",");
        if rng.next_u64() % 4 == 0 && !text.is_empty() {
            // A cut or a flipped byte somewhere.
            let at = (rng.next_u64() % text.len() as u64) as usize;
            if text.is_char_boundary(at) {
                text.truncate(at);
            }
        }
        let input = text.clone();
        run_case("fault plan", seed, &input, move || {
            sim_checks::check_fault_spec(&text)
        });
    }
}

/// Values that probe a profile's limits: zeros, negatives, huge, fractional, wrong types.
const EDGE_VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "18446744073709551615",
    "1e308",
    "0.5",
    "nan",
    "\"text\"",
    "true",
    "[]",
    "{}",
];

/// A shipped profile with one change: a value replaced, a line dropped, or the text cut.
fn mutate(rng: &mut ChaCha8Rng, text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let value_lines: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains('=') && !lines[i].trim_start().starts_with('#'))
        .collect();
    match rng.next_u64() % 3 {
        0 if !value_lines.is_empty() => {
            let i = value_lines[(rng.next_u64() % value_lines.len() as u64) as usize];
            let key = lines[i].split('=').next().unwrap_or_default();
            let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            out[i] = format!("{key}= {}", pick(rng, EDGE_VALUES));
            out.join("\n")
        }
        1 if !lines.is_empty() => {
            let drop = (rng.next_u64() % lines.len() as u64) as usize;
            let out: Vec<&str> = lines
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != drop)
                .map(|(_, l)| *l)
                .collect();
            out.join("\n")
        }
        _ => {
            let mut at = (rng.next_u64() % (text.len() as u64 + 1)) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text[..at].to_string()
        }
    }
}

#[test]
fn mutated_profiles_resolve_or_are_refused_and_what_builds_runs() {
    for seed in seeds() {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9E37);
        let category_index = (rng.next_u64() % CATEGORIES.len() as u64) as u8;
        let category = CATEGORIES[usize::from(category_index)];
        let texts: Vec<&str> = EMBEDDED_PROFILES
            .iter()
            .filter(|(c, _, _)| *c == category)
            .map(|(_, _, text)| *text)
            .collect();
        let original = pick(&mut rng, &texts);
        let text = mutate(&mut rng, original);
        let input = format!("{category}: {text}");
        run_case("profile", seed, &input, move || {
            sim_checks::check_profile_text(category_index, &text)
        });
    }
}

#[test]
fn random_operation_sequences_complete_once_with_the_data_written() {
    for seed in seeds() {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0955);
        let mut bytes = vec![0u8; 2 + 4 * (1 + (rng.next_u64() % 48) as usize)];
        rng.fill_bytes(&mut bytes);
        let input = format!("{bytes:02x?}");
        run_case("operations", seed, &input, move || {
            sim_checks::check_ops(&bytes)
        });
    }
}
