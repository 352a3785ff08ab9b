//! One module per engine; see each file. Also the small pieces every real engine shares: the
//! wall clock and the check of a request against the buffer slots.

pub mod io_uring;
pub mod null;
pub mod psync;
pub mod sim;

use crate::{EngineError, IoDirection, IoRequest};
use std::time::{Duration, Instant};

/// Monotonic wall clock in nanoseconds since `reset` (setup). `Instant` is a vDSO
/// `clock_gettime(CLOCK_MONOTONIC)`: no syscall, tens of nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct WallClock {
    start: Instant,
}

impl Default for WallClock {
    fn default() -> Self {
        WallClock {
            start: Instant::now(),
        }
    }
}

impl WallClock {
    pub fn reset(&mut self) {
        self.start = Instant::now();
    }

    #[inline]
    pub fn now_ns(&self) -> u64 {
        // u64 nanoseconds last 584 years; saturate rather than wrap past that.
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Sleep until `deadline_ns`. The kernel's timer slack makes this late by tens of
    /// microseconds at most, which rate limiting tolerates; spinning would burn the CPU the
    /// measurement is trying to account for.
    pub fn wait_until_ns(&self, deadline_ns: u64) {
        let now_ns = self.now_ns();
        if deadline_ns > now_ns {
            std::thread::sleep(Duration::from_nanos(deadline_ns - now_ns));
        }
    }
}

/// Reject a request that names a slot outside the buffers, a slot still in flight, or more
/// bytes than a slot holds (trims carry no data and may be any length).
#[inline]
pub(crate) fn check_request(
    request: &IoRequest,
    in_flight: &[bool],
    slot_bytes: usize,
) -> Result<(), EngineError> {
    let Some(&busy) = in_flight.get(request.slot as usize) else {
        return Err(EngineError::InvalidRequest(if in_flight.is_empty() {
            "request queued before setup".to_string()
        } else {
            format!(
                "slot {} out of range (engine has {} slots)",
                request.slot,
                in_flight.len()
            )
        }));
    };
    if busy {
        return Err(EngineError::InvalidRequest(format!(
            "slot {} queued again before its completion was reaped",
            request.slot
        )));
    }
    if request.direction != IoDirection::Trim && request.len_bytes as usize > slot_bytes {
        return Err(EngineError::InvalidRequest(format!(
            "request of {} bytes does not fit a {slot_bytes}-byte buffer slot",
            request.len_bytes
        )));
    }
    Ok(())
}

/// Error for `reap(min)` with `min` above the number of requests that can still complete.
pub(crate) fn reap_too_many(min: usize, outstanding: usize) -> EngineError {
    EngineError::InvalidRequest(format!(
        "reap asked to wait for {min} completions but only {outstanding} are outstanding"
    ))
}

/// Buffers must exist before a slot is read or written; say so instead of panicking vaguely.
pub(crate) const NOT_SET_UP: &str = "engine buffers used before setup()";
