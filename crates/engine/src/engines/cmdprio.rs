//! fio's command priorities (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`,
//! `cmdprio_bssplit`), shared by the io_uring and libaio engines as fio 3.33 shares
//! engines/cmdprio.c: per request, a draw decides whether it carries an I/O priority and which.

use crate::IoDirection;
use storlab_job::{CmdPrio, CmdPrioDirection};

/// `IOPRIO_CLASS_RT` (linux/ioprio.h): the class fio gives the I/Os `cmdprio_percentage` or
/// `cmdprio_bssplit` picks when `cmdprio_class` is not set.
pub const IOPRIO_CLASS_REALTIME: u8 = 1;
/// `IOPRIO_CLASS_SHIFT` (linux/ioprio.h): an I/O priority is `class << 13 | level`.
const IOPRIO_CLASS_SHIFT: u16 = 13;
/// fio draws `rand_between(0, 99)` per request and compares it with the percentages.
const DRAW_RANGE: u64 = 100;

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

    /// The priority of a request of `len_bytes` whose draw was `roll` (0..100), if any: fio's
    /// `fio_cmdprio_set_ioprio` (the percentage, or the entries of the request's exact size,
    /// walked until their running sum passes the draw).
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

    fn is_used(&self) -> bool {
        self.percentage > 0 || !self.by_size.is_empty()
    }
}

/// Which requests carry a priority, drawn per request from the job's seed (runs repeat).
#[derive(Clone, Debug)]
pub struct CmdPrioDraw {
    read: DirectionRule,
    write: DirectionRule,
    /// xorshift64 state (never zero).
    state: u64,
    /// Requests given a priority so far (the engine report's `prioritized_ios`).
    pub prioritized_ios: u64,
}

impl CmdPrioDraw {
    pub fn new(cmdprio: &CmdPrio, seed: u64) -> Self {
        CmdPrioDraw {
            read: DirectionRule::new(&cmdprio.read),
            write: DirectionRule::new(&cmdprio.write),
            // xorshift needs a non-zero state.
            state: seed | 1,
            prioritized_ios: 0,
        }
    }

    /// Some request may carry a priority.
    pub fn is_used(&self) -> bool {
        self.read.is_used() || self.write.is_used()
    }

    /// The I/O priority of the next request (0: none, the submitter's own). Trims carry none,
    /// as in fio. As fio, a request draws only when its direction and size have a share.
    #[inline]
    pub fn next(&mut self, direction: IoDirection, len_bytes: u64) -> u16 {
        let rule = match direction {
            IoDirection::Read => &self.read,
            IoDirection::Write => &self.write,
            IoDirection::Trim => return 0,
        };
        if !rule.is_used() {
            return 0;
        }
        if rule.percentage == 0 && !rule.by_size.iter().any(|(size, _)| *size == len_bytes) {
            return 0;
        }
        // xorshift64 (Marsaglia 2003): fast, and deterministic for a given job seed.
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        match rule.pick(len_bytes, x % DRAW_RANGE) {
            Some(ioprio) => {
                self.prioritized_ios += 1;
                ioprio
            }
            None => 0,
        }
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
            .filter(|_| draw.next(direction, len) == ioprio)
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
        assert_eq!(draw.next(IoDirection::Trim, 4096), 0);
        assert_eq!(ioprio_value(2, 5), 0x4005);
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
        // A size with no entry, and writes, get none.
        let before = draw.prioritized_ios;
        assert_eq!(draw.next(IoDirection::Read, 8192), 0);
        assert_eq!(draw.next(IoDirection::Write, 4096), 0);
        assert_eq!(draw.prioritized_ios, before);
    }
}
