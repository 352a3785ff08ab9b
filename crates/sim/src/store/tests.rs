//! Unit tests of the payload store: reads return what was written, budgets, trims, and the
//! generated data it keeps as records instead of bytes.

use super::*;
use proptest::prelude::*;
use storlab_pattern::{fill, fill_verifiable, stamp};

/// A queue of restamped slot buffers written in order, once comparing every byte and once
/// handing back each slot's last match: the same store, reads alike, comparisons skipped;
/// a match handed back for bytes the index does not lead to changes nothing.
#[test]
fn handed_back_matches_leave_the_store_the_full_comparison_leaves() {
    const SLOT: usize = 128 << 10;
    let slots: Vec<Vec<u8>> = (0..4u64)
        .map(|seed| {
            let mut b = vec![0u8; SLOT];
            fill(&mut b, Pattern::Random, seed);
            b
        })
        .collect();
    let mut checked = Store::new();
    let mut fast = Store::new();
    let mut known: Vec<Option<SourceMatch>> = vec![None; slots.len()];
    for write in 0..64u64 {
        let slot = (write % 4) as usize;
        let offset = write * SLOT as u64;
        let mut data = slots[slot].clone();
        stamp(&mut data, Pattern::Random, offset, write);
        checked.write(offset, &data);
        known[slot] = fast.write_known(offset, &data, known[slot]);
    }
    // A stale match on other bytes: its source is not the candidate these bytes lead to.
    let mut other = vec![0u8; SLOT];
    fill(&mut other, Pattern::Random, 99);
    checked.write(3 << 20, &other);
    fast.write_known(3 << 20, &other, known[0]);
    assert_eq!(checked.state_digest(), fast.state_digest());
    assert_eq!(checked.known_tail_writes(), 0);
    assert_eq!(
        fast.known_tail_writes(),
        60,
        "all but each slot's first write"
    );
    let (mut a, mut b) = (vec![0u8; 9 << 20], vec![0u8; 9 << 20]);
    checked.read(0, &mut a);
    fast.read(0, &mut b);
    assert!(a == b);
}

#[test]
fn reads_back_what_was_written_across_chunks_and_zeros_elsewhere() {
    let mut store = Store::new();
    let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + 3) as u8).collect();
    store.write(1000, &data);
    let mut out = vec![0xAAu8; 12_000];
    store.read(0, &mut out);
    assert!(out[..1000].iter().all(|&b| b == 0));
    assert_eq!(&out[1000..11_000], &data[..]);
    assert!(out[11_000..].iter().all(|&b| b == 0));
    assert_eq!(store.held_bytes(), 10_000, "foreign data is kept as bytes");
    assert_eq!(store.stored_bytes(), 10_000);
}

#[test]
fn read_into_skips_zeroing_a_known_zero_buffer_and_reports_zeros() {
    let mut store = Store::new();
    // A buffer the caller claims is zero is left alone where nothing was written.
    let mut out = vec![0u8; 2 * CHUNK_BYTES];
    assert!(store.read_into(0, &mut out, true));
    let mut dirty = vec![7u8; CHUNK_BYTES];
    assert!(store.read_into(0, &mut dirty, false));
    assert!(dirty.iter().all(|&b| b == 0), "unknown buffers are zeroed");
    store.write(CHUNK_BYTES as u64 + 5, &[9u8; 3]);
    assert!(
        !store.read_into(0, &mut out, true),
        "stored bytes were copied"
    );
    assert_eq!(&out[CHUNK_BYTES + 4..CHUNK_BYTES + 9], &[0, 9, 9, 9, 0]);
    let mut dirty = vec![7u8; 2 * CHUNK_BYTES];
    store.read_into(0, &mut dirty, false);
    assert_eq!(dirty, out);
}

#[test]
fn past_its_budget_the_store_keeps_what_it_has_and_counts_what_it_drops() {
    let mut store = Store::with_budget(2 * CHUNK_BYTES as u64);
    store.write(0, &[1u8; 2 * CHUNK_BYTES]);
    store.write(2 * CHUNK_BYTES as u64, &[2u8; 3 * CHUNK_BYTES]);
    assert_eq!(store.stored_bytes(), 2 * CHUNK_BYTES as u64);
    assert_eq!(store.dropped_bytes(), 3 * CHUNK_BYTES as u64);
    let mut out = vec![9u8; 5 * CHUNK_BYTES];
    store.read(0, &mut out);
    assert!(out[..2 * CHUNK_BYTES].iter().all(|&b| b == 1));
    assert!(out[2 * CHUNK_BYTES..].iter().all(|&b| b == 0));
    // A trim frees room for new data.
    store.trim(0, 2 * CHUNK_BYTES as u64);
    assert_eq!((store.stored_bytes(), store.held_bytes()), (0, 0));
    store.write(4 * CHUNK_BYTES as u64, &[4u8; CHUNK_BYTES]);
    store.read(4 * CHUNK_BYTES as u64, &mut out[..CHUNK_BYTES]);
    assert!(out[..CHUNK_BYTES].iter().all(|&b| b == 4));
    assert_eq!(store.budget_bytes(), 2 * CHUNK_BYTES as u64);
}

#[test]
fn trim_forgets_exactly_the_range() {
    let mut store = Store::new();
    store.write(0, &[1u8; 3 * CHUNK_BYTES]);
    store.trim(100, 2 * CHUNK_BYTES as u64);
    let mut out = vec![0u8; 3 * CHUNK_BYTES];
    store.read(0, &mut out);
    assert!(out[..100].iter().all(|&b| b == 1));
    assert!(out[100..100 + 2 * CHUNK_BYTES].iter().all(|&b| b == 0));
    assert!(out[100 + 2 * CHUNK_BYTES..].iter().all(|&b| b == 1));
}

/// A sequential fill as the runner makes it (slot buffers filled once, stamped per write)
/// followed by verify writes: the store holds the slot buffers once and a few extent
/// records, however many bytes were written; the old per-chunk store held every byte.
#[test]
fn generated_data_costs_records_not_bytes() {
    const WRITE_BYTES: usize = 128 * 1024;
    const SLOTS: usize = 4;
    const WRITES: usize = 2048; // 256 MiB
    let mut store = Store::with_budget(16 << 20);
    let mut slots: Vec<Vec<u8>> = (0..SLOTS)
        .map(|slot| {
            let mut buf = vec![0u8; WRITE_BYTES];
            fill(&mut buf, Pattern::Random, 42 ^ ((slot as u64) << 32));
            buf
        })
        .collect();
    for write in 0..WRITES {
        let offset = (write * WRITE_BYTES) as u64;
        let buf = &mut slots[write % SLOTS];
        stamp(buf, Pattern::Random, offset, write as u64);
        store.write(offset, buf);
    }
    assert_eq!(store.dropped_bytes(), 0);
    assert_eq!(store.held_bytes(), (SLOTS * WRITE_BYTES) as u64);
    assert_eq!(store.stored_bytes(), (WRITES * WRITE_BYTES) as u64);
    assert_eq!(
        store.extent_count(),
        1,
        "one sequence of writes from 4 slots"
    );
    // Verify writes of 64 KiB in 4 KiB granules: regenerated, nothing held.
    let mut verify = vec![0u8; 65536];
    for write in 0..256u64 {
        let offset = write * 1_048_576 + 4096;
        fill_verifiable(
            &mut verify,
            Pattern::Random,
            7,
            offset,
            4096,
            write as u32 + 1,
        );
        store.write(offset, &verify);
    }
    assert_eq!(store.held_bytes(), (SLOTS * WRITE_BYTES) as u64);
    // Spot-check a read across a stamped write, a verify write and the next write.
    let mut out = vec![0u8; 3 * WRITE_BYTES];
    let at = 1_048_576 * 100;
    store.read(at, &mut out);
    let mut expected = slots[(at as usize / WRITE_BYTES) % SLOTS].clone();
    stamp(&mut expected, Pattern::Random, at, at / WRITE_BYTES as u64);
    fill_verifiable(&mut verify, Pattern::Random, 7, at + 4096, 4096, 101);
    expected[4096..4096 + 65536].copy_from_slice(&verify);
    assert_eq!(&out[..WRITE_BYTES], &expected[..]);
}

/// A driver that splits a verify write inside a granule (a 128 KiB block sent as two
/// 64 KiB transfers, as a BOT driver with 64 KiB transfers does): the second part has no
/// header at its start, and is still the verify write's, regenerated, nothing held.
#[test]
fn a_verify_write_split_mid_granule_is_regenerated() {
    const BLOCK: usize = 128 << 10;
    let mut store = Store::with_budget(1 << 20);
    let mut block = vec![0u8; 2 * BLOCK];
    fill_verifiable(&mut block, Pattern::Random, 11, 1 << 20, BLOCK, 17);
    for (i, half) in block.chunks(BLOCK / 2).enumerate() {
        store.write((1 << 20) + (i * BLOCK / 2) as u64, half);
    }
    assert_eq!(store.held_bytes(), 0, "nothing kept as bytes");
    assert_eq!(store.dropped_bytes(), 0);
    assert_eq!(store.extent_count(), 1, "one verify write");
    let mut out = vec![0u8; 2 * BLOCK];
    store.read(1 << 20, &mut out);
    assert!(out == block, "read back as written");
    // Bytes that are not the write's continuation are not taken for it.
    let mut other = block[BLOCK / 2..BLOCK].to_vec();
    other[100] ^= 1;
    store.write((1 << 20) + (BLOCK / 2) as u64, &other);
    assert_eq!(store.held_bytes(), other.len() as u64);
}

/// One step of the model test.
#[derive(Clone, Debug)]
enum Op {
    /// A stamped write from slot `slot` (of a few) at sector `sector`, `sectors` long,
    /// starting `skip` sectors into the slot (a later part of a split command: unstamped).
    Generated {
        slot: usize,
        sector: u64,
        sectors: usize,
        skip: usize,
    },
    /// A verify write of whole granules.
    Verifiable {
        sector: u64,
        granules: usize,
        generation: u32,
    },
    /// Consecutive stamped writes of `sectors` each (a sequential job), from the slots
    /// `slots` names in turn.
    Run {
        sector: u64,
        sectors: usize,
        slots: Vec<usize>,
    },
    /// Bytes from nowhere (foreign data), at any byte offset.
    Foreign {
        offset: u64,
        len: usize,
        seed: u64,
    },
    /// Foreign data of one repeated byte after an 8-byte header (many sources share an
    /// index key).
    Flat {
        sector: u64,
        sectors: usize,
        byte: u8,
        header: u64,
    },
    Trim {
        offset: u64,
        len: u64,
    },
}

const MODEL_BYTES: usize = 256 * 1024;
const SECTOR: usize = 512;
const SLOT_BYTES: usize = 16 * 1024;
const GRANULE: usize = 1024;

fn op() -> impl Strategy<Value = Op> {
    let sectors = (MODEL_BYTES / SECTOR) as u64;
    prop_oneof![
        4 => (0..3usize, 0..sectors, 1..=32usize, 0..4usize).prop_map(
            |(slot, sector, sectors, skip)| Op::Generated { slot, sector, sectors, skip }
        ),
        2 => (0..sectors, 1..=8usize, 1..5u32).prop_map(|(sector, granules, generation)| {
            Op::Verifiable { sector: sector & !1, granules, generation }
        }),
        2 => (0..sectors, 1..=16usize, prop::collection::vec(0..3usize, 1..12))
            .prop_map(|(sector, sectors, slots)| Op::Run { sector, sectors, slots }),
        1 => (0..MODEL_BYTES as u64, 1..9000usize, any::<u64>())
            .prop_map(|(offset, len, seed)| Op::Foreign { offset, len, seed }),
        1 => (0..sectors, 1..=16usize, 0..3u8, 0..4u64)
            .prop_map(|(sector, sectors, byte, header)| Op::Flat { sector, sectors, byte, header }),
        1 => (0..MODEL_BYTES as u64, 1..40_000u64).prop_map(|(offset, len)| Op::Trim { offset, len }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Random writes, overwrites and trims of generated and foreign data read back exactly
    /// as a plain byte array holds them, over any range.
    #[test]
    fn reads_match_a_byte_array(ops in prop::collection::vec(op(), 1..60),
                                reads in prop::collection::vec((0..MODEL_BYTES, 1..20_000usize), 4)) {
        let mut store = Store::with_budget(1 << 20);
        let mut model = vec![0u8; MODEL_BYTES + 128 * 1024];
        let mut slots: Vec<Vec<u8>> = (0..3)
            .map(|slot| {
                let mut buf = vec![0u8; SLOT_BYTES];
                fill(&mut buf, Pattern::Random, 5 + slot as u64);
                buf
            })
            .collect();
        let mut counter = 0u64;
        for op in &ops {
            counter += 1;
            let (offset, data) = match *op {
                Op::Generated { slot, sector, sectors, skip } => {
                    let offset = sector * SECTOR as u64;
                    let buf = &mut slots[slot];
                    stamp(buf, Pattern::Random, offset, counter);
                    let len = (sectors * SECTOR).min(SLOT_BYTES - skip * SECTOR);
                    (offset, buf[skip * SECTOR..skip * SECTOR + len].to_vec())
                }
                Op::Verifiable { sector, granules, generation } => {
                    let offset = sector * SECTOR as u64;
                    let mut buf = vec![0u8; granules * GRANULE];
                    fill_verifiable(&mut buf, Pattern::Compressible(30), 11, offset, GRANULE, generation);
                    (offset, buf)
                }
                Op::Run { sector, sectors, slots: ref picks } => {
                    let len = sectors * SECTOR;
                    for (k, &slot) in picks.iter().enumerate() {
                        let offset = (sector * SECTOR as u64) + (k * len) as u64;
                        let buf = &mut slots[slot];
                        stamp(buf, Pattern::Random, offset, counter);
                        counter += 1;
                        store.write(offset, &buf[..len]);
                        model[offset as usize..offset as usize + len].copy_from_slice(&buf[..len]);
                    }
                    continue;
                }
                Op::Flat { sector, sectors, byte, header } => {
                    let mut buf = vec![byte; sectors * SECTOR];
                    buf[..8].copy_from_slice(&header.to_le_bytes());
                    (sector * SECTOR as u64, buf)
                }
                Op::Foreign { offset, len, seed } => {
                    let mut buf = vec![0u8; len];
                    fill(&mut buf, Pattern::Random, seed);
                    (offset, buf)
                }
                Op::Trim { offset, len } => {
                    let end = (offset + len).min(model.len() as u64);
                    store.trim(offset, end - offset);
                    model[offset as usize..end as usize].fill(0);
                    continue;
                }
            };
            store.write(offset, &data);
            model[offset as usize..offset as usize + data.len()].copy_from_slice(&data);
        }
        prop_assert_eq!(store.dropped_bytes(), 0);
        let mut whole = vec![0xA5u8; model.len()];
        store.read(0, &mut whole);
        prop_assert!(whole == model, "whole-drive read differs");
        for (offset, len) in reads {
            let mut out = vec![0x5Au8; len];
            store.read(offset as u64, &mut out);
            prop_assert!(out[..] == model[offset..offset + len], "read {}+{}", offset, len);
        }
        // Everything trimmed: nothing held.
        store.trim(0, model.len() as u64);
        prop_assert_eq!(store.stored_bytes(), 0);
        prop_assert_eq!(store.held_bytes(), 0);
        prop_assert_eq!(store.extent_count(), 0);
    }
}
