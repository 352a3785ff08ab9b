//! The seed of each verify write's data, as fio 3.33 draws it, kept so that the read-back can
//! regenerate any write's bytes.
//!
//! fio fills a write's whole buffer from one seed before it lays its headers over it (verify.c,
//! `fill_verify_pattern`): two draws of the thread's `verify_state` multiplied, a stream that
//! `randrepeat` re-seeds at every loop (libfio.c, `clear_io_state`), so each loop writes the
//! same data again where it writes the same blocks, and that every read of fio's verify log
//! draws from too (`get_next_verify`: the `verify_backlog` reads amid the writes). A job
//! without fio's streams (storlab's own syntax) takes a seed per write mixed from the
//! worker's seed and the write's generation.
//!
//! The read-back wants the seed of a write by its generation (the worker's write number).
//! Rather than a seed per write, [`DataSeeds`] keeps the stream's state every
//! [`CHECKPOINT_EVERY`] generations and wherever something else drew from it or re-seeded it,
//! and replays the stream from the nearest one: a fraction of a byte per write.

use crate::fio_rand::FioRand;
use storlab_job::JobSpec;

/// fio's `FIO_RAND_VER_OFF` (fio.h): the seed index of `verify_state`.
pub(crate) const VERIFY_SEED_INDEX: usize = 3;
/// Generations between two kept states of the stream: a lookup replays fewer writes' draws.
const CHECKPOINT_EVERY: u32 = 64;

/// fio's seed of one write's data: two draws of `verify_state`, multiplied (a 64-bit `long`).
pub(crate) fn draw(stream: &mut FioRand) -> u64 {
    let first = stream.next();
    first.wrapping_mul(stream.next())
}

/// Where one worker's verify writes take their data seeds from.
#[derive(Clone, Debug)]
pub enum DataSeeds {
    /// fio's `verify_state` of the worker's fio thread.
    Fio(Box<FioSeeds>),
    /// storlab's own jobs: a seed per write from the worker's seed and the generation.
    Mixed { worker_seed: u64 },
}

/// fio's `verify_state` for the data of one thread's writes.
#[derive(Clone, Debug)]
pub struct FioSeeds {
    /// The stream as seeded: each loop's re-seeding starts it again from here.
    seeded: FioRand,
    /// The stream as the next write draws from it.
    stream: FioRand,
    /// The loops that re-seeded the stream so far (the offset generator's count of them).
    reseeds: u32,
    /// The generation the next draw is for, if the stream has gone on undisturbed since the
    /// last write's draw.
    next_generation: Option<u32>,
    /// The stream's state before the draw of a generation, in rising generation order.
    checkpoints: Vec<(u32, FioRand)>,
    /// The last write's generation and seed (the write's own fill asks for it at once).
    last: Option<(u32, u64)>,
}

impl DataSeeds {
    /// The seeds of fio thread `thread_number` running `job`, when the job has fio's streams.
    pub fn of_fio_thread(job: &JobSpec, thread_number: u32) -> Option<DataSeeds> {
        let fio = job.fio_random.as_ref()?;
        let seeds = crate::fio_rand::fio_job_seeds(fio, thread_number);
        let seeded = FioRand::new(seeds[VERIFY_SEED_INDEX], fio.tausworthe64);
        Some(DataSeeds::Fio(Box::new(FioSeeds {
            stream: seeded.clone(),
            seeded,
            reseeds: 0,
            next_generation: None,
            checkpoints: Vec::new(),
            last: None,
        })))
    }

    /// The seed of the write of `generation`, drawn now; `reseeds`: the loops that re-seeded
    /// fio's streams so far (`None` outside fio's sequence).
    pub fn draw_for_write(&mut self, generation: u32, reseeds: Option<u32>) -> u64 {
        let DataSeeds::Fio(fio) = self else {
            return self.seed_of(generation);
        };
        fio.reseed_for(reseeds);
        if fio.next_generation != Some(generation) || generation.is_multiple_of(CHECKPOINT_EVERY) {
            // Generations only rise; one that does not (after 2^32 writes) starts the list
            // again rather than break its order.
            if fio
                .checkpoints
                .last()
                .is_some_and(|(g, _)| *g >= generation)
            {
                fio.checkpoints.clear();
            }
            fio.checkpoints.push((generation, fio.stream.clone()));
        }
        let seed = draw(&mut fio.stream);
        fio.next_generation = Some(generation.wrapping_add(1));
        fio.last = Some((generation, seed));
        seed
    }

    /// A draw of the stream for something else than a write's data: a verify read of fio's
    /// log (`reseeds` `None`: on the stream as it stands, which a verify pass re-seeds apart),
    /// or a write fio drew for and requeued (`reseeds` as for [`Self::draw_for_write`]: a
    /// loop's first draw may be one, seed 4343).
    pub fn draw_aside(&mut self, reseeds: Option<u32>) {
        if let DataSeeds::Fio(fio) = self {
            fio.reseed_for(reseeds);
            draw(&mut fio.stream);
            fio.next_generation = None;
        }
    }

    /// fio's verify pass after a loop (backend.c `do_verify`) re-seeds the stream; each piece
    /// of the log it reads then draws from it (`get_next_verify`, as `draw_aside`), and a loop
    /// that `randrepeat` does not re-seed writes on from there.
    pub fn restart_for_verify_pass(&mut self) {
        if let DataSeeds::Fio(fio) = self {
            fio.stream = fio.seeded.clone();
            fio.next_generation = None;
        }
    }

    /// The seed the write of `generation` drew (replayed from the nearest kept state).
    pub fn seed_of(&self, generation: u32) -> u64 {
        let fio = match self {
            DataSeeds::Mixed { worker_seed } => {
                return crate::fio_verify::splitmix(
                    worker_seed ^ u64::from(generation).rotate_left(40),
                )
            }
            DataSeeds::Fio(fio) => fio,
        };
        if let Some((_, seed)) = fio.last.filter(|(g, _)| *g == generation) {
            return seed;
        }
        let at = fio.checkpoints.partition_point(|(g, _)| *g <= generation);
        let Some((from, state)) = at.checked_sub(1).map(|i| &fio.checkpoints[i]) else {
            // Never drawn (a generation the record never held): any seed fails its check.
            return 0;
        };
        let mut stream = state.clone();
        for _ in *from..generation {
            draw(&mut stream);
        }
        draw(&mut stream)
    }
}

impl FioSeeds {
    /// Starts the stream again if a loop re-seeded fio's streams since its last draw
    /// (`reseeds`: the loops that did so far).
    fn reseed_for(&mut self, reseeds: Option<u32>) {
        if let Some(reseeds) = reseeds.filter(|&r| r > self.reseeds) {
            self.reseeds = reseeds;
            self.stream = self.seeded.clone();
            self.next_generation = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fio_seeds() -> DataSeeds {
        DataSeeds::Fio(Box::new(FioSeeds {
            seeded: FioRand::new(0x1234, false),
            stream: FioRand::new(0x1234, false),
            reseeds: 0,
            next_generation: None,
            checkpoints: Vec::new(),
            last: None,
        }))
    }

    #[test]
    fn every_write_s_seed_is_found_again_after_draws_aside_and_reseeds() {
        let mut seeds = fio_seeds();
        let mut drawn = Vec::new();
        for generation in 1..=500u32 {
            let reseeds = Some(generation / 200);
            if generation % 37 == 0 {
                seeds.draw_aside(reseeds);
            }
            drawn.push((generation, seeds.draw_for_write(generation, reseeds)));
        }
        for (generation, seed) in drawn {
            assert_eq!(seeds.seed_of(generation), seed, "generation {generation}");
        }
    }

    #[test]
    fn a_reseeded_loop_draws_the_first_loop_s_seeds_again() {
        let mut seeds = fio_seeds();
        let first: Vec<u64> = (1..=10).map(|g| seeds.draw_for_write(g, Some(0))).collect();
        let second: Vec<u64> = (11..=20)
            .map(|g| seeds.draw_for_write(g, Some(1)))
            .collect();
        assert_eq!(first, second);
        let mut stream = FioRand::new(0x1234, false);
        assert_eq!(first[0], draw(&mut stream));
        assert_eq!(first[1], draw(&mut stream));
    }

    #[test]
    fn checkpoints_cost_a_fraction_of_a_byte_per_write() {
        let mut seeds = fio_seeds();
        for generation in 1..=64_000u32 {
            seeds.draw_for_write(generation, Some(0));
        }
        let DataSeeds::Fio(fio) = &seeds else {
            unreachable!()
        };
        assert!(fio.checkpoints.len() <= 1 + 64_000 / CHECKPOINT_EVERY as usize);
    }
}
