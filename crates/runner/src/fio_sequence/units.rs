//! fio's `IO_U_F_BUSY_OK` flag on its I/O units, as far as the random map sees it: which
//! fills mark the map, and the stale flag a failed fill leaves on its unit.

/// fio's `IO_U_F_BUSY_OK` on its I/O units, as far as the random map sees it.
#[derive(Default)]
pub(super) struct UnitFlags {
    /// On the unit being filled: set where `get_next_block` takes an offset the map is not to
    /// mark, cleared only when an I/O completes (`io_completed`).
    pub(super) busy_ok: bool,
    /// A fill that failed after setting the flag puts its unit back with it (`put_io_u` keeps
    /// it) on top of fio's free list, a stack; the units then in flight land on it as they
    /// complete. So the unit comes up again after that many fills and marks nothing, a
    /// random offset included: the fills left until then.
    stale_in_fills: Option<u64>,
    /// The worker's I/Os in flight when it asks for the next (`set_units_in_flight`).
    pub(super) in_flight: u64,
    /// The next fill is a retry of the unit whose fill just failed, its flag as it was.
    pub(super) refill: bool,
    /// The last fill took the stale unit and left these blocks (first, count) of the map
    /// unmarked: a sync or verify read storlab issues after that fill was drawn came before
    /// it in fio, on that unit, and cleared the flag (see [`UnitFlags::top_unit_taken`]).
    unmarked_by_stale: Option<(u64, u64)>,
}

impl UnitFlags {
    /// A fill begins: on the unit the stale flag is on, if that one comes up now.
    pub(super) fn begin_fill(&mut self) {
        self.unmarked_by_stale = None;
        if !std::mem::take(&mut self.refill) {
            self.busy_ok = self.stale_in_fills == Some(0);
        }
    }

    /// The fill succeeded; `unmarked`: the map's blocks it would have marked but for a stale
    /// flag.
    pub(super) fn filled(&mut self, unmarked: Option<(u64, u64)>) {
        if self.stale_in_fills == Some(0) {
            self.unmarked_by_stale = unmarked;
        }
        self.stale_in_fills = self.stale_in_fills.and_then(|n| n.checked_sub(1));
    }

    /// The fill failed with its flag set: its unit goes back on the free list under the
    /// units in flight.
    pub(super) fn failed_with_flag(&mut self) {
        self.stale_in_fills = Some(self.in_flight);
    }

    /// A sync or a verify read took the free list's top unit and completes on it, which
    /// clears its flag (`io_completed`); `before_last_fill`: in fio it came before the last
    /// fill, which storlab drew ahead. Returns the blocks that fill then still owes the map:
    /// only a loop's first fill can owe any (a stale flag comes of the loop's last, failed
    /// fill), on a map the loop's start emptied, so they are all free and the I/O keeps its
    /// length.
    pub(super) fn top_unit_taken(&mut self, before_last_fill: bool) -> Option<(u64, u64)> {
        if self.stale_in_fills == Some(0) {
            self.stale_in_fills = None;
        }
        let owed = self.unmarked_by_stale.take();
        owed.filter(|_| before_last_fill)
    }
}

#[cfg(test)]
mod tests {
    use super::UnitFlags;

    /// A loop's failed fill with the flag set, at depth 1 (nothing in flight).
    fn stale_on_top() -> UnitFlags {
        let mut units = UnitFlags::default();
        units.begin_fill();
        units.busy_ok = true;
        units.failed_with_flag();
        units
    }

    #[test]
    fn the_next_fill_takes_the_stale_flag_unless_a_sync_took_the_unit_first() {
        let mut units = stale_on_top();
        units.begin_fill();
        assert!(units.busy_ok, "the unit comes up again with its flag");

        let mut units = stale_on_top();
        assert_eq!(units.top_unit_taken(false), None);
        units.begin_fill();
        assert!(!units.busy_ok, "the sync's completion cleared it");
    }

    #[test]
    fn a_fill_drawn_ahead_of_fio_s_sync_owes_the_map_its_blocks() {
        let mut units = stale_on_top();
        units.begin_fill();
        units.filled(Some((3, 1)));
        // The sync came before that fill in fio: the fill marks after all, once.
        assert_eq!(units.top_unit_taken(true), Some((3, 1)));
        assert_eq!(units.top_unit_taken(true), None);

        let mut units = stale_on_top();
        units.begin_fill();
        units.filled(Some((3, 1)));
        // A sync after that fill, in fio too: the fill stays unmarked.
        assert_eq!(units.top_unit_taken(false), None);
    }
}
