//! The live view of `storlab run` on stderr (issue 38, docs/decisions/0037-live-view.md): while
//! jobs run, a moving chart of each second's MB/s, IOPS and p50/p99 completion latency with
//! the ETA when stderr is a terminal, one plain status line per `--status-interval` otherwise,
//! nothing when the results go to stdout in a machine format and stderr is no terminal. A
//! thread of its own reads the runner's feed ([`storlab_runner::LiveCounters`]) once per
//! interval and draws; the I/O threads only publish a period once per second of their clock.

use crate::live_chart::{render_chart, status_line, Heading, LiveSeries, CHART_HEIGHT};
use crate::progress::LIVE;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// What the live view shows, chosen once per `storlab run` from its flags and streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewMode {
    /// The chart, redrawn every interval (stderr is a terminal).
    Chart(Duration),
    /// A plain status line every interval.
    Lines(Duration),
    /// Nothing but the line of each finished job.
    Off,
}

/// The chart's and the default lines' interval: the chart's figures are per second.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);
/// How long a period of the runner's feed is, at most: one per second of the chart.
const CHART_PERIOD: Duration = Duration::from_secs(1);

/// 0: not chosen (a command other than `run`, e.g. `validate`, keeps its progress bar).
static MODE: AtomicU8 = AtomicU8::new(MODE_UNSET);
static INTERVAL_NS: AtomicU64 = AtomicU64::new(0);
const MODE_UNSET: u8 = 0;
const MODE_CHART: u8 = 1;
const MODE_LINES: u8 = 2;
const MODE_OFF: u8 = 3;

/// The rule of issue 38: a terminal gets the chart (unless `--eta=never`); elsewhere plain
/// lines, except when the results go to stdout in a machine format (JSON, CSV, terse), whose
/// reader may share stderr's pipe: then nothing, unless `--status-interval` asks for the
/// lines, as fio prints its status whatever its output.
pub fn choose(
    stderr_terminal: bool,
    eta: crate::args::EtaMode,
    status_interval: Option<Duration>,
    machine_output_on_stdout: bool,
) -> ViewMode {
    let never = eta == crate::args::EtaMode::Never;
    match status_interval {
        _ if stderr_terminal && !never => {
            ViewMode::Chart(status_interval.unwrap_or(DEFAULT_INTERVAL))
        }
        Some(interval) => ViewMode::Lines(interval),
        None if never || machine_output_on_stdout => ViewMode::Off,
        None => ViewMode::Lines(DEFAULT_INTERVAL),
    }
}

/// Chooses the view of this `storlab run` from its flags and stderr.
pub fn configure(run: &crate::args::RunArgs) {
    let format = match run.minimal {
        true => crate::args::OutputFormat::Terse,
        false => run.output_format,
    };
    // fio prints no status where stderr is no terminal, unless --status-interval asks.
    let machine =
        (format != crate::args::OutputFormat::Table && run.output.is_none()) || run.as_fio;
    let mode = match crate::fio_status::replace_live_view(run, format) {
        // fio's reports take the runner's feed (`fio_status.rs`) in place of the view.
        true => ViewMode::Off,
        false => choose(
            std::io::stderr().is_terminal(),
            run.eta,
            run.status_interval,
            machine,
        ),
    };
    let (code, interval) = match mode {
        ViewMode::Chart(interval) => (MODE_CHART, interval),
        ViewMode::Lines(interval) => (MODE_LINES, interval),
        ViewMode::Off => (MODE_OFF, Duration::ZERO),
    };
    INTERVAL_NS.store(interval.as_nanos() as u64, Ordering::Relaxed);
    MODE.store(code, Ordering::Relaxed);
}

/// The chosen view; none when no `run` chose one.
pub fn mode() -> Option<ViewMode> {
    let interval = Duration::from_nanos(INTERVAL_NS.load(Ordering::Relaxed));
    match MODE.load(Ordering::Relaxed) {
        MODE_CHART => Some(ViewMode::Chart(interval)),
        MODE_LINES => Some(ViewMode::Lines(interval)),
        MODE_OFF => Some(ViewMode::Off),
        _ => None,
    }
}

enum Message {
    /// A point finished: its line, printed above the chart.
    PointDone(String),
    Stop,
}

/// The running view: a thread drawing on stderr until [`LiveView::finish`] or drop.
pub struct LiveView {
    messages: Sender<Message>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LiveView {
    /// Starts the view of a run of `total` points in `mode` (not [`ViewMode::Off`]).
    pub fn start(mode: ViewMode, total: usize) -> Option<LiveView> {
        let (interval, chart) = match mode {
            ViewMode::Chart(interval) => (interval, true),
            ViewMode::Lines(interval) => (interval, false),
            ViewMode::Off => return None,
        };
        let period = match chart {
            true => CHART_PERIOD,
            // fio's status lines give the totals at each interval: periods no longer than it.
            false => interval.min(CHART_PERIOD),
        };
        LIVE.take_events();
        LIVE.watch(period.as_nanos() as u64);
        let (messages, inbox) = channel();
        let (ready, started) = channel();
        let thread = std::thread::Builder::new()
            .name("live view".into())
            .spawn(move || {
                // A descriptor table of its own, so the I/O thread's stays unshared and its
                // system calls keep the kernel's one-thread path (crates/engine/src/
                // descriptors.rs); the spawner waits for this before it opens anything.
                let _ = storlab_engine::descriptors::use_private_descriptor_table();
                let _ = ready.send(());
                let drawer = Drawer::new(chart, total);
                drawer.run(inbox, interval);
            })
            .ok()?;
        let _ = started.recv();
        Some(LiveView {
            messages,
            thread: Some(thread),
        })
    }

    /// A point finished: `line` goes above the chart (or out as it is without one).
    pub fn point_done(&self, line: String) {
        let _ = self.messages.send(Message::PointDone(line));
    }

    /// Draws the last figures, erases the chart (the finished points' lines stay) and ends
    /// the thread.
    pub fn finish(&mut self) {
        let _ = self.messages.send(Message::Stop);
        end_reader(&mut self.thread);
    }
}

/// Waits for a reader of the runner's feed (told to stop) to end, then stops the feed.
pub(crate) fn end_reader(thread: &mut Option<std::thread::JoinHandle<()>>) {
    if let Some(thread) = thread.take() {
        let _ = thread.join();
    }
    LIVE.unwatch();
}

impl Drop for LiveView {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The view's thread: the series and what is on the screen.
struct Drawer {
    chart: bool,
    series: LiveSeries,
    heading: Heading,
    /// Lines of the chart now on the screen (the cursor is just below them).
    drawn: usize,
    started: Instant,
}

impl Drawer {
    fn new(chart: bool, total: usize) -> Drawer {
        Drawer {
            chart,
            series: LiveSeries::default(),
            heading: Heading { done: 0, total },
            drawn: 0,
            started: Instant::now(),
        }
    }

    fn run(mut self, inbox: Receiver<Message>, interval: Duration) {
        let mut next = Instant::now() + interval;
        loop {
            let wait = next.saturating_duration_since(Instant::now());
            match inbox.recv_timeout(wait) {
                Ok(Message::PointDone(line)) => {
                    self.heading.done += 1;
                    self.take_events();
                    self.print_above(&line);
                }
                Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    next += interval;
                    self.take_events();
                    self.show();
                }
            }
        }
        self.erase();
    }

    fn take_events(&mut self) {
        for event in LIVE.take_events() {
            self.series.add(event);
        }
    }

    /// One update: the chart redrawn, or a status line.
    fn show(&mut self) {
        if !self.chart {
            let wall_s = self.started.elapsed().as_secs_f64();
            crate::say::say!("{}", status_line(&self.series, wall_s));
            return;
        }
        let lines = render_chart(&self.series, &self.heading, terminal_width());
        let mut text = self.cursor_to_chart();
        for line in &lines {
            text.push_str(&format!("\r\x1b[2K{line}\n"));
        }
        self.drawn = lines.len();
        write_stderr(&text);
    }

    /// A finished point's line, above the chart, which is drawn again below it.
    fn print_above(&mut self, line: &str) {
        let line = storlab_report::escape_control(line);
        if !self.chart {
            write_stderr(&format!("{line}\n"));
            return;
        }
        let text = format!("{}\r\x1b[2K{line}\n", self.cursor_to_chart());
        self.drawn = 0;
        write_stderr(&text);
        self.show();
    }

    /// Escape sequences that move the cursor to the start of the chart on the screen.
    fn cursor_to_chart(&self) -> String {
        match self.drawn {
            0 => String::new(),
            n => format!("\x1b[{n}A"),
        }
    }

    /// Leaves the terminal as it was before the chart: the chart's lines cleared, the
    /// cursor where the chart began.
    fn erase(&mut self) {
        if self.chart && self.drawn > 0 {
            write_stderr(&format!("{}\r\x1b[J", self.cursor_to_chart()));
            self.drawn = 0;
        }
    }
}

/// stderr's width in columns, less one (a line that fills the last column makes some
/// terminals wrap); 80 when it is not known.
fn terminal_width() -> u16 {
    let columns = console::Term::stderr()
        .size_checked()
        .map_or(80, |(_, columns)| columns);
    columns.saturating_sub(1).max(CHART_HEIGHT)
}

/// Writes `text` to stderr in one call; a stderr that is gone loses it.
fn write_stderr(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(text.as_bytes());
    let _ = stderr.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::EtaMode;

    #[test]
    fn the_issues_rule_chooses_the_view() {
        let second = Some(Duration::from_secs(2));
        assert_eq!(
            choose(true, EtaMode::Auto, None, true),
            ViewMode::Chart(DEFAULT_INTERVAL)
        );
        assert_eq!(
            choose(true, EtaMode::Auto, second, false),
            ViewMode::Chart(Duration::from_secs(2))
        );
        assert_eq!(
            choose(false, EtaMode::Auto, None, false),
            ViewMode::Lines(DEFAULT_INTERVAL)
        );
        assert_eq!(choose(false, EtaMode::Auto, None, true), ViewMode::Off);
        assert_eq!(choose(false, EtaMode::Never, None, false), ViewMode::Off);
        assert_eq!(choose(true, EtaMode::Never, None, false), ViewMode::Off);
        assert_eq!(
            choose(true, EtaMode::Never, second, true),
            ViewMode::Lines(Duration::from_secs(2))
        );
        assert_eq!(
            choose(false, EtaMode::Always, second, true),
            ViewMode::Lines(Duration::from_secs(2))
        );
    }
}
