//! `storlab decode` on the guest's own enumeration: init.sh records /dev/usbmon0 (every bus)
//! from before the host controllers load until the four disks are scanned, so the capture holds
//! a real SuperSpeed and High-Speed enumeration as Linux 6.1's hub driver does it (BOS, SET_SEL,
//! SET_ISOCH_DELAY, string descriptors, the root hubs' requests) and sd's scan of every disk.
//! Every standard request and descriptor in it must be named (nothing "Unknown"), and the
//! requests and descriptors decode names must be those tshark dissects, one for one.

use crate::common;
use std::collections::BTreeMap;
use std::path::Path;

/// Standard request names as decode prints them (crates/wire/src/pretty.rs) and their
/// bRequest codes (USB 3.2 Table 9-4).
const STANDARD_REQUESTS: [(&str, u8); 12] = [
    ("GetStatus", 0),
    ("CLEAR_FEATURE", 1),
    ("SetFeature", 3),
    ("SetAddress", 5),
    ("GET_DESCRIPTOR", 6),
    ("SetDescriptor", 7),
    ("GetConfiguration", 8),
    ("SET_CONFIGURATION", 9),
    ("GetInterface", 10),
    ("SET_INTERFACE", 11),
    ("SET_SEL", 48),
    ("SET_ISOCH_DELAY", 49),
];

/// Descriptor lines as decode prints them and their bDescriptorType (USB 3.2 Table 9-6, UAS's
/// pipe usage 0x24), the longer prefix first. tshark 4.0 dissects all but the BOS and its
/// device capabilities ("unknown descriptor type 15"), which are counted on decode's side only
/// and must be there ([`SUPERSPEED_NAMES`]).
const DESCRIPTORS: [(&str, u8); 10] = [
    ("DEVICE CAPABILITY ", 0x10),
    ("DEVICE ", 0x01),
    ("CONFIGURATION ", 0x02),
    ("descriptor String ", 0x03),
    ("INTERFACE ", 0x04),
    ("ENDPOINT ", 0x05),
    ("descriptor DeviceQualifier ", 0x06),
    ("BOS ", 0x0f),
    ("UAS PIPE USAGE ", 0x24),
    ("SS COMPANION ", 0x30),
];

/// What a SuperSpeed enumeration by Linux holds that decode once showed as Unknown (issue 35).
/// (SET_SEL, which decode names too, is sent only where Link Power Management is enabled
/// (hub.c usb_enable_lpm -> usb_req_set_sel); QEMU's xHCI does not offer it.)
const SUPERSPEED_NAMES: [&str; 4] = [
    "GET_DESCRIPTOR Bos",
    "BOS total_len=",
    "DEVICE CAPABILITY SuperSpeed USB",
    "SET_ISOCH_DELAY",
];
/// The descriptor types tshark 4.0 leaves undissected (BOS, DEVICE CAPABILITY).
const TSHARK_UNDISSECTED: [u8; 2] = [0x0f, 0x10];

/// One line per difference between decode's view of the enumeration and tshark's.
pub fn check(results: &Path) -> Vec<String> {
    let rc = std::fs::read_to_string(results.join("enumeration.capture_rc")).unwrap_or_default();
    if rc.trim() != "0" {
        let log = std::fs::read_to_string(results.join("enumeration.log")).unwrap_or_default();
        return vec![format!(
            "enumeration: the guest's usbmon capture failed: {}",
            log.trim()
        )];
    }
    let pcap = results.join("enumeration.pcap");
    let out = common::run_in(results, &["decode", "enumeration.pcap"]);
    if !out.status.success() {
        return vec![format!(
            "enumeration: storlab decode failed: {}",
            common::stderr(&out)
        )];
    }
    let decoded = common::stdout(&out);
    let mut differences: Vec<String> = decoded
        .lines()
        .filter(|line| line.contains("Unknown"))
        .map(|line| format!("enumeration: decode left unnamed: {}", line.trim()))
        .collect();
    for name in SUPERSPEED_NAMES {
        if !decoded.contains(name) {
            differences.push(format!("enumeration: decode shows no {name}"));
        }
    }
    let Some(tshark_requests) = common::tshark_fields(
        &pcap,
        "usb.bmRequestType.type == 0",
        &["usb.setup.bRequest"],
    ) else {
        return differences;
    };
    let tshark_requests = count(tshark_requests.iter().map(|code| code.parse().unwrap()));
    let decode_requests = count(control_lines(&decoded, " S Ctrl ").filter_map(|line| {
        STANDARD_REQUESTS
            .iter()
            .find(|(name, _)| line.starts_with(name))
            .map(|(_, code)| *code)
    }));
    if tshark_requests != decode_requests {
        differences.push(format!(
            "enumeration: standard requests (bRequest: count): tshark {tshark_requests:?}, decode {decode_requests:?}"
        ));
    }
    let tshark_descriptors = count(
        tshark_every_occurrence(
            &pcap,
            "usb.urb_type == 'C' && usb.transfer_type == 2 && usb.bDescriptorType",
            "usb.bDescriptorType",
        )
        .iter()
        .filter_map(|ty| u8::from_str_radix(ty.trim_start_matches("0x"), 16).ok())
        .filter(|ty| DESCRIPTORS.iter().any(|(_, code)| code == ty)),
    );
    let decode_descriptors = count(
        control_lines(&decoded, " C Ctrl ")
            .filter_map(|line| {
                DESCRIPTORS
                    .iter()
                    .find(|(name, _)| line.starts_with(name))
                    .map(|(_, code)| *code)
            })
            .filter(|ty| !TSHARK_UNDISSECTED.contains(ty)),
    );
    eprintln!(
        "linux_oracle: enumeration: standard requests (bRequest: count) {decode_requests:?}, \
         descriptors (bDescriptorType: count) {decode_descriptors:?} as tshark dissects them"
    );
    if tshark_descriptors != decode_descriptors {
        differences.push(format!(
            "enumeration: standard descriptors (bDescriptorType: count): tshark {tshark_descriptors:?}, decode {decode_descriptors:?}"
        ));
    }
    differences
}

/// The indented lines decode prints under each control record whose header contains `kind`
/// (" S Ctrl " for submissions, " C Ctrl " for completions), trimmed.
fn control_lines<'a>(decoded: &'a str, kind: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    let mut inside = false;
    decoded.lines().filter_map(move |line| {
        if line.starts_with('#') {
            inside = line.contains(kind);
            return None;
        }
        inside.then(|| line.trim())
    })
}

/// tshark's values of `field` in the frames matching `filter`: every occurrence (a completion
/// of GET_DESCRIPTOR Configuration holds many descriptors), not the first only.
fn tshark_every_occurrence(pcap: &Path, filter: &str, field: &str) -> Vec<String> {
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args([
            "-Y",
            filter,
            "-T",
            "fields",
            "-E",
            "occurrence=a",
            "-E",
            "aggregator=,",
        ])
        .args(["-e", field])
        .output()
        .unwrap();
    assert!(out.status.success(), "tshark: {}", common::stderr(&out));
    common::stdout(&out)
        .lines()
        .flat_map(|line| line.split(','))
        .map(str::to_owned)
        .collect()
}

fn count(codes: impl Iterator<Item = u8>) -> BTreeMap<u8, usize> {
    let mut counts = BTreeMap::new();
    for code in codes {
        *counts.entry(code).or_default() += 1;
    }
    counts
}
