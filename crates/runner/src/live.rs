//! Live figures of the running jobs, for a display on another thread (`storlab run`'s live
//! view, docs/decisions/0037-live-view.md). While someone watches ([`LiveCounters::watch`]),
//! each drive publishes, once per closed period of its engine's clock (1 s unless the display
//! asks for less), that period's I/Os, bytes and completion-latency distribution and its
//! estimate of the time left. Nothing is done per I/O: after each reap the drive compares the
//! reap's time with the end of the open period (one comparison), and the work of a period is
//! done once, on the drive's own thread, from the statistics the workers keep anyway. The
//! display takes the queued periods under a lock it holds only to move them out.
//!
//! fio's `--status-interval` reports ([`LiveCounters::watch_snapshots`]) also take, at each
//! period's close, a copy of every worker's statistics so far ([`LiveSnapshot`]): fio's report
//! of a running job is its figures since its start, so the display renders them with the
//! final report's code. The copy is made on the drive's thread once per period, never per I/O.

use crate::offsets::Region;
use crate::worker::{charged_snapshot, Window, Worker};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use storlab_engine::Capabilities;
use storlab_stats::WorkerStats;
use storlab_stats::{fio_bucket_index, fio_bucket_value_ns, DirectionStats, ResourceUsage};

/// Events kept for a display that reads them late (a simulated stack can close thousands
/// of simulated seconds between two looks); past that the oldest are dropped.
pub const MAX_QUEUED_EVENTS: usize = 4096;

/// fio's latency buckets (`FIO_IO_U_PLAT_NR`): the live distribution's resolution (1.6 %).
const FIO_BUCKETS: usize = 29 * 64;

/// What the runner completed so far in this process and, while a display watches, the
/// periods each drive closed. Shared by reference with every drive; all of it is cheap to
/// update and never blocks an I/O.
#[derive(Debug, Default)]
pub struct LiveCounters {
    /// Completed I/Os, added once per published period (and per read-back batch of verify).
    pub ios: AtomicU64,
    /// Bytes those I/Os moved.
    pub bytes: AtomicU64,
    /// The length of a published period; 0 while nobody watches (nothing is published).
    period_ns: AtomicU64,
    /// Drives that start from now on publish a [`LiveSnapshot`] with each period.
    snapshots: AtomicBool,
    feed: Mutex<LiveFeed>,
}

#[derive(Debug, Default)]
struct LiveFeed {
    events: VecDeque<LiveEvent>,
    next_drive: u64,
}

/// What a drive tells the display.
#[derive(Debug, Clone)]
pub enum LiveEvent {
    /// A drive (one job's workers on one thread) started measuring.
    Started {
        drive: u64,
        job: String,
        /// Its clock is a simulator's: periods are simulated time.
        simulated: bool,
    },
    /// It closed a period.
    Period(LivePeriod),
    /// The statistics of its workers so far (only while snapshots are watched), after the
    /// period closed at the same time; the last comes just before `Ended`.
    Snapshot(Box<LiveSnapshot>),
    /// It ended; its last (partial) period came just before.
    Ended { drive: u64 },
}

/// A drive's workers' statistics since they started, as the final report would have them had
/// the drive ended at the snapshot (elapsed time to then, the thread's CPU time so far).
#[derive(Debug, Clone)]
pub struct LiveSnapshot {
    pub drive: u64,
    /// fio's thread number of the job's first clone, which names the job in its set
    /// (`JobSet::first_thread_number`).
    pub job_thread_number: u32,
    pub engine_name: String,
    pub capabilities: Capabilities,
    /// Each worker's index in its job, its region and its statistics, in worker order.
    pub workers: Vec<(u32, Region, WorkerStats)>,
}

/// One closed period of one drive.
#[derive(Debug, Clone, PartialEq)]
pub struct LivePeriod {
    pub drive: u64,
    /// When the period began, from the drive's measurement start, on its engine's clock.
    pub start_ns: u64,
    pub length_ns: u64,
    /// I/Os completed in the period (all directions) and the bytes they moved.
    pub ios: u64,
    pub bytes: u64,
    /// Their completion latencies.
    pub latency: LiveLatency,
    /// The drive's estimate of its time left, on its engine's clock (none: no bound known).
    pub eta_ns: Option<u64>,
}

/// A latency distribution in fio's buckets: (bucket index, I/Os), ascending, no zeros.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveLatency {
    buckets: Vec<(u16, u64)>,
}

impl LiveLatency {
    /// The distribution of `values_ns` (for tests and tools).
    pub fn of(values_ns: &[u64]) -> Self {
        let mut counts = vec![0u64; FIO_BUCKETS];
        for &value in values_ns {
            counts[fio_bucket_index(value) as usize] += 1;
        }
        Self::from_counts(&counts)
    }

    fn from_counts(counts: &[u64]) -> Self {
        let buckets = counts
            .iter()
            .enumerate()
            .filter(|(_, &count)| count > 0)
            .map(|(index, &count)| (index as u16, count))
            .collect();
        Self { buckets }
    }

    /// I/Os in the distribution.
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|&(_, count)| count).sum()
    }

    /// Adds `other`'s I/Os (the display's sum over concurrent drives).
    pub fn merge(&mut self, other: &LiveLatency) {
        let mut merged = Vec::with_capacity(self.buckets.len() + other.buckets.len());
        let (mut mine, mut theirs) = (self.buckets.iter().peekable(), other.buckets.iter());
        let mut next_theirs = theirs.next();
        loop {
            match (mine.peek(), next_theirs) {
                (Some(&&(a, n)), Some(&(b, m))) if a == b => {
                    merged.push((a, n + m));
                    mine.next();
                    next_theirs = theirs.next();
                }
                (Some(&&(a, n)), Some(&(b, _))) if a < b => {
                    merged.push((a, n));
                    mine.next();
                }
                (_, Some(&bucket)) => {
                    merged.push(bucket);
                    next_theirs = theirs.next();
                }
                (Some(&&bucket), None) => {
                    merged.push(bucket);
                    mine.next();
                }
                (None, None) => break,
            }
        }
        self.buckets = merged;
    }

    /// The latency at `percentile` (0..=100) as fio computes it from its buckets: the value
    /// of the first bucket at which the running count reaches that share. None when empty.
    pub fn percentile_ns(&self, percentile: f64) -> Option<u64> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let wanted = ((percentile.clamp(0.0, 100.0) / 100.0) * total as f64).ceil() as u64;
        let mut seen = 0;
        for &(index, count) in &self.buckets {
            seen += count;
            if seen >= wanted.max(1) {
                return Some(fio_bucket_value_ns(u64::from(index)));
            }
        }
        self.buckets
            .last()
            .map(|&(index, _)| fio_bucket_value_ns(u64::from(index)))
    }
}

impl LiveCounters {
    pub const fn new() -> Self {
        LiveCounters {
            ios: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            period_ns: AtomicU64::new(0),
            snapshots: AtomicBool::new(false),
            feed: Mutex::new(LiveFeed {
                events: VecDeque::new(),
                next_drive: 0,
            }),
        }
    }

    /// Counts the I/Os of `completions` and the bytes they moved (verify's read-back, which
    /// publishes no periods).
    pub fn count(&self, completions: &[storlab_engine::IoCompletion]) {
        let bytes: u64 = completions
            .iter()
            .map(|c| u64::from(c.result.unwrap_or(0)))
            .sum();
        self.ios
            .fetch_add(completions.len() as u64, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A display starts reading: drives that start from now on publish a period every
    /// `period_ns` of their clock (at least 1 ms).
    pub fn watch(&self, period_ns: u64) {
        self.period_ns
            .store(period_ns.max(1_000_000), Ordering::Relaxed);
    }

    /// With `wanted`, drives that start from now on also publish their statistics so far
    /// with each period ([`LiveEvent::Snapshot`]), for fio's `--status-interval` reports.
    pub fn watch_snapshots(&self, wanted: bool) {
        self.snapshots.store(wanted, Ordering::Relaxed);
    }

    /// Nobody reads any more: drives that start from now on publish nothing.
    pub fn unwatch(&self) {
        self.period_ns.store(0, Ordering::Relaxed);
        self.snapshots.store(false, Ordering::Relaxed);
        self.with_feed(|feed| feed.events.clear());
    }

    /// The events published since the last call, oldest first.
    pub fn take_events(&self) -> Vec<LiveEvent> {
        self.with_feed(|feed| feed.events.drain(..).collect())
    }

    fn with_feed<T>(&self, f: impl FnOnce(&mut LiveFeed) -> T) -> T {
        // A display that panicked holding the lock leaves the feed as it was: keep using it.
        let mut feed = self
            .feed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut feed)
    }

    fn publish(&self, event: LiveEvent) {
        self.with_feed(|feed| {
            if feed.events.len() >= MAX_QUEUED_EVENTS {
                feed.events.pop_front();
            }
            feed.events.push_back(event);
        });
    }

    /// The publisher of a drive starting to measure at `measure_start_ns` on its engine's
    /// clock, or none while nobody watches.
    pub(crate) fn publisher(
        &self,
        workers: &[Worker],
        measure_start_ns: u64,
        deadline_ns: Option<u64>,
        simulated: bool,
    ) -> Option<LivePublisher<'_>> {
        let period_ns = self.period_ns.load(Ordering::Relaxed);
        if period_ns == 0 {
            return None;
        }
        let drive = self.with_feed(|feed| {
            feed.next_drive += 1;
            feed.next_drive
        });
        let job = workers.first().map(|w| w.job_name().to_string());
        self.publish(LiveEvent::Started {
            drive,
            job: job.unwrap_or_default(),
            simulated,
        });
        Some(LivePublisher {
            feed: self,
            drive,
            period_ns,
            measure_start_ns,
            deadline_ns,
            next_ns: measure_start_ns.saturating_add(period_ns),
            published: Totals::default(),
            scratch: vec![0; FIO_BUCKETS],
            snapshots_wanted: self.snapshots.load(Ordering::Relaxed),
            snapshot: None,
        })
    }
}

/// What a drive had completed when it last published.
#[derive(Default)]
struct Totals {
    ios: u64,
    bytes: u64,
    latency_counts: Vec<u64>,
}

/// One drive's side of the feed: closes its periods as its clock passes their ends.
pub(crate) struct LivePublisher<'a> {
    feed: &'a LiveCounters,
    drive: u64,
    period_ns: u64,
    measure_start_ns: u64,
    deadline_ns: Option<u64>,
    /// The end of the open period on the engine's clock.
    next_ns: u64,
    published: Totals,
    scratch: Vec<u64>,
    snapshots_wanted: bool,
    /// What a snapshot needs besides the workers, once the drive gave it.
    snapshot: Option<SnapshotSource>,
}

/// The drive's side of its snapshots: its engine and where its measurement and CPU time began.
struct SnapshotSource {
    engine_name: String,
    capabilities: Capabilities,
    window: Window,
    usage_start: ResourceUsage,
}

impl LivePublisher<'_> {
    /// Snapshots, when the display watches them, of a drive on an engine named `engine_name`
    /// measuring in `window`, whose thread's usage was `usage_start` when it began.
    pub(crate) fn with_snapshots(
        &mut self,
        engine_name: &str,
        capabilities: Capabilities,
        window: Window,
        usage_start: ResourceUsage,
    ) {
        if self.snapshots_wanted {
            self.snapshot = Some(SnapshotSource {
                engine_name: engine_name.to_string(),
                capabilities,
                window,
                usage_start,
            });
        }
    }

    /// The workers' statistics at `now_ns`, published after the period that closed then.
    fn publish_snapshot(&self, now_ns: u64, workers: &[Worker]) {
        let (Some(source), Some(first)) = (&self.snapshot, workers.first()) else {
            return;
        };
        let usage = ResourceUsage::thread_now() - source.usage_start;
        let stats = charged_snapshot(workers, source.window, now_ns, usage);
        let snapshot = LiveSnapshot {
            drive: self.drive,
            job_thread_number: first.job_first_thread,
            engine_name: source.engine_name.clone(),
            capabilities: source.capabilities,
            workers: workers
                .iter()
                .zip(stats)
                .map(|(w, stats)| (w.worker_index, w.region, stats))
                .collect(),
        };
        self.feed.publish(LiveEvent::Snapshot(Box::new(snapshot)));
    }

    /// After a reap at `now_ns`, before its completions are counted: closes the open period
    /// once the clock has passed its end. The only cost on the I/O path is the comparison.
    #[inline]
    pub(crate) fn at(&mut self, now_ns: u64, workers: &[Worker]) {
        if now_ns >= self.next_ns {
            self.close_period(now_ns, workers);
        }
    }

    /// The drive ended at `end_ns`: its last, partial period, then its end.
    pub(crate) fn finish(mut self, end_ns: u64, workers: &[Worker]) {
        let end_ns = self.deadline_ns.map_or(end_ns, |d| end_ns.min(d));
        if end_ns >= self.next_ns {
            self.close_period(end_ns, workers);
        }
        let open_start_ns = self.next_ns - self.period_ns;
        if end_ns > open_start_ns || self.totals_changed(workers) {
            let length_ns = end_ns.saturating_sub(open_start_ns).max(1);
            self.publish_period(open_start_ns, length_ns, Some(0), workers);
        }
        self.publish_snapshot(end_ns, workers);
        self.feed.publish(LiveEvent::Ended { drive: self.drive });
    }

    #[cold]
    fn close_period(&mut self, now_ns: u64, workers: &[Worker]) {
        let open_start_ns = self.next_ns - self.period_ns;
        let eta_ns = self.eta_ns(now_ns, workers);
        self.publish_period(open_start_ns, self.period_ns, eta_ns, workers);
        self.publish_snapshot(now_ns, workers);
        // A stall that outlasted whole periods leaves them empty: the display draws gaps as
        // zeros, so none is published.
        let periods_done = (now_ns - self.measure_start_ns) / self.period_ns;
        self.next_ns = self.measure_start_ns + (periods_done + 1) * self.period_ns;
    }

    fn totals_changed(&self, workers: &[Worker]) -> bool {
        workers
            .iter()
            .map(|w| directions(w).map(|d| d.ios).sum::<u64>())
            .sum::<u64>()
            != self.published.ios
    }

    fn publish_period(
        &mut self,
        start_ns: u64,
        length_ns: u64,
        eta_ns: Option<u64>,
        workers: &[Worker],
    ) {
        let (ios, bytes) = completed(workers);
        self.scratch.fill(0);
        for w in workers {
            for direction in directions(w) {
                for (value_ns, count) in direction.clat.fio_bins() {
                    self.scratch[fio_bucket_index(value_ns) as usize] += count;
                }
            }
        }
        let previous = &self.published.latency_counts;
        let period_counts: Vec<u64> = self
            .scratch
            .iter()
            .enumerate()
            .map(|(i, &now)| now.saturating_sub(previous.get(i).copied().unwrap_or(0)))
            .collect();
        let period = LivePeriod {
            drive: self.drive,
            start_ns: start_ns - self.measure_start_ns,
            length_ns,
            // A latency search that settled restarts the statistics: totals may go down.
            ios: ios.saturating_sub(self.published.ios),
            bytes: bytes.saturating_sub(self.published.bytes),
            latency: LiveLatency::from_counts(&period_counts),
            eta_ns,
        };
        self.feed.ios.fetch_add(period.ios, Ordering::Relaxed);
        self.feed.bytes.fetch_add(period.bytes, Ordering::Relaxed);
        self.feed.publish(LiveEvent::Period(period));
        self.published.ios = ios;
        self.published.bytes = bytes;
        std::mem::swap(&mut self.published.latency_counts, &mut self.scratch);
        if self.scratch.len() != FIO_BUCKETS {
            self.scratch = vec![0; FIO_BUCKETS];
        }
    }

    /// Time left: to the deadline, or for the bytes (or I/Os) the workers still have to do
    /// at the rate so far, whichever comes first; none when neither bounds the drive.
    fn eta_ns(&self, now_ns: u64, workers: &[Worker]) -> Option<u64> {
        let to_deadline = self.deadline_ns.map(|d| d.saturating_sub(now_ns));
        let elapsed_ns = now_ns.saturating_sub(self.measure_start_ns).max(1) as f64;
        let (ios, bytes) = completed(workers);
        let left = workers.iter().map(Worker::work_left).try_fold(
            (0u64, 0u64),
            |(ios_left, bytes_left), left| {
                let (i, b) = left?;
                Some((ios_left + i, bytes_left + b))
            },
        );
        let by_work = left.and_then(|(ios_left, bytes_left)| {
            let (done, remaining) = match bytes_left {
                0 => (ios, ios_left),
                _ => (bytes, bytes_left),
            };
            (done > 0).then(|| (remaining as f64 * elapsed_ns / done as f64) as u64)
        });
        match (to_deadline, by_work) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The I/Os and bytes `workers` completed, all directions.
fn completed(workers: &[Worker]) -> (u64, u64) {
    workers
        .iter()
        .flat_map(directions)
        .fold((0, 0), |(ios, bytes), d| (ios + d.ios, bytes + d.bytes))
}

fn directions(w: &Worker) -> impl Iterator<Item = &DirectionStats> {
    [&w.stats.read, &w.stats.write, &w.stats.trim].into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_follow_fios_buckets() {
        let values: Vec<u64> = (1..=100).map(|i| i * 1_000).collect();
        let latency = LiveLatency::of(&values);
        assert_eq!(latency.count(), 100);
        // fio's buckets are 1.6 % wide: the 50th of 100 values (50 µs) is reported as its
        // bucket's middle.
        let p50 = latency.percentile_ns(50.0).unwrap();
        assert!((49_500..=50_500).contains(&p50), "{p50}");
        let p99 = latency.percentile_ns(99.0).unwrap();
        assert!((98_500..=99_500).contains(&p99), "{p99}");
        assert_eq!(LiveLatency::default().percentile_ns(50.0), None);
    }

    #[test]
    fn merged_distributions_add_up() {
        let mut a = LiveLatency::of(&[10, 20, 5_000]);
        let b = LiveLatency::of(&[20, 30, 7_000_000]);
        a.merge(&b);
        assert_eq!(a, LiveLatency::of(&[10, 20, 5_000, 20, 30, 7_000_000]));
        assert_eq!(
            a.percentile_ns(100.0),
            Some(fio_bucket_value_ns(fio_bucket_index(7_000_000)))
        );
    }

    #[test]
    fn nothing_is_published_unless_watched() {
        let live = LiveCounters::new();
        assert!(live.publisher(&[], 0, None, false).is_none());
        live.watch(1_000_000_000);
        let publisher = live.publisher(&[], 5, Some(2_000_000_005), false).unwrap();
        publisher.finish(1_500_000_005, &[]);
        let events = live.take_events();
        assert!(matches!(events[0], LiveEvent::Started { drive: 1, .. }));
        let periods: Vec<(u64, u64)> = events
            .iter()
            .filter_map(|e| match e {
                LiveEvent::Period(p) => Some((p.start_ns, p.length_ns)),
                _ => None,
            })
            .collect();
        assert_eq!(periods, [(0, 1_000_000_000), (1_000_000_000, 500_000_000)]);
        assert!(matches!(events.last(), Some(LiveEvent::Ended { drive: 1 })));
        live.unwatch();
        assert!(live.publisher(&[], 0, None, false).is_none());
    }
}
