//! `JobError`: the one-line error every job reader and the validator return.
//!
//! An error knows where the mistake is (a file and line, a command-line flag, or a job by name),
//! which key was wrong and with what value, and what is wrong with it. `Display` renders all of
//! that on one line, e.g. `job.fio:12: iodepth=0: queue depth must be at least 1` or
//! `--iodepth=0: queue depth must be at least 1`.

use std::fmt;
use std::sync::Arc;

/// Where a mistake was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A line of a job file; `section` is the `[section]` the line belongs to, if any. Shared
    /// strings: every line of a file carries the same file and section names.
    File {
        file: Arc<str>,
        line: usize,
        section: Option<Arc<str>>,
    },
    /// A command-line flag (the key and value of the error name the flag).
    Flag,
    /// A job, by name (errors of [`crate::validate::validate`] on a hand-built job).
    Job(String),
    /// No better location is known (e.g. an empty command line).
    Unknown,
}

/// What kind of mistake it is; decides how the error reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A key (or flag) that storlab does not know.
    UnknownKey,
    /// A known key with a value that cannot be used, or a combination of values that cannot run.
    InvalidValue,
    /// A key or value that fio knows but storlab deliberately does not support.
    Unsupported,
    /// The text is not shaped like a job file or a flag list.
    Syntax,
    /// The job file could not be read.
    Io,
}

/// One mistake in a job, rendered on one line by `Display`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobError {
    pub kind: ErrorKind,
    pub location: Location,
    /// The key as the user wrote it (`bs`, `blocksize`, `readwrite`...), when one key is at fault.
    pub key: Option<Box<str>>,
    /// The value as the user wrote it, when there was one.
    pub value: Option<Box<str>>,
    /// What is wrong, without location or key (`queue depth must be at least 1`).
    pub detail: String,
}

impl std::error::Error for JobError {}

impl JobError {
    /// An error about a key's value (or a key whose combination with others cannot run).
    pub fn invalid(
        location: Location,
        key: impl Into<String>,
        value: Option<String>,
        detail: impl Into<String>,
    ) -> Self {
        JobError {
            kind: ErrorKind::InvalidValue,
            location,
            key: Some(key.into().into()),
            value: value.map(Into::into),
            detail: detail.into(),
        }
    }

    /// An error about a fio key or value storlab deliberately does not support.
    pub fn unsupported(
        location: Location,
        key: impl Into<String>,
        value: Option<String>,
        detail: impl Into<String>,
    ) -> Self {
        JobError {
            kind: ErrorKind::Unsupported,
            ..JobError::invalid(location, key, value, detail)
        }
    }

    /// An error about the job as a whole, not about one key.
    pub fn whole_job(location: Location, detail: impl Into<String>) -> Self {
        JobError {
            kind: ErrorKind::InvalidValue,
            location,
            key: None,
            value: None,
            detail: detail.into(),
        }
    }

    /// A key storlab does not know; `suggestion` is a close known key, if any.
    pub fn unknown_key(
        location: Location,
        key: impl Into<String>,
        suggestion: Option<&str>,
    ) -> Self {
        JobError {
            kind: ErrorKind::UnknownKey,
            location,
            key: Some(key.into().into()),
            value: None,
            detail: suggestion
                .map(|s| format!("did you mean '{s}'?"))
                .unwrap_or_default(),
        }
    }

    /// Text that is not shaped like a job file or flag list.
    pub fn syntax(location: Location, detail: impl Into<String>) -> Self {
        JobError {
            kind: ErrorKind::Syntax,
            location,
            key: None,
            value: None,
            detail: detail.into(),
        }
    }

    /// The job file could not be read.
    pub fn io(file: &str, detail: impl Into<String>) -> Self {
        JobError {
            kind: ErrorKind::Io,
            location: Location::File {
                file: file.into(),
                line: 0,
                section: None,
            },
            key: None,
            value: None,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line whatever the user typed: a value with a newline would break log parsers.
        let one_line = |s: &str| s.replace(['\n', '\r'], " ");
        match &self.location {
            // Line 0 means "the file as a whole" (it could not be opened).
            Location::File { file, line: 0, .. } => write!(f, "{file}: ")?,
            Location::File { file, line, .. } => write!(f, "{file}:{line}: ")?,
            Location::Job(name) => write!(f, "job [{}]: ", one_line(name))?,
            Location::Flag | Location::Unknown => {}
        }
        let is_flag = self.location == Location::Flag;
        if self.kind == ErrorKind::UnknownKey {
            let key = one_line(self.key.as_deref().unwrap_or_default());
            if is_flag {
                write!(f, "unknown flag '--{key}'")?;
            } else {
                write!(f, "unknown key '{key}'")?;
            }
            if let Location::File {
                section: Some(section),
                ..
            } = &self.location
            {
                write!(f, " in section [{}]", one_line(section))?;
            }
            if !self.detail.is_empty() {
                write!(f, " ({})", one_line(&self.detail))?;
            }
            return Ok(());
        }
        match &self.key {
            Some(key) => {
                if is_flag {
                    f.write_str("--")?;
                }
                f.write_str(&one_line(key))?;
                if let Some(value) = &self.value {
                    write!(f, "={}", one_line(value))?;
                }
                f.write_str(": ")?;
            }
            None => {
                if let Location::File {
                    section: Some(section),
                    ..
                } = &self.location
                {
                    write!(f, "job [{}]: ", one_line(section))?;
                }
            }
        }
        f.write_str(&one_line(&self.detail))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_line(line: usize, section: Option<&str>) -> Location {
        Location::File {
            file: "job.fio".into(),
            line,
            section: section.map(Arc::from),
        }
    }

    #[test]
    fn renders_every_location_on_one_line() {
        let cases = [
            (
                JobError::invalid(
                    at_line(12, Some("a")),
                    "iodepth",
                    Some("0".into()),
                    "queue depth must be at least 1",
                ),
                "job.fio:12: iodepth=0: queue depth must be at least 1",
            ),
            (
                JobError::invalid(
                    Location::Flag,
                    "iodepth",
                    Some("0".into()),
                    "queue depth must be at least 1",
                ),
                "--iodepth=0: queue depth must be at least 1",
            ),
            (
                JobError::invalid(
                    Location::Job("x".into()),
                    "time_based",
                    None,
                    "needs a runtime",
                ),
                "job [x]: time_based: needs a runtime",
            ),
            (
                JobError::unknown_key(at_line(12, Some("bar")), "foo", None),
                "job.fio:12: unknown key 'foo' in section [bar]",
            ),
            (
                JobError::unknown_key(Location::Flag, "iodeph", Some("iodepth")),
                "unknown flag '--iodeph' (did you mean 'iodepth'?)",
            ),
            (
                JobError::whole_job(at_line(3, Some("seq")), "nothing bounds the run"),
                "job.fio:3: job [seq]: nothing bounds the run",
            ),
            (
                JobError::io("missing.fio", "No such file"),
                "missing.fio: No such file",
            ),
            (
                JobError::invalid(Location::Flag, "name", Some("a\nb".into()), "bad"),
                "--name=a b: bad",
            ),
        ];
        for (error, expected) in cases {
            assert_eq!(error.to_string(), expected);
        }
    }
}
