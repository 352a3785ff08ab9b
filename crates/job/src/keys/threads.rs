//! fio's threads, processes and job synchronization keys: ordering jobs (`stonewall`, `wait_for`, `exitall`), priorities, CPU and NUMA placement, and flows.

use super::values::set_if;
use super::values::{accept_without_effect, parse_small_int, NS_PER_US};
use super::{ApplyError, JobDraft, KeyDef};
use crate::error::{JobError, Location};
use crate::model::FlowSpec;
use crate::model::JobSpec;
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_count, parse_time_ns};

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "stonewall",
        aliases: &["wait_for_previous"],
        bare: true,
        meaning: "wait for earlier jobs to finish before starting",
        field: "stonewall",
        path: KeyPath::None,
        apply: |d, v| {
            d.stonewall = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "new_group",
        aliases: &[],
        bare: true,
        meaning: "start a new reporting group (the next groupid) without waiting",
        field: "new_group",
        path: KeyPath::None,
        apply: |d, v| {
            d.new_group = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "wait_for",
        aliases: &[],
        bare: false,
        meaning: "start the job once the earlier job of this name has finished (every clone of it)",
        field: "wait_for",
        path: KeyPath::None,
        apply: |d, v| {
            let v = v.trim();
            if v.is_empty() {
                return Err(ApplyError::Invalid("the name of an earlier job is needed".into()));
            }
            d.wait_for = Some(v.to_string());
            Ok(())
        },
    },
    KeyDef {
        name: "exitall",
        aliases: &[],
        bare: true,
        meaning: "when this job ends, stop the jobs exit_what names",
        field: "exitall",
        path: KeyPath::None,
        apply: |d, v| {
            d.exitall = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "exit_what",
        aliases: &[],
        bare: false,
        meaning: "what exitall stops: group (the job's reporting group, default), stonewall (every job running beside it) or all (every job, running or still to come)",
        field: "exit_what",
        path: KeyPath::None,
        apply: |d, v| {
            d.exit_what = Some(match v.trim().to_ascii_lowercase().as_str() {
                "group" => crate::ExitWhat::Group,
                "stonewall" => crate::ExitWhat::Stonewall,
                "all" => crate::ExitWhat::All,
                _ => {
                    return Err(ApplyError::Invalid(
                        "use group, stonewall or all".into(),
                    ))
                }
            });
            Ok(())
        },
    },
    KeyDef {
        name: "exitall_on_error",
        aliases: &[],
        bare: true,
        meaning: "when this job fails, stop every job",
        field: "exitall_on_error",
        path: KeyPath::None,
        apply: |d, v| {
            d.exitall_on_error = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "prio",
        aliases: &[],
        bare: false,
        meaning: "I/O priority level 0 (highest) to 7 of the job's threads (ioprio_set), in prioclass (best-effort unless set)",
        field: "prio",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_priority_level = Some(parse_small_int(v, crate::scheduling::IOPRIO_LEVEL_MAX)?);
            Ok(())
        },
    },
    KeyDef {
        name: "prioclass",
        aliases: &[],
        bare: false,
        meaning: "I/O priority class of the job's threads (ioprio_set): 1 real-time, 2 best-effort, 3 idle, 0 none (best-effort)",
        field: "prioclass",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_priority_class = Some(parse_small_int(v, crate::scheduling::IOPRIO_CLASS_MAX)?);
            Ok(())
        },
    },
    KeyDef {
        name: "flow",
        aliases: &[],
        bare: false,
        meaning: "this job's weight in its flow (flow_id): jobs of one flow issue I/O in the \
                  ratio of their weights (0, the default: in no flow; at most 1000)",
        field: "flow",
        path: KeyPath::None,
        apply: |d, v| {
            let weight: u32 = v
                .parse()
                .ok()
                .filter(|w| *w <= FLOW_MAX_WEIGHT)
                .ok_or_else(|| {
                    ApplyError::Invalid(format!("a weight from 0 to {FLOW_MAX_WEIGHT} is needed"))
                })?;
            d.flow_weight = Some(weight);
            Ok(())
        },
    },
    KeyDef {
        name: "flow_id",
        aliases: &[],
        bare: false,
        meaning: "the flow this job's flow weight counts in (default 0): jobs with the same \
                  flow_id share one",
        field: "flow_id",
        path: KeyPath::None,
        apply: |d, v| {
            d.flow_id = Some(
                v.parse()
                    .map_err(|_| ApplyError::Invalid("a whole number is needed".into()))?,
            );
            Ok(())
        },
    },
    KeyDef {
        name: "flow_sleep",
        aliases: &[],
        bare: false,
        meaning: "how long a job ahead of its flow share waits before it looks again \
                  (microseconds by default; 0: it looks again at once)",
        field: "flow_sleep",
        path: KeyPath::None,
        apply: |d, v| {
            d.flow_sleep_ns = Some(parse_time_ns(v, NS_PER_US)?);
            Ok(())
        },
    },
    KeyDef {
        name: "cpus_allowed",
        aliases: &[],
        bare: false,
        meaning: "CPUs the job's threads run on, such as 0-3,6 (each must exist on this machine)",
        field: "cpus_allowed",
        path: KeyPath::None,
        apply: |d, v| {
            d.cpus_allowed = Some(crate::queueing::parse_cpu_list(v).map_err(ApplyError::Invalid)?);
            Ok(())
        },
    },
    KeyDef {
        name: "cpus_allowed_policy",
        aliases: &[],
        bare: false,
        meaning: "shared: every thread of the job may use all of cpus_allowed; split: each thread (clone) gets one CPU of it in turn",
        field: "cpus_allowed_policy",
        path: KeyPath::None,
        apply: |d, v| {
            d.cpus_allowed_split = Some(match v.trim() {
                "shared" => false,
                "split" => true,
                _ => return Err(ApplyError::Invalid("use shared or split".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "numa_cpu_nodes",
        aliases: &[],
        bare: false,
        meaning: "accepted with a warning: storlab does not bind worker threads to NUMA nodes",
        field: "numa_cpu_nodes",
        path: KeyPath::None,
        apply: |d, v| {
            if !v.bytes().all(|b| b.is_ascii_digit() || b"-,".contains(&b)) && v != "all" {
                return Err(ApplyError::Invalid("a node list such as 0-1 or all is needed".into()));
            }
            accept_without_effect(d, "numa_cpu_nodes");
            Ok(())
        },
    },
    KeyDef {
        name: "numa_mem_policy",
        aliases: &[],
        bare: false,
        meaning: "NUMA placement of the job's I/O buffers: default, prefer:N, bind:NODES, \
                  interleave[:NODES] or local (mbind on the buffers)",
        field: "numa_mem_policy",
        path: KeyPath::None,
        apply: |d, v| {
            let online = crate::latency_numa::online_numa_nodes();
            d.numa_mem_policy =
                Some(crate::NumaMemPolicy::parse(v, &online).map_err(ApplyError::Invalid)?);
            Ok(())
        },
    },
    KeyDef {
        name: "thread",
        aliases: &["threads"],
        bare: true,
        meaning: "accepted for fio compatibility; storlab always runs workers as threads",
        field: "thread",
        path: KeyPath::None,
        apply: |_, v| {
            parse_bool(v)?;
            Ok(())
        },
    },
];

/// fio 3.33's `FLOW_MAX_WEIGHT` (flow.h): the largest `flow` weight its option parser takes.
const FLOW_MAX_WEIGHT: u32 = 1000;

/// linux/ioprio.h: `IOPRIO_CLASS_RT` to `IOPRIO_CLASS_IDLE`, the classes fio's `cmdprio_class`
/// takes.
const IOPRIO_CLASS_FIRST: u64 = 1;

const IOPRIO_CLASS_LAST: u64 = 3;

/// linux/ioprio.h: levels `0..IOPRIO_NR_LEVELS` (8) within the real-time and best-effort
/// classes, the values fio's `cmdprio` takes.
const IOPRIO_LEVEL_LAST: u64 = 7;

/// `cmdprio_class`: a class of linux/ioprio.h that carries a level.
pub(super) fn parse_ioprio_class(text: &str) -> Result<u8, ApplyError> {
    match parse_count(text)? {
        class @ IOPRIO_CLASS_FIRST..=IOPRIO_CLASS_LAST => Ok(class as u8),
        _ => Err(ApplyError::Invalid(
            "use 1 (real-time), 2 (best-effort) or 3 (idle)".into(),
        )),
    }
}

/// `cmdprio`: a level within a class.
pub(super) fn parse_ioprio_level(text: &str) -> Result<u8, ApplyError> {
    match parse_count(text)? {
        level @ 0..=IOPRIO_LEVEL_LAST => Ok(level as u8),
        _ => Err(ApplyError::Invalid(format!(
            "a priority level is 0 (highest) to {IOPRIO_LEVEL_LAST}"
        ))),
    }
}

impl JobDraft {
    /// Points a validation error at the line or flag that set the offending key, with the value
    /// as the user wrote it; errors about unset keys or the whole job go to `job_location`.
    /// fio's `wait_for` checks (init.c, `wait_for_ok`), against the jobs before this one: the
    /// named job exists among them, once, and is not this job.
    pub(crate) fn check_wait_for(
        &self,
        spec: &JobSpec,
        earlier: &[JobSpec],
        job_location: &Location,
    ) -> Result<(), JobError> {
        let Some(waitee) = &spec.wait_for else {
            return Ok(());
        };
        let named = earlier.iter().filter(|job| &job.name == waitee).count();
        let problem = if waitee == &spec.name {
            "a job cannot wait for itself".to_string()
        } else if named == 0 {
            format!(
                "no job named '{waitee}' comes before this one (fio waits only for an earlier job)"
            )
        } else if named > 1 {
            format!("{named} jobs before this one are named '{waitee}'; fio refuses a name that is not unique")
        } else {
            return Ok(());
        };
        let error = JobError::invalid(
            job_location.clone(),
            "wait_for",
            Some(waitee.clone()),
            problem,
        );
        Err(self.relocate(error, job_location))
    }

    /// Job ordering (`stonewall`, `new_group`, `wait_for`, `exitall`), priority, flows, NUMA
    /// memory and CPU placement.
    pub(super) fn build_synchronization(&self, spec: &mut JobSpec) {
        set_if(&mut spec.stonewall, self.stonewall);
        set_if(&mut spec.new_group, self.new_group);
        spec.wait_for = self.wait_for.clone();
        spec.exit_all = crate::ExitAll {
            on_end: self.exitall.unwrap_or(false),
            on_error: self.exitall_on_error.unwrap_or(false),
            what: self.exit_what.unwrap_or_default(),
        };
        // fio sets the priority only when either key is set (backend.c, fio_option_is_set).
        if self.io_priority_class.is_some() || self.io_priority_level.is_some() {
            spec.io_priority = Some(crate::IoPriority {
                class: self.io_priority_class.unwrap_or(0),
                level: self.io_priority_level.unwrap_or(0),
            });
        }
        // fio's flow.c: a job joins a flow only with a weight (`flow=0`, the default, is none).
        spec.flow = self.flow_weight.filter(|w| *w > 0).map(|weight| FlowSpec {
            id: self.flow_id.unwrap_or(0),
            weight,
            sleep_ns: self.flow_sleep_ns.unwrap_or(0),
        });
        spec.numa_mem_policy = self.numa_mem_policy.clone();
        // fio's policy applies to a CPU set; without `cpus_allowed` it has nothing to split.
        spec.cpus_allowed = self.cpus_allowed.clone().map(|cpus| crate::CpuAffinity {
            cpus,
            split: self.cpus_allowed_split == Some(true),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::error::Location;
    use crate::keys::JobDraft;

    /// `new_group` (fio examples steadystate.fio, waitfor.fio) is a boolean key kept on the
    /// job for the fio-shaped reports' `groupid`; it does not make the job wait.
    #[test]
    fn new_group_is_kept_without_stonewall() {
        let mut d = JobDraft::new();
        d.set("size", Some("1M"), &Location::Flag).unwrap();
        d.set("new_group", None, &Location::Flag).unwrap();
        let spec = d.finish("job", &Location::Job("job".into())).unwrap();
        assert!(spec.new_group);
        assert!(!spec.stonewall);
    }
}
