//! Runs every parser over millions of deterministic pseudo-random inputs (and mutations of
//! valid messages) and requires that none panics. The cargo-fuzz targets in `fuzz/` explore
//! further with coverage guidance; this keeps the guarantee in the normal test suite.

use storlab_wire::ata::{trim_ranges, IdentifyRepr};
use storlab_wire::bot::{CbwPacket, CbwRepr, CswPacket, CswRepr};
use storlab_wire::pcap::PcapReader;
use storlab_wire::scsi::vpd::{designators, VpdPacket, VpdPage};
use storlab_wire::scsi::{
    parse_report_luns, Capacity16, Command, InquiryRepr, ModeSenseData, SenseRepr,
    UnmapParameterList,
};
use storlab_wire::uas::IuRepr;
use storlab_wire::usb::{descriptors, SetupPacket};

/// xorshift64*: tiny, deterministic, good enough to spread bytes.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Every parser in the crate, applied to one input.
fn parse_all(data: &[u8]) {
    let _ = CbwRepr::parse(&CbwPacket::new_unchecked(data));
    let _ = CswRepr::parse(&CswPacket::new_unchecked(data));
    let _ = IuRepr::parse_bytes(data);
    let _ = Command::parse(data);
    let _ = SenseRepr::parse(data);
    let _ = InquiryRepr::parse(data);
    let _ = VpdPage::parse(&VpdPacket::new_unchecked(data));
    let _ = designators(data).count();
    let _ = Capacity16::parse(data);
    let _ = ModeSenseData::parse(data, false);
    let _ = ModeSenseData::parse(data, true);
    let _ = parse_report_luns(data).map(|i| i.count());
    let _ = UnmapParameterList::parse(data).map(|l| l.descriptors().count());
    let _ = IdentifyRepr::parse(data);
    let _ = trim_ranges(data).count();
    let _ = storlab_wire::sata::FisRepr::parse_bytes(data);
    let _ = SetupPacket::parse_bytes(data);
    let _ = descriptors(data).count();
    if let Ok(r) = PcapReader::new(data) {
        let _ = r.records().count();
    }
    let _ = storlab_wire::decode_pcap(data);
}

#[test]
fn parsers_never_panic_on_random_input() {
    let iterations: u64 = if std::env::var_os("STORLAB_SOAK").is_some() {
        50_000_000
    } else {
        2_000_000
    };
    let mut rng = Rng(0x0005_eed0_f570_a1ab);
    // Seeds make mutations start near valid messages, where the interesting branches are.
    let seeds: [&[u8]; 4] = [
        &[
            0x55, 0x53, 0x42, 0x43, 1, 0, 0, 0, 0, 2, 0, 0, 0x80, 0, 10, 0x28, 0, 0, 0, 0, 0, 0, 0,
            1, 0, 0, 0, 0, 0, 0, 0,
        ],
        &[
            0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x2a, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0,
            0, 0, 0, 0, 0,
        ],
        &[
            0x72, 5, 0x24, 0, 0, 0, 0, 14, 0x09, 0x0c, 1, 0, 0, 1, 2, 3, 4, 5, 6, 7, 0x40, 0x50,
        ],
        &[
            9, 2, 32, 0, 1, 1, 0, 0x80, 250, 9, 4, 0, 0, 2, 8, 6, 0x50, 0, 7, 5, 0x81, 2, 0, 2, 0,
            7, 5, 2, 2, 0, 2, 0,
        ],
    ];
    let mut buf = [0u8; 96];
    for i in 0..iterations {
        let r = rng.next();
        let len = (r % buf.len() as u64) as usize;
        if i % 2 == 0 {
            let seed = seeds[(r >> 8) as usize % seeds.len()];
            let n = seed.len().min(len.max(1));
            buf[..n].copy_from_slice(&seed[..n]);
            let flips = 1 + (r >> 16) % 3;
            for f in 0..flips {
                let pos = ((r >> (24 + 8 * f)) as usize) % n;
                buf[pos] = rng.next() as u8;
            }
            parse_all(&buf[..n]);
        } else {
            for chunk in buf[..len].chunks_mut(8) {
                let v = rng.next().to_le_bytes();
                chunk.copy_from_slice(&v[..chunk.len()]);
            }
            parse_all(&buf[..len]);
        }
    }
}

#[test]
fn identify_and_pcap_parsers_survive_random_large_inputs() {
    let mut rng = Rng(42);
    let mut buf = vec![0u8; 2048];
    for _ in 0..2_000 {
        for b in buf.iter_mut() {
            *b = rng.next() as u8;
        }
        // Make it look like a usbmon pcap so the record walker runs.
        buf[..4].copy_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        buf[20..24].copy_from_slice(&220u32.to_le_bytes());
        parse_all(&buf);
        parse_all(&buf[..512]);
    }
}
