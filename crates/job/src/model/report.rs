//! fio's reporting keys as a job sets them (`unified_rw_reporting`, `unit_base`, the
//! percentile keys, `significant_figures`, the `disable_*` family): what storlab's fio-shaped
//! outputs print for the job, as fio 3.33 prints it (docs/decisions/0058). They change no I/O.

use serde::{Deserialize, Serialize};

/// fio's `significant_figures` default.
pub const DEFAULT_SIGNIFICANT_FIGURES: u8 = 4;

/// fio's `unified_rw_reporting`: how the directions are reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnifiedRwReporting {
    /// `none` (`0`, fio's default): reads, writes and trims apart.
    #[default]
    None,
    /// `mixed` (`1`): one `mixed` direction, the directions' figures summed.
    Mixed,
    /// `both` (`2`): each direction, then `mixed`.
    Both,
}

/// What fio's reporting keys asked of the job's fio-shaped report. The default is fio's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FioReport {
    /// fio's `unified_rw_reporting`.
    #[serde(default, skip_serializing_if = "is_none_unified")]
    pub unified_rw_reporting: UnifiedRwReporting,
    /// fio's `unit_base=1`: rates in bits in the human report (its JSON stays in bytes).
    #[serde(default, skip_serializing_if = "is_false")]
    pub unit_bits: bool,
    /// fio's `clat_percentiles` (on by default), after fio's fixup (`disable_clat` turns it off).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub clat_percentiles: bool,
    /// fio's `lat_percentiles`, after fio's fixup (`disable_lat` turns it off).
    #[serde(default, skip_serializing_if = "is_false")]
    pub lat_percentiles: bool,
    /// fio's `slat_percentiles`, after fio's fixup (`disable_slat` turns it off).
    #[serde(default, skip_serializing_if = "is_false")]
    pub slat_percentiles: bool,
    /// fio's `percentile_list` as fio keeps it: the values up to the first 0 (fio's end of
    /// list), sorted; `None` for fio's default list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentile_list: Option<Vec<f64>>,
    /// The decimals fio prints a percentile with in its human report (`99.95th`): the most
    /// digits after a point in the list as written (fio's `percentile_precision`); 2 by default.
    #[serde(
        default = "default_precision",
        skip_serializing_if = "is_default_precision"
    )]
    pub percentile_precision: u8,
    /// fio's `significant_figures` (1..=10).
    #[serde(
        default = "default_significant_figures",
        skip_serializing_if = "is_default_significant_figures"
    )]
    pub significant_figures: u8,
    /// fio's `disable_lat`: no total latency samples.
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_lat: bool,
    /// fio's `disable_clat`: no completion latency samples (nor sync latencies, nor the latency
    /// distribution).
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_clat: bool,
    /// fio's `disable_slat`: no submission latency samples.
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_slat: bool,
    /// fio's `disable_bw_measurement`: no bandwidth samples (and, with `disable_clat` and
    /// `disable_slat` too, no IOPS samples: fio's `gtod_reduce` test).
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_bw: bool,
}

/// fio's `percentile_precision` when no list is written.
const DEFAULT_PERCENTILE_PRECISION: u8 = 2;

fn yes() -> bool {
    true
}
fn is_true(value: &bool) -> bool {
    *value
}
fn is_false(value: &bool) -> bool {
    !*value
}
fn is_none_unified(value: &UnifiedRwReporting) -> bool {
    *value == UnifiedRwReporting::None
}
fn default_precision() -> u8 {
    DEFAULT_PERCENTILE_PRECISION
}
fn is_default_precision(value: &u8) -> bool {
    *value == DEFAULT_PERCENTILE_PRECISION
}
fn default_significant_figures() -> u8 {
    DEFAULT_SIGNIFICANT_FIGURES
}
fn is_default_significant_figures(value: &u8) -> bool {
    *value == DEFAULT_SIGNIFICANT_FIGURES
}

impl Default for FioReport {
    fn default() -> Self {
        FioReport {
            unified_rw_reporting: UnifiedRwReporting::None,
            unit_bits: false,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            percentile_list: None,
            percentile_precision: DEFAULT_PERCENTILE_PRECISION,
            significant_figures: DEFAULT_SIGNIFICANT_FIGURES,
            disable_lat: false,
            disable_clat: false,
            disable_slat: false,
            disable_bw: false,
        }
    }
}

/// The percentiles are never NaN (parsed from 0 to 100), so equality is total.
impl Eq for FioReport {}

impl FioReport {
    /// Whether every key is at fio's default (the job's JSON then leaves the group out).
    pub fn is_default(&self) -> bool {
        *self == FioReport::default()
    }
}
