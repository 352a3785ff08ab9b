//! Presets: the published test suites (IOMeter, CrystalDiskMark, ATTO, SNIA PTS...) as TOML data
//! files under `presets/`, expanded into sweep points, each an ordinary validated [`JobSpec`].
//!
//! A preset has fio keys for every point (`[keys]`), one or more series (`[[series]]`, each with
//! its own keys, fixed labels and swept axes), a table layout naming which coordinates make the
//! rows and which the columns, and optionally a steady-state rule (SNIA PTS) or file sets
//! (FC-Test). Swept axes are fio keys, so a preset can sweep anything a job file can set; see
//! `docs/presets.md` for the format.

mod expand;
mod file;

pub use expand::*;
pub use file::*;

use crate::error::JobError;
use crate::model::JobSpec;
use crate::size::parse_size;
use crate::steps::DeviceState;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The presets shipped with storlab, embedded so the binary works outside a checkout.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "iometer-sequential",
        include_str!("../../../../presets/iometer-sequential.toml"),
    ),
    (
        "iometer-response-time",
        include_str!("../../../../presets/iometer-response-time.toml"),
    ),
    (
        "iometer-random",
        include_str!("../../../../presets/iometer-random.toml"),
    ),
    (
        "iometer-database",
        include_str!("../../../../presets/iometer-database.toml"),
    ),
    (
        "iometer-fileserver",
        include_str!("../../../../presets/iometer-fileserver.toml"),
    ),
    (
        "iometer-webserver",
        include_str!("../../../../presets/iometer-webserver.toml"),
    ),
    (
        "iometer-workstation",
        include_str!("../../../../presets/iometer-workstation.toml"),
    ),
    (
        "iometer-multithread",
        include_str!("../../../../presets/iometer-multithread.toml"),
    ),
    (
        "usb-2013",
        include_str!("../../../../presets/usb-2013.toml"),
    ),
    ("cdm", include_str!("../../../../presets/cdm.toml")),
    ("atto", include_str!("../../../../presets/atto.toml")),
    (
        "hdspeed-multi",
        include_str!("../../../../presets/hdspeed-multi.toml"),
    ),
    (
        "h2benchw",
        include_str!("../../../../presets/h2benchw.toml"),
    ),
    ("fctest", include_str!("../../../../presets/fctest.toml")),
    (
        "write-cliff",
        include_str!("../../../../presets/write-cliff.toml"),
    ),
    (
        "snia-pts-iops",
        include_str!("../../../../presets/snia-pts-iops.toml"),
    ),
];

/// Coordinate every point has: the series it belongs to.
pub const COORD_SERIES: &str = "series";

/// Coordinate every point has: `read`, `write` or `mix:R/W` from the job's read share.
pub const COORD_DIRECTION: &str = "direction";

/// Coordinate the steady-state driver adds: the round number, from 1.
pub const COORD_ROUND: &str = "round";

/// Coordinate of a series run per zone: where the zone starts, as a share of the test area.
pub const COORD_ZONE: &str = "zone";

/// Most zones a series may cut its area into.
const ZONES_MAX: u32 = 1000;

/// Stack name used only to expand a preset for checking its table.
const CHECK_STACK: &str = "check";

/// Why a preset could not be loaded or expanded (one line).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PresetError {
    #[error("unknown preset '{name}'; `storlab presets` lists them{}", suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default())]
    Unknown {
        name: String,
        suggestion: Option<String>,
    },
    #[error("preset {file}: {detail}")]
    Format { file: String, detail: String },
    #[error("preset {preset}: {0}", .source)]
    Job {
        preset: String,
        #[source]
        source: Box<JobError>,
    },
    #[error("preset {preset}: --{key}: this preset sweeps {key}; leave it to the preset (or run a job file)")]
    SweptOverride { preset: String, key: String },
}

/// What one table cell shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// I/Os per second, all directions.
    Iops,
    /// Decimal megabytes per second, all directions.
    Mbps,
    /// Mean total latency in milliseconds.
    LatMs,
    /// Wall (or virtual) seconds the point took.
    Seconds,
}

impl Metric {
    /// Column heading suffix.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::Mbps => "MB/s",
            Metric::LatMs => "ms",
            Metric::Seconds => "s",
        }
    }
}

/// A single figure derived from a row of points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rating {
    /// IOMeter workstation rating: Σ IOPS(q)/q over the row's points with queue depth q in
    /// 1, 2, 4, 8, 16.
    IopsPerQueueDepth,
}

/// Queue depths the workstation rating sums over.
pub const RATING_QUEUE_DEPTHS: [u32; 5] = [1, 2, 4, 8, 16];

/// How a preset's result table is laid out, as its source printed it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableLayout {
    /// Coordinates whose values make the rows (`bs`, `rwmixwrite`, `round`...).
    pub rows: Vec<String>,
    /// Coordinates whose values make the columns (`iodepth`, `direction`...).
    pub columns: Vec<String>,
    /// Figures per cell.
    pub metrics: Vec<Metric>,
    /// An extra per-row figure.
    #[serde(default)]
    pub rating: Option<Rating>,
    /// Heading of the rating column.
    #[serde(default)]
    pub rating_label: Option<String>,
    /// Name the write cliffs of each point under the table: where its MB/s fell and stayed
    /// lower (`write-cliff`; storlab_report's `find_cliffs`).
    #[serde(default)]
    pub cliffs: bool,
}

/// SNIA PTS steady state: repeat rounds until the tracked figure holds still.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SteadyState {
    /// Coordinates (name → value) of the point whose IOPS are tracked.
    pub track: BTreeMap<String, String>,
    /// Rounds in the measurement window.
    pub window_rounds: usize,
    /// Largest allowed (max − min) over the window, percent of the window's mean.
    pub max_range_percent: f64,
    /// Largest allowed change of the least-squares line over the window, percent of the mean.
    pub max_slope_percent: f64,
    /// Give up (and say so) after this many rounds.
    pub max_rounds: usize,
    /// Sequential 128 KiB write passes over the region before the first round.
    pub precondition_passes: u32,
}

/// One FC-Test file set.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSet {
    pub name: String,
    /// How many files.
    pub files: u64,
    /// Size of each file, as written (`64k`, `1g`).
    pub file_size: String,
    /// Directory fan-out (files per directory).
    #[serde(default = "default_files_per_dir")]
    pub files_per_dir: u64,
}

impl FileSet {
    /// Bytes of one file.
    pub fn file_size_bytes(&self) -> u64 {
        parse_size(&self.file_size).unwrap_or(0)
    }
}

/// One swept axis: a fio key and its values, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    pub key: String,
    pub values: Vec<String>,
}

/// One series of points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Series {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub keys: Vec<(String, String)>,
    pub sweep: Vec<Axis>,
    pub disjoint_workers: bool,
    /// Every point runs once per zone: the test area (`offset` + `size`, or the whole target
    /// when neither is given) cut into this many equal parts, each point's region one of them,
    /// with the [`COORD_ZONE`] coordinate saying where it starts (`0%`, `5%`...). h2benchw's
    /// zone measurement: an HDD's transfer rate from its outer to its inner tracks.
    pub zones: Option<u32>,
    /// Keys (canonical names) the command line's overrides leave alone in this series: h2benchw's
    /// cache read re-reads one block whatever `--size` gives the other series.
    pub keep: Vec<String>,
}

/// A loaded preset.
#[derive(Clone, Debug, PartialEq)]
pub struct Preset {
    pub name: String,
    pub description: String,
    /// Who ran this suite and how (review, tool, specification).
    pub source: String,
    /// The state the preset asks for before its first point.
    pub state: DeviceState,
    pub keys: Vec<(String, String)>,
    pub table: TableLayout,
    pub series: Vec<Series>,
    pub steady_state: Option<SteadyState>,
    pub filesets: Vec<FileSet>,
}

/// One measured point of a sweep: its coordinates and its job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepPoint {
    /// (coordinate, value): series labels, swept keys as written, and the derived
    /// [`COORD_SERIES`] and [`COORD_DIRECTION`].
    pub coords: Vec<(String, String)>,
    pub job: JobSpec,
}

impl SweepPoint {
    /// The value of coordinate `name`, if the point has it.
    pub fn coord(&self, name: &str) -> Option<&str> {
        self.coords
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Names of the embedded presets, in listing order.
pub fn names() -> impl Iterator<Item = &'static str> {
    EMBEDDED.iter().map(|(name, _)| *name)
}

/// Load an embedded preset by name.
pub fn load(name: &str) -> Result<Preset, PresetError> {
    match EMBEDDED.iter().find(|(n, _)| *n == name) {
        Some((n, text)) => parse(text, &format!("presets/{n}.toml")),
        None => Err(PresetError::Unknown {
            name: name.to_string(),
            suggestion: names()
                .find(|n| n.contains(name) || name.contains(n))
                .map(str::to_string),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{format_share, Target};

    /// IOMeter Workstation's 32 GiB zone on a 32 GB (decimal) simulated drive.
    const DRIVE_32_GB: u64 = 32_000_000_000;

    fn workstation_points() -> Vec<SweepPoint> {
        load("iometer-workstation")
            .unwrap()
            .expand(&[], &Target::Sim("usb3-uas-ssd".into()))
            .unwrap()
    }

    #[test]
    fn a_zone_larger_than_the_target_shrinks_to_it_with_one_note() {
        let mut points = workstation_points();
        let notes = fit_points_to_target(&mut points, DRIVE_32_GB).unwrap();
        assert_eq!(
            notes,
            ["series 'zone-32g' asks for 32 GiB but the target has 32000000000 bytes: its test area shrinks to 32000000000 bytes"]
        );
        for point in &points {
            let end = point.job.offset_bytes + point.job.size_bytes.unwrap_or(0);
            assert!(end <= DRIVE_32_GB, "{}", point.job.name);
        }
        // On a larger drive nothing changes and nothing is said.
        let mut points = workstation_points();
        let before = points.clone();
        assert!(fit_points_to_target(&mut points, 64 << 30)
            .unwrap()
            .is_empty());
        assert_eq!(points, before);
    }

    #[test]
    fn disjoint_workers_share_a_small_target_and_zones_are_refused() {
        let mut points = load("iometer-multithread")
            .unwrap()
            .expand(&[], &Target::Sim("s".into()))
            .unwrap();
        let target = 3 << 30;
        let notes = fit_points_to_target(&mut points, target).unwrap();
        assert!(!notes.is_empty());
        for point in &points {
            let job = &point.job;
            let end = job.last_worker_offset_bytes().unwrap() + job.size_bytes.unwrap();
            assert!(end <= target, "{}", job.name);
            if job.numjobs > 1 {
                assert_eq!(job.offset_increment_bytes, job.size_bytes.unwrap());
            }
        }
        // Zones in bytes (`--size` on h2benchw) must be equal parts: refused, in one line.
        let mut zoned = load("h2benchw")
            .unwrap()
            .expand(
                &[("size".into(), Some("64g".into()))],
                &Target::Sim("s".into()),
            )
            .unwrap();
        let refusal = fit_points_to_target(&mut zoned, DRIVE_32_GB).unwrap_err();
        assert!(refusal.contains("give --size of at most"), "{refusal}");
        assert!(!refusal.contains('\n'));
    }

    #[test]
    fn every_embedded_preset_loads_and_expands() {
        for name in names() {
            let preset = load(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(preset.name, name, "file name and name= must agree");
            assert!(
                !preset.description.contains('\n'),
                "{name}: one-line description"
            );
            let points = preset
                .expand(&[], &Target::Sim("usb3-uas-ssd".into()))
                .unwrap();
            assert!(!points.is_empty() || !preset.filesets.is_empty(), "{name}");
            for p in &points {
                assert_eq!(p.job.target, Target::Sim("usb3-uas-ssd".into()));
            }
        }
    }

    #[test]
    fn sweep_is_a_cartesian_product_in_axis_order() {
        let preset = load("iometer-database").unwrap();
        let points = preset.expand(&[], &Target::Sim("s".into())).unwrap();
        assert_eq!(points.len(), 11 * 9);
        assert_eq!(points[0].coord("rwmixwrite"), Some("0"));
        assert_eq!(points[0].coord("iodepth"), Some("1"));
        assert_eq!(points[1].coord("iodepth"), Some("2"));
        assert_eq!(points[9].coord("rwmixwrite"), Some("10"));
        assert_eq!(points[9].job.read_percent, 90);
        assert_eq!(points.last().unwrap().job.iodepth, 256);
        assert_eq!(points.last().unwrap().coord("direction"), Some("write"));
    }

    #[test]
    fn overrides_apply_but_cannot_collapse_a_sweep() {
        let preset = load("cdm").unwrap();
        let overrides = vec![("size".to_string(), Some("16m".to_string()))];
        let points = preset.expand(&overrides, &Target::None).unwrap();
        assert!(points.iter().all(|p| p.job.size_bytes == Some(16 << 20)));
        let atto = load("atto").unwrap();
        let swept = atto
            .expand(&[("bs".into(), Some("4k".into()))], &Target::None)
            .unwrap_err()
            .to_string();
        assert!(
            swept.contains("--bs") && swept.contains("sweeps"),
            "{swept}"
        );
        let bad = preset
            .expand(&[("iodepth".into(), Some("0".into()))], &Target::None)
            .unwrap_err()
            .to_string();
        assert!(bad.contains("iodepth"), "{bad}");
    }

    #[test]
    fn disjoint_workers_follow_the_size_override() {
        let preset = load("iometer-multithread").unwrap();
        let overrides = vec![("size".to_string(), Some("8m".to_string()))];
        let points = preset.expand(&overrides, &Target::None).unwrap();
        let four = points.iter().find(|p| p.job.numjobs == 4).unwrap();
        assert_eq!(four.job.offset_increment_bytes, 8 << 20);
    }

    fn zone_points(overrides: &[(&str, &str)]) -> Result<Vec<SweepPoint>, PresetError> {
        let overrides: Vec<(String, Option<String>)> = overrides
            .iter()
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect();
        load("h2benchw")?.expand(&overrides, &Target::Sim("s".into()))
    }

    #[test]
    fn zones_cut_the_whole_target_into_equal_shares() {
        let points = zone_points(&[]).unwrap();
        let reads: Vec<&SweepPoint> = points
            .iter()
            .filter(|p| p.coord("series") == Some("zones") && p.job.read_percent == 100)
            .collect();
        assert_eq!(reads.len(), 20);
        for (i, point) in reads.iter().enumerate() {
            let start = i as u32 * 50_000;
            assert_eq!(point.coord(COORD_ZONE), Some(format_share(start).as_str()));
            assert_eq!(point.job.target_shares.offset_ppm, Some(start));
            assert_eq!(point.job.target_shares.size_ppm, Some(50_000));
        }
    }

    #[test]
    fn zones_cut_a_byte_area_into_bytes_and_kept_keys_ignore_the_override() {
        let points = zone_points(&[("size", "20m"), ("offset", "4m"), ("bs", "128k")]).unwrap();
        let zones: Vec<&SweepPoint> = points
            .iter()
            .filter(|p| p.coord("series") == Some("zones") && p.job.read_percent == 100)
            .collect();
        assert_eq!(zones[0].job.offset_bytes, 4 << 20);
        assert_eq!(zones[19].job.offset_bytes, (4 << 20) + 19 * (1 << 20));
        assert!(zones.iter().all(|p| p.job.size_bytes == Some(1 << 20)));
        assert!(zones.iter().all(|p| p.job.target_shares.is_unset()));
        assert_eq!(zones[1].job.name, "h2benchw/zones,rw=read,zone=5%");
        // The interface series re-reads its one block whatever --size says, at the area's start.
        let interface = points
            .iter()
            .find(|p| p.coord("series") == Some("interface"))
            .unwrap();
        assert_eq!(
            (interface.job.offset_bytes, interface.job.size_bytes),
            (4 << 20, Some(64 << 10))
        );
        assert_eq!(block_size_label(&interface.job), "64k");
        assert_eq!(block_size_label(&zones[0].job), "128k");
        // The accesses take the area as given.
        let access = points
            .iter()
            .find(|p| p.coord("series") == Some("access"))
            .unwrap();
        assert_eq!(access.job.size_bytes, Some(20 << 20));
    }

    #[test]
    fn zones_smaller_than_a_block_are_refused_naming_the_size_flag() {
        let error = zone_points(&[("size", "1m")]).unwrap_err().to_string();
        assert_eq!(
            error,
            "preset h2benchw: --size=1m: 20 zones of this area are smaller than one 64 KiB block each"
        );
        let mixed = zone_points(&[("size", "1g"), ("offset", "10%")])
            .unwrap_err()
            .to_string();
        assert!(mixed.contains("both in bytes or both in %"), "{mixed}");
    }

    #[test]
    fn disjoint_workers_given_a_share_each_take_that_share() {
        let preset = load("hdspeed-multi").unwrap();
        let overrides = vec![("size".to_string(), Some("30%".to_string()))];
        let points = preset.expand(&overrides, &Target::Sim("s".into())).unwrap();
        let three = points.iter().find(|p| p.job.numjobs == 3).unwrap();
        assert_eq!(three.job.target_shares.size_ppm, Some(300_000));
        assert_eq!(three.job.target_shares.offset_increment_ppm, Some(300_000));
    }

    /// Regression: `storlab run --preset hdspeed-multi --size=16000p` laid two and three
    /// 16000 PiB regions end to end after validation, and the state planner's unchecked sum of
    /// them panicked (debug) or wrapped (release).
    #[test]
    fn disjoint_workers_beyond_16_eib_are_refused_naming_the_size_flag() {
        let preset = load("hdspeed-multi").unwrap();
        let overrides = vec![("size".to_string(), Some("16000p".to_string()))];
        let error = preset
            .expand(&overrides, &Target::Sim("s".into()))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "preset hdspeed-multi: --size=16000p: series 'streams' gives each of its 2 workers \
             its own region of this size; together they end beyond 16 EiB, past any device"
        );
        // Three regions of 5000 PiB still fit below 16 EiB.
        let one = vec![("size".to_string(), Some("5000p".to_string()))];
        let points = preset.expand(&one, &Target::Sim("s".into())).unwrap();
        assert_eq!(points.len(), 3);
    }

    #[test]
    fn bad_preset_text_is_one_line_naming_the_file() {
        let unknown = load("cmd").unwrap_err().to_string();
        assert!(unknown.contains("unknown preset 'cmd'"), "{unknown}");
        let err = parse("name = 1", "presets/x.toml").unwrap_err().to_string();
        assert!(err.starts_with("preset presets/x.toml:"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let text = r#"
            name = "x"
            description = "d"
            source = "s"
            [table]
            rows = ["nope"]
            columns = ["direction"]
            metrics = ["iops"]
            [[series]]
            name = "a"
            keys = { rw = "read", size = "1m" }
        "#;
        let err = parse(text, "presets/x.toml").unwrap_err().to_string();
        assert!(err.contains("'nope'"), "{err}");
        let bad_key = text
            .replace("rw = \"read\"", "rw = \"sideways\"")
            .replace("nope", "series");
        let err = parse(&bad_key, "presets/x.toml").unwrap_err().to_string();
        assert!(err.contains("rw") && err.contains("sideways"), "{err}");
    }
}
