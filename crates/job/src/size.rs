//! Parsers for fio value syntax: sizes with suffixes, times, ranges, `bssplit`, read/write pairs.
//!
//! Units follow fio's default `kb_base=1024`: `k`, `K`, `kb` and `KB` mean 1024, so `4k` is
//! 4096 and `1M` is 1048576. In a fio job (inside [`with_fio_kb_base`]) the IEC suffixes read
//! as fio 3.33 reads them (parse.c `__get_mult_bytes`): inverted under `kb_base=1024`, its
//! compatibility mode (`KiB` is 1000), and under `kb_base=1000` `k` is 1000 and `KiB` 1024.
//! Outside a fio job (storlab's own options, presets) `KiB` is 1024, as the IEC standard says.
//! Suffixes are not case sensitive. Times without a unit are seconds, as for fio's `runtime`
//! and `ramp_time`.
//! Every parser returns a [`ValueError`] saying what is wrong with the text, never panics.

use crate::model::{BlockSizeShare, BlockSizeSpec, PPM_PER_PERCENT, PPM_WHOLE};
use thiserror::Error;

/// What is wrong with one value (the caller adds the file, line and key).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct ValueError(pub String);

fn err<T>(message: impl Into<String>) -> Result<T, ValueError> {
    Err(ValueError(message.into()))
}

const NS_PER_US: u64 = 1_000;
const NS_PER_MS: u64 = 1_000_000;
/// Nanoseconds per second: the unit of a time written without a suffix.
pub const NS_PER_S: u64 = 1_000_000_000;
const NS_PER_MIN: u64 = 60 * NS_PER_S;
const NS_PER_HOUR: u64 = 60 * NS_PER_MIN;
const NS_PER_DAY: u64 = 24 * NS_PER_HOUR;

/// A percentage can be at most this.
pub const PERCENT_MAX: u64 = 100;

/// Size suffixes (lower case) and their multipliers. Longest first so `kib` wins over `k`.
const SIZE_SUFFIXES: &[(&str, u64)] = &[
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
    ("tib", 1 << 40),
    ("pib", 1 << 50),
    ("kb", 1 << 10),
    ("mb", 1 << 20),
    ("gb", 1 << 30),
    ("tb", 1 << 40),
    ("pb", 1 << 50),
    ("k", 1 << 10),
    ("m", 1 << 20),
    ("g", 1 << 30),
    ("t", 1 << 40),
    ("p", 1 << 50),
    ("b", 1),
    ("", 1),
];

thread_local! {
    /// The fio job's `kb_base` while its keys are read ([`with_fio_kb_base`]).
    static FIO_KB_BASE: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// fio's `kb_base` when a job gives none.
pub const FIO_KB_BASE_DEFAULT: u64 = 1024;

/// Runs `read` with sizes read as a fio job whose `kb_base` is `kb_base` (1024 or 1000) reads
/// them.
pub fn with_fio_kb_base<T>(kb_base: u64, read: impl FnOnce() -> T) -> T {
    let before = FIO_KB_BASE.with(|base| base.replace(Some(kb_base)));
    let result = read();
    FIO_KB_BASE.with(|base| base.set(before));
    result
}

/// What `suffix` (lower case, from [`SIZE_SUFFIXES`]) multiplies by, given the fio job's
/// `kb_base` if any: fio's powers of `kb_base` for `k`, `kb`..., and for `kib`... the other
/// base (parse.c `__get_mult_bytes`).
fn size_multiplier(suffix: &str, table_multiplier: u64) -> u64 {
    let Some(kb_base) = FIO_KB_BASE.with(std::cell::Cell::get) else {
        return table_multiplier;
    };
    let power = table_multiplier.trailing_zeros() / 10;
    let base = if suffix.ends_with("ib") {
        if kb_base == 1000 {
            1024
        } else {
            1000
        }
    } else {
        kb_base
    };
    base.pow(power)
}

/// Time suffixes (lower case) fio accepts, in nanoseconds.
const TIME_SUFFIXES: &[(&str, u64)] = &[
    ("ns", 1),
    ("nsec", 1),
    ("us", NS_PER_US),
    ("usec", NS_PER_US),
    ("ms", NS_PER_MS),
    ("msec", NS_PER_MS),
    ("s", NS_PER_S),
    ("sec", NS_PER_S),
    ("m", NS_PER_MIN),
    ("min", NS_PER_MIN),
    ("h", NS_PER_HOUR),
    ("hour", NS_PER_HOUR),
    ("d", NS_PER_DAY),
    ("day", NS_PER_DAY),
];

/// Splits `12.5KiB` into (`12.5`, `KiB`).
fn split_number(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    text.split_at(end)
}

/// `number × multiplier`, where `number` may have a decimal fraction; the result must be whole.
fn scale(number: &str, multiplier: u64, what: &str, original: &str) -> Result<u64, ValueError> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return err(format!("'{original}' is not a {what}"));
    }
    // Digits beyond this cannot matter for a whole result and would overflow the scale.
    const FRACTION_DIGITS_MAX: usize = 18;
    if fraction.len() > FRACTION_DIGITS_MAX {
        return err(format!("'{original}' has too many decimals"));
    }
    let too_large = || ValueError(format!("'{original}' is too large"));
    let whole_value: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_large())?
    };
    let fraction_value: u128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().map_err(|_| too_large())?
    };
    let fraction_scale = 10u128.pow(fraction.len() as u32);
    let fraction_product = fraction_value * u128::from(multiplier);
    if !fraction_product.is_multiple_of(fraction_scale) {
        return err(format!(
            "'{original}' is not a whole number of {}",
            unit_name(what)
        ));
    }
    let total = whole_value
        .checked_mul(u128::from(multiplier))
        .and_then(|w| w.checked_add(fraction_product / fraction_scale))
        .ok_or_else(too_large)?;
    u64::try_from(total).map_err(|_| too_large())
}

fn unit_name(what: &str) -> &'static str {
    if what == "time" {
        "nanoseconds"
    } else {
        "bytes"
    }
}

/// A size in bytes: `4096`, `4k`, `4K`, `4KiB`, `1.5M`, `0x1000`, `1g`.
pub fn parse_size(text: &str) -> Result<u64, ValueError> {
    let text = text.trim();
    if text.is_empty() {
        return err("a size is needed (e.g. 4k, 1M, 10G)");
    }
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map_err(|_| ValueError(format!("'{text}' is not a hexadecimal number")));
    }
    if text.ends_with('%') {
        return err(format!(
            "'{text}': only size, offset and offset_increment can be a share of the target (%); \
             give bytes (e.g. 64k)"
        ));
    }
    if text.starts_with('-') {
        return err(format!("'{text}' is negative"));
    }
    let (number, suffix) = split_number(text);
    let lower = suffix.to_ascii_lowercase();
    let Some(&(found, multiplier)) = SIZE_SUFFIXES.iter().find(|(s, _)| *s == lower) else {
        return err(format!(
            "'{text}' has an unknown size suffix '{suffix}' (use k, M, G, T, KiB, MiB...)"
        ));
    };
    scale(number, size_multiplier(found, multiplier), "size", text)
}

/// A count (`number_ios`, `iodepth`...): a whole number, with fio's size suffixes allowed.
pub fn parse_count(text: &str) -> Result<u64, ValueError> {
    let text = text.trim();
    if text.is_empty() {
        return err("a number is needed");
    }
    parse_size(text).map_err(|_| ValueError(format!("'{text}' is not a whole number")))
}

/// A duration in nanoseconds; a bare number is in `default_unit_ns` (fio: seconds for runtime).
pub fn parse_time_ns(text: &str, default_unit_ns: u64) -> Result<u64, ValueError> {
    let text = text.trim();
    if text.is_empty() {
        return err("a time is needed (e.g. 10, 30s, 500ms, 2m)");
    }
    if text.starts_with('-') {
        return err(format!("'{text}' is negative"));
    }
    let (number, suffix) = split_number(text);
    let lower = suffix.to_ascii_lowercase();
    let multiplier = if lower.is_empty() {
        default_unit_ns
    } else {
        match TIME_SUFFIXES.iter().find(|(s, _)| *s == lower) {
            Some(&(_, m)) => m,
            None => {
                return err(format!(
                    "'{text}' has an unknown time unit '{suffix}' (use us, ms, s, m, h)"
                ))
            }
        }
    };
    scale(number, multiplier, "time", text)
}

/// A percentage 0..=100 (`rwmixread`, `percentage_random`, `buffer_compress_percentage`).
pub fn parse_percent(text: &str) -> Result<u8, ValueError> {
    let text = text.trim();
    let value: u64 = text
        .strip_suffix('%')
        .unwrap_or(text)
        .parse()
        .map_err(|_| ValueError(format!("'{text}' is not a percentage (0 to 100)")))?;
    if value > PERCENT_MAX {
        return err(format!("{value}% is above 100%"));
    }
    Ok(value as u8)
}

/// A share of the target's size written as a percentage, `50%` or `12.5%` (at most four
/// decimals), in parts per million (0..=1 000 000).
pub fn parse_share_ppm(text: &str) -> Result<u32, ValueError> {
    let text = text.trim();
    let Some(number) = text.strip_suffix('%') else {
        return err(format!("'{text}' is not a percentage (e.g. 50%)"));
    };
    // Four decimals of a percent are one part per million, the resolution a share is kept in.
    const DECIMALS_MAX: usize = 4;
    if number
        .split_once('.')
        .is_some_and(|(_, fraction)| fraction.len() > DECIMALS_MAX)
    {
        return err(format!("'{text}' has more than {DECIMALS_MAX} decimals"));
    }
    if number.starts_with('-') {
        return err(format!("'{text}' is negative"));
    }
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return err(format!("'{text}' is not a percentage (e.g. 50%)"));
    }
    let ppm = scale(number, u64::from(PPM_PER_PERCENT), "percentage", text)?;
    if ppm > u64::from(PPM_WHOLE) {
        return err(format!("{text} is above 100%"));
    }
    Ok(ppm as u32)
}

/// A fio boolean: `1`/`0` (also `true`/`false`, `yes`/`no`, `on`/`off`).
pub fn parse_bool(text: &str) -> Result<bool, ValueError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => err(format!("'{other}' is not a boolean (use 1 or 0)")),
    }
}

/// A size range `4k-64k` (fio also writes `4k:64k`). Order is checked by the validator.
pub fn parse_size_range(text: &str) -> Result<(u64, u64), ValueError> {
    let text = text.trim();
    let Some((low, high)) = text.split_once(['-', ':']) else {
        return err(format!("'{text}' is not a range (e.g. 4k-64k)"));
    };
    Ok((parse_size(low)?, parse_size(high)?))
}

/// One direction of a `bssplit`: `4k/50:64k/50`. Entries without a share split what the others
/// leave of 100% equally, as fio does (`4k/10:64k` gives 64k 90%); a remainder that does not
/// divide goes to the first of them.
pub fn parse_bssplit(text: &str) -> Result<Vec<BlockSizeShare>, ValueError> {
    let text = text.trim();
    if text.is_empty() {
        return err("a bssplit needs at least one size (e.g. 4k/50:64k/50)");
    }
    let mut shares = Vec::new();
    let mut unspecified = Vec::new();
    let mut given_percent: u64 = 0;
    for entry in text.split(':') {
        let (size_text, percent_text) = match entry.split_once('/') {
            Some((s, p)) => (s, Some(p)),
            None => (entry, None),
        };
        let size_bytes = parse_size(size_text)?;
        let percent = match percent_text {
            Some(p) => {
                let p = parse_percent(p)?;
                given_percent += u64::from(p);
                u32::from(p)
            }
            None => {
                unspecified.push(shares.len());
                0
            }
        };
        shares.push(BlockSizeShare {
            size_bytes,
            percent,
        });
    }
    if !unspecified.is_empty() {
        let left = PERCENT_MAX.saturating_sub(given_percent);
        let count = unspecified.len() as u64;
        for (n, &index) in unspecified.iter().enumerate() {
            let extra = if n == 0 { left % count } else { 0 };
            shares[index].percent = (left / count + extra) as u32;
        }
    }
    Ok(shares)
}

/// Splits a fio `read,write` pair: `4k` applies to both, `4k,64k` is read then write, an empty
/// side (`,64k`) leaves that direction as it was. A third (trim) value is refused.
pub fn split_read_write(text: &str) -> Result<(Option<&str>, Option<&str>), ValueError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    fn non_empty(s: &str) -> Option<&str> {
        (!s.is_empty()).then_some(s)
    }
    match parts.as_slice() {
        [both] => Ok((non_empty(both), non_empty(both))),
        [read, write] => Ok((non_empty(read), non_empty(write))),
        _ => err(format!(
            "'{text}' has more than two values; storlab takes read,write (there is no trim direction)"
        )),
    }
}

/// Parses `bs` (`4k` or `4k,64k`) into (read, write) block size specs.
pub fn parse_block_sizes(
    text: &str,
) -> Result<(Option<BlockSizeSpec>, Option<BlockSizeSpec>), ValueError> {
    per_direction(text, |t| parse_size(t).map(BlockSizeSpec::Fixed))
}

/// Parses `bsrange` (`4k-64k` or `4k-16k,64k-128k`) into (read, write) specs.
pub fn parse_block_size_ranges(
    text: &str,
) -> Result<(Option<BlockSizeSpec>, Option<BlockSizeSpec>), ValueError> {
    per_direction(text, |t| {
        parse_size_range(t).map(|(min_bytes, max_bytes)| BlockSizeSpec::Range {
            min_bytes,
            max_bytes,
        })
    })
}

/// Parses `bssplit` (`4k/50:64k/50` or `4k/100,64k/100`) into (read, write) specs.
pub fn parse_block_size_splits(
    text: &str,
) -> Result<(Option<BlockSizeSpec>, Option<BlockSizeSpec>), ValueError> {
    per_direction(text, |t| parse_bssplit(t).map(BlockSizeSpec::Split))
}

type DirectionPair<T> = (Option<T>, Option<T>);

fn per_direction<T>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, ValueError>,
) -> Result<DirectionPair<T>, ValueError> {
    let (read, write) = split_read_write(text)?;
    if read.is_none() && write.is_none() {
        return err("a value is needed");
    }
    Ok((
        read.map(&parse).transpose()?,
        write.map(&parse).transpose()?,
    ))
}

/// Renders bytes for messages: `4 KiB`, `64 MiB`, or `1000 B` when no binary unit divides it.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 5] = [
        ("PiB", 1 << 50),
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, unit) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{} {name}", bytes / unit);
        }
    }
    format!("{bytes} B")
}

/// Renders a block size spec the way fio writes it (`4096`, `4096-65536`, `4096/50:65536/50`).
pub fn format_block_size_spec(spec: &BlockSizeSpec) -> String {
    match spec {
        BlockSizeSpec::Fixed(b) => b.to_string(),
        BlockSizeSpec::Range {
            min_bytes,
            max_bytes,
        } => format!("{min_bytes}-{max_bytes}"),
        BlockSizeSpec::Split(shares) => shares
            .iter()
            .map(|s| format!("{}/{}", s.size_bytes, s.percent))
            .collect::<Vec<_>>()
            .join(":"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn shares_of_the_target_are_parts_per_million() {
        let cases = [
            ("0%", 0),
            ("50%", 500_000),
            ("100%", 1_000_000),
            ("12.5%", 125_000),
            ("0.0001%", 1),
            (" 33.3333% ", 333_333),
        ];
        for (text, ppm) in cases {
            assert_eq!(parse_share_ppm(text), Ok(ppm), "{text}");
        }
        let errors = [
            ("50", "'50' is not a percentage (e.g. 50%)"),
            ("%", "'%' is not a percentage (e.g. 50%)"),
            ("1e2%", "'1e2%' is not a percentage (e.g. 50%)"),
            ("1.2.3%", "'1.2.3%' is not a percentage"),
            ("-1%", "'-1%' is negative"),
            ("100.0001%", "100.0001% is above 100%"),
            (
                "99999999999999999999999%",
                "'99999999999999999999999%' is too large",
            ),
            ("0.00001%", "'0.00001%' has more than 4 decimals"),
        ];
        for (text, message) in errors {
            assert_eq!(
                parse_share_ppm(text),
                Err(ValueError(message.into())),
                "{text}"
            );
        }
    }

    proptest! {
        #[test]
        fn any_share_text_parses_or_errs_without_panicking(text in "[-0-9.%]{0,12}") {
            let _ = parse_share_ppm(&text);
        }

        #[test]
        fn every_percentage_with_four_decimals_round_trips(ppm in 0u32..=1_000_000) {
            let text = crate::model::format_share(ppm);
            prop_assert_eq!(parse_share_ppm(&text), Ok(ppm));
        }
    }

    #[test]
    fn a_fio_jobs_sizes_follow_its_kb_base_as_fio() {
        let read = |kb_base, text| with_fio_kb_base(kb_base, || parse_size(text));
        // fio 3.33: `--size=64KiB` reads 64000 in its default mode, `--kb_base=1000` makes
        // `64k` 64000 and `64KiB` 65536.
        assert_eq!(read(1024, "64k"), Ok(64 << 10));
        assert_eq!(read(1024, "64KiB"), Ok(64_000));
        assert_eq!(read(1024, "1MiB"), Ok(1_000_000));
        assert_eq!(read(1000, "64k"), Ok(64_000));
        assert_eq!(read(1000, "64KB"), Ok(64_000));
        assert_eq!(read(1000, "64KiB"), Ok(64 << 10));
        assert_eq!(read(1000, "2g"), Ok(2_000_000_000));
        assert_eq!(read(1000, "512"), Ok(512));
        assert_eq!(
            parse_size("64KiB"),
            Ok(64 << 10),
            "outside a fio job KiB is 1024"
        );
    }

    #[test]
    fn sizes_use_fio_binary_units() {
        let cases = [
            ("4096", 4096),
            ("4k", 4096),
            ("4K", 4096),
            ("4kb", 4096),
            ("4KB", 4096),
            ("4KiB", 4096),
            ("1M", 1 << 20),
            ("1m", 1 << 20),
            ("1MiB", 1 << 20),
            ("10G", 10 << 30),
            ("2t", 2 << 40),
            ("1p", 1 << 50),
            ("1.5k", 1536),
            ("0.5M", 512 << 10),
            ("512b", 512),
            ("0x1000", 4096),
            (" 8k ", 8192),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_size(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn bad_sizes_say_why() {
        let cases = [
            ("", "a size is needed (e.g. 4k, 1M, 10G)"),
            (
                "4x",
                "'4x' has an unknown size suffix 'x' (use k, M, G, T, KiB, MiB...)",
            ),
            ("k", "'k' is not a size"),
            ("0.3k", "'0.3k' is not a whole number of bytes"),
            ("-4k", "'-4k' is negative"),
            (
                "50%",
                "'50%': only size, offset and offset_increment can be a share of the target (%); give bytes (e.g. 64k)",
            ),
            ("99999999999p", "'99999999999p' is too large"),
            ("1.2.3", "'1.2.3' is not a size"),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_size(text), Err(ValueError(expected.into())), "{text}");
        }
    }

    #[test]
    fn times_default_to_the_given_unit() {
        let cases = [
            ("10", 10 * NS_PER_S),
            ("10s", 10 * NS_PER_S),
            ("500ms", 500 * NS_PER_MS),
            ("250us", 250 * NS_PER_US),
            ("2m", 2 * NS_PER_MIN),
            ("1h", NS_PER_HOUR),
            ("1.5s", 1_500 * NS_PER_MS),
            ("3min", 3 * NS_PER_MIN),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_time_ns(text, NS_PER_S), Ok(expected), "{text}");
        }
        assert_eq!(parse_time_ns("7", NS_PER_MS), Ok(7 * NS_PER_MS));
        assert_eq!(
            parse_time_ns("5y", NS_PER_S),
            Err(ValueError(
                "'5y' has an unknown time unit 'y' (use us, ms, s, m, h)".into()
            ))
        );
    }

    #[test]
    fn ranges_and_pairs() {
        assert_eq!(parse_size_range("4k-64k"), Ok((4096, 65536)));
        assert_eq!(parse_size_range("4k:64k"), Ok((4096, 65536)));
        assert!(parse_size_range("4k").is_err());
        assert_eq!(
            parse_block_sizes("4k,64k"),
            Ok((
                Some(BlockSizeSpec::Fixed(4096)),
                Some(BlockSizeSpec::Fixed(65536))
            ))
        );
        assert_eq!(
            parse_block_sizes(",64k"),
            Ok((None, Some(BlockSizeSpec::Fixed(65536))))
        );
        assert_eq!(
            parse_block_sizes("8k"),
            Ok((
                Some(BlockSizeSpec::Fixed(8192)),
                Some(BlockSizeSpec::Fixed(8192))
            ))
        );
        assert!(parse_block_sizes("4k,8k,16k").is_err());
        assert!(parse_block_sizes(",").is_err());
        assert_eq!(
            parse_block_size_ranges("4k-8k,16k-32k"),
            Ok((
                Some(BlockSizeSpec::Range {
                    min_bytes: 4096,
                    max_bytes: 8192
                }),
                Some(BlockSizeSpec::Range {
                    min_bytes: 16384,
                    max_bytes: 32768
                })
            ))
        );
    }

    #[test]
    fn bssplit_fills_unspecified_shares_like_fio() {
        let share = |size_bytes, percent| BlockSizeShare {
            size_bytes,
            percent,
        };
        assert_eq!(
            parse_bssplit("4k/50:64k/50"),
            Ok(vec![share(4096, 50), share(65536, 50)])
        );
        assert_eq!(
            parse_bssplit("4k/10:64k"),
            Ok(vec![share(4096, 10), share(65536, 90)])
        );
        assert_eq!(
            parse_bssplit("4k/10:8k:16k:32k"),
            Ok(vec![
                share(4096, 10),
                share(8192, 30),
                share(16384, 30),
                share(32768, 30)
            ])
        );
        assert_eq!(
            parse_bssplit("4k:8k:16k"),
            Ok(vec![share(4096, 34), share(8192, 33), share(16384, 33)])
        );
        assert_eq!(
            parse_block_size_splits("4k/100,64k/100"),
            Ok((
                Some(BlockSizeSpec::Split(vec![share(4096, 100)])),
                Some(BlockSizeSpec::Split(vec![share(65536, 100)]))
            ))
        );
        assert_eq!(
            parse_bssplit("4k/150"),
            Err(ValueError("150% is above 100%".into()))
        );
    }

    #[test]
    fn formats_sizes_for_messages() {
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(64 << 20), "64 MiB");
        assert_eq!(format_size(1000), "1000 B");
        assert_eq!(format_size(0), "0 B");
        assert_eq!(format_size(6144), "6 KiB");
    }

    proptest! {
        #[test]
        fn size_round_trips_through_every_suffix(value in 0u64..(1 << 20), unit in 0usize..5) {
            let (suffixes, multiplier): (&[&str], u64) = [
                (&["", "b", "B"][..], 1u64),
                (&["k", "K", "kb", "KiB"][..], 1 << 10),
                (&["m", "M", "MB", "MiB"][..], 1 << 20),
                (&["g", "G", "GiB"][..], 1 << 30),
                (&["t", "T", "TiB"][..], 1 << 40),
            ][unit];
            for suffix in suffixes {
                prop_assert_eq!(parse_size(&format!("{value}{suffix}")), Ok(value * multiplier));
            }
        }

        #[test]
        fn size_parser_never_panics(text in "\\PC{0,24}") {
            let _ = parse_size(&text);
            let _ = parse_time_ns(&text, NS_PER_S);
            let _ = parse_size_range(&text);
            let _ = parse_bssplit(&text);
            let _ = parse_block_sizes(&text);
        }

        #[test]
        fn time_round_trips(value in 0u64..1_000_000, unit in 0usize..4) {
            let (suffix, multiplier) = [("us", NS_PER_US), ("ms", NS_PER_MS), ("s", NS_PER_S), ("", NS_PER_S)][unit];
            prop_assert_eq!(parse_time_ns(&format!("{value}{suffix}"), NS_PER_S), Ok(value * multiplier));
        }

        #[test]
        fn bssplit_shares_always_sum_to_100_when_some_are_left_open(
            given in proptest::collection::vec(0u32..=20, 0..4),
            open in 1usize..5,
        ) {
            let mut entries: Vec<String> = given.iter().enumerate()
                .map(|(i, p)| format!("{}k/{p}", 4 << i)).collect();
            entries.extend((0..open).map(|i| format!("{}k", 512 << i)));
            let shares = parse_bssplit(&entries.join(":")).unwrap();
            prop_assert_eq!(shares.len(), given.len() + open);
            prop_assert_eq!(shares.iter().map(|s| s.percent).sum::<u32>(), 100);
        }

        #[test]
        fn format_size_output_parses_back(value in 0u64..(1 << 40)) {
            let text = format_size(value).replace(' ', "");
            prop_assert_eq!(parse_size(&text), Ok(value));
        }
    }
}
