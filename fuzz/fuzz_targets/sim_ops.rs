//! Fuzz target: simulator operation sequences. Byte 0 picks one of four shipped stacks (UAS,
//! BOT, AHCI, a LucidPort UAS stack), byte 1 the queue depth, then four bytes per request (read,
//! write or trim; offset; length): every request completes exactly once, the clock never goes
//! back, and reads return what was last written (see `common/sim_checks.rs`).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common/sim_checks.rs"]
mod sim_checks;

fuzz_target!(|data: &[u8]| {
    sim_checks::check_ops(data);
});
