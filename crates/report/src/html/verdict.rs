//! The report's "Verdict on the path" table: for each job on a probed real target, the measured
//! rate against every ceiling of its path (the binding one first), and the what-if command on
//! the closest simulated stack.

use super::svg::escape;
use super::LabeledRun;
use std::fmt::Write;

/// The section (nothing when no job has a `path_verdict`).
pub(super) fn verdict_table(out: &mut String, runs: &[LabeledRun<'_>]) {
    let rows: Vec<(&str, &str, &serde_json::Value)> = runs
        .iter()
        .flat_map(|run| run.report.jobs.iter().map(move |job| (run, job)))
        .filter_map(|(run, job)| {
            Some((
                run.label.as_str(),
                job.setup.name.as_str(),
                job.path_verdict.as_ref()?,
            ))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push_str("<h2>Verdict on the path</h2>\n<p>The measured rate against each ceiling of the real target's path (computed from the link's signalling, line coding and framing, or the drive's data sheet; upper bounds), nearest first, and the same job on the closest simulated stack.</p>\n<table class=\"verdict\"><thead><tr><th>run</th><th>job</th><th>device</th><th>ceiling</th><th>limit MB/s</th><th>measured MB/s</th><th>share</th><th>basis</th></tr></thead><tbody>\n");
    for (label, job, verdict) in rows {
        let ceilings = verdict["ceilings"].as_array().cloned().unwrap_or_default();
        let span = ceilings.len() + 1;
        let _ = write!(
            out,
            "<tr><th rowspan=\"{span}\">{}</th><th rowspan=\"{span}\">{}</th><td rowspan=\"{span}\">{}</td>",
            escape(label),
            escape(job),
            escape(verdict["device"].as_str().unwrap_or("-"))
        );
        for (index, ceiling) in ceilings.iter().enumerate() {
            if index > 0 {
                out.push_str("<tr>");
            }
            let binding = match index {
                0 => " (binds)",
                _ => "",
            };
            let _ = writeln!(
                out,
                "<td style=\"text-align:left\">{}{binding}</td><td>{:.1}</td><td>{:.1}</td><td>{:.0}%</td><td style=\"text-align:left\">{}</td></tr>",
                escape(ceiling["name"].as_str().unwrap_or("-")),
                ceiling["limit_mbs"].as_f64().unwrap_or(0.0),
                ceiling["measured_mbs"].as_f64().unwrap_or(0.0),
                ceiling["share"].as_f64().unwrap_or(0.0) * 100.0,
                escape(ceiling["basis"].as_str().unwrap_or(""))
            );
        }
        let what_if = &verdict["what_if"];
        let what_if = match what_if["stack"].as_str() {
            Some(stack) => format!(
                "what-if on sim:{} ({}): <code>{}</code>",
                escape(stack),
                escape(what_if["why"].as_str().unwrap_or("")),
                escape(
                    what_if["command"]
                        .as_str()
                        .unwrap_or("storlab run … --target sim:…")
                )
            ),
            None => "no simulated stack is close to this path".into(),
        };
        let _ = writeln!(
            out,
            "<tr><td colspan=\"5\" style=\"text-align:left\">{}<br>{what_if}</td></tr>",
            escape(verdict["lines"][0].as_str().unwrap_or(""))
        );
    }
    out.push_str("</tbody></table>\n");
}
