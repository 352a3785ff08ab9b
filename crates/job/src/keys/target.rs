//! fio's target file/device keys: which file, block device or simulated drive a job runs on, how its file is named, made and removed, and its zones.

use super::values::set_if;
use super::{ApplyError, JobDraft, KeyDef};
use crate::error::{JobError, Location};
use crate::model::StridedZones;
use crate::model::{EngineKind, JobSpec, Target, TrimMode};
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_count, parse_size};
use std::path::{Path, PathBuf};

/// The zone keys as set (`zonemode`, `zonesize`, `zonerange`, `zoneskip`).
#[derive(Clone, Debug, Default)]
pub(super) struct ZonesDraft {
    /// `zonemode=strided` (true) or `none` (false).
    pub(super) strided: Option<bool>,
    pub(super) size_bytes: Option<u64>,
    pub(super) range_bytes: Option<u64>,
    pub(super) skip_bytes: Option<u64>,
    /// `openfiles` as given: above 1 it turns fio's strided zones off (init.c
    /// `fixup_options` checks it before capping it at `nrfiles`).
    pub(super) open_files: Option<u64>,
}

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "filename",
        aliases: &[],
        bare: false,
        meaning: "file or block device to test, or sim:PROFILE for a simulated drive",
        field: "filename",
        path: KeyPath::Target,
        apply: apply_filename,
    },
    KeyDef {
        name: "directory",
        aliases: &[],
        bare: false,
        meaning: "directory for a temporary test file (or prefix of a relative filename)",
        field: "directory",
        path: KeyPath::Target,
        apply: |d, v| {
            d.directory = Some(PathBuf::from(v));
            Ok(())
        },
    },
    KeyDef {
        name: "zonemode",
        aliases: &[],
        bare: false,
        meaning: "none, or strided: zonesize bytes in each zone of zonerange, zoneskip between zones (zbd refused)",
        field: "zonemode",
        path: KeyPath::None,
        apply: |d, v| {
            d.zones.strided = Some(match v {
                "none" => false,
                "strided" => true,
                "zbd" => {
                    return Err(ApplyError::Unsupported(
                        "zoned block devices (ZBD) are out of scope: storlab measures \
                         conventional files and block devices and its simulated stacks"
                            .into(),
                    ))
                }
                _ => return Err(ApplyError::Invalid("use none or strided".into())),
            });
            Ok(())
        },
    },
    KeyDef {
        name: "zonesize",
        aliases: &[],
        bare: false,
        meaning: "bytes of I/O in each zone before moving on (zonemode=strided)",
        field: "zonesize",
        path: KeyPath::None,
        apply: |d, v| {
            d.zones.size_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "zonerange",
        aliases: &[],
        bare: false,
        meaning: "size of each zone (default zonesize; zonemode=strided)",
        field: "zonerange",
        path: KeyPath::None,
        apply: |d, v| {
            d.zones.range_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "zoneskip",
        aliases: &[],
        bare: false,
        meaning: "bytes skipped between two zones (zonemode=strided)",
        field: "zoneskip",
        path: KeyPath::None,
        apply: |d, v| {
            d.zones.skip_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "create_serialize",
        aliases: &[],
        bare: true,
        meaning: "fio: lay out every job's files before any job runs (1, fio's default) or each job's when it starts (0); storlab always does the latter",
        field: "create_serialize",
        path: KeyPath::None,
        apply: |_, v| {
            // storlab opens and lays out a job's target when the job starts, which is fio's
            // create_serialize=0 (docs/job-format.md says what 1 changes in fio).
            parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "allow_file_create",
        aliases: &[],
        bare: true,
        meaning: "create the job's file when it does not exist (default 1); 0 refuses the job instead",
        field: "allow_file_create",
        path: KeyPath::None,
        apply: |d, v| {
            d.allow_file_create = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "create_on_open",
        aliases: &[],
        bare: true,
        meaning: "accepted: storlab creates and lays out a job's file when the job's target is opened",
        field: "create_on_open",
        path: KeyPath::None,
        apply: |_, v| {
            parse_bool(v)?;
            Ok(())
        },
    },
    KeyDef {
        name: "unlink",
        aliases: &[],
        bare: true,
        meaning: "delete the job's file (a regular file, never a device) after the job",
        field: "unlink",
        path: KeyPath::DeletesTarget,
        apply: |d, v| {
            d.unlink = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "filename_format",
        aliases: &[],
        bare: false,
        meaning: "name of the job's file when filename is not given ($jobname, $jobnum, $filenum); kept after the run",
        field: "filename_format",
        path: KeyPath::Target,
        apply: |d, v| {
            d.filename_format = Some(v.to_string());
            Ok(())
        },
    },
    KeyDef {
        name: "nrfiles",
        aliases: &["nr_files"],
        bare: false,
        meaning: "files per job: as fio, at most the files filename names (one); more without filename are refused",
        field: "nrfiles",
        path: KeyPath::None,
        apply: |d, v| match parse_count(v)? {
            // fio 3.33 then opens no file and does no I/O, exit 0.
            0 => Err(ApplyError::Unsupported(
                "no files: fio then does no I/O at all; storlab's job has its file".into(),
            )),
            files => {
                d.nrfiles = Some(files);
                Ok(())
            }
        },
    },
    KeyDef {
        name: "openfiles",
        aliases: &[],
        bare: false,
        meaning: "fio: files kept open at once among a job's several; above 1 it turns zonemode=strided off, as in fio (with one file, no other effect)",
        field: "openfiles",
        path: KeyPath::None,
        apply: |d, v| {
            // fio reads it as a plain integer (FIO_OPT_INT: -1 and 4k pass, "abc" fails); with
            // one file fio opens that one whatever it says (init.c caps it at nr_files).
            let number = v.strip_prefix('-').unwrap_or(v);
            let magnitude = parse_size(number).map_err(|_| {
                ApplyError::Invalid(format!("'{v}' is not a whole number"))
            })?;
            // fio's unsigned option: a negative number wraps to a large one.
            let negative = v.starts_with('-') && magnitude > 0;
            d.zones.open_files = Some(if negative { u64::MAX } else { magnitude });
            super::values::accept_without_effect(d, "openfiles");
            Ok(())
        },
    },
    KeyDef {
        name: "file_service_type",
        aliases: &[],
        bare: false,
        meaning: "fio: how a job picks its next file among several (storlab's job has one file; zipf, pareto and normal make fio start the file over where no I/O finds room, as storlab does)",
        field: "file_service_type",
        path: KeyPath::None,
        apply: apply_file_service_type,
    },
];

/// `file_service_type=`: fio 3.33's `random`, `roundrobin` and `sequential` with an optional
/// `:N` (I/Os per file before the next pick, read with `atoi`, so any text passes), and `zipf`,
/// `pareto`, `normal`/`gauss` with an optional `:VALUE[:CENTER]` under fio's range checks
/// (options.c, `str_fst_cb`). With the job's one file every pick is that file; but a
/// non-uniform type (zipf, pareto, normal) makes fio reset a file where no I/O finds room
/// instead of ending the loop there (`JobSpec::fio_file_service_resets`).
fn apply_file_service_type(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    use super::values::parse_micros;
    use crate::model::MICROS_PER_UNIT;
    let invalid = |detail: &str| Err(ApplyError::Invalid(detail.to_string()));
    let (kind, postfix) = v.split_once(':').map_or((v, None), |(k, p)| (k, Some(p)));
    let (value, center) =
        match postfix.map(|p| p.split_once(':').map_or((p, None), |(a, b)| (a, Some(b)))) {
            Some((value, center)) => (Some(value), center),
            None => (None, None),
        };
    let value_micros = || value.map(parse_micros).transpose();
    match kind {
        "random" | "roundrobin" | "sequential" => {}
        "zipf" => {
            if value_micros()? == Some(MICROS_PER_UNIT) {
                return invalid("zipf's theta must differ from 1.0 (as in fio)");
            }
        }
        "pareto" => {
            if let Some(h) = value_micros()? {
                if h == 0 || h >= MICROS_PER_UNIT {
                    return invalid("pareto's h must be above 0 and below 1 (as in fio)");
                }
            }
        }
        "normal" | "gauss" => {
            if value_micros()?.is_some_and(|dev| dev >= 100 * MICROS_PER_UNIT) {
                return invalid("normal's deviation must be below 100 (as in fio)");
            }
        }
        _ => {
            return invalid(
                "use random, roundrobin or sequential (each with an optional :N), or zipf, pareto, normal or gauss (each with an optional :VALUE[:CENTER])",
            )
        }
    }
    let distribution = !matches!(kind, "random" | "roundrobin" | "sequential");
    if let (true, Some(center)) = (distribution, center) {
        if parse_micros(center)? > MICROS_PER_UNIT {
            return invalid("the center must be between 0 and 1 (as in fio)");
        }
    }
    // With a non-uniform choice fio does not end a loop at a file it cannot place an I/O in:
    // it resets that file and goes on (io_u.c `set_io_u_file`, `__FIO_FSERVICE_NONUNIFORM`).
    d.file_service_resets = distribution;
    if !distribution {
        super::values::accept_without_effect(d, "file_service_type");
    }
    Ok(())
}

/// `filename=sim:PROFILE` names a simulated drive instead of a file.
pub const SIM_TARGET_PREFIX: &str = "sim:";

fn apply_filename(d: &mut JobDraft, v: &str) -> Result<(), ApplyError> {
    if let Some(profile) = v.strip_prefix(SIM_TARGET_PREFIX) {
        if profile.is_empty() {
            return Err(ApplyError::Invalid(
                "sim: needs a profile name (e.g. sim:usb3-uas-ssd)".into(),
            ));
        }
    } else if v.contains(':') {
        return Err(ApplyError::Unsupported(
            "storlab runs one file per job; fio's ':'-separated file list is not supported".into(),
        ));
    }
    d.filename = Some(v.to_string());
    Ok(())
}

/// fio's `filename_format` with its variables filled in: `$jobname`, and `$jobnum` and
/// `$filenum` as 0 (storlab's job has one file, which its workers share).
fn expand_filename_format(format: &str, job_name: &str) -> String {
    format
        .replace("$jobname", job_name)
        .replace("$jobnum", "0")
        .replace("$filenum", "0")
}

/// A target as the command line names it, for notes.
fn target_label(target: &Target) -> String {
    match target {
        Target::Path(path) => path.display().to_string(),
        Target::TempFileIn(dir) => format!("a temporary file in {}", dir.display()),
        Target::Sim(stack) => format!("{SIM_TARGET_PREFIX}{stack}"),
        Target::None => "none".to_string(),
    }
}

/// Whether `target` is a regular file (or one still to be made).
pub(super) fn on_a_file(target: &Target) -> bool {
    match target {
        Target::TempFileIn(_) => true,
        Target::Path(path) => std::fs::metadata(path).map_or(true, |m| m.is_file()),
        Target::Sim(_) | Target::None => false,
    }
}

/// Whether `spec` trims a regular file through a real engine (storlab punches holes there).
pub(super) fn trims_a_file(spec: &JobSpec) -> bool {
    spec.trim != TrimMode::None && on_a_file(&spec.target) && spec.engine != EngineKind::Null
}

impl JobDraft {
    /// The file name fio hashes for a job storlab gives no file (`ioengine=null`) but the job
    /// names one: `filename`, under a `directory` when relative, as fio's `add_file` joins them.
    pub(super) fn null_file_name(&self) -> Option<String> {
        let filename = self.filename.as_deref()?;
        let path = Path::new(filename);
        Some(match &self.directory {
            Some(dir) if path.is_relative() => dir.join(path).display().to_string(),
            _ => filename.to_string(),
        })
    }

    /// The engine and target the job runs on, with a warning when settings are ignored.
    pub(super) fn engine_and_target(&self, job_name: &str) -> (EngineKind, Target, Vec<String>) {
        let filename = self.replay_filename().or_else(|| self.filename.clone());
        let sim_profile = filename
            .as_deref()
            .and_then(|f| f.strip_prefix(SIM_TARGET_PREFIX));
        let engine = self.engine.unwrap_or(if sim_profile.is_some() {
            EngineKind::Sim
        } else {
            // fio's default engine.
            EngineKind::Psync
        });
        if let Some(target) = &self.target_override {
            let asked = self
                .foreign_engine
                .as_ref()
                .map_or(engine, |f| f.equivalent);
            let engine = match (target, asked) {
                (Target::Sim(_), _) => EngineKind::Sim,
                (Target::None, _) => EngineKind::Null,
                (_, EngineKind::Sim | EngineKind::Null) => EngineKind::Psync,
                (_, engine) => engine,
            };
            // A known engine the target replaces is the point of `--target` and goes unsaid
            // (presets name io_uring and run on simulated drives); a name storlab has no engine
            // for would have been refused without the target, so the note says what ran instead.
            let warnings = self
                .foreign_engine
                .iter()
                .map(|foreign| {
                    format!(
                        "ioengine={} replaced by {}: storlab has no {} engine and the target {} decides the engine",
                        foreign.name,
                        engine.as_str(),
                        foreign.name,
                        target_label(target)
                    )
                })
                .collect();
            return (engine, target.clone(), warnings);
        }
        let mut warnings = Vec::new();
        let target = match (engine, sim_profile, &filename, &self.directory) {
            (_, Some(profile), _, _) => Target::Sim(profile.to_string()),
            (EngineKind::Null, _, filename, directory) => {
                if filename.is_some() || directory.is_some() {
                    warnings.push(
                        "ioengine=null does no I/O: filename and directory are ignored (unlink=1 still \
                         deletes the file they name)"
                            .to_string(),
                    );
                }
                Target::None
            }
            (_, None, Some(filename), directory) => {
                let path = Path::new(filename);
                match directory {
                    Some(dir) if path.is_relative() => Target::Path(dir.join(path)),
                    _ => Target::Path(path.to_path_buf()),
                }
            }
            (_, None, None, directory) if self.filename_format.is_some() => {
                let format = self.filename_format.as_deref().expect("checked");
                let name = expand_filename_format(format, job_name);
                let path = Path::new(&name);
                match directory {
                    Some(dir) if path.is_relative() => Target::Path(dir.join(path)),
                    _ => Target::Path(path.to_path_buf()),
                }
            }
            (_, None, None, Some(directory)) => Target::TempFileIn(directory.clone()),
            (_, None, None, None) => Target::TempFileIn(PathBuf::from(".")),
        };

        (engine, target, warnings)
    }

    /// `unlink=1` where fio's deletion is not storlab's to follow: clones that read race
    /// the first one's deletion (on the null engine no clone opens the file, so none races).
    pub(super) fn check_unlink(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        let reason = if !spec.unlink || spec.engine == EngineKind::Null {
            return Ok(());
        } else if spec.numjobs > 1 && spec.read_percent > 0 {
            // `--numjobs=2 --unlink=1 --size=64k`: the second clone's report has error 2 and
            // no I/O in every run here. With writes too (`--rw=rw --bs=8k --size=64k`), a clone
            // that opens after the deletion creates an empty file whose reads come back short:
            // error 5 in about half of fio's runs.
            "with numjobs above 1 and reads, fio 3.33's first clone to end deletes the file the \
             others may not have opened yet (they then fail with ENOENT, or read an empty new \
             file short, as their timing decides); drop unlink or give each clone a job of its own"
        } else {
            return Ok(());
        };
        let (location, key, value) = self.setter("unlink", job_location);
        Err(JobError::unsupported(location, &key, value, reason))
    }

    /// fio's `nrfiles`: with `filename` given (or a replayed trace, or `--target`), fio 3.33
    /// caps it at the files named (init.c, `fixup_options`: `nr_files > files_index`), so the
    /// job has its one file, whole (filesetup.c splits `size` over the capped count). Without
    /// one, fio makes `nrfiles` files (`jobname.jobnum.filenum`) and spreads the I/O over them
    /// (`file_service_type`), which storlab does not.
    pub(super) fn check_nrfiles(&self, job_location: &Location) -> Result<(), JobError> {
        let files_named = self.filename.is_some()
            || self.replay_filename().is_some()
            || self.target_override.is_some();
        match self.nrfiles {
            Some(files) if files > 1 && !files_named => {
                let (location, key, value) = self.setter("nrfiles", job_location);
                Err(JobError::unsupported(
                    location,
                    &key,
                    value,
                    "storlab runs one file per job: fio's several files without filename= \
                     (jobname.jobnum.filenum, file_service_type) are not supported; name the \
                     file with filename= (fio then uses that one file) or split the job into one \
                     job per file",
                ))
            }
            // fio 3.33's job dies of SIGSEGV there, its report saying "got signal=11" with no
            // I/O done: its non-uniform file choice draws among the `nrfiles` asked, past the
            // capped list of files (checked on zipf, pareto, normal and gauss, 2 and 3 files).
            Some(files) if files > 1 && self.file_service_resets => {
                let (location, key, value) = self.setter("nrfiles", job_location);
                Err(JobError::unsupported(
                    location,
                    &key,
                    value,
                    "with more files than filename= names and a zipf, pareto, normal or gauss \
                     file_service_type, fio 3.33's job dies of a segmentation fault before any \
                     I/O; drop nrfiles (the job has its one named file) or file_service_type",
                ))
            }
            _ => Ok(()),
        }
    }

    /// fio refuses zone sizes without `zonemode=strided` ("--zonemode=none and --zonesize are not
    /// compatible") and a strided mode needs its zone size.
    pub(super) fn check_zones(&self, job_location: &Location) -> Result<(), JobError> {
        let strided = self.zones.strided == Some(true);
        let zone_key = ["zonesize", "zonerange", "zoneskip"]
            .into_iter()
            .find(|field| self.provenance.iter().any(|p| p.field == *field));
        let at = |field: &str| self.setter(field, job_location);
        if let (false, Some(field)) = (strided, zone_key) {
            let (location, key, value) = at(field);
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "zone sizes need zonemode=strided (as fio: zonemode=none and zonesize are not compatible)",
            ));
        }
        // init.c turns a strided mode with `openfiles` above 1 off in the job, and each of its
        // clones, made from the job's options, then has a zone size without a zone mode: fio
        // refuses every clone (seed 1313).
        let clones = self.numjobs.is_some_and(|n| n > 1);
        if strided && clones && self.zones.open_files.is_some_and(|n| n > 1) {
            let (location, key, value) = at("openfiles");
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "openfiles above 1 turns zonemode=strided off (fio 3.33 init.c), so fio's numjobs \
                 clones find zonesize without zonemode and fio refuses them (zonemode=none and \
                 zonesize are not compatible); drop openfiles, the zones or numjobs",
            ));
        }
        if strided && self.zones.size_bytes.unwrap_or(0) == 0 {
            let (location, key, value) = at("zonemode");
            return Err(JobError::invalid(
                location,
                &key,
                value,
                "zonemode=strided needs zonesize (the bytes done in each zone)",
            ));
        }
        Ok(())
    }

    /// How the target file is made and removed, and its zones.
    pub(super) fn build_target_files(&self, spec: &mut JobSpec) {
        set_if(&mut spec.allow_file_create, self.allow_file_create);
        set_if(&mut spec.unlink, self.unlink);
        // "Strided zone mode only really works with 1 file" (init.c): `openfiles` above 1 turns
        // it off, even where the job has one file (seed 2020: `--zonemode=strided
        // --zonesize=64k --zoneskip=64k --openfiles=4` reads straight on in fio).
        let zones_off = self.zones.open_files.is_some_and(|n| n > 1);
        if self.zones.strided == Some(true) && !zones_off {
            let size_bytes = self.zones.size_bytes.unwrap_or(0);
            spec.strided_zones = Some(StridedZones {
                size_bytes,
                // fio: `zonerange` defaults to `zonesize`.
                range_bytes: self.zones.range_bytes.unwrap_or(size_bytes),
                skip_bytes: self.zones.skip_bytes.unwrap_or(0),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::error::Location;
    use crate::keys::{draft, JobDraft};
    use crate::model::{EngineKind, StridedZones, Target};

    #[test]
    fn targets_follow_filename_directory_and_engine() {
        let target = |settings: &[(&str, Option<&str>)]| {
            let mut all = settings.to_vec();
            all.push(("size", Some("1M")));
            draft(&all).map(|s| (s.engine, s.target))
        };
        assert_eq!(
            target(&[("filename", Some("sim:usb3-uas-ssd"))]),
            Ok((EngineKind::Sim, Target::Sim("usb3-uas-ssd".into())))
        );
        assert_eq!(
            target(&[
                ("filename", Some("data.bin")),
                ("directory", Some("/mnt/t"))
            ]),
            Ok((EngineKind::Psync, Target::Path("/mnt/t/data.bin".into())))
        );
        assert_eq!(
            target(&[
                ("filename", Some("/dev/sdz")),
                ("directory", Some("/mnt/t"))
            ]),
            Ok((EngineKind::Psync, Target::Path("/dev/sdz".into())))
        );
        assert_eq!(
            target(&[
                ("directory", Some("/mnt/t")),
                ("ioengine", Some("io_uring"))
            ]),
            Ok((EngineKind::IoUring, Target::TempFileIn("/mnt/t".into())))
        );
        assert_eq!(
            target(&[("ioengine", Some("null"))]),
            Ok((EngineKind::Null, Target::None))
        );
        assert_eq!(
            target(&[("ioengine", Some("sync"))]),
            Ok((EngineKind::Sync, Target::TempFileIn(".".into())))
        );
    }

    #[test]
    fn an_override_target_replaces_filename_directory_and_engine_before_validation() {
        let on = |target: Target, settings: &[(&str, Option<&str>)]| {
            let mut d = JobDraft::new();
            d.override_target(target);
            for (key, value) in settings {
                d.set(key, *value, &Location::Flag)?;
            }
            d.finish("job", &Location::Job("job".into()))
                .map(|s| (s.engine, s.target, s.size_bytes))
        };
        // A simulated drive has a size: no `size` needed, the job covers the whole drive.
        let sim = Target::Sim("usb3-uas-ssd".into());
        assert_eq!(
            on(sim.clone(), &[("bs", Some("4k"))]),
            Ok((EngineKind::Sim, sim.clone(), None))
        );
        assert_eq!(
            on(
                sim.clone(),
                &[("filename", Some("data")), ("ioengine", Some("io_uring"))]
            ),
            Ok((EngineKind::Sim, sim, None))
        );
        // So has a file or device, once opened; the engine stays unless it cannot do file I/O.
        let path = Target::Path("/dev/sdz".into());
        assert_eq!(
            on(path.clone(), &[("ioengine", Some("io_uring"))]),
            Ok((EngineKind::IoUring, path.clone(), None))
        );
        assert_eq!(
            on(path.clone(), &[("filename", Some("sim:usb3-uas-ssd"))]),
            Ok((EngineKind::Psync, path.clone(), None))
        );
        assert_eq!(
            on(path.clone(), &[("ioengine", Some("null"))]),
            Ok((EngineKind::Psync, path, None))
        );
        // A temporary file still needs one, even when the job names a file.
        let temp = Target::TempFileIn("/tmp".into());
        assert_eq!(
            on(temp.clone(), &[("filename", Some("/dev/sdz"))])
                .unwrap_err()
                .key
                .as_deref(),
            Some("size")
        );
        assert_eq!(
            on(temp.clone(), &[("size", Some("1M"))]),
            Ok((EngineKind::Psync, temp, Some(1 << 20)))
        );
    }

    #[test]
    fn an_override_target_replaces_an_engine_storlab_does_not_have_with_a_note() {
        let on = |target: Option<Target>, engine: &str| {
            let mut d = JobDraft::new();
            if let Some(target) = target {
                d.override_target(target);
            }
            d.set("ioengine", Some(engine), &Location::Flag)?;
            d.set("size", Some("1M"), &Location::Flag)?;
            d.finish("job", &Location::Job("job".into()))
        };
        let sim = Target::Sim("usb3-uas-ssd".into());
        let spec = on(Some(sim.clone()), "windowsaio").unwrap();
        assert_eq!((spec.engine, spec.target), (EngineKind::Sim, sim.clone()));
        assert_eq!(
            spec.warnings,
            ["ioengine=windowsaio replaced by sim: storlab has no windowsaio engine and the target sim:usb3-uas-ssd decides the engine"]
        );
        // On a file the storlab engine that does the same runs it.
        let path = Target::Path("/dev/sdz".into());
        assert_eq!(
            on(Some(path.clone()), "windowsaio").unwrap().engine,
            EngineKind::Libaio
        );
        assert_eq!(
            on(Some(path.clone()), "vsync").unwrap().engine,
            EngineKind::Pvsync
        );
        // A known engine the target replaces goes unsaid, as before.
        assert!(on(Some(path), "io_uring").unwrap().warnings.is_empty());
        // Without a target from outside, the job is refused at the key that named the engine.
        assert_eq!(
            on(None, "rdma").unwrap_err().to_string(),
            "--ioengine=rdma: out of scope: storlab measures local files, block devices and its simulated stacks"
        );
        // An engine out of scope is refused on a target from outside too (issue 20): the target
        // stands in for an engine under another name, not for a network or GPU job.
        for engine in ["rdma", "cpuio", "filecreate", "libpmem"] {
            assert_eq!(
                on(Some(sim.clone()), engine).unwrap_err().to_string(),
                format!("--ioengine={engine}: out of scope: storlab measures local files, block devices and its simulated stacks")
            );
        }
        // A later known engine clears the refusal (a section over its `[global]`).
        let mut d = JobDraft::new();
        d.set("ioengine", Some("rdma"), &Location::Flag).unwrap();
        d.set("ioengine", Some("psync"), &Location::Flag).unwrap();
        d.set("size", Some("1M"), &Location::Flag).unwrap();
        assert!(d.finish("job", &Location::Job("job".into())).is_ok());
    }

    #[test]
    fn a_draft_cloned_from_an_overridden_one_keeps_the_override() {
        let mut global = JobDraft::new();
        global.override_target(Target::Sim("s".into()));
        let job = global.clone();
        let spec = job.finish("a", &Location::Job("a".into())).unwrap();
        assert_eq!(spec.target, Target::Sim("s".into()));
    }

    /// fio turns strided zones off where `openfiles` says more than one file is open (init.c,
    /// before it caps `openfiles` at `nrfiles`): seed 2020.
    #[test]
    fn openfiles_above_one_turns_strided_zones_off() {
        let zones = |open: &str| {
            draft(&[
                ("size", Some("1M")),
                ("zonemode", Some("strided")),
                ("zonesize", Some("16k")),
                ("openfiles", Some(open)),
            ])
            .unwrap()
            .strided_zones
        };
        assert!(zones("1").is_some());
        assert!(zones("0").is_some());
        assert!(zones("4").is_none());
        assert!(zones("-1").is_none());
    }

    #[test]
    fn strided_zones_follow_fio_and_zbd_is_out_of_scope() {
        let spec = draft(&[
            ("size", Some("1M")),
            ("zonemode", Some("strided")),
            ("zonesize", Some("16k")),
            ("zoneskip", Some("48k")),
        ])
        .unwrap();
        assert_eq!(
            spec.strided_zones,
            Some(StridedZones {
                size_bytes: 16 << 10,
                range_bytes: 16 << 10,
                skip_bytes: 48 << 10,
            })
        );
        assert_eq!(
            draft(&[("size", Some("1M")), ("zonesize", Some("16k"))])
                .unwrap_err()
                .to_string(),
            "--zonesize=16k: zone sizes need zonemode=strided (as fio: zonemode=none and zonesize are not compatible)"
        );
        assert_eq!(
            draft(&[("size", Some("1M")), ("zonemode", Some("strided"))])
                .unwrap_err()
                .to_string(),
            "--zonemode=strided: zonemode=strided needs zonesize (the bytes done in each zone)"
        );
        assert!(draft(&[("zonemode", Some("zbd"))])
            .unwrap_err()
            .to_string()
            .starts_with("--zonemode=zbd: zoned block devices (ZBD) are out of scope"));
    }
}
