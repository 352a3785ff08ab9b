//! Number formatting shared by the text outputs: latencies with an automatic unit, rates with
//! fixed decimals.

const NS_PER_US: f64 = 1e3;
const NS_PER_MS: f64 = 1e6;
const NS_PER_S: f64 = 1e9;

/// `latency_ns` with 3 significant digits and the largest unit that keeps it >= 1:
/// `850 ns`, `85.2 us`, `8.52 ms`, `1.23 s`.
pub fn format_latency_ns(latency_ns: f64) -> String {
    if !latency_ns.is_finite() || latency_ns < 0.0 {
        return "-".to_owned();
    }
    let (value, unit) = if latency_ns < NS_PER_US {
        (latency_ns, "ns")
    } else if latency_ns < NS_PER_MS {
        (latency_ns / NS_PER_US, "us")
    } else if latency_ns < NS_PER_S {
        (latency_ns / NS_PER_MS, "ms")
    } else {
        (latency_ns / NS_PER_S, "s")
    };
    let decimals = if unit == "ns" || value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

/// `value` with `decimals` decimals, never `-0.00`: an empty sum of `f64` is negative zero, and
/// a tiny negative rounding error rounds to it; a figure that rounds to zero prints as zero.
pub fn format_fixed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    match text.strip_prefix('-') {
        Some(magnitude) if magnitude.bytes().all(|b| b == b'0' || b == b'.') => {
            magnitude.to_owned()
        }
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_that_rounds_to_zero_has_no_minus_sign() {
        let empty: f64 = [0.0f64; 0].iter().sum();
        assert_eq!(format_fixed(empty, 2), "0.00");
        assert_eq!(format_fixed(-0.0001, 1), "0.0");
        assert_eq!(format_fixed(-0.0, 0), "0");
        assert_eq!(format_fixed(-1.25, 1), "-1.2");
        assert_eq!(format_fixed(42.0, 2), "42.00");
    }

    #[test]
    fn picks_unit_and_three_significant_digits() {
        assert_eq!(format_latency_ns(850.0), "850 ns");
        assert_eq!(format_latency_ns(85_240.0), "85.2 us");
        assert_eq!(format_latency_ns(8_524_000.0), "8.52 ms");
        assert_eq!(format_latency_ns(123_400_000.0), "123 ms");
        assert_eq!(format_latency_ns(1_234_000_000.0), "1.23 s");
        assert_eq!(format_latency_ns(f64::NAN), "-");
    }
}
