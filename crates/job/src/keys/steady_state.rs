//! fio's steady state keys: `steadystate`, `steadystate_duration` and `steadystate_ramp_time`.

use super::values::parse_micros;
use super::{ApplyError, JobDraft, KeyDef};
use crate::model::JobSpec;
use crate::model::SteadyStateSpec;
use crate::model::MICROS_PER_UNIT;
use crate::paths::KeyPath;
use crate::size::{parse_size, parse_time_ns, NS_PER_S};

/// The steady state keys as set.
#[derive(Clone, Debug, Default)]
pub(super) struct SteadyStateDraft {
    /// `steadystate=CRITERION:LIMIT` as (bandwidth, slope, limit in millionths, percent).
    pub(super) criterion: Option<(bool, bool, u64, bool)>,
    pub(super) duration_ns: Option<u64>,
    pub(super) ramp_ns: Option<u64>,
}

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "steadystate",
        aliases: &["ss"],
        bare: false,
        meaning:
            "stop once steady: iops, iops_slope, bw or bw_slope:LIMIT[%] over steadystate_duration",
        field: "steadystate",
        path: KeyPath::None,
        apply: apply_steadystate,
    },
    KeyDef {
        name: "steadystate_duration",
        aliases: &["ss_dur"],
        bare: false,
        meaning: "the window steady state is judged over (seconds unless a unit is given; 0 = off)",
        field: "steadystate_duration",
        path: KeyPath::None,
        apply: |d, v| {
            d.steady_state.duration_ns = Some(parse_time_ns(v, NS_PER_S)?);
            Ok(())
        },
    },
    KeyDef {
        name: "steadystate_ramp_time",
        aliases: &["ss_ramp"],
        bare: false,
        meaning:
            "run this long before steady-state samples are taken (seconds unless a unit is given)",
        field: "steadystate_ramp_time",
        path: KeyPath::None,
        apply: |d, v| {
            d.steady_state.ramp_ns = Some(parse_time_ns(v, NS_PER_S)?);
            Ok(())
        },
    },
];

/// fio's default steady-state limit, 0.01% (of the mean), in millionths of a percent.
pub(super) const STEADYSTATE_DEFAULT_LIMIT_MICROS: u64 = 10_000;

/// `steadystate=iops|iops_slope|bw|bw_slope:LIMIT[%]` (fio 3.33, options.c `str_steadystate_cb`).
fn apply_steadystate(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let Some((criterion, limit)) = v.split_once(':') else {
        return Err(ApplyError::Invalid(
            "use CRITERION:LIMIT, e.g. iops_slope:0.1% (criteria: iops, iops_slope, bw, bw_slope)"
                .into(),
        ));
    };
    let (bandwidth, slope) = match criterion {
        "iops" => (false, false),
        "iops_slope" => (false, true),
        "bw" => (true, false),
        "bw_slope" => (true, true),
        _ => {
            return Err(ApplyError::Invalid(
                "criteria are iops, iops_slope, bw and bw_slope".into(),
            ))
        }
    };
    let (number, percent) = match limit.strip_suffix('%') {
        Some(number) => (number, true),
        None => (limit, false),
    };
    // fio reads an absolute bandwidth limit as a size (`bw:10m`).
    let limit_micros = if bandwidth && !percent {
        parse_size(number)?
            .checked_mul(MICROS_PER_UNIT)
            .ok_or_else(|| ApplyError::Invalid(format!("'{number}' is too large")))?
    } else {
        parse_micros(number)?
    };
    d.steady_state.criterion = Some((bandwidth, slope, limit_micros, percent));
    Ok(())
}

impl JobDraft {
    /// Steady state, judged only with a duration.
    pub(super) fn build_steady_state(&self, spec: &mut JobSpec) {
        // fio: steady state is judged only with a duration; its default criterion is
        // iops_slope:0.01%.
        spec.steadystate = self
            .steady_state
            .duration_ns
            .filter(|d| *d > 0)
            .map(|duration_ns| {
                let (bandwidth, slope, limit_micros, percent) = self
                    .steady_state
                    .criterion
                    .unwrap_or((false, true, STEADYSTATE_DEFAULT_LIMIT_MICROS, true));
                SteadyStateSpec {
                    bandwidth,
                    slope,
                    limit_micros,
                    percent,
                    duration_ns,
                    ramp_ns: self.steady_state.ramp_ns.unwrap_or(0),
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::draft;
    use crate::model::{SteadyStateSpec, MICROS_PER_UNIT};
    use crate::size::NS_PER_S;

    #[test]
    fn steadystate_needs_a_duration_and_reads_fios_limits() {
        let spec = draft(&[("size", Some("1M")), ("ss", Some("iops:5%"))]).unwrap();
        assert_eq!(spec.steadystate, None, "no duration: not judged (as fio)");
        let spec = draft(&[("size", Some("1M")), ("ss_dur", Some("30"))]).unwrap();
        assert_eq!(
            spec.steadystate,
            Some(SteadyStateSpec {
                bandwidth: false,
                slope: true,
                limit_micros: 10_000,
                percent: true,
                duration_ns: 30 * NS_PER_S,
                ramp_ns: 0,
            })
        );
        let spec = draft(&[
            ("size", Some("1M")),
            ("steadystate", Some("bw:10m")),
            ("steadystate_duration", Some("20s")),
            ("steadystate_ramp_time", Some("5")),
        ])
        .unwrap()
        .steadystate
        .unwrap();
        assert_eq!(
            (
                spec.bandwidth,
                spec.slope,
                spec.percent,
                spec.limit_micros,
                spec.ramp_ns
            ),
            (
                true,
                false,
                false,
                (10 << 20) * MICROS_PER_UNIT,
                5 * NS_PER_S
            )
        );
        assert!(draft(&[("ss", Some("latency:5%"))]).is_err());
        assert!(draft(&[("ss", Some("iops"))]).is_err());
    }
}
