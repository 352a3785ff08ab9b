//! Where a sector lies on the platters (zoned recording: cylinder, head, sector within the
//! track) and what the head costs to reach and read it: seek or head switch, rotational wait,
//! sector times with a head switch per track crossed, and the booking of one media access on
//! the actuator.

use super::HddDrive;
use crate::profile::limits::SECTOR_BYTES;

#[derive(Clone, Copy, Debug)]
pub(super) struct Zone {
    pub(super) first_lba: u64,
    pub(super) first_cylinder: u32,
    pub(super) sectors_per_track: u64,
    /// Time one sector takes to pass under the head.
    pub(super) sector_ps: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Position {
    pub(super) cylinder: u32,
    pub(super) head: u32,
    /// Sector within the track.
    pub(super) sector: u64,
    pub(super) zone: usize,
}

impl HddDrive {
    pub(super) fn position(&self, lba: u64) -> Position {
        let zone = self.zones.partition_point(|z| z.first_lba <= lba) - 1;
        let z = &self.zones[zone];
        let within = lba - z.first_lba;
        let track = within / z.sectors_per_track;
        let heads = u64::from(self.profile.heads);
        Position {
            cylinder: z.first_cylinder + (track / heads) as u32,
            head: (track % heads) as u32,
            sector: within % z.sectors_per_track,
            zone,
        }
    }

    /// (seek or head switch, rotational wait) to reach `target` from the head, starting at
    /// `at_ns`.
    pub(super) fn positioning(&self, target: &Position, at_ns: u64, write: bool) -> (u64, u64) {
        let distance = self.head.cylinder.abs_diff(target.cylinder);
        let move_ns = if distance > 0 {
            self.curve.seek_ns(distance)
        } else if self.head.head != target.head {
            self.switch_ns(write)
        } else {
            0
        };
        let arrive = at_ns + move_ns;
        let zone = &self.zones[target.zone];
        let target_in_rev = target.sector * zone.sector_ps / 1000;
        let rev = self.revolution_ns;
        let wait = (target_in_rev + rev - arrive % rev) % rev;
        (move_ns, wait)
    }

    /// The scheduler's estimate of the time to reach `lba` from the head at `at_ns`: seek plus
    /// rotational wait, plus a revolution when the sector would pass within the settle margin
    /// of the seek's end (the seek may run long and miss it).
    pub(super) fn scheduled_positioning_ns(&self, lba: u64, at_ns: u64, write: bool) -> u64 {
        self.scheduled_positioning_to(&self.position(lba), at_ns, write)
    }

    /// [`Self::scheduled_positioning_ns`] to a target already located (a cached write keeps
    /// its position: the write-back evaluates every cached write at every decision).
    pub(super) fn scheduled_positioning_to(
        &self,
        target: &Position,
        at_ns: u64,
        write: bool,
    ) -> u64 {
        let (move_ns, wait_ns) = self.positioning(target, at_ns, write);
        let margin_ns = self.profile.rpo_settle_margin_ns.unwrap_or(0);
        if wait_ns < margin_ns {
            move_ns + wait_ns + self.revolution_ns
        } else {
            move_ns + wait_ns
        }
    }

    /// How many of the queued commands (oldest first) one scheduling decision evaluates.
    pub(super) fn rpo_window(&self, queued: usize) -> usize {
        self.profile
            .rpo_candidates
            .map_or(queued, |n| queued.min(n as usize))
    }

    /// Media time of `sectors` from `lba`: sector times plus a head switch per track boundary
    /// (track skew hides the rest of the switch).
    pub(super) fn transfer_ns(&self, lba: u64, sectors: u64, write: bool) -> (u64, u64) {
        let mut ns = 0;
        let mut switches = 0;
        let mut at = lba;
        let end = lba + sectors;
        while at < end {
            let pos = self.position(at);
            let zone = &self.zones[pos.zone];
            let on_track = (zone.sectors_per_track - pos.sector).min(end - at);
            ns += (on_track * zone.sector_ps).div_ceil(1000);
            at += on_track;
            if at < end {
                ns += self.switch_ns(write);
                switches += 1;
            }
        }
        (ns, switches)
    }

    /// Head switch time before a read or a write.
    pub(super) fn switch_ns(&self, write: bool) -> u64 {
        if write {
            self.profile
                .write_head_switch_ns
                .unwrap_or(self.profile.head_switch_ns)
        } else {
            self.profile.head_switch_ns
        }
    }

    /// Book a media access (a read, or a write when `write`) of `sectors` from `lba`, starting
    /// no earlier than `earliest_ns`; returns (data start, data end).
    pub(super) fn media_access(
        &mut self,
        lba: u64,
        sectors: u64,
        earliest_ns: u64,
        stream: bool,
        write: bool,
    ) -> (u64, u64) {
        // The head is the prefetch's until its minimum pre-fetch is in, whatever waits.
        let start = earliest_ns
            .max(self.actuator.busy_until_ns)
            .max(self.min_prefetch_end_ns());
        self.stop_prefetch(start);
        let target = self.position(lba);
        let (move_ns, wait) = if stream {
            (0, 0)
        } else {
            self.positioning(&target, start, write)
        };
        if target.cylinder != self.head.cylinder {
            self.report.seeks += 1;
        } else if target.head != self.head.head {
            self.report.head_switches += 1;
        }
        self.report.seek_ns_total += move_ns;
        self.report.rotational_wait_ns_total += wait;
        let (xfer, switches) = self.transfer_ns(lba, sectors, write);
        self.report.head_switches += switches;
        let data_start = start + move_ns + wait;
        let end = data_start + xfer;
        self.actuator
            .reserve(start, end - start, sectors * u64::from(SECTOR_BYTES));
        self.head = self.position((lba + sectors).min(self.capacity_sectors) - 1);
        (data_start, end)
    }
}
