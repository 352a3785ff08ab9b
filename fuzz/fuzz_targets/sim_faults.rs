//! Fuzz target: fault plan texts (`--faults`). A text parses or is refused in one line; a plan
//! is taken or refused by each transport's stack in one line; a stack that takes it runs
//! requests to completion, each failing only with an errno (see `common/sim_checks.rs`).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common/sim_checks.rs"]
mod sim_checks;

fuzz_target!(|data: &[u8]| {
    sim_checks::check_fault_spec(&String::from_utf8_lossy(data));
});
