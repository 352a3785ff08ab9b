//! USB device reset and re-enumeration, as Linux's `usb_reset_device` does it: a port reset
//! (USB 2.0 reset signalling, or a USB 3.0 hot or warm reset) timed as the hub driver polls it,
//! then `hub_port_init` and `usb_reset_and_verify_device` re-reading the descriptors, checking
//! they did not change, and putting the configuration and the interface's alternate setting
//! back. The device keeps its address and its drivers; only what it held is gone.
//!
//! Also what the hub sees when the device drops off the bus (`link_loss_seen`), which decides
//! between that reset and the device's removal (docs/simulator.md, "Faults").
//!
//! Sources: drivers/usb/core/hub.c (Linux 6.x; `hub_port_reset`, `hub_port_wait_reset`,
//! `hub_port_init`, `usb_reset_and_verify_device`, `port_event`), the USB 2.0 specification
//! §7.1.7.5 and the USB 3.0 specification §6.9 and §7.5.

use crate::cx::{ControlTransfer, Cx};
use storlab_wire::usb::descriptor::{
    BCD_USB_2_0, BCD_USB_3_0, DEVICE_DESCRIPTOR_LEN, HIGH_SPEED_EP0_MAX_PACKET,
    SUPER_SPEED_EP0_MAX_PACKET_EXPONENT,
};
use storlab_wire::usb::{
    emit_mass_storage_configuration, DescriptorType, DeviceDescriptor, MassStorageConfig,
    SetupPacket,
};

/// USB 2.0 §7.1.7.5, Table 7-14: a root port drives reset for TDRSTR = 50 ms.
pub const USB2_ROOT_PORT_RESET_NS: u64 = 50_000_000;
/// USB 3.0 §7.5.4 (Polling / Hot Reset): a hot reset is a TS2 handshake with the Reset bit
/// set, done within a few training sequences; 1 µs bounds it (each TS2 is 64 symbols, 128 ns
/// at 5 Gb/s with 8b/10b coding, and both ends send at least 16).
pub const USB3_HOT_RESET_NS: u64 = 1_000;
/// USB 3.0 §6.9.3, Table 6-22 (LFPS transmitter timing): Warm Reset is LFPS for tReset,
/// 80 ms to 120 ms; the typical 100 ms.
pub const USB3_WARM_RESET_NS: u64 = 100_000_000;
/// hub.c `HUB_ROOT_RESET_TIME`: the first wait before the hub driver polls a root port in
/// reset ("root hub ports have a slightly longer reset period", USB 2.0 §7.1.7.5).
pub const LINUX_ROOT_RESET_POLL_NS: u64 = 60_000_000;
/// hub.c `HUB_SHORT_RESET_TIME` (10 ms) and `HUB_LONG_RESET_TIME` (200 ms):
/// `hub_port_wait_reset` polls at the long interval once it has waited two short ones.
pub const LINUX_SHORT_RESET_POLL_NS: u64 = 10_000_000;
pub const LINUX_LONG_RESET_POLL_NS: u64 = 200_000_000;
/// hub.c `hub_port_reset`: "TRSTRCY = 10 ms; plus some extra", `msleep(10 + 40)` after the
/// reset completes (TRSTRCY: USB 2.0 §7.1.7.5 reset recovery time).
pub const LINUX_RESET_RECOVERY_NS: u64 = 50_000_000;
/// hub.c `hub_port_init`: `msleep(10)` after the address is set, "let SET_ADDRESS settle".
pub const LINUX_SET_ADDRESS_SETTLE_NS: u64 = 10_000_000;
/// hub.c `hub_port_init` reads the first 8 bytes of the device descriptor (bMaxPacketSize0)
/// before the whole of it (`usb_get_device_descriptor(udev, 8)`).
pub const DEVICE_DESCRIPTOR_HEAD_LEN: u16 = 8;
/// USB 3.0 §7.5.10 (Recovery): a link that fails to retrain within 12 ms leaves Recovery for
/// SS.Inactive (the port's link state the hub reports as needing a warm reset).
pub const USB3_RECOVERY_TIMEOUT_NS: u64 = 12_000_000;
/// USB 3.0 §7.5.2 (SS.Inactive): the port stays in SS.Inactive.Quiet for 12 ms
/// (tSSInactiveQuietTimeout), then checks the far-end receiver termination; none means the
/// device is gone (Rx.Detect: a disconnect).
pub const USB3_INACTIVE_QUIET_NS: u64 = 12_000_000;
/// hub.c `port_event` (Linux 6.x): on a port in SS.Inactive the hub driver waits
/// `DETECT_DISCONNECT_TRIES` (5) × `msleep(20)` for the port's own disconnect detection
/// before it warm-resets the device (`usb_reset_device`).
pub const LINUX_INACTIVE_DISCONNECT_WAIT_NS: u64 = 5 * 20_000_000;
/// The device's configuration value (wire's enumeration has one configuration).
const CONFIGURATION_VALUE: u8 = 1;
/// The mass-storage interface, and its UAS alternate setting.
const MASS_STORAGE_INTERFACE: u8 = 0;
const UAS_ALTERNATE_SETTING: u8 = 1;
/// Room for the largest configuration bundle (UAS, SuperSpeed).
const CONFIG_BUFFER_BYTES: usize = 256;
/// Vendor/product of the simulated bridge (generic, not a real vendor's; as the pcap shows
/// them at enumeration).
const VENDOR_ID: u16 = 0x1d6b;
const PRODUCT_ID: u16 = 0x5354;
const BCD_DEVICE: u16 = 0x0100;

/// The simulated bridge's device descriptor (the enumeration in the pcap and the
/// re-enumeration after a reset read the same one).
pub fn bridge_device_descriptor(super_speed: bool) -> DeviceDescriptor {
    DeviceDescriptor {
        usb_version_bcd: if super_speed {
            BCD_USB_3_0
        } else {
            BCD_USB_2_0
        },
        class: 0,
        subclass: 0,
        protocol: 0,
        max_packet_size0: if super_speed {
            SUPER_SPEED_EP0_MAX_PACKET_EXPONENT
        } else {
            HIGH_SPEED_EP0_MAX_PACKET
        },
        vendor_id: VENDOR_ID,
        product_id: PRODUCT_ID,
        device_version_bcd: BCD_DEVICE,
        manufacturer_index: 0,
        product_index: 0,
        serial_index: 0,
        num_configurations: 1,
    }
}

/// Which reset the port does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortReset {
    /// SetPortFeature(PORT_RESET): USB 2.0 reset signalling, or a USB 3.0 hot reset.
    Reset,
    /// SetPortFeature(BH_PORT_RESET): a USB 3.0 warm reset, needed by a port in SS.Inactive
    /// (hub.c `hub_port_reset` switches to it when `hub_port_warm_reset_required`).
    Warm,
}

/// One control transfer of the re-enumeration and the bytes of its data stage (the device's
/// answer to GET_DESCRIPTOR; empty for SET_CONFIGURATION and SET_INTERFACE).
#[derive(Clone, Debug)]
pub(crate) struct EnumerationTransfer {
    pub transfer: ControlTransfer,
    pub data: Vec<u8>,
}

/// What a device reset did: the port reset and its start, the
/// control transfers of the re-enumeration, and when the device was usable again.
#[derive(Clone, Debug)]
pub(crate) struct DeviceReset {
    pub reset: PortReset,
    pub reset_start_ns: u64,
    pub transfers: Vec<EnumerationTransfer>,
    pub driver_ns: u64,
}

/// When `hub_port_wait_reset` sees a reset that took `reset_ns` of hardware time done: it
/// sleeps 60 ms (root port), then polls, switching to 200 ms polls once it has waited at
/// least two short intervals.
pub fn reset_seen_after_ns(reset_ns: u64) -> u64 {
    let mut waited_ns = 0;
    let mut poll_ns = LINUX_ROOT_RESET_POLL_NS;
    loop {
        waited_ns += poll_ns;
        if waited_ns >= reset_ns {
            return waited_ns;
        }
        if waited_ns >= 2 * LINUX_SHORT_RESET_POLL_NS {
            poll_ns = LINUX_LONG_RESET_POLL_NS;
        }
    }
}

/// The hardware time of a port reset at this speed.
pub fn port_reset_ns(reset: PortReset, super_speed: bool) -> u64 {
    match (reset, super_speed) {
        (PortReset::Warm, _) => USB3_WARM_RESET_NS,
        (PortReset::Reset, true) => USB3_HOT_RESET_NS,
        (PortReset::Reset, false) => USB2_ROOT_PORT_RESET_NS,
    }
}

/// Host and device: `usb_reset_device` from `at_ns`. The port resets; after the reset
/// recovery wait the xHCI controller addresses the device (an Address Device command, not a
/// control transfer on the bus: hub.c `hub_set_address` calls the controller's
/// `address_device`, so no SET_ADDRESS URB appears in a usbmon capture), the address settles,
/// and the host reads the device descriptor's first 8 bytes, then all 18, then the
/// configuration bundle at its known length (`descriptors_changed`), which must match what
/// the device enumerated with; SET_CONFIGURATION restores the configuration, and an interface
/// that was at a non-zero alternate setting gets SET_INTERFACE (`uas`: alternate 1; alternate
/// 0 needs no request, SET_CONFIGURATION selects it, USB 2.0 §9.4.7).
///
/// The device answers each request after `firmware_ns` of its firmware's time.
pub(crate) fn reset_device(
    cx: &mut Cx,
    at_ns: u64,
    reset: PortReset,
    super_speed: bool,
    offers_uas: bool,
    uas: bool,
    firmware_ns: u64,
) -> DeviceReset {
    let reset_seen_ns = at_ns + reset_seen_after_ns(port_reset_ns(reset, super_speed));
    // The controller's Address Device command completes with an event and an interrupt.
    let addressed_ns = cx.hand_off(reset_seen_ns + LINUX_RESET_RECOVERY_NS, 0);
    let mut t = addressed_ns + LINUX_SET_ADDRESS_SETTLE_NS;
    let device = bridge_device_descriptor(super_speed);
    let mut device_bytes = [0u8; DEVICE_DESCRIPTOR_LEN];
    device
        .emit(&mut device_bytes)
        .expect("a device descriptor is 18 bytes");
    let mut config_bytes = [0u8; CONFIG_BUFFER_BYTES];
    let config_len = emit_mass_storage_configuration(
        &MassStorageConfig::new(offers_uas, super_speed),
        &mut config_bytes,
    )
    .expect("configuration bundle fits");
    let mut transfers = Vec::new();
    let requests: [(SetupPacket, &[u8]); 3] = [
        (
            SetupPacket::get_descriptor(DescriptorType::Device, 0, DEVICE_DESCRIPTOR_HEAD_LEN),
            &device_bytes[..usize::from(DEVICE_DESCRIPTOR_HEAD_LEN)],
        ),
        (
            SetupPacket::get_descriptor(DescriptorType::Device, 0, DEVICE_DESCRIPTOR_LEN as u16),
            &device_bytes,
        ),
        (
            SetupPacket::get_descriptor(DescriptorType::Configuration, 0, config_len as u16),
            &config_bytes[..config_len],
        ),
    ];
    for (setup, answer) in requests {
        let transfer = cx.usb_control_in(t, &setup, answer.len() as u64, firmware_ns);
        t = transfer.driver_ns;
        transfers.push(EnumerationTransfer {
            transfer,
            data: answer.to_vec(),
        });
    }
    // Host: the descriptors it read back are the ones it knew (`descriptors_changed`); a
    // device that changed them would be re-enumerated as a new device instead.
    let read_back = DeviceDescriptor::parse(&transfers[1].data).expect("host: device descriptor");
    assert_eq!(read_back, device, "host: the device changed its descriptor");
    let mut set_requests = vec![SetupPacket::set_configuration(CONFIGURATION_VALUE)];
    if uas {
        set_requests.push(SetupPacket::set_interface(
            MASS_STORAGE_INTERFACE,
            UAS_ALTERNATE_SETTING,
        ));
    }
    for setup in set_requests {
        let transfer = cx.usb_control(t, &setup);
        t = transfer.driver_ns;
        transfers.push(EnumerationTransfer {
            transfer,
            data: Vec::new(),
        });
    }
    DeviceReset {
        reset,
        reset_start_ns: at_ns,
        transfers,
        driver_ns: t,
    }
}

/// What the hub sees of a device that drops off the bus for `dropout_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkLossSeen {
    /// USB 3.0: the link fell to SS.Inactive and the device's receiver terminations were back
    /// before the port checked them: the port still shows a connection and needs a warm reset;
    /// the hub driver resets the device and keeps it. `reset_at_ns` after the dropout began.
    WarmReset { reset_at_ns: u64 },
    /// The port saw the device gone (a USB 2.0 disconnect, or no terminations at the SS.Inactive
    /// check): the hub driver removes the device, `removed_at_ns` after the dropout began.
    Removed { removed_at_ns: u64 },
}

/// USB 2.0 §7.1.7.3: a High-Speed port detects a disconnect within TDDIS (2 µs to 2.5 µs) of
/// the device's terminations going.
pub const USB2_DISCONNECT_DETECT_NS: u64 = 2_500;

/// What the hub sees of a dropout of `dropout_ns` (the device unpowered, its terminations
/// gone). A High-Speed port detects the disconnect at once. A SuperSpeed port's link fails
/// Recovery after 12 ms and sits in SS.Inactive, checking the far-end termination every 12 ms;
/// a device back before the first check is still connected, and hub.c's `port_event` waits its
/// 100 ms for a disconnect that does not come, then runs `usb_reset_device` (a warm reset).
pub fn link_loss_seen(dropout_ns: u64, super_speed: bool) -> LinkLossSeen {
    if !super_speed {
        return LinkLossSeen::Removed {
            removed_at_ns: USB2_DISCONNECT_DETECT_NS,
        };
    }
    let inactive_ns = USB3_RECOVERY_TIMEOUT_NS;
    let first_check_ns = inactive_ns + USB3_INACTIVE_QUIET_NS;
    if dropout_ns < first_check_ns {
        LinkLossSeen::WarmReset {
            reset_at_ns: inactive_ns + LINUX_INACTIVE_DISCONNECT_WAIT_NS,
        }
    } else {
        LinkLossSeen::Removed {
            removed_at_ns: first_check_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hub_driver_sees_a_reset_at_its_polls() {
        // USB 2.0 (50 ms) and a hot reset (1 µs) are done at the first poll, 60 ms.
        assert_eq!(
            reset_seen_after_ns(port_reset_ns(PortReset::Reset, false)),
            60_000_000
        );
        assert_eq!(
            reset_seen_after_ns(port_reset_ns(PortReset::Reset, true)),
            60_000_000
        );
        // A warm reset (100 ms) is not: the next poll is 200 ms later.
        assert_eq!(
            reset_seen_after_ns(port_reset_ns(PortReset::Warm, true)),
            260_000_000
        );
    }

    #[test]
    fn what_the_hub_sees_depends_on_the_port_and_the_dropout() {
        assert_eq!(
            link_loss_seen(1_000_000, false),
            LinkLossSeen::Removed {
                removed_at_ns: 2_500
            }
        );
        assert_eq!(
            link_loss_seen(23_999_999, true),
            LinkLossSeen::WarmReset {
                reset_at_ns: 112_000_000
            }
        );
        assert_eq!(
            link_loss_seen(24_000_000, true),
            LinkLossSeen::Removed {
                removed_at_ns: 24_000_000
            }
        );
    }
}
