//! fio 3.33's zoned random distributions (`random_distribution=zoned:A/S:...` and `zoned_abs`):
//! each random offset first draws its zone from `zone_state` (`rand_between(1, 100)` into a
//! 100-entry table, zone-dist.c), then a block inside that zone from the offset stream, as
//! io_u.c `__get_next_rand_offset_zoned` and `_zoned_abs` do.

use crate::fio_rand::FioRand;
use storlab_job::{RandomDistribution, ZoneShare};

/// The zone table of one job (one list for every direction, as a list without `,` is in fio).
pub(crate) struct FioZones {
    /// For each access percent 1..=100 (at index `v - 1`): where its zone starts and ends,
    /// in percent of the region's blocks (`zoned`) or in bytes (`zoned_abs`).
    index: Vec<(u64, u64)>,
    absolute: bool,
    /// fio's `zone_state`, a 32-bit stream from `FIO_RAND_ZONE_OFF`.
    pub(crate) state: FioRand,
}

/// A zone drawn for one offset: the first block it may take and how many blocks it spans.
pub(crate) struct ZoneDraw {
    pub(crate) first_block: u64,
    pub(crate) blocks: u64,
}

impl FioZones {
    /// The table of `distribution`, if it is zoned.
    pub(crate) fn new(distribution: &RandomDistribution) -> Option<FioZones> {
        let (zones, absolute) = match distribution {
            RandomDistribution::Zoned { zones } => (zones, false),
            RandomDistribution::ZonedAbs { zones } => (zones, true),
            _ => return None,
        };
        Some(FioZones {
            index: index_of(zones),
            absolute,
            state: FioRand::new(0, false),
        })
    }

    /// zone-dist.c's draw for one random offset among `last_block` blocks `align_bytes` apart:
    /// `None` where fio fails the offset (a `zoned_abs` zone past the file's end).
    pub(crate) fn draw(&mut self, last_block: u64, align_bytes: u64) -> Option<ZoneDraw> {
        let v = self.state.between(1, 100);
        let (start, end) = self.index[(v - 1) as usize];
        if self.absolute {
            let (first, last) = (start / align_bytes.max(1), end / align_bytes.max(1));
            // io_u.c: "zoned_abs sizes exceed file size".
            if last > last_block {
                return None;
            }
            return Some(ZoneDraw {
                first_block: first,
                blocks: last - first,
            });
        }
        Some(ZoneDraw {
            first_block: start * last_block / 100,
            blocks: last_block * (end - start) / 100,
        })
    }
}

/// zone-dist.c `__td_zone_gen_index`: entry `v - 1` of each zone's access percents holds the
/// zone's start and end (the sizes summed so far, then with its own).
fn index_of(zones: &[ZoneShare]) -> Vec<(u64, u64)> {
    let mut index = vec![(0, 0); 100];
    let (mut access_before, mut size_before) = (0usize, 0u64);
    for zone in zones {
        let access = usize::from(zone.access_percent);
        for entry in index.iter_mut().skip(access_before).take(access) {
            *entry = (size_before, size_before + zone.size);
        }
        access_before += access;
        size_before += zone.size;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_maps_access_percents_to_their_zones() {
        let zones = [
            ZoneShare {
                access_percent: 60,
                size: 10,
            },
            ZoneShare {
                access_percent: 40,
                size: 90,
            },
        ];
        let index = index_of(&zones);
        assert_eq!(index[0], (0, 10));
        assert_eq!(index[59], (0, 10));
        assert_eq!(index[60], (10, 100));
        assert_eq!(index[99], (10, 100));
    }
}
