//! The live view's figures and their drawing (docs/decisions/0037-live-view.md): the periods the
//! runner's drives publish, summed into one series per second of the drives' clocks (wall time
//! on a real target, simulated time on a `sim:` stack), drawn as a moving chart (one sparkline
//! per figure over the last seconds, with ratatui's widgets into a text buffer) or written as
//! one plain status line. Pure: no terminal, no clock; the thread that shows it is
//! `live_view.rs`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Sparkline, Widget};
use std::collections::{HashMap, VecDeque};
use storlab_report::{format_fixed, format_latency_ns};
use storlab_runner::live::{LiveEvent, LiveLatency, LivePeriod};

const NS_PER_S: u64 = 1_000_000_000;
/// Seconds kept for the chart (more than any terminal is wide).
const KEPT_SECONDS: usize = 512;
/// Lines the chart takes: a heading and one per figure.
pub const CHART_HEIGHT: u16 = 5;
/// Columns before a sparkline (its figure's name) and after it (the latest value).
const LABEL_WIDTH: u16 = 6;
const VALUE_WIDTH: u16 = 11;

/// One second of the run, summed over the drives that measured in it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Second {
    pub ios: u64,
    pub bytes: u64,
    /// How much of the second the drives' periods covered (the last one of a job is partial).
    pub covered_ns: u64,
    pub latency: LiveLatency,
}

impl Second {
    fn seconds(&self) -> f64 {
        self.covered_ns.max(1) as f64 / NS_PER_S as f64
    }
    pub fn iops(&self) -> f64 {
        self.ios as f64 / self.seconds()
    }
    pub fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.seconds()
    }
}

/// Where a drive's periods land in the series, and what it said last.
#[derive(Debug)]
struct Drive {
    job: String,
    /// The series second its measurement started in.
    first_second: u64,
    running: bool,
    /// Its clock's time at the end of its last period, from its measurement start.
    measured_ns: u64,
    eta_ns: Option<u64>,
}

/// The run so far, as the live view shows it.
#[derive(Debug, Default)]
pub struct LiveSeries {
    /// The last seconds; `seconds[0]` is second `first_second`.
    seconds: VecDeque<Second>,
    first_second: u64,
    drives: HashMap<u64, Drive>,
    /// Periods came from a simulator: the times are simulated.
    pub simulated: bool,
    /// Since the view started, all seconds (not only those kept).
    pub total_ios: u64,
    pub total_bytes: u64,
    total_covered_ns: u64,
}

impl LiveSeries {
    /// Takes in one event of the runner's feed.
    pub fn add(&mut self, event: LiveEvent) {
        match event {
            LiveEvent::Started {
                drive,
                job,
                simulated,
            } => {
                self.simulated |= simulated;
                let first_second = self.next_second();
                self.drives.insert(
                    drive,
                    Drive {
                        job,
                        first_second,
                        running: true,
                        measured_ns: 0,
                        eta_ns: None,
                    },
                );
            }
            LiveEvent::Period(period) => self.add_period(period),
            // The statistics for fio's reports (`fio_status.rs`); the chart draws periods.
            LiveEvent::Snapshot(_) => {}
            LiveEvent::Ended { drive } => {
                if let Some(d) = self.drives.get_mut(&drive) {
                    d.running = false;
                }
                self.drives.retain(|_, d| d.running);
            }
        }
    }

    /// The second a drive starting now would measure first in.
    fn next_second(&self) -> u64 {
        match self.drives.values().any(|d| d.running) {
            // Jobs of one group start together: they share their first second.
            true => self
                .drives
                .values()
                .filter(|d| d.running)
                .map(|d| d.first_second)
                .min()
                .unwrap_or(0),
            false => self.first_second + self.seconds.len() as u64,
        }
    }

    fn add_period(&mut self, period: LivePeriod) {
        // A drive whose start was dropped from a full feed lands where the series is.
        let next = self.first_second + self.seconds.len() as u64;
        let drive = self.drives.entry(period.drive).or_insert_with(|| Drive {
            job: String::new(),
            first_second: next,
            running: true,
            measured_ns: 0,
            eta_ns: None,
        });
        drive.measured_ns = period.start_ns + period.length_ns;
        drive.eta_ns = period.eta_ns;
        let index = drive.first_second + period.start_ns / NS_PER_S;
        let reach_ns = period.start_ns % NS_PER_S + period.length_ns;
        let Some(second) = self.second_mut(index) else {
            return;
        };
        second.ios += period.ios;
        second.bytes += period.bytes;
        second.latency.merge(&period.latency);
        let before = second.covered_ns;
        second.covered_ns = before.max(reach_ns.min(NS_PER_S));
        self.total_covered_ns += second.covered_ns - before;
        self.total_ios += period.ios;
        self.total_bytes += period.bytes;
    }

    /// Second `index`, made (with the empty ones before it) when new; none when it is older
    /// than those kept.
    fn second_mut(&mut self, index: u64) -> Option<&mut Second> {
        if index < self.first_second {
            return None;
        }
        while self.first_second + self.seconds.len() as u64 <= index {
            self.seconds.push_back(Second::default());
            if self.seconds.len() > KEPT_SECONDS {
                self.seconds.pop_front();
                self.first_second += 1;
            }
        }
        self.seconds.get_mut((index - self.first_second) as usize)
    }

    /// The kept seconds, oldest first.
    pub fn seconds(&self) -> impl DoubleEndedIterator<Item = &Second> + ExactSizeIterator {
        self.seconds.iter()
    }

    /// The newest second with a figure in it.
    pub fn latest(&self) -> Option<&Second> {
        self.seconds.iter().rev().find(|s| s.covered_ns > 0)
    }

    /// The running jobs' names, in the order they started.
    fn running_jobs(&self) -> Vec<&str> {
        let mut running: Vec<(&u64, &Drive)> =
            self.drives.iter().filter(|(_, d)| d.running).collect();
        running.sort_by_key(|(id, _)| **id);
        let mut names: Vec<&str> = running.iter().map(|(_, d)| d.job.as_str()).collect();
        names.dedup();
        names
    }

    /// Time left of the running jobs on their clocks: the longest of their estimates.
    pub fn eta_ns(&self) -> Option<u64> {
        let mut running = self.drives.values().filter(|d| d.running).peekable();
        running.peek()?;
        running
            .map(|d| d.eta_ns)
            .try_fold(0, |longest, eta| Some(eta?.max(longest)))
    }

    /// The measured time of the running jobs on their clocks.
    pub fn measured_ns(&self) -> u64 {
        self.drives
            .values()
            .filter(|d| d.running)
            .map(|d| d.measured_ns)
            .max()
            .unwrap_or(0)
    }

    /// Everything since the view started, per second covered.
    fn mean_rates(&self) -> (f64, f64) {
        let seconds = self.total_covered_ns.max(1) as f64 / NS_PER_S as f64;
        (
            self.total_ios as f64 / seconds,
            self.total_bytes as f64 / 1e6 / seconds,
        )
    }
}

/// What the heading says beside the figures: which point of the run is running.
#[derive(Debug, Clone, Default)]
pub struct Heading {
    /// Points finished and in all (a sweep's points, a job set's jobs).
    pub done: usize,
    pub total: usize,
}

/// A time for the heading: `42 s`, `3:07`, `1:02:03`.
pub fn format_duration_ns(ns: u64) -> String {
    let seconds = ns / NS_PER_S;
    match seconds {
        0..=59 => format!("{seconds} s"),
        60..=3599 => format!("{}:{:02}", seconds / 60, seconds % 60),
        _ => format!(
            "{}:{:02}:{:02}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        ),
    }
}

/// IOPS with a thousands suffix: `950`, `12.3k`, `1.25M`.
fn format_iops(iops: f64) -> String {
    if iops >= 1e6 {
        format!("{}M", format_fixed(iops / 1e6, 2))
    } else if iops >= 1e4 {
        format!("{}k", format_fixed(iops / 1e3, 1))
    } else {
        format_fixed(iops, 0)
    }
}

fn heading_text(series: &LiveSeries, heading: &Heading) -> String {
    let jobs = series.running_jobs();
    let what = match jobs.as_slice() {
        [] if heading.done >= heading.total => "all points done".to_string(),
        [] => "waiting for the next job".to_string(),
        [one] => format!("job '{}'", storlab_report::escape_control(one)),
        [first, rest @ ..] => format!(
            "job '{}' and {} more",
            storlab_report::escape_control(first),
            rest.len()
        ),
    };
    let clock = if series.simulated { " (simulated)" } else { "" };
    let eta = match series.eta_ns() {
        Some(eta) => format_duration_ns(eta),
        None => "-".to_string(),
    };
    format!(
        "storlab  {what}  [{}/{}]  t {}  ETA {eta}{clock}",
        (heading.done + 1).min(heading.total.max(1)),
        heading.total.max(1),
        format_duration_ns(series.measured_ns())
    )
}

/// The chart on `width` columns: the heading, then MB/s, IOPS, p50 and p99 completion
/// latency, each a sparkline of the last seconds that fit (newest at the right) and its
/// latest value. Lines end without trailing blanks.
pub fn render_chart(series: &LiveSeries, heading: &Heading, width: u16) -> Vec<String> {
    let width = width.max(LABEL_WIDTH + VALUE_WIDTH + 10);
    let area = Rect::new(0, 0, width, CHART_HEIGHT);
    let mut buffer = Buffer::empty(area);
    Line::from(heading_text(series, heading)).render(Rect::new(0, 0, width, 1), &mut buffer);
    let columns = (width - LABEL_WIDTH - VALUE_WIDTH) as usize;
    let shown: Vec<&Second> = series
        .seconds()
        .rev()
        .take(columns)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let latest = series.latest();
    let p50: Vec<u64> = shown.iter().map(|s| percentile(s, 50.0)).collect();
    let p99: Vec<u64> = shown.iter().map(|s| percentile(s, 99.0)).collect();
    // Both latency rows on one scale, so p50 sits below p99 as it does in the numbers.
    let latency_max = p99.iter().chain(&p50).copied().max().unwrap_or(0);
    let rows: [(&str, Vec<u64>, Option<u64>, String); 4] = [
        (
            "MB/s",
            shown
                .iter()
                .map(|s| (s.mb_per_s() * 1000.0) as u64)
                .collect(),
            None,
            latest.map_or("-".into(), |s| format_fixed(s.mb_per_s(), 1)),
        ),
        (
            "IOPS",
            shown.iter().map(|s| s.iops() as u64).collect(),
            None,
            latest.map_or("-".into(), |s| format_iops(s.iops())),
        ),
        (
            "p50",
            p50,
            Some(latency_max),
            latest.map_or("-".into(), |s| latency_text(s, 50.0)),
        ),
        (
            "p99",
            p99,
            Some(latency_max),
            latest.map_or("-".into(), |s| latency_text(s, 99.0)),
        ),
    ];
    for (row, (label, data, max, value)) in rows.into_iter().enumerate() {
        let y = row as u16 + 1;
        Line::from(format!(" {label}")).render(Rect::new(0, y, LABEL_WIDTH, 1), &mut buffer);
        let mut sparkline = Sparkline::default().data(&data);
        if let Some(max) = max {
            sparkline = sparkline.max(max.max(1));
        }
        let chart_width = columns as u16;
        sparkline.render(Rect::new(LABEL_WIDTH, y, chart_width, 1), &mut buffer);
        Line::from(format!("{value:>width$}", width = VALUE_WIDTH as usize)).render(
            Rect::new(LABEL_WIDTH + chart_width, y, VALUE_WIDTH, 1),
            &mut buffer,
        );
    }
    (0..CHART_HEIGHT)
        .map(|y| {
            let line: String = (0..width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect();
            line.trim_end().to_string()
        })
        .collect()
}

fn percentile(second: &Second, percentile: f64) -> u64 {
    second.latency.percentile_ns(percentile).unwrap_or(0)
}

fn latency_text(second: &Second, p: f64) -> String {
    match second.latency.percentile_ns(p) {
        Some(ns) => format_latency_ns(ns as f64),
        None => "-".into(),
    }
}

/// The plain status line, as fio's `--status-interval` gives its figures: what completed since
/// the start (the run's, or the view's) and its mean rate, then the latest second's rates and
/// completion-latency percentiles, and the time left. `wall_s`: seconds since the view began.
pub fn status_line(series: &LiveSeries, wall_s: f64) -> String {
    let (mean_iops, mean_mbps) = series.mean_rates();
    let mut line = format!(
        "storlab: status at {wall_s:.1} s: {} I/Os, {} MB since start ({} IOPS, {} MB/s)",
        series.total_ios,
        format_fixed(series.total_bytes as f64 / 1e6, 1),
        format_iops(mean_iops),
        format_fixed(mean_mbps, 1)
    );
    if let Some(latest) = series.latest() {
        line.push_str(&format!(
            "; last second {} IOPS, {} MB/s, clat p50 {}, p99 {}",
            format_iops(latest.iops()),
            format_fixed(latest.mb_per_s(), 1),
            latency_text(latest, 50.0),
            latency_text(latest, 99.0)
        ));
    }
    let clock = if series.simulated { " simulated" } else { "" };
    if !series.running_jobs().is_empty() {
        line.push_str(&format!(
            "; t {}{clock}, ETA {}",
            format_duration_ns(series.measured_ns()),
            series.eta_ns().map_or("-".into(), format_duration_ns)
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn period(drive: u64, second: u64, ios: u64, latency_us: u64) -> LiveEvent {
        LiveEvent::Period(LivePeriod {
            drive,
            start_ns: second * NS_PER_S,
            length_ns: NS_PER_S,
            ios,
            bytes: ios * 4096,
            latency: LiveLatency::of(&vec![latency_us * 1000; ios as usize % 1000 + 1]),
            eta_ns: Some(20u64.saturating_sub(second) * NS_PER_S),
        })
    }

    fn series_of(seconds: &[(u64, u64)], simulated: bool) -> LiveSeries {
        let mut series = LiveSeries::default();
        series.add(LiveEvent::Started {
            drive: 1,
            job: "randread".into(),
            simulated,
        });
        for (i, &(ios, latency_us)) in seconds.iter().enumerate() {
            series.add(period(1, i as u64, ios, latency_us));
        }
        series
    }

    /// Golden text: a ramp of IOPS, latency rising at the end.
    #[test]
    fn chart_draws_sparklines_of_the_last_seconds() {
        let seconds: Vec<(u64, u64)> = (1..=12).map(|i| (i * 1000, 50 + i * i)).collect();
        let series = series_of(&seconds, false);
        let heading = Heading { done: 1, total: 6 };
        let lines = render_chart(&series, &heading, 40);
        // 40 columns cut the heading; the first second (1/12 of the last) is below the
        // sparkline's first step; both latency rows share p99's scale.
        let expected = [
            "storlab  job 'randread'  [2/6]  t 12 s",
            " MB/s  ▁▂▂▃▄▄▅▆▆▇█                  49.2",
            " IOPS  ▁▂▂▃▄▄▅▆▆▇█                 12.0k",
            " p50  ▂▂▂▂▃▃▄▄▅▆▇█                194 us",
            " p99  ▂▂▂▂▃▃▄▄▅▆▇█                194 us",
        ];
        assert_eq!(lines, expected, "\n{}", lines.join("\n"));
    }

    /// Only the newest seconds that fit are drawn; a stall shows as empty seconds.
    #[test]
    fn chart_moves_and_shows_gaps() {
        let mut series = series_of(&[(100, 10); 30], true);
        series.add(period(1, 33, 400, 10));
        let lines = render_chart(&series, &Heading { done: 0, total: 1 }, 30);
        // Seconds 21 to 33 fit: 100 IOPS, three empty seconds, then 400.
        assert_eq!(lines[0], "storlab  job 'randread'  [1/1]");
        assert_eq!(
            lines[2],
            " IOPS ▂▂▂▂▂▂▂▂▂   █        400",
            "\n{}",
            lines.join("\n")
        );
        assert!(status_line(&series, 2.0).contains("simulated"));
    }

    #[test]
    fn status_line_gives_totals_since_start_and_the_last_second() {
        let series = series_of(&[(1000, 100), (3000, 200)], false);
        assert_eq!(
            status_line(&series, 2.04),
            "storlab: status at 2.0 s: 4000 I/Os, 16.4 MB since start (2000 IOPS, 8.2 MB/s); \
             last second 3000 IOPS, 12.3 MB/s, clat p50 200 us, p99 200 us; t 2 s, ETA 19 s"
        );
    }

    #[test]
    fn concurrent_jobs_add_up_in_one_second() {
        let mut series = LiveSeries::default();
        for drive in [1, 2] {
            series.add(LiveEvent::Started {
                drive,
                job: format!("job{drive}"),
                simulated: false,
            });
        }
        series.add(period(1, 0, 100, 10));
        series.add(period(2, 0, 300, 30));
        let latest = series.latest().unwrap();
        assert_eq!(latest.ios, 400);
        assert_eq!(latest.latency.count(), 101 + 301);
        assert_eq!(series.eta_ns(), Some(20 * NS_PER_S));
        // A later group follows the first's seconds.
        series.add(LiveEvent::Ended { drive: 1 });
        series.add(LiveEvent::Ended { drive: 2 });
        series.add(LiveEvent::Started {
            drive: 3,
            job: "next".into(),
            simulated: false,
        });
        series.add(period(3, 0, 7, 10));
        assert_eq!(series.seconds().len(), 2);
        assert_eq!(series.latest().unwrap().ios, 7);
    }
}
