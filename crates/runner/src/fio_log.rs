//! fio's per-I/O logs (`write_bw_log`, `write_iops_log`, `write_lat_log`, `write_hist_log`):
//! recorded per worker as its I/Os complete, on the engine's clock (simulated time on a
//! simulated target), and turned into fio 3.33's text at the end of the job. The runner only
//! makes the text; the front end writes the files (the CLI through its safe-output rules).
//!
//! What each line holds is fio's (HOWTO "Log File Formats"; stat.c and iolog.c of fio 3.33,
//! checked by running fio 3.33 on the same jobs, `crates/cli/tests/fio_logs.rs`):
//! `time_ms, value, direction, block_size[, offset], priority`. Without `log_avg_msec` every
//! I/O is one line at its completion (a submission latency at its submission): latencies in ns,
//! bandwidth `bytes * 10^6 / clat_ns` and IOPS 1. With it, latency lines are the mean (or
//! maximum) of the samples since the window's start, written when the first sample past the
//! window arrives and once more for what is left at the job's end; bandwidth (KiB/s) and IOPS
//! lines are rates over each whole window, none for a direction without I/O in it and none for
//! a window the job ends inside (fio's helper thread never samples it). Windowed lines carry block
//! size and offset 0.

use std::fmt::Write as _;
use std::path::PathBuf;
use storlab_engine::IoDirection;
use storlab_job::{FioLogKind, FioLogs};
use storlab_stats::fio_bucket_index;

const NS_PER_MS: u64 = 1_000_000;
const MS_PER_S: u64 = 1_000;
const BYTES_PER_KIB: u64 = 1_024;
/// fio's `FIO_IO_U_PLAT_NR`: 29 groups of 64 latency bins (stat.h), the histogram log's columns
/// at `log_hist_coarseness=0`.
const FIO_HISTOGRAM_BINS: usize = 29 * 64;
/// Read, write, trim: fio's data directions, numbered as its logs write them.
const DIRECTIONS: usize = 3;

/// One log file's text, ready to write. With `per_job_logs=0` several workers share a path and
/// fio appends each one's lines to whatever the file held (`append`); otherwise fio replaces it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FioLogFile {
    pub kind: FioLogKind,
    pub path: PathBuf,
    pub text: String,
    pub append: bool,
}

/// fio's number of a data direction in its logs.
fn direction_number(direction: IoDirection) -> usize {
    match direction {
        IoDirection::Read => 0,
        IoDirection::Write => 1,
        IoDirection::Trim => 2,
    }
}

/// One line of a value log.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time_ms: u64,
    value: u64,
    direction: u8,
    block_bytes: u64,
    offset_bytes: u64,
    /// The I/O's priority (fio's `io_u->ioprio`); 0 on an averaged line, as fio's.
    ioprio: u16,
}

/// fio's averaging window of one direction (`io_log.avg_window`, `avg_last`).
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    samples: u64,
    sum: u128,
    max: u64,
    last_ms: u64,
}

/// One value log (`_lat`, `_clat`, `_slat`, or `_bw`/`_iops` per I/O).
#[derive(Debug, Default)]
struct ValueLog {
    entries: Vec<Entry>,
    average_ms: u64,
    max_value: bool,
    windows: [Window; DIRECTIONS],
}

impl ValueLog {
    fn new(settings: &FioLogs) -> Self {
        ValueLog {
            average_ms: settings.average_ms,
            max_value: settings.max_value,
            ..ValueLog::default()
        }
    }

    /// fio's `add_log_sample` for a latency log (an "inline" log: no early flush).
    fn add(&mut self, direction: usize, time_ms: u64, value: u64, io: &LoggedIo) {
        if self.average_ms == 0 {
            self.entries.push(Entry {
                time_ms,
                value,
                direction: direction as u8,
                block_bytes: io.block_bytes,
                offset_bytes: io.offset_bytes,
                ioprio: io.ioprio,
            });
            return;
        }
        let window = &mut self.windows[direction];
        window.samples += 1;
        window.sum += u128::from(value);
        window.max = window.max.max(value);
        if time_ms < window.last_ms || time_ms - window.last_ms < self.average_ms {
            return;
        }
        self.flush_window(direction, time_ms);
        self.windows[direction].last_ms = time_ms - time_ms % self.average_ms;
    }

    /// fio's `__add_stat_to_log`: the window's mean (rounded half up) or maximum, if it holds
    /// any sample, then an empty window.
    fn flush_window(&mut self, direction: usize, time_ms: u64) {
        let window = &mut self.windows[direction];
        if window.samples > 0 {
            let samples = u128::from(window.samples);
            let mean = (2 * window.sum + samples) / (2 * samples);
            let value = if self.max_value {
                window.max
            } else {
                u64::try_from(mean).unwrap_or(u64::MAX)
            };
            self.entries.push(Entry {
                time_ms,
                value,
                direction: direction as u8,
                block_bytes: 0,
                offset_bytes: 0,
                ioprio: 0,
            });
        }
        let last_ms = window.last_ms;
        *window = Window {
            last_ms,
            ..Window::default()
        };
    }

    /// fio's `finalize_logs`: what is left in each direction's window, at the job's end.
    fn finish(&mut self, end_ms: u64) {
        if self.average_ms > 0 {
            for direction in 0..DIRECTIONS {
                self.flush_window(direction, end_ms);
            }
        }
    }
}

/// Bandwidth and IOPS over whole windows of `log_avg_msec` (fio's helper thread,
/// `__add_samples`): bytes and I/Os of the window in progress, per direction.
#[derive(Debug)]
struct RateWindows {
    average_ms: u64,
    /// Index of the window in progress (its start is `index * average_ms`).
    index: u64,
    bytes: [u64; DIRECTIONS],
    ios: [u64; DIRECTIONS],
}

impl RateWindows {
    /// Closes the window in progress if it ended at or before `time_ms`, writing its rates;
    /// the windows after it up to `time_ms` saw no I/O and write nothing.
    fn advance(
        &mut self,
        time_ms: u64,
        bandwidth: &mut Option<ValueLog>,
        iops: &mut Option<ValueLog>,
    ) {
        let end_ms = (self.index + 1) * self.average_ms;
        if end_ms > time_ms {
            return;
        }
        for direction in 0..DIRECTIONS {
            if self.ios[direction] == 0 {
                continue;
            }
            let rate = |amount: u64| amount * MS_PER_S / self.average_ms;
            let entry = |value| Entry {
                time_ms: end_ms,
                value,
                direction: direction as u8,
                block_bytes: 0,
                offset_bytes: 0,
                ioprio: 0,
            };
            if let Some(log) = bandwidth.as_mut() {
                log.entries
                    .push(entry(rate(self.bytes[direction]) / BYTES_PER_KIB));
            }
            if let Some(log) = iops.as_mut() {
                log.entries.push(entry(rate(self.ios[direction])));
            }
        }
        self.bytes = [0; DIRECTIONS];
        self.ios = [0; DIRECTIONS];
        self.index = time_ms / self.average_ms;
    }
}

/// fio's completion latency histogram log of one worker (`log_hist_msec`).
#[derive(Debug)]
struct HistogramLog {
    window_ms: u64,
    coarseness: u8,
    /// Completion latencies so far per direction, in fio's bins.
    counts: [Vec<u64>; DIRECTIONS],
    /// `counts` when the direction's last line was written.
    counts_at_last_line: [Vec<u64>; DIRECTIONS],
    /// fio's `hist_last`: start of the direction's window (0: not started).
    last_ms: [u64; DIRECTIONS],
    text: String,
}

impl HistogramLog {
    /// fio's `add_clat_sample` with `hist_msec`: a line of the bins filled since the direction's
    /// last line, once a window has passed since it.
    fn add(&mut self, direction: usize, time_ms: u64, clat_ns: u64, block_bytes: u64) {
        self.counts[direction][fio_bucket_index(clat_ns) as usize] += 1;
        if self.last_ms[direction] == 0 {
            self.last_ms[direction] = time_ms;
        }
        let this_window_ms = time_ms - self.last_ms[direction];
        if this_window_ms < self.window_ms {
            return;
        }
        let _ = write!(self.text, "{time_ms}, {direction}, {block_bytes}");
        let stride = 1usize << self.coarseness;
        let now = &self.counts[direction];
        let before = &mut self.counts_at_last_line[direction];
        for start in (0..FIO_HISTOGRAM_BINS).step_by(stride) {
            let filled: u64 = (start..start + stride)
                .map(|bin| now[bin] - before[bin])
                .sum();
            let _ = write!(self.text, ", {filled}");
        }
        self.text.push('\n');
        before.copy_from_slice(now);
        self.last_ms[direction] = time_ms - (this_window_ms - self.window_ms);
    }
}

/// Everything one worker logs.
#[derive(Debug)]
pub(crate) struct FioLogRecorder {
    settings: FioLogs,
    thread_number: u32,
    bandwidth: Option<ValueLog>,
    iops: Option<ValueLog>,
    latency: Option<ValueLog>,
    completion_latency: Option<ValueLog>,
    submission_latency: Option<ValueLog>,
    rates: Option<RateWindows>,
    histogram: Option<HistogramLog>,
}

/// One completed I/O, as the logs see it (times from the measurement's start).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoggedIo {
    pub direction: IoDirection,
    pub submitted_ns: u64,
    pub completed_ns: u64,
    pub block_bytes: u64,
    pub offset_bytes: u64,
    pub slat_ns: u64,
    /// Whether it has a submission latency of its own (one its engine queued; fio's
    /// submission-latency log has a line only for those).
    pub has_slat: bool,
    pub clat_ns: u64,
    /// The priority it carried (fio's `io_u->ioprio`: its cmdprio pick, else the job's
    /// `prio`/`prioclass`, else 0).
    pub ioprio: u16,
}

impl FioLogRecorder {
    /// A recorder for the job clone numbered `thread_number`, or `None` when no log is asked.
    pub(crate) fn new(settings: &FioLogs, thread_number: u32) -> Option<Self> {
        let wants = |kind| settings.prefix(kind).is_some();
        if !FioLogKind::ALL.into_iter().any(wants) {
            return None;
        }
        let averaged = settings.average_ms > 0;
        let value_log = |kind| wants(kind).then(|| ValueLog::new(settings));
        Some(FioLogRecorder {
            settings: settings.clone(),
            thread_number,
            bandwidth: value_log(FioLogKind::Bandwidth),
            iops: value_log(FioLogKind::Iops),
            latency: value_log(FioLogKind::Latency),
            completion_latency: value_log(FioLogKind::CompletionLatency),
            submission_latency: value_log(FioLogKind::SubmissionLatency),
            rates: (averaged && (wants(FioLogKind::Bandwidth) || wants(FioLogKind::Iops)))
                .then_some(RateWindows {
                    average_ms: settings.average_ms,
                    index: 0,
                    bytes: [0; DIRECTIONS],
                    ios: [0; DIRECTIONS],
                }),
            histogram: (wants(FioLogKind::CompletionHistogram) && settings.histogram_ms > 0).then(
                || HistogramLog {
                    window_ms: settings.histogram_ms,
                    coarseness: settings.histogram_coarseness,
                    counts: std::array::from_fn(|_| vec![0; FIO_HISTOGRAM_BINS]),
                    counts_at_last_line: std::array::from_fn(|_| vec![0; FIO_HISTOGRAM_BINS]),
                    last_ms: [0; DIRECTIONS],
                    text: String::new(),
                },
            ),
        })
    }

    /// Logs one measured I/O.
    pub(crate) fn record(&mut self, io: LoggedIo) {
        let direction = direction_number(io.direction);
        let time_ms = io.completed_ns / NS_PER_MS;
        let bytes = io.block_bytes;
        if let Some(rates) = self.rates.as_mut() {
            rates.advance(time_ms, &mut self.bandwidth, &mut self.iops);
            rates.bytes[direction] += bytes;
            rates.ios[direction] += 1;
        } else {
            let bandwidth = self
                .bandwidth
                .as_mut()
                .filter(|_| !self.settings.without_per_io_bandwidth);
            if let Some(log) = bandwidth {
                // fio's add_bw_sample: bytes over the completion latency, per I/O.
                let rate = match io.clat_ns {
                    0 => 0,
                    clat_ns => bytes.saturating_mul(1_000_000) / clat_ns,
                };
                log.add(direction, time_ms, rate, &io);
            }
            let iops = self
                .iops
                .as_mut()
                .filter(|_| !self.settings.without_per_io_iops);
            if let Some(log) = iops {
                log.add(direction, time_ms, 1, &io);
            }
        }
        // fio logs no submission latency for an I/O its engine did inside its submit call.
        if let (Some(log), true) = (self.submission_latency.as_mut(), io.has_slat) {
            log.add(direction, io.submitted_ns / NS_PER_MS, io.slat_ns, &io);
        }
        if let Some(log) = self.completion_latency.as_mut() {
            log.add(direction, time_ms, io.clat_ns, &io);
        }
        if let Some(log) = self.latency.as_mut() {
            let lat_ns = io.slat_ns.saturating_add(io.clat_ns);
            log.add(direction, time_ms, lat_ns, &io);
        }
        if let Some(log) = self.histogram.as_mut() {
            log.add(direction, time_ms, io.clat_ns, bytes);
        }
    }

    /// The log files of this worker, its measurement having lasted `elapsed_ns`.
    pub(crate) fn finish(mut self, elapsed_ns: u64) -> Vec<FioLogFile> {
        let end_ms = elapsed_ns / NS_PER_MS;
        if let Some(rates) = self.rates.as_mut() {
            // Only whole windows: one the job ended inside is left out, as fio's helper
            // thread never samples it.
            rates.advance(end_ms, &mut self.bandwidth, &mut self.iops);
        }
        let mut files = Vec::new();
        let settings = &self.settings;
        let mut push = |kind: FioLogKind, text: String| {
            if let Some(path) = settings.path(kind, self.thread_number) {
                files.push(FioLogFile {
                    kind,
                    path,
                    text,
                    append: settings.shared_file,
                });
            }
        };
        let averaged = settings.average_ms > 0;
        for (kind, log) in [
            (FioLogKind::Bandwidth, self.bandwidth.take()),
            (FioLogKind::Iops, self.iops.take()),
            (FioLogKind::Latency, self.latency.take()),
            (
                FioLogKind::CompletionLatency,
                self.completion_latency.take(),
            ),
            (
                FioLogKind::SubmissionLatency,
                self.submission_latency.take(),
            ),
        ] {
            let Some(mut log) = log else { continue };
            let rate_log = matches!(kind, FioLogKind::Bandwidth | FioLogKind::Iops);
            if !(averaged && rate_log) {
                log.finish(end_ms);
            }
            if kind == FioLogKind::SubmissionLatency {
                // Logged at completion, written in submission order as fio logs them.
                log.entries.sort_by_key(|e| e.time_ms);
            }
            push(kind, format_entries(&log.entries, settings));
        }
        if settings.prefix(FioLogKind::CompletionHistogram).is_some() {
            // fio writes the file, empty without `log_hist_msec`.
            push(
                FioLogKind::CompletionHistogram,
                self.histogram.take().map(|h| h.text).unwrap_or_default(),
            );
        }
        files
    }
}

/// fio's lines (iolog.c, `flush_samples`): the offset column with `log_offset`; the priority as
/// its ioprio value in hex with `log_prio`, else 1 for the real-time class and 0 otherwise.
/// A per-I/O line has its I/O's priority (fio's `io_u->ioprio`: the request's cmdprio pick,
/// else the job's `prio` and `prioclass`); an averaged line (`log_avg_msec`) has 0, as fio's
/// `__add_stat_to_log` gives it.
fn format_entries(entries: &[Entry], settings: &FioLogs) -> String {
    /// linux/ioprio.h: the class is the bits above `IOPRIO_CLASS_SHIFT` (13).
    const IOPRIO_CLASS_SHIFT: u16 = 13;
    /// linux/ioprio.h `IOPRIO_CLASS_RT`.
    const IOPRIO_CLASS_RT: u16 = 1;
    let mut text = String::with_capacity(entries.len() * 32);
    for e in entries {
        let _ = write!(
            text,
            "{}, {}, {}, {}",
            e.time_ms, e.value, e.direction, e.block_bytes
        );
        if settings.offset {
            let _ = write!(text, ", {}", e.offset_bytes);
        }
        if settings.priority {
            let _ = writeln!(text, ", 0x{:04x}", e.ioprio);
        } else {
            let real_time = e.ioprio >> IOPRIO_CLASS_SHIFT == IOPRIO_CLASS_RT;
            let _ = writeln!(text, ", {}", u8::from(real_time));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(average_ms: u64) -> FioLogs {
        FioLogs {
            bandwidth_prefix: Some("j".into()),
            iops_prefix: Some("j".into()),
            latency_prefix: Some("j".into()),
            average_ms,
            offset: true,
            ..FioLogs::default()
        }
    }

    fn io(direction: IoDirection, completed_ms: u64, clat_ns: u64) -> LoggedIo {
        LoggedIo {
            direction,
            submitted_ns: completed_ms * NS_PER_MS,
            completed_ns: completed_ms * NS_PER_MS + clat_ns,
            block_bytes: 4096,
            offset_bytes: 8192,
            slat_ns: 10,
            has_slat: true,
            clat_ns,
            ioprio: 0,
        }
    }

    fn text_of(files: &[FioLogFile], suffix: &str) -> String {
        files
            .iter()
            .find(|f| f.path.to_string_lossy().ends_with(suffix))
            .map(|f| f.text.clone())
            .unwrap_or_else(|| panic!("no {suffix} among {files:?}"))
    }

    #[test]
    fn one_line_per_io_without_averaging_as_fio() {
        let mut recorder = FioLogRecorder::new(&settings(0), 3).unwrap();
        recorder.record(io(IoDirection::Read, 5, 1_000_000));
        recorder.record(io(IoDirection::Write, 6, 0));
        let files = recorder.finish(7 * NS_PER_MS);
        // 4096 bytes in 1 ms: 4096 * 10^6 / 10^6 = 4096 (fio's per-I/O unit).
        assert_eq!(
            text_of(&files, "j_bw.3.log"),
            "6, 4096, 0, 4096, 8192, 0\n6, 0, 1, 4096, 8192, 0\n"
        );
        assert_eq!(
            text_of(&files, "j_iops.3.log"),
            "6, 1, 0, 4096, 8192, 0\n6, 1, 1, 4096, 8192, 0\n"
        );
        assert_eq!(
            text_of(&files, "j_lat.3.log"),
            "6, 1000010, 0, 4096, 8192, 0\n6, 10, 1, 4096, 8192, 0\n"
        );
        assert_eq!(
            text_of(&files, "j_slat.3.log"),
            "5, 10, 0, 4096, 8192, 0\n6, 10, 1, 4096, 8192, 0\n"
        );
    }

    #[test]
    fn averaged_latency_lines_follow_fios_windows() {
        let mut recorder = FioLogRecorder::new(&settings(100), 1).unwrap();
        // Window [0, 100): 10 and 20; the sample at 130 closes it (and counts in it, as fio).
        for (ms, clat) in [(10, 10), (50, 20), (130, 30), (150, 40), (260, 50)] {
            recorder.record(io(IoDirection::Read, ms, clat));
        }
        let files = recorder.finish(270 * NS_PER_MS);
        assert_eq!(
            text_of(&files, "j_clat.1.log"),
            "130, 20, 0, 0, 0, 0\n260, 45, 0, 0, 0, 0\n"
        );
        // Rates over whole windows: [0,100) two I/Os, [100,200) two; the job ended inside
        // [200,300).
        assert_eq!(
            text_of(&files, "j_iops.1.log"),
            "100, 20, 0, 0, 0, 0\n200, 20, 0, 0, 0, 0\n"
        );
        assert_eq!(
            text_of(&files, "j_bw.1.log"),
            "100, 80, 0, 0, 0, 0\n200, 80, 0, 0, 0, 0\n"
        );
    }

    #[test]
    fn histogram_lines_hold_the_bins_filled_since_the_last() {
        let logs = FioLogs {
            histogram_prefix: Some("h".into()),
            histogram_ms: 100,
            histogram_coarseness: 2,
            ..FioLogs::default()
        };
        let mut recorder = FioLogRecorder::new(&logs, 1).unwrap();
        for ms in [1, 50, 101, 150, 210] {
            recorder.record(io(IoDirection::Write, ms, 5));
        }
        let files = recorder.finish(300 * NS_PER_MS);
        let text = text_of(&files, "h_clat_hist.1.log");
        let lines: Vec<Vec<u64>> = text
            .lines()
            .map(|l| l.split(", ").map(|v| v.parse().unwrap()).collect())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0].len(), 3 + FIO_HISTOGRAM_BINS / 4);
        assert_eq!(&lines[0][..3], &[101, 1, 4096]);
        assert_eq!(lines[0][3..].iter().sum::<u64>(), 3);
        assert_eq!(&lines[1][..3], &[210, 1, 4096]);
        assert_eq!(lines[1][3..].iter().sum::<u64>(), 2);
    }
}
