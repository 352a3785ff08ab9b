//! fio's latency histogram buckets (`plat_val_to_idx`/`plat_idx_to_val` in fio's stat.h and
//! stat.c), which fio's `--output-format=json+` prints as `bins` keyed by each bucket's value:
//! exact below 128 ns, then 64 buckets per power of two, each keyed by its midpoint.

/// Bits of a value kept exactly per group (fio's `FIO_IO_U_PLAT_BITS`).
const PLAT_BITS: u32 = 6;
/// Buckets per group (fio's `FIO_IO_U_PLAT_VAL`).
const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Groups (fio's `FIO_IO_U_PLAT_GROUP_NR`): values up to about 2^34 ns (17 s) are told apart;
/// longer ones share the last bucket.
const PLAT_GROUP_NR: u64 = 29;
/// Buckets in all (fio's `FIO_IO_U_PLAT_NR`).
const PLAT_NR: u64 = PLAT_GROUP_NR * PLAT_VAL;

/// fio's bucket index of a latency in ns.
pub fn fio_bucket_index(value_ns: u64) -> u64 {
    let msb = 63 - value_ns.max(1).leading_zeros();
    if msb <= PLAT_BITS {
        return value_ns;
    }
    let error_bits = msb - PLAT_BITS;
    let base = u64::from(error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (value_ns >> error_bits);
    (base + offset).min(PLAT_NR - 1)
}

/// The value fio prints for bucket `index`: the index itself in the exact range, else the
/// middle of the bucket's range (fio rounds `base + (k + 0.5) * 2^error_bits` down).
pub fn fio_bucket_value_ns(index: u64) -> u64 {
    if index < (PLAT_VAL << 1) {
        return index;
    }
    let error_bits = (index >> PLAT_BITS) - 1;
    let base = 1u64 << (error_bits + u64::from(PLAT_BITS));
    let k = index % PLAT_VAL;
    // (k + 0.5) * 2^error_bits, in integers: error_bits >= 1 here, so the half is whole.
    base + (k << error_bits) + (1 << (error_bits - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_match_fios_values() {
        // fio 3.33 json+ of a read job printed bins "804", "812", "820", "828" (8 ns wide).
        for value in [804, 812, 820, 828] {
            assert_eq!(fio_bucket_value_ns(fio_bucket_index(value)), value);
        }
        assert_eq!(fio_bucket_index(100), 100);
        assert_eq!(fio_bucket_value_ns(fio_bucket_index(130)), 131);
        assert_eq!(fio_bucket_index(u64::MAX), PLAT_NR - 1);
        // Every bucket's value falls back into its own bucket.
        for index in 0..PLAT_NR {
            assert_eq!(
                fio_bucket_index(fio_bucket_value_ns(index)),
                index,
                "{index}"
            );
        }
    }
}
