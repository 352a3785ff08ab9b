//! Fuzz target: profile files. The first byte picks the category (hosts, controllers, links,
//! bridges, drives, stacks), the rest is the file's text, put in place of the part four shipped
//! stacks use: each stack resolves or is refused in one line, and what resolves builds and runs
//! requests with the data read back as written (see `common/sim_checks.rs`).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common/sim_checks.rs"]
mod sim_checks;

fuzz_target!(|data: &[u8]| {
    if let Some((&category, text)) = data.split_first() {
        sim_checks::check_profile_text(category, &String::from_utf8_lossy(text));
    }
});
