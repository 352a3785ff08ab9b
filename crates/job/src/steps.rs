//! Device-state steps: what a drive has been through before a measurement (fresh after TRIM,
//! sequentially filled, fragmented by random writes), as data the runner executes as ordinary
//! I/O through any engine, so presets, job runs and the command line share one meaning.
//!
//! A used SSD is slower than a fresh one, and chained tests run on whatever the previous test
//! left; storlab therefore makes the state explicit and records it with every result.

use crate::model::{BlockSizeSpec, JobSpec, KIB};
use crate::size::{format_size, parse_size};
use std::fmt;

/// Transfer size of the sequential fill (SNIA PTS workload-independent preconditioning).
pub const SEQ_FILL_BLOCK_BYTES: u64 = 128 * KIB;
/// Outstanding writes of the fill and fragmenting passes: enough to keep a queued device busy.
pub const PREPARE_IODEPTH: u32 = 4;
/// Block size of the fragmenting random writes.
pub const FRAGMENT_BLOCK_BYTES: u64 = 4 * KIB;

/// A state the target can be put in before measuring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceState {
    /// Whatever the target holds; nothing is done.
    AsFound,
    /// Every byte of the test region discarded (BLKDISCARD, hole punching, SCSI UNMAP).
    Fresh,
    /// Fresh, then one sequential pass of 128 KiB writes over the region.
    SeqFilled,
    /// Sequentially filled, then 4 KiB random writes totalling this many bytes.
    Fragmented { bytes: u64 },
}

/// Why a state argument was rejected; `Display` gives one line (`--state TEXT: DETAIL`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct StateError {
    pub text: String,
    pub detail: String,
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One line whatever the argument held: the detail quotes it, newlines and all.
        let one_line = |s: &str| s.replace(['\n', '\r'], " ");
        write!(
            f,
            "--state {}: {}",
            one_line(&self.text),
            one_line(&self.detail)
        )
    }
}

impl DeviceState {
    /// Parses `as-found`, `fresh`, `seq-filled` or `fragmented:SIZE` (SIZE like `16g`).
    pub fn parse(text: &str) -> Result<DeviceState, StateError> {
        let error = |detail: String| StateError {
            text: text.to_string(),
            detail,
        };
        let trimmed = text.trim();
        match trimmed {
            "as-found" => Ok(DeviceState::AsFound),
            "fresh" => Ok(DeviceState::Fresh),
            "seq-filled" => Ok(DeviceState::SeqFilled),
            _ => {
                let Some(size) = trimmed.strip_prefix("fragmented:") else {
                    return Err(error(
                        "unknown state; use as-found, fresh, seq-filled or fragmented:SIZE (e.g. fragmented:1g)"
                            .into(),
                    ));
                };
                let bytes = parse_size(size).map_err(|e| error(e.0))?;
                if bytes < FRAGMENT_BLOCK_BYTES {
                    return Err(error(format!(
                        "the random writes must total at least one {} block",
                        format_size(FRAGMENT_BLOCK_BYTES)
                    )));
                }
                Ok(DeviceState::Fragmented { bytes })
            }
        }
    }

    /// The state as results record it (`fresh`, `seq-filled`, `fragmented:16 GiB`).
    pub fn label(self) -> String {
        match self {
            DeviceState::AsFound => "as-found".into(),
            DeviceState::Fresh => "fresh".into(),
            DeviceState::SeqFilled => "seq-filled".into(),
            DeviceState::Fragmented { bytes } => {
                format!("fragmented:{}", format_size(bytes).replace(' ', ""))
            }
        }
    }

    /// The steps that create this state over the regions `template` covers (its target, engine,
    /// `offset`, `size` and worker layout), in order. `as-found` needs none. A sweep's state
    /// covers the measured regions only: `storlab_runner::state::state_steps` calls this with
    /// one byte-exact template per region once the target's size is known.
    pub fn steps(self, template: &JobSpec) -> Vec<Step> {
        let trim = {
            let mut job = prepare_job(template, "trim", 0);
            // A discard has no transfer size: the smallest block lets a region of any length
            // (h2benchw's 64 KiB point) be planned.
            let block = BlockSizeSpec::Fixed(template.align_bytes.max(1));
            job.block_size_read = block.clone();
            job.block_size_write = block;
            Step::Trim { job }
        };
        let fill = || {
            let mut job = prepare_job(template, "seq-fill", 0);
            job.random_percent = 0;
            job.block_size_write = BlockSizeSpec::Fixed(SEQ_FILL_BLOCK_BYTES);
            Step::Prepare {
                job,
                state_after: DeviceState::SeqFilled.label(),
            }
        };
        match self {
            DeviceState::AsFound => Vec::new(),
            DeviceState::Fresh => vec![trim],
            DeviceState::SeqFilled => vec![trim, fill()],
            DeviceState::Fragmented { bytes } => {
                let mut job = prepare_job(template, "fragment", 100);
                job.block_size_write = BlockSizeSpec::Fixed(FRAGMENT_BLOCK_BYTES);
                // Independent random writes, repeats allowed, as the reviews' IOMeter runs
                // fragmented a drive: SIZE of them leave some blocks written twice, some never.
                job.random_map = false;
                let workers = u64::from(job.numjobs.max(1));
                let ios = (bytes / FRAGMENT_BLOCK_BYTES).div_ceil(workers);
                job.number_ios = Some(ios);
                // `number_ios` alone does not go past one pass over the region (as fio's):
                // SIZE may be more than the region, so the bytes bound is raised to match.
                job.io_size_bytes = Some(ios.saturating_mul(FRAGMENT_BLOCK_BYTES));
                vec![
                    trim,
                    fill(),
                    Step::Prepare {
                        job,
                        state_after: self.label(),
                    },
                ]
            }
        }
    }
}

impl fmt::Display for DeviceState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// A write-only, untimed pass over `template`'s regions: the shape every preparation shares.
/// Preparation writes incompressible data, so a compressing controller really fills its flash.
fn prepare_job(template: &JobSpec, what: &str, random_percent: u8) -> JobSpec {
    let mut job = template.clone();
    job.name = format!("{}:{what}", template.name);
    job.read_percent = 0;
    job.random_percent = random_percent;
    // Both directions fixed: a measured job's block sizes (a range, a split) need not fit the
    // region a preparation runs on; the fill and the fragmenting writes set their own.
    job.block_size_read = BlockSizeSpec::Fixed(SEQ_FILL_BLOCK_BYTES);
    job.block_size_write = BlockSizeSpec::Fixed(SEQ_FILL_BLOCK_BYTES);
    job.iodepth = PREPARE_IODEPTH;
    job.number_ios = None;
    // One pass over the region: a measured job's `io_size` or `loops` would write it again.
    job.io_size_bytes = None;
    job.loops = 1;
    job.runtime_ns = None;
    job.time_based = false;
    job.ramp_time_ns = 0;
    job.rate_iops = Default::default();
    job.rate_bytes = Default::default();
    job.data_pattern = crate::model::DataPattern::Random;
    job.verify = false;
    job.stonewall = true;
    job.group_reporting = true;
    job.warnings.clear();
    job
}

/// One thing the runner does to a target in a sequence of steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Discard every byte of the job's worker regions through the job's engine (TRIM).
    Trim { job: JobSpec },
    /// Run the job without reporting it as a result; the target is then in `state_after`.
    Prepare { job: JobSpec, state_after: String },
}

impl Step {
    /// The job the step runs on (its target and region).
    pub fn job(&self) -> &JobSpec {
        match self {
            Step::Trim { job } | Step::Prepare { job, .. } => job,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EngineKind, Target};

    #[test]
    fn states_parse_and_print_back() {
        for text in ["as-found", "fresh", "seq-filled"] {
            assert_eq!(DeviceState::parse(text).unwrap().label(), text);
        }
        let fragmented = DeviceState::parse("fragmented:16g").unwrap();
        assert_eq!(fragmented, DeviceState::Fragmented { bytes: 16 << 30 });
        assert_eq!(fragmented.label(), "fragmented:16GiB");
        assert_eq!(DeviceState::parse(&fragmented.label()).unwrap(), fragmented);
    }

    #[test]
    fn bad_states_say_what_is_accepted() {
        let unknown = DeviceState::parse("clean").unwrap_err().to_string();
        assert!(unknown.starts_with("--state clean:"), "{unknown}");
        assert!(unknown.contains("fragmented:SIZE"), "{unknown}");
        let size = DeviceState::parse("fragmented:lots")
            .unwrap_err()
            .to_string();
        assert!(size.contains("lots"), "{size}");
        assert!(DeviceState::parse("fragmented:512").is_err());
    }

    /// Regression (no-panic test): an argument with a newline (`--state $'x\ny'`) printed an
    /// error of two lines, once in the text and once more in the detail quoting it.
    #[test]
    fn a_state_error_stays_on_one_line() {
        let error = DeviceState::parse("fragmented:1\nk")
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "--state fragmented:1 k: '1 k' has an unknown size suffix ' k' (use k, M, G, T, KiB, MiB...)"
        );
    }

    #[test]
    fn steps_build_on_each_other_and_keep_the_region() {
        let mut template = JobSpec::new("p", EngineKind::Sim, Target::Sim("x".into()));
        template.offset_bytes = 1 << 20;
        template.size_bytes = Some(64 << 20);
        template.runtime_ns = Some(1);
        let steps = DeviceState::Fragmented { bytes: 8 << 20 }.steps(&template);
        assert_eq!(steps.len(), 3);
        assert!(matches!(steps[0], Step::Trim { .. }));
        let Step::Prepare { job: fill, .. } = &steps[1] else {
            panic!("fill expected")
        };
        assert_eq!((fill.read_percent, fill.random_percent), (0, 0));
        assert_eq!(fill.block_size_write, BlockSizeSpec::Fixed(128 * KIB));
        assert_eq!(
            fill.runtime_ns, None,
            "a fill covers the region, not a time"
        );
        let Step::Prepare {
            job: fragment,
            state_after,
        } = &steps[2]
        else {
            panic!("fragment expected")
        };
        assert_eq!(fragment.number_ios, Some(2048));
        assert_eq!(state_after, "fragmented:8MiB");
        for step in &steps {
            assert_eq!(step.job().offset_bytes, 1 << 20);
            assert_eq!(step.job().size_bytes, Some(64 << 20));
        }
        assert!(DeviceState::AsFound.steps(&template).is_empty());
    }

    /// Regression: a measured job's `io_size` and `loops` carried into the fill, which then
    /// wrote its region over and over.
    #[test]
    fn a_preparation_is_one_pass_whatever_the_measured_job_repeats() {
        let mut template = JobSpec::new("p", EngineKind::Sim, Target::Sim("x".into()));
        template.size_bytes = Some(1 << 20);
        template.io_size_bytes = Some(1 << 30);
        template.loops = 3;
        template.block_size_write = BlockSizeSpec::Range {
            min_bytes: 4 * KIB,
            max_bytes: 2 << 20,
        };
        let fragmented = DeviceState::Fragmented { bytes: 1 << 20 };
        for step in fragmented.steps(&template) {
            let job = step.job();
            // Only the fragmenting writes bound their bytes: by their count, not the template.
            let own_bound = job
                .number_ios
                .filter(|_| job.name.contains("fragment"))
                .map(|ios| ios * FRAGMENT_BLOCK_BYTES);
            assert_eq!(
                (job.io_size_bytes, job.loops),
                (own_bound, 1),
                "{}",
                job.name
            );
            assert!(
                matches!(job.block_size_write, BlockSizeSpec::Fixed(_)),
                "{}",
                job.name
            );
        }
    }
}
