//! fio's `serialize_overlap` across jobs: with `io_submit_mode=offload`, fio 3.33 checks an
//! I/O against the in-flight I/O of every offload job that sets `serialize_overlap`
//! (rate-submit.c, `check_overlap`), comparing offsets alone, whatever the file. The board
//! holds those jobs' in-flight ranges; a claim is checked and taken under one lock, as fio's
//! `overlap_check` mutex makes its check and the I/O's in-flight flag one step.

use std::sync::Mutex;

/// The in-flight ranges of the group's offload jobs that serialize overlaps.
#[derive(Debug, Default)]
pub struct OverlapBoard {
    /// `(worker key, start, end)` of each I/O in flight.
    in_flight: Mutex<Vec<(u64, u64, u64)>>,
}

impl OverlapBoard {
    /// Takes `start..end` for `worker` unless an I/O in flight overlaps it (fio's
    /// `in_flight_overlap`: `x1 < y2 && y1 < x2`).
    pub fn try_claim(&self, worker: u64, start: u64, end: u64) -> bool {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        if in_flight.iter().any(|&(_, s, e)| start < e && s < end) {
            return false;
        }
        in_flight.push((worker, start, end));
        true
    }

    /// Whether an I/O in flight overlaps `start..end` (a look without claiming).
    pub fn overlaps(&self, start: u64, end: u64) -> bool {
        let in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        in_flight.iter().any(|&(_, s, e)| start < e && s < end)
    }

    /// Every range of `worker` (it stopped; what it had in flight no longer holds others up).
    pub fn release_all(&self, worker: u64) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        in_flight.retain(|&(w, _, _)| w != worker);
    }

    /// The I/O of `worker` at `start` completed.
    pub fn release(&self, worker: u64, start: u64) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = in_flight
            .iter()
            .position(|&(w, s, _)| w == worker && s == start)
        {
            in_flight.swap_remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlapping_claim_waits_until_the_first_is_released() {
        let board = OverlapBoard::default();
        assert!(board.try_claim(1, 0, 4096));
        assert!(!board.try_claim(2, 4095, 8192), "one byte in common");
        assert!(board.overlaps(0, 1));
        assert!(
            board.try_claim(2, 4096, 8192),
            "touching is not overlapping"
        );
        board.release(1, 0);
        assert!(board.try_claim(3, 0, 4096));
        assert!(!board.overlaps(8192, 16384));
    }
}
