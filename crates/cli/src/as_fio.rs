//! `storlab fio ARGS` (or the binary started under the name `fio`): fio's command line with
//! fio's conventions, so a script written for fio runs unchanged (docs/decisions/0046). It is
//! `storlab run` with fio's output-format names (`normal`, `json`, `json+`, `terse`, and fio's
//! comma lists of them), fio's default format (`normal`, fio's human report), no results
//! database and fio's quiet stderr (no per-job lines, no status lines: `--status-interval`
//! prints fio's reports in the output, `fio_status.rs`; storlab's advice kept in the output).

use std::ffi::OsString;
use std::path::Path;

/// The hidden `run` flag that turns fio's conventions on (set only by this rewrite).
pub const AS_FIO_FLAG: &str = "--as-fio";

/// fio command-line options storlab does not take, each with why; they are refused by name in
/// one line rather than reported as an unknown job key.
const REFUSED: &[(&str, &str)] = &[
    (
        "cmdhelp",
        "storlab's job keys are listed by `storlab run --help` and explained in docs/job-format.md",
    ),
    (
        "enghelp",
        "storlab's engines are listed by `storlab engines`; their options by `storlab run --help`",
    ),
    (
        "debug",
        "fio's debug classes trace fio's internals; storlab has no such trace",
    ),
    (
        "append-terse",
        "storlab writes one output format per run (use --output-format=terse)",
    ),
    (
        "bandwidth-log",
        "fio's per-job bandwidth log of the whole run is not written; use write_bw_log= per job",
    ),
    (
        "inflate-log",
        "storlab writes no compressed logs (log_compression) to inflate",
    ),
    (
        "crctest",
        "fio's checksum speed test measures fio's own code, not storage",
    ),
    (
        "alloc-size",
        "fio's shared-memory pool size for its processes; storlab runs jobs as threads and needs none",
    ),
];

/// `argv` as `storlab run` takes it when it asks for fio (`storlab fio ...`, or a binary named
/// `fio`), otherwise unchanged. A fio option storlab refuses, or an output format fio does not
/// name, is an error line.
pub fn storlab_argv(argv: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let called_fio = argv
        .first()
        .and_then(|program| Path::new(program).file_name())
        .is_some_and(|name| name == "fio");
    let fio_args: &[OsString] = match argv.get(1) {
        _ if called_fio => &argv[1..],
        Some(first) if first == "fio" => &argv[2..],
        Some(first) if first == "run" => {
            refuse_unsupported(&argv[2..])?;
            return Ok(argv);
        }
        _ => return Ok(argv),
    };
    refuse_unsupported(fio_args)?;
    let program = OsString::from("storlab");
    let mut rewritten = vec![program, "run".into(), AS_FIO_FLAG.into(), "--no-db".into()];
    let mut format_given = false;
    let mut rest = fio_args.iter();
    while let Some(arg) = rest.next() {
        let Some(text) = arg.to_str() else {
            rewritten.push(arg.clone());
            continue;
        };
        let (key, value) = match text.strip_prefix("--") {
            Some(option) => match option.split_once('=') {
                Some((key, value)) => (key, Some(value.to_string())),
                None => (option, None),
            },
            None => {
                rewritten.push(arg.clone());
                continue;
            }
        };
        if key == "output-format" {
            // getopt takes `--output-format json` as well as `--output-format=json`.
            let value = match value {
                Some(value) => value,
                None => next_value(&mut rest, key)?,
            };
            format_given = true;
            let formats = storlab_formats(&value)?;
            rewritten.push(format!("--output-format={}", formats[0]).into());
            for also in &formats[1..] {
                rewritten.push(format!("--also-output-format={also}").into());
            }
            continue;
        }
        rewritten.push(arg.clone());
    }
    if !format_given {
        // fio's default output is its human report.
        rewritten.insert(4, "--output-format=fio-normal".into());
    }
    Ok(rewritten)
}

/// The first of fio's options that storlab refuses, named with why.
fn refuse_unsupported(args: &[OsString]) -> Result<(), String> {
    for arg in args.iter().filter_map(|arg| arg.to_str()) {
        if arg == "--" {
            break;
        }
        let key = arg
            .strip_prefix("--")
            .and_then(|option| option.split('=').next());
        if let Some((name, why)) = REFUSED.iter().find(|(name, _)| Some(*name) == key) {
            return Err(format!("--{name}: not supported by storlab ({why})"));
        }
    }
    Ok(())
}

fn next_value<'a>(
    rest: &mut impl Iterator<Item = &'a OsString>,
    key: &str,
) -> Result<String, String> {
    rest.next()
        .and_then(|value| value.to_str())
        .map(str::to_string)
        .ok_or_else(|| format!("--{key}: give a value"))
}

/// fio's output formats (one name or a comma list) as storlab's, in the order fio prints them
/// whatever the order written: terse, then JSON, then the human report (fio 3.33 fills one
/// buffer per format and writes them in that order). json+ is fio's JSON with histograms, so
/// with both `json` and `json+` fio prints one document, the json+ one.
fn storlab_formats(fio_names: &str) -> Result<Vec<&'static str>, String> {
    const FIO_ORDER: [(&str, &str); 4] = [
        ("terse", "terse"),
        ("json+", "fio-json+"),
        ("json", "fio-json"),
        ("normal", "fio-normal"),
    ];
    let names: Vec<&str> = fio_names.split(',').collect();
    if let Some(unknown) = names
        .iter()
        .find(|name| !FIO_ORDER.iter().any(|(fio, _)| fio == *name))
    {
        return Err(format!(
            "--output-format={fio_names}: '{unknown}': fio's formats are normal, json, json+, terse (a comma list prints each)"
        ));
    }
    let plus = names.contains(&"json+");
    Ok(FIO_ORDER
        .iter()
        .filter(|(fio, _)| names.contains(fio) && !(plus && *fio == "json"))
        .map(|(_, storlab)| *storlab)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn fio_formats_become_storlab_formats_and_the_rest_passes_through() {
        let got = storlab_argv(argv(&[
            "storlab",
            "fio",
            "--max-jobs=16",
            "--output-format",
            "json",
            "--output=o.json",
            "job.fio",
        ]))
        .unwrap();
        assert_eq!(
            got,
            argv(&[
                "storlab",
                "run",
                AS_FIO_FLAG,
                "--no-db",
                "--max-jobs=16",
                "--output-format=fio-json",
                "--output=o.json",
                "job.fio"
            ])
        );
        let named_fio = storlab_argv(argv(&["/usr/local/bin/fio", "--output-format=normal"]));
        assert_eq!(
            named_fio.unwrap()[4..],
            argv(&["--output-format=fio-normal"])[..]
        );
        let default = storlab_argv(argv(&["fio", "--name=a", "--rw=read"])).unwrap();
        assert_eq!(
            default[4..],
            argv(&["--output-format=fio-normal", "--name=a", "--rw=read"])[..]
        );
    }

    /// fio prints terse, then JSON, then its human report, whatever the order written.
    #[test]
    fn a_comma_list_becomes_the_formats_in_fios_print_order() {
        let got = storlab_argv(argv(&["fio", "--output-format=normal,json,terse"])).unwrap();
        assert_eq!(
            got[4..],
            argv(&[
                "--output-format=terse",
                "--also-output-format=fio-json",
                "--also-output-format=fio-normal"
            ])[..]
        );
        let plus = storlab_argv(argv(&["fio", "--output-format=json,json+"])).unwrap();
        assert_eq!(plus[4..], argv(&["--output-format=fio-json+"])[..]);
    }

    #[test]
    fn other_commands_are_untouched_and_refusals_say_why() {
        let run = argv(&["storlab", "run", "--rw=read"]);
        assert_eq!(storlab_argv(run.clone()).unwrap(), run);
        let error = storlab_argv(argv(&["storlab", "fio", "--crctest"])).unwrap_err();
        assert!(
            error.starts_with("--crctest: not supported by storlab ("),
            "{error}"
        );
        let error = storlab_argv(argv(&["storlab", "run", "--debug=io"])).unwrap_err();
        assert!(
            error.starts_with("--debug: not supported by storlab ("),
            "{error}"
        );
        let error = storlab_argv(argv(&["fio", "--output-format=json,csv"])).unwrap_err();
        assert!(error.contains("'csv': fio's formats are"), "{error}");
    }
}
