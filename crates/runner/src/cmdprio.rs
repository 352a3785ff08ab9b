//! fio's command priorities (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`,
//! `cmdprio_bssplit`) as fio 3.33's engines/cmdprio.c decides them: per request, a draw from
//! fio's own `prio_state` stream decides whether it carries an I/O priority and which; the
//! engine (io_uring, libaio) then puts that priority on the request.

use crate::fio_rand::FioRand;
use storlab_engine::IoDirection;
use storlab_job::{CmdPrio, CmdPrioDirection};

/// `IOPRIO_CLASS_RT` (linux/ioprio.h): the class fio gives the I/Os `cmdprio_percentage` or
/// `cmdprio_bssplit` picks when `cmdprio_class` is not set (cmdprio.c,
/// `fio_cmdprio_parse_and_gen`).
pub const IOPRIO_CLASS_REALTIME: u8 = 1;
/// `IOPRIO_CLASS_SHIFT` (linux/ioprio.h): an I/O priority is `class << 13 | level`.
const IOPRIO_CLASS_SHIFT: u16 = 13;
/// fio draws `rand_between(&td->prio_state, 0, 99)` per request and compares it with the
/// percentages (cmdprio.c, `fio_cmdprio_set_ioprio`).
const DRAW_LAST: u64 = 99;

/// The I/O priority value (linux/ioprio.h `IOPRIO_PRIO_VALUE`) of `class` at `level`.
pub fn ioprio_value(class: u8, level: u8) -> u16 {
    u16::from(class) << IOPRIO_CLASS_SHIFT | u16::from(level)
}

/// One direction's rule, resolved as fio's `fio_cmdprio_init` resolves it: the class defaults
/// to real-time and the level to 0; `cmdprio_bssplit` entries without their own class and
/// level take those.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct DirectionRule {
    /// `cmdprio_percentage` and the priority its picks carry.
    percentage: u64,
    ioprio: u16,
    /// `cmdprio_bssplit`: per I/O size, its entries' (cumulative percentage, priority), in the
    /// order fio walks them.
    by_size: Vec<(u64, Vec<(u64, u16)>)>,
}

impl DirectionRule {
    fn new(direction: &CmdPrioDirection) -> Self {
        let ioprio = ioprio_value(
            direction.class.unwrap_or(IOPRIO_CLASS_REALTIME),
            direction.level.unwrap_or(0),
        );
        let mut by_size: Vec<(u64, Vec<(u64, u16)>)> = Vec::new();
        for entry in &direction.bssplit {
            let entry_ioprio = entry
                .class_level
                .map_or(ioprio, |(class, level)| ioprio_value(class, level));
            match by_size.last_mut() {
                Some((size, entries)) if *size == entry.block_size_bytes => {
                    let before = entries.last().map_or(0, |(cumulative, _)| *cumulative);
                    entries.push((before + u64::from(entry.percent), entry_ioprio));
                }
                _ => by_size.push((
                    entry.block_size_bytes,
                    vec![(u64::from(entry.percent), entry_ioprio)],
                )),
            }
        }
        DirectionRule {
            percentage: u64::from(direction.percentage),
            ioprio,
            by_size,
        }
    }

    /// fio's `fio_cmdprio_percentage`: the share of requests of `len_bytes` that get a
    /// priority (0: the request draws nothing).
    fn share(&self, len_bytes: u64) -> u64 {
        if self.percentage > 0 {
            return self.percentage;
        }
        self.by_size
            .iter()
            .find(|(size, _)| *size == len_bytes)
            .and_then(|(_, entries)| entries.last())
            .map_or(0, |(total, _)| *total)
    }

    /// The priority of a request of `len_bytes` whose draw was `roll` (0..=99), if any: the
    /// percentage, or the entries of the request's exact size walked until their running sum
    /// passes the draw.
    fn pick(&self, len_bytes: u64, roll: u64) -> Option<u16> {
        if self.percentage > 0 {
            return (roll < self.percentage).then_some(self.ioprio);
        }
        let (_, entries) = self.by_size.iter().find(|(size, _)| *size == len_bytes)?;
        entries
            .iter()
            .find(|(cumulative, _)| roll < *cumulative)
            .map(|(_, ioprio)| *ioprio)
    }

    /// The priorities this rule can give, in the order fio numbers them (cmdprio.c,
    /// `assign_clat_prio_index`: the percentage's, or each bssplit entry's as met).
    fn priorities(&self) -> Vec<u16> {
        if self.percentage > 0 {
            return vec![self.ioprio];
        }
        self.by_size
            .iter()
            .flat_map(|(_, entries)| entries.iter().map(|(_, ioprio)| *ioprio))
            .collect()
    }
}

/// Which requests of one job clone carry a priority, drawn as fio's thread draws them.
#[derive(Clone, Debug)]
pub struct CmdPrioDraw {
    read: DirectionRule,
    write: DirectionRule,
    /// fio's `td->prio_state` (taus88, seeded with `rand_seeds[FIO_RAND_PRIO_CMDS]`).
    prio_state: FioRand,
    /// Its seed, and the loop it was last seeded for (fio re-seeds it with every stream at
    /// each new loop of a `randrepeat` job: libfio.c, `clear_io_state`).
    seed: u64,
    pass: u64,
}

impl CmdPrioDraw {
    /// The rule of `cmdprio`, drawing from a stream seeded with `seed` (fio's
    /// `init_rand_seed(&td->prio_state, seed, false)`: always the 32-bit generator).
    pub fn new(cmdprio: &CmdPrio, seed: u64) -> Self {
        CmdPrioDraw {
            read: DirectionRule::new(&cmdprio.read),
            write: DirectionRule::new(&cmdprio.write),
            prio_state: FioRand::new(seed, false),
            seed,
            pass: 0,
        }
    }

    /// Draw from now on from a stream seeded with `seed` (the clone's fio thread number known).
    pub fn reseed(&mut self, seed: u64) {
        self.prio_state = FioRand::new(seed, false);
        self.seed = seed;
        self.pass = 0;
    }

    /// The job's loop number `pass` (from 0) has begun, or goes on: a new one starts the
    /// stream over from its seed, as fio's `clear_io_state` does for a `randrepeat` job.
    #[inline]
    pub fn enter_pass(&mut self, pass: u64) {
        if pass != self.pass {
            self.prio_state = FioRand::new(self.seed, false);
            self.pass = pass;
        }
    }

    /// The command priority of the next request, if cmdprio gives it one. Trims carry none,
    /// as in fio; a request draws only when its direction and size have a share, as fio's.
    #[inline]
    pub fn next(&mut self, direction: IoDirection, len_bytes: u64) -> Option<u16> {
        let rule = match direction {
            IoDirection::Read => &self.read,
            IoDirection::Write => &self.write,
            IoDirection::Trim => return None,
        };
        let share = rule.share(len_bytes);
        if share == 0 {
            return None;
        }
        let roll = self.prio_state.between(0, DRAW_LAST);
        if roll >= share {
            return None;
        }
        rule.pick(len_bytes, roll)
    }

    /// The priorities of `direction` in fio's order (cmdprio.c, `init_cmdprio_values`): the
    /// job's own (`default_ioprio`, fio's `ts->ioprio`) first, then each one the rule can give
    /// that is not already listed. Empty when the rule gives that direction none.
    pub fn priorities(&self, direction: IoDirection, default_ioprio: u16) -> Vec<u16> {
        let rule = match direction {
            IoDirection::Read => &self.read,
            IoDirection::Write => &self.write,
            IoDirection::Trim => return Vec::new(),
        };
        let given = rule.priorities();
        if given.is_empty() {
            return given;
        }
        let mut all = vec![default_ioprio];
        for ioprio in given {
            if !all.contains(&ioprio) {
                all.push(ioprio);
            }
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storlab_job::CmdPrioSplit;

    fn direction(percentage: u8, bssplit: Vec<CmdPrioSplit>) -> CmdPrioDirection {
        CmdPrioDirection {
            percentage,
            bssplit,
            ..CmdPrioDirection::default()
        }
    }

    /// Share of `draws` requests of (`direction`, `len`) that get `ioprio`.
    fn share(draw: &mut CmdPrioDraw, direction: IoDirection, len: u64, ioprio: u16) -> f64 {
        let draws = 20_000;
        let hits = (0..draws)
            .filter(|_| draw.next(direction, len) == Some(ioprio))
            .count();
        hits as f64 / draws as f64
    }

    #[test]
    fn each_direction_draws_its_own_percentage_class_and_level() {
        let cmdprio = CmdPrio {
            read: CmdPrioDirection {
                percentage: 20,
                class: Some(2),
                level: Some(5),
                ..CmdPrioDirection::default()
            },
            write: direction(70, Vec::new()),
        };
        let mut draw = CmdPrioDraw::new(&cmdprio, 7);
        let read = share(&mut draw, IoDirection::Read, 4096, ioprio_value(2, 5));
        // fio's defaults for writes: real-time, level 0.
        let write = share(&mut draw, IoDirection::Write, 4096, ioprio_value(1, 0));
        assert!((read - 0.20).abs() < 0.02, "{read}");
        assert!((write - 0.70).abs() < 0.02, "{write}");
        assert_eq!(draw.next(IoDirection::Trim, 4096), None);
        assert_eq!(ioprio_value(2, 5), 0x4005);
        assert_eq!(
            draw.priorities(IoDirection::Read, 0x4003),
            [0x4003, ioprio_value(2, 5)]
        );
    }

    #[test]
    fn bssplit_picks_by_exact_size_and_walks_its_entries() {
        let split = |block_size_bytes, percent, class_level| CmdPrioSplit {
            block_size_bytes,
            percent,
            class_level,
        };
        let cmdprio = CmdPrio {
            read: CmdPrioDirection {
                class: Some(3),
                level: Some(0),
                bssplit: vec![
                    split(4096, 30, Some((2, 7))),
                    split(4096, 20, None),
                    split(65536, 100, Some((1, 1))),
                ],
                ..CmdPrioDirection::default()
            },
            write: CmdPrioDirection::default(),
        };
        let mut draw = CmdPrioDraw::new(&cmdprio, 11);
        let own = share(&mut draw, IoDirection::Read, 4096, ioprio_value(2, 7));
        let implicit = share(&mut draw, IoDirection::Read, 4096, ioprio_value(3, 0));
        assert!((own - 0.30).abs() < 0.02, "{own}");
        assert!((implicit - 0.20).abs() < 0.02, "{implicit}");
        assert_eq!(
            share(&mut draw, IoDirection::Read, 65536, ioprio_value(1, 1)),
            1.0
        );
        // A size with no entry, and writes, get none and draw nothing: the stream is where it
        // was (fio draws only when the share is not 0).
        let before = draw.clone();
        assert_eq!(draw.next(IoDirection::Read, 8192), None);
        assert_eq!(draw.next(IoDirection::Write, 4096), None);
        assert_eq!(draw.prio_state, before.prio_state);
        assert_eq!(
            draw.priorities(IoDirection::Read, 0),
            [
                0,
                ioprio_value(2, 7),
                ioprio_value(3, 0),
                ioprio_value(1, 1)
            ]
        );
        assert!(draw.priorities(IoDirection::Write, 0).is_empty());
    }
}
