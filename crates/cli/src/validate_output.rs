//! How `storlab validate` prints its results: a table for people (published, simulated, signed
//! error per entry, then the shares within ±10% and ±15%), JSON for machines, and CSV.

use serde::Serialize;
use storlab_lab::validate::measure::EntryResult;

/// The error bands whose shares are reported, in percent.
pub const BANDS_PERCENT: [f64; 2] = [10.0, 15.0];
/// Significant digits of the simulated figure in the table.
const TABLE_SIGNIFICANT_DIGITS: usize = 4;

/// Share (0..=1) of `results` whose |error| is at most `band_percent`.
pub fn share_within(results: &[EntryResult], band_percent: f64) -> f64 {
    if results.is_empty() {
        return 0.0;
    }
    let within = results
        .iter()
        .filter(|r| r.error_percent.abs() <= band_percent)
        .count();
    within as f64 / results.len() as f64
}

#[derive(Serialize)]
struct JsonEntry<'a> {
    id: &'a str,
    source: &'a str,
    stack: &'a str,
    metric: &'a str,
    published: f64,
    simulated: f64,
    error_percent: f64,
    warnings: &'a [String],
}

#[derive(Serialize)]
struct JsonOutput<'a> {
    entries: Vec<JsonEntry<'a>>,
    within_10_percent: f64,
    within_15_percent: f64,
}

/// `{"entries": [...], "within_10_percent": F, "within_15_percent": F}`, shares as fractions.
pub fn to_json(results: &[EntryResult]) -> String {
    let output = JsonOutput {
        entries: results
            .iter()
            .map(|r| JsonEntry {
                id: &r.id,
                source: &r.source,
                stack: &r.stack,
                metric: r.metric.name(),
                published: r.published,
                simulated: r.simulated,
                error_percent: r.error_percent,
                warnings: &r.warnings,
            })
            .collect(),
        within_10_percent: share_within(results, BANDS_PERCENT[0]),
        within_15_percent: share_within(results, BANDS_PERCENT[1]),
    };
    let mut text = serde_json::to_string_pretty(&output).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    text
}

/// One row per entry: id, source, stack, metric, published, simulated, error_percent, warnings
/// (joined with ` | `).
pub fn to_csv(results: &[EntryResult]) -> String {
    let mut text =
        String::from("id,source,stack,metric,published,simulated,error_percent,warnings\n");
    for r in results {
        text.push_str(&format!(
            "{},{},{},{},{},{},{},{}\n",
            storlab_report::csv_field(&r.id),
            storlab_report::csv_field(&r.source),
            storlab_report::csv_field(&r.stack),
            r.metric.name(),
            r.published,
            r.simulated,
            r.error_percent,
            storlab_report::csv_field(&r.warnings.join(" | "))
        ));
    }
    text
}

/// `value` with `digits` significant digits (fixed notation, at least none after the point).
fn significant(value: f64, digits: usize) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let magnitude = value.abs().log10().floor() as i64;
    let decimals = (digits as i64 - 1 - magnitude).max(0) as usize;
    format!("{value:.decimals$}")
}

/// The table: one row per entry, then the share within each band.
pub fn to_table(results: &[EntryResult]) -> String {
    let headers = ["id", "stack", "metric", "published", "simulated", "error %"];
    let rows: Vec<[String; 6]> = results
        .iter()
        .map(|r| {
            [
                r.id.clone(),
                r.stack.clone(),
                r.metric.name().to_string(),
                format!("{}", r.published),
                significant(r.simulated, TABLE_SIGNIFICANT_DIGITS),
                format!("{:+.1}", r.error_percent),
            ]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    // Text columns align left, figures right.
    let numeric = [false, false, false, true, true, true];
    let line = |cells: &[String]| {
        let text = cells
            .iter()
            .zip(widths)
            .zip(numeric)
            .map(|((cell, width), right)| {
                if right {
                    format!("{cell:>width$}")
                } else {
                    format!("{cell:<width$}")
                }
            })
            .collect::<Vec<_>>()
            .join("  ");
        format!("{}\n", text.trim_end())
    };
    let mut text = line(&headers.map(String::from));
    for row in &rows {
        text.push_str(&line(row));
    }
    text.push('\n');
    for band in BANDS_PERCENT {
        let share = share_within(results, band);
        let within = (share * results.len() as f64).round() as usize;
        text.push_str(&format!(
            "within ±{band}%: {within}/{} ({:.0}%)\n",
            results.len(),
            share * 100.0
        ));
    }
    let warned: Vec<&EntryResult> = results.iter().filter(|r| !r.warnings.is_empty()).collect();
    if !warned.is_empty() {
        text.push_str("\nwarnings:\n");
        for r in warned {
            for warning in &r.warnings {
                text.push_str(&format!(
                    "  [{}] {}\n",
                    storlab_report::escape_control(&r.id),
                    storlab_report::escape_control(warning)
                ));
            }
        }
    }
    let gaps: Vec<&EntryResult> = results.iter().filter(|r| r.known_gap.is_some()).collect();
    if !gaps.is_empty() {
        text.push_str("\nknown gaps (the reference file's reasons):\n");
        for r in gaps {
            let reason = r.known_gap.as_deref().unwrap_or_default();
            let stale = if r.error_percent.abs() <= BANDS_PERCENT[0] {
                " [now within ±10%: the gap can go]"
            } else {
                ""
            };
            text.push_str(&format!(
                "  {} ({:+.1}%): {reason}{stale}\n",
                r.id, r.error_percent
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_lab::validate::reference::Metric;

    fn result(id: &str, published: f64, simulated: f64) -> EntryResult {
        EntryResult {
            id: id.into(),
            source: "a, \"quoted\" source".into(),
            stack: "usb3-uas-ssd".into(),
            metric: Metric::Mbps,
            published,
            simulated,
            error_percent: (simulated - published) / published * 100.0,
            known_gap: None,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn shares_count_the_band_edges_in() {
        let results = [
            result("a", 100.0, 110.0),
            result("b", 100.0, 88.0),
            result("c", 100.0, 150.0),
            result("d", 100.0, 100.0),
        ];
        assert_eq!(share_within(&results, 10.0), 0.5);
        assert_eq!(share_within(&results, 15.0), 0.75);
        assert_eq!(share_within(&[], 10.0), 0.0);
    }

    #[test]
    fn known_gaps_are_listed_with_their_reasons_and_stale_ones_marked() {
        let mut missed = result("missed", 100.0, 60.0);
        missed.known_gap = Some("a reason".into());
        let mut caught_up = result("caught-up", 100.0, 95.0);
        caught_up.known_gap = Some("an old reason".into());
        let text = to_table(&[missed, caught_up, result("fine", 1.0, 1.0)]);
        let (_, notes) = text.split_once("known gaps").expect("a known-gaps section");
        assert!(notes.contains("  missed (-40.0%): a reason\n"), "{text}");
        assert!(
            notes.contains("caught-up (-5.0%): an old reason [now within ±10%: the gap can go]"),
            "{text}"
        );
        assert!(!notes.contains("fine"), "{text}");
        let without = to_table(&[result("fine", 1.0, 1.0)]);
        assert!(!without.contains("known gaps"), "{without}");
    }

    #[test]
    fn table_has_signed_errors_and_the_shares() {
        let text = to_table(&[result("seq", 244.8, 230.0), result("rnd", 1.4, 1.5)]);
        assert!(text.contains("-6.0"), "{text}");
        assert!(text.contains("+7.1"), "{text}");
        assert!(text.contains("230.0"), "{text}");
        assert!(text.contains("1.500"), "{text}");
        assert!(text.contains("within ±10%: 2/2 (100%)"), "{text}");
        assert!(text.contains("within ±15%: 2/2 (100%)"), "{text}");
    }

    #[test]
    fn json_has_exactly_the_documented_keys() {
        let json: serde_json::Value =
            serde_json::from_str(&to_json(&[result("seq", 200.0, 250.0)])).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["entries", "within_10_percent", "within_15_percent"]);
        let entry = json["entries"][0].as_object().unwrap();
        let mut keys: Vec<&str> = entry.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "error_percent",
                "id",
                "metric",
                "published",
                "simulated",
                "source",
                "stack",
                "warnings"
            ]
        );
        assert_eq!(entry["error_percent"], 25.0);
        assert_eq!(json["within_15_percent"], 0.0);
    }

    #[test]
    fn csv_quotes_what_needs_it() {
        let text = to_csv(&[result("seq", 200.0, 250.0)]);
        assert!(
            text.contains("seq,\"a, \"\"quoted\"\" source\",usb3-uas-ssd,mbps,200,250,25"),
            "{text}"
        );
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(244.83, 4), "244.8");
        assert_eq!(significant(0.81512, 4), "0.8151");
        assert_eq!(significant(12345.6, 4), "12346");
        assert_eq!(significant(0.0, 4), "0");
    }
}
