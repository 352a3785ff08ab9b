//! Fuzz target: the fio-style flag reader (`parse_flags`). The input is split into arguments at
//! newlines. Any arguments give jobs or one error line; every accepted job keeps what
//! validation promises (see `common/job_checks.rs`), with and without an imposed simulated
//! drive. Flags the job-file reader can express exactly (no `--name`, no comment or section
//! characters, no surrounding blanks) must mean the same as that file: one key table, one
//! meaning.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_job::keys::find_key;
use storlab_job::model::Target;
use storlab_job::{parse_fio_str, parse_flags, JobError};

#[path = "common/job_checks.rs"]
mod job_checks;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let args: Vec<String> = if text.is_empty() {
        Vec::new()
    } else {
        text.split('\n').map(str::to_string).collect()
    };
    let plain = parse_flags(&args, None);
    job_checks::check_result(&plain, None);

    let sim = Target::Sim(job_checks::SIM_PROFILE.into());
    let on_sim = parse_flags(&args, Some(&sim));
    job_checks::check_result(&on_sim, Some(&sim));
    if plain.is_ok() {
        assert!(
            on_sim.is_ok(),
            "accepted without a target, not on sim: {on_sim:?}"
        );
    }

    if let Some(file) = as_job_file(&args) {
        let from_file = parse_fio_str(&file, "flags.fio", None);
        match (&plain, &from_file) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "flags and file differ:\n{file}"),
            (Err(a), Err(b)) => assert_eq!(what(a), what(b), "flags and file differ:\n{file}"),
            _ => panic!("flags {plain:?} but file {from_file:?}:\n{file}"),
        }
    }
});

/// An error without its location (a flag there, a file line here).
fn what(error: &JobError) -> impl PartialEq + std::fmt::Debug + '_ {
    (error.kind, &error.key, &error.value, &error.detail)
}

/// The one-section job file saying what `args` say, when the file syntax can say it exactly.
fn as_job_file(args: &[String]) -> Option<String> {
    if args.is_empty() {
        return None;
    }
    let mut file = String::from("[job]\n");
    for arg in args {
        let flag = arg.strip_prefix("--")?;
        let (key, value) = match flag.split_once('=') {
            Some((key, value)) => (key, Some(value)),
            None => (flag, None),
        };
        let plain_char = |c: char| !c.is_whitespace() && !c.is_control() && !"[]#;".contains(c);
        if key.is_empty() || !key.chars().all(plain_char) {
            return None;
        }
        // `--name` starts a job on the command line but names one in a file; `include` is a
        // file directive.
        if find_key(key).is_some_and(|k| k.name == "name")
            || key.to_ascii_lowercase().starts_with("include")
        {
            return None;
        }
        match value {
            Some(value) => {
                let inner_ok = value.chars().all(|c| !c.is_control() && !"#;".contains(c));
                if !inner_ok || value.trim() != value {
                    return None;
                }
                file.push_str(&format!("{key}={value}\n"));
            }
            None => file.push_str(&format!("{key}\n")),
        }
    }
    Some(file)
}
