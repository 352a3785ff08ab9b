//! The report's table of repeat statistics (`run --repeat N`): for each run with repeats, each
//! job's headline figures with their mean, standard deviation and 95% interval.

use super::svg::escape;
use super::{format_latency, format_mb_s, LabeledRun, BYTES_PER_MB};
use crate::repeats::{signed, summarise_repeats, Formatter};
use std::fmt::Write;

/// The `Repeats` section (nothing when no run has repeats).
pub(super) fn repeats_table(out: &mut String, runs: &[LabeledRun<'_>]) {
    let summaries: Vec<_> = runs
        .iter()
        .map(|run| (run.label.as_str(), summarise_repeats(&run.report.jobs)))
        .filter(|(_, summaries)| !summaries.is_empty())
        .collect();
    if summaries.is_empty() {
        return;
    }
    out.push_str("<h2>Repeats</h2>\n<p>Mean, standard deviation and 95% interval of the mean (Student's t) of each figure over a job's repeats.</p>\n<table class=\"repeats\"><thead><tr><th>run</th><th>job</th><th>target</th><th>dir</th><th>repeats</th><th>figure</th><th>mean</th><th>sd</th><th>95% interval</th></tr></thead><tbody>\n");
    for (label, run_summaries) in summaries {
        for summary in run_summaries {
            for (position, (name, spread)) in summary.figures().into_iter().enumerate() {
                let format: Formatter = match position {
                    0 => |v| format_mb_s(v / BYTES_PER_MB),
                    1 => |v| format!("{v:.0}"),
                    _ => format_latency,
                };
                let interval = match (spread.ci95_low, spread.ci95_high) {
                    (Some(low), Some(high)) => {
                        format!("{} to {}", signed(low, format), signed(high, format))
                    }
                    _ => "-".to_owned(),
                };
                let _ = writeln!(
                    out,
                    "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td><td>{name}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(label),
                    escape(&summary.job),
                    escape(&summary.target),
                    escape(&summary.direction),
                    spread.n,
                    summary.repeats,
                    format(spread.mean),
                    spread.stddev.map_or_else(|| "-".to_owned(), format),
                    escape(&interval)
                );
            }
        }
    }
    out.push_str("</tbody></table>\n");
}
