//! `JobDraft::build`: a draft turned into a `JobSpec`, group by group, before validation.

use super::buffers::note_dedupe_reads;
use super::io_type::note_trim_on_a_file;
use super::random::note_partly_random;
use super::JobDraft;
use crate::model::JobSpec;

impl JobDraft {
    /// The job with every setting applied over storlab's defaults, not yet validated: each group
    /// of keys in turn (its file's `build_*`), then what depends on several (a replay overrides
    /// the directions and sizes) and the notes where storlab differs from fio. The warnings come
    /// in this order.
    pub(super) fn build(&self, name: &str) -> JobSpec {
        let (engine, target, warnings) = self.engine_and_target(name);
        let mut spec = JobSpec::new(name, engine, target);
        spec.warnings = warnings;
        if spec.target == crate::model::Target::None {
            spec.fio_file_name = self.null_file_name();
        }
        self.build_direction(&mut spec);
        let random = self.build_random_shares(&mut spec);
        self.build_block_sizes(&mut spec, random);
        self.build_io_type(&mut spec);
        self.build_depth(&mut spec);
        self.build_description(&mut spec);
        self.build_extents(&mut spec);
        self.build_time(&mut spec);
        self.build_rate(&mut spec);
        self.build_random_streams(&mut spec);
        self.build_buffers(&mut spec);
        self.build_verify(&mut spec);
        self.build_error_handling(&mut spec);
        self.build_synchronization(&mut spec);
        self.build_logs(&mut spec, name);
        self.build_report(&mut spec);
        self.build_engine_tuning(&mut spec);
        self.build_sync(&mut spec);
        self.build_latency(&mut spec);
        self.build_steady_state(&mut spec);
        self.build_target_files(&mut spec);
        self.push_no_effect_warnings(&mut spec);
        note_partly_random(&mut spec);
        self.apply_replay(&mut spec);
        self.fio_verify_fixups(&mut spec);
        note_trim_on_a_file(&mut spec);
        note_dedupe_reads(&mut spec);
        self.build_io_batch(&mut spec);
        spec
    }
}
