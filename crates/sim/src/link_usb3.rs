//! USB 3.0 SuperSpeed link timing: 8b/10b, 1024-byte data packets with header and payload
//! framing, bursts acknowledged by the receiver, dual simplex; computed per transfer.

use crate::profile::Usb3LinkProfile;

/// Precomputed timing of one SuperSpeed link (each direction identical).
#[derive(Clone, Debug)]
pub struct Usb3Link {
    max_packet_bytes: u64,
    packet_overhead_bytes: u64,
    burst_packets: u64,
    burst_gap_ns: u64,
    /// Line time per byte including 8b/10b and SKP insertion, in picoseconds.
    byte_ps: u64,
    setup_ns: u64,
}

impl Usb3Link {
    pub fn new(p: &Usb3LinkProfile) -> Usb3Link {
        let byte_ps = f64::from(p.line_bits_per_byte) * 1e12 / p.signal_rate_bps as f64
            * (1.0 + p.skp_overhead_fraction);
        Usb3Link {
            max_packet_bytes: p.max_packet_bytes.into(),
            packet_overhead_bytes: p.data_packet_overhead_bytes.into(),
            burst_packets: p.max_burst_packets.into(),
            burst_gap_ns: p.burst_gap_ns,
            byte_ps: byte_ps.round() as u64,
            setup_ns: p.transfer_setup_ns,
        }
    }

    /// Wire time of the packets alone: (bytes + packets × overhead) × byte_time
    /// + (bursts − 1) × burst_gap.
    #[inline]
    fn packets_ns(&self, bytes: u64) -> u64 {
        let packets = bytes.div_ceil(self.max_packet_bytes).max(1);
        let bursts = packets.div_ceil(self.burst_packets);
        ((bytes + packets * self.packet_overhead_bytes) * self.byte_ps).div_ceil(1000)
            + (bursts - 1) * self.burst_gap_ns
    }

    /// One transfer of `bytes` in one direction: setup + packet time.
    #[inline]
    pub fn transfer_ns(&self, bytes: u64) -> u64 {
        self.setup_ns + self.packets_ns(bytes)
    }

    /// Time of the first burst (the pipelining piece).
    #[inline]
    pub fn first_piece_ns(&self, bytes: u64) -> u64 {
        self.packets_ns(bytes.min(self.burst_packets * self.max_packet_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_ceiling_is_above_400_and_below_500_mb_s() {
        let link = Usb3Link::new(&Usb3LinkProfile {
            description: String::new(),
            signal_rate_bps: 5_000_000_000,
            line_bits_per_byte: 10,
            max_packet_bytes: 1024,
            data_packet_overhead_bytes: 32,
            max_burst_packets: 16,
            burst_gap_ns: 500,
            skp_overhead_fraction: 0.0056,
            transfer_setup_ns: 0,
        });
        let bytes = 1 << 20;
        let mb_s = bytes as f64 / link.transfer_ns(bytes) as f64 * 1000.0;
        assert!((400.0..500.0).contains(&mb_s), "{mb_s}");
    }
}
