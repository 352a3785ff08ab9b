//! fio's I/O rate keys: rate limits and minimums, how arrivals are spaced, and think time between I/Os.

use super::values::set_if;
use super::values::{to_u32, NS_PER_US};
use super::{ApplyError, JobDraft, KeyDef};
use crate::error::{JobError, Location};
use crate::model::JobSpec;
use crate::model::ThinkSpec;
use crate::paths::KeyPath;
use crate::size::{parse_count, parse_size, parse_time_ns, split_read_write, ValueError, NS_PER_S};

/// The rate and think time keys as set.
#[derive(Clone, Debug, Default)]
pub(super) struct RateDraft {
    pub(super) iops_read: Option<u64>,
    pub(super) iops_write: Option<u64>,
    pub(super) bytes_read: Option<u64>,
    pub(super) bytes_write: Option<u64>,
    pub(super) poisson: Option<bool>,
    pub(super) min: Option<(Option<u64>, Option<u64>)>,
    pub(super) iops_min: Option<(Option<u64>, Option<u64>)>,
    pub(super) think_ns: Option<u64>,
    pub(super) think_spin_ns: Option<u64>,
    pub(super) think_every_ios: Option<u32>,
    pub(super) think_count_issued: Option<bool>,
    pub(super) think_every_io_ns: Option<u64>,
}

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "thinktime",
        aliases: &[],
        bare: false,
        meaning: "stall this long between batches of I/O (microseconds unless a unit is given)",
        field: "thinktime",
        path: KeyPath::None,
        apply: |d, v| {
            d.rate.think_ns = Some(parse_time_ns(v, NS_PER_US)?);
            Ok(())
        },
    },
    KeyDef {
        name: "thinktime_spin",
        aliases: &[],
        bare: false,
        meaning: "spend this part of each thinktime stall spinning on the CPU (microseconds unless a unit is given)",
        field: "thinktime_spin",
        path: KeyPath::None,
        apply: |d, v| {
            d.rate.think_spin_ns = Some(parse_time_ns(v, NS_PER_US)?);
            Ok(())
        },
    },
    KeyDef {
        name: "thinktime_blocks",
        aliases: &[],
        bare: false,
        meaning: "stall for thinktime after this many I/Os (default 1)",
        field: "thinktime_blocks",
        path: KeyPath::None,
        apply: |d, v| {
            let every = to_u32(parse_count(v)?, v)?;
            if every == 0 {
                return Err(ApplyError::Invalid("at least 1 I/O between stalls".into()));
            }
            d.rate.think_every_ios = Some(every);
            Ok(())
        },
    },
    KeyDef {
        name: "thinktime_blocks_type",
        aliases: &[],
        bare: false,
        meaning: "count thinktime_blocks as I/Os completed (complete, the default) or issued (issue)",
        field: "thinktime_blocks_type",
        path: KeyPath::None,
        apply: |d, v| {
            d.rate.think_count_issued = Some(match v {
                "complete" => false,
                "issue" => true,
                _ => return Err(ApplyError::Invalid("use complete or issue".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "thinktime_iotime",
        aliases: &[],
        bare: false,
        meaning: "stall for thinktime after this long of I/O (seconds unless a unit is given)",
        field: "thinktime_iotime",
        path: KeyPath::None,
        apply: |d, v| {
            d.rate.think_every_io_ns = Some(parse_time_ns(v, NS_PER_S)?);
            Ok(())
        },
    },
    KeyDef {
        name: "rate",
        aliases: &[],
        bare: false,
        meaning: "bytes per second ceiling (e.g. 50m), for both or read,write",
        field: "rate",
        path: KeyPath::None,
        apply: |d, v| {
            (d.rate.bytes_read, d.rate.bytes_write) =
                parse_rate_pair(v, parse_size, "50m or 50m,20m")?;
            Ok(())
        },
    },
    KeyDef {
        name: "rate_iops",
        aliases: &[],
        bare: false,
        meaning: "I/Os per second ceiling, for both or read,write",
        field: "rate_iops",
        path: KeyPath::None,
        apply: apply_rate_iops,
    },
    KeyDef {
        name: "rate_min",
        aliases: &["ratemin"],
        bare: false,
        meaning: "bandwidth a job must keep (e.g. 10m), for both or read,write: below it over an interval, the job fails",
        field: "rate_min",
        path: KeyPath::None,
        apply: |d, v| {
            d.rate.min = Some(parse_rate_pair(v, parse_size, "10m or 10m,5m")?);
            Ok(())
        },
    },
    KeyDef {
        name: "rate_iops_min",
        aliases: &[],
        bare: false,
        meaning: "I/Os per second a job must keep, for both or read,write: below it over an interval, the job fails",
        field: "rate_iops_min",
        path: KeyPath::None,
        apply: |d, v| {
            d.rate.iops_min = Some(parse_rate_pair(v, parse_count, "100 or 100,50")?);
            Ok(())
        },
    },
    KeyDef {
        name: "rate_process",
        aliases: &[],
        bare: false,
        meaning: "linear (evenly spaced rated I/O, the default) or poisson (exponential intervals)",
        field: "rate_process",
        path: KeyPath::None,
        apply: |d, v| {
            d.rate.poisson = Some(match v {
                "linear" => false,
                "poisson" => true,
                _ => return Err(ApplyError::Invalid("use linear or poisson".into())),
            });
            Ok(())
        },
    },
];

fn apply_rate_iops(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    (d.rate.iops_read, d.rate.iops_write) = parse_rate_pair(v, parse_count, "500 or 500,200")?;
    Ok(())
}

/// A rate for both directions or `read,write` (either may be left out), each read by `parse`.
/// fio's `read,write[,trim]` rate: the trim value is checked and has no effect, since storlab
/// does not pace trims (a trim mode of `rw` issues them unpaced); fio's exitwhat.fio gives `rate=300,300,300`.
fn parse_rate_pair(
    v: &str,
    parse: fn(&str) -> Result<u64, ValueError>,
    example: &str,
) -> Result<(Option<u64>, Option<u64>), ApplyError> {
    let v = match v.split(',').collect::<Vec<_>>().as_slice() {
        [read, write, trim] => {
            if !trim.trim().is_empty() {
                parse(trim.trim())?;
            }
            &v[..read.len() + 1 + write.len()]
        }
        _ => v,
    };
    let (read, write) = split_read_write(v)?;
    if read.is_none() && write.is_none() {
        return Err(ApplyError::Invalid(format!(
            "a rate is needed (e.g. {example})"
        )));
    }
    Ok((read.map(parse).transpose()?, write.map(parse).transpose()?))
}

impl JobDraft {
    /// Rate limits and minimums, how arrivals are spaced, and think time.
    pub(super) fn build_rate(&self, spec: &mut JobSpec) {
        spec.rate_iops.read = self.rate.iops_read;
        spec.rate_iops.write = self.rate.iops_write;
        spec.rate_bytes.read = self.rate.bytes_read;
        spec.rate_bytes.write = self.rate.bytes_write;
        set_if(&mut spec.rate_poisson, self.rate.poisson);
        if let Some((read, write)) = self.rate.min {
            spec.rate_min.read = read;
            spec.rate_min.write = write;
        }
        if let Some((read, write)) = self.rate.iops_min {
            spec.rate_iops_min.read = read;
            spec.rate_iops_min.write = write;
        }
        spec.think = ThinkSpec {
            think_ns: self.rate.think_ns.unwrap_or(0),
            spin_ns: self.rate.think_spin_ns.unwrap_or(0),
            every_ios: self.rate.think_every_ios,
            count_issued: self.rate.think_count_issued.unwrap_or(false),
            every_io_ns: self.rate.think_every_io_ns.unwrap_or(0),
        };
    }
}

impl JobDraft {
    /// fio 3.33 sleeps forever once a stall's spin overruns the whole `thinktime`
    /// (backend.c `handle_thinktime`: `int left = thinktime - spun`, passed to `usec_sleep` as
    /// an unsigned count, which it then sleeps a second at a time). How long a spin takes is
    /// the machine's: a preemption does it. Seed 2020: `--rw=write --size=256k` with
    /// thinktime=60 thinktime_spin=10 hung in 3 of 4 runs, 10/5 in 1 of 4, 110/10 and 1010/10
    /// in none; where less than 1 ms separates them the job is refused rather than run where
    /// fio, run to run, may never end.
    pub(super) fn check_spin_overrun(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        let think = spec.think;
        // Without a thinktime fio never stalls, and never spins.
        let close = think.think_ns > 0
            && think.spin_ns > 0
            && think.think_ns < think.spin_ns + SPIN_MARGIN_NS;
        if self.storlab_rw_default || !close {
            return Ok(());
        }
        Err(self.refused_at_key(
            "thinktime_spin",
            job_location,
            "fio 3.33 sleeps forever when a stall's spin runs past thinktime (its time left goes \
             negative, read as unsigned), which a preemption does where less than 1 ms \
             separates them (a hang in 3 of 4 runs of thinktime=60 thinktime_spin=10); leave \
             thinktime at least 1 ms above thinktime_spin, or drop thinktime_spin"
                .to_string(),
        ))
    }

    /// `rate_process=poisson` with syncs every N writes: after queueing a sync fio 3.33 asks
    /// its rate for the sync's next time (backend.c `do_io` calls `usec_for_io` with
    /// DDIR_SYNC or DDIR_DATASYNC), indexing its per-direction arrays past their end: its
    /// Poisson draw divides by what lies there (another direction's next time over another's
    /// block size), so a job whose reads have no rate dies of SIGFPE at its first `fsync`
    /// (`--rw=randwrite --rate=1m --rate_process=poisson --fsync=1`, every run), and any
    /// other draws from memory that is not its own. Refused rather than followed.
    pub(super) fn check_poisson_syncs(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        let rated = [spec.rate_iops.read, spec.rate_iops.write]
            .iter()
            .chain(&[spec.rate_bytes.read, spec.rate_bytes.write])
            .any(|rate| rate.is_some_and(|r| r > 0));
        // Syncs every N writes come only in a job that writes (io_u.c `should_fsync`), once
        // it has written N (`--size=256k --bs=64k --fdatasync=5` never syncs, and fio runs it).
        let every = [
            spec.sync.fsync_every_writes,
            spec.sync.fdatasync_every_writes,
        ]
        .into_iter()
        .filter(|&n| n > 0)
        .min();
        let syncs_every_n =
            spec.fio_writes() && every.is_some_and(|n| most_writes(spec) >= u64::from(n));
        if self.storlab_rw_default || !(spec.rate_poisson && rated && syncs_every_n) {
            return Ok(());
        }
        Err(self.refused_at_key(
            "rate_process",
            job_location,
            "with fsync or fdatasync every N writes, fio 3.33 draws each sync's Poisson delay \
             from its per-direction rate arrays past their end (backend.c usec_for_io): a job \
             whose reads have no rate dies of SIGFPE at its first fsync, others read memory \
             not their own; use rate_process=linear, or end_fsync instead"
                .to_string(),
        ))
    }
}

/// The most writes `spec` can issue: its bytes (`io_size`, else `size`, every loop) in its
/// smallest writes, or its `number_ios`; unbounded when time-based or sized by its target.
fn most_writes(spec: &JobSpec) -> u64 {
    let bytes = spec.io_size_bytes.or(spec.size_bytes);
    let by_bytes = match bytes {
        Some(bytes) if !spec.time_based => {
            let loops = u64::from(spec.loops.max(1));
            bytes.saturating_mul(loops) / spec.block_size_write.min_bytes().max(1)
        }
        _ => u64::MAX,
    };
    spec.number_ios.map_or(by_bytes, |n| by_bytes.min(n))
}

/// How far `thinktime` must be above `thinktime_spin` for fio 3.33's stall to end reliably.
const SPIN_MARGIN_NS: u64 = 1_000_000;

#[cfg(test)]
mod tests {
    use crate::keys::draft;
    use crate::model::{RateIops, ThinkSpec};
    use crate::size::NS_PER_S;

    #[test]
    fn rate_iops_takes_one_or_two_values() {
        let rate =
            |value| draft(&[("rate_iops", Some(value)), ("size", Some("1M"))]).map(|s| s.rate_iops);
        assert_eq!(
            rate("500"),
            Ok(RateIops {
                read: Some(500),
                write: Some(500)
            })
        );
        assert_eq!(
            rate("500,200"),
            Ok(RateIops {
                read: Some(500),
                write: Some(200)
            })
        );
        assert_eq!(
            rate(",200"),
            Ok(RateIops {
                read: None,
                write: Some(200)
            })
        );
    }

    /// Seed 2020: fio never ends where a spin overruns the thinktime; under 1 ms apart is
    /// refused, 1 ms apart or more runs.
    #[test]
    fn a_spin_close_to_its_thinktime_is_refused() {
        let think = |time: &str, spin: &str| {
            draft(&[
                ("size", Some("1M")),
                ("thinktime", Some(time)),
                ("thinktime_spin", Some(spin)),
            ])
        };
        for (time, spin) in [("10", "5"), ("60", "10"), ("1009", "10"), ("5", "5")] {
            let error = think(time, spin).unwrap_err().to_string();
            assert!(error.contains("sleeps forever"), "{time}/{spin}: {error}");
        }
        think("1010", "10").unwrap();
        think("10", "0").unwrap();
        think("0", "10").unwrap();
    }

    #[test]
    fn poisson_arrivals_with_syncs_every_n_are_refused() {
        let job = |more: &[(&str, Option<&str>)]| {
            let mut keys = vec![
                ("size", Some("1M")),
                ("rw", Some("randwrite")),
                ("rate_process", Some("poisson")),
            ];
            keys.extend_from_slice(more);
            draft(&keys)
        };
        for sync in ["fsync", "fdatasync"] {
            let error = job(&[("rate", Some("1m")), (sync, Some("4"))])
                .unwrap_err()
                .to_string();
            assert!(error.contains("SIGFPE"), "{sync}: {error}");
        }
        job(&[("rate", Some("1m")), ("end_fsync", Some("1"))]).unwrap();
        // No rate: fio never asks for the next I/O's time; a job that only reads never syncs.
        job(&[("fsync", Some("4"))]).unwrap();
        draft(&[
            ("size", Some("1M")),
            ("rw", Some("randread")),
            ("rate", Some("4m")),
            ("rate_process", Some("poisson")),
            ("fsync", Some("3")),
        ])
        .unwrap();
    }

    #[test]
    fn thinktime_keys_follow_fio_units() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("thinktime", Some("1500")),
            ("thinktime_spin", Some("100")),
            ("thinktime_blocks", Some("16")),
            ("thinktime_blocks_type", Some("issue")),
            ("thinktime_iotime", Some("2")),
        ])
        .unwrap();
        assert_eq!(
            spec.think,
            ThinkSpec {
                think_ns: 1_500_000,
                spin_ns: 100_000,
                every_ios: Some(16),
                count_issued: true,
                every_io_ns: 2 * NS_PER_S,
            }
        );
        assert_eq!(
            draft(&[("thinktime_blocks", Some("0"))])
                .unwrap_err()
                .to_string(),
            "--thinktime_blocks=0: at least 1 I/O between stalls"
        );
        let spec = draft(&[("size", Some("1M")), ("thinktime_blocks", Some("4"))]).unwrap();
        assert!(spec
            .warnings
            .iter()
            .any(|w| w.contains("without thinktime")));
    }
}
