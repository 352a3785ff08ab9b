//! Fuzz target: USB descriptor walker and SETUP packet. Every descriptor the walker decodes
//! must re-emit to bytes that parse equal (and, where the parser keeps every bit, to the input
//! bytes themselves); SETUP packets are a bijection on 8 bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use storlab_wire::usb::descriptor::PIPE_USAGE_DESCRIPTOR_LEN;
use storlab_wire::usb::request::SETUP_LEN;
use storlab_wire::usb::{
    descriptors, ConfigurationDescriptor, Descriptor, DeviceDescriptor, EndpointDescriptor,
    InterfaceDescriptor, PipeUsageDescriptor, SetupPacket, SsEndpointCompanion,
};

/// Longest standard descriptor (the device descriptor).
const DESCRIPTOR_MAX_LEN: usize = 18;
/// Offset of the reserved byte of a Pipe Usage descriptor (after bPipeID).
const PIPE_USAGE_RESERVED: usize = 3;

/// Emits `$repr` with `$ty::emit`, requires the parsed bytes to come back byte for byte.
macro_rules! exact_round_trip {
    ($ty:ty, $repr:expr, $raw:expr) => {{
        let mut buf = [0u8; DESCRIPTOR_MAX_LEN];
        let n = $repr.emit(&mut buf).expect("a parsed descriptor must emit");
        assert_eq!(n, $repr.buffer_len());
        assert_eq!(
            &buf[..n],
            $raw,
            "{} re-emit differs from its input",
            stringify!($ty)
        );
        assert_eq!(<$ty>::parse(&buf[..n]).as_ref(), Ok($repr));
    }};
}

fuzz_target!(|data: &[u8]| {
    let mut walked = 0usize;
    for item in descriptors(data) {
        // The walker frames by bLength alone; a descriptor that fails to decode still moves it on.
        let Some(raw) = framed_descriptor(data, walked) else {
            assert!(
                item.is_err(),
                "walker decoded a descriptor that bLength cannot frame"
            );
            break;
        };
        walked += raw.len();
        let Ok(descriptor) = item else {
            continue;
        };
        match &descriptor {
            Descriptor::Device(d) => exact_round_trip!(DeviceDescriptor, d, raw),
            Descriptor::Configuration(d) => exact_round_trip!(ConfigurationDescriptor, d, raw),
            Descriptor::Interface(d) => exact_round_trip!(InterfaceDescriptor, d, raw),
            Descriptor::Endpoint(d) => exact_round_trip!(EndpointDescriptor, d, raw),
            Descriptor::PipeUsage(d) => {
                // Byte 3 is reserved (UAS-2); the parser ignores it and the emitter zeroes it.
                let mut expected = [0u8; PIPE_USAGE_DESCRIPTOR_LEN];
                expected[..PIPE_USAGE_RESERVED].copy_from_slice(&raw[..PIPE_USAGE_RESERVED]);
                exact_round_trip!(PipeUsageDescriptor, d, &expected[..])
            }
            Descriptor::SsEndpointCompanion(d) => {
                // bmAttributes bits above MaxStreams are dropped, and the emitter refuses
                // values USB 3.2 reserves, so only emittable companions must round-trip.
                let mut buf = [0u8; DESCRIPTOR_MAX_LEN];
                if let Ok(n) = d.emit(&mut buf) {
                    assert_eq!(SsEndpointCompanion::parse(&buf[..n]).as_ref(), Ok(d));
                }
            }
            Descriptor::Other { bytes, .. } => assert_eq!(*bytes, raw),
        }
    }

    if let Ok(setup) = SetupPacket::parse_bytes(data) {
        let bytes = setup.to_bytes();
        assert_eq!(
            &bytes[..],
            &data[..SETUP_LEN],
            "SETUP re-emit differs from its input"
        );
        assert_eq!(SetupPacket::parse_bytes(&bytes), Ok(setup));
        assert_eq!(setup.request_type(), data[0]);
    }
});

/// Smallest legal bLength: the bLength and bDescriptorType bytes themselves.
const DESCRIPTOR_HEADER_LEN: usize = 2;

/// The descriptor starting at `at` as its bLength frames it, if that fits in `data`.
fn framed_descriptor(data: &[u8], at: usize) -> Option<&[u8]> {
    let len = usize::from(*data.get(at)?);
    (len >= DESCRIPTOR_HEADER_LEN).then(|| data.get(at..at + len))?
}
