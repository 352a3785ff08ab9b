//! fio's keys for random offsets (its I/O type section): the share of random I/O, the random map, the distribution, and the generator and its seed.

use super::block_size::read_write_dropping_trim;
use super::values::parse_micros;
use super::values::set_if;
use super::{ApplyError, JobDraft, KeyDef};
use crate::model::FioRandom;
use crate::model::JobSpec;
use crate::model::{RandomDistribution, ZoneShare, MICROS_PER_UNIT};
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_count, parse_percent, parse_size};

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "percentage_random",
        aliases: &[],
        bare: false,
        meaning: "percent of random offsets in a rand* job (default 100); or read,write percents",
        field: "percentage_random",
        path: KeyPath::None,
        apply: |d, v| {
            // fio's `read,write,trim` form; the trim share is checked and unused (trim modes
            // of `rw` draw at the write share).
            let (read, write) =
                read_write_dropping_trim(v, |t| parse_percent(t).map_err(ApplyError::from))?;
            d.percentage_random_read = read;
            d.percentage_random_write = write;
            Ok(())
        },
    },
    KeyDef {
        name: "norandommap",
        aliases: &[],
        bare: true,
        meaning: "draw random offsets with repeats (default: every block once per pass)",
        field: "norandommap",
        path: KeyPath::None,
        apply: |d, v| {
            d.norandommap = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "random_distribution",
        aliases: &[],
        bare: false,
        meaning: "where random offsets fall: random, zipf:THETA, pareto:H, normal:DEV (each [:CENTER]), zoned:A/S:..., zoned_abs:A/SIZE:...",
        field: "random_distribution",
        path: KeyPath::None,
        apply: apply_random_distribution,
    },
    KeyDef {
        name: "random_generator",
        aliases: &[],
        bare: false,
        meaning: "fio's tausworthe (default), tausworthe64 or lfsr, drawn as fio draws them in a fio job",
        field: "random_generator",
        path: KeyPath::None,
        apply: |d, v| {
            d.random_generator = Some(match v {
                "tausworthe" => FioGenerator::Tausworthe,
                "tausworthe64" => FioGenerator::Tausworthe64,
                "lfsr" => FioGenerator::Lfsr,
                _ => {
                    return Err(ApplyError::Invalid(
                        "use tausworthe, lfsr or tausworthe64".into(),
                    ))
                }
            });
            Ok(())
        },
    },
    KeyDef {
        name: "seed",
        aliases: &["randseed"],
        bare: false,
        meaning: "seed for offsets, sizes, directions and data",
        field: "seed",
        path: KeyPath::None,
        apply: |d, v| {
            d.seed = Some(parse_count(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "allrandrepeat",
        aliases: &[],
        bare: true,
        meaning: "fio: seed every random stream (sizes, mix, data, offsets) from fio's fixed seed and the thread, whatever randseed says",
        field: "allrandrepeat",
        path: KeyPath::None,
        apply: |d, v| {
            d.allrandrepeat = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "softrandommap",
        aliases: &[],
        bare: true,
        meaning: "fio: go on without the random map when it cannot be allocated (accepted, no effect: storlab's map is always allocated)",
        field: "softrandommap",
        path: KeyPath::None,
        apply: |d, v| {
            parse_bool(v)?;
            super::values::accept_without_effect(d, "softrandommap");
            Ok(())
        },
    },
    KeyDef {
        name: "randrepeat",
        aliases: &[],
        bare: true,
        meaning: "1 (default): the same sequence every run; 0 in a fio job: seeds from the system's entropy unless randseed is given (refused in a preset)",
        field: "randrepeat",
        path: KeyPath::None,
        apply: |d, v| {
            d.randrepeat = Some(parse_bool(v)?);
            Ok(())
        },
    },
];

/// An action fio's `replay_skip` leaves out of a replay.
/// fio's `random_generator` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FioGenerator {
    Tausworthe,
    Tausworthe64,
    Lfsr,
}

/// fio's `randseed` when a job gives none (options.c, `rand_seed`: `.def = "0x89"`).
pub(super) const FIO_DEFAULT_RANDSEED: u64 = 0x89;

/// Share of random offsets in a random job when `percentage_random` is not given.
pub(super) const RANDOM_DEFAULT_PERCENT: u8 = 100;

/// A seed no earlier run had, for `randrepeat=0`: std's `RandomState` keys its hashers from the
/// operating system's randomness, so hashing nothing with a new one gives a fresh 64-bit value.
/// The run records the seed it used like any other, so the run can still be repeated with
/// `randseed=`.
pub(super) fn seed_from_os_entropy() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

/// `random_distribution=`: fio 3.33's `random`, `zipf:THETA[:CENTER]`, `pareto:H[:CENTER]`,
/// `normal:DEV[:CENTER]` (`gauss` too), `zoned:A/S:...` and `zoned_abs:A/SIZE:...`, with fio's
/// range checks (options.c, `str_random_distribution_cb`).
fn apply_random_distribution(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    let invalid = |detail: &str| Err(ApplyError::Invalid(detail.to_string()));
    let (kind, params) = v.split_once(':').unwrap_or((v, ""));
    let center = |text: Option<&str>| -> Result<Option<u64>, ApplyError> {
        let Some(text) = text else { return Ok(None) };
        let center = parse_micros(text)?;
        if center > MICROS_PER_UNIT {
            return Err(ApplyError::Invalid(
                "the center must be between 0 and 1 (a share of the region)".into(),
            ));
        }
        Ok(Some(center))
    };
    let mut numbers = params.split(':');
    let first = numbers.next().filter(|t| !t.is_empty());
    let second = numbers.next();
    if numbers.next().is_some() && !kind.starts_with("zoned") {
        return invalid("at most two parameters: VALUE[:CENTER]");
    }
    let distribution = match kind {
        "random" if params.is_empty() => RandomDistribution::Random,
        "zipf" => {
            let Some(theta) = first else {
                return invalid("zipf needs its theta (e.g. zipf:1.2)");
            };
            let theta_micros = parse_micros(theta)?;
            if theta_micros == MICROS_PER_UNIT {
                return invalid("zipf's theta must differ from 1.0 (as in fio)");
            }
            RandomDistribution::Zipf {
                theta_micros,
                center_micros: center(second)?,
            }
        }
        "pareto" => {
            let Some(h) = first else {
                return invalid("pareto needs its h (e.g. pareto:0.9)");
            };
            let h_micros = parse_micros(h)?;
            if h_micros == 0 || h_micros >= MICROS_PER_UNIT {
                return invalid("pareto's h must be above 0 and below 1 (as in fio)");
            }
            RandomDistribution::Pareto {
                h_micros,
                center_micros: center(second)?,
            }
        }
        "normal" | "gauss" => {
            let dev_percent_micros = first.map(parse_micros).transpose()?.unwrap_or(0);
            if dev_percent_micros >= 100 * MICROS_PER_UNIT {
                return invalid("normal's deviation must be below 100 (percent of the region)");
            }
            RandomDistribution::Normal {
                dev_percent_micros,
                center_micros: center(second)?,
            }
        }
        "zoned" => zones(params, false)?,
        "zoned_abs" => zones(params, true)?,
        _ => {
            return invalid(
                "use random, zipf:THETA, pareto:H, normal:DEV, zoned:ACCESS/SIZE:... or zoned_abs:ACCESS/SIZE:...",
            )
        }
    };
    d.random_distribution = Some(distribution);
    Ok(())
}

/// fio's `zoned:ACCESS/SIZE:...` (sizes in percent of the region; `absolute`: `zoned_abs`, sizes
/// in bytes) from `params`, the text after `zoned:`.
fn zones(params: &str, absolute: bool) -> Result<RandomDistribution, ApplyError> {
    let invalid = |detail: &str| Err(ApplyError::Invalid(detail.to_string()));
    if params.contains(',') {
        return Err(ApplyError::Unsupported(
            "storlab takes one zone list for both directions".into(),
        ));
    }
    let mut zones = Vec::new();
    // Relative zones whose size is left out (`20/`, `20`, or fio's `20/0`) share what
    // the others leave of 100%, as fio's zone_split_ddir divides it (integer division).
    let mut zones_without_size = Vec::new();
    for zone in params.split(':') {
        let (access, size) = match zone.split_once('/') {
            Some(pair) => pair,
            None if !absolute => (zone, ""),
            None => return invalid("zones are ACCESS/SIZE (e.g. zoned_abs:60/16k:40/48k)"),
        };
        let access_percent = parse_percent(access)?;
        let size = if absolute {
            parse_size(size)?
        } else if size.is_empty() {
            0
        } else {
            u64::from(parse_percent(size)?)
        };
        if size == 0 {
            if absolute {
                return invalid("a zone needs a size above 0");
            }
            zones_without_size.push(zones.len());
        }
        zones.push(ZoneShare {
            access_percent,
            size,
        });
    }
    if !zones_without_size.is_empty() {
        let given: u64 = zones.iter().map(|z| z.size).sum();
        let share = 100u64.saturating_sub(given) / zones_without_size.len() as u64;
        if share == 0 {
            return invalid("the zones given a size leave no share for those without one");
        }
        for index in zones_without_size {
            zones[index].size = share;
        }
    }
    let access: u32 = zones.iter().map(|z| u32::from(z.access_percent)).sum();
    if access != 100 {
        return Err(ApplyError::Invalid(format!(
            "zone access shares sum to {access}%, not 100% (as fio requires)"
        )));
    }
    if absolute {
        Ok(RandomDistribution::ZonedAbs { zones })
    } else {
        if zones.iter().map(|z| z.size).sum::<u64>() > 100 {
            return invalid("zone sizes add up to more than 100% of the region");
        }
        Ok(RandomDistribution::Zoned { zones })
    }
}

impl JobDraft {
    /// Whether the job's offsets are random (an unset `rw` is fio's `read` in a job file or flags,
    /// storlab's random read in a preset), their shares (with a warning for shares a sequential
    /// mode ignores) and the random map.
    pub(super) fn build_random_shares(&self, spec: &mut JobSpec) -> bool {
        let random = match self.rw {
            Some(rw) => rw.is_random(),
            None => self.storlab_rw_default,
        };
        let given = self.percentage_random_read.is_some() || self.percentage_random_write.is_some();
        if random {
            let read_share = self
                .percentage_random_read
                .unwrap_or(RANDOM_DEFAULT_PERCENT);
            let write_share = self
                .percentage_random_write
                .unwrap_or(RANDOM_DEFAULT_PERCENT);
            // A job in one direction keeps that direction's share in `random_percent`; only a
            // mix with two different shares needs the writes' own.
            match spec.read_percent {
                0 => spec.random_percent = write_share,
                100 => spec.random_percent = read_share,
                _ => {
                    spec.random_percent = read_share;
                    spec.random_percent_write = (write_share != read_share).then_some(write_share);
                }
            }
        } else {
            if given {
                spec.warnings.push(format!(
                    "percentage_random has no effect with sequential rw={}; use a rand* mode",
                    spec.rw_name()
                ));
            }
            spec.random_percent = 0;
        }
        // fio's LFSR generator (lib/lfsr.c) visits every block once per pass by construction,
        // random map or not, so a job naming it draws without repeats even with
        // `norandommap`: storlab's map is a permutation too (fio's t0021 checks exactly this).
        spec.fio_norandommap = self.norandommap.unwrap_or(false);
        spec.random_map =
            !spec.fio_norandommap || self.random_generator == Some(FioGenerator::Lfsr);
        random
    }

    /// The random streams: storlab's seed, fio's generators seeded as fio seeds them, and the
    /// distribution of offsets.
    pub(super) fn build_random_streams(&self, spec: &mut JobSpec) {
        set_if(&mut spec.seed, self.seed);
        // `randrepeat=0` without `randseed`: a fresh seed every run, for storlab's own streams
        // (data, and the jobs below that keep them) as for fio's.
        if self.seed.is_none() && self.randrepeat == Some(false) {
            spec.seed = seed_from_os_entropy();
        }
        // A fio job draws from fio's own generators seeded as fio seeds them, its LFSR too.
        spec.fio_random = (!self.storlab_rw_default).then(|| FioRandom {
            randseed: self.seed.unwrap_or(FIO_DEFAULT_RANDSEED),
            randrepeat: self.randrepeat.unwrap_or(true),
            randseed_given: self.seed.is_some(),
            tausworthe64: self.random_generator == Some(FioGenerator::Tausworthe64),
            lfsr: self.random_generator == Some(FioGenerator::Lfsr),
            allrandrepeat: self.allrandrepeat.unwrap_or(false),
            rand_mode: self.rw.is_some_and(|rw| rw.is_random()),
        });
        if let Some(distribution) = &self.random_distribution {
            spec.random_distribution = distribution.clone();
        }
    }
}

/// On a region that ends before its file, a partly random job runs on where fio's would end.
pub(super) fn note_partly_random(spec: &mut JobSpec) {
    let partly_random = [spec.random_percent, spec.random_percent_writes()]
        .iter()
        .find(|share| (1..100).contains(*share))
        .copied();
    if let (Some(share), false, None) = (partly_random, spec.time_based, &spec.fio_random) {
        // On a region that ends before its file, fio 3.33 ends a partly random job when a
        // sequential I/O would pass the region's end, at a point set by its own random
        // streams: a fio job draws from them (and matches), storlab's generator does not.
        spec.warnings.push(format!(
            "storlab differs from fio here: with percentage_random={} fio ends the job when \
             a sequential I/O would pass the end of a region that ends before its file, \
             storlab goes round to the region's start and moves all of its bytes",
            share
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::FIO_DEFAULT_RANDSEED;
    use crate::error::Location;
    use crate::keys::{draft, JobDraft};
    use crate::model::{FioRandom, RandomDistribution, ZoneShare};

    /// `randrepeat=0` (fio example jesd219.fio) takes a new seed each run, as fio; `randseed`
    /// still wins over it, and the default repeats storlab's fixed seed.
    #[test]
    fn randrepeat_0_draws_a_new_seed_unless_randseed_is_set() {
        let seed = |keys: &[(&str, &str)]| {
            let mut d = JobDraft::new();
            d.set("size", Some("1M"), &Location::Flag).unwrap();
            for (key, value) in keys {
                d.set(key, Some(value), &Location::Flag).unwrap();
            }
            d.finish("job", &Location::Job("job".into())).unwrap().seed
        };
        let fixed = seed(&[]);
        assert_eq!(seed(&[("randrepeat", "1")]), fixed);
        let fresh: Vec<u64> = (0..4).map(|_| seed(&[("randrepeat", "0")])).collect();
        assert!(fresh.iter().all(|&s| s != fixed), "{fresh:?}");
        assert!(fresh.windows(2).all(|pair| pair[0] != pair[1]), "{fresh:?}");
        assert_eq!(seed(&[("randrepeat", "0"), ("randseed", "77")]), 77);
        assert_eq!(seed(&[("randseed", "77"), ("randrepeat", "0")]), 77);
    }

    /// The distribution of a random reading job given `random_distribution=value`, or the error.
    fn random_distribution_of(value: &str) -> Result<RandomDistribution, String> {
        draft(&[
            ("size", Some("1M")),
            ("rw", Some("randread")),
            ("random_distribution", Some(value)),
        ])
        .map(|s| s.random_distribution)
        .map_err(|e| e.to_string())
    }

    #[test]
    fn random_distribution_takes_fios_forms_and_ranges() {
        assert_eq!(
            random_distribution_of("zipf:1.2"),
            Ok(RandomDistribution::Zipf {
                theta_micros: 1_200_000,
                center_micros: None
            })
        );
        assert_eq!(
            random_distribution_of("pareto:0.9:0.25"),
            Ok(RandomDistribution::Pareto {
                h_micros: 900_000,
                center_micros: Some(250_000)
            })
        );
        assert_eq!(
            random_distribution_of("gauss:5"),
            random_distribution_of("normal:5")
        );
        assert_eq!(
            random_distribution_of("zoned_abs:60/16k:40/48k"),
            Ok(RandomDistribution::ZonedAbs {
                zones: vec![
                    ZoneShare {
                        access_percent: 60,
                        size: 16 << 10
                    },
                    ZoneShare {
                        access_percent: 40,
                        size: 48 << 10
                    }
                ]
            })
        );
        // A relative zone without a size shares what the others leave, as fio's
        // zone_split_ddir: `20/`, `20` and `20/0` alike (fio example rand-zones.fio's form).
        let zones = |shares: &[(u8, u64)]| {
            Ok(RandomDistribution::Zoned {
                zones: shares
                    .iter()
                    .map(|&(access_percent, size)| ZoneShare {
                        access_percent,
                        size,
                    })
                    .collect(),
            })
        };
        assert_eq!(
            random_distribution_of("zoned:50/5:30/15:20/"),
            zones(&[(50, 5), (30, 15), (20, 80)])
        );
        assert_eq!(
            random_distribution_of("zoned:50/5:30:20/0"),
            zones(&[(50, 5), (30, 47), (20, 47)])
        );
        // fio's own refusals (fio 3.33 --parse-only), one line each.
        for (value, message) in [
            ("zipf:1.0", "zipf's theta must differ from 1.0"),
            ("pareto:1.5", "pareto's h must be above 0 and below 1"),
            ("normal:200", "normal's deviation must be below 100"),
            ("zipf:1.2:1.5", "the center must be between 0 and 1"),
            (
                "zoned:60/10:30/90",
                "zone access shares sum to 90%, not 100%",
            ),
            ("zoned:60/60:40/60", "zone sizes add up to more than 100%"),
            ("zoned:60/100:40/", "the zones given a size leave no share"),
            ("uniform", "use random, zipf:THETA"),
        ] {
            let error = random_distribution_of(value).unwrap_err();
            assert!(
                error.starts_with(&format!("--random_distribution={value}: {message}")),
                "{error}"
            );
        }
    }

    /// A distribution without random offsets warns; `random_generator` takes fio's generators,
    /// and LFSR keeps the random map.
    #[test]
    fn random_distribution_needs_random_offsets_and_lfsr_keeps_the_map() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("random_distribution", Some("zipf:2")),
        ])
        .unwrap();
        assert!(spec
            .warnings
            .iter()
            .any(|w| w.contains("random_distribution has no effect")));
        assert!(draft(&[("size", Some("1M")), ("random_generator", Some("lfsr"))]).is_ok());
        // fio's LFSR never repeats a block in a pass: with it, norandommap keeps the map.
        let lfsr = |generator: &str| {
            draft(&[
                ("size", Some("1M")),
                ("rw", Some("randread")),
                ("norandommap", None),
                ("random_generator", Some(generator)),
            ])
            .unwrap()
            .random_map
        };
        assert!(lfsr("lfsr"));
        assert!(!lfsr("tausworthe"));
        assert!(draft(&[("random_generator", Some("mt"))]).is_err());
    }

    #[test]
    fn percentage_random_takes_a_share_per_direction() {
        let shares = |rw: &str, v: &str| {
            draft(&[
                ("size", Some("1M")),
                ("rw", Some(rw)),
                ("percentage_random", Some(v)),
            ])
            .map(|spec| (spec.random_percent, spec.random_percent_write))
            .map_err(|e| e.to_string())
        };
        assert_eq!(shares("randrw", "30,70"), Ok((30, Some(70))));
        assert_eq!(shares("randrw", "40"), Ok((40, None)));
        // A trim share is checked and has no use (trim modes draw at the write share).
        assert_eq!(shares("randrw", "50,50,10"), Ok((50, None)));
        // A job in one direction keeps that direction's share.
        assert_eq!(shares("randwrite", "30,70"), Ok((70, None)));
        assert_eq!(shares("randread", "30,70"), Ok((30, None)));
        assert_eq!(shares("randrw", ",70"), Ok((100, Some(70))));
        assert!(shares("randrw", "30,170").unwrap_err().contains("170"));
        assert!(shares("randrw", "1,2,3,4")
            .unwrap_err()
            .contains("more than three"));
        // Without fio's streams (a preset draws from storlab's own), the run-time note on
        // fio's early end names the partly random share.
        let mut preset = JobDraft::with_storlab_defaults();
        for (key, value) in [
            ("size", "1M"),
            ("rw", "randrw"),
            ("percentage_random", "100,60"),
        ] {
            preset.set(key, Some(value), &Location::Flag).unwrap();
        }
        let spec = preset.finish("p", &Location::Job("p".into())).unwrap();
        assert!(
            spec.warnings
                .iter()
                .any(|w| w.contains("percentage_random=60")),
            "{:?}",
            spec.warnings
        );
    }

    #[test]
    fn fio_jobs_draw_from_fios_streams_and_presets_from_storlabs() {
        let fio = |settings: &[(&str, Option<&str>)]| {
            let mut all = settings.to_vec();
            all.extend([("size", Some("1M")), ("rw", Some("randread"))]);
            draft(&all).unwrap().fio_random
        };
        assert_eq!(
            fio(&[]),
            Some(FioRandom {
                randseed: FIO_DEFAULT_RANDSEED,
                randrepeat: true,
                randseed_given: false,
                tausworthe64: false,
                lfsr: false,
                allrandrepeat: false,
                rand_mode: true,
            })
        );
        let given = fio(&[("randseed", Some("12")), ("randrepeat", Some("0"))]).unwrap();
        assert_eq!(
            (given.randseed, given.randrepeat, given.randseed_given),
            (12, false, true)
        );
        assert!(
            fio(&[("random_generator", Some("tausworthe64"))])
                .unwrap()
                .tausworthe64
        );
        assert!(fio(&[("random_generator", Some("lfsr"))]).unwrap().lfsr);
        let mut preset = JobDraft::with_storlab_defaults();
        preset.set("size", Some("1M"), &Location::Flag).unwrap();
        assert_eq!(
            preset
                .clone()
                .finish("p", &Location::Job("p".into()))
                .unwrap()
                .fio_random,
            None
        );
        preset
            .set("randrepeat", Some("0"), &Location::Flag)
            .unwrap();
        let refused = preset.finish("p", &Location::Job("p".into())).unwrap_err();
        assert!(refused.to_string().contains("randrepeat"), "{refused}");
    }
}
