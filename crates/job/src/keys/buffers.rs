//! fio's buffers and memory keys: what the written data is (patterns, compressibility, dedupe).

use super::target::on_a_file;
use super::values::set_if;
use super::{ApplyError, JobDraft, KeyDef};
use crate::model::DedupeSpec;
use crate::model::JobSpec;
use crate::model::{DataPattern, DedupeMode, FioBufferFill};
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_percent};

/// The buffer keys as set: what the writes hold.
#[derive(Clone, Debug, Default)]
pub(super) struct BuffersDraft {
    pub(super) data_pattern: Option<DataPattern>,
    pub(super) pattern: Option<Vec<u8>>,
    pub(super) dedupe_percentage: Option<u8>,
    pub(super) refill_buffers: Option<bool>,
    /// `buffer_compress_percentage` and `zero_buffers` as given (fio keeps them apart;
    /// `data_pattern` holds whichever came last).
    pub(super) compress_percentage: Option<u8>,
    pub(super) zero_buffers: Option<bool>,
    /// fio's `scramble_buffers` as given (fio's default 1: each write stamped with the clock).
    pub(super) scramble_buffers: Option<bool>,
    pub(super) dedupe_mode: Option<DedupeMode>,
    pub(super) dedupe_working_set_percentage: Option<u8>,
    pub(super) dedupe_global: Option<bool>,
}

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "data_pattern",
        aliases: &[],
        bare: false,
        meaning: "storlab: data written: random, zeros or compressible:PERCENT",
        field: "data_pattern",
        path: KeyPath::None,
        apply: apply_data_pattern,
    },
    KeyDef {
        name: "buffer_compress_percentage",
        aliases: &[],
        bare: false,
        meaning: "make written data this percent compressible (0 = random)",
        field: "data_pattern",
        path: KeyPath::None,
        apply: |d, v| {
            let percent = parse_percent(v)?;
            d.buffers.compress_percentage = Some(percent);
            d.buffers.data_pattern = Some(if percent == 0 {
                DataPattern::Random
            } else {
                DataPattern::Compressible(percent)
            });
            Ok(())
        },
    },
    KeyDef {
        name: "zero_buffers",
        aliases: &[],
        bare: true,
        meaning: "write zeros",
        field: "data_pattern",
        path: KeyPath::None,
        apply: |d, v| {
            d.buffers.zero_buffers = Some(parse_bool(v)?);
            if parse_bool(v)? {
                d.buffers.data_pattern = Some(DataPattern::Zeros);
            }
            Ok(())
        },
    },
    KeyDef {
        name: "scramble_buffers",
        aliases: &[],
        bare: true,
        meaning: "fio: stamp each write's buffer with the clock (default 1); 0 writes the buffers as filled at the start",
        field: "scramble_buffers",
        path: KeyPath::None,
        apply: |d, v| {
            d.buffers.scramble_buffers = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "refill_buffers",
        aliases: &[],
        bare: true,
        meaning: "refill every write's buffer from fio's buffer stream, as fio (a fio job)",
        field: "refill_buffers",
        path: KeyPath::None,
        apply: |d, v| {
            d.buffers.refill_buffers = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "dedupe_percentage",
        aliases: &[],
        bare: false,
        meaning: "this percent of write buffers repeat earlier content, as fio's buffers do",
        field: "dedupe_percentage",
        path: KeyPath::None,
        apply: |d, v| {
            d.buffers.dedupe_percentage = Some(parse_percent(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "dedupe_mode",
        aliases: &[],
        bare: false,
        meaning: "what a dedupe buffer repeats: repeat (the stream's saved state) or working_set",
        field: "dedupe_mode",
        path: KeyPath::None,
        apply: |d, v| {
            d.buffers.dedupe_mode = Some(match v {
                "repeat" => DedupeMode::Repeat,
                "working_set" => DedupeMode::WorkingSet,
                _ => return Err(ApplyError::Invalid("use repeat or working_set".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "dedupe_working_set_percentage",
        aliases: &[],
        bare: false,
        meaning: "dedupe_mode=working_set: the percent of size whose buffers repeats come from",
        field: "dedupe_working_set_percentage",
        path: KeyPath::None,
        apply: |d, v| {
            d.buffers.dedupe_working_set_percentage = Some(parse_percent(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "dedupe_global",
        aliases: &[],
        bare: true,
        meaning: "dedupe_mode=working_set: jobs repeat each other's buffers",
        field: "dedupe_global",
        path: KeyPath::None,
        apply: |d, v| {
            d.buffers.dedupe_global = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "buffer_pattern",
        aliases: &[],
        bare: false,
        meaning: "write these bytes repeated: 0x hex, \"string\" and decimal elements, as fio",
        field: "buffer_pattern",
        path: KeyPath::None,
        apply: |d, v| {
            d.buffers.pattern = Some(parse_pattern(v)?);
            Ok(())
        },
    },
];

/// `data_pattern=compressible:N`.
const COMPRESSIBLE_PREFIX: &str = "compressible:";

fn apply_data_pattern(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    d.buffers.data_pattern = Some(match v {
        "random" => DataPattern::Random,
        "zeros" | "zero" => DataPattern::Zeros,
        _ => match v.strip_prefix(COMPRESSIBLE_PREFIX) {
            Some(percent) => DataPattern::Compressible(parse_percent(percent)?),
            None => {
                return Err(ApplyError::Invalid(
                    "unknown pattern; use random, zeros or compressible:PERCENT".into(),
                ))
            }
        },
    });
    Ok(())
}

/// fio's largest pattern (lib/pattern.h, `MAX_PATTERN_SIZE`).
const PATTERN_MAX_BYTES: usize = 512;

/// A fio data pattern (lib/pattern.c, `parse_and_fill_pattern`): elements written one after
/// another without separators, each `0x` hex bytes (`0xabc` is `0a bc`; `0xff0x14` is two
/// elements), a `"string"`, or a decimal number (fio's `strtol`: the value's low 32 bits as
/// little-endian bytes without the high zero bytes, `0` one zero byte, `-12` `f4 ff ff ff`).
/// fio's `'file'` (the pattern read from a file) and `%o` (the offset) are refused.
fn parse_pattern(text: &str) -> Result<Vec<u8>, ApplyError> {
    Ok(parse_pattern_elements(text, false)?.0)
}

/// Bytes of fio's `%o` in a pattern: the block's offset as a 64-bit number.
const PATTERN_OFFSET_BYTES: usize = 8;

/// [`parse_pattern`], and with `offsets` fio's `%o`: 8 bytes where each block's offset goes
/// (little-endian), returned as their positions.
pub(super) fn parse_pattern_elements(
    text: &str,
    offsets: bool,
) -> Result<(Vec<u8>, Vec<usize>), ApplyError> {
    let text = text.trim();
    let mut offset_positions = Vec::new();
    let mut bytes = Vec::new();
    let mut rest = text;
    while let Some(first) = rest.chars().next() {
        rest = match first {
            '"' => {
                let Some(end) = rest[1..].find('"') else {
                    return Err(ApplyError::Invalid(format!(
                        "'{rest}': the string has no closing quote"
                    )));
                };
                bytes.extend_from_slice(&rest.as_bytes()[1..1 + end]);
                &rest[end + 2..]
            }
            '\'' => {
                return Err(ApplyError::Unsupported(format!(
                    "'{rest}': fio reads a pattern in single quotes from that file; storlab does \
                     not read pattern files: give the bytes as 0x hex or a \"string\""
                )))
            }
            '%' if offsets && rest.starts_with("%o") => {
                offset_positions.push(bytes.len());
                bytes.extend([0; PATTERN_OFFSET_BYTES]);
                &rest[2..]
            }
            '%' => {
                return Err(ApplyError::Unsupported(format!(
                    "'{rest}': fio's %o (each block's offset) is supported in verify_pattern only"
                )))
            }
            _ => match hex_element(rest) {
                Some((element, after)) => {
                    bytes.extend(element);
                    after
                }
                None => {
                    let (element, after) = decimal_element(rest)?;
                    bytes.extend(element);
                    after
                }
            },
        };
        if bytes.len() > PATTERN_MAX_BYTES {
            break;
        }
    }
    if bytes.is_empty() || bytes.len() > PATTERN_MAX_BYTES {
        return Err(ApplyError::Invalid(format!(
            "a pattern has 1 to {PATTERN_MAX_BYTES} bytes"
        )));
    }
    Ok((bytes, offset_positions))
}

/// A `0x` element at the start of `text` and what follows it (fio's `parse_number`, hex part),
/// or `None` when `text` does not start with `0x` and a hex digit.
fn hex_element(text: &str) -> Option<(Vec<u8>, &str)> {
    let digits_and_rest = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))?;
    let mut len = digits_and_rest
        .bytes()
        .take_while(u8::is_ascii_hexdigit)
        .count();
    if len == 0 {
        return None;
    }
    // fio looks back: in `0xff0x14` the `0` before `x14` starts the next element.
    let after = &digits_and_rest.as_bytes()[len..];
    if len > 1 && matches!(after.first(), Some(b'x' | b'X')) {
        len -= 1;
    }
    let digits = &digits_and_rest[..len];
    // An odd number of digits: the first byte is the first digit alone.
    let padded = if len % 2 == 1 {
        format!("0{digits}")
    } else {
        digits.to_string()
    };
    let element = padded
        .as_bytes()
        .chunks(2)
        .map(|pair| {
            let pair = std::str::from_utf8(pair).expect("ASCII hex digits");
            u8::from_str_radix(pair, 16).expect("checked hex digits")
        })
        .collect();
    Some((element, &digits_and_rest[len..]))
}

/// A decimal element at the start of `text` and what follows it (fio's `parse_number`,
/// decimal part).
fn decimal_element(text: &str) -> Result<(Vec<u8>, &str), ApplyError> {
    let sign_len = usize::from(text.starts_with('-'));
    let digits_len = text[sign_len..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    let end = sign_len + digits_len;
    if digits_len == 0 {
        return Err(ApplyError::Invalid(format!(
            "'{text}' is not a pattern element: 0x hex bytes, a \"string\" or a decimal number"
        )));
    }
    let value: i64 = text[..end]
        .parse()
        .map_err(|_| ApplyError::Invalid(format!("'{}' is out of range", &text[..end])))?;
    let mut element = Vec::new();
    if value == 0 {
        element.push(0);
    } else {
        // fio keeps the value's low 32 bits (`(unsigned int)lval`).
        let mut low = value as u32;
        while low != 0 {
            element.push((low & 0xff) as u8);
            low >>= 8;
        }
    }
    Ok((element, &text[end..]))
}

impl JobDraft {
    /// fio 3.33 aborts a job whose `dedupe_mode=working_set` holds no whole block under
    /// `random_generator=tausworthe64` ("munmap_chunk(): invalid pointer", exit 134, every
    /// run, after its I/O; seed 5353: `size=64k`, 5%; at 256k, or with tausworthe, it runs):
    /// refused rather than run where fio cannot.
    pub(super) fn check_dedupe_generator(
        &self,
        spec: &JobSpec,
        job_location: &crate::error::Location,
    ) -> Result<(), crate::error::JobError> {
        // An empty working set: dedupe.c sizes it from `size` as written and the smallest
        // write (a job that only reads gets one too; storlab refuses an empty one that writes).
        let block_bytes = spec.block_size_write.min_bytes().max(1);
        let working_set = spec.dedupe.is_some_and(|d| {
            d.mode == DedupeMode::WorkingSet
                && d.size_as_written_bytes
                    .is_some_and(|size| d.working_set_blocks(size, block_bytes) == 0)
        });
        let tausworthe64 = spec.fio_random.as_ref().is_some_and(|f| f.tausworthe64);
        if self.storlab_rw_default || !(working_set && tausworthe64) {
            return Ok(());
        }
        Err(self.refused_at_key(
            "dedupe_mode",
            job_location,
            "with random_generator=tausworthe64 and a working set that holds no whole block \
             fio 3.33's job aborts (munmap_chunk(): invalid pointer, exit 134, every run); use \
             random_generator=tausworthe, a larger dedupe_working_set_percentage, or \
             dedupe_mode=repeat"
                .to_string(),
        ))
    }

    /// What the writes hold: the data pattern, `buffer_pattern`, and dedupe (`refill_buffers`
    /// included).
    pub(super) fn build_buffers(&self, spec: &mut JobSpec) {
        set_if(&mut spec.data_pattern, self.buffers.data_pattern);
        spec.buffer_pattern = self.buffers.pattern.clone();
        spec.dedupe = self
            .buffers
            .dedupe_percentage
            .filter(|percent| *percent > 0)
            .map(|percent| DedupeSpec {
                percent,
                mode: self.buffers.dedupe_mode.unwrap_or(DedupeMode::Repeat),
                // fio's default (options.c: `.def = "5"`).
                working_set_percent: self.buffers.dedupe_working_set_percentage.unwrap_or(5),
                global: self.buffers.dedupe_global.unwrap_or(false),
                size_as_written_bytes: self.size.and_then(super::io_size::Extent::bytes),
            });
        // storlab's own jobs keep their stamped data pattern, except for dedupe, which only
        // fio's buffers implement.
        let fill = self.fio_buffer_fill(spec.read_percent > 0);
        spec.fio_buffers = fill.filter(|_| !self.storlab_rw_default || spec.dedupe.is_some());
    }

    /// How fio fills this fio job's write buffers (`reads`: the job reads too), or `None` where
    /// fio stamps each write with the clock (its default `scramble_buffers`), whose bytes no
    /// run repeats. fio's rules, in the order fio applies them: options.c's callbacks
    /// (`dedupe_percentage` sets `refill_buffers`; `buffer_pattern` sets it only in a job that
    /// reads or compresses, and clears `zero_buffers` and `scramble_buffers`), init.c's
    /// `fixup_options` (a share of 100 becomes `zero_buffers`, a smaller one refills unless
    /// `refill_buffers` was given) and io_u.c's `get_io_u` (no clock stamp with a refill, a
    /// compress or dedupe key, or `zero_buffers` given).
    fn fio_buffer_fill(&self, reads: bool) -> Option<FioBufferFill> {
        let buffers = &self.buffers;
        let compress_given = buffers.compress_percentage.is_some();
        let mut compress = buffers.compress_percentage.unwrap_or(0);
        let dedupe_given = buffers.dedupe_percentage.is_some();
        let pattern_given = buffers.pattern.is_some();
        let mut refill = buffers.refill_buffers.unwrap_or(false) || dedupe_given;
        // The callbacks run in the order the keys come: `dedupe_percentage` after
        // `buffer_pattern` sets the refill again.
        let position = |field: &str| self.provenance.iter().position(|p| p.field == field);
        let dedupe_last = matches!(
            (position("dedupe_percentage"), position("buffer_pattern")),
            (Some(dedupe), Some(pattern)) if dedupe > pattern
        );
        if pattern_given && buffers.refill_buffers.is_none() && !dedupe_last {
            refill = compress > 0 || reads;
        }
        let zero_given = buffers.zero_buffers == Some(true) && !pattern_given;
        let mut zero = zero_given;
        if compress == 100 {
            zero = true;
            compress = 0;
        } else if compress > 0 && buffers.refill_buffers.is_none() {
            refill = true;
        }
        // init.c: scrambled when `scramble_buffers` was given on (unless a later
        // `buffer_pattern` cleared it), or by default unless zeros or a pattern were asked.
        let scramble = match buffers.scramble_buffers {
            Some(false) => false,
            Some(true) => !matches!(
                (position("buffer_pattern"), position("scramble_buffers")),
                (Some(pattern), Some(scramble)) if pattern > scramble
            ),
            None => !pattern_given && !zero_given,
        };
        let clock_stamped = scramble && !refill && !compress_given && !dedupe_given;
        // Without its latency clock fio stamps a time of zero: its bytes repeat then.
        let untimed_scramble = clock_stamped && self.report.disable_lat == Some(true);
        (!clock_stamped || untimed_scramble).then_some(FioBufferFill {
            refill,
            compress_percent: compress,
            zero,
            untimed_scramble,
        })
    }
}

/// A dedupe job that also reads, whose file storlab lays out with its own data.
pub(super) fn note_dedupe_reads(spec: &mut JobSpec) {
    let on_a_file = on_a_file(&spec.target);
    if spec.dedupe.is_some() && on_a_file && (1..100).contains(&spec.read_percent) {
        spec.warnings.push(
            "storlab differs from fio here: a dedupe job that also reads repeats fio's share \
             of its writes, not fio's bytes, and blocks it does not write stay unique: fio \
             lays a new file out with the same dedupe buffers first (filesetup.c), storlab \
             with its own layout data"
                .into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::draft;
    use crate::model::{DataPattern, VerifyKind};

    /// Seed 5353: fio aborts with an empty working set drawn by tausworthe64.
    #[test]
    fn a_working_set_dedupe_with_tausworthe64_is_refused() {
        let job = |generator: &str, mode: &str, size: &str| {
            draft(&[
                ("size", Some(size)),
                ("rw", Some("read")),
                ("dedupe_percentage", Some("25")),
                ("dedupe_mode", Some(mode)),
                ("random_generator", Some(generator)),
            ])
        };
        let error = job("tausworthe64", "working_set", "64k")
            .unwrap_err()
            .to_string();
        assert!(error.contains("aborts"), "{error}");
        job("tausworthe64", "working_set", "256k").unwrap();
        job("tausworthe", "working_set", "64k").unwrap();
        job("tausworthe64", "repeat", "64k").unwrap();
    }

    #[test]
    fn data_pattern_keys_share_one_setting() {
        let pattern = |key, value| {
            draft(&[(key, Some(value)), ("size", Some("1M"))])
                .unwrap()
                .data_pattern
        };
        assert_eq!(
            pattern("data_pattern", "compressible:40"),
            DataPattern::Compressible(40)
        );
        assert_eq!(pattern("data_pattern", "zeros"), DataPattern::Zeros);
        assert_eq!(
            pattern("buffer_compress_percentage", "60"),
            DataPattern::Compressible(60)
        );
        assert_eq!(
            pattern("buffer_compress_percentage", "0"),
            DataPattern::Random
        );
        assert_eq!(pattern("zero_buffers", "1"), DataPattern::Zeros);
    }

    /// fio 3.33's rules for its buffers (options.c callbacks, init.c `fixup_options`, io_u.c
    /// `get_io_u`): which keys refill every write, which fill once, and which leave fio's
    /// clock stamp (`None`).
    #[test]
    fn fio_buffer_fill_follows_fios_option_rules() {
        let fill = |rw: &str, keys: &[(&str, &str)]| {
            let mut all = vec![("rw", Some(rw)), ("size", Some("1M"))];
            all.extend(keys.iter().map(|(k, v)| (*k, Some(*v))));
            draft(&all).unwrap().fio_buffers
        };
        let with = |refill, compress_percent, zero| {
            Some(crate::model::FioBufferFill {
                untimed_scramble: false,
                refill,
                compress_percent,
                zero,
            })
        };
        assert_eq!(fill("write", &[]), None);
        assert_eq!(
            fill("write", &[("buffer_compress_percentage", "0")]),
            with(false, 0, false)
        );
        assert_eq!(
            fill("write", &[("buffer_compress_percentage", "50")]),
            with(true, 50, false)
        );
        assert_eq!(
            fill(
                "write",
                &[
                    ("buffer_compress_percentage", "50"),
                    ("refill_buffers", "0")
                ]
            ),
            with(false, 50, false)
        );
        assert_eq!(
            fill("write", &[("buffer_compress_percentage", "100")]),
            with(false, 0, true)
        );
        assert_eq!(
            fill("write", &[("zero_buffers", "1")]),
            with(false, 0, true)
        );
        assert_eq!(
            fill("write", &[("refill_buffers", "1")]),
            with(true, 0, false)
        );
        assert_eq!(
            fill("write", &[("dedupe_percentage", "0")]),
            with(true, 0, false)
        );
        // Without the clock stamp, fio's buffers are written as filled at the start.
        assert_eq!(
            fill("write", &[("scramble_buffers", "0")]),
            with(false, 0, false)
        );
        assert_eq!(fill("write", &[("scramble_buffers", "1")]), None);
        // Asked for, it stamps zero buffers too.
        assert_eq!(
            fill("write", &[("zero_buffers", "1"), ("scramble_buffers", "1")]),
            None
        );
        // A pattern refills only in a job that reads or compresses, and clears zero_buffers.
        assert_eq!(
            fill("write", &[("buffer_pattern", "0xab")]),
            with(false, 0, false)
        );
        assert_eq!(
            fill("rw", &[("buffer_pattern", "0xab")]),
            with(true, 0, false)
        );
        assert_eq!(
            fill(
                "write",
                &[("zero_buffers", "1"), ("buffer_pattern", "0xab")]
            ),
            with(false, 0, false)
        );
    }

    #[test]
    fn patterns_are_fios_hex_and_strings() {
        let pattern = |v: &str| {
            draft(&[("size", Some("1M")), ("buffer_pattern", Some(v))])
                .map(|s| s.buffer_pattern.unwrap())
                .map_err(|e| e.to_string())
        };
        assert_eq!(pattern("0xdeadbeef"), Ok(vec![0xde, 0xad, 0xbe, 0xef]));
        assert_eq!(pattern("0xabc"), Ok(vec![0x0a, 0xbc]));
        assert_eq!(pattern("\"ab\""), Ok(b"ab".to_vec()));
        assert!(pattern("0xzz").is_err());
        // Several elements and decimal numbers, as fio 3.33 writes them (checked with fio on a
        // file and xxd): `0xdeadface"abcd"-12` is `de ad fa ce 61 62 63 64 f4 ff ff ff`.
        assert_eq!(
            pattern("0xdeadface\"abcd\"-12"),
            Ok(vec![
                0xde, 0xad, 0xfa, 0xce, b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff, 0xff
            ])
        );
        assert_eq!(pattern("4660"), Ok(vec![0x34, 0x12]));
        assert_eq!(pattern("0"), Ok(vec![0]));
        assert_eq!(pattern("0xff0x14"), Ok(vec![0xff, 0x14]));
        assert_eq!(pattern("\"ab\"0x1234"), Ok(vec![b'a', b'b', 0x12, 0x34]));
        // fio refuses these too.
        assert!(pattern("-0x12").is_err());
        assert!(pattern("0x12 \"a\"").is_err());
        assert!(pattern("'file'").unwrap_err().contains("pattern files"));
        assert!(pattern("%o").unwrap_err().contains("%o"));
        let spec = draft(&[
            ("size", Some("1M")),
            ("rw", Some("write")),
            ("verify", Some("crc32c")),
            ("verify_pattern", Some("0xff%o\"ab\"")),
        ])
        .unwrap();
        let verify = spec.verify_spec.unwrap();
        assert_eq!(verify.kind, VerifyKind::Crc32c);
        let pattern = verify.pattern.unwrap();
        assert_eq!(pattern.bytes, [0xff, 0, 0, 0, 0, 0, 0, 0, 0, b'a', b'b']);
        assert_eq!(pattern.offset_positions, [1]);
        assert!(spec.warnings.is_empty(), "{:?}", spec.warnings);
    }
}
