//! fio's number formatting for its human report (`--output-format=normal`): how fio 3.33 turns
//! counts, bytes and rates into `28.4k`, `1024KiB`, `117MB/s`, and how it picks nsec, usec or
//! msec for a latency line. Written from fio's documented behaviour and its output; the unit
//! tests hold values fio 3.33 printed.

/// Digits fio keeps in a count or rate (its `significant_figures` default, `sig_figs=4`).
pub(crate) const SIG_FIGS: usize = 4;
/// Digits fio keeps in a latency line's min and max.
pub(crate) const LATENCY_DIGITS: usize = 6;

const SI_PREFIXES: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
const IEC_PREFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// What a formatted number counts: fio prints the unit after the prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unit {
    /// A plain count (IOPS, latency bounds).
    None,
    /// Bytes (`io=1024KiB`).
    Byte,
    /// Bytes per second (`BW=111MiB/s`).
    BytePerSec,
    /// Bytes per second printed in bits (`unit_base=1`: `BW=889Mibit/s`).
    BitPerSec,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Byte => "B",
            Unit::BytePerSec => "B/s",
            Unit::BitPerSec => "bit/s",
        }
    }

    /// A rate's unit under fio's `unit_base`: bits with `unit_base=1`, else bytes.
    pub(crate) fn rate(bits: bool) -> Unit {
        if bits {
            Unit::BitPerSec
        } else {
            Unit::BytePerSec
        }
    }
}

fn decimal_digits(value: u64) -> usize {
    value.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// `value` in at most `max_digits` digits (the point counts as one), as fio's `num2str`:
/// divided by 1000 (`binary`: 1024) until it fits, each division naming the next prefix; the
/// digits left over after the integer part hold the last division's remainder as a fraction
/// (`28444` → `28.4k`), and when no fraction fits, a remainder of half or more rounds the
/// integer up (`989855744` bytes → `944MiB`). Only the last division's remainder makes the
/// fraction, as in fio.
pub(crate) fn num2str(value: u64, max_digits: usize, binary: bool, unit: Unit) -> String {
    let thousand: u64 = if binary { 1024 } else { 1000 };
    let prefixes = if binary { &IEC_PREFIXES } else { &SI_PREFIXES };
    // fio's num2str counts a rate in bits from its bytes.
    const BITS_PER_BYTE: u64 = 8;
    let mut number = match unit {
        Unit::BitPerSec => value.saturating_mul(BITS_PER_BYTE),
        _ => value,
    };
    let mut prefix = 0;
    let mut last_remainder = None;
    while prefix < prefixes.len() && decimal_digits(number) > max_digits {
        last_remainder = Some(number % thousand);
        number /= thousand;
        prefix += 1;
    }
    // fio falls back to no prefix when even exa does not fit (it cannot for a u64).
    let prefix_text = prefixes.get(prefix).copied().unwrap_or("");
    let suffix = unit.suffix();
    let Some(remainder) = last_remainder else {
        return format!("{number}{prefix_text}{suffix}");
    };
    let room = max_digits as i64 - decimal_digits(number) as i64 - 1;
    if room < 1 {
        if remainder >= thousand / 2 {
            number += 1;
        }
        return format!("{number}{prefix_text}{suffix}");
    }
    let fraction = format!("{:.*}", room as usize, remainder as f64 / thousand as f64);
    // A fraction that rounds to 1 carries into the integer part ("1.00" prints as ".00").
    if fraction.starts_with('1') {
        number += 1;
    }
    format!("{number}.{}{prefix_text}{suffix}", &fraction[2..])
}

/// A latency line's unit and its values scaled to it, as fio's `display_lat`: usec when the
/// minimum is over 2 µs, the maximum over 99.999 µs and the deviation over 1 µs; msec when the
/// same holds a thousand times larger; nsec otherwise. min and max are whole units (truncated).
pub(crate) struct ScaledLatency {
    pub unit: &'static str,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
}

pub(crate) fn scale_latency(
    min_ns: u64,
    max_ns: u64,
    mean_ns: f64,
    stddev_ns: f64,
) -> ScaledLatency {
    const NS_PER_US: u64 = 1_000;
    const NS_PER_MS: u64 = 1_000_000;
    let fits = |divisor: u64| {
        min_ns > 2 * divisor && max_ns >= 100 * divisor && stddev_ns > divisor as f64
    };
    let (unit, divisor) = if fits(NS_PER_MS) {
        ("msec", NS_PER_MS)
    } else if fits(NS_PER_US) {
        ("usec", NS_PER_US)
    } else {
        ("nsec", 1)
    };
    ScaledLatency {
        unit,
        min: min_ns / divisor,
        max: max_ns / divisor,
        mean: mean_ns / divisor as f64,
        stddev: stddev_ns / divisor as f64,
    }
}

/// A job's runtime in a direction in fio's whole milliseconds: fio adds up its elapsed
/// microseconds rounded up to the next millisecond, so anything that ran shows at least 1.
pub(crate) fn fio_runtime_ms(runtime_ns: u64) -> u64 {
    const NS_PER_US: u64 = 1_000;
    const US_PER_MS: u64 = 1_000;
    (runtime_ns / NS_PER_US).div_ceil(US_PER_MS)
}

/// The C library's message for `errno`, as fio prints it after `error=` (Rust's text without
/// its " (os error N)" tail).
pub(crate) fn strerror(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    match text.rfind(" (os error ") {
        Some(tail) => text[..tail].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values fio 3.33 printed in its normal report (issue 34's measurements, docs/decisions/0049).
    #[test]
    fn counts_rates_and_sizes_print_as_fio_printed_them() {
        let iops = |value| num2str(value, SIG_FIGS, false, Unit::None);
        assert_eq!(iops(28_444), "28.4k");
        assert_eq!(iops(6358), "6358");
        assert_eq!(iops(10_346), "10.3k");
        assert_eq!(iops(120_418), "120k");
        assert_eq!(iops(1000), "1000");
        let bytes = |value, binary| num2str(value, SIG_FIGS, binary, Unit::Byte);
        assert_eq!(bytes(1_048_576, true), "1024KiB");
        assert_eq!(bytes(1_048_576, false), "1049kB");
        assert_eq!(bytes(65_536, true), "64.0KiB");
        assert_eq!(bytes(4096, true), "4096B");
        assert_eq!(bytes(4_022_272, true), "3928KiB");
        assert_eq!(bytes(4_022_272, false), "4022kB");
        assert_eq!(bytes(989_855_744, true), "944MiB");
        assert_eq!(bytes(989_855_744, false), "990MB");
        let rate = |value, binary| num2str(value, SIG_FIGS, binary, Unit::BytePerSec);
        // 1 MiB in 9 ms: fio's 1000 * bytes / ms.
        assert_eq!(rate(116_508_444, true), "111MiB/s");
        assert_eq!(rate(116_508_444, false), "117MB/s");
        assert_eq!(rate(26_046_030, true), "24.8MiB/s");
        assert_eq!(rate(26_046_030, false), "26.0MB/s");
        assert_eq!(rate(9_362_285, true), "9143KiB/s");
        assert_eq!(rate(9_362_285, false), "9362kB/s");
        assert_eq!(rate(4_096_000, true), "4000KiB/s");
        // unit_base=1 (fio 3.33: "BW=889Mibit/s (932Mb/s)" for 111 MiB/s).
        assert_eq!(
            num2str(116_508_444, SIG_FIGS, true, Unit::BitPerSec),
            "889Mibit/s"
        );
        assert_eq!(
            num2str(116_508_444, SIG_FIGS, false, Unit::BitPerSec),
            "932Mbit/s"
        );
        // significant_figures=1 and 10 (fio 3.33: "BW=0Tibit/s", "io=0GiB", "IOPS=0M").
        assert_eq!(num2str(116_508_444, 1, true, Unit::BytePerSec), "0GiB/s");
        assert_eq!(num2str(64_000, 1, false, Unit::None), "0M");
        assert_eq!(
            num2str(116_508_444, 10, false, Unit::BytePerSec),
            "116508444B/s"
        );
    }

    #[test]
    fn latency_bounds_keep_six_digits() {
        let bound = |value| num2str(value, LATENCY_DIGITS, false, Unit::None);
        assert_eq!(bound(521), "521");
        assert_eq!(bound(336_145), "336145");
        assert_eq!(bound(2_985_300), "2985.3k");
        assert_eq!(bound(18_169_000), "18169k");
    }

    #[test]
    fn latency_units_follow_fios_thresholds() {
        // fio: "clat (nsec): min=521, max=2985.3k" (min under 2 µs keeps nsec).
        assert_eq!(
            scale_latency(521, 2_985_300, 31_536.6, 279_714.6).unit,
            "nsec"
        );
        // fio: "clat (usec): min=25, max=5445, avg=298.01, stdev=698.40".
        let usec = scale_latency(25_300, 5_445_900, 298_010.0, 698_400.0);
        assert_eq!((usec.unit, usec.min, usec.max), ("usec", 25, 5445));
        // fio: "slat (nsec): min=3696, max=43074": the maximum is under 100 µs.
        assert_eq!(scale_latency(3696, 43_074, 6156.4, 4716.0).unit, "nsec");
        // A constant latency (stdev 0) stays in nsec however large.
        assert_eq!(scale_latency(22_173, 22_173, 22_173.0, 0.0).unit, "nsec");
        let msec = scale_latency(3_000_000, 150_000_000, 9e6, 2e6);
        assert_eq!((msec.unit, msec.min, msec.max), ("msec", 3, 150));
    }

    #[test]
    fn runtimes_round_up_to_whole_milliseconds() {
        assert_eq!(fio_runtime_ms(1), 0);
        assert_eq!(fio_runtime_ms(1_000), 1);
        assert_eq!(fio_runtime_ms(8_000_000), 8);
        assert_eq!(fio_runtime_ms(8_000_999), 8);
        assert_eq!(fio_runtime_ms(8_001_000), 9);
    }

    #[test]
    fn errno_text_is_the_c_librarys() {
        assert_eq!(
            strerror(84),
            "Invalid or incomplete multibyte or wide character"
        );
        assert_eq!(strerror(5), "Input/output error");
    }
}
