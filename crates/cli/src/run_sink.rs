//! The CLI's [`RunSink`]: each finished point is saved in the results database (when the run is
//! saved) and then announced on stderr (a progress bar on a terminal, a line otherwise).

use crate::db_support::RunRecorder;
use crate::exit::Failure;
use crate::progress::Progress;
use storlab_lab::sink::RunSink;
use storlab_report::JobReport;
use storlab_runner::fio_log::FioLogFile;

/// Progress on stderr and the run's recorder (`None` with `--no-db`).
pub struct CliSink {
    pub recorder: Option<RunRecorder>,
    progress: Option<Progress>,
    /// The first fio log that could not be written: the run fails with it once its results
    /// are out.
    pub log_failure: Option<Failure>,
}

impl CliSink {
    pub fn new(recorder: Option<RunRecorder>) -> Self {
        Self {
            recorder,
            progress: None,
            log_failure: None,
        }
    }

    /// The saved run's id, once its first point is in the database.
    pub fn run_id(&self) -> Option<storlab_db::RunId> {
        self.recorder.as_ref().and_then(|r| r.run_id())
    }
}

impl RunSink for CliSink {
    fn started(&mut self, points: usize) {
        self.progress = Some(Progress::new(points));
    }

    fn point_done(&mut self, name: &str, reports: &[JobReport], summary: &str) {
        // Saved before it is announced: every point reported finished is in the database.
        if let Some(recorder) = &mut self.recorder {
            for job in reports {
                recorder.record(job);
            }
        }
        if let Some(progress) = &mut self.progress {
            // With `--repeat`, a job's name recurs: its line says which repeat finished.
            match reports.first().and_then(storlab_report::repeat_of) {
                Some((index, of)) => {
                    progress.point_done(&format!("{name} (repeat {index}/{of})"), summary)
                }
                None => progress.point_done(name, summary),
            }
        }
    }

    /// fio's logs, each written whole through a temporary file and a rename (never through a
    /// link or onto a device; `output::write_file`), once the job has ended: fio also writes
    /// them at the job's end, from memory. `per_job_logs=0` files are appended to, as fio does.
    fn fio_logs(&mut self, files: &[FioLogFile]) {
        for file in files {
            let option = file.kind.key();
            let written = if file.append {
                crate::output::append_file(&file.path, file.text.as_bytes(), option)
            } else {
                crate::output::write_file(&file.path, file.text.as_bytes(), option)
            };
            if let Err(failure) = written {
                self.log_failure.get_or_insert(failure);
            }
        }
    }

    fn ended(&mut self) {
        if let Some(progress) = &mut self.progress {
            progress.finish();
        }
    }
}
