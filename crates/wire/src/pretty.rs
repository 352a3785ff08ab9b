//! Human-readable rendering of every message this crate decodes, as nested text lines
//! (`CBW tag=… → SCSI READ(10) lba=… blocks=…`), and `decode_pcap`, which renders a whole
//! usbmon capture.

use core::fmt::{self, Write};

use crate::bot::{CbwRepr, CswRepr, Direction};
use crate::scsi::cdb::opcode_name;
use crate::scsi::{Command, SenseRepr};
use crate::uas::IuRepr;
use crate::usb::{Descriptor, DescriptorType, SetupPacket, StandardRequest};

const INDENT: &str = "  ";

fn line(out: &mut dyn Write, depth: usize, args: fmt::Arguments<'_>) -> fmt::Result {
    for _ in 0..depth {
        out.write_str(INDENT)?;
    }
    out.write_fmt(args)?;
    out.write_char('\n')
}

/// One line for a parsed CDB, e.g. `SCSI READ(10) lba=2048 blocks=8`.
pub fn write_command(out: &mut dyn Write, depth: usize, command: &Command) -> fmt::Result {
    let name = opcode_name(command.opcode());
    match *command {
        Command::Read {
            lba, blocks, fua, ..
        }
        | Command::Write {
            lba, blocks, fua, ..
        } => line(
            out,
            depth,
            format_args!(
                "SCSI {name} lba={lba} blocks={blocks}{}",
                if fua { " fua" } else { "" }
            ),
        ),
        Command::Inquiry {
            evpd,
            page_code,
            allocation_length,
        } => {
            if evpd {
                line(
                    out,
                    depth,
                    format_args!("SCSI {name} vpd_page={page_code:#04x} alloc={allocation_length}"),
                )
            } else {
                line(
                    out,
                    depth,
                    format_args!("SCSI {name} standard alloc={allocation_length}"),
                )
            }
        }
        Command::RequestSense {
            allocation_length,
            descriptor_format,
        } => line(
            out,
            depth,
            format_args!(
                "SCSI {name} alloc={allocation_length}{}",
                if descriptor_format { " desc" } else { "" }
            ),
        ),
        Command::ModeSense {
            page_code,
            subpage_code,
            allocation_length,
            ..
        } => line(
            out,
            depth,
            format_args!(
                "SCSI {name} page={page_code:#04x}/{subpage_code:#04x} alloc={allocation_length}"
            ),
        ),
        Command::ReadCapacity16 { allocation_length } => line(
            out,
            depth,
            format_args!("SCSI READ CAPACITY(16) alloc={allocation_length}"),
        ),
        Command::SynchronizeCache10 {
            lba,
            blocks,
            immediate,
        } => line(
            out,
            depth,
            format_args!(
                "SCSI {name} lba={lba} blocks={blocks}{}",
                if immediate { " immed" } else { "" }
            ),
        ),
        Command::ReportLuns {
            select_report,
            allocation_length,
        } => line(
            out,
            depth,
            format_args!("SCSI {name} select={select_report} alloc={allocation_length}"),
        ),
        Command::Unmap {
            parameter_list_length,
            anchor,
            ..
        } => line(
            out,
            depth,
            format_args!(
                "SCSI {name} param_len={parameter_list_length}{}",
                if anchor { " anchor" } else { "" }
            ),
        ),
        Command::AtaPassThrough(a) => line(
            out,
            depth,
            format_args!(
                "SCSI {name} protocol={:?} ata_command={:#04x} features={:#06x} count={} lba={}",
                a.protocol, a.command, a.features, a.count, a.lba
            ),
        ),
        Command::TestUnitReady | Command::ReadCapacity10 => {
            line(out, depth, format_args!("SCSI {name}"))
        }
    }
}

/// A CDB: decoded when possible, else its opcode and bytes.
pub fn write_cdb(out: &mut dyn Write, depth: usize, cdb: &[u8]) -> fmt::Result {
    match Command::parse(cdb) {
        Ok(command) => write_command(out, depth, &command),
        Err(e) => line(out, depth, format_args!("SCSI CDB {:02x?} ({e})", cdb)),
    }
}

/// A CBW and its CDB.
pub fn write_cbw(out: &mut dyn Write, depth: usize, cbw: &CbwRepr) -> fmt::Result {
    let dir = match cbw.direction {
        Direction::In => "in",
        Direction::Out => "out",
    };
    line(
        out,
        depth,
        format_args!(
            "BOT CBW tag={:#010x} len={} dir={dir} lun={}",
            cbw.tag, cbw.data_transfer_length, cbw.lun
        ),
    )?;
    write_cdb(out, depth + 1, cbw.cdb())
}

/// A CSW.
pub fn write_csw(out: &mut dyn Write, depth: usize, csw: &CswRepr) -> fmt::Result {
    line(
        out,
        depth,
        format_args!(
            "BOT CSW tag={:#010x} residue={} status={:?}",
            csw.tag, csw.data_residue, csw.status
        ),
    )
}

/// Sense data.
pub fn write_sense(out: &mut dyn Write, depth: usize, sense: &[u8]) -> fmt::Result {
    match SenseRepr::parse(sense) {
        Ok(s) => {
            line(
                out,
                depth,
                format_args!(
                    "sense key={:?} asc={:#04x} ascq={:#04x} ({:?}){}",
                    s.key,
                    s.additional.asc(),
                    s.additional.ascq(),
                    s.additional,
                    if s.deferred { " deferred" } else { "" }
                ),
            )?;
            if let Some(info) = s.information {
                line(out, depth + 1, format_args!("information={info}"))?;
            }
            Ok(())
        }
        Err(e) => line(
            out,
            depth,
            format_args!("sense {} bytes ({e})", sense.len()),
        ),
    }
}

/// A UAS IU (and its CDB or sense data).
pub fn write_iu(out: &mut dyn Write, depth: usize, iu: &IuRepr) -> fmt::Result {
    match iu {
        IuRepr::Command(c) => {
            line(
                out,
                depth,
                format_args!(
                    "UAS Command IU tag={} lun={} attr={:?} prio={}",
                    c.tag,
                    c.lun.index(),
                    c.task_attribute,
                    c.priority
                ),
            )?;
            write_cdb(out, depth + 1, &c.cdb)
        }
        IuRepr::Sense(s) => {
            line(
                out,
                depth,
                format_args!("UAS Sense IU tag={} status={:?}", s.tag, s.status),
            )?;
            if !s.sense.is_empty() {
                write_sense(out, depth + 1, &s.sense)?;
            }
            Ok(())
        }
        IuRepr::Response(r) => line(
            out,
            depth,
            format_args!(
                "UAS Response IU tag={} code={:?} info={:02x?}",
                r.tag, r.response_code, r.additional_response_info
            ),
        ),
        IuRepr::TaskManagement(t) => line(
            out,
            depth,
            format_args!(
                "UAS Task Management IU tag={} function={:?} managed_tag={} lun={}",
                t.tag,
                t.function,
                t.tag_of_managed_task,
                t.lun.index()
            ),
        ),
        IuRepr::ReadReady { tag } => line(out, depth, format_args!("UAS Read Ready IU tag={tag}")),
        IuRepr::WriteReady { tag } => {
            line(out, depth, format_args!("UAS Write Ready IU tag={tag}"))
        }
    }
}

/// bDevCapabilityType's name (USB 3.2 Table 9-14).
fn device_capability_name(kind: u8) -> &'static str {
    match kind {
        0x01 => "Wireless USB",
        0x02 => "USB 2.0 Extension",
        0x03 => "SuperSpeed USB",
        0x04 => "Container ID",
        0x05 => "Platform",
        0x06 => "Power Delivery",
        0x07 => "Battery Info",
        0x08 => "PD Consumer Port",
        0x09 => "PD Provider Port",
        0x0a => "SuperSpeed Plus",
        0x0b => "Precision Time Measurement",
        0x0c => "Wireless USB Ext",
        0x0d => "Billboard",
        0x0e => "Authentication",
        0x0f => "Billboard Ex",
        0x10 => "Configuration Summary",
        _ => "reserved",
    }
}

/// A SETUP packet.
pub fn write_setup(out: &mut dyn Write, depth: usize, setup: &SetupPacket) -> fmt::Result {
    match setup.standard_request() {
        Some(StandardRequest::GetDescriptor) => {
            let [ty, index] = setup.value.to_be_bytes();
            line(
                out,
                depth,
                format_args!(
                    "GET_DESCRIPTOR {:?} index={index} len={}",
                    DescriptorType::from(ty),
                    setup.length
                ),
            )
        }
        Some(StandardRequest::SetConfiguration) => line(
            out,
            depth,
            format_args!("SET_CONFIGURATION {}", setup.value),
        ),
        Some(StandardRequest::SetInterface) => line(
            out,
            depth,
            format_args!(
                "SET_INTERFACE interface={} alt={}",
                setup.index, setup.value
            ),
        ),
        Some(StandardRequest::ClearFeature)
            if setup.recipient == crate::usb::request::Recipient::Endpoint
                && setup.value == crate::usb::request::FEATURE_ENDPOINT_HALT =>
        {
            line(
                out,
                depth,
                format_args!("CLEAR_FEATURE ENDPOINT_HALT endpoint={:#04x}", setup.index),
            )
        }
        Some(StandardRequest::ClearFeature) => line(
            out,
            depth,
            format_args!(
                "CLEAR_FEATURE feature={} index={:#06x}",
                setup.value, setup.index
            ),
        ),
        Some(StandardRequest::SetSel) => line(
            out,
            depth,
            format_args!("SET_SEL len={} (U1/U2 exit latencies)", setup.length),
        ),
        Some(StandardRequest::SetIsochDelay) => line(
            out,
            depth,
            format_args!("SET_ISOCH_DELAY delay={} ns", setup.value),
        ),
        Some(other) => line(
            out,
            depth,
            format_args!(
                "{other:?} value={:#06x} index={:#06x} len={}",
                setup.value, setup.index, setup.length
            ),
        ),
        None => {
            let name = match crate::bot::ClassRequest::from(setup.request) {
                crate::bot::ClassRequest::BulkOnlyReset => "Bulk-Only Mass Storage Reset",
                crate::bot::ClassRequest::GetMaxLun => "Get Max LUN",
                crate::bot::ClassRequest::Unknown(_) => "request",
            };
            line(
                out,
                depth,
                format_args!(
                    "{:?} {name} ({:#04x}) value={:#06x} index={:#06x} len={}",
                    setup.kind, setup.request, setup.value, setup.index, setup.length
                ),
            )
        }
    }
}

/// The first bytes of a descriptor, where GET_DESCRIPTOR asked for fewer than its bLength:
/// Linux's hub driver reads a device descriptor's first 8 bytes for bMaxPacketSize0 (hub.c
/// hub_port_init), which hold bcdUSB too (USB 3.2 Table 9-11).
#[cfg(feature = "alloc")]
fn write_descriptor_head(out: &mut dyn Write, head: &[u8]) -> fmt::Result {
    let (full_len, ty) = (head[0], DescriptorType::from(head[1]));
    if ty == DescriptorType::Device && head.len() >= 8 {
        return line(
            out,
            1,
            format_args!(
                "DEVICE (first {} of {full_len} bytes) usb={:#06x} ep0={}",
                head.len(),
                u16::from_le_bytes([head[2], head[3]]),
                head[7]
            ),
        );
    }
    line(
        out,
        1,
        format_args!(
            "descriptor {ty:?}, first {} of {full_len} bytes",
            head.len()
        ),
    )
}

/// One descriptor.
pub fn write_descriptor(out: &mut dyn Write, depth: usize, d: &Descriptor<'_>) -> fmt::Result {
    match d {
        Descriptor::Device(d) => line(
            out,
            depth,
            format_args!(
                "DEVICE usb={:#06x} vid={:#06x} pid={:#06x} ep0={}",
                d.usb_version_bcd, d.vendor_id, d.product_id, d.max_packet_size0
            ),
        ),
        Descriptor::Configuration(c) => line(
            out,
            depth,
            format_args!(
                "CONFIGURATION value={} total_len={} interfaces={}",
                c.configuration_value, c.total_length, c.num_interfaces
            ),
        ),
        Descriptor::Interface(i) => line(
            out,
            depth,
            format_args!(
                "INTERFACE {} alt={} class={:#04x} subclass={:#04x} protocol={:#04x}{}",
                i.interface_number,
                i.alternate_setting,
                i.class,
                i.subclass,
                i.protocol,
                match i.protocol {
                    crate::bot::INTERFACE_PROTOCOL_BOT => " (BOT)",
                    crate::uas::INTERFACE_PROTOCOL_UAS => " (UAS)",
                    _ => "",
                }
            ),
        ),
        Descriptor::Endpoint(e) => line(
            out,
            depth,
            format_args!(
                "ENDPOINT {:#04x} attributes={:#04x} max_packet={}",
                e.address, e.attributes, e.max_packet_size
            ),
        ),
        Descriptor::SsEndpointCompanion(c) => line(
            out,
            depth + 1,
            format_args!(
                "SS COMPANION max_burst={} max_streams={}",
                c.max_burst,
                c.max_streams()
            ),
        ),
        Descriptor::PipeUsage(p) => {
            line(out, depth + 1, format_args!("UAS PIPE USAGE {:?}", p.pipe))
        }
        Descriptor::Other {
            descriptor_type: DescriptorType::Bos,
            bytes,
        } if bytes.len() >= 5 => line(
            out,
            depth,
            format_args!(
                "BOS total_len={} capabilities={}",
                u16::from_le_bytes([bytes[2], bytes[3]]),
                bytes[4]
            ),
        ),
        Descriptor::Other {
            descriptor_type: DescriptorType::DeviceCapability,
            bytes,
        } if bytes.len() >= 3 => line(
            out,
            depth + 1,
            format_args!(
                "DEVICE CAPABILITY {} ({:#04x}) {} bytes",
                device_capability_name(bytes[2]),
                bytes[2],
                bytes.len()
            ),
        ),
        Descriptor::Other {
            descriptor_type,
            bytes,
        } => line(
            out,
            depth,
            format_args!("descriptor {:?} {} bytes", descriptor_type, bytes.len()),
        ),
    }
}

#[cfg(feature = "alloc")]
pub use decode::decode_pcap;

#[cfg(feature = "alloc")]
mod decode {
    use super::*;
    use crate::bot::{CbwPacket, CswPacket, CBW_LEN, CBW_SIGNATURE, CSW_LEN, CSW_SIGNATURE};
    use crate::pcap::{
        EventType, PcapError, PcapErrorKind, PcapReader, PcapRecord, TransferType,
        RECORD_HEADER_LEN, USBMON_HEADER_LEN,
    };
    use crate::uas::{IuId, IuPacket};
    use crate::usb::PipeId;
    use alloc::collections::BTreeMap;
    use alloc::string::String;

    #[derive(Default)]
    struct DeviceState {
        /// Endpoint address → UAS pipe of the interface's selected alternate setting.
        uas_pipes: BTreeMap<u8, PipeId>,
        /// Endpoint address → UAS pipe the device offers, learned from pipe usage descriptors
        /// (selected by SET_INTERFACE to a non-zero alternate setting).
        offered_uas_pipes: BTreeMap<u8, PipeId>,
        /// URB id → SETUP of control transfers awaiting completion.
        pending_setup: BTreeMap<u64, SetupPacket>,
        /// The last CBW was a REQUEST SENSE: the bulk-in data that follows is sense data.
        sense_expected: bool,
    }

    /// The name of a URB status usbmon shows for a transfer that ended early (Linux
    /// Documentation/driver-api/usb/error-codes.rst), or "" for the others.
    fn urb_status_name(status: i32) -> &'static str {
        match status {
            -32 => " (EPIPE: stalled)",
            -104 => " (ECONNRESET: unlinked)",
            -2 => " (ENOENT: killed)",
            -71 => " (EPROTO)",
            -108 => " (ESHUTDOWN)",
            _ => "",
        }
    }

    fn wire_error(record: &PcapRecord<'_>, e: crate::Error) -> PcapError {
        PcapError {
            record: Some(record.index),
            offset: record.offset + RECORD_HEADER_LEN + USBMON_HEADER_LEN,
            kind: PcapErrorKind::Wire(e),
        }
    }

    fn looks_like_iu(data: &[u8]) -> bool {
        // Heuristic for captures without enumeration: a known IU id, a zero reserved byte and
        // exactly the length that IU has.
        if data.len() < crate::uas::IU_HEADER_LEN || data[1] != 0 {
            return false;
        }
        let packet = IuPacket::new_unchecked(data);
        match packet.iu_id() {
            IuId::Command => {
                data.len() >= crate::uas::COMMAND_IU_LEN
                    && packet.check_len().is_ok()
                    && data.len() == packet.command_iu_len()
            }
            IuId::Sense => {
                data.len() >= crate::uas::SENSE_IU_HEADER_LEN
                    && packet.check_len().is_ok()
                    && data.len()
                        == crate::uas::SENSE_IU_HEADER_LEN + usize::from(packet.sense_length())
            }
            IuId::Response => data.len() == crate::uas::RESPONSE_IU_LEN,
            IuId::TaskManagement => data.len() == crate::uas::TASK_MANAGEMENT_IU_LEN,
            IuId::ReadReady | IuId::WriteReady => data.len() == crate::uas::READY_IU_LEN,
            IuId::Unknown(_) => false,
        }
    }

    /// Renders a whole usbmon capture as nested text lines, one block per record.
    ///
    /// BOT CBWs/CSWs are recognised by signature on bulk endpoints; UAS IUs on the pipes the
    /// capture's configuration descriptor names (or, without enumeration, by IU shape).
    /// A damaged capture, or a malformed CBW/CSW/IU/descriptor inside it, is rejected with the
    /// record index and byte offset.
    pub fn decode_pcap(bytes: &[u8]) -> Result<String, PcapError> {
        let reader = PcapReader::new(bytes)?;
        let mut out = String::new();
        let mut devices: BTreeMap<(u16, u8), DeviceState> = BTreeMap::new();
        for record in reader.records() {
            let record = record?;
            let u = &record.usbmon;
            let state = devices.entry((u.bus, u.device)).or_default();
            let event = match u.event {
                EventType::Submission => 'S',
                EventType::Completion => 'C',
                _ => 'E',
            };
            let kind = match u.transfer {
                TransferType::Control => "Ctrl",
                TransferType::Bulk => "Bulk",
                TransferType::Interrupt => "Intr",
                _ => "Isoc",
            };
            let dir = if u.endpoint & crate::usb::ENDPOINT_DIR_IN != 0 {
                "in"
            } else {
                "out"
            };
            // Writing to a String cannot fail.
            let _ = line(
                &mut out,
                0,
                format_args!(
                    "#{} {event} {kind} {}:{}:{:#04x} {dir} urb_len={} status={}{}",
                    record.index,
                    u.bus,
                    u.device,
                    u.endpoint,
                    u.urb_len,
                    u.status,
                    urb_status_name(u.status)
                ),
            );
            let data = record.data;
            match u.transfer {
                TransferType::Control => {
                    if let Some(setup) = u.setup {
                        let _ = write_setup(&mut out, 1, &setup);
                        match setup.standard_request() {
                            // SET_CONFIGURATION selects alternate setting 0 of every interface
                            // (USB 2.0 §9.4.7), as SET_INTERFACE to 0 does of one: Bulk-Only,
                            // the UAS pipes are gone.
                            Some(StandardRequest::SetConfiguration) => state.uas_pipes.clear(),
                            Some(StandardRequest::SetInterface) if setup.value == 0 => {
                                state.uas_pipes.clear()
                            }
                            Some(StandardRequest::SetInterface) => {
                                state.uas_pipes = state.offered_uas_pipes.clone()
                            }
                            _ => {}
                        }
                        state.pending_setup.insert(u.urb_id, setup);
                    } else if u.event == EventType::Completion {
                        let setup = state.pending_setup.remove(&u.urb_id);
                        let is_descriptor = setup.is_some_and(|s| {
                            s.standard_request() == Some(StandardRequest::GetDescriptor)
                        });
                        let head_only = setup.is_some_and(|s| {
                            data.len() >= 2
                                && usize::from(data[0]) > data.len()
                                && usize::from(s.length) == data.len()
                        });
                        if is_descriptor && head_only {
                            // GET_DESCRIPTOR asked for the first bytes only (hub.c reads a
                            // device descriptor's first 8 for bMaxPacketSize0).
                            let _ = write_descriptor_head(&mut out, data);
                        } else if is_descriptor && !data.is_empty() {
                            let mut last_endpoint = None;
                            for d in crate::usb::descriptors(data) {
                                let d = d.map_err(|e| wire_error(&record, e))?;
                                match d {
                                    Descriptor::Endpoint(e) => last_endpoint = Some(e.address),
                                    Descriptor::PipeUsage(p) => {
                                        if let Some(ep) = last_endpoint {
                                            state.uas_pipes.insert(ep, p.pipe);
                                            state.offered_uas_pipes.insert(ep, p.pipe);
                                        }
                                    }
                                    _ => {}
                                }
                                let _ = write_descriptor(&mut out, 1, &d);
                            }
                        } else if !data.is_empty() {
                            let _ = line(&mut out, 1, format_args!("data {} bytes", data.len()));
                        }
                    }
                }
                TransferType::Bulk if !data.is_empty() => {
                    let pipe = state.uas_pipes.get(&u.endpoint).copied();
                    match pipe {
                        Some(PipeId::Command) | Some(PipeId::Status) => {
                            let iu =
                                IuRepr::parse_bytes(data).map_err(|e| wire_error(&record, e))?;
                            let _ = write_iu(&mut out, 1, &iu);
                        }
                        Some(PipeId::DataIn) | Some(PipeId::DataOut) => {
                            let _ =
                                line(&mut out, 1, format_args!("UAS data {} bytes", data.len()));
                        }
                        _ => {
                            let signature = (data.len() >= 4)
                                .then(|| u32::from_le_bytes([data[0], data[1], data[2], data[3]]));
                            if data.len() == CBW_LEN && signature == Some(CBW_SIGNATURE) {
                                let cbw = CbwRepr::parse(&CbwPacket::new_unchecked(data))
                                    .map_err(|e| wire_error(&record, e))?;
                                let _ = write_cbw(&mut out, 1, &cbw);
                                state.sense_expected = cbw.cdb().first()
                                    == Some(&u8::from(crate::scsi::cdb::Opcode::RequestSense));
                            } else if data.len() == CSW_LEN && signature == Some(CSW_SIGNATURE) {
                                let csw = CswRepr::parse(&CswPacket::new_unchecked(data))
                                    .map_err(|e| wire_error(&record, e))?;
                                let _ = write_csw(&mut out, 1, &csw);
                            } else if state.sense_expected
                                && u.endpoint & crate::usb::ENDPOINT_DIR_IN != 0
                            {
                                state.sense_expected = false;
                                let _ = write_sense(&mut out, 1, data);
                            } else if looks_like_iu(data) {
                                let iu = IuRepr::parse_bytes(data)
                                    .map_err(|e| wire_error(&record, e))?;
                                let _ = write_iu(&mut out, 1, &iu);
                            } else {
                                let _ =
                                    line(&mut out, 1, format_args!("data {} bytes", data.len()));
                            }
                        }
                    }
                }
                _ => {
                    if !data.is_empty() {
                        let _ = line(&mut out, 1, format_args!("data {} bytes", data.len()));
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    #[test]
    fn superspeed_enumeration_requests_and_bos_are_named() {
        // A BOS with its USB 2.0 Extension and SuperSpeed USB capabilities, as QEMU's and real
        // SuperSpeed devices return it (USB 3.2 §9.6.2).
        let bos = [
            5, 0x0f, 22, 0, 2, // BOS: total 22, 2 capabilities
            7, 0x10, 0x02, 0x02, 0, 0, 0, // USB 2.0 Extension (LPM)
            10, 0x10, 0x03, 0, 0x0e, 0, 1, 0x0a, 0xff, 0x07, // SuperSpeed USB
        ];
        let mut s = String::new();
        for d in crate::usb::descriptor::descriptors(&bos) {
            write_descriptor(&mut s, 0, &d.unwrap()).unwrap();
        }
        assert_eq!(
            s,
            "BOS total_len=22 capabilities=2\n  DEVICE CAPABILITY USB 2.0 Extension (0x02) 7 bytes\n  DEVICE CAPABILITY SuperSpeed USB (0x03) 10 bytes\n"
        );
        let mut s = String::new();
        let isoch = SetupPacket::parse_bytes(&[0x00, 49, 40, 0, 0, 0, 0, 0]).unwrap();
        write_setup(&mut s, 0, &isoch).unwrap();
        let sel = SetupPacket::parse_bytes(&[0x00, 48, 0, 0, 0, 0, 6, 0]).unwrap();
        write_setup(&mut s, 0, &sel).unwrap();
        assert_eq!(
            s,
            "SET_ISOCH_DELAY delay=40 ns\nSET_SEL len=6 (U1/U2 exit latencies)\n"
        );
    }

    #[test]
    fn a_device_descriptor_read_in_part_is_named() {
        // hub.c's first read of a SuperSpeed device's descriptor: 8 of its 18 bytes.
        let head = [18, 0x01, 0x00, 0x03, 0, 0, 0, 9];
        let mut s = String::new();
        write_descriptor_head(&mut s, &head).unwrap();
        assert_eq!(s, "  DEVICE (first 8 of 18 bytes) usb=0x0300 ep0=9\n");
        let mut s = String::new();
        write_descriptor_head(&mut s, &[9, 0x02, 0x20, 0x00]).unwrap();
        assert_eq!(s, "  descriptor Configuration, first 4 of 9 bytes\n");
    }

    #[test]
    fn cbw_renders_nested_read() {
        let cbw = CbwRepr::new(
            7,
            4096,
            Direction::In,
            0,
            &[0x28, 0, 0, 0, 0x08, 0, 0, 0, 8, 0],
        )
        .unwrap();
        let mut s = String::new();
        write_cbw(&mut s, 0, &cbw).unwrap();
        assert_eq!(
            s,
            "BOT CBW tag=0x00000007 len=4096 dir=in lun=0\n  SCSI READ(10) lba=2048 blocks=8\n"
        );
    }
}
