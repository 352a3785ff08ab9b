//! Value readers several key groups share: one value for both directions, small integers, microseconds, and keys accepted without effect.

use super::{ApplyError, JobDraft};
use crate::model::JobSpec;
use crate::model::MICROS_PER_UNIT;
use crate::size::{parse_bool, parse_size, split_read_write, ValueError};

pub(super) fn to_u32(value: u64, text: &str) -> Result<u32, ApplyError> {
    u32::try_from(value).map_err(|_| ApplyError::Invalid(format!("'{text}' is too large")))
}

/// Both directions of a read,write pair must agree for settings storlab keeps once per job.
pub(super) fn single_for_both<T: PartialEq + Copy>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, ValueError>,
) -> Result<T, ApplyError> {
    let (read, write) = split_read_write(text)?;
    let read = read.map(&parse).transpose()?;
    let write = write.map(&parse).transpose()?;
    match (read, write) {
        (Some(r), Some(w)) if r == w => Ok(r),
        (Some(_), Some(_)) => Err(ApplyError::Unsupported(
            "storlab takes one value for both directions here".into(),
        )),
        (Some(v), None) | (None, Some(v)) => Ok(v),
        (None, None) => Err(ApplyError::Invalid("a value is needed".into())),
    }
}

/// A size of `0` is accepted (fio's default); anything else is refused with `why`.
pub(super) fn refuse_unless_zero(value: &str, why: &str) -> Result<(), ApplyError> {
    match parse_size(value)? {
        0 => Ok(()),
        _ => Err(ApplyError::Unsupported(why.into())),
    }
}

/// A boolean key accepted off (fio's default) and refused on, with `why`.
pub(super) fn refuse_if_set(value: &str, why: &str) -> Result<(), ApplyError> {
    match parse_bool(value)? {
        false => Ok(()),
        true => Err(ApplyError::Unsupported(why.into())),
    }
}

/// A whole number from 0 to `max` (fio's `minval`/`maxval` check of an integer option).
pub(super) fn parse_small_int(v: &str, max: u8) -> Result<u8, ApplyError> {
    match v.trim().parse::<u8>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(ApplyError::Invalid(format!(
            "a whole number from 0 to {max} is needed"
        ))),
    }
}

pub(super) fn accept_without_effect(d: &mut JobDraft, key: &'static str) {
    if !d.no_effect.contains(&key) {
        d.no_effect.push(key);
    }
}

/// What an accepted key does in fio that storlab does not, for its warning.
pub(super) fn no_effect_reason(key: &str) -> &'static str {
    match key {
        "verify_pattern" => "accepted, no effect: fio writes and checks it only when verifying",
        "verify_async" => {
            "accepted, no effect on what is checked: fio hands checks to helper threads, storlab \
             checks in the thread that reaps the read"
        }
        "softrandommap" => {
            "accepted, no effect: fio falls back to no random map only when it cannot allocate \
             one; storlab's is always allocated"
        }
        "numa_cpu_nodes" => {
            "accepted, no effect: storlab does not bind its worker threads to NUMA nodes"
        }
        "fallocate" => {
            "accepted, no effect: storlab writes every block of a file it lays out before the \
             job starts (it measures no sparse or preallocated-unwritten file), which allocates \
             the file whatever the mode; fio's first writes into a file it left sparse \
             (none, truncate) or preallocated (native, posix, keep) also allocate or convert \
             extents, which storlab's overwrites do not"
        }
        "overwrite" => {
            "accepted, no effect on the job's I/O: fio lays a file too small for a write job out \
             first only with overwrite=1 (else the writes extend it); storlab lays out every \
             file it creates before the job"
        }
        "create_fsync" => {
            "accepted, no effect: storlab syncs every file it lays out before the job, as fio's \
             default create_fsync=1"
        }
        "openfiles" | "file_service_type" => {
            "accepted, no effect on one file: fio's I/O there is the same whatever this says \
             (it chooses among several files; zipf, pareto and normal do change it, and storlab \
             follows them; openfiles above 1 turns zonemode=strided off, as in fio)"
        }
        _ => "accepted, no effect",
    }
}

/// fio reads `thinktime` and `thinktime_spin` without a unit as microseconds.
pub(super) const NS_PER_US: u64 = 1_000;

/// A non-negative decimal (`1.2`, `0.25`, `90`) in millionths; at most six decimals.
pub(super) fn parse_micros(text: &str) -> Result<u64, ApplyError> {
    const DECIMALS_MAX: usize = 6;
    let invalid = || ApplyError::Invalid(format!("'{text}' is not a number such as 1.2"));
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty()
        || !digits(whole)
        || !digits(fraction)
        || fraction.len() > DECIMALS_MAX
    {
        return Err(invalid());
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| invalid())?
    };
    let scaled_fraction: u64 = format!("{fraction:0<DECIMALS_MAX$}")
        .parse()
        .map_err(|_| invalid())?;
    whole
        .checked_mul(MICROS_PER_UNIT)
        .and_then(|w| w.checked_add(scaled_fraction))
        .ok_or_else(invalid)
}

impl JobDraft {
    /// One warning per key accepted without effect (`verify_pattern` has one when the job
    /// verifies with a fio kind).
    pub(super) fn push_no_effect_warnings(&self, spec: &mut JobSpec) {
        for key in &self.no_effect {
            if *key == "verify_pattern" && spec.verify_spec.is_some() {
                continue;
            }
            spec.warnings
                .push(format!("{key}: {}", no_effect_reason(key)));
        }
    }
}

/// `*slot = value` when the value was set.
pub(super) fn set_if<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::draft;
    use crate::model::{FlowSpec, Target};

    #[test]
    fn accepted_keys_say_what_they_do_not_change() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("flow", Some("2")),
            ("numa_cpu_nodes", Some("0")),
            ("gtod_reduce", None),
            ("clocksource", Some("cpu")),
            ("io_submit_mode", Some("offload")),
        ])
        .unwrap();
        assert_eq!(spec.warnings.len(), 1, "{:?}", spec.warnings);
        assert!(spec.warnings[0].starts_with("numa_cpu_nodes: accepted, no effect"));
        assert_eq!(
            spec.flow,
            Some(FlowSpec {
                id: 0,
                weight: 2,
                sleep_ns: 0
            })
        );
        let spec = draft(&[
            ("size", Some("1M")),
            ("flow_id", Some("3")),
            ("flow", Some("5")),
            ("flow_sleep", Some("100")),
        ])
        .unwrap();
        assert_eq!(
            spec.flow,
            Some(FlowSpec {
                id: 3,
                weight: 5,
                sleep_ns: 100_000
            })
        );
        assert_eq!(
            draft(&[("size", Some("1M")), ("flow", Some("0"))])
                .unwrap()
                .flow,
            None
        );
        assert_eq!(
            draft(&[("flow", Some("1001"))]).unwrap_err().to_string(),
            "--flow=1001: a weight from 0 to 1000 is needed"
        );
        assert!(draft(&[("nrfiles", Some("4"))])
            .unwrap_err()
            .to_string()
            .starts_with("--nrfiles=4: storlab runs one file per job: fio's several files"));
        // As fio 3.33: a named file caps nrfiles, so the job has that one file, whole.
        let capped = draft(&[
            ("filename", Some("data")),
            ("nrfiles", Some("4")),
            ("size", Some("64k")),
        ]);
        assert_eq!(capped.unwrap().size_bytes, Some(64 << 10));
        assert!(draft(&[("nrfiles", Some("0"))]).is_err());
        assert!(draft(&[("clocksource", Some("tsc"))]).is_err());
        assert!(draft(&[("fallocate", Some("yes"))]).is_err());
        for mode in ["none", "native", "posix", "keep", "truncate", "0", "1"] {
            let spec = draft(&[("size", Some("1M")), ("fallocate", Some(mode))]).unwrap();
            assert!(
                spec.warnings.len() == 1 && spec.warnings[0].starts_with("fallocate: accepted"),
                "{mode}: {:?}",
                spec.warnings
            );
        }
        let spec = draft(&[("filesize", Some("64k")), ("rate_process", Some("poisson"))]).unwrap();
        assert_eq!(spec.size_bytes, Some(64 << 10));
        assert!(spec.rate_poisson);
        let spec = draft(&[
            ("size", Some("1M")),
            ("directory", Some("/tmp/d")),
            ("filename_format", Some("$jobname.$jobnum.$filenum")),
        ])
        .unwrap();
        assert_eq!(spec.target, Target::Path("/tmp/d/job.0.0".into()));
    }

    /// The file-choice keys take the values fio 3.33 takes and fail where it fails.
    #[test]
    fn file_choice_keys_take_fios_values() {
        // What fio 3.33 accepts and fails for the file-choice keys (`fio --name=j
        // --filename=f --rw=read --bs=4k --size=16k --file_service_type=...`: exit 0 or 1).
        for (value, fio_accepts) in [
            ("random:x", true),
            ("gauss", true),
            ("zipf", true),
            ("normal:5:0.5", true),
            ("sequential:3", true),
            ("foo", false),
            ("RANDOM", false),
            ("randomx", false),
            ("zipf:1", false),
            ("pareto:2", false),
            ("normal:100", false),
            ("zipf:1.2:2", false),
        ] {
            let result = draft(&[("size", Some("64k")), ("file_service_type", Some(value))]);
            assert_eq!(result.is_ok(), fio_accepts, "file_service_type={value}");
        }
        for (value, fio_accepts) in [("-1", true), ("0", true), ("4k", true), ("abc", false)] {
            let result = draft(&[("size", Some("64k")), ("openfiles", Some(value))]);
            assert_eq!(result.is_ok(), fio_accepts, "openfiles={value}");
        }
    }
}
