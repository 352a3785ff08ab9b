//! Fuzz target: the fio job-file reader (`parse_fio_str`), on its own and with a simulated
//! drive imposed as the command line's `--target` does. Any text gives jobs or one error line;
//! every accepted job keeps what validation promises (see `common/job_checks.rs`), and
//! imposing a simulated drive never turns an accepted file into a rejected one.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_job::model::Target;
use storlab_job::parse_fio_str;

#[path = "common/job_checks.rs"]
mod job_checks;

const FILE_NAME: &str = "fuzz.fio";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let plain = parse_fio_str(&text, FILE_NAME, None);
    job_checks::check_result(&plain, None);
    if let Err(error) = &plain {
        // Every error of a file reader names the file first.
        assert!(error.to_string().starts_with(FILE_NAME), "{error}");
    }

    let sim = Target::Sim(job_checks::SIM_PROFILE.into());
    let on_sim = parse_fio_str(&text, FILE_NAME, Some(&sim));
    job_checks::check_result(&on_sim, Some(&sim));
    // A simulated drive has a size and brings its engine, so no check that passed on the
    // file's own target can fail on it.
    if let Ok(plain) = &plain {
        let on_sim =
            on_sim.unwrap_or_else(|e| panic!("accepted without a target, not on sim: {e}"));
        let names = |set: &storlab_job::JobSet| -> Vec<String> {
            set.jobs.iter().map(|j| j.name.clone()).collect()
        };
        assert_eq!(names(plain), names(&on_sim));
    }
});
