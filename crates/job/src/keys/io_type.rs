//! fio's I/O type keys: the direction mix (`rw` and its modifier, `rwmixread`), direct or buffered I/O and the page-cache hints.

use super::target::trims_a_file;
use super::values::set_if;
use super::values::{accept_without_effect, to_u32};
use super::{ApplyError, JobDraft, KeyDef};
use crate::model::{FadviseHint, JobSpec, RwModifier, TrimMode};
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_percent, parse_size};

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "direct",
        aliases: &[],
        bare: true,
        meaning: "open with O_DIRECT, bypassing the page cache",
        field: "direct",
        path: KeyPath::None,
        apply: |d, v| {
            d.direct = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "invalidate",
        aliases: &[],
        bare: true,
        meaning: "drop the target's cached pages before the job (default 1, as in fio)",
        field: "invalidate",
        path: KeyPath::None,
        apply: |d, v| {
            d.invalidate = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "rw_sequencer",
        aliases: &[],
        bare: false,
        meaning: "what a random mode's `:N` does between its new offsets: sequential (default, go on from the last I/O) or identical (repeat its offset)",
        field: "rw_sequencer",
        path: KeyPath::None,
        apply: |d, v| {
            d.rw_sequencer_identical = Some(match v {
                "sequential" => false,
                "identical" => true,
                _ => return Err(ApplyError::Invalid("use sequential or identical".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "fadvise_hint",
        aliases: &[],
        bare: false,
        meaning: "advise the kernel of the access pattern: 1 (the job's: random or sequential, default), random, sequential, 0 (none)",
        field: "fadvise_hint",
        path: KeyPath::None,
        apply: |d, v| {
            d.fadvise_hint = Some(match v {
                "1" => FadviseHint::JobType,
                "0" => FadviseHint::Off,
                "random" => FadviseHint::Random,
                "sequential" => FadviseHint::Sequential,
                _ => {
                    return Err(ApplyError::Invalid(
                        "use 1 (the job's pattern), 0 (no hint), random or sequential".into(),
                    ))
                }
            });
            Ok(())
        },
    },
    KeyDef {
        name: "buffered",
        aliases: &[],
        bare: true,
        meaning: "the opposite of direct",
        field: "direct",
        path: KeyPath::None,
        apply: |d, v| {
            d.direct = Some(!parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "rw",
        aliases: &["readwrite"],
        bare: false,
        meaning: "read, write, randread, randwrite, rw (readwrite), randrw, trim, randtrim, trimwrite, randtrimwrite",
        field: "rw",
        path: KeyPath::None,
        apply: apply_rw,
    },
    KeyDef {
        name: "rwmixread",
        aliases: &[],
        bare: false,
        meaning: "percent of reads in a rw/randrw job (default 50)",
        field: "rwmixread",
        path: KeyPath::None,
        apply: |d, v| {
            d.rwmixread = Some(parse_percent(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "rwmixwrite",
        aliases: &[],
        bare: false,
        meaning: "percent of writes in a rw/randrw job",
        field: "rwmixread",
        path: KeyPath::None,
        apply: |d, v| {
            d.rwmixread = Some(100 - parse_percent(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "fallocate",
        aliases: &[],
        bare: false,
        meaning: "none, native, posix, keep, truncate, 0 or 1 accepted with a warning: storlab \
                  writes every block of a file it lays out, which allocates it whatever the mode",
        field: "fallocate",
        path: KeyPath::None,
        apply: |d, v| match v {
            // fio 3.33 options.c: "0" is `none` and "1" is `posix`, kept for old job files.
            "none" | "native" | "posix" | "keep" | "truncate" | "0" | "1" => {
                accept_without_effect(d, "fallocate");
                Ok(())
            }
            _ => Err(ApplyError::Invalid(
                "use none, native, posix, keep, truncate, 0 or 1".into(),
            )),
        },
    },
    KeyDef {
        name: "overwrite",
        aliases: &[],
        bare: true,
        meaning: "fio: lay a write job's file out before writing it (accepted, no effect: storlab lays out every file it creates)",
        field: "overwrite",
        path: KeyPath::None,
        apply: |d, v| {
            parse_bool(v)?;
            accept_without_effect(d, "overwrite");
            Ok(())
        },
    },
    KeyDef {
        name: "create_fsync",
        aliases: &[],
        bare: true,
        meaning: "fio: fsync a file after laying it out (default 1; accepted, no effect: storlab always does)",
        field: "create_fsync",
        path: KeyPath::None,
        apply: |d, v| {
            parse_bool(v)?;
            accept_without_effect(d, "create_fsync");
            Ok(())
        },
    },
];

/// The direction/randomness mix named by fio's `rw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    Mixed,
    RandMixed,
    Trim,
    RandTrim,
    TrimWrite,
    RandTrimWrite,
}

impl RwMode {
    pub(super) fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead
                | RwMode::RandWrite
                | RwMode::RandMixed
                | RwMode::RandTrim
                | RwMode::RandTrimWrite
        )
    }

    pub(super) fn trim(self) -> TrimMode {
        match self {
            RwMode::Trim | RwMode::RandTrim => TrimMode::Trim,
            RwMode::TrimWrite | RwMode::RandTrimWrite => TrimMode::TrimWrite,
            _ => TrimMode::None,
        }
    }
}

/// Share of reads in a mixed job when `rwmixread` is not given (fio's default).
pub(super) const RWMIX_READ_DEFAULT_PERCENT: u8 = 50;

/// `rw=MODE[:N]`: fio's offset modifier is a size for a sequential mode (a hole after each
/// I/O) and a count for a random one (a new random offset every N I/Os).
fn apply_rw(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let (v, modifier) = match v.split_once(':') {
        Some((mode, n)) => (mode, Some(n)),
        None => (v, None),
    };
    let mode =
        match v {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "rw" | "readwrite" => RwMode::Mixed,
            "randrw" => RwMode::RandMixed,
            "trim" => RwMode::Trim,
            "randtrim" => RwMode::RandTrim,
            "trimwrite" => RwMode::TrimWrite,
            "randtrimwrite" => RwMode::RandTrimWrite,
            _ => return Err(ApplyError::Invalid(
                "unknown mode; use read, write, randread, randwrite, rw, randrw, trim, randtrim, \
                 trimwrite or randtrimwrite"
                    .into(),
            )),
        };
    d.rw_modifier = match modifier {
        None => None,
        // fio (options.c, `str_rw_cb`) reads a sequential mode's `:N` as a signed size.
        Some(n) if !mode.is_random() && n.trim_start().starts_with('-') => Some(
            RwModifier::BackBytes(parse_size(n.trim_start()[1..].trim_start())?),
        ),
        Some(n) if mode.is_random() => {
            let every = to_u32(leading_count(n)?, n)?;
            if every == 0 {
                return Err(ApplyError::Invalid(
                    "':N' of a random mode counts I/Os per random offset: at least 1".into(),
                ));
            }
            Some(RwModifier::RandomEveryIos(every))
        }
        Some(n) => Some(RwModifier::SkipBytes(parse_size(n)?)),
    };
    d.rw = Some(mode);
    Ok(())
}

/// fio reads a random mode's `:N` with C's `atoi` (options.c, `str_rw_cb`): its leading
/// digits, the rest ignored, so `randread:8k` is every 8 I/Os, not 8192.
fn leading_count(text: &str) -> Result<u64, ApplyError> {
    let text = text.trim_start();
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return Err(ApplyError::Invalid(format!(
            "'{text}' is not a count of I/Os (fio reads the leading digits)"
        )));
    }
    text[..digits]
        .parse()
        .map_err(|_| ApplyError::Invalid(format!("'{text}' is too large a count of I/Os")))
}

impl JobDraft {
    /// `rw` and `rwmixread`: the shares of reads and trims, with a warning when a mix is set for a
    /// mode that does not mix.
    pub(super) fn build_direction(&self, spec: &mut JobSpec) {
        if let Some(rw) = self.rw {
            spec.read_percent = match rw {
                RwMode::Read | RwMode::RandRead => 100,
                // A trim changes the target as a write does: opened for writing, under the
                // same safety rules for block devices.
                RwMode::Write
                | RwMode::RandWrite
                | RwMode::Trim
                | RwMode::RandTrim
                | RwMode::TrimWrite
                | RwMode::RandTrimWrite => 0,
                RwMode::Mixed | RwMode::RandMixed => {
                    self.rwmixread.unwrap_or(RWMIX_READ_DEFAULT_PERCENT)
                }
            };
        }
        spec.trim = self.rw.map_or(TrimMode::None, RwMode::trim);
        let mixed = matches!(self.rw, Some(RwMode::Mixed | RwMode::RandMixed));
        if self.rwmixread.is_some() && !mixed {
            spec.warnings.push(format!(
                "rwmixread/rwmixwrite has no effect with rw={}; use rw=rw or rw=randrw for a mix",
                spec.rw_name()
            ));
        }
    }

    /// `direct`, `invalidate`, `fadvise_hint` and `rw`'s modifier.
    pub(super) fn build_io_type(&self, spec: &mut JobSpec) {
        set_if(&mut spec.direct, self.direct);
        set_if(&mut spec.invalidate, self.invalidate);
        set_if(&mut spec.fadvise_hint, self.fadvise_hint);
        // `rw=write:0` and `rw=randread:1` change nothing, as in fio.
        spec.rw_modifier = match self.rw_modifier {
            Some(
                RwModifier::SkipBytes(0) | RwModifier::BackBytes(0) | RwModifier::RandomEveryIos(1),
            )
            | None => RwModifier::None,
            Some(RwModifier::RandomEveryIos(every))
                if self.rw_sequencer_identical == Some(true) =>
            {
                RwModifier::RepeatEveryIos(every)
            }
            Some(modifier) => modifier,
        };
    }
}

/// A trim of a regular file in storlab's own job (a preset), which storlab does by punching a
/// hole. A fio job's trims fail there as fio's do (its `os_trim` is BLKDISCARD alone: error 25,
/// ENOTTY; the engine's `trim_files_as_fio`).
pub(super) fn note_trim_on_a_file(spec: &mut JobSpec) {
    if trims_a_file(spec) && spec.fio_random.is_none() {
        spec.warnings.push(
            "storlab differs from fio here: on a regular file storlab trims by punching a \
             hole (fallocate PUNCH_HOLE|KEEP_SIZE), where fio 3.33 fails the trim (its \
             os_trim is BLKDISCARD alone: error 25, ENOTTY); use a block device or \
             ioengine=null for fio's behaviour"
                .into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::error::Location;
    use crate::keys::{draft, JobDraft};
    use crate::model::{BlockSizeSpec, RwModifier, TrimMode};

    #[test]
    fn rw_modes_set_read_and_random_shares() {
        let cases = [
            ("read", 100, 0),
            ("write", 0, 0),
            ("randread", 100, 100),
            ("randwrite", 0, 100),
            ("rw", 50, 0),
            ("readwrite", 50, 0),
            ("randrw", 50, 100),
        ];
        for (mode, read, random) in cases {
            let spec = draft(&[("rw", Some(mode)), ("size", Some("1M"))]).unwrap();
            assert_eq!(
                (spec.read_percent, spec.random_percent),
                (read, random),
                "{mode}"
            );
        }
        let spec = draft(&[
            ("rw", Some("randrw")),
            ("rwmixwrite", Some("30")),
            ("percentage_random", Some("80")),
            ("size", Some("1M")),
        ])
        .unwrap();
        assert_eq!((spec.read_percent, spec.random_percent), (70, 80));
        // A fio job draws fio's own streams: a partly random job ends where fio's does, and
        // nothing is said.
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
    }

    #[test]
    fn ignored_mix_settings_warn() {
        let spec = draft(&[
            ("rw", Some("read")),
            ("rwmixread", Some("70")),
            ("percentage_random", Some("50")),
            ("size", Some("1M")),
        ])
        .unwrap();
        assert_eq!(spec.warnings.len(), 2, "{:?}", spec.warnings);
        assert_eq!((spec.read_percent, spec.random_percent), (100, 0));
    }

    #[test]
    fn fadvise_hint_follows_the_job_unless_set() {
        use crate::model::AccessAdvice;
        let advice = |settings: &[(&str, Option<&str>)]| {
            let mut all = settings.to_vec();
            all.push(("size", Some("1M")));
            draft(&all).map(|s| s.access_advice())
        };
        assert_eq!(
            advice(&[("rw", Some("randread"))]),
            Ok(AccessAdvice::Random)
        );
        assert_eq!(
            advice(&[("rw", Some("read"))]),
            Ok(AccessAdvice::Sequential)
        );
        assert_eq!(
            advice(&[("rw", Some("randread")), ("fadvise_hint", Some("0"))]),
            Ok(AccessAdvice::Normal)
        );
        assert_eq!(
            advice(&[("rw", Some("read")), ("fadvise_hint", Some("random"))]),
            Ok(AccessAdvice::Random)
        );
        assert_eq!(
            advice(&[("rw", Some("randrw")), ("fadvise_hint", Some("sequential"))]),
            Ok(AccessAdvice::Sequential)
        );
        assert_eq!(
            draft(&[("fadvise_hint", Some("noreuse"))])
                .unwrap_err()
                .to_string(),
            "--fadvise_hint=noreuse: use 1 (the job's pattern), 0 (no hint), random or sequential"
        );
    }

    /// Regression (issue 24): a job without `rw` did random reads; fio reads sequentially.
    /// A preset keeps storlab's own default, random read.
    #[test]
    fn unset_rw_is_fios_sequential_read_except_in_presets() {
        let spec = draft(&[("size", Some("1M"))]).unwrap();
        assert_eq!((spec.read_percent, spec.random_percent), (100, 0));
        let mut preset = JobDraft::with_storlab_defaults();
        preset.set("size", Some("1M"), &Location::Flag).unwrap();
        let spec = preset.finish("p", &Location::Flag).unwrap();
        assert_eq!((spec.read_percent, spec.random_percent), (100, 100));
    }

    #[test]
    fn the_rw_modifier_is_a_size_for_sequential_modes_and_a_count_for_random_ones() {
        let modifier = |rw: &str| {
            draft(&[("size", Some("1M")), ("rw", Some(rw))])
                .map(|s| s.rw_modifier)
                .map_err(|e| e.to_string())
        };
        assert_eq!(modifier("write:112k"), Ok(RwModifier::SkipBytes(112 << 10)));
        assert_eq!(modifier("randread:8"), Ok(RwModifier::RandomEveryIos(8)));
        // fio's `atoi`: the leading digits (measured: fio 3.33 goes random every 8 I/Os).
        assert_eq!(modifier("randread:8k"), Ok(RwModifier::RandomEveryIos(8)));
        assert_eq!(modifier("read:0"), Ok(RwModifier::None));
        assert_eq!(modifier("randrw:1"), Ok(RwModifier::None));
        assert_eq!(modifier("write:-4k"), Ok(RwModifier::BackBytes(4 << 10)));
        assert_eq!(modifier("read:-0"), Ok(RwModifier::None));
        assert_eq!(
            modifier("read:-100").unwrap_err(),
            "--rw=read:-100: the hole after each I/O must be a multiple of 512 bytes (one sector)"
        );
        assert!(modifier("randread:-8").is_err());
        assert_eq!(
            modifier("write:100").unwrap_err(),
            "--rw=write:100: the hole after each I/O must be a multiple of 512 bytes (one sector)"
        );
        assert!(modifier("randread:0").is_err());
    }

    #[test]
    fn trim_modes_write_as_fio_and_take_the_third_block_size() {
        let job = |rw: &str, bs: &str| {
            // ioengine=null: fio fails a trim of a regular file, so storlab refuses one.
            let keys = [("size", Some("1M")), ("rw", Some(rw)), ("bs", Some(bs))];
            draft(&[&keys[..], &[("ioengine", Some("null"))]].concat()).unwrap()
        };
        for (rw, trim, random) in [
            ("trim", TrimMode::Trim, false),
            ("randtrim", TrimMode::Trim, true),
            ("trimwrite", TrimMode::TrimWrite, false),
            ("randtrimwrite", TrimMode::TrimWrite, true),
        ] {
            let spec = job(rw, "4k");
            assert_eq!(
                (spec.trim, spec.random_percent == 100),
                (trim, random),
                "{rw}"
            );
            assert_eq!(spec.read_percent, 0, "{rw}: opened for writing");
            assert_eq!(spec.rw_name(), rw);
        }
        // fio's `bs=READ,WRITE,TRIM`: the trims take the third.
        let spec = job("trimwrite", "4k,4k,8k");
        assert_eq!(spec.block_size_read, BlockSizeSpec::Fixed(8192));
        assert_eq!(spec.block_size_write, BlockSizeSpec::Fixed(4096));
        // Elsewhere it has no use, as in fio; one value is every direction's.
        assert_eq!(
            job("read", "4k,8k,16k").block_size_read,
            BlockSizeSpec::Fixed(4096)
        );
        assert_eq!(
            job("trim", "16k").block_size_read,
            BlockSizeSpec::Fixed(16384)
        );
        assert_eq!(job("write", "4k").trim, TrimMode::None);
    }
}
