//! fio's reporting keys (`unified_rw_reporting`, `unit_base`, the percentile keys,
//! `significant_figures`, `disable_lat`/`clat`/`slat`/`bw_measurement`): every value fio 3.33
//! takes, kept in the job's [`FioReport`] for the fio-shaped outputs; what fio refuses, refused
//! in one line with fio's rule (docs/decisions/0058).

use super::{ApplyError, JobDraft, KeyDef};
use crate::model::{FioReport, JobSpec, UnifiedRwReporting};
use crate::paths::KeyPath;
use crate::size::parse_bool;

/// fio's `FIO_IO_U_LIST_MAX_LEN`: the most percentiles `percentile_list` holds.
const MAX_PERCENTILES: usize = 20;
/// fio's `significant_figures` range (options.c `minval`, `maxval`).
const SIGNIFICANT_FIGURES: std::ops::RangeInclusive<u8> = 1..=10;

/// The reporting keys as set, each `None` until set.
#[derive(Clone, Debug, Default)]
pub(super) struct ReportDraft {
    unified_rw_reporting: Option<UnifiedRwReporting>,
    unit_bits: Option<bool>,
    clat_percentiles: Option<bool>,
    lat_percentiles: Option<bool>,
    slat_percentiles: Option<bool>,
    /// The list as fio keeps it and its precision.
    percentile_list: Option<(Vec<f64>, u8)>,
    significant_figures: Option<u8>,
    pub(super) disable_lat: Option<bool>,
    disable_clat: Option<bool>,
    disable_slat: Option<bool>,
    disable_bw: Option<bool>,
}

impl ReportDraft {
    /// fio's `gtod_reduce=1` (options.c `str_gtod_reduce_cb`): every measurement but the I/O
    /// counts off, and the percentiles with them; keys written after it may turn them back on.
    pub(super) fn gtod_reduce(&mut self) {
        for disabled in [
            &mut self.disable_lat,
            &mut self.disable_clat,
            &mut self.disable_slat,
            &mut self.disable_bw,
        ] {
            *disabled = Some(true);
        }
        for percentiles in [
            &mut self.clat_percentiles,
            &mut self.lat_percentiles,
            &mut self.slat_percentiles,
        ] {
            *percentiles = Some(false);
        }
    }
}

fn unified(value: &str) -> Result<UnifiedRwReporting, ApplyError> {
    match value {
        "none" | "0" => Ok(UnifiedRwReporting::None),
        "mixed" | "1" => Ok(UnifiedRwReporting::Mixed),
        "both" | "2" => Ok(UnifiedRwReporting::Both),
        _ => Err(ApplyError::Invalid(
            "use none (0), mixed (1) or both (2), as fio".into(),
        )),
    }
}

/// fio's `unit_base`: 0 (auto: bytes for every engine storlab has), 8 (bytes) or 1 (bits).
fn unit_bits(value: &str) -> Result<bool, ApplyError> {
    match value {
        "0" | "8" => Ok(false),
        "1" => Ok(true),
        _ => Err(ApplyError::Invalid(
            "use 0 (auto), 8 (bytes) or 1 (bits), as fio".into(),
        )),
    }
}

/// fio's float list (parse.c, `FIO_OPT_FLOAT_LIST`): values split at `:`, each read as C's
/// `sscanf("%lf")` reads it (the longest number at its start) and kept when in [0, 100], at
/// most 20. fio reports a value it cannot take on stderr and leaves 0 in its place, refusing
/// the list only when no value is taken (its parser keeps the first success); its list ends at
/// its first 0 (stat.c counts up to it) and is sorted before it is printed. The precision is
/// the most digits after a point, fio counting, from each value taken, the digits after the
/// first point in the rest of the list.
fn percentile_list(value: &str) -> Result<(Vec<f64>, u8), ApplyError> {
    let mut list = Vec::with_capacity(MAX_PERCENTILES);
    let mut precision = 0u8;
    let mut taken = false;
    let mut rest = value;
    for (index, text) in value.split(':').enumerate() {
        let percentile = leading_float(text).filter(|p| (0.0..=100.0).contains(p));
        if index < MAX_PERCENTILES {
            list.push(percentile.unwrap_or(0.0));
        }
        if let (Some(_), true) = (percentile, index < MAX_PERCENTILES) {
            taken = true;
            if let Some(point) = rest.find('.') {
                let digits = rest[point + 1..]
                    .bytes()
                    .take_while(u8::is_ascii_digit)
                    .count();
                precision = precision.max(u8::try_from(digits).unwrap_or(u8::MAX));
            }
        }
        rest = rest.get(text.len() + 1..).unwrap_or("");
    }
    if !taken {
        return Err(ApplyError::Invalid(format!(
            "no percentile from 0 to 100 in '{value}' (fio: P:P:..., at most {MAX_PERCENTILES})"
        )));
    }
    if let Some(end) = list.iter().position(|&percentile| percentile == 0.0) {
        list.truncate(end);
    }
    list.sort_by(f64::total_cmp);
    Ok((list, precision))
}

/// The number at the start of `text` as C's `sscanf("%lf")` reads it (`99.9x` is 99.9), not
/// NaN; `None` when there is none.
fn leading_float(text: &str) -> Option<f64> {
    let text = text.trim_start();
    let numeric = text
        .char_indices()
        .take_while(|(_, c)| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        .last()
        .map_or(0, |(at, c)| at + c.len_utf8());
    (1..=numeric)
        .rev()
        .find_map(|end| text[..end].parse::<f64>().ok())
        .filter(|value| !value.is_nan())
}

fn significant_figures(value: &str) -> Result<u8, ApplyError> {
    let figures: u64 = value
        .parse()
        .map_err(|_| ApplyError::Invalid(format!("'{value}' is not a whole number")))?;
    u8::try_from(figures)
        .ok()
        .filter(|figures| SIGNIFICANT_FIGURES.contains(figures))
        .ok_or_else(|| {
            ApplyError::Invalid(format!(
                "{value} is out of fio's range {} to {}",
                SIGNIFICANT_FIGURES.start(),
                SIGNIFICANT_FIGURES.end()
            ))
        })
}

/// A boolean reporting key: `slot` picks its place in the draft.
fn set_bool(
    draft: &mut JobDraft,
    value: &str,
    slot: fn(&mut ReportDraft) -> &mut Option<bool>,
) -> Result<(), ApplyError> {
    *slot(&mut draft.report) = Some(parse_bool(value)?);
    Ok(())
}

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "unified_rw_reporting",
        aliases: &[],
        bare: false,
        meaning: "fio: none/0 (default: reads, writes and trims reported apart), mixed/1 (one mixed direction, their sums), both/2 (each, then mixed)",
        field: "unified_rw_reporting",
        path: KeyPath::None,
        apply: |d, v| {
            d.report.unified_rw_reporting = Some(unified(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "unit_base",
        aliases: &[],
        bare: false,
        meaning: "fio: 0 or 8 (default: rates in bytes), 1 (fio's human report in bits)",
        field: "unit_base",
        path: KeyPath::None,
        apply: |d, v| {
            d.report.unit_bits = Some(unit_bits(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "clat_percentiles",
        aliases: &[],
        bare: true,
        meaning: "fio: report completion latency percentiles (default 1)",
        field: "clat_percentiles",
        path: KeyPath::None,
        apply: |d, v| set_bool(d, v, |r| &mut r.clat_percentiles),
    },
    KeyDef {
        name: "lat_percentiles",
        aliases: &[],
        bare: true,
        meaning: "fio: report total latency percentiles (default 0)",
        field: "lat_percentiles",
        path: KeyPath::None,
        apply: |d, v| set_bool(d, v, |r| &mut r.lat_percentiles),
    },
    KeyDef {
        name: "slat_percentiles",
        aliases: &[],
        bare: true,
        meaning: "fio: report submission latency percentiles (default 0)",
        field: "slat_percentiles",
        path: KeyPath::None,
        apply: |d, v| set_bool(d, v, |r| &mut r.slat_percentiles),
    },
    KeyDef {
        name: "significant_figures",
        aliases: &[],
        bare: false,
        meaning: "fio: figures of fio's human report's rates and sizes, 1 to 10 (default 4)",
        field: "significant_figures",
        path: KeyPath::None,
        apply: |d, v| {
            d.report.significant_figures = Some(significant_figures(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "percentile_list",
        aliases: &[],
        bare: false,
        meaning: "fio: the latency percentiles reported, P:P:... (0 to 100, fio's first 20; default 1:5:10:...:99.99)",
        field: "percentile_list",
        path: KeyPath::None,
        apply: |d, v| {
            d.report.percentile_list = Some(percentile_list(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "disable_lat",
        aliases: &[],
        bare: true,
        meaning: "fio: no total latency figures in fio's reports (and no lat percentiles)",
        field: "disable_lat",
        path: KeyPath::None,
        apply: |d, v| set_bool(d, v, |r| &mut r.disable_lat),
    },
    KeyDef {
        name: "disable_clat",
        aliases: &[],
        bare: true,
        meaning: "fio: no completion latency figures, sync latencies or latency distribution in fio's reports",
        field: "disable_clat",
        path: KeyPath::None,
        apply: |d, v| set_bool(d, v, |r| &mut r.disable_clat),
    },
    KeyDef {
        name: "disable_slat",
        aliases: &[],
        bare: true,
        meaning: "fio: no submission latency figures in fio's reports",
        field: "disable_slat",
        path: KeyPath::None,
        apply: |d, v| set_bool(d, v, |r| &mut r.disable_slat),
    },
    KeyDef {
        name: "disable_bw_measurement",
        aliases: &["disable_bw"],
        bare: true,
        meaning: "fio: no per-I/O bandwidth entries in a write_bw_log (fio's reports keep their samples)",
        field: "disable_bw_measurement",
        path: KeyPath::None,
        apply: |d, v| set_bool(d, v, |r| &mut r.disable_bw),
    },
];

impl JobDraft {
    /// The reporting keys, with fio's fixup (init.c `fixup_options`): a disabled measurement
    /// has no percentiles.
    pub(super) fn build_report(&self, spec: &mut JobSpec) {
        let r = &self.report;
        let mut report = FioReport::default();
        let set = |slot: &mut bool, value: Option<bool>| {
            if let Some(value) = value {
                *slot = value;
            }
        };
        if let Some(unified) = r.unified_rw_reporting {
            report.unified_rw_reporting = unified;
        }
        set(&mut report.unit_bits, r.unit_bits);
        set(&mut report.clat_percentiles, r.clat_percentiles);
        set(&mut report.lat_percentiles, r.lat_percentiles);
        set(&mut report.slat_percentiles, r.slat_percentiles);
        set(&mut report.disable_lat, r.disable_lat);
        set(&mut report.disable_clat, r.disable_clat);
        set(&mut report.disable_slat, r.disable_slat);
        set(&mut report.disable_bw, r.disable_bw);
        if let Some((list, precision)) = &r.percentile_list {
            report.percentile_list = Some(list.clone());
            report.percentile_precision = *precision;
        }
        if let Some(figures) = r.significant_figures {
            report.significant_figures = figures;
        }
        report.lat_percentiles &= !report.disable_lat;
        report.clat_percentiles &= !report.disable_clat;
        report.slat_percentiles &= !report.disable_slat;
        let logs = &mut spec.fio_logs;
        if logs.latency_prefix.is_some() {
            logs.without_total_latency = report.disable_lat;
            logs.without_completion_latency = report.disable_clat;
            logs.without_submission_latency = report.disable_slat;
        }
        if logs.bandwidth_prefix.is_some() {
            logs.without_per_io_bandwidth = report.disable_bw;
        }
        if logs.iops_prefix.is_some() {
            logs.without_per_io_iops =
                report.disable_clat && report.disable_slat && report.disable_bw;
        }
        spec.fio_report = report;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::draft;

    #[test]
    fn a_percentile_list_is_kept_as_fio_keeps_it() {
        let parse = |text: &str| percentile_list(text).ok();
        let (list, precision) = parse("99.9:50:1e-3:100").unwrap();
        assert_eq!(list, vec![0.001, 50.0, 99.9, 100.0]);
        assert_eq!(
            precision, 1,
            "fio counts digits after a point, not exponents"
        );
        // fio's list ends at its first 0; the precision counts the whole list as written.
        let (list, precision) = parse("50:0:99.99").unwrap();
        assert_eq!((list, precision), (vec![50.0], 2));
        assert!(parse("0").unwrap().0.is_empty());
        // fio 3.33 keeps the first 20 of a longer list, and a value it cannot take as 0 (the
        // list's end there); it refuses a list only when it takes no value.
        let long: Vec<String> = (1..=21).map(|p| p.to_string()).collect();
        assert_eq!(parse(&long.join(":")).unwrap().0.len(), 20);
        assert_eq!(parse("50:200:99").unwrap().0, vec![50.0]);
        assert_eq!(parse("x:50:99.5").unwrap().0, Vec::<f64>::new());
        assert_eq!(parse("99.9x:5").unwrap().0, vec![5.0, 99.9]);
        assert!(parse("100.5").is_none());
        assert!(parse("-1").is_none());
        assert!(parse("200:x").is_none());
    }

    #[test]
    fn disabled_measurements_lose_their_percentiles_and_gtod_reduce_disables_all() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("lat_percentiles", Some("1")),
            ("disable_lat", None),
        ])
        .unwrap();
        assert!(spec.fio_report.disable_lat);
        assert!(!spec.fio_report.lat_percentiles);
        assert!(spec.fio_report.clat_percentiles);
        let spec = draft(&[
            ("size", Some("1M")),
            ("gtod_reduce", None),
            ("disable_slat", Some("0")),
        ])
        .unwrap();
        let report = &spec.fio_report;
        assert!(report.disable_lat && report.disable_clat && report.disable_bw);
        assert!(
            !report.disable_slat,
            "a key after gtod_reduce wins, as in fio"
        );
        assert!(!report.clat_percentiles && !report.slat_percentiles);
    }

    #[test]
    fn out_of_range_values_are_refused() {
        for (key, value) in [
            ("unified_rw_reporting", "3"),
            ("unit_base", "2"),
            ("significant_figures", "0"),
            ("significant_figures", "11"),
        ] {
            assert!(
                draft(&[("size", Some("1M")), (key, Some(value))]).is_err(),
                "{key}={value}"
            );
        }
        let spec = draft(&[
            ("size", Some("1M")),
            ("unified_rw_reporting", Some("both")),
            ("unit_base", Some("1")),
            ("significant_figures", Some("10")),
        ])
        .unwrap();
        assert_eq!(
            spec.fio_report.unified_rw_reporting,
            UnifiedRwReporting::Both
        );
        assert!(spec.fio_report.unit_bits);
        assert_eq!(spec.fio_report.significant_figures, 10);
    }
}
