//! The reference file of `storlab validate`: published measurements, each with its source, the
//! simulated scenario that reproduces it (stack, preset point or inline job, job keys, device
//! state) and the figure compared. This module reads and checks the file on its own (syntax,
//! fields, metrics, ids, job keys); `plan` then resolves stacks and presets. Format:
//! `docs/validation.md`.

use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use storlab_job::keys::{find_key, JobDraft};
use storlab_job::preset::value_text;
use storlab_job::steps::DeviceState;
use storlab_job::{ErrorKind, JobError, Location};

/// Job keys a reference file may not set: the entry's stack decides the target and engine, and
/// the entry's id names the job.
const RESERVED_KEYS: [&str; 3] = ["name", "filename", "ioengine"];

/// Top-level tables of a reference file.
const TOP_LEVEL_KEYS: [&str; 2] = ["defaults", "entry"];

/// One line naming the file, where in it (entry id or index, key) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {location}{detail}")]
pub struct ReferenceError {
    pub file: String,
    /// `entry 'ID': KEY: `, `entry #3: `, `defaults.keys: ` or empty; ends with `: ` when set.
    pub location: String,
    pub detail: String,
}

/// The figure an entry compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Decimal megabytes (10^6 bytes) per second, read plus write.
    Mbps,
    /// I/Os per second, read plus write.
    Iops,
    /// Mean completion latency in microseconds, reads and writes together.
    LatencyMeanUs,
    /// 99th percentile of the completion latency in microseconds, reads and writes together.
    LatencyP99Us,
    /// The simulated host CPU busy share while the point ran, in percent.
    CpuPercent,
    /// `ratio_of` of the entry's scenario divided by that of its denominator scenario.
    Ratio,
}

impl Metric {
    /// The name as written in reference files and printed in results.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Mbps => "mbps",
            Metric::Iops => "iops",
            Metric::LatencyMeanUs => "latency_mean_us",
            Metric::LatencyP99Us => "latency_p99_us",
            Metric::CpuPercent => "cpu_percent",
            Metric::Ratio => "ratio",
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a scenario runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Workload {
    /// One point of a shipped preset, picked by its coordinates (`series`, swept keys,
    /// `direction`, `bs`, `iodepth`...); an empty selector suits a one-point preset.
    PresetPoint {
        preset: String,
        point: Vec<(String, String)>,
    },
    /// An inline job of fio-style keys.
    Job { keys: Vec<(String, String)> },
}

/// A simulated measurement: what runs, on which stack, in which state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    pub stack: String,
    pub workload: Workload,
    /// Job keys over the point or job (after `[defaults].keys`).
    pub keys: Vec<(String, String)>,
    /// Device state before measuring; `None` = what `storlab run` does (the preset's state, or
    /// as-found).
    pub state: Option<DeviceState>,
    /// A fault plan for the run, in the grammar of `storlab run --faults` (checked to parse
    /// here, against the stack's transport when the entry is planned); replaces the stack
    /// file's own plan.
    pub faults: Option<String>,
}

/// One published figure and the scenario that should reproduce it.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Position in the file, from 1.
    pub index: usize,
    pub id: String,
    pub source: String,
    pub scenario: Scenario,
    /// The metric as written (`ratio` for ratios).
    pub metric: Metric,
    /// The metric measured on each scenario: `metric`, or `ratio_of` for ratios (never
    /// [`Metric::Ratio`]).
    pub measured: Metric,
    pub published: f64,
    /// For ratios: the scenario whose figure divides the entry's.
    pub denominator: Option<Scenario>,
    /// Why the model knowingly misses this figure by more than the 10% target, if it does
    /// (printed under the table; docs/validation.md "Known gaps").
    pub known_gap: Option<String>,
}

impl Entry {
    /// How errors name this entry.
    pub fn label(&self) -> String {
        format!("entry '{}'", self.id)
    }
}

/// A whole reference file.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The file as named on the command line, for messages.
    pub file: String,
    /// `[defaults].keys`: job keys every entry gets unless its preset point sweeps the key or
    /// its inline job, or its own `keys`, sets it.
    pub default_keys: Vec<(String, String)>,
    pub entries: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDefaults {
    #[serde(default)]
    keys: toml::Table,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    id: String,
    source: String,
    stack: String,
    preset: Option<String>,
    point: Option<toml::Table>,
    job: Option<toml::Table>,
    keys: Option<toml::Table>,
    state: Option<String>,
    faults: Option<String>,
    metric: Metric,
    published: f64,
    ratio_of: Option<Metric>,
    denominator: Option<RawScenario>,
    known_gap: Option<String>,
}

/// A denominator: every field optional, unset ones inherit from the entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    stack: Option<String>,
    preset: Option<String>,
    point: Option<toml::Table>,
    job: Option<toml::Table>,
    keys: Option<toml::Table>,
    state: Option<String>,
    faults: Option<String>,
}

/// Read and check the reference file at `path`.
pub fn read(path: &Path) -> Result<Reference, ReferenceError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ReferenceError {
        file: file.clone(),
        location: String::new(),
        detail: e.to_string(),
    })?;
    parse(&text, &file)
}

/// Check reference text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Reference, ReferenceError> {
    let error = |location: String, detail: String| ReferenceError {
        file: file.to_string(),
        location,
        detail,
    };
    let top: toml::Table = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
        let location = line.map(|l| format!("line {l}: ")).unwrap_or_default();
        error(location, e.message().trim().replace('\n', " "))
    })?;
    if let Some(key) = top.keys().find(|k| !TOP_LEVEL_KEYS.contains(&k.as_str())) {
        return Err(error(
            format!("{key}: "),
            "unknown table; a reference file has [defaults] and [[entry]]".into(),
        ));
    }
    let default_keys = match top.get("defaults") {
        None => Vec::new(),
        Some(value) => {
            let raw: RawDefaults = value
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| error("defaults: ".into(), serde_message(&e)))?;
            job_pairs(&raw.keys, "defaults.keys")
                .map_err(|(key, detail)| error(format!("{key}: "), detail))?
        }
    };
    let raw_entries = match top.get("entry") {
        None => Vec::new(),
        Some(toml::Value::Array(items)) => items.clone(),
        Some(_) => {
            return Err(error(
                "entry: ".into(),
                "write entries as [[entry]] tables".into(),
            ))
        }
    };
    if raw_entries.is_empty() {
        return Err(error(
            String::new(),
            "no [[entry]]: nothing to validate".into(),
        ));
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(raw_entries.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, value) in raw_entries.into_iter().enumerate() {
        let index = i + 1;
        // Name the entry by its id whenever it has one, even if the rest is broken.
        let label = match value.get("id").and_then(toml::Value::as_str) {
            Some(id) => format!("entry '{id}'"),
            None => format!("entry #{index}"),
        };
        let entry_error = |key: &str, detail: String| {
            let location = if key.is_empty() {
                format!("{label}: ")
            } else {
                format!("{label}: {key}: ")
            };
            error(location, detail)
        };
        if !value.is_table() {
            return Err(entry_error("", "not a table; write [[entry]]".into()));
        }
        let raw: RawEntry = value
            .try_into()
            .map_err(|e: toml::de::Error| entry_error("", serde_message(&e)))?;
        let entry = check_entry(raw, index).map_err(|(key, detail)| entry_error(&key, detail))?;
        if let Some(first) = seen.insert(entry.id.clone(), index) {
            return Err(entry_error(
                "id",
                format!("duplicate: entry #{first} has the same id"),
            ));
        }
        entries.push(entry);
    }
    Ok(Reference {
        file: file.to_string(),
        default_keys,
        entries,
    })
}

/// A serde message on one line (toml adds the key path to some messages, not to all).
fn serde_message(error: &toml::de::Error) -> String {
    error.message().trim().replace('\n', " ")
}

/// (key, what is wrong) of a bad field.
type FieldError = (String, String);

fn check_entry(raw: RawEntry, index: usize) -> Result<Entry, FieldError> {
    let field = |key: &str, detail: &str| (key.to_string(), detail.to_string());
    if raw.id.trim().is_empty() {
        return Err(field("id", "must not be empty"));
    }
    if raw.source.trim().is_empty() {
        return Err(field(
            "source",
            "must not be empty: say where the figure was published",
        ));
    }
    if !raw.published.is_finite() || raw.published <= 0.0 {
        return Err(field(
            "published",
            "must be a positive number (errors are relative to it)",
        ));
    }
    let measured = match (raw.metric, raw.ratio_of) {
        (Metric::Ratio, None) => {
            return Err(field(
                "ratio_of",
                "a ratio entry names the metric it compares (ratio_of = \"mbps\", ...)",
            ))
        }
        (Metric::Ratio, Some(Metric::Ratio)) => {
            return Err(field("ratio_of", "must be a metric other than ratio"))
        }
        (Metric::Ratio, Some(compared)) => compared,
        (_, Some(_)) => {
            return Err(field(
                "ratio_of",
                "only for metric = \"ratio\"; remove it or make the entry a ratio",
            ))
        }
        (metric, None) => metric,
    };
    let scenario = Scenario {
        stack: nonempty(&raw.stack, "stack")?,
        workload: workload(
            raw.preset.as_deref(),
            raw.point.as_ref(),
            raw.job.as_ref(),
            "",
        )?,
        keys: match &raw.keys {
            Some(keys) => job_pairs(keys, "keys")?,
            None => Vec::new(),
        },
        state: state(raw.state.as_deref(), "state")?,
        faults: faults(raw.faults.as_deref(), "faults")?,
    };
    let denominator = match (raw.metric, raw.denominator) {
        (Metric::Ratio, None) => {
            return Err(field(
                "denominator",
                "a ratio entry needs an [entry.denominator] table (the scenario it divides by)",
            ))
        }
        (Metric::Ratio, Some(d)) => Some(denominator(d, &scenario)?),
        (_, Some(_)) => {
            return Err(field(
                "denominator",
                "only for metric = \"ratio\"; remove it or make the entry a ratio",
            ))
        }
        (_, None) => None,
    };
    Ok(Entry {
        index,
        id: raw.id,
        source: raw.source,
        scenario,
        metric: raw.metric,
        measured,
        published: raw.published,
        denominator,
        known_gap: match raw.known_gap {
            Some(reason) => Some(nonempty(&reason, "known_gap")?),
            None => None,
        },
    })
}

/// The denominator scenario: its own fields over the entry's. The workload is inherited as a
/// whole unless the denominator names a job, a preset or a point (a point alone picks another
/// point of the entry's preset).
fn denominator(raw: RawScenario, entry: &Scenario) -> Result<Scenario, FieldError> {
    const PREFIX: &str = "denominator.";
    let stack = match &raw.stack {
        Some(stack) => nonempty(stack, "denominator.stack")?,
        None => entry.stack.clone(),
    };
    let workload = match (&raw.preset, &raw.point, &raw.job) {
        (None, None, None) => entry.workload.clone(),
        (None, Some(_), None) => match &entry.workload {
            Workload::PresetPoint { preset, .. } => {
                workload(Some(preset), raw.point.as_ref(), None, PREFIX)?
            }
            Workload::Job { .. } => {
                return Err((
                    "denominator.point".into(),
                    "the entry runs an inline job, so a point needs denominator.preset too".into(),
                ))
            }
        },
        _ => workload(
            raw.preset.as_deref(),
            raw.point.as_ref(),
            raw.job.as_ref(),
            PREFIX,
        )?,
    };
    let keys = match &raw.keys {
        Some(keys) => job_pairs(keys, "denominator.keys")?,
        None => entry.keys.clone(),
    };
    let state = match &raw.state {
        Some(text) => state(Some(text), "denominator.state")?,
        None => entry.state,
    };
    let faults = match &raw.faults {
        Some(text) => faults(Some(text), "denominator.faults")?,
        None => entry.faults.clone(),
    };
    Ok(Scenario {
        stack,
        workload,
        keys,
        state,
        faults,
    })
}

/// A fault plan as written, if it parses.
fn faults(text: Option<&str>, key: &str) -> Result<Option<String>, FieldError> {
    match text {
        Some(text) => storlab_sim::FaultPlan::parse(text)
            .map(|_| Some(text.to_string()))
            .map_err(|why| (key.into(), why)),
        None => Ok(None),
    }
}

fn nonempty(text: &str, key: &str) -> Result<String, FieldError> {
    if text.trim().is_empty() {
        return Err((key.into(), "must not be empty".into()));
    }
    Ok(text.to_string())
}

fn state(text: Option<&str>, key: &str) -> Result<Option<DeviceState>, FieldError> {
    text.map(|t| DeviceState::parse(t).map_err(|e| (key.to_string(), e.detail)))
        .transpose()
}

/// A preset point or an inline job, exactly one of them; `prefix` is `denominator.` or empty.
fn workload(
    preset: Option<&str>,
    point: Option<&toml::Table>,
    job: Option<&toml::Table>,
    prefix: &str,
) -> Result<Workload, FieldError> {
    match (preset, point, job) {
        (Some(_), _, Some(_)) => Err((
            format!("{prefix}job"),
            "give either preset (with point) or job, not both".into(),
        )),
        (None, Some(_), _) => Err((
            format!("{prefix}point"),
            "a point needs the preset it belongs to (preset = \"...\")".into(),
        )),
        (None, None, None) => Err((
            format!("{prefix}preset"),
            "missing: give preset (with point) or an inline job".into(),
        )),
        (Some(preset), point, None) => Ok(Workload::PresetPoint {
            preset: nonempty(preset, &format!("{prefix}preset"))?,
            point: match point {
                Some(table) => value_pairs(table, &format!("{prefix}point"))?,
                None => Vec::new(),
            },
        }),
        (None, None, Some(job)) => Ok(Workload::Job {
            keys: job_pairs(job, &format!("{prefix}job"))?,
        }),
    }
}

/// (name, text) pairs of a table of scalars; `section` names the table in errors.
fn value_pairs(table: &toml::Table, section: &str) -> Result<Vec<(String, String)>, FieldError> {
    table
        .iter()
        .map(|(key, value)| {
            value_text(value).map(|v| (key.clone(), v)).ok_or_else(|| {
                (
                    format!("{section}.{key}"),
                    "give a string, number or boolean".into(),
                )
            })
        })
        .collect()
}

/// Job keys of a table, each checked on its own against the job key table (known key, value
/// that parses, not one the entry's stack decides).
fn job_pairs(table: &toml::Table, section: &str) -> Result<Vec<(String, String)>, FieldError> {
    let pairs = value_pairs(table, section)?;
    for (key, value) in &pairs {
        let place = format!("{section}.{key}");
        if let Some(def) = find_key(key) {
            if RESERVED_KEYS.contains(&def.name) {
                return Err((
                    place,
                    "set by the entry (stack = target and engine, id = job name); remove it".into(),
                ));
            }
        }
        JobDraft::new()
            .set(key, Some(value), &Location::Unknown)
            .map_err(|e| (place, job_error_detail(&e)))?;
    }
    Ok(pairs)
}

/// What a job error says about its key, without the location and key (the caller names them).
pub fn job_error_detail(error: &JobError) -> String {
    match error.kind {
        ErrorKind::UnknownKey if error.detail.is_empty() => "unknown job key".into(),
        ErrorKind::UnknownKey => format!("unknown job key ({})", error.detail),
        _ => match (&error.key, &error.value) {
            (Some(key), Some(value)) => format!("{key}={value}: {}", error.detail),
            (Some(key), None) => format!("{key}: {}", error.detail),
            _ => error.detail.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "ref.toml";

    fn entry_text(body: &str) -> String {
        format!("[[entry]]\nid = \"a\"\nsource = \"review\"\nstack = \"usb3-uas-ssd\"\n{body}\n")
    }

    fn error_of(text: &str) -> String {
        let error = parse(text, FILE).expect_err("should be rejected");
        let line = error.to_string();
        assert!(!line.contains('\n'), "one line: {line}");
        assert!(line.starts_with("ref.toml: "), "names the file: {line}");
        line
    }

    const GOOD: &str = "preset = \"cdm\"\npoint = { series = \"Seq\", direction = \"read\" }\nmetric = \"mbps\"\npublished = 244.8";

    #[test]
    fn fault_plans_are_read_checked_and_inherited_by_the_denominator() {
        let text = "[[entry]]\nid = \"b\"\nsource = \"s\"\nstack = \"usb3-uas-ssd\"\njob = { rw = \"randread\", bs = \"4k\" }\nfaults = \"seed=3,usb_crc=1e-3\"\nmetric = \"ratio\"\nratio_of = \"iops\"\npublished = 1.5\n[entry.denominator]\nstack = \"usb3-bot-ssd\"\n";
        let reference = parse(text, FILE).unwrap();
        let entry = &reference.entries[0];
        assert_eq!(
            entry.scenario.faults.as_deref(),
            Some("seed=3,usb_crc=1e-3")
        );
        assert_eq!(
            entry.denominator.as_ref().unwrap().faults.as_deref(),
            Some("seed=3,usb_crc=1e-3")
        );
        let bad = text.replace("usb_crc=1e-3", "usb_crc=7");
        let error = parse(&bad, FILE).unwrap_err().to_string();
        assert!(
            error.contains("faults") && error.contains("not a probability"),
            "{error}"
        );
        assert!(!error.contains('\n'));
    }

    #[test]
    fn a_good_file_reads_with_defaults_and_every_field() {
        let text = format!(
            "[defaults]\nkeys = {{ runtime = \"2s\", size = \"1000m\" }}\n{}\n{}",
            entry_text(&format!("{GOOD}\nkeys = {{ runtime = \"3s\" }}\nstate = \"fresh\"")),
            "[[entry]]\nid = \"b\"\nsource = \"s\"\nstack = \"usb3-bot-ssd\"\njob = { rw = \"randread\", bs = \"4k\", iodepth = 32, time_based = true }\nmetric = \"ratio\"\nratio_of = \"iops\"\npublished = 1.5\n[entry.denominator]\nstack = \"usb3-uas-ssd\"\n"
        );
        let reference = parse(&text, FILE).unwrap();
        assert_eq!(
            reference.default_keys,
            vec![
                ("runtime".to_string(), "2s".to_string()),
                ("size".to_string(), "1000m".to_string())
            ]
        );
        let a = &reference.entries[0];
        assert_eq!(a.index, 1);
        assert_eq!(a.metric, Metric::Mbps);
        assert_eq!(a.measured, Metric::Mbps);
        assert_eq!(a.scenario.state, Some(DeviceState::Fresh));
        assert_eq!(
            a.scenario.workload,
            Workload::PresetPoint {
                preset: "cdm".into(),
                point: vec![
                    ("direction".into(), "read".into()),
                    ("series".into(), "Seq".into())
                ]
            }
        );
        let b = &reference.entries[1];
        assert_eq!(b.measured, Metric::Iops);
        let denominator = b.denominator.as_ref().unwrap();
        assert_eq!(denominator.stack, "usb3-uas-ssd");
        // Unset denominator fields inherit from the entry: the same job.
        assert_eq!(denominator.workload, b.scenario.workload);
        let Workload::Job { keys } = &b.scenario.workload else {
            panic!("inline job expected")
        };
        assert!(keys.contains(&("time_based".into(), "1".into())));
    }

    #[test]
    fn a_denominator_point_picks_another_point_of_the_entrys_preset() {
        let text = entry_text(
            "preset = \"cdm\"\npoint = { series = \"4K QD32\", direction = \"read\" }\nmetric = \"ratio\"\nratio_of = \"mbps\"\npublished = 7\n[entry.denominator]\npoint = { series = \"4K\", direction = \"read\" }\nstate = \"seq-filled\"",
        );
        let reference = parse(&text, FILE).unwrap();
        let d = reference.entries[0].denominator.clone().unwrap();
        assert_eq!(
            d.workload,
            Workload::PresetPoint {
                preset: "cdm".into(),
                point: vec![
                    ("direction".into(), "read".into()),
                    ("series".into(), "4K".into())
                ]
            }
        );
        assert_eq!(d.state, Some(DeviceState::SeqFilled));
    }

    #[test]
    fn a_known_gap_is_read_and_an_empty_one_refused() {
        let text = entry_text(&format!("{GOOD}\nknown_gap = \"a reason\""));
        let reference = parse(&text, FILE).unwrap();
        assert_eq!(reference.entries[0].known_gap.as_deref(), Some("a reason"));
        assert_eq!(
            parse(&entry_text(GOOD), FILE).unwrap().entries[0].known_gap,
            None
        );
        let line = error_of(&entry_text(&format!("{GOOD}\nknown_gap = \" \"")));
        assert!(
            line.contains("entry 'a'") && line.contains("known_gap") && line.contains("empty"),
            "{line}"
        );
    }

    #[test]
    fn unknown_field_names_entry_and_key() {
        let line = error_of(&entry_text(&format!("{GOOD}\npublised = 3")));
        assert!(
            line.contains("entry 'a'") && line.contains("publised"),
            "{line}"
        );
    }

    #[test]
    fn unknown_denominator_field_names_it() {
        let line = error_of(&entry_text(&format!(
            "{}\nratio_of = \"mbps\"\n[entry.denominator]\nstak = \"x\"",
            GOOD.replace("\"mbps\"", "\"ratio\"")
        )));
        assert!(
            line.contains("entry 'a'") && line.contains("stak"),
            "{line}"
        );
    }

    #[test]
    fn missing_field_names_it() {
        let line = error_of(&entry_text(
            "preset = \"cdm\"\npoint = { series = \"Seq\" }\nmetric = \"mbps\"",
        ));
        assert!(
            line.contains("entry 'a'") && line.contains("published"),
            "{line}"
        );
    }

    #[test]
    fn entry_without_id_is_named_by_index() {
        let line = error_of(&format!(
            "{}[[entry]]\nsource = \"s\"\nstack = \"x\"\n{GOOD}\n",
            entry_text(GOOD)
        ));
        assert!(line.contains("entry #2") && line.contains("id"), "{line}");
    }

    #[test]
    fn duplicate_id_names_both() {
        let line = error_of(&format!("{}{}", entry_text(GOOD), entry_text(GOOD)));
        assert!(
            line.contains("entry 'a': id: duplicate: entry #1"),
            "{line}"
        );
    }

    #[test]
    fn preset_and_job_together_are_refused() {
        let line = error_of(&entry_text(&format!("{GOOD}\njob = {{ rw = \"read\" }}")));
        assert!(
            line.contains("entry 'a': job: give either preset"),
            "{line}"
        );
    }

    #[test]
    fn neither_preset_nor_job_is_refused() {
        let line = error_of(&entry_text("metric = \"mbps\"\npublished = 1"));
        assert!(line.contains("entry 'a': preset: missing"), "{line}");
    }

    #[test]
    fn a_point_without_preset_is_refused() {
        let line = error_of(&entry_text(
            "point = { series = \"Seq\" }\njob = { rw = \"read\" }\nmetric = \"mbps\"\npublished = 1",
        ));
        assert!(line.contains("entry 'a': point:"), "{line}");
    }

    #[test]
    fn ratio_needs_ratio_of_and_denominator() {
        let ratio = GOOD.replace("\"mbps\"", "\"ratio\"");
        let line = error_of(&entry_text(&ratio));
        assert!(line.contains("entry 'a': ratio_of:"), "{line}");
        let line = error_of(&entry_text(&format!("{ratio}\nratio_of = \"mbps\"")));
        assert!(line.contains("entry 'a': denominator:"), "{line}");
        let line = error_of(&entry_text(&format!("{ratio}\nratio_of = \"ratio\"")));
        assert!(line.contains("entry 'a': ratio_of: must be"), "{line}");
    }

    #[test]
    fn ratio_fields_on_a_plain_metric_are_refused() {
        let line = error_of(&entry_text(&format!("{GOOD}\nratio_of = \"iops\"")));
        assert!(line.contains("entry 'a': ratio_of: only for"), "{line}");
        let line = error_of(&entry_text(&format!(
            "{GOOD}\n[entry.denominator]\nstack = \"x\""
        )));
        assert!(line.contains("entry 'a': denominator: only for"), "{line}");
    }

    #[test]
    fn unknown_metric_is_refused() {
        let line = error_of(&entry_text(&GOOD.replace("\"mbps\"", "\"MB/s\"")));
        assert!(
            line.contains("entry 'a'") && line.contains("MB/s"),
            "{line}"
        );
    }

    #[test]
    fn published_must_be_positive() {
        let line = error_of(&entry_text(&GOOD.replace("244.8", "0")));
        assert!(
            line.contains("entry 'a': published: must be positive")
                || line.contains("entry 'a': published: must be a positive"),
            "{line}"
        );
    }

    #[test]
    fn unknown_job_key_names_section_and_key() {
        let line = error_of(&entry_text(&format!(
            "{GOOD}\nkeys = {{ runtme = \"1s\" }}"
        )));
        assert!(
            line.contains("entry 'a': keys.runtme: unknown job key"),
            "{line}"
        );
        let line = error_of(&entry_text(
            "job = { rw = \"read\", bz = \"4k\" }\nmetric = \"mbps\"\npublished = 1",
        ));
        assert!(
            line.contains("entry 'a': job.bz: unknown job key"),
            "{line}"
        );
        let line = error_of(&format!(
            "[defaults]\nkeys = {{ sise = \"1g\" }}\n{}",
            entry_text(GOOD)
        ));
        assert!(
            line.contains("defaults.keys.sise: unknown job key"),
            "{line}"
        );
    }

    #[test]
    fn bad_job_value_names_key_and_value() {
        let line = error_of(&entry_text(&format!("{GOOD}\nkeys = {{ bs = \"4q\" }}")));
        assert!(line.contains("entry 'a': keys.bs: bs=4q: "), "{line}");
    }

    #[test]
    fn target_keys_are_reserved_for_the_stack() {
        let line = error_of(&entry_text(
            "job = { rw = \"read\", filename = \"/dev/sda\" }\nmetric = \"mbps\"\npublished = 1",
        ));
        assert!(
            line.contains("entry 'a': job.filename: set by the entry"),
            "{line}"
        );
    }

    #[test]
    fn bad_state_names_key() {
        let line = error_of(&entry_text(&format!("{GOOD}\nstate = \"used\"")));
        assert!(line.contains("entry 'a': state: unknown state"), "{line}");
    }

    #[test]
    fn file_level_mistakes_are_one_line() {
        let line = error_of("[[entry]\nid = 1");
        assert!(line.starts_with("ref.toml: line 1: "), "{line}");
        let line = error_of("[defaults]\nkeys = {}\n");
        assert!(line.contains("no [[entry]]"), "{line}");
        let line = error_of(&format!("[entries]\n{}", entry_text(GOOD)));
        assert!(line.contains("entries: unknown table"), "{line}");
        let line = error_of(&format!("[defaults]\nkey = {{}}\n{}", entry_text(GOOD)));
        assert!(
            line.contains("defaults: ") && line.contains("key"),
            "{line}"
        );
    }
}
