//! The options of a job set as the user wrote them, for fio's `global options` and
//! `job options` in its JSON output (fio echoes its options as given, not as resolved).
//!
//! Checked against fio 3.33: command-line options given beside a job file come first in
//! `global options`, then the file's `[global]` keys; a job's `job options` hold only its own
//! section's keys (or, on the command line, `name` and the flags after its `--name`); keys given
//! bare (`time_based`) are left out, as fio leaves them out; with no global option written
//! anywhere fio prints no `global options` key at all.

use crate::fio::strip_comment;

/// One option as written: key and value, both as the user spelled them.
pub type WrittenOption = (String, String);

/// The options of a job set as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WrittenOptions {
    /// The global options; `None` when none was written (fio then omits the key).
    pub global: Option<Vec<WrittenOption>>,
    /// Each job's own options, in the order of the job set's jobs.
    pub jobs: Vec<Vec<WrittenOption>>,
    /// Each job's section name (a job file) or `--name` (flags), in the same order.
    pub names: Vec<String>,
    /// The job set as fio-style arguments (bare keys included), as fio's `--showcmd` prints
    /// them: the global options, then `--name=NAME` and the options of each job.
    pub arguments: Vec<String>,
}

const GLOBAL_NAME: &str = "global";

/// The options written in fio job-file `text`, after `global_flags` given beside it. Meant for
/// text the job reader accepted (lines it would refuse are skipped here, not reported).
pub fn of_fio_text(text: &str, global_flags: &[String]) -> WrittenOptions {
    let mut global: Vec<WrittenOption> = Vec::new();
    for option in global_flags.iter().filter_map(|f| flag(f)) {
        put(&mut global, option);
    }
    let mut jobs: Vec<Vec<WrittenOption>> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut global_arguments: Vec<String> = global_flags.to_vec();
    let mut job_arguments: Vec<String> = Vec::new();
    let mut in_global = false;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for raw_line in text.lines() {
        let line = strip_comment(raw_line).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            in_global = name.trim() == GLOBAL_NAME;
            if !in_global {
                jobs.push(Vec::new());
                names.push(name.trim().to_string());
                job_arguments.push(format!("--name={}", name.trim()));
            }
            continue;
        }
        let argument = match line.split_once('=') {
            Some((key, value)) => format!("--{}={}", key.trim(), value.trim()),
            None => format!("--{line}"),
        };
        if in_global || jobs.is_empty() {
            global_arguments.push(argument);
        } else {
            job_arguments.push(argument);
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let option = (key.trim().to_string(), value.trim().to_string());
        match jobs.last_mut() {
            Some(job) if !in_global => put(job, option),
            _ => put(&mut global, option),
        }
    }
    global_arguments.append(&mut job_arguments);
    WrittenOptions {
        global: (!global.is_empty()).then_some(global),
        jobs,
        names,
        arguments: global_arguments,
    }
}

/// The options written as fio-style flags (`--size=1m --name=a --rw=read`): those before the
/// first `--name` (or after `--name=global`, itself included as fio includes it) are global,
/// each `--name=NAME` starts a job whose options begin with its name. Flags with no `--name`
/// make one job (named `job`) holding them all, with no global options.
pub fn of_flags(flags: &[String]) -> WrittenOptions {
    let mut global: Vec<WrittenOption> = Vec::new();
    let mut jobs: Vec<Vec<WrittenOption>> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut in_global = true;
    for option in flags.iter().filter_map(|f| flag(f)) {
        let is_name = crate::keys::find_key(&option.0).is_some_and(|def| def.name == "name");
        if is_name {
            in_global = option.1 == GLOBAL_NAME;
            if in_global {
                put(&mut global, option);
            } else {
                names.push(option.1.clone());
                jobs.push(vec![option]);
            }
            continue;
        }
        match jobs.last_mut() {
            Some(job) if !in_global => put(job, option),
            _ => put(&mut global, option),
        }
    }
    if jobs.is_empty() {
        // storlab's one unnamed job: its flags are its own options.
        return WrittenOptions {
            global: None,
            jobs: vec![global],
            names: vec![crate::flags::DEFAULT_JOB_NAME.to_string()],
            arguments: flags.to_vec(),
        };
    }
    WrittenOptions {
        global: (!global.is_empty()).then_some(global),
        jobs,
        names,
        arguments: flags.to_vec(),
    }
}

/// fio 3.33's option aliases and the names it echoes them under (options.c: each entry's
/// `.alias` beside its `.name`): `blockalign` is listed as `ba`, `readwrite` as `rw`.
const FIO_ALIASES: [(&str, &str); 21] = [
    ("blockalign", "ba"),
    ("blocksize", "bs"),
    ("blocksize_range", "bsrange"),
    ("blocksize_unaligned", "bs_unaligned"),
    ("disable_bw", "disable_bw_measurement"),
    ("fileoffset", "offset"),
    ("fill_fs", "fill_device"),
    ("io_limit", "io_size"),
    ("iodepth_batch_complete", "iodepth_batch_complete_min"),
    ("iodepth_batch_submit", "iodepth_batch"),
    ("iomem", "mem"),
    ("mem_align", "iomem_align"),
    ("nr_files", "nrfiles"),
    ("ratecycle", "rate_cycle"),
    ("ratemin", "rate_min"),
    ("readwrite", "rw"),
    ("ss", "steadystate"),
    ("ss_dur", "steadystate_duration"),
    ("ss_ramp", "steadystate_ramp_time"),
    ("timeout", "runtime"),
    ("wait_for_previous", "stonewall"),
];

/// The name fio echoes an option written as `key` under.
fn fio_option_name(key: &str) -> &str {
    FIO_ALIASES
        .iter()
        .find(|(alias, _)| *alias == key)
        .map_or(key, |(_, name)| name)
}

/// Adds `option` under fio's name for it, or gives an option already written under that name
/// its new value in its place (fio lists each option once, where it was first given, with the
/// value that won, whichever of its names each setting used).
fn put(options: &mut Vec<WrittenOption>, (key, value): WrittenOption) {
    let key = fio_option_name(&key).to_string();
    match options.iter_mut().find(|(existing, _)| *existing == key) {
        Some(existing) => existing.1 = value,
        None => options.push((key, value)),
    }
}

/// `--key=value` as an option; a bare `--key` is left out, as fio leaves it out.
fn flag(text: &str) -> Option<WrittenOption> {
    let (key, value) = text.strip_prefix("--")?.split_once('=')?;
    Some((key.to_string(), value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<WrittenOption> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn file_options_keep_flags_first_then_global_and_each_section_its_own() {
        let text = "[global]\nsize=1m ; comment\nbs=4K\n[a]\nrw=read\ntime_based\n[b]\n";
        let flags = ["--runtime=1".into(), "--direct".into(), "--bs=8k".into()];
        let written = of_fio_text(text, &flags);
        // fio 3.33 lists `bs` once, where the flag put it, with the file's value.
        assert_eq!(
            written.global,
            Some(pairs(&[("runtime", "1"), ("bs", "4K"), ("size", "1m")]))
        );
        assert_eq!(written.jobs, vec![pairs(&[("rw", "read")]), vec![]]);
        assert_eq!(written.names, vec!["a", "b"]);
        let arguments = "--runtime=1 --direct --bs=8k --size=1m --bs=4K \
                         --name=a --rw=read --time_based --name=b";
        assert_eq!(written.arguments.join(" "), arguments);
    }

    /// fio echoes an option under its own name whichever alias wrote it, once.
    #[test]
    fn aliases_are_echoed_under_fios_name() {
        let written = of_flags(&[
            "--name=j".to_string(),
            "--blockalign=4k".to_string(),
            "--rw=read".to_string(),
            "--readwrite=write".to_string(),
            "--timeout=1".to_string(),
        ]);
        assert_eq!(
            written.jobs[0],
            pairs(&[
                ("name", "j"),
                ("ba", "4k"),
                ("rw", "write"),
                ("runtime", "1")
            ])
        );
    }

    #[test]
    fn a_file_without_global_options_has_none() {
        assert_eq!(of_fio_text("[a]\nrw=read\n", &[]).global, None);
    }

    #[test]
    fn flags_split_at_name_like_fio() {
        let flags: Vec<String> = [
            "--size=1m",
            "--name=a",
            "--rw=read",
            "--name=global",
            "--bs=8k",
        ]
        .map(String::from)
        .to_vec();
        let written = of_flags(&flags);
        assert_eq!(
            written.global,
            Some(pairs(&[("size", "1m"), ("name", "global"), ("bs", "8k")]))
        );
        assert_eq!(written.jobs, vec![pairs(&[("name", "a"), ("rw", "read")])]);
    }
}
