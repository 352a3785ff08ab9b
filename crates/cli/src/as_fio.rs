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
        "debug",
        "fio's debug classes trace fio's internals; storlab has no such trace",
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
    // fio's default output is its human report.
    let mut formats = vec!["normal"];
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
        // fio reads its format switches in order: `--output-format` and `--minimal` replace
        // the formats, `--append-terse` adds terse (init.c, `parse_output_format`, cases 'm'
        // and 'f').
        match key {
            "output-format" => {
                // getopt takes `--output-format json` as well as `--output-format=json`.
                let value = match value {
                    Some(value) => value,
                    None => next_value(&mut rest, key)?,
                };
                formats = fio_formats(&value)?;
            }
            "minimal" => formats = vec!["terse"],
            "append-terse" => formats.push("terse"),
            _ => rewritten.push(arg.clone()),
        }
    }
    let formats = storlab_formats(&formats);
    rewritten.insert(4, format!("--output-format={}", formats[0]).into());
    for (at, also) in formats[1..].iter().enumerate() {
        rewritten.insert(5 + at, format!("--also-output-format={also}").into());
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

/// fio's format names in one `--output-format` value (one name or a comma list); `minimal` and
/// `csv` are fio's other names for terse.
fn fio_formats(value: &str) -> Result<Vec<&'static str>, String> {
    value
        .split(',')
        .map(|name| match name {
            "terse" | "minimal" | "csv" => Ok("terse"),
            "json" => Ok("json"),
            "json+" => Ok("json+"),
            "normal" => Ok("normal"),
            unknown => Err(format!(
                "--output-format={value}: '{unknown}': fio's formats are normal, json, json+, terse (minimal, csv); a comma list prints each"
            )),
        })
        .collect()
}

/// fio's formats as storlab's, in the order fio prints them whatever the order written: terse,
/// then JSON, then the human report (fio 3.33 fills one buffer per format and writes them in
/// that order). json+ is fio's JSON with histograms, so with both `json` and `json+` fio prints
/// one document, the json+ one.
fn storlab_formats(names: &[&str]) -> Vec<&'static str> {
    const FIO_ORDER: [(&str, &str); 4] = [
        ("terse", "terse"),
        ("json+", "fio-json+"),
        ("json", "fio-json"),
        ("normal", "fio-normal"),
    ];
    let plus = names.contains(&"json+");
    FIO_ORDER
        .iter()
        .filter(|(fio, _)| names.contains(fio) && !(plus && *fio == "json"))
        .map(|(_, storlab)| *storlab)
        .collect()
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
                "--output-format=fio-json",
                "--max-jobs=16",
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

    /// `--minimal` and `--output-format` replace the formats, `--append-terse` adds terse, in
    /// the order written; `csv` and `minimal` are fio's names for terse.
    #[test]
    fn format_switches_apply_in_the_order_written() {
        let formats = |args: &[&str]| {
            let got = storlab_argv(argv(args)).unwrap();
            got[4..]
                .iter()
                .map(|arg| arg.to_str().unwrap().to_string())
                .filter(|arg| arg.contains("output-format="))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            formats(&["fio", "--append-terse", "--name=a"]),
            ["--output-format=terse", "--also-output-format=fio-normal"]
        );
        assert_eq!(
            formats(&["fio", "--append-terse", "--output-format=json"]),
            ["--output-format=fio-json"]
        );
        assert_eq!(
            formats(&["fio", "--output-format=json", "--append-terse"]),
            ["--output-format=terse", "--also-output-format=fio-json"]
        );
        assert_eq!(
            formats(&["fio", "--output-format=json", "--minimal"]),
            ["--output-format=terse"]
        );
        assert_eq!(
            formats(&["fio", "--output-format=csv,normal"]),
            ["--output-format=terse", "--also-output-format=fio-normal"]
        );
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
        let error = storlab_argv(argv(&["fio", "--output-format=json,xml"])).unwrap_err();
        assert!(error.contains("'xml': fio's formats are"), "{error}");
    }
}
