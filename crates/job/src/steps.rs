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
/// Most links a state chain (`fresh,randwrite:4g`) may have: the reviews' histories take two
/// or three; the bound keeps the state a small `Copy` value.
pub const MAX_CHAIN_LINKS: usize = 8;

/// A state the target can be put in before measuring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceState {
    /// Whatever the target holds; nothing is done.
    AsFound,
    /// Every byte of the test region discarded (BLKDISCARD, hole punching, SCSI UNMAP).
    Fresh,
    /// Fresh, then one sequential pass of 128 KiB writes over the region.
    SeqFilled,
    /// Fresh, sequentially filled, then 4 KiB random writes totalling this many bytes.
    Fragmented { bytes: u64 },
    /// Several links run one after the other, each on what the one before left
    /// (`fresh,randwrite:4g`: a virgin drive, then random writes; `seq-filled,trim-all`: a
    /// fill, then a TRIM of everything, as a file delete or a quick format sends).
    Chain(StateChain),
}

/// One link of a state chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainLink {
    /// Nothing done (first link only): the chain starts on whatever the target holds.
    AsFound,
    /// Discard the region (a virgin drive).
    Fresh,
    /// Discard, then one sequential 128 KiB write pass.
    SeqFilled,
    /// Discard, fill, then 4 KiB random writes totalling `bytes`.
    Fragmented { bytes: u64 },
    /// Discard the region, whatever it holds: the TRIM a file delete or a quick format sends.
    TrimAll,
    /// 4 KiB random writes totalling `bytes` on whatever the region holds, nothing before.
    RandWrite { bytes: u64 },
}

/// The links of a chain, in order: at least two, at most `MAX_CHAIN_LINKS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateChain {
    links: [Option<ChainLink>; MAX_CHAIN_LINKS],
}

impl StateChain {
    /// The links in order.
    pub fn links(&self) -> impl Iterator<Item = ChainLink> + '_ {
        self.links.iter().map_while(|link| *link)
    }

    /// The same chain with every link's random-write total mapped through `bytes` (a region's
    /// share of it, `storlab_runner::state::state_steps`).
    pub fn map_random_bytes(mut self, mut bytes: impl FnMut(u64) -> u64) -> StateChain {
        for link in self.links.iter_mut().flatten() {
            match link {
                ChainLink::Fragmented { bytes: b } | ChainLink::RandWrite { bytes: b } => {
                    *b = bytes(*b)
                }
                _ => {}
            }
        }
        self
    }
}

impl ChainLink {
    fn label(self) -> String {
        match self {
            ChainLink::AsFound => "as-found".into(),
            ChainLink::Fresh => "fresh".into(),
            ChainLink::SeqFilled => "seq-filled".into(),
            ChainLink::Fragmented { bytes } => format!("fragmented:{}", size_label(bytes)),
            ChainLink::TrimAll => "trim-all".into(),
            ChainLink::RandWrite { bytes } => format!("randwrite:{}", size_label(bytes)),
        }
    }
}

/// A size as a state's label writes it (`16GiB`: no space, so labels stay one word).
fn size_label(bytes: u64) -> String {
    format_size(bytes).replace(' ', "")
}

/// The states and steps `--state` accepts, for error messages.
const ACCEPTED: &str = "use as-found, fresh, seq-filled or fragmented:SIZE (e.g. fragmented:1g), \
or a chain of them with trim-all and randwrite:SIZE joined by commas (e.g. fresh,randwrite:4g or \
seq-filled,trim-all)";

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
    /// Parses `as-found`, `fresh`, `seq-filled` or `fragmented:SIZE` (SIZE like `16g`), or a
    /// chain of links joined by commas, each run on what the one before left: those states
    /// (`as-found` first only), `trim-all` (discard the region) and `randwrite:SIZE` (4 KiB
    /// random writes totalling SIZE, nothing before them), e.g. `fresh,randwrite:4g`.
    pub fn parse(text: &str) -> Result<DeviceState, StateError> {
        let error = |detail: String| StateError {
            text: text.to_string(),
            detail,
        };
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if parts.len() > MAX_CHAIN_LINKS {
            return Err(error(format!(
                "a chain has at most {MAX_CHAIN_LINKS} links"
            )));
        }
        let mut links = [None; MAX_CHAIN_LINKS];
        for (index, part) in parts.iter().enumerate() {
            let link = parse_link(part).map_err(&error)?;
            if link == ChainLink::AsFound && index > 0 {
                return Err(error(
                    "as-found can only come first (it does nothing to the target)".into(),
                ));
            }
            links[index] = Some(link);
        }
        Ok(match links {
            [Some(ChainLink::AsFound), None, ..] => DeviceState::AsFound,
            [Some(ChainLink::Fresh), None, ..] => DeviceState::Fresh,
            [Some(ChainLink::SeqFilled), None, ..] => DeviceState::SeqFilled,
            [Some(ChainLink::Fragmented { bytes }), None, ..] => DeviceState::Fragmented { bytes },
            [Some(link), None, ..] => {
                return Err(error(format!(
                    "{} is a link of a chain, not a state on its own (e.g. seq-filled,{} or \
                     fresh,{})",
                    link.label(),
                    link.label(),
                    link.label()
                )))
            }
            _ => DeviceState::Chain(StateChain { links }),
        })
    }

    /// The state as results record it (`fresh`, `seq-filled`, `fragmented:16 GiB`).
    pub fn label(self) -> String {
        match self {
            DeviceState::AsFound => "as-found".into(),
            DeviceState::Fresh => "fresh".into(),
            DeviceState::SeqFilled => "seq-filled".into(),
            DeviceState::Fragmented { bytes } => ChainLink::Fragmented { bytes }.label(),
            DeviceState::Chain(chain) => chain
                .links()
                .map(ChainLink::label)
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// The state as a chain of links (`fresh` is the one link `fresh`; `as-found` none).
    pub fn links(self) -> Vec<ChainLink> {
        match self {
            DeviceState::AsFound => Vec::new(),
            DeviceState::Fresh => vec![ChainLink::Fresh],
            DeviceState::SeqFilled => vec![ChainLink::SeqFilled],
            DeviceState::Fragmented { bytes } => vec![ChainLink::Fragmented { bytes }],
            DeviceState::Chain(chain) => chain.links().collect(),
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
        let fill = |state_after: String| {
            let mut job = prepare_job(template, "seq-fill", 0);
            job.random_percent = 0;
            job.block_size_write = BlockSizeSpec::Fixed(SEQ_FILL_BLOCK_BYTES);
            Step::Prepare { job, state_after }
        };
        let random_writes = |bytes: u64, state_after: String| {
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
            Step::Prepare { job, state_after }
        };
        let links = self.links();
        let mut steps = Vec::new();
        // What the target holds after each link: that link's label for a lone state, the
        // chain so far for a chain (`seq-filled,trim-all` is not `fresh`).
        let mut so_far: Vec<String> = Vec::new();
        for link in links {
            so_far.push(link.label());
            let label = so_far.join(",");
            match link {
                ChainLink::AsFound => {}
                ChainLink::Fresh | ChainLink::TrimAll => steps.push(trim.clone()),
                ChainLink::SeqFilled => steps.extend([trim.clone(), fill(label)]),
                ChainLink::Fragmented { bytes } => {
                    let filled = match so_far.len() {
                        1 => DeviceState::SeqFilled.label(),
                        _ => format!("{},seq-filled", so_far[..so_far.len() - 1].join(",")),
                    };
                    steps.extend([trim.clone(), fill(filled), random_writes(bytes, label)]);
                }
                ChainLink::RandWrite { bytes } => steps.push(random_writes(bytes, label)),
            }
        }
        steps
    }
}

/// One link of a chain from its text.
fn parse_link(text: &str) -> Result<ChainLink, String> {
    let random_bytes = |size: &str| {
        let bytes = parse_size(size).map_err(|e| e.0)?;
        if bytes < FRAGMENT_BLOCK_BYTES {
            return Err(format!(
                "the random writes must total at least one {} block",
                format_size(FRAGMENT_BLOCK_BYTES)
            ));
        }
        Ok(bytes)
    };
    match text {
        "as-found" => Ok(ChainLink::AsFound),
        "fresh" => Ok(ChainLink::Fresh),
        "seq-filled" => Ok(ChainLink::SeqFilled),
        "trim-all" => Ok(ChainLink::TrimAll),
        _ => {
            if let Some(size) = text.strip_prefix("fragmented:") {
                Ok(ChainLink::Fragmented {
                    bytes: random_bytes(size)?,
                })
            } else if let Some(size) = text.strip_prefix("randwrite:") {
                Ok(ChainLink::RandWrite {
                    bytes: random_bytes(size)?,
                })
            } else if text.is_empty() {
                Err(format!("an empty link; {ACCEPTED}"))
            } else {
                Err(format!("unknown state '{text}'; {ACCEPTED}"))
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
    job.random_percent_write = None;
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
    // No verify of any kind: a preparation is storlab's own pass, not the measured job, so
    // the job's verify format (fio's header and checksum over a fill from a seed of its own,
    // `verify=crc32c`) has no reader here, and carrying it made every 128 KiB fill block a
    // distinct generated block, regenerated by the runner to write it and by a simulated
    // drive's store to recognise it, and kept as a record of its own (issue 37: a 2 TB SSD's
    // fill took 18 CPU minutes and grew past 1 GB). Without it the fill is restamped slot
    // buffers, one extent in the store (ADR 0047). Nor does it save or load fio's verify
    // state file, which is the measured job's.
    job.verify = false;
    job.verify_spec = None;
    job.verify_state_save = false;
    job.verify_state_load = false;
    // A preparation that loses writes leaves the target in no known state: it ends at its
    // first failed I/O whatever the measured job goes on past.
    job.continue_on_error = Default::default();
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

    /// The reviews' states (issue 18, item 8): chains of links, each on what the one before
    /// left, printed back as parsed.
    #[test]
    fn chains_parse_and_print_back() {
        for (text, label) in [
            ("fresh,randwrite:4g", "fresh,randwrite:4GiB"),
            ("seq-filled,trim-all", "seq-filled,trim-all"),
            (" as-found , randwrite:1m ", "as-found,randwrite:1MiB"),
            (
                "fragmented:1g,trim-all,seq-filled",
                "fragmented:1GiB,trim-all,seq-filled",
            ),
        ] {
            let state = DeviceState::parse(text).unwrap();
            assert!(matches!(state, DeviceState::Chain(_)), "{text}");
            assert_eq!(state.label(), label);
            assert_eq!(DeviceState::parse(label).unwrap(), state);
        }
        // A lone state stays what it was.
        assert_eq!(DeviceState::parse("seq-filled"), Ok(DeviceState::SeqFilled));
    }

    #[test]
    fn bad_chains_say_why() {
        for (text, needle) in [
            ("trim-all", "a link of a chain"),
            ("randwrite:1g", "fresh,randwrite:1GiB"),
            ("fresh,as-found", "as-found can only come first"),
            ("fresh,,trim-all", "an empty link"),
            ("fresh,randwrite:1k", "at least one 4 KiB block"),
            ("fresh,used", "unknown state 'used'"),
            (
                "fresh,fresh,fresh,fresh,fresh,fresh,fresh,fresh,fresh",
                "at most 8 links",
            ),
        ] {
            let error = DeviceState::parse(text).unwrap_err().to_string();
            assert!(error.contains(needle), "{text}: {error}");
        }
    }

    #[test]
    fn a_chains_steps_are_its_links_steps_in_order() {
        let mut template = JobSpec::new("p", EngineKind::Sim, Target::Sim("x".into()));
        template.size_bytes = Some(64 << 20);
        let kinds = |text: &str| -> Vec<String> {
            DeviceState::parse(text)
                .unwrap()
                .steps(&template)
                .iter()
                .map(|step| match step {
                    Step::Trim { .. } => "trim".to_string(),
                    Step::Prepare { job, state_after } => {
                        format!("{}>{state_after}", job.name.rsplit(':').next().unwrap())
                    }
                })
                .collect()
        };
        // A virgin drive, then random writes: no fill.
        assert_eq!(
            kinds("fresh,randwrite:8m"),
            ["trim", "fragment>fresh,randwrite:8MiB"]
        );
        // Fill, then TRIM of everything (a file delete, a quick format).
        assert_eq!(
            kinds("seq-filled,trim-all"),
            ["trim", "seq-fill>seq-filled", "trim"]
        );
        // `fragmented:SIZE` in a chain still discards and fills first.
        assert_eq!(
            kinds("as-found,fragmented:8m"),
            [
                "trim",
                "seq-fill>as-found,seq-filled",
                "fragment>as-found,fragmented:8MiB"
            ]
        );
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
