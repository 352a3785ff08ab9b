//! A multi-client run's protocol (docs/distributed.md), over any [`Transport`] that hands every
//! process every process's bytes: MPI's all-gather under `--features mpi` (`mpi_world.rs`).
//! Every client says the same steps in the same order (its hosts, each stonewall group ready and
//! ended, the end of its run, its share of a validation); a step carries this client's part or
//! its failure, so a client that fails tells all the others at their next step, which fail
//! naming it, and nobody waits forever. Rank 0 reports: it merges the clients' statistics of
//! every job exactly (histograms bucket by bucket, never averaged) and writes the outputs and
//! the one saved run. Compiled without the feature too, so the commands need no `cfg` at their
//! call sites; nothing builds a [`Clients`] there.

#![cfg_attr(not(feature = "mpi"), allow(dead_code))]

use crate::exit::{bad_input, run_failed, Failure};
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use storlab_job::{JobSet, Target};
use storlab_lab::run::Peers;
use storlab_lab::sink::RunSink;
use storlab_report::{JobReport, RankRow};
use storlab_runner::fio_log::FioLogFile;
use storlab_runner::{JobOutcome, RunError};
use storlab_stats::{DirectionSummary, WorkerStats};

/// One direction of a client's row.
type PickDirection = fn(&RankRow) -> Option<&DirectionSummary>;

/// The placeholders a target path may hold in a multi-client run, replaced per client.
pub const RANK_PLACEHOLDER: &str = "{rank}";
pub const HOST_PLACEHOLDER: &str = "{host}";

/// Moves bytes between the processes of a run.
pub trait Transport {
    /// This process's number, 0-based.
    fn rank(&self) -> u32;
    /// How many processes run.
    fn size(&self) -> u32;
    /// Every process's `mine`, in rank order, on every process (a collective: every process
    /// calls it the same number of times).
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>>;
}

/// What one client says at a step.
#[derive(Serialize, Deserialize)]
enum Said {
    /// Its part of the step named `step`.
    Part {
        step: String,
        part: serde_json::Value,
    },
    /// It failed: `bad_input` keeps the failure's exit code (2 rather than 1).
    Failed { bad_input: bool, message: String },
}

/// One client's statistics of one finished job, as rank 0 merges them.
#[derive(Serialize, Deserialize)]
struct JobPart {
    name: String,
    /// The job's workers merged: counts and histograms of every worker of this client.
    stats: WorkerStats,
}

/// This process's place in a multi-client run.
pub struct Clients<'a> {
    transport: &'a dyn Transport,
    /// Every client's host name, in rank order.
    hosts: Vec<String>,
    /// A failure every client knows of (said at a step): no client says anything more.
    shared_failure: RefCell<Option<Failure>>,
    /// Steps said so far, for the out-of-step message.
    steps: Cell<u64>,
    /// Rank 0: every finished job's statistics from every client, in finishing order.
    gathered: RefCell<VecDeque<Vec<JobPart>>>,
}

impl<'a> Clients<'a> {
    /// Joins the run: every client learns every client's host.
    pub fn join(transport: &'a dyn Transport) -> Result<Self, Failure> {
        let mut clients = Self {
            transport,
            hosts: Vec::new(),
            shared_failure: RefCell::new(None),
            steps: Cell::new(0),
            gathered: RefCell::new(VecDeque::new()),
        };
        let parts = clients.exchange("hosts", Ok(serde_json::json!(local_host())))?;
        clients.hosts = parts
            .into_iter()
            .map(|part| part.as_str().unwrap_or("unknown").to_owned())
            .collect();
        Ok(clients)
    }

    pub fn rank(&self) -> u32 {
        self.transport.rank()
    }

    pub fn size(&self) -> u32 {
        self.transport.size()
    }

    /// Rank 0 writes the outputs and saves the run; the others only measure.
    pub fn reports(&self) -> bool {
        self.rank() == 0
    }

    /// This client's host.
    pub fn host(&self) -> &str {
        self.host_of(self.rank())
    }

    fn host_of(&self, rank: u32) -> &str {
        self.hosts
            .get(rank as usize)
            .map_or("unknown", String::as_str)
    }

    /// The run's hosts for its saved record: each distinct host once, in rank order.
    pub fn hosts_label(&self) -> String {
        let mut distinct: Vec<&str> = Vec::new();
        for host in &self.hosts {
            if !distinct.contains(&host.as_str()) {
                distinct.push(host);
            }
        }
        format!("{} ({} MPI ranks)", distinct.join(","), self.size())
    }

    /// The failure every client was told of, if one was.
    pub fn shared_failure(&self) -> Option<Failure> {
        self.shared_failure.borrow().clone()
    }

    /// Says this client's part of `step` (or its failure) and hears everyone's, in rank order.
    /// A failure said by any client (the lowest rank's, if several) is everyone's error, named
    /// by rank and host; so is a client at another step.
    pub fn exchange(
        &self,
        step: &str,
        mine: Result<serde_json::Value, Failure>,
    ) -> Result<Vec<serde_json::Value>, Failure> {
        if let Some(failure) = self.shared_failure() {
            return Err(failure);
        }
        let said = match mine {
            Ok(part) => Said::Part {
                step: step.to_owned(),
                part,
            },
            Err(failure) => Said::Failed {
                bad_input: matches!(failure, Failure::BadInput(_)),
                message: failure.to_string(),
            },
        };
        let bytes = serde_json::to_vec(&said).unwrap_or_default();
        let heard = self.transport.all_gather(&bytes);
        self.steps.set(self.steps.get() + 1);
        let mut parts = Vec::with_capacity(heard.len());
        // A client's failure (the lowest rank's) is the error; a client at another step is
        // one only when nobody failed: a failing client says so at whatever step it stopped.
        let mut failure = None;
        let mut out_of_step = None;
        for (rank, bytes) in heard.iter().enumerate() {
            let rank = rank as u32;
            let named =
                |message: &str| format!("rank {rank} (host {}): {message}", self.host_of(rank));
            match serde_json::from_slice::<Said>(bytes) {
                Ok(Said::Part { step: theirs, part }) if theirs == step => parts.push(part),
                Ok(Said::Part { step: theirs, .. }) => {
                    out_of_step.get_or_insert(run_failed(named(&format!(
                        "is at step '{theirs}' while rank {} is at '{step}' (step {}); the \
                         clients ran different jobs or one was interrupted",
                        self.rank(),
                        self.steps.get()
                    ))));
                }
                Ok(Said::Failed {
                    bad_input: true,
                    message,
                }) => {
                    failure.get_or_insert(bad_input(named(&message)));
                }
                Ok(Said::Failed { message, .. }) => {
                    failure.get_or_insert(run_failed(named(&message)));
                }
                Err(error) => {
                    failure.get_or_insert(run_failed(named(&format!(
                        "sent what this storlab cannot read ({error}); run the same storlab \
                         build on every host"
                    ))));
                }
            }
        }
        let failure = failure.or(out_of_step);
        match failure {
            Some(failure) => {
                *self.shared_failure.borrow_mut() = Some(failure.clone());
                Err(failure)
            }
            None => Ok(parts),
        }
    }

    /// The last step of a run: how this client's run ended, unless a failure was already
    /// shared (then every client knows it and nothing more is said). Every client's error is
    /// the first failing client's, named.
    pub fn finish(&self, mine: Result<(), Failure>) -> Result<(), Failure> {
        if let Some(failure) = self.shared_failure() {
            return Err(failure);
        }
        self.exchange("end", mine.map(|()| serde_json::Value::Null))
            .map(|_| ())
    }

    /// This client's copy of the job set: `{rank}` and `{host}` in a target path replaced by
    /// its own, and its workers numbered after the lower ranks' for `offset_increment`, as
    /// fio numbers a job's clones (client `r` of `numjobs = n` starts at clone `r * n`).
    pub fn localize(&self, set: &mut JobSet) {
        for job in &mut set.jobs {
            if let Target::Path(path) = &job.target {
                let text = path.to_string_lossy();
                if text.contains(RANK_PLACEHOLDER) || text.contains(HOST_PLACEHOLDER) {
                    let localized = text
                        .replace(RANK_PLACEHOLDER, &self.rank().to_string())
                        .replace(HOST_PLACEHOLDER, self.host());
                    job.target = Target::Path(localized.into());
                }
            }
            job.clone_index_base = self.rank().saturating_mul(job.numjobs);
        }
    }

    /// Rank 0's reports of a finished job: one aggregate row per local report's job, its
    /// rates the sum of the clients' own, its latencies from their merged histograms, and
    /// every client's own row under `ranks`. Other ranks' reports pass unchanged.
    pub fn aggregate(&self, local: &[JobReport]) -> Vec<JobReport> {
        if !self.reports() {
            return local.to_vec();
        }
        let Some(parts) = self.gathered.borrow_mut().pop_front() else {
            return local.to_vec();
        };
        let Some(first) = local.first() else {
            return Vec::new();
        };
        let mut merged = WorkerStats::new(0);
        let mut rows = Vec::with_capacity(parts.len());
        for (rank, part) in parts.iter().enumerate() {
            merged.merge(&part.stats);
            rows.push(RankRow::new(
                rank as u32,
                self.host_of(rank as u32).to_owned(),
                &part.stats,
            ));
        }
        let mut setup = first.setup.clone();
        setup.target.description = format!("{} ({} clients)", setup.target.description, rows.len());
        let mut notes = first.notes.clone();
        for report in &local[1..] {
            for warning in &report.notes.warnings {
                if !notes.warnings.contains(warning) {
                    notes.warnings.push(warning.clone());
                }
            }
        }
        let mut aggregate = JobReport::new(setup, notes, &merged);
        // The clients ran side by side: the aggregate rate is the sum of their rates (fio's
        // "All clients", IOR's aggregate), not the merged counts over the slowest window.
        let sum = |pick: PickDirection| {
            rows.iter()
                .filter_map(pick)
                .fold((0.0, 0.0), |(iops, bw), s| {
                    (iops + s.iops, bw + s.bw_bytes_per_s)
                })
        };
        let directions: [(Option<&mut DirectionSummary>, PickDirection); 3] = [
            (aggregate.read.as_mut(), |row| row.read.as_ref()),
            (aggregate.write.as_mut(), |row| row.write.as_ref()),
            (aggregate.trim.as_mut(), |row| row.trim.as_ref()),
        ];
        for (summary, pick) in directions {
            if let Some(summary) = summary {
                (summary.iops, summary.bw_bytes_per_s) = sum(pick);
            }
        }
        aggregate.ranks = rows;
        vec![aggregate]
    }
}

impl Peers for Clients<'_> {
    fn group_ready(&self) -> Result<(), RunError> {
        self.exchange("group ready", Ok(serde_json::Value::Null))
            .map(|_| ())
            .map_err(|failure| RunError::Peer(failure.to_string()))
    }

    fn group_ended(&self, outcomes: &[JobOutcome]) -> Result<(), RunError> {
        let mine: Vec<JobPart> = outcomes
            .iter()
            .map(|outcome| {
                let mut stats = WorkerStats::new(0);
                for worker in &outcome.workers {
                    stats.merge(worker);
                }
                JobPart {
                    name: outcome.job.name.clone(),
                    stats,
                }
            })
            .collect();
        let part = serde_json::to_value(&mine)
            .map_err(|error| run_failed(format!("cannot encode this client's results: {error}")));
        let heard = self
            .exchange("group ended", part)
            .map_err(|failure| RunError::Peer(failure.to_string()))?;
        if !self.reports() {
            return Ok(());
        }
        // Per job of the group: every client's part, in rank order.
        let mut per_client: Vec<VecDeque<JobPart>> = Vec::with_capacity(heard.len());
        for (rank, value) in heard.into_iter().enumerate() {
            let parts: Vec<JobPart> = serde_json::from_value(value).map_err(|error| {
                RunError::Peer(format!(
                    "rank {rank} (host {}): its results cannot be read: {error}",
                    self.host_of(rank as u32)
                ))
            })?;
            per_client.push(parts.into());
        }
        let mut gathered = self.gathered.borrow_mut();
        for outcome in outcomes {
            let mut job = Vec::with_capacity(per_client.len());
            for (rank, parts) in per_client.iter_mut().enumerate() {
                match parts.pop_front() {
                    Some(part) if part.name == outcome.job.name => job.push(part),
                    _ => {
                        return Err(RunError::Peer(format!(
                            "rank {rank} (host {}) ran other jobs than rank 0 (job '{}'); give \
                             every client the same job file",
                            self.host_of(rank as u32),
                            outcome.job.name
                        )))
                    }
                }
            }
            gathered.push_back(job);
        }
        Ok(())
    }
}

/// The sink of a multi-client run: rank 0 hands its sink each job's aggregate; the other
/// ranks' sinks (progress only, nothing saved) get their own rows.
pub struct ClientsSink<'s, 'c> {
    pub inner: &'s mut dyn RunSink,
    pub clients: &'s Clients<'c>,
    /// The reports handed on, in order: rank 0's aggregates replace its own in the output.
    pub handed_on: Vec<JobReport>,
}

impl RunSink for ClientsSink<'_, '_> {
    fn started(&mut self, points: usize) {
        self.inner.started(points);
    }

    fn point_done(&mut self, name: &str, reports: &[JobReport], summary: &str) {
        let reports = self.clients.aggregate(reports);
        self.inner.point_done(name, &reports, summary);
        self.handed_on.extend(reports);
    }

    fn fio_logs(&mut self, files: &[FioLogFile]) {
        self.inner.fio_logs(files);
    }

    fn ended(&mut self) {
        self.inner.ended();
    }
}

/// This host's name as MPI and people know it.
fn local_host() -> String {
    storlab_report::HostInfo::detect().hostname
}
