//! The SSD's DRAM write buffer: host pages enter it as their data arrives, are gathered into
//! multi-plane programs striped over the dies (write combining), and leave it when programmed.

use super::nand::NO_PAGE;
use super::{SsdDrive, LOGICAL_PAGE_BYTES};
use crate::drive::ReleaseRing;
use crate::resource::bytes_ns;

/// Host pages gathered for the next program on one die.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Staging {
    pub(super) slots: u64,
    /// Write-buffer sequence numbers of the host pages waiting in this program.
    pub(super) first_seq: u64,
    pub(super) pages: u64,
    /// When all of their data is in the buffer.
    pub(super) data_ready_ns: u64,
}

impl SsdDrive {
    /// Write-buffer entries (ring slots) whose page was not programmed by `now_ns`.
    pub(super) fn volatile_entries(&self, now_ns: u64) -> impl Iterator<Item = usize> + '_ {
        self.buffer.held_slots(now_ns)
    }

    /// Program the staged host pages on the current die and move to the next die.
    pub(super) fn issue_program(&mut self) {
        let s = self.staging;
        if s.slots == 0 {
            return;
        }
        let die = self.next_die;
        let channel = die % self.channels.len();
        let transfer_bytes = s.slots * u64::from(self.geometry.slot_bytes);
        let on_die = self.channels[channel].reserve(
            s.data_ready_ns,
            bytes_ns(transfer_bytes, self.channel_byte_ps),
            transfer_bytes,
        );
        let program_ns = self.host_program_ns(die, transfer_bytes);
        let done = self.dies[die]
            .unit
            .reserve(on_die, program_ns, transfer_bytes);
        for seq in s.first_seq..s.first_seq + s.pages {
            self.buffer.set(seq, done);
        }
        self.nand_slots_written += s.slots;
        self.staging = Staging {
            first_seq: self.buffer.next_seq(),
            ..Staging::default()
        };
        self.next_die = (self.next_die + 1) % self.dies.len();
    }

    /// One host logical page enters the write buffer with its data in it at `data_ready_ns`;
    /// returns when the buffer had room for it.
    pub(super) fn write_page(
        &mut self,
        lpn: usize,
        len: u64,
        data_ready_ns: u64,
        now_ns: u64,
    ) -> u64 {
        if self.ftl.log_block().is_some() {
            return self.write_page_log_block(lpn, data_ready_ns, now_ns);
        }
        let mut room_ns = self.buffer.slot_free_ns();
        if room_ns == ReleaseRing::PENDING {
            // The page it would displace is still staged: program it (partially full) now.
            self.issue_program();
            room_ns = self.buffer.slot_free_ns();
        }
        self.invalidate(lpn);
        let die = self.next_die;
        let (slot, consumed, opened) = self.allocate(die, len, false);
        self.map(lpn, slot, len);
        if opened {
            self.collect(die, now_ns);
        }
        if self.staging.pages == 0 {
            self.staging.first_seq = self.buffer.next_seq();
        }
        let seq = self.buffer.push(ReleaseRing::PENDING);
        let entries = self.buffer_lpns.len() as u64;
        self.buffer_lpns[(seq % entries) as usize] = lpn as u32;
        self.buffer_writes[(seq % entries) as usize] = self.writes_taken;
        self.buffer_maybe[lpn / 64] |= 1 << (lpn % 64);
        self.staging.pages += 1;
        self.staging.slots += consumed;
        self.staging.data_ready_ns = self.staging.data_ready_ns.max(data_ready_ns.max(room_ns));
        if self.staging.slots >= self.geometry.slots_per_program {
            self.issue_program();
        }
        room_ns
    }

    /// A partly written page merged on the die holding its old data with the NAND's internal
    /// data move (`partial_page_update = "copy_back"`): the die senses the old page into its
    /// page register once it is free, the new sectors cross the channel into the register, and
    /// the die programs it, alone, into a free page of its own host frontier; the die and its
    /// channel serve nothing else meanwhile. Returns when the buffer had room for the page, or None when
    /// there is no old page on the NAND to merge with (unmapped, or still in the write buffer),
    /// which the ordinary path handles.
    pub(super) fn write_page_copy_back(
        &mut self,
        lpn: usize,
        data_ready_ns: u64,
        now_ns: u64,
    ) -> Option<u64> {
        let (die, _, _) = self.locate(lpn)?;
        let bit = 1u64 << (lpn % 64);
        if self.buffer_maybe[lpn / 64] & bit != 0 && self.buffer_lpns.contains(&(lpn as u32)) {
            return None;
        }
        // Staged pages hold the buffer entries just before this one: they go to their die
        // first (the staging covers consecutive entries).
        self.issue_program();
        let room_ns = self.buffer.slot_free_ns();
        self.invalidate(lpn);
        let len = u64::from(self.geometry.slots_per_logical_page);
        let (slot, consumed, opened) = self.allocate(die, len, false);
        self.map(lpn, slot, len);
        if opened {
            self.collect(die, now_ns);
        }
        let p = &self.profile;
        let (read_ns, program_ns) = (p.page_read_ns, p.page_program_ns);
        let channel = die % self.channels.len();
        let bytes = u64::from(LOGICAL_PAGE_BYTES);
        let transfer_ns = bytes_ns(bytes, self.channel_byte_ps);
        let hold_ns = read_ns + transfer_ns + program_ns;
        // The controller runs the merge as one sequence on the die's channel (copyback read,
        // the new sectors in, copyback program, the status polled until the program ends) and
        // issues nothing else on that channel meanwhile: the sequence starts once the die is
        // free of its booked programs and reads and the channel of its booked transfers, and
        // both are held to its end. With the datasheet's times (50 us sense, 900 us program)
        // this gives 8 channels / 975 us / 2 pages x 4 KiB = 16.8 MB/s of 512-byte-aligned
        // 4 KiB writes on the C300, where HardWare.fr measured 16; merges on the dies alone
        // (32 in parallel) would give 4 times that (decision 0052).
        let d = &self.dies[die];
        let start = data_ready_ns
            .max(room_ns)
            .max(d.unit.busy_until_ns)
            .max(d.read_busy_until_ns);
        let held_from = self.channels[channel].reserve(start, hold_ns, bytes) - hold_ns;
        let d = &mut self.dies[die];
        let done = d.unit.reserve(held_from, hold_ns, bytes);
        debug_assert_eq!(done, held_from + hold_ns, "the die waits for nothing else");
        d.read_busy_until_ns = done;
        d.register_page = NO_PAGE;
        let seq = self.buffer.push(done);
        let entries = self.buffer_lpns.len() as u64;
        self.buffer_lpns[(seq % entries) as usize] = lpn as u32;
        self.buffer_writes[(seq % entries) as usize] = self.writes_taken;
        self.buffer_maybe[lpn / 64] |= bit;
        self.nand_slots_written += consumed;
        Some(room_ns)
    }

    /// The hybrid map's write path: the page goes to its die's log block (merges first when
    /// a log block must be reclaimed, booked on that die from `now_ns`), and is programmed
    /// there on its own once its data and a buffer entry are in; the buffer entry leaves when
    /// the program ends.
    pub(super) fn write_page_log_block(
        &mut self,
        lpn: usize,
        data_ready_ns: u64,
        now_ns: u64,
    ) -> u64 {
        let room_ns = self.buffer.slot_free_ns();
        debug_assert_ne!(
            room_ns,
            ReleaseRing::PENDING,
            "log-block pages never wait staged"
        );
        let log = self.ftl.log_block_mut().expect("hybrid map");
        // The tag numbers host pages, so tests can check what each logical page maps to.
        let placed = log.write(lpn as u64, self.host_pages_written as u32);
        let die = placed.die;
        self.book_nand_work(die, placed.work, now_ns);
        let channel = die % self.channels.len();
        let bytes = u64::from(LOGICAL_PAGE_BYTES);
        let on_die = self.channels[channel].reserve(
            data_ready_ns.max(room_ns),
            bytes_ns(bytes, self.channel_byte_ps),
            bytes,
        );
        let done = self.dies[die]
            .unit
            .reserve(on_die, self.profile.page_program_ns, bytes);
        let seq = self.buffer.push(done);
        let entries = self.buffer_lpns.len() as u64;
        self.buffer_lpns[(seq % entries) as usize] = lpn as u32;
        self.buffer_writes[(seq % entries) as usize] = self.writes_taken;
        self.buffer_maybe[lpn / 64] |= 1 << (lpn % 64);
        self.nand_slots_written += 1 + placed.work.programs;
        room_ns
    }
}
