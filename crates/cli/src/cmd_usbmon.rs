//! `storlab usbmon-capture` (hidden): records Linux's usbmon binary interface (`/dev/usbmonN`)
//! as a pcap file until Ctrl-C. It exists for the Linux oracle harness
//! (crates/cli/tests/it/linux_oracle.rs), whose QEMU guest has no tshark or dumpcap: storlab is
//! already in the guest, and the binary interface gives each URB's 64-byte usbmon header as
//! libpcap's LINKTYPE_USB_LINUX_MMAPPED writes it (transfer flags included, which the text
//! interface leaves out).

use crate::args::UsbmonCaptureArgs;
use crate::exit::{bad_input, run_failed, Failure};
use crate::say::say;
use std::sync::atomic::{AtomicBool, Ordering};
use storlab_engine::usbmon::{UsbmonReader, USBMON_EVENT_HEADER_LEN};
use storlab_wire::pcap::{global_header, PCAP_MAGIC_MICROS};

/// Data bytes kept per event: every IU, CBW, CSW, descriptor and SCSI parameter page the harness
/// compares fits; bulk payloads beyond it are counted (the header's URB length), not kept.
const KEPT_DATA_BYTES: usize = 1024;
/// How long one wait for an event lasts before the stop flag is looked at again.
const POLL_TIMEOUT_MS: i32 = 100;
/// Offset of `len_cap` (the captured data length) in the usbmon header.
const LEN_CAP_OFFSET: usize = 36;

/// Set by Ctrl-C (SIGINT): finish the capture and write it.
static STOP: AtomicBool = AtomicBool::new(false);

/// Captures until Ctrl-C, then writes the pcap whole; fails if the kernel dropped events.
pub(crate) fn run(args: UsbmonCaptureArgs) -> Result<(), Failure> {
    crate::output::check_output_paths(&[("--output", &args.output)], &[])?;
    let reader = UsbmonReader::open(&args.device)
        .map_err(|e| bad_input(format!("--device {}: {e}", args.device.display())))?;
    ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst))
        .map_err(|e| run_failed(format!("usbmon-capture: Ctrl-C handler: {e}")))?;
    let mut pcap = pcap_global_header();
    let mut records = 0u64;
    loop {
        // Read after the stop flag is seen too, so the events before it are all kept.
        let stopping = STOP.load(Ordering::SeqCst);
        while append_event(&reader, &mut pcap)? {
            records += 1;
        }
        if stopping {
            break;
        }
        reader.wait(POLL_TIMEOUT_MS);
    }
    let dropped = reader
        .dropped_events()
        .map_err(|e| run_failed(format!("usbmon-capture: MON_IOCG_STATS: {e}")))?;
    crate::output::write_file(&args.output, &pcap, "--output")?;
    say!("storlab: usbmon-capture: {records} records, {dropped} dropped");
    if dropped > 0 {
        return Err(run_failed(format!(
            "usbmon-capture: the kernel dropped {dropped} events (the reader fell behind)"
        )));
    }
    Ok(())
}

/// The 24-byte pcap header of a usbmon capture (little-endian, microseconds).
fn pcap_global_header() -> Vec<u8> {
    let mut bytes = Vec::with_capacity(1 << 20);
    bytes.extend_from_slice(&global_header(PCAP_MAGIC_MICROS));
    bytes
}

/// Takes one event off the ring and appends it as a pcap record; false when the ring is empty.
fn append_event(reader: &UsbmonReader, pcap: &mut Vec<u8>) -> Result<bool, Failure> {
    let mut header = [0u8; USBMON_EVENT_HEADER_LEN];
    let mut data = [0u8; KEPT_DATA_BYTES];
    let got = reader
        .next_event(&mut header, &mut data)
        .map_err(|e| run_failed(format!("usbmon-capture: MON_IOCX_GETX: {e}")))?;
    if !got {
        return Ok(false);
    }
    let field = |range: std::ops::Range<usize>| -> u64 {
        let mut bytes = [0u8; 8];
        bytes[..range.len()].copy_from_slice(&header[range]);
        u64::from_le_bytes(bytes)
    };
    let captured = field(LEN_CAP_OFFSET..LEN_CAP_OFFSET + 4) as usize;
    let ts_sec = field(16..24) as u32;
    let ts_usec = field(24..28) as u32;
    let kept = captured.min(KEPT_DATA_BYTES);
    // The record says what it holds: len_cap becomes the kept length, and the record's
    // original length keeps what the kernel captured.
    header[LEN_CAP_OFFSET..LEN_CAP_OFFSET + 4].copy_from_slice(&(kept as u32).to_le_bytes());
    pcap.extend_from_slice(&ts_sec.to_le_bytes());
    pcap.extend_from_slice(&ts_usec.to_le_bytes());
    pcap.extend_from_slice(&((USBMON_EVENT_HEADER_LEN + kept) as u32).to_le_bytes());
    pcap.extend_from_slice(&((USBMON_EVENT_HEADER_LEN + captured) as u32).to_le_bytes());
    pcap.extend_from_slice(&header);
    pcap.extend_from_slice(&data[..kept]);
    Ok(true)
}
