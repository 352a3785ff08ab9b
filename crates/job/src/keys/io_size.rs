//! fio's I/O size keys and offsets: the region a job covers (`offset`, `size`, `filesize`), how much it moves (`io_size`, `number_ios`) and `fill_device`.

use super::values::set_if;
use super::{ApplyError, JobDraft, KeyDef};
use crate::error::{JobError, Location};
use crate::model::TargetShares;
use crate::model::{EngineKind, JobSpec, Target, TrimMode};
use crate::paths::KeyPath;
use crate::size::{parse_bool, parse_count, parse_share_ppm, parse_size, ValueError};

/// The keys of this group, in the order of [`super::KEYS`].
pub(super) const GROUP_KEYS: &[KeyDef] = &[
    KeyDef {
        name: "offset",
        aliases: &[],
        bare: false,
        meaning: "start of worker 0's region (bytes or N% of the target)",
        field: "offset",
        path: KeyPath::None,
        apply: |d, v| {
            d.offset = Some(Extent::parse(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "offset_increment",
        aliases: &[],
        bare: false,
        meaning: "worker i starts at offset + i * offset_increment (bytes or N%)",
        field: "offset_increment",
        path: KeyPath::None,
        apply: |d, v| {
            d.offset_increment = Some(Extent::parse(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "offset_align",
        aliases: &[],
        bare: false,
        meaning: "what an offset given as a share of the target (N%) is rounded up to (default: the smallest block)",
        field: "offset_align",
        path: KeyPath::None,
        apply: |d, v| {
            let bytes = parse_size(v)?;
            d.offset_align_bytes = (bytes > 0).then_some(bytes);
            Ok(())
        },
    },
    KeyDef {
        name: "size",
        aliases: &[],
        bare: false,
        meaning: "each worker's region: bytes or N% of the target (default: to its end)",
        field: "size",
        path: KeyPath::None,
        apply: |d, v| {
            d.size = Some(Extent::parse(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "number_ios",
        aliases: &[],
        bare: false,
        meaning: "stop each worker after this many I/Os",
        field: "number_ios",
        path: KeyPath::None,
        apply: |d, v| {
            d.number_ios = Some(parse_count(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "io_size",
        aliases: &["io_limit"],
        bare: false,
        meaning: "bytes each worker moves before it stops (default: its region's size)",
        field: "io_size",
        path: KeyPath::None,
        apply: |d, v| {
            d.io_size_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "fill_device",
        aliases: &["fill_fs"],
        bare: true,
        meaning: "write until ENOSPC and end there as a success; a file is not laid out and without size may grow by its file system's free space (a device or simulated drive: to its end)",
        field: "fill_device",
        path: KeyPath::None,
        apply: |d, v| {
            d.fill_device = Some(parse_bool(v)?);
            Ok(())
        },
    },
    KeyDef {
        name: "filesize",
        aliases: &[],
        bare: false,
        meaning: "size of the job's file: the region runs from offset to it, and size is then the job's bytes",
        field: "size",
        path: KeyPath::None,
        apply: |d, v| {
            if v.contains('-') || v.contains(':') {
                return Err(ApplyError::Unsupported(
                    "storlab takes one file size, not a range".into(),
                ));
            }
            d.filesize_bytes = Some(parse_size(v)?);
            Ok(())
        },
    },
];

/// `offset`, `offset_increment` or `size` as written: bytes, or a share of the target (`N%`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Extent {
    Bytes(u64),
    SharePpm(u32),
}

impl Extent {
    fn parse(text: &str) -> Result<Extent, ValueError> {
        if text.trim().ends_with('%') {
            parse_share_ppm(text).map(Extent::SharePpm)
        } else {
            parse_size(text).map(Extent::Bytes)
        }
    }

    pub(super) fn bytes(self) -> Option<u64> {
        match self {
            Extent::Bytes(bytes) => Some(bytes),
            Extent::SharePpm(_) => None,
        }
    }

    pub(super) fn share_ppm(self) -> Option<u32> {
        match self {
            Extent::Bytes(_) => None,
            Extent::SharePpm(ppm) => Some(ppm),
        }
    }
}

impl JobDraft {
    /// fio's `fill_device` where storlab does what fio does: a job that writes, to a named file
    /// or block device or a simulated drive, through an engine that writes with system calls.
    pub(super) fn check_fill_device(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        if !spec.fill_device {
            return Ok(());
        }
        let refuse = |reason: &str| {
            let setter = self
                .provenance
                .iter()
                .rev()
                .find(|p| p.field == "fill_device");
            Err(JobError::unsupported(
                setter.map_or_else(|| job_location.clone(), |p| p.location.clone()),
                setter.map_or("fill_device", |p| p.key_as_written.as_str()),
                setter.and_then(|p| p.value.clone()),
                reason,
            ))
        };
        if spec.read_percent == 100 && spec.trim == TrimMode::None {
            return refuse(
                "in a job that does not write is not supported (fio lays the file out until \
                 ENOSPC and then reads it); write it in a job before, as fio's write-then-verify \
                 jobs do",
            );
        }
        if matches!(spec.target, Target::TempFileIn(_)) {
            return refuse(
                "needs filename= (the file or block device to fill) or a simulated target; \
                 storlab's temporary files are laid out to a size",
            );
        }
        if spec.engine == EngineKind::Mmap {
            return refuse(
                "with ioengine=mmap is not supported: stores into a mapping past the file's end \
                 fault (SIGBUS) instead of failing with ENOSPC",
            );
        }
        Ok(())
    }

    /// The region (`offset`, `size` or `filesize`, as bytes or shares of the target), how much of
    /// it is moved (`number_ios`, `io_size`) and `fill_device`.
    pub(super) fn build_extents(&self, spec: &mut JobSpec) {
        set_if(&mut spec.offset_bytes, self.offset.and_then(Extent::bytes));
        set_if(
            &mut spec.offset_increment_bytes,
            self.offset_increment.and_then(Extent::bytes),
        );
        spec.size_bytes = self.size.and_then(Extent::bytes);
        spec.target_shares = TargetShares {
            offset_ppm: self.offset.and_then(Extent::share_ppm),
            offset_increment_ppm: self.offset_increment.and_then(Extent::share_ppm),
            size_ppm: self.size.and_then(Extent::share_ppm),
        };
        spec.offset_align_bytes = self.offset_align_bytes;
        spec.number_ios = self.number_ios;
        spec.io_size_bytes = self.io_size_bytes;
        spec.io_size_given = self.io_size_bytes.is_some();
        spec.fio_file_service_resets = self.file_service_resets;
        set_if(&mut spec.fill_device, self.fill_device);
        if let Some(filesize) = self.filesize_bytes {
            self.build_filesize_region(spec, filesize);
        }
    }

    /// The case where storlab's region under `filesize` is not fio's, refused in one line at
    /// `filesize`: a share of the target on fio's null engine, which has no file to take it
    /// of. Elsewhere clones each run from their start to `filesize` (filesetup.c: `f->io_size`
    /// is `file_size_low - file_offset` per thread), each moving `size` bytes at most (the
    /// runner cuts it to a shorter region, `clone_io_size_bytes`), and an offset given as a
    /// share starts at the share of the file as found (`plan_regions`).
    pub(super) fn check_filesize_region(
        &self,
        spec: &JobSpec,
        job_location: &Location,
    ) -> Result<(), JobError> {
        // Without `size` the null engine's file size is unknown (-1) and the share an offset
        // past `filesize` (fio refuses the job: "you need to specify valid offset="); with
        // one, `--offset=25% --size=128k --filesize=512k` starts at 100 KiB in fio 3.33.
        let share_on_null = (matches!(self.offset, Some(Extent::SharePpm(_)))
            || spec.target_shares.offset_increment_ppm.is_some())
            && spec.fio_engine_sizes_no_file();
        if self.filesize_bytes.is_none() || !share_on_null {
            return Ok(());
        }
        // `filesize` and `size` set one field: the error names whichever was written last.
        let (location, key, value) = self.setter("size", job_location);
        Err(JobError::unsupported(
            location,
            &key,
            value,
            "filesize with an offset or offset_increment given as a share is not supported on \
             ioengine=null, which has no file to take the share of (fio 3.33 refuses the \
             offset without size, and starts from neither size nor filesize with it); give \
             offsets in bytes",
        ))
    }

    /// fio 3.33's file of `filesize` bytes (filesetup.c, `setup_files`): the region runs from
    /// `offset` to the file's end (`f->io_size = file_size_low - file_offset`), and `size`, when
    /// given, is the job's bytes, at most that region (`o->size = total_size` when larger), so a
    /// smaller one bounds the I/O as `io_size` does while random offsets cover the whole file.
    fn build_filesize_region(&self, spec: &mut JobSpec, filesize: u64) {
        spec.filesize_bytes = Some(filesize);
        spec.size_given_bytes = self.size.and_then(Extent::bytes);
        let offset = match self.offset {
            None => 0,
            Some(Extent::Bytes(offset)) => offset,
            // A share is resolved on the opened target; the file's size stands for the region.
            // A smaller `size` bounds each clone's bytes as `io_size` does, cut to the
            // clone's region where that is shorter (the runner's `clone_io_size_bytes`).
            Some(Extent::SharePpm(_)) => {
                if let (Some(Extent::Bytes(size)), None) = (self.size, spec.io_size_bytes) {
                    spec.io_size_bytes = Some(size);
                }
                spec.size_bytes = Some(filesize);
                return;
            }
        };
        // fio refuses an offset at or past the file's end; the region check says so here.
        let region = filesize.checked_sub(offset).filter(|bytes| *bytes > 0);
        match (self.size, region) {
            (None, Some(region)) => spec.size_bytes = Some(region),
            (None, None) => spec.size_bytes = Some(filesize),
            (Some(Extent::Bytes(size)), Some(region)) => {
                spec.size_bytes = Some(region);
                if size < region && spec.io_size_bytes.is_none() {
                    spec.io_size_bytes = Some(size);
                }
            }
            (Some(_), _) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::keys::draft;

    #[test]
    fn filesize_is_the_regions_end_and_size_the_jobs_bytes_as_fio() {
        let job = |settings: &[(&str, &str)]| {
            let mut all = vec![("filename", Some("/tmp/f"))];
            all.extend(settings.iter().map(|(key, value)| (*key, Some(*value))));
            draft(&all)
        };
        let region = |spec: crate::model::JobSpec| (spec.size_bytes, spec.io_size_bytes);
        let k = |n: u64| n << 10;
        assert_eq!(
            region(job(&[("filesize", "256k")]).unwrap()),
            (Some(k(256)), None)
        );
        let offset = job(&[("filesize", "256k"), ("offset", "64k")]).unwrap();
        assert_eq!(region(offset), (Some(k(192)), None));
        let smaller = job(&[("filesize", "256k"), ("size", "128k")]).unwrap();
        assert_eq!(region(smaller), (Some(k(256)), Some(k(128))));
        let larger = job(&[("size", "512k"), ("filesize", "256k")]).unwrap();
        assert_eq!(region(larger), (Some(k(256)), None));
        // Clones offset_increment apart each run from their start to filesize (the runner
        // cuts a larger size to each clone's region).
        let clones = job(&[
            ("filesize", "256k"),
            ("numjobs", "2"),
            ("offset_increment", "64k"),
        ]);
        assert_eq!(region(clones.unwrap()), (Some(k(256)), None));
        // Each clone runs from its start to filesize, moving size bytes: followed where size
        // fits the last clone's room.
        let fitting = job(&[
            ("filesize", "256k"),
            ("size", "64k"),
            ("numjobs", "2"),
            ("offset_increment", "64k"),
        ])
        .unwrap();
        assert_eq!(fitting.filesize_bytes, Some(k(256)));
        assert_eq!(region(fitting), (Some(k(256)), Some(k(64))));
        // Over several loops on a queueing engine each loop ends at `size` bytes (the region
        // runs to `filesize`).
        let loops = job(&[
            ("filesize", "256k"),
            ("size", "64k"),
            ("loops", "2"),
            ("ioengine", "libaio"),
        ]);
        assert_eq!(region(loops.unwrap()), (Some(k(256)), Some(k(64))));
        // With io_size too, each loop still ends at size bytes (the runner's loop bounds).
        let with_io_size = job(&[
            ("filesize", "256k"),
            ("size", "64k"),
            ("io_size", "128k"),
            ("ioengine", "libaio"),
        ]);
        assert_eq!(region(with_io_size.unwrap()), (Some(k(256)), Some(k(128))));
        // A share of the target on the null engine, which has no file: refused.
        let null_share = job(&[
            ("filesize", "256k"),
            ("offset", "25%"),
            ("ioengine", "null"),
        ]);
        assert!(null_share
            .unwrap_err()
            .to_string()
            .contains("ioengine=null"));
    }

    #[test]
    fn fill_device_needs_a_writing_job_on_a_named_target() {
        let of = |settings: &[(&str, Option<&str>)]| {
            let mut all = vec![("fill_fs", None)];
            all.extend_from_slice(settings);
            draft(&all)
        };
        let spec = of(&[("filename", Some("/tmp/f")), ("rw", Some("write"))]).unwrap();
        assert!(spec.fill_device && spec.size_bytes.is_none());
        assert!(of(&[
            ("filename", Some("sim:usb3-uas-ssd")),
            ("rw", Some("write"))
        ])
        .is_ok());
        let reading = of(&[("filename", Some("/tmp/f"))]).unwrap_err().to_string();
        assert!(reading.contains("does not write"), "{reading}");
        let temporary = of(&[("rw", Some("write"))]).unwrap_err().to_string();
        assert!(temporary.contains("needs filename="), "{temporary}");
        let mapped = of(&[
            ("filename", Some("/tmp/f")),
            ("rw", Some("write")),
            ("ioengine", Some("mmap")),
        ])
        .unwrap_err()
        .to_string();
        assert!(mapped.contains("mmap"), "{mapped}");
    }
}
