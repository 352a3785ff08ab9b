//! The CLI's [`RunSink`]: each finished point is saved in the results database (when the run is
//! saved) and then announced on stderr (a progress bar on a terminal, a line otherwise).

use crate::db_support::RunRecorder;
use crate::progress::Progress;
use storlab_lab::sink::RunSink;
use storlab_report::JobReport;

/// Progress on stderr and the run's recorder (`None` with `--no-db`).
pub struct CliSink {
    pub recorder: Option<RunRecorder>,
    progress: Option<Progress>,
}

impl CliSink {
    pub fn new(recorder: Option<RunRecorder>) -> Self {
        Self {
            recorder,
            progress: None,
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
            progress.point_done(name, summary);
        }
    }

    fn ended(&mut self) {
        if let Some(progress) = &self.progress {
            progress.finish();
        }
    }
}
