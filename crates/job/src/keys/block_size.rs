//! fio's block size keys: `bs`, `bsrange`, `bssplit` and `blockalign`, and fio's alignment rules.

use super::random::FioGenerator;
use super::values::set_if;
use super::values::single_for_both;
use super::{ApplyError, JobDraft, KeyDef};
use crate::model::TrimMode;
use crate::model::{BlockSizeSpec, JobSpec};
use crate::paths::KeyPath;
use crate::size::{
    parse_block_size_ranges, parse_block_size_splits, parse_block_sizes, parse_size, ValueError,
};

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "bs",
        aliases: &["blocksize"],
        bare: false,
        meaning: "block size, or read,write block sizes",
        field: "bs",
        path: KeyPath::None,
        apply: |d, v| apply_block_sizes_with_trim(d, v, parse_block_sizes),
    },
    KeyDef {
        name: "bsrange",
        aliases: &["blocksize_range"],
        bare: false,
        meaning: "block size range MIN-MAX (uniform, in alignment steps), or read,write ranges",
        field: "bs",
        path: KeyPath::None,
        apply: |d, v| {
            let read_as_fio = match v.contains('/') {
                true => fio_range_of_split(v).map_err(ApplyError::Invalid)?,
                false => v.to_string(),
            };
            apply_block_sizes_with_trim(d, &read_as_fio, parse_block_size_ranges)
        },
    },
    KeyDef {
        name: "bssplit",
        aliases: &[],
        bare: false,
        meaning: "weighted block sizes SIZE/PERCENT:..., or read,write splits",
        field: "bs",
        path: KeyPath::None,
        apply: |d, v| apply_block_sizes_with_trim(d, v, parse_block_size_splits),
    },
    KeyDef {
        name: "blockalign",
        aliases: &["ba"],
        bare: false,
        meaning: "offset alignment (default 4k)",
        field: "blockalign",
        path: KeyPath::None,
        apply: |d, v| {
            d.align_bytes = Some(single_for_both(v, parse_size)?);
            Ok(())
        },
    },
    KeyDef {
        name: "bs_is_seq_rand",
        aliases: &[],
        bare: true,
        meaning: "fio: bs's read sizes for sequential I/O and its write sizes for random I/O, whatever the direction",
        field: "bs_is_seq_rand",
        path: KeyPath::None,
        apply: |d, v| {
            d.bs_is_seq_rand = Some(crate::size::parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "bs_unaligned",
        aliases: &["blocksize_unaligned"],
        bare: true,
        meaning: "fio: a size drawn from bsrange or bssplit is any byte count, not a multiple of the smallest",
        field: "bs_unaligned",
        path: KeyPath::None,
        apply: |d, v| {
            d.bs_unaligned = Some(crate::size::parse_bool(v)?);
            Ok(())
        },
    },
];

fn apply_block_sizes(
    d: &mut JobDraft,
    pair: (Option<BlockSizeSpec>, Option<BlockSizeSpec>),
) -> Result<(), ApplyError> {
    if let Some(read) = pair.0 {
        d.block_size_read = Some(read);
    }
    if let Some(write) = pair.1 {
        d.block_size_write = Some(write);
    }
    Ok(())
}

/// A block-size key's read and write specs, as `crate::size` parses them.
type ReadWriteSizes = (Option<BlockSizeSpec>, Option<BlockSizeSpec>);

/// A block-size key in fio's `read,write,trim` form: the first two values as `read,write`, the
/// third the trims' (fio's parse.c: the first value sets all three directions, the second the
/// writes and the trims, the third the trims). Trims are issued only by the trim modes of `rw`; elsewhere the
/// trim value has no use, as in fio.
fn apply_block_sizes_with_trim(
    d: &mut JobDraft,
    v: &str,
    parse: fn(&str) -> Result<ReadWriteSizes, ValueError>,
) -> Result<(), ApplyError> {
    let parts: Vec<&str> = v.splitn(3, ',').collect();
    if let [read, write, trim] = parts.as_slice() {
        apply_block_sizes(d, parse(&format!("{read},{write}"))?)?;
        if !trim.trim().is_empty() {
            d.block_size_trim = parse(trim)?.0;
        }
        return Ok(());
    }
    let pair = parse(v)?;
    // One value: every direction, trims included; two: the trims take the writes' (parse.c's
    // `!more` branch stores the last value given in every later direction, options.c's
    // `str_split_parse` gives a bssplit's trims the second part).
    d.block_size_trim = match parts.len() {
        1 => pair.0.clone(),
        _ => pair.1.clone().or_else(|| pair.0.clone()),
    };
    apply_block_sizes(d, pair)
}

/// A `bssplit` list given to `bsrange`, read as fio 3.33 reads it: its range parser (parse.c,
/// `FIO_OPT_RANGE`) cuts each direction's value at its first `-` (else `:`) and reads each side
/// with `str_to_decimal`, which keeps the leading number and its unit letters and drops the
/// rest unread. fio's own t0023 has `bsrange=512/25:1k:25:2k:25:4k/25` in a section named
/// `bssplit`, which fio runs as the range 512-1k (a split mistyped, read by accident), and so
/// does storlab: fio input means fio's semantics (ADR 0024). A value with neither cut fio
/// refuses, and so is it here.
fn fio_range_of_split(value: &str) -> Result<String, String> {
    let leading = |side: &str| -> String {
        let digits = side.len() - side.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let unit = side[digits..]
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        side[..digits + unit].to_string()
    };
    let ranges: Result<Vec<String>, String> = value
        .split(',')
        .map(
            |direction| match direction.find('-').or_else(|| direction.find(':')) {
                _ if !direction.contains('/') => Ok(direction.to_string()),
                Some(at) => Ok(format!(
                    "{}-{}",
                    leading(&direction[..at]),
                    leading(&direction[at + 1..])
                )),
                None => Err(format!(
                "{direction}: SIZE/PERCENT is bssplit's form, not a range, and fio 3.33 refuses \
                 it as one; write bsrange=MIN-MAX, or bssplit={value} for a split"
            )),
            },
        )
        .collect();
    Ok(ranges?.join(","))
}

/// fio's `read,write[,trim]` form of a cmdprio key (one value: every direction). fio gives
/// trims no command priority (engines/cmdprio.h: reads and writes only) and storlab's jobs
/// issue none, so a trim value is checked with `parse` and has no use. An empty value leaves
/// its direction unset.
pub(super) fn read_write_dropping_trim<T: Clone>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, ApplyError>,
) -> Result<(Option<T>, Option<T>), ApplyError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let parse_part = |part: &str| -> Result<Option<T>, ApplyError> {
        if part.is_empty() {
            Ok(None)
        } else {
            parse(part).map(Some)
        }
    };
    match parts.as_slice() {
        [both] => match parse_part(both)? {
            Some(value) => Ok((Some(value.clone()), Some(value))),
            None => Err(ApplyError::Invalid("a value is needed".into())),
        },
        [read, write] => Ok((parse_part(read)?, parse_part(write)?)),
        [read, write, trim] => {
            parse_part(trim)?;
            Ok((parse_part(read)?, parse_part(write)?))
        }
        _ => Err(ApplyError::Invalid(format!(
            "'{text}' has more than three values (read,write,trim)"
        ))),
    }
}

/// Where a job of a fio file or fio-style flags relies on a storlab default that makes its I/O
/// differ from fio's, the first such job gets one note saying so and how to get fio's
/// behaviour: the run prints it once, not once per job. The one such default is the 4 KiB
/// alignment of random offsets: fio's `blockalign` defaults to the smallest block size (fio
/// HOWTO, `blockalign`). (storlab's other deliberate default, incompressible data, is fio's
/// default too: fio fills its buffers with random bytes unless asked otherwise.)
pub(crate) fn note_fio_differences(jobs: &mut [JobSpec]) {
    let differing = jobs.iter().position(|job| fio_alignment(job).is_some());
    if let Some(index) = differing {
        let job = &mut jobs[index];
        let fio_align = fio_alignment(job).expect("found above");
        let size = crate::size::format_size(fio_align);
        job.warnings.push(format!(
            "storlab differs from fio here: random offsets are multiples of storlab's {} \
             alignment, where fio aligns them to the smallest block size ({size}); set \
             blockalign={fio_align} for fio's offsets",
            crate::size::format_size(job.align_bytes),
        ));
    }
}

/// fio's alignment of `job`'s random offsets (`blockalign`, by default the smallest block
/// size), when storlab's default alignment puts them elsewhere.
fn fio_alignment(job: &JobSpec) -> Option<u64> {
    if job.align_given || (job.random_percent == 0 && job.random_percent_writes() == 0) {
        return None;
    }
    let smallest = job
        .block_size_read
        .min_bytes()
        .min(job.block_size_write.min_bytes());
    let one_size = match (&job.block_size_read, &job.block_size_write) {
        (BlockSizeSpec::Fixed(read), BlockSizeSpec::Fixed(write)) => read == write,
        _ => false,
    };
    // The random map spaces one fixed size a block apart, rounded up to the alignment
    // (`storlab_runner::offsets`); every other random offset is a multiple of the alignment.
    let storlab_spacing = if one_size && job.random_map && job.fully_random() {
        smallest.next_multiple_of(job.align_bytes.max(1))
    } else {
        job.align_bytes
    };
    (smallest > 0 && storlab_spacing != smallest).then_some(smallest)
}

impl JobDraft {
    /// A replay the job cannot do as fio would: refused at the `read_iolog` key.
    /// fio's own `blockalign` rules (init.c, `fixup_options`), applied once the block sizes
    /// and the random map are known.
    pub(super) fn fio_blockalign_rules(&self, spec: &mut JobSpec, random: bool) {
        // fio input means fio's semantics: `blockalign` defaults to each direction's smallest
        // block (init.c, `fixup_options`: `o->ba[ddir] = o->min_bs[ddir]`), so blocks under
        // 4 KiB go where fio puts them. A preset keeps storlab's 4 KiB.
        let smallest = spec
            .block_size_read
            .min_bytes()
            .min(spec.block_size_write.min_bytes());
        if !self.storlab_rw_default
            && self.align_bytes.is_none()
            && smallest.is_power_of_two()
            && (crate::validate::SECTOR_BYTES..spec.align_bytes).contains(&smallest)
        {
            spec.align_bytes = smallest;
        }
        // fio 3.33 turns the random map off when a random job's `blockalign` is not each
        // direction's smallest block (init.c, `fixup_options`: "Any use of blockalign= turns
        // off randommap"): its places would overlap, and a map over them never fills.
        if let (true, Some(align)) = (random, self.align_bytes) {
            let smallest = [&spec.block_size_read, &spec.block_size_write].map(|bs| bs.min_bytes());
            if smallest.iter().any(|&bs| bs != align) {
                spec.fio_norandommap = true;
                spec.random_map = self.random_generator == Some(FioGenerator::Lfsr);
            }
        }
    }

    /// The block sizes of each direction (a trim's taking the reads') and their alignment, with
    /// fio's rules for it when offsets are `random`.
    pub(super) fn build_block_sizes(&self, spec: &mut JobSpec, random: bool) {
        if let Some(bs) = &self.block_size_read {
            spec.block_size_read = bs.clone();
        }
        if let Some(bs) = &self.block_size_write {
            spec.block_size_write = bs.clone();
        }
        if let (TrimMode::Trim | TrimMode::TrimWrite, Some(trim_bs)) =
            (spec.trim, &self.block_size_trim)
        {
            // A trim job reads nothing: its trims take the read stream and its sizes.
            spec.trim_job_read_min_bytes = Some(spec.block_size_read.min_bytes());
            spec.block_size_read = trim_bs.clone();
        }
        set_if(&mut spec.align_bytes, self.align_bytes);
        spec.align_given = self.align_bytes.is_some();
        spec.bs_is_seq_rand = self.bs_is_seq_rand.unwrap_or(false);
        spec.bs_unaligned = self.bs_unaligned.unwrap_or(false);
        self.fio_blockalign_rules(spec, random);
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::draft;

    #[test]
    fn a_split_given_to_bsrange_is_read_as_fio_reads_it() {
        use crate::model::BlockSizeSpec;
        let read_sizes = |value: &str| {
            draft(&[("size", Some("1M")), ("bsrange", Some(value))]).map(|j| j.block_size_read)
        };
        let split = read_sizes("512/25:1k:25:2k:25:4k/25").unwrap();
        assert_eq!(split, read_sizes("512-1k").unwrap());
        assert!(matches!(split, BlockSizeSpec::Range { .. }), "{split:?}");
        assert_eq!(
            read_sizes("4k/50-8k").unwrap(),
            read_sizes("4k-8k").unwrap()
        );
        let error = read_sizes("4k/50").unwrap_err().to_string();
        assert!(error.contains("fio 3.33 refuses it as one"), "{error}");
        assert_eq!(error.lines().count(), 1);
    }

    #[test]
    fn storlab_alignment_that_moves_offsets_off_fios_is_noted_once() {
        // fio's alignment is the smallest block; storlab's default is fio's under 4 KiB, and
        // 4 KiB steps above: a 6 KiB block is where they part.
        let file = "[global]\nsize=1M\nrw=randread\nbs=6k\n[a]\n[b]\n[c]\nblockalign=2k\n";
        let set = crate::fio::parse_fio_str(file, "j.fio", None).unwrap();
        let noted: Vec<usize> = set
            .jobs
            .iter()
            .map(|j| {
                j.warnings
                    .iter()
                    .filter(|w| w.contains("differs from fio"))
                    .count()
            })
            .collect();
        assert_eq!(noted, [1, 0, 0]);
        assert!(set.jobs[0]
            .warnings
            .iter()
            .any(|w| w.contains("blockalign=6144")));
        // 4 KiB random reads land where fio's would, and so do blocks under 4 KiB.
        let file = "[a]\nsize=1M\nrw=randread\nbsrange=1k-4k\n";
        let set = crate::fio::parse_fio_str(file, "j.fio", None).unwrap();
        assert!(set.jobs[0]
            .warnings
            .iter()
            .all(|w| !w.contains("differs from fio")));
    }
}
