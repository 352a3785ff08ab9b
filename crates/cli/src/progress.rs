//! Progress of a sweep on stderr: a bar (point i of n, elapsed, ETA, the last point's IOPS and
//! MB/s) on a terminal, one plain line per finished point otherwise. Never writes to stdout,
//! where machine output goes.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

const BAR_TEMPLATE: &str =
    "{spinner} [{bar:30}] point {pos}/{len}  elapsed {elapsed}  ETA {eta}  {msg}";
/// How often the bar redraws while a point runs, so elapsed time keeps moving.
const TICK: std::time::Duration = std::time::Duration::from_millis(200);

/// Progress over the points of one run.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
}

impl Progress {
    /// A bar when stderr is a terminal, plain lines otherwise.
    pub fn new(total: usize) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(BAR_TEMPLATE) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.enable_steady_tick(TICK);
            bar
        });
        Self {
            bar,
            total,
            done: 0,
        }
    }

    /// One point finished; `summary` is its rate line (`done: 1234 IOPS, 5.0 MB/s`).
    pub fn point_done(&mut self, name: &str, summary: &str) {
        self.done += 1;
        match &self.bar {
            Some(bar) => {
                bar.println(format!(
                    "storlab: [{}/{}] {name} {summary}",
                    self.done, self.total
                ));
                bar.set_message(format!("last: {name} {summary}"));
                bar.inc(1);
            }
            None => eprintln!("storlab: [{}/{}] {name} {summary}", self.done, self.total),
        }
    }

    /// Removes the bar (the per-point lines stay).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
