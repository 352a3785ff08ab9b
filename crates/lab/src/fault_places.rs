//! Placed faults a run can never meet, refused before it starts (issue 33): a `media_error`
//! at an LBA outside every region the jobs on its stack touch, and a fault placed `@cmd=` past
//! the most commands the jobs can send. Only what is known for certain is refused: a job
//! whose extent or count of I/O is not known ahead (time based, the whole target, a share of
//! it, a replayed trace) and a plan whose other faults add commands without bound (rates, power
//! losses) leave the check to the end of the run, where a fault that did not fire is reported
//! and fails the run (`Provider::unfired_faults`).

use storlab_job::{JobSet, JobSpec, Target};
use storlab_sim::fault::{FaultAt, FaultKind, FaultPlan};

/// The smallest and largest logical block a drive profile has: a plan's LBAs are the drive's,
/// which is not known before its stack is opened, so a sector's bytes are taken as wide as
/// either could make them.
const SECTOR_BYTES_MIN: u64 = 512;
const SECTOR_BYTES_MAX: u64 = 4096;

/// Refuse (one line) a placed fault of `plan` that none of the jobs on a simulated stack can
/// meet.
pub fn check_placed_faults(set: &JobSet, plan: &FaultPlan) -> Result<(), String> {
    let mut stacks: Vec<&str> = Vec::new();
    for job in &set.jobs {
        if let Target::Sim(stack) = &job.target {
            if !stacks.contains(&stack.as_str()) {
                stacks.push(stack);
            }
        }
    }
    for stack in stacks {
        let jobs: Vec<&JobSpec> = set
            .jobs
            .iter()
            .filter(|j| matches!(&j.target, Target::Sim(s) if s == stack))
            .collect();
        check_lbas(stack, &jobs, plan)?;
        check_commands(stack, &jobs, plan)?;
    }
    Ok(())
}

/// Each worker's region (start, end) when every job's is known.
fn regions(jobs: &[&JobSpec]) -> Option<Vec<(u64, u64)>> {
    let mut regions = Vec::new();
    for job in jobs {
        if !job.target_shares.is_unset() || job.replay.is_some() {
            return None;
        }
        for worker in 0..u64::from(job.numjobs) {
            let clone = u64::from(job.clone_index_base) + worker;
            let start = job
                .offset_bytes
                .checked_add(clone.checked_mul(job.offset_increment_bytes)?)?;
            let end = job.size_bytes.map_or(u64::MAX, |s| start.saturating_add(s));
            regions.push((start, end));
        }
    }
    Some(regions)
}

fn check_lbas(stack: &str, jobs: &[&JobSpec], plan: &FaultPlan) -> Result<(), String> {
    let Some(regions) = regions(jobs) else {
        return Ok(());
    };
    for &lba in &plan.bad_lbas {
        let first = lba.saturating_mul(SECTOR_BYTES_MIN);
        let end = lba.saturating_add(1).saturating_mul(SECTOR_BYTES_MAX);
        if !regions.iter().any(|&(s, e)| first < e && s < end) {
            let listed: Vec<String> = regions.iter().map(|(s, e)| format!("{s}..{e}")).collect();
            return Err(format!(
                "--faults: media_error@lba={lba} lies outside every region the jobs on \
                 sim:{stack} use (bytes {}): no read can meet it",
                listed.join(", ")
            ));
        }
    }
    Ok(())
}

/// The most commands one job can send, when its I/O is bounded: each I/O split into
/// sector-sized commands at worst, a verify read or a trim beside each, a flush after each.
fn job_commands_max(job: &JobSpec) -> Option<u64> {
    if job.time_based || job.replay.is_some() || !job.target_shares.is_unset() {
        return None;
    }
    let smallest = job
        .block_size_read
        .min_bytes()
        .min(job.block_size_write.min_bytes())
        .max(1);
    let by_size = match (job.number_ios, job.io_size_bytes.or(job.size_bytes)) {
        (_, Some(bytes)) => Some(
            bytes
                .div_ceil(smallest)
                .saturating_mul(u64::from(job.loops.max(1))),
        ),
        (Some(_), None) => None,
        (None, None) => return None,
    };
    // `number_ios` counted per loop, in case a loop starts it afresh: an upper bound either way.
    let number_ios = job
        .number_ios
        .map(|n| n.saturating_mul(u64::from(job.loops.max(1))));
    let ios = match (number_ios, by_size) {
        (Some(n), Some(b)) => n.min(b),
        (Some(n), None) => n,
        (None, Some(b)) => b,
        (None, None) => return None,
    };
    let split = job.max_block_bytes().div_ceil(SECTOR_BYTES_MIN).max(1);
    let per_io = split.saturating_mul(2).saturating_add(1);
    Some(
        ios.saturating_mul(per_io)
            .saturating_mul(u64::from(job.numjobs))
            .saturating_add(1),
    )
}

fn check_commands(stack: &str, jobs: &[&JobSpec], plan: &FaultPlan) -> Result<(), String> {
    // Rates and power losses (whose NOT READY retries go on for the whole spin-up) add
    // commands no count bounds.
    if plan.rates.iter().any(|&r| r > 0.0) || plan.uses(FaultKind::PowerLoss) {
        return Ok(());
    }
    let mut sent_max: u64 = 0;
    let mut in_flight_max: u64 = 0;
    for job in jobs {
        let Some(n) = job_commands_max(job) else {
            return Ok(());
        };
        sent_max = sent_max.saturating_add(n);
        in_flight_max = in_flight_max.max(u64::from(job.iodepth) * u64::from(job.numjobs));
    }
    // Each placed fault loses at most the commands in flight, each retried up to `retries`
    // times, as the attempts that failed on their own are.
    let placed = plan.placed.len() as u64;
    let attempts = u64::from(plan.retries) + 1;
    let bound = sent_max
        .saturating_add(placed.saturating_mul(in_flight_max))
        .saturating_mul(attempts);
    for &(kind, at) in &plan.placed {
        if let FaultAt::Command(n) = at {
            if n > bound {
                return Err(format!(
                    "--faults: {kind}@cmd={n} can never fire: the jobs on sim:{stack} send at \
                     most {bound} commands (their sizes and number_ios, every I/O split into \
                     sectors, with its verify, flush and {} retries)",
                    plan.retries
                ));
            }
        }
    }
    Ok(())
}
