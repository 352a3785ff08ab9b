//! Progress of a sweep on stderr: a bar (point i of n, elapsed, ETA, live I/O rate while a point
//! runs, each finished point's IOPS and MB/s) on a terminal, one plain line per finished point
//! otherwise. Never writes to stdout, where machine output goes.

use crate::say::say;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use storlab_runner::LiveCounters;

/// What the runner completed so far in this process (the runner adds to it per reaped batch).
pub static LIVE: LiveCounters = LiveCounters::new();
/// `--eta`: 0 auto (a bar on a terminal), 1 always, 2 never.
static ETA: AtomicU8 = AtomicU8::new(ETA_AUTO);
const ETA_AUTO: u8 = 0;
const ETA_ALWAYS: u8 = 1;
const ETA_NEVER: u8 = 2;

/// Sets when the progress bar is drawn (fio's `--eta`), for the whole process.
pub fn set_eta(mode: crate::args::EtaMode) {
    use crate::args::EtaMode;
    let value = match mode {
        EtaMode::Auto => ETA_AUTO,
        EtaMode::Always => ETA_ALWAYS,
        EtaMode::Never => ETA_NEVER,
    };
    ETA.store(value, Ordering::Relaxed);
}

/// How often the live rate is recomputed.
const LIVE_PERIOD: std::time::Duration = std::time::Duration::from_millis(500);

const BAR_TEMPLATE: &str =
    "{spinner} [{bar:30}] point {pos}/{len}  elapsed {elapsed}  ETA {eta}  {msg}";
/// How often the bar redraws while a point runs, so elapsed time keeps moving.
const TICK: std::time::Duration = std::time::Duration::from_millis(200);

/// Progress over the points of one run.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    /// Stops the live-rate thread when the progress ends.
    live_stop: Arc<AtomicBool>,
}

impl Progress {
    /// A bar when stderr is a terminal, plain lines otherwise.
    pub fn new(total: usize) -> Self {
        // `--eta=always` cannot draw a bar where stderr is no terminal (indicatif hides it):
        // there, as with `never`, one line per finished job is printed.
        let wanted = ETA.load(Ordering::Relaxed) != ETA_NEVER && std::io::stderr().is_terminal();
        let bar = wanted.then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(BAR_TEMPLATE) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.enable_steady_tick(TICK);
            bar
        });
        let live_stop = Arc::new(AtomicBool::new(false));
        if let Some(bar) = &bar {
            spawn_live_rate(bar.clone(), Arc::clone(&live_stop));
        }
        Self {
            bar,
            total,
            done: 0,
            live_stop,
        }
    }

    /// One point finished; `summary` is its rate line (`done: 1234 IOPS, 5.0 MB/s`).
    pub fn point_done(&mut self, name: &str, summary: &str) {
        self.done += 1;
        // A job name may hold control characters; the bar prints it as is (say! escapes).
        let name = storlab_report::escape_control(name);
        match &self.bar {
            Some(bar) => {
                bar.println(format!(
                    "storlab: [{}/{}] {name} {summary}",
                    self.done, self.total
                ));
                bar.set_prefix(format!("last: {name} {summary}"));
                bar.inc(1);
            }
            None => say!("storlab: [{}/{}] {name} {summary}", self.done, self.total),
        }
    }

    /// Removes the bar (the per-point lines stay).
    pub fn finish(&self) {
        self.live_stop.store(true, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Every `LIVE_PERIOD`, show the wall-clock rate of completions since the last look (for a
/// simulated target that is the simulator's speed, hence "wall").
fn spawn_live_rate(bar: ProgressBar, stop: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let mut last = (
            LIVE.ios.load(Ordering::Relaxed),
            LIVE.bytes.load(Ordering::Relaxed),
        );
        let mut last_at = std::time::Instant::now();
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(LIVE_PERIOD);
            let now = (
                LIVE.ios.load(Ordering::Relaxed),
                LIVE.bytes.load(Ordering::Relaxed),
            );
            let seconds = last_at.elapsed().as_secs_f64().max(f64::MIN_POSITIVE);
            last_at = std::time::Instant::now();
            let iops = (now.0 - last.0) as f64 / seconds;
            let mbps = (now.1 - last.1) as f64 / seconds / 1e6;
            bar.set_message(format!(
                "now: {iops:.0} IOPS, {mbps:.1} MB/s (wall)  {}",
                bar.prefix()
            ));
            last = now;
        }
    });
}

/// `--status-interval`: a status line on stderr every `interval` while the run lasts (what the
/// runner completed so far, and the rate since the previous line); stops when dropped.
pub struct StatusLines {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StatusLines {
    pub fn start(interval: std::time::Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stop_seen = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let mut last = (0u64, 0u64);
            let mut last_at = started;
            let base = (
                LIVE.ios.load(Ordering::Relaxed),
                LIVE.bytes.load(Ordering::Relaxed),
            );
            let mut next = started + interval;
            while !stop_seen.load(Ordering::Relaxed) {
                // Sleep in short steps so the thread ends soon after the run.
                let now = std::time::Instant::now();
                if now < next {
                    std::thread::sleep((next - now).min(STATUS_POLL));
                    continue;
                }
                next += interval;
                let done = (
                    LIVE.ios.load(Ordering::Relaxed) - base.0,
                    LIVE.bytes.load(Ordering::Relaxed) - base.1,
                );
                let seconds = last_at.elapsed().as_secs_f64().max(f64::MIN_POSITIVE);
                last_at = std::time::Instant::now();
                say!(
                    "storlab: status at {:.1} s: {} I/Os, {:.1} MB; now {:.0} IOPS, {:.1} MB/s",
                    started.elapsed().as_secs_f64(),
                    done.0,
                    done.1 as f64 / 1e6,
                    (done.0 - last.0) as f64 / seconds,
                    (done.1 - last.1) as f64 / seconds / 1e6
                );
                last = done;
            }
        });
        StatusLines {
            stop,
            thread: Some(thread),
        }
    }
}

/// Longest sleep of the status thread between checks of its stop flag.
const STATUS_POLL: std::time::Duration = std::time::Duration::from_millis(50);

impl Drop for StatusLines {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
