//! Progress of a run on stderr: for `storlab run`, the live view (`live_view.rs`: a chart on a
//! terminal, status lines elsewhere) and one line per finished point; for other commands
//! (`validate`), a bar (point i of n, elapsed, ETA, live I/O rate) on a terminal, one plain
//! line per finished point otherwise. Never writes to stdout, where machine output goes.

use crate::live_view::LiveView;
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

/// `storlab fio`: fio prints no line per finished job (its report comes at the end).
static QUIET: AtomicBool = AtomicBool::new(false);

/// Leaves out the line per finished job, as fio does (`storlab fio`), for the whole process.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// How often the live rate is recomputed.
const LIVE_PERIOD: std::time::Duration = std::time::Duration::from_millis(500);

const BAR_TEMPLATE: &str =
    "{spinner} [{bar:30}] point {pos}/{len}  elapsed {elapsed}  ETA {eta}  {msg}";
/// How often the bar redraws while a point runs, so elapsed time keeps moving.
const TICK: std::time::Duration = std::time::Duration::from_millis(200);

/// Progress over the points of one run.
pub struct Progress {
    /// `storlab run`'s live view, when its mode shows one.
    view: Option<LiveView>,
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    /// Stops the live-rate thread when the progress ends.
    live_stop: Arc<AtomicBool>,
}

impl Progress {
    /// A bar when stderr is a terminal, plain lines otherwise.
    pub fn new(total: usize) -> Self {
        let live_stop = Arc::new(AtomicBool::new(false));
        if let Some(mode) = crate::live_view::mode() {
            return Self {
                view: LiveView::start(mode, total),
                bar: None,
                total,
                done: 0,
                live_stop,
            };
        }
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
        if let Some(bar) = &bar {
            spawn_live_rate(bar.clone(), Arc::clone(&live_stop));
        }
        Self {
            view: None,
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
        if let Some(view) = &self.view {
            view.point_done(format!(
                "storlab: [{}/{}] {name} {summary}",
                self.done, self.total
            ));
            return;
        }
        match &self.bar {
            Some(bar) => {
                bar.println(format!(
                    "storlab: [{}/{}] {name} {summary}",
                    self.done, self.total
                ));
                bar.set_prefix(format!("last: {name} {summary}"));
                bar.inc(1);
            }
            None if QUIET.load(Ordering::Relaxed) => {}
            None => say!("storlab: [{}/{}] {name} {summary}", self.done, self.total),
        }
    }

    /// Removes the bar or the chart (the per-point lines stay).
    pub fn finish(&mut self) {
        if let Some(mut view) = self.view.take() {
            view.finish();
        }
        self.live_stop.store(true, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Every `LIVE_PERIOD`, show the wall-clock rate of completions since the last look (for a
/// simulated target that is the simulator's speed, hence "wall").
fn spawn_live_rate(bar: ProgressBar, stop: Arc<AtomicBool>) {
    // The drives add to the totals once per period they publish.
    LIVE.watch(LIVE_PERIOD.as_nanos() as u64);
    std::thread::spawn(move || {
        let mut last = (
            LIVE.ios.load(Ordering::Relaxed),
            LIVE.bytes.load(Ordering::Relaxed),
        );
        let mut last_at = std::time::Instant::now();
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(LIVE_PERIOD);
            LIVE.take_events();
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
