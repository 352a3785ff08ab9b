//! Repeat statistics (`run --repeat N`, docs/decisions/0032-repeats.md): the mean, sample
//! standard deviation and 95% confidence interval of each headline figure (MB/s, IOPS, mean
//! and p99 latency) over a job's repeats, with Student's t for the interval (a handful of
//! repeats is far from the normal distribution's 1.96), and Welch's t test, which `compare`
//! uses to say whether two runs differ by more than their noise.

use crate::model::JobReport;
use serde::{Deserialize, Serialize};

const P99: f64 = 99.0;

/// The 97.5% quantile of Student's t distribution for 1 to 30 degrees of freedom: the
/// half-width of a two-sided 95% interval in standard errors. Printed by SciPy 1.17.1,
/// `[repr(scipy.stats.t.ppf(0.975, df)) for df in range(1, 31)]` (the tests also check them
/// against closed forms and a numerical integration of the density).
const T_975: [f64; 30] = [
    12.706_204_736_174_694,
    4.302_652_729_749_462,
    3.182_446_305_283_707_8,
    2.776_445_105_197_793_4,
    2.570_581_835_636_314_6,
    2.446_911_851_144_978_6,
    2.364_624_251_592_784,
    2.306_004_135_204_166,
    2.262_157_162_798_205,
    2.228_138_851_986_274,
    2.200_985_160_091_639,
    2.178_812_829_667_228_4,
    2.160_368_656_462_791_3,
    2.144_786_687_917_804,
    2.131_449_545_559_776,
    2.119_905_299_221_254_6,
    2.109_815_577_833_315_6,
    2.100_922_040_241_038_2,
    2.093_024_054_408_308_7,
    2.085_963_447_265_864,
    2.079_613_844_727_679_5,
    2.073_873_067_904_025_4,
    2.068_657_610_419_048_6,
    2.063_898_561_628_024_5,
    2.059_538_552_753_297_2,
    2.055_529_438_642_873_5,
    2.051_830_516_480_284_6,
    2.048_407_141_795_245_4,
    2.045_229_642_132_703,
    2.042_272_456_301_237_8,
];

/// The normal distribution's 97.5% quantile, where Student's t tends for many repeats.
const Z_975: f64 = 1.959_963_984_540_054;

/// The 97.5% quantile of Student's t with `df` degrees of freedom (`df` ≥ 1): the table above
/// up to 30, past it the Cornish–Fisher expansion of t around the normal quantile (Abramowitz
/// and Stegun 26.7.5, four terms), within 1e-6 of the exact value there.
pub fn t_quantile_975(df: u32) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    if let Some(&t) = T_975.get(df as usize - 1) {
        return t;
    }
    let z = Z_975;
    let n = f64::from(df);
    let z3 = z.powi(3);
    let z5 = z.powi(5);
    let z7 = z.powi(7);
    let z9 = z.powi(9);
    z + (z3 + z) / (4.0 * n)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * n.powi(3))
        + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / (92160.0 * n.powi(4))
}

/// One figure over a job's repeats: its mean, sample standard deviation (n − 1) and 95%
/// interval of the mean. With one repeat finished (an interrupted run) there is no spread:
/// `stddev` and the interval are absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub n: u32,
    pub mean: f64,
    pub stddev: Option<f64>,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
}

impl Spread {
    /// The spread of `samples` (none: an empty spread of mean 0).
    pub fn of(samples: &[f64]) -> Spread {
        let n = samples.len();
        let mean = if n == 0 {
            0.0
        } else {
            samples.iter().sum::<f64>() / n as f64
        };
        if n < 2 {
            return Spread {
                n: n as u32,
                mean,
                stddev: None,
                ci95_low: None,
                ci95_high: None,
            };
        }
        let squares: f64 = samples.iter().map(|x| (x - mean).powi(2)).sum();
        let stddev = (squares / (n - 1) as f64).sqrt();
        let half_width = t_quantile_975(n as u32 - 1) * stddev / (n as f64).sqrt();
        Spread {
            n: n as u32,
            mean,
            stddev: Some(stddev),
            ci95_low: Some(mean - half_width),
            ci95_high: Some(mean + half_width),
        }
    }

    /// The interval's half-width (0 without a spread).
    pub fn half_width(&self) -> f64 {
        match (self.ci95_low, self.ci95_high) {
            (Some(low), Some(high)) => (high - low) / 2.0,
            _ => 0.0,
        }
    }
}

/// `value` in `format`, which may only know positive values (latencies): an interval's low end
/// below 0 (few repeats far apart) is shown with its sign, as computed, not clamped.
pub(crate) fn signed(value: f64, format: fn(f64) -> String) -> String {
    if value < 0.0 {
        format!("-{}", format(-value))
    } else {
        format(value)
    }
}

/// Welch's two-sided t test at 5% between two figures' repeats: `None` when either has fewer
/// than two repeats (no noise to judge by); `Some(true)` when the means differ by more than
/// the noise. The Welch–Satterthwaite degrees of freedom are rounded down, which makes the
/// critical value larger: a difference called real is real at 5% or better.
pub fn welch_differs(a: &Spread, b: &Spread) -> Option<bool> {
    let (sa, sb) = (a.stddev?, b.stddev?);
    let va = sa * sa / f64::from(a.n);
    let vb = sb * sb / f64::from(b.n);
    let difference = (a.mean - b.mean).abs();
    if va + vb == 0.0 {
        // Neither varied at all (a deterministic simulation on one seed): any difference is real.
        return Some(difference > 0.0);
    }
    let t = difference / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va * va / f64::from(a.n - 1) + vb * vb / f64::from(b.n - 1));
    let df = (df.floor() as u32).max(1);
    Some(t > t_quantile_975(df))
}

/// A job's headline figures in one direction over its repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatSummary {
    /// The job's name.
    pub job: String,
    /// Its target's description.
    pub target: String,
    /// `read`, `write` or `trim`.
    pub direction: String,
    /// Repeats asked for (`--repeat N`); `bw_bytes_per_s.n` says how many finished.
    pub repeats: u32,
    pub bw_bytes_per_s: Spread,
    pub iops: Spread,
    /// Total latency (submission + completion), the table's `mean lat`.
    pub lat_mean_ns: Spread,
    /// The completion latency's 99th percentile, the table's `p99 clat`.
    pub clat_p99_ns: Spread,
}

/// How a figure is written in a table.
pub(crate) type Formatter = fn(f64) -> String;

impl RepeatSummary {
    /// The headline figures in the tables' order, with their names there: MB/s (as bytes per
    /// second), IOPS, mean latency and p99 completion latency (ns).
    pub(crate) fn figures(&self) -> [(&'static str, &Spread); 4] {
        [
            ("MB/s", &self.bw_bytes_per_s),
            ("IOPS", &self.iops),
            ("mean lat", &self.lat_mean_ns),
            ("p99 clat", &self.clat_p99_ns),
        ]
    }
}

/// Which repeat of how many `job` is, from its specification (`repeat` of storlab-job's
/// `JobSpec`, kept in the report's `job`): `None` for a job run once.
pub fn repeat_of(job: &JobReport) -> Option<(u32, u32)> {
    let repeat = job.setup.job.get("repeat")?;
    let index = u32::try_from(repeat.get("index")?.as_u64()?).ok()?;
    let of = u32::try_from(repeat.get("of")?.as_u64()?).ok()?;
    Some((index, of))
}

/// The repeat statistics of `jobs`: one summary per (job, target, direction) that ran with
/// repeats, in the order first met. Empty for a run without repeats.
pub fn summarise_repeats(jobs: &[JobReport]) -> Vec<RepeatSummary> {
    // (job, target, direction, repeats) → [bw, iops, mean lat, p99] samples
    type Key = (String, String, &'static str, u32);
    let mut groups: Vec<(Key, [Vec<f64>; 4])> = Vec::new();
    for job in jobs {
        let Some((_, of)) = repeat_of(job) else {
            continue;
        };
        for (direction, summary) in job.directions() {
            let key = (
                job.setup.name.clone(),
                job.setup.target.description.clone(),
                direction,
                of,
            );
            let index = match groups.iter().position(|(k, _)| *k == key) {
                Some(index) => index,
                None => {
                    groups.push((key, Default::default()));
                    groups.len() - 1
                }
            };
            let samples = &mut groups[index].1;
            samples[0].push(summary.bw_bytes_per_s);
            samples[1].push(summary.iops);
            samples[2].push(summary.lat.mean_ns);
            samples[3].push(summary.clat.percentile_ns(P99).unwrap_or(0) as f64);
        }
    }
    groups
        .into_iter()
        .map(
            |((job, target, direction, repeats), [bw, iops, lat, p99])| RepeatSummary {
                job,
                target,
                direction: direction.to_owned(),
                repeats,
                bw_bytes_per_s: Spread::of(&bw),
                iops: Spread::of(&iops),
                lat_mean_ns: Spread::of(&lat),
                clat_p99_ns: Spread::of(&p99),
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Student's t density with `df` degrees of freedom.
    fn t_density(x: f64, df: f64) -> f64 {
        let ln_gamma = crate::cliff::ln_gamma;
        let log_gamma_ratio = ln_gamma((df + 1.0) / 2.0) - ln_gamma(df / 2.0);
        (log_gamma_ratio - 0.5 * (df * std::f64::consts::PI).ln()).exp()
            * (1.0 + x * x / df).powf(-(df + 1.0) / 2.0)
    }

    /// P(0 < T < t) by Simpson's rule.
    fn t_mass_from_zero(t: f64, df: f64) -> f64 {
        let steps = 200_000;
        let h = t / steps as f64;
        let mut sum = t_density(0.0, df) + t_density(t, df);
        for i in 1..steps {
            let weight = if i % 2 == 1 { 4.0 } else { 2.0 };
            sum += weight * t_density(i as f64 * h, df);
        }
        sum * h / 3.0
    }

    #[test]
    fn the_t_table_matches_closed_forms() {
        // df = 1 is Cauchy: tan(π(p − ½)); df = 2: (2p − 1) / √(2p(1 − p)).
        let p: f64 = 0.975;
        let cauchy = (std::f64::consts::PI * (p - 0.5)).tan();
        assert!((t_quantile_975(1) - cauchy).abs() < 1e-9);
        let two = (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
        assert!((t_quantile_975(2) - two).abs() < 1e-9);
        // df = 4: t = √(4/q − 4) ... with q = 4p(1−p)'s root form: α = 4p(1−p),
        // t = 2 √((cos(arccos(√α)/3)/√α) − 1) (Hill 1970).
        let alpha = 4.0 * p * (1.0 - p);
        let four = 2.0 * ((((alpha.sqrt()).acos() / 3.0).cos() / alpha.sqrt()) - 1.0).sqrt();
        assert!((t_quantile_975(4) - four).abs() < 1e-9, "{four}");
    }

    #[test]
    fn every_tabled_quantile_leaves_2_5_percent_in_the_tail() {
        for df in 1..=30u32 {
            let mass = t_mass_from_zero(t_quantile_975(df), f64::from(df));
            assert!((mass - 0.475).abs() < 1e-7, "df {df}: {mass}");
        }
    }

    #[test]
    fn past_the_table_the_expansion_joins_it_and_tends_to_the_normal() {
        // scipy.stats.t.ppf(0.975, 40) = 2.0210753903062715, (0.975, 120) = 1.979930405052777
        assert!((t_quantile_975(40) - 2.021_075_390_306_271_5).abs() < 1e-6);
        assert!((t_quantile_975(120) - 1.979_930_405_052_777).abs() < 1e-6);
        let mass = t_mass_from_zero(t_quantile_975(31), 31.0);
        assert!((mass - 0.475).abs() < 1e-6, "{mass}");
        assert!((t_quantile_975(1_000_000) - Z_975).abs() < 1e-5);
    }

    #[test]
    fn spread_of_known_samples() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
        let spread = Spread::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(spread.n, 8);
        assert!((spread.mean - 5.0).abs() < 1e-12);
        let sd = (32.0f64 / 7.0).sqrt();
        assert!((spread.stddev.unwrap() - sd).abs() < 1e-12);
        let half = 2.364_624_251_592_784 * sd / 8f64.sqrt();
        assert!((spread.ci95_low.unwrap() - (5.0 - half)).abs() < 1e-12);
        assert!((spread.ci95_high.unwrap() - (5.0 + half)).abs() < 1e-12);
        // Three repeats use t(2) = 4.30, not 1.96.
        let three = Spread::of(&[1.0, 2.0, 3.0]);
        assert!((three.half_width() - 4.302_652_729_749_464 / 3f64.sqrt()).abs() < 1e-12);
        let one = Spread::of(&[7.0]);
        assert_eq!((one.mean, one.stddev, one.ci95_low), (7.0, None, None));
    }

    #[test]
    fn welch_against_a_worked_example() {
        // a = 1..=5 (mean 3, var 2.5), b = 3..=7 (mean 5, var 2.5): t = 2/√1 = 2, df = 8,
        // t(8) = 2.306: inside the noise. b shifted to mean 7: t = 4 > 2.306: different.
        let a = Spread::of(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let b = Spread::of(&[3.0, 4.0, 5.0, 6.0, 7.0]);
        assert_eq!(welch_differs(&a, &b), Some(false));
        let far = Spread::of(&[5.0, 6.0, 7.0, 8.0, 9.0]);
        assert_eq!(welch_differs(&a, &far), Some(true));
        assert_eq!(welch_differs(&a, &Spread::of(&[3.0])), None);
        let still = Spread::of(&[4.0, 4.0]);
        assert_eq!(welch_differs(&still, &still), Some(false));
        assert_eq!(welch_differs(&still, &Spread::of(&[5.0, 5.0])), Some(true));
    }
}
