//! PCIe attachment of a host controller, as transactions.
//!
//! Data to the host (bulk IN, AHCI reads) leaves the controller as posted Memory Write TLPs of
//! up to Max_Payload_Size: they need no answer, so only the link's rate and each TLP's framing
//! bound them. Data from the host (bulk OUT, AHCI writes) and every descriptor the controller
//! fetches come by non-posted Memory Read requests: the controller sends a request of up to
//! Max_Read_Request_Size, the root complex reads host memory and returns Completions with Data
//! split at its read completion boundary, and the controller can have only so many requests
//! (tags) in flight. So reads are bound by the round trip, not only by the rate: with few tags
//! a slower link stretches every round trip and the pipeline slows long before the link is
//! full — a Gen1 slot cuts writes more than reads (issue 18).

use crate::profile::PcieProfile;

/// Bytes of one xHCI TRB / AHCI descriptor fetched over PCIe.
pub const DESCRIPTOR_BYTES: u64 = 16;

/// Physical- and data-link-layer bytes around every TLP at 2.5 and 5 GT/s: STP and END
/// framing symbols (1 + 1), the sequence number (2) and the LCRC (4) (PCIe Base 2.0 §3.5.2,
/// §4.2.2; the pcie-bench model's `DLLP_Hdr`, Neugebauer et al., SIGCOMM 2018).
pub const TLP_FRAMING_BYTES: u64 = 8;
/// Header of a Memory Read request with a 64-bit address: 4 DW (PCIe Base 2.0 §2.2.7).
pub const MEMORY_READ_HEADER_BYTES: u64 = 16;
/// Header of a Completion with Data: 3 DW (PCIe Base 2.0 §2.2.9).
pub const COMPLETION_HEADER_BYTES: u64 = 12;
/// A whole Memory Read request on the wire (it carries no data).
pub const MEMORY_READ_TLP_BYTES: u64 = TLP_FRAMING_BYTES + MEMORY_READ_HEADER_BYTES;
/// Bytes around each Completion with Data's payload.
pub const COMPLETION_OVERHEAD_BYTES: u64 = TLP_FRAMING_BYTES + COMPLETION_HEADER_BYTES;

/// Usable byte rate of one lane before TLP overhead, in bytes per second (public so tests can
/// bound throughput by the same spec figures the timing uses).
pub fn lane_bytes_per_second(generation: u32) -> f64 {
    match generation {
        // 2.5 GT/s, 8b/10b
        1 => 2.5e9 * 8.0 / 10.0 / 8.0,
        // 5 GT/s, 8b/10b
        2 => 5.0e9 * 8.0 / 10.0 / 8.0,
        // 8 GT/s, 128b/130b
        _ => 8.0e9 * 128.0 / 130.0 / 8.0,
    }
}

/// Payload share of a link direction carrying `payload_bytes`-byte TLPs with
/// `overhead_bytes` around each, before DLLPs (public for the TLP-overhead tests).
pub fn payload_efficiency(payload_bytes: u64, overhead_bytes: u64) -> f64 {
    payload_bytes as f64 / (payload_bytes + overhead_bytes) as f64
}

/// Precomputed timing of the controller's PCIe attachment: posted writes towards the host,
/// read requests and their completions.
#[derive(Clone, Debug)]
pub struct PcieLink {
    max_payload_bytes: u64,
    tlp_overhead_bytes: u64,
    /// Picoseconds per byte on one direction, DLLP share included.
    byte_ps: u64,
    read_request_bytes: u64,
    completion_bytes: u64,
    outstanding_reads: u64,
    read_latency_ns: u64,
    /// Steady-state spacing of full-size requests (precomputed: on every write's path).
    full_request_interval_ns: u64,
}

impl PcieLink {
    pub fn new(p: &PcieProfile) -> PcieLink {
        let rate = lane_bytes_per_second(p.generation) * f64::from(p.lanes);
        let max_payload_bytes = u64::from(p.max_payload_bytes);
        let mut link = PcieLink {
            max_payload_bytes,
            tlp_overhead_bytes: p.tlp_overhead_bytes.into(),
            byte_ps: (1e12 / rate * (1.0 + p.dllp_overhead_fraction)).round() as u64,
            read_request_bytes: p.max_read_request_bytes.into(),
            // A completion never carries more than Max_Payload_Size (validated: RCB ≤ MPS).
            completion_bytes: u64::from(p.read_completion_boundary_bytes).min(max_payload_bytes),
            outstanding_reads: p.outstanding_read_requests.into(),
            read_latency_ns: p.read_latency_ns,
            full_request_interval_ns: 0,
        };
        let full = link.read_request_bytes;
        link.full_request_interval_ns = link
            .completions_ns(full)
            .max(link.round_trip_ns(full).div_ceil(link.outstanding_reads));
        link
    }

    #[inline]
    fn wire_ns(&self, wire_bytes: u64) -> u64 {
        (wire_bytes * self.byte_ps).div_ceil(1000)
    }

    /// Posted writes of `bytes` (data to the host, status, events):
    /// (bytes + ceil(bytes / MPS) × TLP overhead) × byte time.
    #[inline]
    pub fn transfer_ns(&self, bytes: u64) -> u64 {
        let tlps = bytes.div_ceil(self.max_payload_bytes).max(1);
        self.wire_ns(bytes + tlps * self.tlp_overhead_bytes)
    }

    /// One posted TLP (the pipelining piece).
    #[inline]
    pub fn first_piece_ns(&self, bytes: u64) -> u64 {
        self.transfer_ns(bytes.min(self.max_payload_bytes))
    }

    /// Completions with Data for one read request of `bytes`, split at the completion boundary.
    #[inline]
    fn completions_ns(&self, bytes: u64) -> u64 {
        let tlps = bytes.div_ceil(self.completion_bytes).max(1);
        self.wire_ns(bytes + tlps * COMPLETION_OVERHEAD_BYTES)
    }

    /// One read request of `bytes` from issue to its last completion: the request TLP up the
    /// link, the root complex and memory, the completions down the link.
    #[inline]
    fn round_trip_ns(&self, bytes: u64) -> u64 {
        self.wire_ns(MEMORY_READ_TLP_BYTES) + self.read_latency_ns + self.completions_ns(bytes)
    }

    /// Read requests needed to fetch `bytes`.
    #[inline]
    pub fn read_requests(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.read_request_bytes).max(1)
    }

    /// Fetching `bytes` from host memory with read requests of up to MRRS, at most
    /// `outstanding_read_requests` in flight. In steady state a request completes every
    /// `max(completions(MRRS), round_trip(MRRS) / outstanding)`: the link's rate bounds it when
    /// enough tags cover the round trip, the tags when they do not. The last request ends one
    /// round trip after it is issued.
    #[inline]
    pub fn read_ns(&self, bytes: u64) -> u64 {
        let requests = self.read_requests(bytes);
        let last = bytes - (requests - 1) * self.read_request_bytes;
        (requests - 1) * self.full_request_interval_ns + self.round_trip_ns(last)
    }

    /// The first read request's round trip (the pipelining piece of a fetch).
    #[inline]
    pub fn read_first_piece_ns(&self, bytes: u64) -> u64 {
        self.round_trip_ns(bytes.min(self.read_request_bytes))
    }

    /// Upstream link time the read requests for `bytes` take.
    #[inline]
    pub fn read_requests_ns(&self, bytes: u64) -> u64 {
        self.wire_ns(self.read_requests(bytes) * MEMORY_READ_TLP_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(generation: u32, outstanding_read_requests: u32) -> PcieProfile {
        PcieProfile {
            generation,
            lanes: 1,
            max_payload_bytes: 128,
            tlp_overhead_bytes: 24,
            dllp_overhead_fraction: 0.05,
            max_read_request_bytes: 512,
            read_completion_boundary_bytes: 64,
            outstanding_read_requests,
            read_latency_ns: 500,
        }
    }

    fn link(generation: u32) -> PcieLink {
        PcieLink::new(&profile(generation, 1))
    }

    fn mb_s(bytes: u64, ns: u64) -> f64 {
        bytes as f64 / ns as f64 * 1000.0
    }

    #[test]
    fn gen1_x1_is_below_usb3_and_gen2_above_300() {
        let bytes = 1 << 20;
        let gen1 = mb_s(bytes, link(1).transfer_ns(bytes));
        let gen2 = mb_s(bytes, link(2).transfer_ns(bytes));
        assert!((190.0..250.0).contains(&gen1), "{gen1}");
        assert!((380.0..500.0).contains(&gen2), "{gen2}");
    }

    #[test]
    fn tlp_overhead_golden_at_mps_128_and_256() {
        // 24 bytes around each posted TLP: 128 / 152 and 256 / 280 of the link carry payload.
        assert_eq!(payload_efficiency(128, 24), 128.0 / 152.0);
        assert_eq!(payload_efficiency(256, 24), 256.0 / 280.0);
        // Gen2 x1, 1 MiB of posted writes, 5 % DLLPs: 500 / 1.05 × efficiency.
        let bytes = 1 << 20;
        let at = |mps| {
            let mut p = profile(2, 1);
            p.max_payload_bytes = mps;
            mb_s(bytes, PcieLink::new(&p).transfer_ns(bytes))
        };
        assert!((at(128) - 401.0).abs() < 0.5, "{}", at(128));
        assert!((at(256) - 435.4).abs() < 0.5, "{}", at(256));
        // Completions at a 64-byte boundary: 8 + 12 bytes around each 64.
        assert_eq!(COMPLETION_OVERHEAD_BYTES, 20);
        assert_eq!(MEMORY_READ_TLP_BYTES, 24);
    }

    #[test]
    fn one_read_request_waits_a_whole_round_trip() {
        // 512 bytes at Gen1 x1 (4 ns per byte, +5 % DLLPs = 4.2 ns): the request (24 bytes,
        // 100.8 ns), 500 ns in the root complex, 8 completions of 64 + 20 bytes (2822.4 ns).
        let l = link(1);
        assert_eq!(l.read_ns(512), 101 + 500 + 2823);
        assert_eq!(l.read_first_piece_ns(1 << 20), l.read_ns(512));
        // With one tag every request waits for the one before: twice the requests, twice
        // the time.
        assert_eq!(l.read_ns(1024), 2 * l.read_ns(512));
    }

    #[test]
    fn enough_tags_reach_the_link_rate_and_no_further() {
        let bytes = 1 << 20;
        let rate = |tags| mb_s(bytes, PcieLink::new(&profile(1, tags)).read_ns(bytes));
        // Completion payload efficiency at a 64-byte boundary: 64 / 84.
        let cap = 250.0 / 1.05 * 64.0 / 84.0;
        // One tag: 512 bytes per 3.4 µs round trip; two already cover it at Gen1 x1.
        assert!(rate(2) > 1.15 * rate(1), "{} {}", rate(2), rate(1));
        assert!((rate(8) - cap).abs() < 0.01 * cap, "{} vs {cap}", rate(8));
        assert_eq!(rate(8), rate(32));
    }
}
