//! USB 2.0 High-Speed link timing: half duplex, host-polled, 512-byte bulk packets, at most a
//! fixed number of bulk packets per 125 µs microframe; computed per transfer from packet counts.

use crate::profile::Usb2LinkProfile;

/// Precomputed timing of one High-Speed link.
#[derive(Clone, Debug)]
pub struct Usb2Link {
    max_packet_bytes: u64,
    microframe_ns: u64,
    packets_per_microframe: u64,
    /// Share of the microframe one full packet occupies at the scheduled packet rate, in
    /// picoseconds (microframe / bulk packets per microframe).
    full_packet_ps: u64,
    /// Per-bit time, stretched for periodic reservations, in picoseconds.
    bit_ps: u64,
    overhead_bits: u64,
    setup_ns: u64,
}

impl Usb2Link {
    pub fn new(p: &Usb2LinkProfile) -> Usb2Link {
        let bit_ps = 1e12 / p.bit_rate_bps as f64;
        let packet_ps =
            (f64::from(p.max_packet_bytes) * 8.0 + f64::from(p.packet_overhead_bits)) * bit_ps;
        // Bulk gets what periodic traffic leaves of each microframe; within that, the host
        // controller schedules at most `max_bulk_packets_per_microframe` packets (its qTD/TRB
        // processing and memory fetches, not the wire, are the limit on real controllers).
        let microframe_ps = p.microframe_ns as f64 * 1000.0;
        let bulk_ps = microframe_ps * (1.0 - p.periodic_reserved_fraction);
        let fit_on_wire = (bulk_ps / packet_ps).floor().max(1.0);
        let packets = fit_on_wire.min(f64::from(p.max_bulk_packets_per_microframe));
        let stretch = microframe_ps / bulk_ps;
        Usb2Link {
            max_packet_bytes: p.max_packet_bytes.into(),
            microframe_ns: p.microframe_ns,
            packets_per_microframe: packets as u64,
            full_packet_ps: (microframe_ps / packets).round() as u64,
            bit_ps: (bit_ps * stretch).round() as u64,
            overhead_bits: p.packet_overhead_bits.into(),
            setup_ns: p.transfer_setup_ns,
        }
    }

    /// Bus time of one bulk transfer of `bytes` (at least one packet):
    /// setup + full_packets × full_packet_time + (tail_bytes × 8 + overhead_bits) × bit_time.
    #[inline]
    pub fn transfer_ns(&self, bytes: u64) -> u64 {
        let full = bytes / self.max_packet_bytes;
        let tail = bytes % self.max_packet_bytes;
        let tail_ps = if tail > 0 || full == 0 {
            (tail * 8 + self.overhead_bits) * self.bit_ps
        } else {
            0
        };
        self.setup_ns + (full * self.full_packet_ps + tail_ps).div_ceil(1000)
    }

    /// Time for the first microframe's worth of a transfer (the pipelining piece).
    #[inline]
    pub fn first_piece_ns(&self, bytes: u64) -> u64 {
        let piece = bytes.min(self.packets_per_microframe * self.max_packet_bytes);
        self.transfer_ns(piece) - self.setup_ns
    }

    /// The host polls: an IN transfer the device becomes ready for at `ready_ns` is found at the
    /// next microframe boundary (the device NAKed the previous poll).
    #[inline]
    pub fn next_poll_ns(&self, ready_ns: u64) -> u64 {
        ready_ns.div_ceil(self.microframe_ns) * self.microframe_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_link() -> Usb2Link {
        Usb2Link::new(&Usb2LinkProfile {
            description: String::new(),
            bit_rate_bps: 480_000_000,
            max_packet_bytes: 512,
            microframe_ns: 125_000,
            max_bulk_packets_per_microframe: 13,
            packet_overhead_bits: 519,
            periodic_reserved_fraction: 0.0,
            transfer_setup_ns: 0,
        })
    }

    #[test]
    fn thirteen_full_packets_fill_one_microframe() {
        let link = spec_link();
        let ns = link.transfer_ns(13 * 512);
        assert!((124_000..=125_100).contains(&ns), "{ns}");
    }

    #[test]
    fn bulk_ceiling_is_the_theoretical_53_mb_s() {
        let link = spec_link();
        let bytes = 1 << 20;
        let mb_s = bytes as f64 / link.transfer_ns(bytes) as f64 * 1000.0;
        assert!((52.0..=54.0).contains(&mb_s), "{mb_s}");
    }

    #[test]
    fn host_controller_packet_limit_and_periodic_share_both_bound_the_rate() {
        let mut p = Usb2LinkProfile {
            description: String::new(),
            bit_rate_bps: 480_000_000,
            max_packet_bytes: 512,
            microframe_ns: 125_000,
            max_bulk_packets_per_microframe: 10,
            packet_overhead_bits: 519,
            periodic_reserved_fraction: 0.05,
            transfer_setup_ns: 0,
        };
        // 10 packets fit in the 95 % left by periodic traffic: the controller limits.
        let ten = Usb2Link::new(&p);
        assert_eq!(ten.packets_per_microframe, 10);
        assert_eq!(ten.transfer_ns(10 * 512), 125_000);
        // A 20 % periodic share leaves room for 10 packets only on the wire's terms (floor
        // of 100 us / 9.6 us = 10), a 30 % share for 9.
        p.periodic_reserved_fraction = 0.3;
        assert_eq!(Usb2Link::new(&p).packets_per_microframe, 9);
    }

    #[test]
    fn polls_on_microframe_boundaries() {
        let link = spec_link();
        assert_eq!(link.next_poll_ns(1), 125_000);
        assert_eq!(link.next_poll_ns(125_000), 125_000);
    }
}
