//! fio's time-related keys: how long a job runs, when it starts, and the clocks it reads.

use super::values::set_if;
use super::JobDraft;
use super::{ApplyError, KeyDef};
use crate::model::JobSpec;
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_time_ns, NS_PER_S};

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "runtime",
        aliases: &["timeout"],
        bare: false,
        meaning: "time limit after ramp (seconds unless a unit is given)",
        field: "runtime",
        path: KeyPath::None,
        apply: |d, v| {
            d.runtime_ns = Some(parse_time_ns(v, NS_PER_S)?);
            Ok(())
        },
    },
    KeyDef {
        name: "time_based",
        aliases: &[],
        bare: true,
        meaning: "keep going over the region until runtime ends",
        field: "time_based",
        path: KeyPath::None,
        apply: |d, v| {
            d.time_based = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "ramp_time",
        aliases: &[],
        bare: false,
        meaning: "run this long before statistics count (seconds unless a unit is given)",
        field: "ramp_time",
        path: KeyPath::None,
        apply: |d, v| {
            d.ramp_time_ns = Some(parse_time_ns(v, NS_PER_S)?);
            Ok(())
        },
    },
    KeyDef {
        name: "startdelay",
        aliases: &[],
        bare: false,
        meaning: "start the job this long after the run starts, or a time drawn per job from LOW-HIGH (seconds unless a unit is given); not part of runtime",
        field: "startdelay",
        path: KeyPath::None,
        apply: |d, v| {
            d.start_delay = Some(parse_start_delay(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "gtod_reduce",
        aliases: &[],
        bare: true,
        meaning: "fio: 1 sets disable_lat, disable_clat, disable_slat and disable_bw_measurement (fio's reports then leave the latencies out); storlab's clock reads cost tens of nanoseconds",
        field: "gtod_reduce",
        path: KeyPath::None,
        apply: |d, v| {
            // fio's callback sets the disable keys only for 1, leaving them alone for 0.
            if parse_bool(v)? {
                d.report.gtod_reduce();
            }
            Ok(())
        },
    },
    KeyDef {
        name: "clocksource",
        aliases: &[],
        bare: false,
        meaning: "gettimeofday, clock_gettime or cpu accepted: storlab always times with CLOCK_MONOTONIC",
        field: "clocksource",
        path: KeyPath::None,
        apply: |_, v| match v {
            "gettimeofday" | "clock_gettime" | "cpu" => Ok(()),
            _ => Err(ApplyError::Invalid(
                "use gettimeofday, clock_gettime or cpu".into(),
            )),
        },
    },
];

/// A key storlab accepts without reproducing what it does in fio: checked like fio checks it,
/// then remembered for a warning when it asks for something.
/// fio's `startdelay`: one time, or a range `LOW-HIGH` (also `LOW:HIGH` or `LOW,HIGH`, as fio's
/// parser splits a two-value option), each in seconds unless a unit is given.
fn parse_start_delay(v: &str) -> Result<crate::StartDelay, ApplyError> {
    let v = v.trim();
    let (low, high) = match v.find(['-', ':', ',']) {
        // A leading '-' is a negative time, which parse_time_ns names.
        Some(at) if at > 0 => (&v[..at], &v[at + 1..]),
        _ => (v, v),
    };
    let low_ns = parse_time_ns(low, NS_PER_S)?;
    let high_ns = parse_time_ns(high, NS_PER_S)?;
    if low_ns > high_ns {
        return Err(ApplyError::Invalid(format!(
            "the range's low end {low} is above its high end {high}"
        )));
    }
    Ok(crate::StartDelay { low_ns, high_ns })
}

impl JobDraft {
    /// `runtime`, `time_based`, `ramp_time` and `startdelay`.
    pub(super) fn build_time(&self, spec: &mut JobSpec) {
        spec.runtime_ns = self.runtime_ns;
        set_if(&mut spec.time_based, self.time_based);
        set_if(&mut spec.ramp_time_ns, self.ramp_time_ns);
        set_if(&mut spec.start_delay, self.start_delay);
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::draft;
    use crate::size::NS_PER_S;

    /// Regression (issue 24): `timeout`, fio's alias of `runtime`, was an unknown key.
    #[test]
    fn timeout_is_runtime() {
        let spec = draft(&[("size", Some("1M")), ("timeout", Some("2"))]).unwrap();
        assert_eq!(spec.runtime_ns, Some(2 * NS_PER_S));
    }
}
