//! Power loss at the store/drive seam: with a plan that can cut the drive's power, the journal
//! of what each write replaced, kept until the drive says the write is on its media, and the
//! undo of exactly the writes the drive's volatile cache lost.
//!
//! The drive model knows which writes its cache still holds (`Drive::power_loss` names them by
//! ordinal, a page of a write at a time for an SSD's buffer); the payload store knows what the
//! bytes are. The journal joins the two: every write the store takes while a power loss is
//! planned records its drive ordinal, its range and a [`Snapshot`] of what the range held
//! before (extent records, not bytes, so the store's memory budget still holds). Without such a
//! plan there is no journal and a write costs nothing more.

use crate::drive::LostWrite;
use crate::profile::SECTOR_BYTES;
use crate::store::{Snapshot, Store};
use std::collections::{HashMap, VecDeque};

/// Journal entries kept before the first pruning; each pruning keeps at least this many more
/// before the next (the drive's cache holds a bounded number of writes, so the journal stays
/// near that size while the pruning runs once per this many writes).
const PRUNE_EVERY_ENTRIES: usize = 256;

/// One change of the store since the journal started.
struct Entry {
    /// The drive's ordinal of the write (None: a TRIM, which no power loss undoes, the
    /// drive's map having changed before it reported completion; or a write to a drive
    /// without a volatile cache).
    ordinal: Option<u64>,
    start: u64,
    end: u64,
    /// What `start..end` held before (None for a TRIM).
    before: Option<Snapshot>,
}

/// The writes the store took that the drive may still hold in a volatile cache.
#[derive(Default)]
pub(crate) struct PowerJournal {
    entries: VecDeque<Entry>,
    /// The drive ordinal of the write each command in flight made (by command id).
    ordinals: HashMap<u32, u64>,
    prune_at: usize,
}

impl PowerJournal {
    pub fn new() -> PowerJournal {
        PowerJournal {
            prune_at: PRUNE_EVERY_ENTRIES,
            ..PowerJournal::default()
        }
    }

    /// Command `id`'s write was the drive's `ordinal`-th.
    pub fn note_drive_write(&mut self, id: u32, ordinal: u64) {
        self.ordinals.insert(id, ordinal);
    }

    /// Command `id`'s data is about to be stored at `offset..offset + len`: keep what the range
    /// holds now. (Cold: only runs with a power-loss plan, off the usual write path.)
    #[cold]
    #[inline(never)]
    pub fn before_write(&mut self, store: &mut Store, id: u32, offset: u64, len: u64) {
        // None: the drive keeps no volatile cache (it does not count its writes), so no
        // power loss undoes this one.
        let ordinal = self.ordinals.get(&id).copied();
        let before = store.snapshot(offset, len);
        self.entries.push_back(Entry {
            ordinal,
            start: offset,
            end: offset + len,
            before: Some(before),
        });
    }

    /// Command `id` completed: its ordinal is no longer needed.
    pub fn command_done(&mut self, id: u32) {
        self.ordinals.remove(&id);
    }

    /// The store trimmed `offset..offset + len`.
    pub fn trimmed(&mut self, offset: u64, len: u64) {
        self.entries.push_back(Entry {
            ordinal: None,
            start: offset,
            end: offset + len,
            before: None,
        });
    }

    /// Drop entries older than `oldest_volatile` (every write before it is on the media, so no
    /// power loss will undo them), once enough have gathered since the last pruning.
    pub fn prune(&mut self, store: &mut Store, oldest_volatile: Option<u64>) {
        if self.entries.len() < self.prune_at {
            return;
        }
        while let Some(front) = self.entries.front() {
            let durable = match (front.ordinal, oldest_volatile) {
                (None, _) | (Some(_), None) => true,
                (Some(ordinal), Some(oldest)) => ordinal < oldest,
            };
            if !durable {
                break;
            }
            let entry = self.entries.pop_front().expect("front");
            if let Some(before) = entry.before {
                store.release_snapshot(before);
            }
        }
        self.prune_at = self.entries.len() + PRUNE_EVERY_ENTRIES;
    }

    /// Power failed and the drive lost `lost`: each sector reads afterwards what the newest
    /// write to it that reached the media left there (or what it held before the journal
    /// began). Walking the journal newest first, a lost write's range gets back what it
    /// replaced, and a write on the media settles its range for everything older. Returns
    /// the byte ranges put back; the journal is empty afterwards.
    pub fn undo_lost(&mut self, store: &mut Store, lost: &[LostWrite]) -> Vec<(u64, u64)> {
        let sector = u64::from(SECTOR_BYTES);
        let mut lost_by_write: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
        for l in lost {
            lost_by_write
                .entry(l.ordinal)
                .or_default()
                .push((l.lba * sector, (l.lba + l.blocks) * sector));
        }
        let mut settled: Vec<(u64, u64)> = Vec::new();
        let mut restored = Vec::new();
        while let Some(entry) = self.entries.pop_back() {
            let lost_ranges: Vec<(u64, u64)> = entry
                .ordinal
                .and_then(|o| lost_by_write.get(&o))
                .map(|ranges| {
                    ranges
                        .iter()
                        .map(|&(s, e)| (s.max(entry.start), e.min(entry.end)))
                        .filter(|(s, e)| s < e)
                        .collect()
                })
                .unwrap_or_default();
            if let Some(before) = &entry.before {
                for &(s, e) in &lost_ranges {
                    for (from, to) in subtract((s, e), &settled) {
                        store.restore(before, from, to);
                        restored.push((from, to));
                    }
                }
            }
            for piece in subtract((entry.start, entry.end), &lost_ranges) {
                settled.push(piece);
            }
            if let Some(before) = entry.before {
                store.release_snapshot(before);
            }
        }
        self.ordinals.clear();
        self.prune_at = PRUNE_EVERY_ENTRIES;
        restored
    }
}

/// `range` less every range of `minus` (which may overlap each other), in order.
fn subtract(range: (u64, u64), minus: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut pieces = vec![range];
    for &(ms, me) in minus {
        let mut next = Vec::with_capacity(pieces.len() + 1);
        for (s, e) in pieces {
            if me <= s || ms >= e {
                next.push((s, e));
                continue;
            }
            if s < ms {
                next.push((s, ms));
            }
            if me < e {
                next.push((me, e));
            }
        }
        pieces = next;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(store: &Store, offset: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        store.read(offset, &mut out);
        out
    }

    fn write(store: &mut Store, j: &mut PowerJournal, id: u32, ordinal: u64, at: u64, b: u8) {
        j.note_drive_write(id, ordinal);
        j.before_write(store, id, at, 1024);
        store.write(at, &[b; 1024]);
        j.command_done(id);
    }

    /// Three writes to one range, the middle one on the media: a loss of the newest brings
    /// back the middle one's bytes, not the oldest's; a lost write elsewhere reads as before
    /// it (zeros); a range half lost (an SSD page of a longer write) is put back only there.
    #[test]
    fn a_loss_undoes_exactly_the_lost_writes_back_to_the_newest_on_the_media() {
        let mut store = Store::new();
        let mut j = PowerJournal::new();
        write(&mut store, &mut j, 1, 0, 0, 1);
        write(&mut store, &mut j, 2, 1, 0, 2);
        write(&mut store, &mut j, 3, 2, 0, 3);
        write(&mut store, &mut j, 4, 3, 4096, 4);
        write(&mut store, &mut j, 5, 4, 8192, 5);
        let lost = [
            LostWrite {
                ordinal: 0,
                lba: 0,
                blocks: 2,
            },
            LostWrite {
                ordinal: 2,
                lba: 0,
                blocks: 2,
            },
            LostWrite {
                ordinal: 3,
                lba: 8,
                blocks: 2,
            },
            LostWrite {
                ordinal: 4,
                lba: 16,
                blocks: 1,
            },
        ];
        let restored: u64 = j
            .undo_lost(&mut store, &lost)
            .iter()
            .map(|(s, e)| e - s)
            .sum();
        assert_eq!(bytes(&store, 0, 1024), vec![2u8; 1024]);
        assert_eq!(bytes(&store, 4096, 1024), vec![0u8; 1024]);
        let third = bytes(&store, 8192, 1024);
        assert!(third[..512].iter().all(|&b| b == 0));
        assert!(third[512..].iter().all(|&b| b == 5));
        assert_eq!(restored, 1024 + 1024 + 512);
        // Every snapshot given back: only the surviving data holds sources.
        assert_eq!(store.held_bytes(), 1024 + 1024);
    }

    #[test]
    fn pruning_drops_what_is_on_the_media_and_keeps_the_rest() {
        let mut store = Store::new();
        let mut j = PowerJournal::new();
        for k in 0..PRUNE_EVERY_ENTRIES as u64 {
            write(&mut store, &mut j, k as u32, k, k * 4096, k as u8);
        }
        j.prune(&mut store, Some(200));
        assert_eq!(j.entries.len(), PRUNE_EVERY_ENTRIES - 200);
        let lost = [LostWrite {
            ordinal: 255,
            lba: 255 * 8,
            blocks: 2,
        }];
        j.undo_lost(&mut store, &lost);
        assert_eq!(bytes(&store, 255 * 4096, 1024), vec![0u8; 1024]);
        assert_eq!(bytes(&store, 254 * 4096, 1024), vec![254u8; 1024]);
    }

    #[test]
    fn subtract_leaves_the_uncovered_pieces() {
        assert_eq!(subtract((0, 10), &[(2, 4), (3, 6)]), vec![(0, 2), (6, 10)]);
        assert_eq!(subtract((0, 10), &[(0, 10)]), vec![]);
        assert_eq!(subtract((5, 10), &[(0, 2)]), vec![(5, 10)]);
    }
}
