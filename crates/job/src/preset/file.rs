//! A preset's TOML file as written, and its reading into a [`Preset`] (every key and coordinate checked).

use super::{
    Axis, FileSet, Preset, PresetError, Series, SteadyState, TableLayout, CHECK_STACK, COORD_ROUND,
    ZONES_MAX,
};
use crate::keys::find_key;
use crate::model::Target;
use crate::size::parse_size;
use crate::steps::DeviceState;
use serde::Deserialize;

pub(super) fn default_files_per_dir() -> u64 {
    100
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetFile {
    name: String,
    description: String,
    source: String,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    keys: toml::Table,
    table: TableLayout,
    #[serde(default)]
    series: Vec<SeriesFile>,
    #[serde(default)]
    steady_state: Option<SteadyState>,
    #[serde(default)]
    filesets: Vec<FileSet>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeriesFile {
    name: String,
    #[serde(default)]
    labels: toml::Table,
    #[serde(default)]
    keys: toml::Table,
    #[serde(default)]
    sweep: Vec<AxisFile>,
    /// Workers get disjoint regions of `size` bytes each (`offset_increment` follows `size`).
    #[serde(default)]
    disjoint_workers: bool,
    /// Run every point once per zone: the test area cut into this many equal parts.
    #[serde(default)]
    zones: Option<u32>,
    /// Keys the command line's overrides leave alone in this series, because they define what
    /// it measures.
    #[serde(default)]
    keep: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AxisFile {
    key: String,
    values: Vec<toml::Value>,
}

/// A TOML scalar as the text a job key or coordinate takes (booleans as 1/0, as fio writes them).
pub fn value_text(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "1" } else { "0" }.to_string()),
        _ => None,
    }
}

fn table_pairs(
    table: &toml::Table,
    file: &str,
    what: &str,
) -> Result<Vec<(String, String)>, PresetError> {
    table
        .iter()
        .map(|(key, value)| {
            value_text(value)
                .map(|v| (key.clone(), v))
                .ok_or_else(|| PresetError::Format {
                    file: file.to_string(),
                    detail: format!("{what}.{key}: give a string, number or boolean"),
                })
        })
        .collect()
}

/// Parse preset TOML text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Preset, PresetError> {
    let format_error = |detail: String| PresetError::Format {
        file: file.to_string(),
        detail,
    };
    let raw: PresetFile =
        toml::from_str(text).map_err(|e| format_error(e.message().to_string()))?;
    let state = match &raw.state {
        Some(text) => DeviceState::parse(text).map_err(|e| format_error(format!("state: {e}")))?,
        None => DeviceState::AsFound,
    };
    let keys = table_pairs(&raw.keys, file, "keys")?;
    let mut series = Vec::with_capacity(raw.series.len());
    for s in &raw.series {
        series.push(parse_series(s, file)?);
    }
    if series.is_empty() && raw.filesets.is_empty() {
        return Err(format_error(
            "a preset needs at least one [[series]] or [[filesets]]".into(),
        ));
    }
    if raw.table.metrics.is_empty() {
        return Err(format_error(
            "table.metrics: name at least one figure".into(),
        ));
    }
    for fileset in &raw.filesets {
        parse_size(&fileset.file_size)
            .map_err(|e| format_error(format!("fileset '{}': file_size: {}", fileset.name, e.0)))?;
        if fileset.files == 0 || fileset.files_per_dir == 0 {
            return Err(format_error(format!(
                "fileset '{}': files and files_per_dir must be at least 1",
                fileset.name
            )));
        }
    }
    let preset = Preset {
        name: raw.name,
        description: raw.description,
        source: raw.source,
        state,
        keys,
        table: raw.table,
        series,
        steady_state: raw.steady_state,
        filesets: raw.filesets,
    };
    // Every coordinate the table names must exist on every point. A simulated target needs no
    // size, so presets that run on a whole drive check too.
    let points = preset.expand(&[], &Target::Sim(CHECK_STACK.into()))?;
    for coord in preset.table.rows.iter().chain(&preset.table.columns) {
        let added_later = coord == COORD_ROUND && preset.steady_state.is_some();
        if !added_later {
            if let Some(point) = points.iter().find(|p| p.coord(coord).is_none()) {
                return Err(format_error(format!(
                    "table names coordinate '{coord}', which point {} does not have",
                    point.job.name
                )));
            }
        }
    }
    Ok(preset)
}

/// One `[[series]]` of `file`: its sweep keys and `keep` names job keys, its sweeps have values,
/// its zones are in range.
fn parse_series(s: &SeriesFile, file: &str) -> Result<Series, PresetError> {
    let format_error = |detail: String| PresetError::Format {
        file: file.to_string(),
        detail,
    };
    let mut sweep = Vec::with_capacity(s.sweep.len());
    for axis in &s.sweep {
        if find_key(&axis.key).is_none() {
            return Err(format_error(format!(
                "series '{}': sweep key '{}' is not a job key",
                s.name, axis.key
            )));
        }
        let values = axis
            .values
            .iter()
            .map(|v| {
                value_text(v).ok_or_else(|| {
                    format_error(format!(
                        "series '{}': sweep {}: bad value",
                        s.name, axis.key
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if values.is_empty() {
            return Err(format_error(format!(
                "series '{}': sweep {} has no values",
                s.name, axis.key
            )));
        }
        sweep.push(Axis {
            key: axis.key.clone(),
            values,
        });
    }
    if let Some(zones) = s.zones {
        if !(2..=ZONES_MAX).contains(&zones) || s.disjoint_workers {
            return Err(format_error(format!(
                "series '{}': zones must be 2 to {ZONES_MAX}, without disjoint_workers",
                s.name
            )));
        }
    }
    let mut keep = Vec::with_capacity(s.keep.len());
    for key in &s.keep {
        let Some(def) = find_key(key) else {
            return Err(format_error(format!(
                "series '{}': keep names '{key}', which is not a job key",
                s.name
            )));
        };
        keep.push(def.name.to_string());
    }
    Ok(Series {
        name: s.name.clone(),
        labels: table_pairs(&s.labels, file, "labels")?,
        keys: table_pairs(&s.keys, file, "keys")?,
        sweep,
        disjoint_workers: s.disjoint_workers,
        zones: s.zones,
        keep,
    })
}
