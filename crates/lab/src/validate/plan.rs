//! Resolves every entry of a reference file before anything runs: the stack must exist in the
//! profiles, the preset must load and its point selector must pick exactly one point, and the
//! job keys must make a runnable job. The result is the sweep points `storlab run` would run.

use super::reference::{job_error_detail, Entry, Reference, ReferenceError, Scenario, Workload};
use crate::sweep::{job_points, preset_points};
use storlab_job::keys::{find_key, JobDraft};
use storlab_job::preset::{Preset, SweepPoint, COORD_ROUND};
use storlab_job::steps::DeviceState;
use storlab_job::{JobSet, Location, Target};
use storlab_sim::ProfileSet;

/// How many candidate points an ambiguous or empty selection lists.
const LISTED_POINTS: usize = 6;

/// A scenario ready to run: the points of its sweep and the one whose figure is compared.
#[derive(Clone, Debug)]
pub struct PlannedScenario {
    /// The preset, for its steady-state rule (rounds until the figures settle).
    pub preset: Option<Preset>,
    /// What runs, in order: the selected point alone, or every point of a steady-state preset
    /// (its rounds cover the whole matrix, as `storlab run --preset` does).
    pub points: Vec<SweepPoint>,
    /// The point whose figure is compared.
    pub selected: SweepPoint,
    pub state: DeviceState,
    /// The scenario's fault plan, if it has one.
    pub faults: Option<storlab_sim::FaultPlan>,
}

/// An entry with its scenarios resolved.
#[derive(Clone, Debug)]
pub struct PlannedEntry {
    pub entry: Entry,
    pub scenario: PlannedScenario,
    pub denominator: Option<PlannedScenario>,
}

/// Resolve every entry of `reference` against `profiles`; the first problem is the error.
pub fn plan(
    reference: &Reference,
    profiles: &ProfileSet,
) -> Result<Vec<PlannedEntry>, ReferenceError> {
    reference
        .entries
        .iter()
        .map(|entry| {
            let error = |prefix: &str, (key, detail): (String, String)| ReferenceError {
                file: reference.file.clone(),
                location: format!("{}: {prefix}{key}: ", entry.label()),
                detail,
            };
            let scenario = plan_scenario(
                &entry.scenario,
                &entry.id,
                &reference.default_keys,
                profiles,
            )
            .map_err(|e| error("", e))?;
            let denominator = entry
                .denominator
                .as_ref()
                .map(|d| {
                    plan_scenario(
                        d,
                        &format!("{} (denominator)", entry.id),
                        &reference.default_keys,
                        profiles,
                    )
                    .map_err(|e| error("denominator.", e))
                })
                .transpose()?;
            Ok(PlannedEntry {
                entry: entry.clone(),
                scenario,
                denominator,
            })
        })
        .collect()
}

/// (key, what is wrong).
type FieldError = (String, String);

fn canonical(key: &str) -> &str {
    find_key(key).map_or(key, |def| def.name)
}

fn plan_scenario(
    scenario: &Scenario,
    job_name: &str,
    default_keys: &[(String, String)],
    profiles: &ProfileSet,
) -> Result<PlannedScenario, FieldError> {
    let spec = profiles
        .resolve(&scenario.stack)
        .map_err(|e| ("stack".to_string(), e.to_string()))?;
    let faults = match &scenario.faults {
        Some(text) => {
            let plan = storlab_sim::FaultPlan::parse(text).map_err(|why| ("faults".into(), why))?;
            // Refused here, in one line, if the stack's transport cannot have these faults.
            storlab_sim::Simulator::new(spec, 0)
                .and_then(|mut sim| sim.set_faults(plan.clone()))
                .map_err(|e| ("faults".to_string(), e.to_string()))?;
            Some(plan)
        }
        None => None,
    };
    let target = Target::Sim(scenario.stack.clone());
    match &scenario.workload {
        Workload::PresetPoint { preset, point } => {
            let preset = storlab_job::preset::load(preset)
                .map_err(|e| ("preset".to_string(), e.to_string()))?;
            // Defaults do not override what the point sweeps: the point sets those itself.
            let swept = preset.swept_keys();
            let overrides: Vec<(String, Option<String>)> = default_keys
                .iter()
                .filter(|(key, _)| !swept.contains(&canonical(key)))
                .chain(&scenario.keys)
                .map(|(key, value)| (key.clone(), Some(value.clone())))
                .collect();
            let points = preset_points(&preset, &overrides, &target)
                .map_err(|e| ("keys".to_string(), e.to_string()))?;
            let selected = select_point(&preset, &points, point)?;
            let state = scenario.state.unwrap_or(preset.state);
            let points = match preset.steady_state {
                Some(_) => points,
                None => vec![selected.clone()],
            };
            Ok(PlannedScenario {
                preset: Some(preset),
                points,
                selected,
                state,
                faults,
            })
        }
        Workload::Job { keys } => {
            let mut draft = JobDraft::new();
            let sections = [
                ("defaults.keys", default_keys),
                ("job", keys.as_slice()),
                ("keys", scenario.keys.as_slice()),
            ];
            for (section, pairs) in sections {
                for (key, value) in pairs {
                    draft
                        .set(key, Some(value), &Location::Unknown)
                        .map_err(|e| (format!("{section}.{key}"), job_error_detail(&e)))?;
                }
            }
            let sim_target = format!("sim:{}", scenario.stack);
            for (key, value) in [("filename", sim_target.as_str()), ("ioengine", "sim")] {
                draft
                    .set(key, Some(value), &Location::Unknown)
                    .map_err(|e| ("stack".to_string(), job_error_detail(&e)))?;
            }
            let mut job = draft
                .finish(job_name, &Location::Unknown)
                .map_err(|e| ("job".to_string(), job_error_detail(&e)))?;
            // A calibration scenario is storlab's own measurement, not a fio job: it keeps
            // storlab's generator so the reference table does not move (ADR 0021).
            job.fio_random = None;
            // One figure per scenario: workers are reported together, as preset points are.
            job.group_reporting = true;
            job.stonewall = true;
            let points = job_points(JobSet { jobs: vec![job] });
            let selected = points[0].clone();
            Ok(PlannedScenario {
                preset: None,
                points,
                selected,
                state: scenario.state.unwrap_or(DeviceState::AsFound),
                faults,
            })
        }
    }
}

/// The one point of `points` whose coordinates include every (name, value) of `selector`.
fn select_point(
    preset: &Preset,
    points: &[SweepPoint],
    selector: &[(String, String)],
) -> Result<SweepPoint, FieldError> {
    for (name, _) in selector {
        if !points.iter().any(|p| p.coord(name).is_some()) {
            let mut names: Vec<&str> = points
                .iter()
                .flat_map(|p| p.coords.iter().map(|(n, _)| n.as_str()))
                .collect();
            names.sort_unstable();
            names.dedup();
            return Err((
                format!("point.{name}"),
                format!(
                    "no point of preset {} has this coordinate; its coordinates: {}",
                    preset.name,
                    names.join(", ")
                ),
            ));
        }
    }
    let matching: Vec<&SweepPoint> = points
        .iter()
        .filter(|p| selector.iter().all(|(n, v)| p.coord(n) == Some(v.as_str())))
        .collect();
    let describe = |list: &[&SweepPoint]| {
        let mut text = list
            .iter()
            .take(LISTED_POINTS)
            .map(|p| describe_point(p))
            .collect::<Vec<_>>()
            .join("; ");
        if list.len() > LISTED_POINTS {
            text.push_str(&format!("; ... ({} in all)", list.len()));
        }
        text
    };
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err((
            "point".into(),
            format!(
                "matches no point of preset {}; its points: {}",
                preset.name,
                describe(&points.iter().collect::<Vec<_>>())
            ),
        )),
        several => Err((
            "point".into(),
            format!(
                "matches {} points of preset {} ({}); add coordinates to pick one",
                several.len(),
                preset.name,
                describe(several)
            ),
        )),
    }
}

/// `series=Seq, rw=read, direction=read, ...` for messages.
fn describe_point(point: &SweepPoint) -> String {
    point
        .coords
        .iter()
        .filter(|(name, _)| name != COORD_ROUND)
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::reference::parse;

    fn plan_text(body: &str) -> Result<Vec<PlannedEntry>, ReferenceError> {
        let text = format!("[[entry]]\nid = \"a\"\nsource = \"s\"\n{body}\n");
        plan(&parse(&text, "ref.toml").unwrap(), &ProfileSet::embedded())
    }

    fn error_of(body: &str) -> String {
        let line = plan_text(body).expect_err("should be rejected").to_string();
        assert!(line.starts_with("ref.toml: entry 'a': "), "{line}");
        assert!(!line.contains('\n'), "{line}");
        line
    }

    const CDM_SEQ_READ: &str = "preset = \"cdm\"\npoint = { series = \"Seq\", direction = \"read\" }\nmetric = \"mbps\"\npublished = 1";

    #[test]
    fn a_preset_point_resolves_to_one_sim_job_with_keys_applied() {
        let body =
            format!("stack = \"usb3-uas-ssd\"\n{CDM_SEQ_READ}\nkeys = {{ runtime = \"1s\" }}");
        let planned = plan_text(&body).unwrap();
        let scenario = &planned[0].scenario;
        assert_eq!(scenario.points.len(), 1);
        let job = &scenario.selected.job;
        assert_eq!(job.target, Target::Sim("usb3-uas-ssd".into()));
        assert_eq!(job.engine, storlab_job::EngineKind::Sim);
        assert_eq!(job.read_percent, 100);
        assert_eq!(job.runtime_ns, Some(1_000_000_000));
        assert_eq!(scenario.state, DeviceState::AsFound);
    }

    #[test]
    fn defaults_yield_to_swept_keys_and_entry_keys() {
        let text = format!(
            "[defaults]\nkeys = {{ rw = \"write\", runtime = \"2s\", bs = \"64k\" }}\n[[entry]]\nid = \"a\"\nsource = \"s\"\nstack = \"usb3-uas-ssd\"\n{CDM_SEQ_READ}\nkeys = {{ runtime = \"1s\" }}\n"
        );
        let planned = plan(&parse(&text, "ref.toml").unwrap(), &ProfileSet::embedded()).unwrap();
        let job = &planned[0].scenario.selected.job;
        // rw is swept by cdm: the point's read stays; bs is fixed by the series but not swept,
        // so the default overrides it (as --bs would); runtime comes from the entry.
        assert_eq!(job.read_percent, 100);
        assert_eq!(
            job.block_size_read,
            storlab_job::BlockSizeSpec::Fixed(64 * 1024)
        );
        assert_eq!(job.runtime_ns, Some(1_000_000_000));
    }

    #[test]
    fn an_inline_job_gets_the_stack_and_the_id() {
        let planned = plan_text(
            "stack = \"usb3-bot-ssd\"\njob = { rw = \"randwrite\", bs = \"4k\", size = \"64m\", number_ios = 100 }\nstate = \"fresh\"\nmetric = \"iops\"\npublished = 1",
        )
        .unwrap();
        let scenario = &planned[0].scenario;
        assert_eq!(scenario.selected.job.name, "a");
        assert_eq!(
            scenario.selected.job.target,
            Target::Sim("usb3-bot-ssd".into())
        );
        assert_eq!(scenario.state, DeviceState::Fresh);
    }

    #[test]
    fn unknown_stack_is_refused() {
        let line = error_of(&format!("stack = \"no-such-stack\"\n{CDM_SEQ_READ}"));
        assert!(line.contains("entry 'a': stack: unknown stack"), "{line}");
    }

    #[test]
    fn unknown_preset_is_refused() {
        let line = error_of(&format!(
            "stack = \"usb3-uas-ssd\"\n{}",
            CDM_SEQ_READ.replace("\"cdm\"", "\"cdm2\"")
        ));
        assert!(line.contains("entry 'a': preset: unknown preset"), "{line}");
    }

    #[test]
    fn point_matching_nothing_or_several_is_refused() {
        let line = error_of(&format!(
            "stack = \"usb3-uas-ssd\"\n{}",
            CDM_SEQ_READ.replace("\"Seq\"", "\"Sequential\"")
        ));
        assert!(
            line.contains("entry 'a': point: matches no point of preset cdm"),
            "{line}"
        );
        let line = error_of(&format!(
            "stack = \"usb3-uas-ssd\"\n{}",
            CDM_SEQ_READ.replace(", direction = \"read\"", "")
        ));
        assert!(
            line.contains("entry 'a': point: matches 2 points of preset cdm"),
            "{line}"
        );
        let line = error_of(&format!(
            "stack = \"usb3-uas-ssd\"\n{}",
            CDM_SEQ_READ.replace("direction", "way")
        ));
        assert!(
            line.contains("entry 'a': point.way: no point of preset cdm"),
            "{line}"
        );
    }

    #[test]
    fn a_fault_plan_the_stacks_transport_cannot_have_is_refused_when_planned() {
        let line = error_of(&format!(
            "stack = \"usb3-uas-ssd\"\n{CDM_SEQ_READ}\nfaults = \"phase_error=0.1\""
        ));
        assert!(
            line.contains("entry 'a': faults: ") && line.contains("phase_error"),
            "{line}"
        );
    }

    #[test]
    fn overriding_a_swept_key_is_refused() {
        let line = error_of(&format!(
            "stack = \"usb3-uas-ssd\"\n{CDM_SEQ_READ}\nkeys = {{ rw = \"write\" }}"
        ));
        assert!(
            line.contains("entry 'a': keys: ") && line.contains("sweeps rw"),
            "{line}"
        );
    }

    #[test]
    fn denominator_problems_are_named_as_such() {
        let line = error_of(
            "stack = \"usb3-uas-ssd\"\npreset = \"cdm\"\npoint = { series = \"Seq\", direction = \"read\" }\nmetric = \"ratio\"\nratio_of = \"mbps\"\npublished = 1\n[entry.denominator]\nstack = \"nope\"",
        );
        assert!(
            line.contains("entry 'a': denominator.stack: unknown stack"),
            "{line}"
        );
    }

    #[test]
    fn an_impossible_inline_job_is_refused() {
        let line = error_of(
            "stack = \"usb3-uas-ssd\"\njob = { rw = \"read\", bs = \"4k\", size = \"1k\" }\nmetric = \"mbps\"\npublished = 1",
        );
        assert!(line.contains("entry 'a': job: "), "{line}");
    }
}
