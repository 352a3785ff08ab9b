//! fio's measurements and reporting keys: `group_reporting` and the logs (`write_*_log`, `log_*`).

use super::values::set_if;
use super::values::{refuse_if_set, refuse_unless_zero};
use super::{ApplyError, JobDraft, KeyDef};
use crate::model::{FioLogKind, FioLogs, JobSpec, FIO_LOG_HIST_COARSENESS_MAX};
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_count};
use std::path::PathBuf;

/// The reporting and log keys as set.
#[derive(Clone, Debug, Default)]
pub(super) struct LogsDraft {
    pub(super) group_reporting: Option<bool>,
    /// fio's log settings; a prefix of `None` inside means the job's name (a bare key).
    pub(super) fio_logs: FioLogs,
    /// `write_*_log` given bare: the log is named after the job, known once it is finished.
    pub(super) named_by_job: Vec<FioLogKind>,
}

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "write_bw_log",
        aliases: &[],
        bare: true,
        meaning: "bandwidth log PREFIX_bw.N.log in fio's format (bare: the job's name)",
        field: "write_bw_log",
        path: KeyPath::WrittenPrefix,
        apply: |d, v| {
            d.log_prefix(FioLogKind::Bandwidth, v);
            Ok(())
        },
    },
    KeyDef {
        name: "write_iops_log",
        aliases: &[],
        bare: true,
        meaning: "IOPS log PREFIX_iops.N.log in fio's format (bare: the job's name)",
        field: "write_iops_log",
        path: KeyPath::WrittenPrefix,
        apply: |d, v| {
            d.log_prefix(FioLogKind::Iops, v);
            Ok(())
        },
    },
    KeyDef {
        name: "write_lat_log",
        aliases: &[],
        bare: true,
        meaning:
            "latency logs PREFIX_lat.N.log, _clat and _slat in fio's format (bare: the job's name)",
        field: "write_lat_log",
        path: KeyPath::WrittenPrefix,
        apply: |d, v| {
            d.log_prefix(FioLogKind::Latency, v);
            Ok(())
        },
    },
    KeyDef {
        name: "write_hist_log",
        aliases: &[],
        bare: true,
        meaning:
            "completion latency histogram log PREFIX_clat_hist.N.log, lines every log_hist_msec",
        field: "write_hist_log",
        path: KeyPath::WrittenPrefix,
        apply: |d, v| {
            d.log_prefix(FioLogKind::CompletionHistogram, v);
            Ok(())
        },
    },
    KeyDef {
        name: "log_avg_msec",
        aliases: &[],
        bare: false,
        meaning: "one averaged log entry per window of this many ms and direction (0: one per I/O)",
        field: "log_avg_msec",
        path: KeyPath::None,
        apply: |d, v| {
            d.logs.fio_logs.average_ms = parse_count(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_hist_msec",
        aliases: &[],
        bare: false,
        meaning: "one histogram log line per window of this many ms and direction",
        field: "log_hist_msec",
        path: KeyPath::None,
        apply: |d, v| {
            d.logs.fio_logs.histogram_ms = parse_count(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_hist_coarseness",
        aliases: &[],
        bare: false,
        meaning: "0 to 6: each step halves the histogram log's 1856 bins, as fio",
        field: "log_hist_coarseness",
        path: KeyPath::None,
        apply: |d, v| {
            let coarseness = parse_count(v)?;
            if coarseness > u64::from(FIO_LOG_HIST_COARSENESS_MAX) {
                return Err(ApplyError::Invalid(format!(
                    "use 0 to {FIO_LOG_HIST_COARSENESS_MAX}"
                )));
            }
            d.logs.fio_logs.histogram_coarseness = coarseness as u8;
            Ok(())
        },
    },
    KeyDef {
        name: "log_max_value",
        aliases: &[],
        bare: true,
        meaning: "with log_avg_msec, log each window's maximum instead of its mean",
        field: "log_max_value",
        path: KeyPath::None,
        apply: |d, v| {
            d.logs.fio_logs.max_value = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_offset",
        aliases: &[],
        bare: true,
        meaning: "log lines carry the I/O's offset",
        field: "log_offset",
        path: KeyPath::None,
        apply: |d, v| {
            d.logs.fio_logs.offset = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_prio",
        aliases: &[],
        bare: true,
        meaning: "log lines end in the I/O's priority value (hex) instead of 0/1",
        field: "log_prio",
        path: KeyPath::None,
        apply: |d, v| {
            d.logs.fio_logs.priority = parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "per_job_logs",
        aliases: &[],
        bare: true,
        meaning:
            "1 (default): one log file per job clone (.N); 0: one file per prefix, appended to",
        field: "per_job_logs",
        path: KeyPath::None,
        apply: |d, v| {
            d.logs.fio_logs.shared_file = !parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_entries",
        aliases: &[],
        bare: false,
        meaning: "accepted: fio's initial log allocation; storlab's logs grow as needed",
        field: "log_entries",
        path: KeyPath::None,
        apply: |_, v| {
            parse_count(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "log_compression",
        aliases: &[],
        bare: false,
        meaning: "0 accepted; compressing logs in memory refused",
        field: "log_compression",
        path: KeyPath::None,
        apply: |_, v| {
            refuse_unless_zero(v, "storlab keeps logs uncompressed in memory and writes them as text; leave out log_compression")
        },
    },
    KeyDef {
        name: "log_store_compressed",
        aliases: &[],
        bare: true,
        meaning: "0 accepted; compressed .fz log files refused",
        field: "log_store_compressed",
        path: KeyPath::None,
        apply: |_, v| {
            refuse_if_set(v, "storlab writes logs as text, which fio's plotting tools read; leave out log_store_compressed")
        },
    },
    KeyDef {
        name: "log_unix_epoch",
        aliases: &["log_alternate_epoch"],
        bare: true,
        meaning: "0 accepted; Unix-time log timestamps refused",
        field: "log_unix_epoch",
        path: KeyPath::None,
        apply: |_, v| {
            refuse_if_set(v, "storlab's log times are ms since the job's measurement began (fio's default), also for simulated time")
        },
    },
    KeyDef {
        name: "group_reporting",
        aliases: &[],
        bare: true,
        meaning: "report all workers of the job as one",
        field: "group_reporting",
        path: KeyPath::None,
        apply: |d, v| {
            d.logs.group_reporting = Some(parse_bool(v)?);
            Ok(())
        },
    },
];

impl JobDraft {
    /// `write_*_log=PREFIX` (or bare: named after the job) for the logs of `kind`.
    fn log_prefix(&mut self, kind: FioLogKind, value: &str) {
        self.logs.named_by_job.retain(|k| *k != kind);
        let prefix = if self.applying_bare {
            self.logs.named_by_job.push(kind);
            None
        } else {
            Some(PathBuf::from(value))
        };
        let logs = &mut self.logs.fio_logs;
        match kind {
            FioLogKind::Bandwidth => logs.bandwidth_prefix = prefix,
            FioLogKind::Iops => logs.iops_prefix = prefix,
            FioLogKind::CompletionHistogram => logs.histogram_prefix = prefix,
            _ => logs.latency_prefix = prefix,
        }
    }

    /// `group_reporting` and the logs, a bare `write_*_log` named after the job (`name`).
    pub(super) fn build_logs(&self, spec: &mut JobSpec, name: &str) {
        set_if(&mut spec.group_reporting, self.logs.group_reporting);
        spec.fio_logs = self.logs.fio_logs.clone();
        for kind in &self.logs.named_by_job {
            let prefix = Some(PathBuf::from(name));
            match kind {
                FioLogKind::Bandwidth => spec.fio_logs.bandwidth_prefix = prefix,
                FioLogKind::Iops => spec.fio_logs.iops_prefix = prefix,
                FioLogKind::CompletionHistogram => spec.fio_logs.histogram_prefix = prefix,
                _ => spec.fio_logs.latency_prefix = prefix,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::draft;
    use crate::model::FioLogKind;
    use std::path::PathBuf;

    #[test]
    fn log_keys_name_fios_files() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("numjobs", Some("2")),
            ("write_bw_log", None),
            ("write_lat_log", Some("out/lat")),
            ("log_avg_msec", Some("500")),
            ("log_offset", None),
        ])
        .unwrap();
        let logs = &spec.fio_logs;
        // A bare key names the log after the job, as fio.
        assert_eq!(
            logs.path(FioLogKind::Bandwidth, 2),
            Some(PathBuf::from("job_bw.2.log"))
        );
        assert_eq!(
            logs.path(FioLogKind::SubmissionLatency, 1),
            Some(PathBuf::from("out/lat_slat.1.log"))
        );
        assert_eq!(logs.path(FioLogKind::Iops, 1), None);
        assert_eq!((logs.average_ms, logs.offset), (500, true));
        let shared = draft(&[
            ("size", Some("1M")),
            ("write_iops_log", Some("x")),
            ("per_job_logs", Some("0")),
        ])
        .unwrap();
        assert_eq!(
            shared.fio_logs.path(FioLogKind::Iops, 7),
            Some(PathBuf::from("x_iops.log"))
        );
    }

    #[test]
    fn log_features_storlab_lacks_are_refused_in_one_line() {
        for (key, value) in [
            ("log_compression", "4m"),
            ("log_store_compressed", "1"),
            ("log_unix_epoch", "1"),
            ("log_hist_coarseness", "7"),
        ] {
            let error = draft(&[
                ("size", Some("1M")),
                ("write_bw_log", None),
                (key, Some(value)),
            ])
            .unwrap_err()
            .to_string();
            assert!(error.starts_with(&format!("--{key}={value}: ")), "{error}");
            assert!(!error.contains('\n'), "{error}");
        }
        assert!(draft(&[("size", Some("1M")), ("log_compression", Some("0"))]).is_ok());
        // fio's logs show which I/Os cmdprio gave a priority (`log_prio`): both together run.
        let spec = draft(&[
            ("size", Some("1M")),
            ("ioengine", Some("io_uring")),
            ("cmdprio_percentage", Some("20")),
            ("write_lat_log", None),
        ])
        .unwrap();
        assert!(spec.uses_cmdprio());
    }
}
