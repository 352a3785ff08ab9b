//! A what-if comparison: the same jobs or preset on several targets, one run each, compared
//! side by side. Here is what it is, below any front end: each target's run as it ends
//! ([`Finished`]), the order the targets run in and when a failure stops the next ones
//! ([`run_in_turn`]), the failure named with its target ([`name_failure`]), the command's end
//! ([`conclude`]), and a comparison spread over the processes of a multi-client run
//! ([`spread_share`], [`encode_share`], [`gather_shares`]: target `i` on rank `i mod size`,
//! every report to rank 0). The front end runs each target, moves the bytes between processes
//! and writes the outputs.

use crate::error::{bad_input, run_failed, LabError};
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use storlab_report::RunReport;

/// One target's finished run: its results, the id of the run that saved them (as the results
/// database writes it), and what cut it short, if anything did (a failed job, a failed run or
/// an interruption after some results were in).
pub struct Finished {
    pub report: RunReport,
    pub run_id: Option<String>,
    pub failure: Option<LabError>,
}

impl Finished {
    /// A run that ended as planned.
    pub fn complete(report: RunReport, run_id: Option<String>) -> Finished {
        Finished {
            report,
            run_id,
            failure: None,
        }
    }

    /// One target's part of a what-if comparison that `failure` cut short: its results, with
    /// the failure beside them, for the comparison to write with the other targets'; only the
    /// failure when nothing finished.
    pub fn compared_part(
        report: RunReport,
        run_id: Option<String>,
        failure: LabError,
    ) -> Result<Finished, LabError> {
        if report.jobs.is_empty() {
            return Err(failure);
        }
        Ok(Finished {
            report,
            run_id,
            failure: Some(failure),
        })
    }
}

/// The failing target's error, naming the target once (a path error starts with the path; a
/// job's failure already names its target).
pub fn name_failure(target: &OsStr, failure: LabError) -> LabError {
    let shown = Path::new(target).display().to_string();
    failure.with_message(|message| {
        if message.starts_with("--target ") || message.contains(&format!(" on {shown}: ")) {
            message
        } else if message.starts_with(&format!("{shown}: ")) {
            format!("--target {message}")
        } else {
            format!("--target {shown}: {message}")
        }
    })
}

/// Saved runs are labelled by their id, as `compare` labels them; unsaved by position.
pub fn run_label(index: usize, finished: &Finished) -> String {
    finished
        .run_id
        .clone()
        .unwrap_or_else(|| format!("t{}", index + 1))
}

/// The targets one after another in this process (`run_one(index, target)`): every run that
/// finished or failed part-way with results, labelled, and the first failure, named with its
/// target. A target whose jobs failed does not stop the next (as fio runs the jobs after a
/// failed one); a target that failed without results, or an interruption (`stop`), does.
pub fn run_in_turn(
    targets: &[OsString],
    stop: &AtomicBool,
    mut run_one: impl FnMut(usize, &OsStr) -> Result<Finished, LabError>,
) -> (Vec<(String, Finished)>, Option<LabError>) {
    let mut runs: Vec<(String, Finished)> = Vec::new();
    let mut first_failure = None;
    for (index, text) in targets.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        match run_one(index, text) {
            Ok(mut finished) => {
                let failure = finished.failure.take();
                runs.push((run_label(index, &finished), finished));
                if let Some(failure) = failure {
                    first_failure.get_or_insert(name_failure(text, failure));
                }
            }
            Err(failure) => {
                first_failure.get_or_insert(name_failure(text, failure));
                break;
            }
        }
    }
    // Stopped between two targets: the ones that did not run are the failure.
    if first_failure.is_none() && runs.len() < targets.len() {
        first_failure = Some(run_failed(format!(
            "interrupted: {} of {} targets ran",
            runs.len(),
            targets.len()
        )));
    }
    (runs, first_failure)
}

/// The command's end once every finished target's results were written (`written`): the
/// first failure, if any, saying where the results of the targets that ran are.
pub fn conclude(
    ran: usize,
    failure: Option<LabError>,
    written: Result<(), LabError>,
) -> Result<(), LabError> {
    match (failure, written) {
        (None, written) => written,
        (Some(failure), Ok(())) => Err(run_failed(format!(
            "{failure} (the results of the {ran} target(s) that ran are in the output)"
        ))),
        (Some(failure), Err(also)) => Err(run_failed(format!(
            "{failure}; writing the results of the targets that ran failed: {also}"
        ))),
    }
}

/// One target's run as it travels to rank 0: its target's index and its report, or (bad
/// input?, message).
type SharedRun = (usize, Result<RunReport, (bool, String)>);

/// The targets (by index, of `count`) that rank `rank` of `size` runs: target `i` runs on rank
/// `i mod size`.
pub fn spread_share(count: usize, rank: usize, size: usize) -> Vec<usize> {
    (0..count).filter(|index| index % size == rank).collect()
}

/// This rank's runs as it sends them to rank 0: each target's report, or its failure named
/// with its target (`targets` gives each index its text).
pub fn encode_share(
    targets: &[OsString],
    runs: Vec<(usize, Result<RunReport, LabError>)>,
) -> Result<serde_json::Value, LabError> {
    let mine: Vec<SharedRun> = runs
        .into_iter()
        .map(|(index, outcome)| {
            let outcome = outcome.map_err(|failure| {
                let failure = name_failure(&targets[index], failure);
                (
                    matches!(failure, LabError::BadInput(_)),
                    failure.to_string(),
                )
            });
            (index, outcome)
        })
        .collect();
    serde_json::to_value(&mine)
        .map_err(|error| run_failed(format!("cannot encode this rank's runs: {error}")))
}

/// Rank 0's view of every rank's share (`heard`, in rank order): each of the `count`
/// targets' report or failure, in target order. A target no rank ran is a failure.
pub fn gather_shares(
    heard: Vec<serde_json::Value>,
    count: usize,
) -> Result<Vec<Result<RunReport, LabError>>, LabError> {
    let mut outcomes: Vec<Option<Result<RunReport, LabError>>> = (0..count).map(|_| None).collect();
    for (from_rank, value) in heard.into_iter().enumerate() {
        let runs: Vec<SharedRun> = serde_json::from_value(value).map_err(|error| {
            run_failed(format!(
                "rank {from_rank}: its runs cannot be read: {error}"
            ))
        })?;
        for (index, outcome) in runs {
            if let Some(slot) = outcomes.get_mut(index) {
                *slot = Some(outcome.map_err(|(bad, message)| match bad {
                    true => bad_input(message),
                    false => run_failed(message),
                }));
            }
        }
    }
    Ok(outcomes
        .into_iter()
        .map(|outcome| outcome.unwrap_or_else(|| Err(run_failed("a target was run by no rank"))))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_names_its_target_once() {
        let target = OsStr::new("/tmp/x");
        let named = |message: &str| name_failure(target, bad_input(message)).to_string();
        assert_eq!(named("size: needed"), "--target /tmp/x: size: needed");
        assert_eq!(named("/tmp/x: missing"), "--target /tmp/x: missing");
        assert_eq!(named("--target sim:a: no"), "--target sim:a: no");
        assert_eq!(named("job 'j' on /tmp/x: EIO"), "job 'j' on /tmp/x: EIO");
        assert!(matches!(
            name_failure(target, run_failed("x")),
            LabError::RunFailed(_)
        ));
    }

    #[test]
    fn shares_cover_every_target_once_and_come_back_in_target_order() {
        let targets: Vec<OsString> = ["a", "b", "c"].iter().map(OsString::from).collect();
        let shares: Vec<Vec<usize>> = (0..2).map(|rank| spread_share(3, rank, 2)).collect();
        assert_eq!(shares, [vec![0, 2], vec![1]]);
        let report = |n: usize| {
            RunReport::new(
                storlab_report::ToolInfo::storlab(),
                n as u64,
                storlab_report::HostInfo::detect(),
            )
        };
        let rank0 = encode_share(&targets, vec![(0, Ok(report(0))), (2, Ok(report(2)))]);
        let rank1 = encode_share(&targets, vec![(1, Err(bad_input("no such stack")))]);
        let gathered = gather_shares(vec![rank0.unwrap(), rank1.unwrap()], 3).unwrap();
        assert_eq!(gathered[0].as_ref().unwrap().started_unix_ms, 0);
        assert_eq!(gathered[2].as_ref().unwrap().started_unix_ms, 2);
        let failure = gathered[1].as_ref().unwrap_err();
        assert!(matches!(failure, LabError::BadInput(_)));
        assert_eq!(failure.to_string(), "--target b: no such stack");
        let missing = gather_shares(vec![serde_json::json!([])], 1).unwrap();
        assert_eq!(
            missing[0].as_ref().unwrap_err().to_string(),
            "a target was run by no rank"
        );
    }
}
