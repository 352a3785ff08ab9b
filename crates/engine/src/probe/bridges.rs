//! USB-to-SATA/NVMe bridge chips by USB idVendor:idProduct, each row citing where the pairing
//! is published. Only rows with a source are here: an enclosure maker may reuse a chip vendor's
//! ID for another chip (ASMedia's 55aa covers three chips; some ASM1153 boards use 5106), so
//! the name is what the ID is registered as, not a promise about the silicon.

use serde::Serialize;

/// One identified bridge.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct Bridge {
    pub vendor_id: u16,
    pub product_id: u16,
    /// Chip maker.
    pub maker: &'static str,
    /// The chip (or chips) the ID is registered for.
    pub chip: &'static str,
    /// What the chip bridges to: `SATA` or `NVMe`.
    pub downstream: &'static str,
    /// Where the pairing is published.
    pub source: &'static str,
}

const USB_IDS: &str = "usb.ids (the USB ID repository, as lsusb prints it)";
const UNUSUAL_UAS: &str = "Linux drivers/usb/storage/unusual_uas.h";

/// The table, sorted by (vendor, product).
pub const BRIDGES: &[Bridge] = &[
    Bridge {
        vendor_id: 0x05e3,
        product_id: 0x0731,
        maker: "Genesys Logic",
        chip: "GL3310",
        downstream: "SATA",
        source: USB_IDS,
    },
    Bridge {
        vendor_id: 0x0bda,
        product_id: 0x9210,
        maker: "Realtek",
        chip: "RTL9210",
        downstream: "NVMe",
        source: "usb.ids (\"RTL9210 M.2 NVME Adapter\"); Linux unusual_uas.h lists 0bda:9210 \
                 with US_FL_IGNORE_UAS",
    },
    Bridge {
        vendor_id: 0x13fd,
        product_id: 0x3940,
        maker: "Initio",
        chip: "INIC-3069",
        downstream: "SATA",
        source: UNUSUAL_UAS,
    },
    Bridge {
        vendor_id: 0x152d,
        product_id: 0x0539,
        maker: "JMicron",
        chip: "JMS539",
        downstream: "SATA",
        source: UNUSUAL_UAS,
    },
    Bridge {
        vendor_id: 0x152d,
        product_id: 0x0567,
        maker: "JMicron",
        chip: "JMS567",
        downstream: "SATA",
        source: UNUSUAL_UAS,
    },
    Bridge {
        vendor_id: 0x152d,
        product_id: 0x0578,
        maker: "JMicron",
        chip: "JMS567 (the kernel entry's name for 152d:0578)",
        downstream: "SATA",
        source: UNUSUAL_UAS,
    },
    Bridge {
        vendor_id: 0x152d,
        product_id: 0x0583,
        maker: "JMicron",
        chip: "JMS583",
        downstream: "NVMe",
        source: UNUSUAL_UAS,
    },
    Bridge {
        vendor_id: 0x152d,
        product_id: 0x3562,
        maker: "JMicron",
        chip: "JMS567",
        downstream: "SATA",
        source: USB_IDS,
    },
    Bridge {
        vendor_id: 0x174c,
        product_id: 0x2362,
        maker: "ASMedia",
        chip: "ASM2362",
        downstream: "NVMe",
        source: "cyrozap's ASM2x6x reverse-engineering notes (feature table: ASM2362 174c:2362)",
    },
    Bridge {
        vendor_id: 0x174c,
        product_id: 0x5106,
        maker: "ASMedia",
        chip: "ASM1051 (some ASM1153 boards reuse this ID)",
        downstream: "SATA",
        source:
            "Linux commit \"uas: Do not blacklist ASM1153 disk enclosures\" (H. de Goede, 2015)",
    },
    Bridge {
        vendor_id: 0x174c,
        product_id: 0x55aa,
        maker: "ASMedia",
        chip: "ASM1051E / ASM1053E / ASM1153 / ASM1153E",
        downstream: "SATA",
        source: "usb.ids; Linux commit \"uas: Do not blacklist ASM1153 disk enclosures\" \
                 (55aa is used for ASM1051, ASM1053 and ASM1153)",
    },
    Bridge {
        vendor_id: 0x2109,
        product_id: 0x0711,
        maker: "VIA Labs",
        chip: "VL711",
        downstream: "SATA",
        source: UNUSUAL_UAS,
    },
    Bridge {
        vendor_id: 0x2109,
        product_id: 0x0715,
        maker: "VIA Labs",
        chip: "VL715 / VL716",
        downstream: "SATA",
        source: USB_IDS,
    },
    Bridge {
        vendor_id: 0x357d,
        product_id: 0x7788,
        maker: "JMicron",
        chip: "JMS566",
        downstream: "SATA",
        source: UNUSUAL_UAS,
    },
];

/// The bridge an idVendor:idProduct is registered as, if the table knows it.
pub fn lookup(vendor_id: u16, product_id: u16) -> Option<Bridge> {
    BRIDGES
        .binary_search_by_key(&(vendor_id, product_id), |b| (b.vendor_id, b.product_id))
        .ok()
        .map(|i| BRIDGES[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique_so_binary_search_finds_every_row() {
        for pair in BRIDGES.windows(2) {
            assert!(
                (pair[0].vendor_id, pair[0].product_id) < (pair[1].vendor_id, pair[1].product_id),
                "{:04x}:{:04x} out of order",
                pair[1].vendor_id,
                pair[1].product_id
            );
        }
        for row in BRIDGES {
            assert_eq!(lookup(row.vendor_id, row.product_id), Some(*row));
            assert!(!row.source.is_empty());
        }
        assert_eq!(lookup(0x174c, 0x55aa).unwrap().maker, "ASMedia");
        assert_eq!(lookup(0x1d6b, 0x0003), None);
    }
}
