//! Property tests: every `Repr` that emits successfully parses back to itself.

use proptest::prelude::*;
use storlab_wire::ata::{emit_trim_ranges, trim_ranges, TrimRange};
use storlab_wire::bot::{CbwPacket, CbwRepr, CswPacket, CswRepr, CswStatus, Direction};
use storlab_wire::scsi::{
    emit_unmap_parameter_list, AdditionalSense, CdbSize, Command, Lun, SenseFormat, SenseKey,
    SenseRepr, Status, UnmapDescriptor, UnmapParameterList,
};
use storlab_wire::uas::{
    CommandIu, IuRepr, SenseIu, TaskAttribute, TaskManagementFunction, TaskManagementIu,
};
use storlab_wire::InlineBytes;

proptest! {
    #[test]
    fn cbw_round_trips(tag: u32, len: u32, dir_in: bool, lun in 0u8..=15, cdb in proptest::collection::vec(any::<u8>(), 1..=16)) {
        let dir = if dir_in { Direction::In } else { Direction::Out };
        let repr = CbwRepr::new(tag, len, dir, lun, &cdb).unwrap();
        let mut buf = [0xA5u8; 31];
        repr.emit(&mut CbwPacket::new_unchecked(&mut buf[..]));
        prop_assert_eq!(CbwRepr::parse(&CbwPacket::new_unchecked(&buf[..])), Ok(repr));
    }

    #[test]
    fn csw_round_trips(tag: u32, residue: u32, status: u8) {
        let repr = CswRepr { tag, data_residue: residue, status: CswStatus::from(status) };
        let mut buf = [0xA5u8; 13];
        repr.emit(&mut CswPacket::new_unchecked(&mut buf[..]));
        prop_assert_eq!(CswRepr::parse(&CswPacket::new_unchecked(&buf[..])), Ok(repr));
    }

    #[test]
    fn read_write_round_trip(lba: u64, blocks: u32, fua: bool, dpo: bool, write: bool) {
        let size = if lba <= u64::from(u32::MAX) && blocks <= 0xffff { CdbSize::Ten } else { CdbSize::Sixteen };
        let cmd = if write { Command::Write { lba, blocks, fua, dpo, size } } else { Command::Read { lba, blocks, fua, dpo, size } };
        let mut buf = [0xA5u8; 16];
        let n = cmd.emit(&mut buf).unwrap();
        prop_assert_eq!(Command::parse(&buf[..n]), Ok(cmd));
    }

    #[test]
    fn any_parsed_cdb_reemits_and_reparses(bytes in proptest::collection::vec(any::<u8>(), 0..20)) {
        if let Ok(cmd) = Command::parse(&bytes) {
            let mut buf = [0u8; 16];
            let n = cmd.emit(&mut buf).unwrap();
            prop_assert_eq!(Command::parse(&buf[..n]), Ok(cmd));
        }
    }

    #[test]
    fn uas_ius_round_trip(tag: u16, prio in 0u8..16, attr in 0u8..8, lun: u16, cdb in proptest::collection::vec(any::<u8>(), 16..=64), func: u8, managed: u16) {
        let cdb_len = 16 + (cdb.len() - 16) / 4 * 4;
        let mut c = CommandIu::new(tag, Lun::from_index(lun), &cdb[..cdb_len]).unwrap();
        c.priority = prio;
        c.task_attribute = TaskAttribute::from(attr);
        for iu in [
            IuRepr::Command(c),
            IuRepr::TaskManagement(TaskManagementIu { tag, function: TaskManagementFunction::from(func), tag_of_managed_task: managed, lun: Lun::from_index(lun) }),
            IuRepr::Sense(SenseIu { tag, status_qualifier: managed, status: Status::from(func), sense: InlineBytes::new(&cdb).unwrap() }),
            IuRepr::ReadReady { tag },
            IuRepr::WriteReady { tag },
        ] {
            let mut buf = [0xA5u8; 128];
            let n = iu.emit_into(&mut buf).unwrap();
            prop_assert_eq!(IuRepr::parse_bytes(&buf[..n]), Ok(iu));
        }
    }

    #[test]
    fn sense_round_trips(key in 0u8..16, asc: u8, ascq: u8, info: Option<u32>, descriptor: bool, deferred: bool) {
        let repr = SenseRepr {
            format: if descriptor { SenseFormat::Descriptor } else { SenseFormat::Fixed },
            deferred,
            key: SenseKey::from(key),
            additional: AdditionalSense::from_parts(asc, ascq),
            information: info.map(u64::from),
            ata_status: None,
        };
        let mut buf = [0xA5u8; 64];
        let n = repr.emit(&mut buf).unwrap();
        prop_assert_eq!(SenseRepr::parse(&buf[..n]), Ok(repr));
    }

    #[test]
    fn trim_and_unmap_lists_round_trip(ranges in proptest::collection::vec((0u64..(1 << 48), 1u16..), 0..100)) {
        let trims: Vec<TrimRange> = ranges.iter().map(|&(lba, sectors)| TrimRange { lba, sectors }).collect();
        let mut buf = vec![0xA5u8; 1024];
        let n = emit_trim_ranges(&trims, &mut buf).unwrap();
        prop_assert!(trim_ranges(&buf[..n]).eq(trims.iter().copied()));
        let unmaps: Vec<UnmapDescriptor> = ranges.iter().map(|&(lba, b)| UnmapDescriptor { lba, blocks: u32::from(b) }).collect();
        let mut buf = vec![0xA5u8; 8 + 16 * unmaps.len()];
        let n = emit_unmap_parameter_list(&unmaps, &mut buf).unwrap();
        let list = UnmapParameterList::parse(&buf[..n]).unwrap();
        prop_assert!(list.descriptors().eq(unmaps.iter().copied()));
    }
}
