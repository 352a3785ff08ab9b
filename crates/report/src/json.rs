//! storlab's native JSON format: the `RunReport` model as pretty JSON, versioned by
//! `schema_version` and documented field by field in `docs/json-output.md`.

use crate::model::{RunReport, SCHEMA_VERSION};
use crate::repeats::{summarise_repeats, RepeatSummary};

/// A report with its repeats' statistics (`repeats`, after every other key; absent without
/// repeats, so a run's JSON is as it was): computed from the jobs whenever the report is
/// written, never stored apart from them, so a report read back and written again agrees.
#[derive(serde::Serialize)]
struct WithRepeats<'a> {
    #[serde(flatten)]
    report: &'a RunReport,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    repeats: Vec<RepeatSummary>,
}

/// Why a native JSON report could not be read.
#[derive(Debug)]
pub enum ReportError {
    /// The text is not JSON of the expected shape.
    Json(serde_json::Error),
    /// The report was written with a schema this build does not read.
    UnsupportedSchema {
        /// `schema_version` found in the document (0 when missing).
        found: u64,
        /// The version this build reads and writes.
        supported: u32,
    },
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::Json(error) => write!(f, "report JSON is not valid: {error}"),
            ReportError::UnsupportedSchema { found, supported } => write!(
                f,
                "report key `schema_version` is {found}, this storlab reads version {supported}"
            ),
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Json(error) => Some(error),
            ReportError::UnsupportedSchema { .. } => None,
        }
    }
}

/// The report as pretty-printed native JSON (ends with a newline).
pub fn to_json(report: &RunReport) -> String {
    let with_repeats = WithRepeats {
        report,
        repeats: summarise_repeats(&report.jobs),
    };
    // Serializing plain data with string keys cannot fail; the fallback keeps this infallible
    // rather than panicking should a future field break that.
    let mut text = serde_json::to_string_pretty(&with_repeats).unwrap_or_else(|error| {
        serde_json::json!({ "schema_version": SCHEMA_VERSION, "error": error.to_string() })
            .to_string()
    });
    text.push('\n');
    text
}

/// Reads a native JSON report, checking the schema version first so that a report from a
/// newer storlab fails with a clear message rather than a missing-field error.
pub fn from_json(text: &str) -> Result<RunReport, ReportError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(ReportError::Json)?;
    let found = value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    if found != u64::from(SCHEMA_VERSION) {
        return Err(ReportError::UnsupportedSchema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    serde_json::from_value(value).map_err(ReportError::Json)
}
