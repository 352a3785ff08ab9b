//! Reader for fio job files (a practical subset of fio's INI format) into a `JobSet`.
//!
//! Format: `[section]` headers; `key=value` or bare `key` lines; whole-line comments starting
//! with `#` or `;` (and inline ones after whitespace). `[global]` options apply to every job
//! section that follows it; `[global]` may appear again between jobs and then affects only the
//! jobs after it, as in fio. Keys are those of [`crate::keys::KEYS`], shared with the flags.

use crate::error::{JobError, Location};
use crate::keys::JobDraft;
use crate::model::{JobSet, Target};
use std::path::Path;
use std::sync::Arc;

/// The section whose options every later job inherits.
const GLOBAL_SECTION: &str = "global";

/// Reads and parses a fio job file; errors name the file as given. `target`, when given, replaces
/// every job's target before the job is validated (see [`JobDraft::override_target`]).
pub fn parse_fio_file(path: &Path, target: Option<&Target>) -> Result<JobSet, JobError> {
    parse_fio_file_with_flags(path, target, &[])
}

/// [`parse_fio_file`] with fio-style job flags given beside the file (`storlab run --runtime=1
/// job.fio`): as on fio's command line, they are global options applied before the file, so
/// the file's `[global]` and each job section still override them (checked against fio 3.33).
pub fn parse_fio_file_with_flags(
    path: &Path,
    target: Option<&Target>,
    global_flags: &[String],
) -> Result<JobSet, JobError> {
    let file_name = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| JobError::io(&file_name, e.to_string()))?;
    parse_fio_str_with_flags(&text, &file_name, target, global_flags)
}

/// A job section being read: its draft (global settings first) and where it started.
struct OpenJob {
    name: Arc<str>,
    header: Location,
    draft: JobDraft,
}

/// Parses fio job-file text; `file_name` is only used in error messages. `target`, when given,
/// replaces every job's target before the job is validated (see [`JobDraft::override_target`]).
pub fn parse_fio_str(
    text: &str,
    file_name: &str,
    target: Option<&Target>,
) -> Result<JobSet, JobError> {
    parse_fio_str_with_flags(text, file_name, target, &[])
}

/// [`parse_fio_str`] with job flags given beside the file, applied first as global options
/// (see [`parse_fio_file_with_flags`]).
pub fn parse_fio_str_with_flags(
    text: &str,
    file_name: &str,
    target: Option<&Target>,
    global_flags: &[String],
) -> Result<JobSet, JobError> {
    let file: Arc<str> = file_name.into();
    let global_section: Arc<str> = GLOBAL_SECTION.into();
    // Every job starts as a copy of the global draft, so it inherits the override from here.
    let mut global = global_draft(file_name, target, global_flags)?;
    let mut in_global = false;
    let mut open: Option<OpenJob> = None;
    let mut finished = Vec::new();

    // Editors on some systems start UTF-8 files with a byte-order mark; it is not part of a key.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some(refusal) = out_of_scope_engine_refusal(text, &file) {
        return Err(refusal);
    }
    for (index, raw_line) in text.lines().enumerate() {
        let line_number = index + 1;
        let line = strip_comment(raw_line).trim();
        if line.is_empty() {
            continue;
        }
        let section = if in_global {
            Some(global_section.clone())
        } else {
            open.as_ref().map(|job| job.name.clone())
        };
        let location = Location::File {
            file: file.clone(),
            line: line_number,
            section,
        };
        if let Some(header) = line.strip_prefix('[') {
            let Some(name) = header.strip_suffix(']').map(str::trim) else {
                return Err(JobError::syntax(
                    location,
                    format!("'{line}' is missing its closing ']'"),
                ));
            };
            if name.is_empty() {
                return Err(JobError::syntax(location, "a section needs a name: [name]"));
            }
            if let Some(job) = open.take() {
                let spec = job.finish(&finished)?;
                finished.push(spec);
            }
            in_global = name == GLOBAL_SECTION;
            if !in_global {
                let name: Arc<str> = name.into();
                open = Some(OpenJob {
                    name: name.clone(),
                    header: Location::File {
                        file: file.clone(),
                        line: line_number,
                        section: Some(name),
                    },
                    // A job inherits the global options given so far, not later ones.
                    draft: global.clone(),
                });
            }
            let draft = match open.as_mut() {
                Some(job) if !in_global => &mut job.draft,
                _ => &mut global,
            };
            set_kb_base_first(draft, text, index, &location)?;
            continue;
        }
        let draft = if in_global {
            &mut global
        } else if let Some(job) = open.as_mut() {
            &mut job.draft
        } else {
            return Err(JobError::syntax(
                location,
                format!("'{line}' comes before any [section]; start with [global] or [jobname]"),
            ));
        };
        set_option_line(draft, line, file_name, &location, 0)?;
    }
    if let Some(job) = open.take() {
        let spec = job.finish(&finished)?;
        finished.push(spec);
    }
    if finished.is_empty() {
        return Err(JobError::syntax(
            Location::File {
                file: file.clone(),
                line: 0,
                section: None,
            },
            "no jobs: the file has no [section] other than [global]",
        ));
    }
    crate::keys::note_fio_differences(&mut finished);
    Ok(JobSet { jobs: finished })
}

/// The draft every job of `file_name` starts from: the `target` imposed from outside, and the
/// job flags given beside the file as global options.
fn global_draft(
    file_name: &str,
    target: Option<&Target>,
    global_flags: &[String],
) -> Result<JobDraft, JobError> {
    let mut global = JobDraft::new();
    if let Some(target) = target {
        global.override_target(target.clone());
    }
    for flag in global_flags {
        let (key, value) = crate::flags::split_flag(flag)?;
        if crate::keys::find_key(key).is_some_and(|def| def.name == "name") {
            return Err(JobError::syntax(
                Location::Flag,
                format!(
                    "'{flag}': beside a job file, job flags are global options for its jobs; \
                     add another job as a [section] of {file_name}"
                ),
            ));
        }
        global.set(key, value, &Location::Flag)?;
    }
    Ok(global)
}

/// fio sorts a section's options by priority before it parses them (parse.c `sort_options`),
/// and `kb_base` comes first (`.prio = 1`): its units hold for every size of the section,
/// written before it or after. Sets the `kb_base` of the section whose header is line
/// `header_index` of `text`, if it has one, before any other of its lines. (Flags are parsed
/// in order, so there it holds for the flags after it only, as in fio.)
fn set_kb_base_first(
    draft: &mut JobDraft,
    text: &str,
    header_index: usize,
    header: &Location,
) -> Result<(), JobError> {
    let section_lines = text
        .lines()
        .skip(header_index + 1)
        .map(|line| strip_comment(line).trim())
        .take_while(|line| !line.starts_with('['));
    for line in section_lines {
        if let Some((key, value)) = line.split_once('=') {
            if key.trim().eq_ignore_ascii_case("kb_base") {
                draft.set("kb_base", Some(value.trim()), header)?;
            }
        }
    }
    Ok(())
}

/// How deep `include` lines may nest (fio recurses without a bound; a file that includes
/// itself would never end).
const INCLUDE_DEPTH_MAX: usize = 16;

/// One option line of a section, at `location` in the file named `file_name`, set on `draft`:
/// `key=value` after fio's variable substitution, or fio's `include FILE` (init.c,
/// `__parse_jobs_ini`), whose lines are options of the same section. fio opens FILE as given,
/// else beside the including file; a section header in it is refused, as fio refuses it ("No
/// new sections in included files").
fn set_option_line(
    draft: &mut JobDraft,
    line: &str,
    file_name: &str,
    location: &Location,
    depth: usize,
) -> Result<(), JobError> {
    let Some(included) = line.strip_prefix("include ").map(str::trim) else {
        let substituted = crate::fio_vars::substitute(line);
        let (key, value) = key_and_value(&substituted, location)?;
        return draft.set(key, value, location);
    };
    if depth >= INCLUDE_DEPTH_MAX {
        return Err(JobError::syntax(
            location.clone(),
            format!("include {included}: includes nest deeper than {INCLUDE_DEPTH_MAX}"),
        ));
    }
    let path = included_path(included, file_name);
    let include_name = path.display().to_string();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| JobError::syntax(location.clone(), format!("include {include_name}: {e}")))?;
    let file: Arc<str> = include_name.as_str().into();
    let section = match location {
        Location::File { section, .. } => section.clone(),
        _ => None,
    };
    for (index, raw_line) in text.lines().enumerate() {
        let line = strip_comment(raw_line).trim();
        if line.is_empty() {
            continue;
        }
        let at = Location::File {
            file: file.clone(),
            line: index + 1,
            section: section.clone(),
        };
        if line.starts_with('[') {
            return Err(JobError::syntax(
                at,
                "an included file holds options only: no new sections in included files (fio)",
            ));
        }
        set_option_line(draft, line, &include_name, &at, depth + 1)?;
    }
    Ok(())
}

/// Where fio finds an `include`d file: as written, when that exists (relative to the current
/// directory), else beside the including file `file_name`.
fn included_path(included: &str, file_name: &str) -> std::path::PathBuf {
    let as_written = Path::new(included);
    if as_written.exists() {
        return as_written.to_path_buf();
    }
    match Path::new(file_name).parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(included),
        _ => as_written.to_path_buf(),
    }
}

/// A line's `key=value` (or bare `key`), refusing an empty key and an `include` without a file.
fn key_and_value<'line>(
    line: &'line str,
    location: &Location,
) -> Result<(&'line str, Option<&'line str>), JobError> {
    let (key, value) = match line.split_once('=') {
        Some((key, value)) => (key.trim(), Some(value.trim())),
        None => (line, None),
    };
    if key.is_empty() {
        return Err(JobError::syntax(
            location.clone(),
            format!("'{line}' has no key before '='"),
        ));
    }
    if key == "include" || key.starts_with("include ") {
        return Err(JobError::syntax(
            location.clone(),
            "include needs a file name: include FILE (fio's include)",
        ));
    }
    Ok((key, value))
}

impl OpenJob {
    /// The job, checked against the `earlier` jobs of the file (`wait_for`).
    fn finish(self, earlier: &[crate::model::JobSpec]) -> Result<crate::model::JobSpec, JobError> {
        let spec = self.draft.finish(&self.name, &self.header)?;
        self.draft.check_wait_for(&spec, earlier, &self.header)?;
        Ok(spec)
    }
}

/// The refusal of the first `ioengine=` line that names an engine storlab does not do by design
/// (network, RDMA, GPU, persistent memory, file-management engines, ...), found before any other
/// key is read: such a file's other keys are that engine's own options (`hostname`, `port`,
/// `http_verbose`), and "unknown key 'port'" would hide the one thing the user needs to hear,
/// which is that the whole job is out of scope.
fn out_of_scope_engine_refusal(text: &str, file: &Arc<str>) -> Option<JobError> {
    let mut section: Option<Arc<str>> = None;
    for (index, raw_line) in text.lines().enumerate() {
        let line = strip_comment(raw_line).trim();
        if let Some(header) = line.strip_prefix('[') {
            section = header.strip_suffix(']').map(|name| name.trim().into());
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if key.eq_ignore_ascii_case("ioengine") && crate::keys::is_out_of_scope_engine(value) {
            let location = Location::File {
                file: file.clone(),
                line: index + 1,
                section: section.clone(),
            };
            return Some(JobError::unsupported(
                location,
                key,
                Some(value.to_string()),
                crate::keys::OUT_OF_SCOPE_HINT,
            ));
        }
    }
    None
}

/// Drops a comment: a line starting with `#` or `;`, or the rest of a line after ` #` / ` ;`.
/// A `#` inside a value (`filename=/tmp/a#b`) is kept: fio only treats it as a comment there too
/// when it starts the line.
pub(crate) fn strip_comment(line: &str) -> &str {
    let trimmed = line.trim_start();
    if trimmed.starts_with('#') || trimmed.starts_with(';') {
        return "";
    }
    let cut = line
        .char_indices()
        .find(|&(i, c)| (c == '#' || c == ';') && line[..i].ends_with(char::is_whitespace))
        .map(|(i, _)| i)
        .unwrap_or(line.len());
    &line[..cut]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        BlockSizeShare, BlockSizeSpec, DataPattern, EngineKind, JobSpec, RateIops, Target,
    };
    use crate::size::NS_PER_S;

    fn parse(text: &str) -> Result<JobSet, JobError> {
        parse_fio_str(text, "job.fio", None)
    }

    fn error_text(text: &str) -> String {
        parse(text).expect_err("should be rejected").to_string()
    }

    /// Two phases on one SSD, every job setting from `[global]` or the job's section.
    const REALISTIC_FILE: &str = "\
; storlab acceptance job: two phases on one SSD
[global]
ioengine=io_uring
filename=/dev/sdz
direct=1
size=8G
runtime=2m
time_based
ramp_time=5s
group_reporting
randseed=42
blockalign=4k

[seq-write]
rw=write
bs=1M
iodepth=4
numjobs=2
offset=1G
offset_increment=16G
zero_buffers
verify=crc32c
do_verify=0

# second phase waits for the first
[mixed]
stonewall
rw=randrw
rwmixread=70
percentage_random=90
bssplit=4k/50:8k/25:64k,128k/100
iodepth=32
rate_iops=5000,1000   ; writes slower
number_ios=100k
buffer_compress_percentage=30
runtime=30
description=database-like mix
thread
";

    /// The first job of [`REALISTIC_FILE`] as fio would run it.
    fn realistic_seq_write() -> JobSpec {
        let mut seq = JobSpec::new(
            "seq-write",
            EngineKind::IoUring,
            Target::Path("/dev/sdz".into()),
        );
        seq.direct = true;
        seq.size_bytes = Some(8 << 30);
        seq.runtime_ns = Some(120 * NS_PER_S);
        seq.time_based = true;
        seq.ramp_time_ns = 5 * NS_PER_S;
        seq.group_reporting = true;
        seq.seed = 42;
        seq.align_bytes = 4096;
        seq.align_given = true;
        seq.read_percent = 0;
        seq.random_percent = 0;
        seq.block_size_read = BlockSizeSpec::Fixed(1 << 20);
        seq.block_size_write = BlockSizeSpec::Fixed(1 << 20);
        seq.iodepth = 4;
        seq.numjobs = 2;
        seq.offset_bytes = 1 << 30;
        seq.offset_increment_bytes = 16 << 30;
        seq.data_pattern = DataPattern::Zeros;
        // fio's buffers: zeros, filled once (a verify job writes verify data over them).
        seq.fio_buffers = Some(crate::FioBufferFill {
            untimed_scramble: false,
            refill: false,
            compress_percent: 0,
            zero: true,
        });
        // Headers written, no read-back: time-based on io_uring, fio would stop for a verify
        // pass every `size` bytes, which storlab refuses (ADR 0057).
        seq.verify = false;
        seq.fio_done_file_stays_done = true;
        seq.verify_spec = Some(crate::VerifySpec::new(crate::VerifyKind::Crc32c));
        // fio's default `verify_state_save=1` with verify.
        seq.verify_state_save = true;
        // A fio job draws from fio's own streams, seeded from its `randseed`.
        seq.fio_random = Some(crate::FioRandom {
            randseed: 42,
            randrepeat: true,
            randseed_given: true,
            tausworthe64: false,
            lfsr: false,
            allrandrepeat: false,
            rand_mode: false,
        });
        seq
    }

    #[test]
    fn kb_base_holds_for_its_whole_section_and_the_jobs_after_global() {
        // fio 3.33 sorts a section's options by priority, kb_base first: `size=64k` written
        // before it reads 64000 bytes, as `fio job.fio` does.
        let sizes = |text: &str| {
            parse(text)
                .unwrap()
                .jobs
                .iter()
                .map(|j| j.size_bytes)
                .collect::<Vec<_>>()
        };
        let before =
            "[a]\nfilename=/tmp/f\nsize=64k\nkb_base=1000\n[b]\nfilename=/tmp/f\nsize=64k\n";
        assert_eq!(sizes(before), [Some(64_000), Some(64 << 10)]);
        let global = "[global]\nsize=1MiB\nkb_base=1000\n[a]\nfilename=/tmp/f\n";
        assert_eq!(sizes(global), [Some(1 << 20)]);
        assert!(parse("[a]\nfilename=/tmp/f\nkb_base=1023\n").is_err());
    }

    #[test]
    fn realistic_file_with_globals_sets_every_field() {
        let set = parse(REALISTIC_FILE).unwrap();
        assert_eq!(set.jobs.len(), 2);
        let seq = realistic_seq_write();
        assert_eq!(set.jobs[0], seq);

        let mut mixed = JobSpec::new(
            "mixed",
            EngineKind::IoUring,
            Target::Path("/dev/sdz".into()),
        );
        mixed.direct = true;
        mixed.size_bytes = Some(8 << 30);
        mixed.runtime_ns = Some(30 * NS_PER_S);
        mixed.time_based = true;
        mixed.ramp_time_ns = 5 * NS_PER_S;
        mixed.group_reporting = true;
        mixed.seed = 42;
        mixed.fio_random = seq.fio_random;
        mixed.align_given = true;
        mixed.stonewall = true;
        mixed.read_percent = 70;
        mixed.random_percent = 90;
        mixed.block_size_read = BlockSizeSpec::Split(vec![
            BlockSizeShare {
                size_bytes: 4096,
                percent: 50,
            },
            BlockSizeShare {
                size_bytes: 8192,
                percent: 25,
            },
            BlockSizeShare {
                size_bytes: 65536,
                percent: 25,
            },
        ]);
        mixed.block_size_write = BlockSizeSpec::Split(vec![BlockSizeShare {
            size_bytes: 128 << 10,
            percent: 100,
        }]);
        mixed.iodepth = 32;
        mixed.rate_iops = RateIops {
            read: Some(5000),
            write: Some(1000),
        };
        mixed.number_ios = Some(100 << 10);
        mixed.data_pattern = DataPattern::Compressible(30);
        // A share below 100 refills every write (init.c, `fixup_options`).
        mixed.fio_buffers = Some(crate::FioBufferFill {
            untimed_scramble: false,
            refill: true,
            compress_percent: 30,
            zero: false,
        });
        // blockalign=4k under 128 KiB writes: fio turns the random map off (init.c).
        mixed.random_map = false;
        mixed.fio_norandommap = true;
        if let Some(fio) = mixed.fio_random.as_mut() {
            fio.rand_mode = true;
        }
        assert_eq!(set.jobs[1], mixed);
    }

    #[test]
    fn a_later_global_affects_only_later_jobs() {
        let text = "\
[global]
size=1M
[a]
[global]
iodepth=8
ioengine=io_uring
[b]
iodepth=2
[c]
";
        let set = parse(text).unwrap();
        let depths: Vec<(u32, EngineKind)> =
            set.jobs.iter().map(|j| (j.iodepth, j.engine)).collect();
        assert_eq!(
            depths,
            vec![
                (1, EngineKind::Psync),
                (2, EngineKind::IoUring),
                (8, EngineKind::IoUring)
            ]
        );
        assert!(set.jobs.iter().all(|j| j.size_bytes == Some(1 << 20)));
    }

    #[test]
    fn name_key_and_sim_target() {
        let set = parse("[x]\nname=renamed\nfilename=sim:usb3-uas-ssd\n").unwrap();
        assert_eq!(set.jobs[0].name, "renamed");
        assert_eq!(set.jobs[0].engine, EngineKind::Sim);
        assert_eq!(set.jobs[0].target, Target::Sim("usb3-uas-ssd".into()));
    }

    #[test]
    fn comments_only_start_lines_or_follow_whitespace() {
        assert_eq!(strip_comment("  # all comment"), "");
        assert_eq!(strip_comment("; all comment"), "");
        assert_eq!(strip_comment("bs=4k # note"), "bs=4k ");
        assert_eq!(strip_comment("filename=/tmp/a#b"), "filename=/tmp/a#b");
    }

    #[test]
    fn mistakes_give_one_exact_line() {
        let cases = [
            ("[bar]\nsize=1M\nfoo=1\n", "job.fio:3: unknown key 'foo' in section [bar]"),
            ("[bar]\niodeph=4\n", "job.fio:2: unknown key 'iodeph' in section [bar] (did you mean 'iodepth'?)"),
            ("[global]\nsize=1M\n[a]\niodepth=0\n", "job.fio:4: iodepth=0: queue depth must be at least 1"),
            ("[global]\niodepth=100000\n[a]\nsize=1M\n", "job.fio:2: iodepth=100000: queue depth is above the maximum of 65536"),
            ("[a]\nsize=1M\nnumjobs=0\n", "job.fio:3: numjobs=0: a job needs at least one worker"),
            ("[a]\nsize=1M\nbs=3000\n", "job.fio:3: bs=3000: block size 3000 B is not a multiple of 512 bytes (one sector)"),
            ("[a]\nsize=1G\nbs=128M\n", "job.fio:3: bs=128M: block size 128 MiB is above the maximum of 64 MiB"),
            ("[a]\nsize=1M\nbsrange=64k-4k\n", "job.fio:3: bsrange=64k-4k: range minimum 64 KiB is above its maximum 4 KiB"),
            ("[a]\nsize=1M\nbssplit=4k/50:8k/40\n", "job.fio:3: bssplit=4k/50:8k/40: bssplit shares sum to 90%, not 100%"),
            ("[a]\nsize=1M\nba=3k\n", "job.fio:3: ba=3k: alignment must be a power of two"),
            ("[a]\nsize=1M\nrwmixread=150\n", "job.fio:3: rwmixread=150: 150% is above 100%"),
            ("[a]\nsize=1M\nruntime=10\ntime_based=1\nruntime=0\n", "job.fio:5: runtime=0: runtime must be positive (leave it unset for no time limit)"),
            ("[a]\nsize=1M\ntime_based\n", "job.fio:3: time_based: time_based needs a runtime (e.g. runtime=60)"),
            ("[a]\nsize=0\n", "job.fio:2: size=0: size must not be 0 (leave it unset to use the whole target)"),
            ("[a]\nbs=4k\n", "job.fio:1: size: a temporary test file needs a size (e.g. size=1G), or name an existing file with filename="),
            ("[a]\nioengine=null\n", "job.fio:1: size: ioengine=null has no file to take a size from: give size= (fio 3.33 refuses the job too: \"you need to specify size=\")"),
            ("[a]\nsize=1M\nrate_iops=0\n", "job.fio:3: rate_iops=0: the read rate must be at least 1 I/O per second (leave it empty for no limit)"),
            ("[a]\nsize=1M\nioengine=rdma\n", "job.fio:3: ioengine=rdma: out of scope: storlab measures local files, block devices and its simulated stacks"),
            ("[a]\nsize=1M\nrw=trimread\n", "job.fio:3: rw=trimread: unknown mode; use read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite or randtrimwrite"),
            ("[a]\nsize=1M\nrw=trimwrite\nverify=md5\n", "job.fio:4: verify=md5: verify with a trim workload (rw=trim, randtrim, trimwrite, randtrimwrite) is not supported: storlab's read-back does not know which blocks a trim left undefined"),
            ("[a]\nfilename=sim:usb3-uas-ssd\nioengine=psync\n", "job.fio:3: ioengine=psync: filename=sim:usb3-uas-ssd is a simulated drive and needs ioengine=sim"),
            ("[a]\nsize=1M\nverify=1\n", "job.fio:3: verify=1: verify needs writes to check, but the job only reads"),
            ("[a]\nsize=1M\niodepth\n", "job.fio:3: iodepth: iodepth needs a value"),
            ("[a]\nsize=10%\n", "job.fio:2: size=10%: a temporary test file needs a size in bytes (e.g. size=1G): a share (%) is of a target that exists, so name one with filename="),
            ("[a]\nsize=1M\noffset=50%\n", "job.fio:3: offset=50%: a share (%) is of a target that exists; a temporary test file is made to the job's size, so give this in bytes, or name a target with filename="),
            ("[a]\nsize=1M\nbs=10%\n", "job.fio:3: bs=10%: '10%': only size, offset and offset_increment can be a share of the target (%); give bytes (e.g. 64k)"),
            ("[a]\nfilename=sim:usb3-uas-ssd\nsize=0%\n", "job.fio:3: size=0%: size must not be 0% (leave it unset to use the whole target)"),
            ("[a]\nfilename=sim:usb3-uas-ssd\noffset=100%\n", "job.fio:3: offset=100%: an offset of 100% is the end of the target: nothing is left to run on"),
            ("[a]\nfilename=sim:usb3-uas-ssd\noffset=-5%\n", "job.fio:3: offset=-5%: '-5%' is negative"),
            ("[a]\nsize=1M\nruntime=5x\n", "job.fio:3: runtime=5x: '5x' has an unknown time unit 'x' (use us, ms, s, m, h)"),
            ("[a]\nsize=1M\ndirect=maybe\n", "job.fio:3: direct=maybe: 'maybe' is not a boolean (use 1 or 0)"),
            ("size=1M\n[a]\n", "job.fio:1: 'size=1M' comes before any [section]; start with [global] or [jobname]"),
            ("[a\nsize=1M\n", "job.fio:1: '[a' is missing its closing ']'"),
            ("[global]\nsize=1M\n", "job.fio: no jobs: the file has no [section] other than [global]"),
            ("[a]\nsize=1M\nwait_for=b\n[b]\nsize=1M\n", "job.fio:3: wait_for=b: no job named 'b' comes before this one (fio waits only for an earlier job)"),
            ("[a]\nsize=1M\nwait_for=a\n", "job.fio:3: wait_for=a: a job cannot wait for itself"),
            ("[global]\nsize=1M\n[b]\n[b]\n[a]\nwait_for=b\n", "job.fio:6: wait_for=b: 2 jobs before this one are named 'b'; fio refuses a name that is not unique"),
            ("[a]\nsize=1M\nstartdelay=5-2\n", "job.fio:3: startdelay=5-2: the range's low end 5 is above its high end 2"),
            ("[a]\nsize=1M\nstartdelay=3651d\n", "job.fio:3: startdelay=3651d: startdelay is above the maximum of 3650d (ten years)"),
            ("[a]\nsize=1M\nrate=1m,1m,1x\n", "job.fio:3: rate=1m,1m,1x: '1x' has an unknown size suffix 'x' (use k, M, G, T, KiB, MiB...)"),
            ("[a]\nsize=1M\nrate=1m,1m,1m,1m\n", "job.fio:3: rate=1m,1m,1m,1m: '1m,1m,1m,1m' has more than two values; storlab takes read,write (there is no trim direction)"),
            ("[a]\nsize=1M\nprio=8\n", "job.fio:3: prio=8: a whole number from 0 to 7 is needed"),
            ("[a]\nsize=1M\nprioclass=4\n", "job.fio:3: prioclass=4: a whole number from 0 to 3 is needed"),
            ("[a]\nsize=1M\nexit_what=some\n", "job.fio:3: exit_what=some: use group, stonewall or all"),
            ("[global]\nport=1\n[a]\nsize=1M\nioengine=exec\n", "job.fio:5: ioengine=exec: out of scope: storlab measures local files, block devices and its simulated stacks"),
            ("[a]\nsize=1M\nioengine=external:/opt/e.so\n", "job.fio:3: ioengine=external:/opt/e.so: out of scope: storlab measures local files, block devices and its simulated stacks"),
            ("[a]\nfilename=/dev/sda:/dev/sdb\n", "job.fio:2: filename=/dev/sda:/dev/sdb: storlab runs one file per job; fio's ':'-separated file list is not supported"),
        ];
        for (text, expected) in cases {
            assert_eq!(error_text(text), expected, "for:\n{text}");
        }
    }

    /// Regression (fuzz target `jobfile`'s region and time properties): numbers each valid on
    /// their own whose sum the runner computes unchecked. `runtime` + `ramp_time` overflowed in
    /// the worker setup (`attempt to add with overflow` in a debug build); worker regions past
    /// 16 EiB overflowed the state planner's layout. Each is refused naming the key.
    #[test]
    fn numbers_that_overflow_the_run_arithmetic_are_refused_naming_the_key() {
        let cases = [
            ("[a]\nioengine=null\nruntime=10000000000\nramp_time=10000000000\n",
             "job.fio:3: runtime=10000000000: runtime is above the maximum of 3650d (ten years)"),
            ("[a]\nioengine=null\nsize=1M\nramp_time=3651d\n",
             "job.fio:4: ramp_time=3651d: ramp_time is above the maximum of 3650d (ten years)"),
            ("[a]\nioengine=null\nsize=1M\nnumjobs=3\noffset_increment=16000p\n",
             "job.fio:5: offset_increment=16000p: worker 2 would start beyond 16 EiB (offset + 2 * offset_increment), past any device"),
            ("[a]\nioengine=null\nsize=16383p\noffset=16383p\n",
             "job.fio:3: size=16383p: the last worker's region would end beyond 16 EiB (offset + (numjobs - 1) * offset_increment + size), past any device"),
        ];
        for (text, expected) in cases {
            assert_eq!(error_text(text), expected, "for:\n{text}");
        }
        // The limits themselves are accepted.
        let set = parse("[a]\nioengine=null\nsize=1M\nruntime=3650d\nramp_time=3650d\n").unwrap();
        assert_eq!(set.jobs[0].runtime_ns, Some(crate::validate::TIME_MAX_NS));
        let set = parse("[a]\nioengine=null\nsize=8191p\nnumjobs=2\noffset_increment=8192p\n");
        assert!(set.is_ok(), "{set:?}");
    }

    #[test]
    fn a_target_given_with_the_file_reaches_every_job() {
        let text = "[global]\nbs=4k\n[a]\nrw=read\n[b]\nfilename=data\nruntime=1\n";
        let path = Target::Path("/dev/sdz".into());
        let set = parse_fio_str(text, "job.fio", Some(&path)).unwrap();
        let targets: Vec<_> = set.jobs.iter().map(|j| (j.engine, &j.target)).collect();
        assert_eq!(
            targets,
            [(EngineKind::Psync, &path), (EngineKind::Psync, &path)]
        );
        assert_eq!(
            error_text(text),
            "job.fio:3: size: a temporary test file needs a size (e.g. size=1G), or name an existing file with filename="
        );
    }

    #[test]
    fn reading_a_missing_file_names_it() {
        let error = parse_fio_file(Path::new("/nonexistent/storlab/job.fio"), None).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("/nonexistent/storlab/job.fio: "),
            "{error}"
        );
        assert!(!error.to_string().contains('\n'));
    }

    proptest::proptest! {
        /// Any arrangement of plausible and broken lines gives jobs or one error line, no panic.
        #[test]
        fn never_panics_and_errors_stay_on_one_line(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("[global]".to_string()),
                    "\\[[a-z]{0,3}\\]?",
                    "(size|bs|iodepth|rw|bssplit|runtime|rate_iops|filename|ioengine|time_based)(=[-a-z0-9:/,.%k]{0,8})?",
                    "[ -~]{0,12}",
                ],
                0..12,
            )
        ) {
            let text = lines.join("\n");
            if let Err(error) = parse(&text) {
                let rendered = error.to_string();
                proptest::prop_assert!(!rendered.contains('\n'), "{}", rendered);
                proptest::prop_assert!(rendered.starts_with("job.fio"), "{}", rendered);
            }
        }
    }

    #[test]
    fn byte_order_mark_and_crlf_are_tolerated() {
        let set = parse("\u{feff}[a]\r\nsize=1M\r\nbs=8k\r\n").unwrap();
        assert_eq!(set.jobs[0].block_size_read, BlockSizeSpec::Fixed(8192));
    }

    #[test]
    fn warnings_reach_the_job() {
        let set = parse("[a]\nsize=1M\nblockalign=512\nbs=4k\n").unwrap();
        assert_eq!(set.jobs[0].align_bytes, 512);
        assert_eq!(set.jobs[0].warnings.len(), 1);
        assert!(set.jobs[0].warnings[0].starts_with("alignment 512 B: "));
    }
}

#[cfg(test)]
mod flags_beside_file_tests {
    use super::*;
    use crate::size::NS_PER_S;

    fn flags(list: &[&str]) -> Vec<String> {
        list.iter().map(|f| f.to_string()).collect()
    }

    /// fio 3.33 with `--runtime=1 --bs=8k` before a file whose [global] says bs=4k and whose
    /// job `a` says runtime=5: job a runs 5 s, job b 1 s, both with 4 KiB blocks.
    #[test]
    fn flags_are_globals_that_the_file_overrides() {
        let text = "[global]\nfilename=/tmp/x\nsize=1m\nbs=4k\n[a]\nruntime=5\n[b]\nrw=write\n";
        let set = parse_fio_str_with_flags(
            text,
            "job.fio",
            None,
            &flags(&["--runtime=1", "--bs=8k", "--iodepth=4"]),
        )
        .unwrap();
        let runtimes: Vec<_> = set.jobs.iter().map(|j| j.runtime_ns).collect();
        assert_eq!(runtimes, vec![Some(5 * NS_PER_S), Some(NS_PER_S)]);
        assert!(set.jobs.iter().all(|j| j.max_block_bytes() == 4096));
        assert!(set.jobs.iter().all(|j| j.iodepth == 4));
    }

    #[test]
    fn a_name_flag_beside_a_file_is_refused_in_one_line() {
        let error =
            parse_fio_str_with_flags("[a]\nsize=1m\n", "job.fio", None, &flags(&["--name=x"]))
                .unwrap_err()
                .to_string();
        assert!(
            error.contains("--name=x") && error.contains("job.fio"),
            "{error}"
        );
        assert!(!error.contains('\n'));
    }

    #[test]
    fn a_bad_flag_beside_a_file_names_the_flag() {
        let error =
            parse_fio_str_with_flags("[a]\nsize=1m\n", "job.fio", None, &flags(&["--iodepht=2"]))
                .unwrap_err()
                .to_string();
        assert!(error.contains("iodepht"), "{error}");
    }
}
