//! A preset's sweep points: its series expanded into jobs (zones, disjoint workers, coordinates), and the fit of a sweep to a target's size.

use super::{Preset, PresetError, Series, SweepPoint, COORD_DIRECTION, COORD_SERIES, COORD_ZONE};
use crate::error::{JobError, Location};
use crate::keys::{find_key, JobDraft};
use crate::model::{format_share, JobSpec, Target, PPM_WHOLE};
use crate::size::format_size;

impl Preset {
    /// Every key any series sweeps (overriding one would collapse the sweep).
    pub fn swept_keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = self
            .series
            .iter()
            .flat_map(|s| s.sweep.iter().map(|a| a.key.as_str()))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The sweep points in run order: series after series, each the cartesian product of its
    /// axes (first axis outermost). `overrides` are fio `key=value` pairs from the command line,
    /// applied after the preset's own keys; `target` replaces the preset's target unless it is
    /// [`Target::None`].
    pub fn expand(
        &self,
        overrides: &[(String, Option<String>)],
        target: &Target,
    ) -> Result<Vec<SweepPoint>, PresetError> {
        let swept = self.swept_keys();
        for (key, _) in overrides {
            let canonical = find_key(key).map_or(key.as_str(), |def| def.name);
            if swept.contains(&canonical) {
                return Err(PresetError::SweptOverride {
                    preset: self.name.clone(),
                    key: key.clone(),
                });
            }
        }
        let job_error = |source: JobError| PresetError::Job {
            preset: self.name.clone(),
            source: Box::new(source),
        };
        let location = Location::Job(self.name.clone());
        let mut points = Vec::new();
        for series in &self.series {
            for combo in sweep_combinations(series) {
                let mut draft = JobDraft::with_storlab_defaults();
                for (key, value) in self.keys.iter().chain(&series.keys).chain(&combo) {
                    draft.set(key, Some(value), &location).map_err(job_error)?;
                }
                if *target != Target::None {
                    draft.override_target(target.clone());
                }
                for (key, value) in overrides {
                    let canonical = find_key(key).map_or(key.as_str(), |def| def.name);
                    if series.keep.iter().any(|k| k == canonical) {
                        continue;
                    }
                    draft
                        .set(key, value.as_deref(), &Location::Flag)
                        .map_err(job_error)?;
                }
                let name = std::iter::once(series.name.clone())
                    .chain(combo.iter().map(|(k, v)| format!("{k}={v}")))
                    .collect::<Vec<_>>()
                    .join(",");
                let mut job = draft.finish(&name, &location).map_err(job_error)?;
                job.name = format!("{}/{name}", self.name);
                // Each worker gets the same share, next to the previous one; shares resolve
                // within the target, so that layout cannot overflow (bytes are checked below).
                if series.disjoint_workers {
                    job.target_shares.offset_increment_ppm = job.target_shares.size_ppm;
                }
                if series.disjoint_workers && job.target_shares.size_ppm.is_none() {
                    disjoint_regions(series, &mut job, overrides, &location).map_err(job_error)?;
                }
                job.group_reporting = true;
                job.stonewall = true;
                let coords = coordinates(series, combo, &job);
                match series.zones {
                    Some(zones) => {
                        for (zone_job, zone_label) in
                            zone_jobs(&job, zones, overrides, &location).map_err(job_error)?
                        {
                            let mut zone_coords = coords.clone();
                            zone_coords.push((COORD_ZONE.to_string(), zone_label));
                            points.push(SweepPoint {
                                coords: zone_coords,
                                job: zone_job,
                            });
                        }
                    }
                    None => points.push(SweepPoint { coords, job }),
                }
            }
        }
        Ok(points)
    }
}

/// The combinations of `series`' swept values, the first axis outermost.
fn sweep_combinations(series: &Series) -> Vec<Vec<(String, String)>> {
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for axis in &series.sweep {
        combos = combos
            .into_iter()
            .flat_map(|combo| {
                axis.values.iter().map(move |value| {
                    let mut next = combo.clone();
                    next.push((axis.key.clone(), value.clone()));
                    next
                })
            })
            .collect();
    }
    combos
}

/// Each worker of `job` (a series with disjoint workers, sized in bytes) in its own region,
/// next to the previous one.
fn disjoint_regions(
    series: &Series,
    job: &mut JobSpec,
    overrides: &[(String, Option<String>)],
    location: &Location,
) -> Result<(), JobError> {
    let Some(size) = job.size_bytes else {
        return Err(JobError::whole_job(
            location.clone(),
            format!(
                "series '{}' has disjoint workers, which needs size=",
                series.name
            ),
        ));
    };
    job.offset_increment_bytes = size;
    // Validation checked the region layout before `offset_increment` was set
    // here; check it again, naming the setting the user gave.
    let end = job
        .last_worker_offset_bytes()
        .and_then(|last| last.checked_add(size));
    if end.is_none() {
        let (at, key, value) = size_setting(overrides, location, size);
        return Err(JobError::invalid(
            at,
            key,
            value,
            format!(
                "series '{}' gives each of its {} workers its own region of this \
                 size; together they end beyond 16 EiB, past any device",
                series.name, job.numjobs
            ),
        ));
    }
    Ok(())
}

/// The coordinates of `job`, a point of `series` made of `combo`: the series, its labels, the
/// swept values, the direction, and the settings the series fixes.
fn coordinates(
    series: &Series,
    combo: Vec<(String, String)>,
    job: &JobSpec,
) -> Vec<(String, String)> {
    let mut coords = vec![(COORD_SERIES.to_string(), series.name.clone())];
    coords.extend(series.labels.iter().cloned());
    coords.extend(combo);
    coords.push((COORD_DIRECTION.to_string(), direction_label(job)));
    // Settings a series fixes rather than sweeps are coordinates too, so a table can
    // name them whatever the preset sweeps.
    let derived = [
        ("bs", block_size_label(job)),
        ("iodepth", job.iodepth.to_string()),
        ("numjobs", job.numjobs.to_string()),
    ];
    for (name, value) in derived {
        if !coords.iter().any(|(n, _)| n == name) {
            coords.push((name.to_string(), value));
        }
    }
    coords
}

/// `job` once per zone of its test area, each with the zone's start as a share of the area for
/// its label. An area in bytes (`size=`, `--size` on a file) is cut into zones in bytes; the whole
/// target, or an area given in shares of it, into shares, which resolve when the target is open.
fn zone_jobs(
    job: &JobSpec,
    zones: u32,
    overrides: &[(String, Option<String>)],
    location: &Location,
) -> Result<Vec<(JobSpec, String)>, JobError> {
    // A copy of `job` named after its zone, with the zone's label; the caller sets its region.
    let zone_copy = |zone: u32| {
        let label = format_share(zone_start_ppm(zone, zones));
        let mut copy = job.clone();
        copy.name = format!("{},{COORD_ZONE}={label}", job.name);
        (copy, label)
    };
    let mixed = || {
        JobError::whole_job(
            location.clone(),
            "zones cut the test area into parts: give offset and size both in bytes or both in % \
             (or neither: the whole target)",
        )
    };
    let shares = job.target_shares;
    match job.size_bytes {
        // The whole target, or an area given in shares of it.
        None if job.offset_bytes == 0 => {
            let area_start = shares.offset_ppm.unwrap_or(0);
            let area_len = shares
                .size_ppm
                .unwrap_or(PPM_WHOLE)
                .min(PPM_WHOLE - area_start.min(PPM_WHOLE));
            let scale =
                |ppm: u32| (u64::from(area_len) * u64::from(ppm) / u64::from(PPM_WHOLE)) as u32;
            Ok((0..zones)
                .map(|zone| {
                    let (mut zone_job, label) = zone_copy(zone);
                    let start = scale(zone_start_ppm(zone, zones));
                    let end = scale(zone_start_ppm(zone + 1, zones));
                    zone_job.target_shares.offset_ppm = Some(area_start + start);
                    zone_job.target_shares.size_ppm = Some((end - start).max(1));
                    (zone_job, label)
                })
                .collect())
        }
        // An area in bytes: from `offset`, `size` long.
        Some(area_bytes) if shares.offset_ppm.is_none() => {
            let zone_bytes = area_bytes / u64::from(zones) / job.align_bytes * job.align_bytes;
            if zone_bytes < job.max_block_bytes() {
                let (at, key, value) = size_setting(overrides, location, area_bytes);
                return Err(JobError::invalid(
                    at,
                    key,
                    value,
                    format!(
                        "{zones} zones of this area are smaller than one {} block each",
                        crate::size::format_size(job.max_block_bytes())
                    ),
                ));
            }
            Ok((0..zones)
                .map(|zone| {
                    let (mut zone_job, label) = zone_copy(zone);
                    zone_job.offset_bytes = job.offset_bytes + u64::from(zone) * zone_bytes;
                    zone_job.size_bytes = Some(zone_bytes);
                    (zone_job, label)
                })
                .collect())
        }
        _ => Err(mixed()),
    }
}

/// Where the `size` a preset point ended with was set, for an error about it: the command line's
/// `--size` flag if the user gave one, else the preset (with the value in bytes).
fn size_setting(
    overrides: &[(String, Option<String>)],
    location: &Location,
    size_bytes: u64,
) -> (Location, String, Option<String>) {
    let flag = overrides
        .iter()
        .rev()
        .find(|(key, _)| find_key(key).is_some_and(|def| def.name == "size"));
    match flag {
        Some((key, value)) => (Location::Flag, key.clone(), value.clone()),
        None => (
            location.clone(),
            "size".to_string(),
            Some(size_bytes.to_string()),
        ),
    }
}

/// Where zone `zone` of `zones` starts, in parts per million of the area.
fn zone_start_ppm(zone: u32, zones: u32) -> u32 {
    (u64::from(zone) * u64::from(PPM_WHOLE) / u64::from(zones)) as u32
}

/// The block size of a job for tables: `4k`, `512`, `1m` for one size, else `mix`.
pub fn block_size_label(job: &JobSpec) -> String {
    let spec = match job.read_percent {
        0 => &job.block_size_write,
        _ => &job.block_size_read,
    };
    match spec {
        crate::model::BlockSizeSpec::Fixed(bytes) => short_size(*bytes),
        _ => "mix".into(),
    }
}

/// `512`, `4k`, `1m`: fio's way of writing a power-of-two size.
fn short_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)];
    UNITS
        .iter()
        .find(|(_, unit)| bytes >= *unit && bytes.is_multiple_of(*unit))
        .map_or_else(
            || bytes.to_string(),
            |(name, unit)| format!("{}{name}", bytes / unit),
        )
}

/// `read`, `write`, or `mix:R/W` (read/write percent) for a job's read share.
pub fn direction_label(job: &JobSpec) -> String {
    match job.read_percent {
        100 => "read".into(),
        0 => "write".into(),
        r => format!("mix:{r}/{}", 100 - r),
    }
}

/// Fits a preset's test areas to a target of fixed size (a simulated drive, a block device),
/// once that size is known: a point whose area, given in bytes, ends beyond the target shrinks
/// to it (workers on disjoint ranges share it equally), since a preset's size is "this much of
/// the drive at most" (IOMeter's 32 GB zone on a 32 GB drive is the whole drive). A zoned series
/// (h2benchw) is refused instead: its zones are equal parts of the area, which a shrunken last
/// zone would not be. Returns one note per series that shrank, or the one-line refusal.
pub fn fit_points_to_target(
    points: &mut [SweepPoint],
    target_size_bytes: u64,
) -> Result<Vec<String>, String> {
    let mut notes: Vec<String> = Vec::new();
    for point in points.iter_mut() {
        let series = point.coord(COORD_SERIES).unwrap_or_default().to_string();
        let zoned = point.coord(COORD_ZONE).is_some();
        let job = &mut point.job;
        // Shares of the target resolve within it (`plan_regions`); only bytes can overshoot.
        let (Some(size), true) = (job.size_bytes, job.target_shares.is_unset()) else {
            continue;
        };
        // A validated job's last region ends below 2^64 (`JobSpec::last_worker_offset_bytes`).
        let last_start = job.last_worker_offset_bytes().unwrap_or(u64::MAX);
        if last_start.saturating_add(size) <= target_size_bytes {
            continue;
        }
        if zoned {
            return Err(format!(
                "series '{series}' measures zones of a {} test area, which \
                 ends beyond the target's {target_size_bytes} bytes; give --size of at most {} bytes",
                format_size(size),
                target_size_bytes.saturating_sub(job.offset_bytes)
            ));
        }
        let align = job.align_bytes.max(1);
        let workers = u64::from(job.numjobs.max(1));
        let disjoint = workers > 1 && job.offset_increment_bytes == size;
        let room = if disjoint {
            target_size_bytes.saturating_sub(job.offset_bytes) / workers
        } else {
            target_size_bytes.saturating_sub(last_start)
        };
        let fitted = room / align * align;
        if fitted < job.max_block_bytes() {
            return Err(format!(
                "series '{series}' needs {} per worker but the target has \
                 {target_size_bytes} bytes, less than one block from its offset",
                format_size(size)
            ));
        }
        job.size_bytes = Some(fitted);
        if disjoint {
            job.offset_increment_bytes = fitted;
        }
        let note = format!(
            "series '{series}' asks for {} {}but the target has {target_size_bytes} bytes: \
             its test area shrinks to {fitted} bytes{}",
            format_size(size),
            if disjoint { "per worker " } else { "" },
            if disjoint { " per worker" } else { "" },
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    Ok(notes)
}
