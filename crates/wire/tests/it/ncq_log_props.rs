//! Property tests of the NCQ Command Error log (log 10h): every page that emits parses back to
//! itself with a zero byte sum, emit never writes past the page, any one-byte damage is caught
//! by the checksum, and no input makes the parser panic.

use proptest::prelude::*;
use storlab_wire::ata_log::{NcqErrorLogPacket, NcqErrorLogRepr, NCQ_ERROR_LOG_LEN};

fn repr() -> impl Strategy<Value = NcqErrorLogRepr> {
    (
        proptest::option::of(0u8..=31),
        any::<bool>(),
        (
            any::<u8>(),
            any::<u8>(),
            0u64..(1 << 48),
            any::<u8>(),
            any::<u16>(),
        ),
        (0u8..=15, any::<u8>(), any::<u8>()),
    )
        .prop_map(
            |(tag, unload, (status, error, lba, device, count), (sense_key, asc, ascq))| {
                NcqErrorLogRepr {
                    tag,
                    unload,
                    status,
                    error,
                    lba,
                    device,
                    count,
                    sense_key,
                    asc,
                    ascq,
                }
            },
        )
}

proptest! {
    #[test]
    fn ncq_error_log_round_trips(repr in repr()) {
        let mut buf = [0xA5u8; NCQ_ERROR_LOG_LEN + 1];
        prop_assert_eq!(repr.emit(&mut buf), Ok(repr.buffer_len()));
        prop_assert_eq!(buf[NCQ_ERROR_LOG_LEN], 0xA5, "emit wrote past the page");
        let page = &buf[..NCQ_ERROR_LOG_LEN];
        prop_assert_eq!(page.iter().fold(0u8, |a, b| a.wrapping_add(*b)), 0);
        let packet = NcqErrorLogPacket::new_checked(page).unwrap();
        prop_assert_eq!(NcqErrorLogRepr::parse(&packet), Ok(repr));
    }

    #[test]
    fn one_damaged_byte_fails_the_checksum(repr in repr(), at in 0usize..NCQ_ERROR_LOG_LEN, flip in 1u8..=255) {
        let mut page = [0u8; NCQ_ERROR_LOG_LEN];
        repr.emit(&mut page).unwrap();
        page[at] ^= flip;
        prop_assert!(NcqErrorLogRepr::parse(&NcqErrorLogPacket::new_unchecked(&page[..])).is_err());
    }

    #[test]
    fn any_bytes_parse_without_panic(data in proptest::collection::vec(any::<u8>(), 0..=NCQ_ERROR_LOG_LEN)) {
        if let Ok(packet) = NcqErrorLogPacket::new_checked(&data[..]) {
            if let Ok(parsed) = NcqErrorLogRepr::parse(&packet) {
                // Whatever parses re-emits and parses to the same contents.
                let mut again = [0u8; NCQ_ERROR_LOG_LEN];
                parsed.emit(&mut again).unwrap();
                prop_assert_eq!(NcqErrorLogRepr::parse(&NcqErrorLogPacket::new_unchecked(&again[..])), Ok(parsed));
            }
        }
    }
}
