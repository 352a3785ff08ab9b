//! What one worker's writes carry: the job's data pattern stamped per write, fio's
//! `buffer_pattern`, dedupe buffers or verify format, or verify data (`verifying.rs`).

use super::{Worker, CHECKED_GENERATIONS};
use crate::fio_verify::FioFormat;
use crate::offsets::PlannedIo;
use crate::pattern;
use crate::verify_data_seeds::DataSeeds;
use std::sync::Arc;
use storlab_engine::{IoDirection, IoEngine};
use storlab_job::{DataPattern, JobSpec};

/// The data of one worker's writes, when they do not verify.
pub(super) struct WriteData {
    pub(super) pattern: DataPattern,
    /// fio's `buffer_pattern`: the buffers hold it from setup on and writes are not stamped.
    /// Kept when the job also reads, whose data lands in the same slots: each write then
    /// refills its slot.
    fixed_pattern: Option<Vec<u8>>,
    refill_pattern: bool,
    /// fio's dedupe buffers: every write refilled from fio's buffer streams.
    pub(super) fio_buffers: Option<Box<crate::fio_buffers::FioBuffers>>,
    /// fio's verify format of a job that writes it without reading back (`do_verify=0`).
    unchecked_format: Option<Arc<FioFormat>>,
    /// The data seeds of `unchecked_format`'s writes.
    pub(super) unchecked_seeds: DataSeeds,
}

impl WriteData {
    /// The data of `job`'s writes with data seed `worker_seed`, in fio's verify format
    /// `fio_format` when the job sets one.
    pub(super) fn new(
        job: &JobSpec,
        worker_seed: u64,
        fio_format: Option<Arc<FioFormat>>,
    ) -> WriteData {
        WriteData {
            pattern: job.data_pattern,
            fixed_pattern: job.buffer_pattern.clone(),
            refill_pattern: job.read_percent > 0,
            fio_buffers: None,
            // `do_verify=0`: the blocks carry fio's headers, nothing reads them back.
            unchecked_format: fio_format.filter(|_| !job.verify),
            unchecked_seeds: DataSeeds::Mixed { worker_seed },
        }
    }

    /// Only the job's pattern, stamped per write: no buffer pattern, dedupe or verify format.
    fn stamped_only(&self) -> bool {
        self.fixed_pattern.is_none()
            && self.fio_buffers.is_none()
            && self.unchecked_format.is_none()
    }

    /// Fills `buf` for the write of `io` numbered `write_counter` by worker `worker_index`
    /// (`reseeds`: the loops that re-seeded fio's streams so far).
    fn fill(
        &mut self,
        buf: &mut [u8],
        io: &PlannedIo,
        write_counter: u64,
        worker_index: u32,
        relative_slot: u32,
        reseeds: Option<u32>,
    ) {
        if let Some(format) = &self.unchecked_format {
            let generation = (write_counter % CHECKED_GENERATIONS) as u32 + 1;
            let thread = worker_index.saturating_add(1) as u16;
            let data_seed = self.unchecked_seeds.draw_for_write(generation, reseeds);
            format.fill(buf, io.offset_bytes, data_seed, thread, generation);
        } else if let Some(buffers) = self.fio_buffers.as_mut() {
            buffers.fill_write(buf, relative_slot, io.offset_bytes);
        } else if let Some(bytes) = &self.fixed_pattern {
            if self.refill_pattern {
                pattern::fill_repeated(buf, bytes);
            }
        } else {
            pattern::stamp(buf, self.pattern, io.offset_bytes, write_counter);
        }
    }
}

impl Worker {
    /// Prepares engine slot `slot` for `io` (a backlog read when `backlog_read`): a write's
    /// data goes in; returns the generation the I/O carries (see `InFlight::generation`).
    pub(super) fn prepare_slot(
        &mut self,
        engine: &mut dyn IoEngine,
        slot: u32,
        io: &PlannedIo,
        backlog_read: bool,
    ) -> u32 {
        let write_counter = self.progress.write_counter;
        match io.direction {
            IoDirection::Write if self.verifying.state.is_none() && self.data.stamped_only() => {
                stamp_write(engine, slot, io, self.data.pattern, write_counter);
                self.progress.write_counter += 1;
                0
            }
            IoDirection::Write => {
                let buf = &mut engine.buffer_mut(slot)[..io.len_bytes as usize];
                let reseeds = self.generator.fio_reseeds();
                let generation = match self.verifying.record_write(buf, io, write_counter, reseeds)
                {
                    Some(generation) => {
                        if let Some(order) = self.verifying.seed_order.as_mut() {
                            let pass = self.generator.fio_pass().unwrap_or(0);
                            order.write(pass, io.offset_bytes, u64::from(io.len_bytes));
                        }
                        generation
                    }
                    None => {
                        if let (Some(buffers), Some(loops)) =
                            (self.data.fio_buffers.as_mut(), self.generator.fio_reseeds())
                        {
                            buffers.follow_loops(loops);
                        }
                        let relative_slot = slot - self.queue.slot_base;
                        let worker_index = self.worker_index;
                        self.data.fill(
                            buf,
                            io,
                            write_counter,
                            worker_index,
                            relative_slot,
                            reseeds,
                        );
                        0
                    }
                };
                self.progress.write_counter += 1;
                generation
            }
            IoDirection::Read => {
                if backlog_read {
                    // fio's `get_next_verify` draws a seed for every read of its log.
                    // On the stream as it stands: a verify pass re-seeds it apart.
                    self.verifying.draw_data_seed_aside(None);
                }
                self.verifying.read_generation(backlog_read, write_counter)
            }
            IoDirection::Trim => 0,
        }
    }
}

/// A write that carries the job's pattern alone: stamped with where and when it goes.
fn stamp_write(
    engine: &mut dyn IoEngine,
    slot: u32,
    io: &PlannedIo,
    data_pattern: DataPattern,
    write_counter: u64,
) {
    if engine.capabilities().shared_timeline {
        // Only the stamp changes: the rest of the slot holds what setup filled, and the
        // simulator's store relies on that (ADR 0016).
        let head_bytes = (io.len_bytes as usize).min(pattern::STAMP_BYTES);
        let head = engine.buffer_head_mut(slot, head_bytes);
        pattern::stamp(head, data_pattern, io.offset_bytes, write_counter);
    } else {
        // Real storage gets fio's default: every sector scrambled, so a 4 KiB block never
        // repeats (and a read into the slot leaves no zeros).
        let buf = &mut engine.buffer_mut(slot)[..io.len_bytes as usize];
        pattern::stamp(buf, data_pattern, io.offset_bytes, write_counter);
        pattern::scramble_sectors(buf, data_pattern, io.offset_bytes, write_counter);
    }
}
