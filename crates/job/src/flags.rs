//! Reader for fio-style command-line job flags (`--rw=randread --bs=4k --name=x`) into a `JobSet`.
//!
//! The flags are the keys of [`crate::keys::KEYS`], the same as in fio job files. As on fio's
//! command line, `--name=NAME` starts a new job; flags before the first `--name` (or after
//! `--name=global`) apply to every job that follows, like a `[global]` section. Flags without any
//! `--name` make one job named `job`. Valued flags need `=` (`--iodepth=32`); booleans may be
//! bare (`--time_based`).

use crate::error::{JobError, Location};
use crate::keys::{find_key, JobDraft};
use crate::model::{JobSet, JobSpec, Target};

/// Name of the job made from flags that never say `--name=`.
pub const DEFAULT_JOB_NAME: &str = "job";
const GLOBAL_NAME: &str = "global";

/// Whether `key` (without `--`) is a job flag: a key or alias of the shared key table. The CLI
/// uses this to tell job flags from its own options.
pub fn is_job_key(key: &str) -> bool {
    find_key(key).is_some()
}

/// Parses fio-style flags; each argument is one `--key=value` or bare `--key`. `target`, when
/// given, replaces every job's target before the job is validated (see
/// [`JobDraft::override_target`]).
pub fn parse_flags(args: &[String], target: Option<&Target>) -> Result<JobSet, JobError> {
    // Every job starts as a copy of the global draft, so it inherits the override from here.
    let mut global = JobDraft::new();
    if let Some(target) = target {
        global.override_target(target.clone());
    }
    let mut jobs: Vec<(String, JobDraft)> = Vec::new();
    // True while flags go to the global draft (before the first --name, or after --name=global).
    let mut in_global = true;

    // An engine out of scope is named before its own options (`--hostname`, `--port`) could be
    // reported as unknown flags, as in a job file (see `fio::out_of_scope_engine_refusal`).
    for arg in args {
        if let Ok((key, Some(value))) = split_flag(arg) {
            let value = value.trim();
            if key.eq_ignore_ascii_case("ioengine") && crate::keys::is_out_of_scope_engine(value) {
                return Err(JobError::unsupported(
                    Location::Flag,
                    key,
                    Some(value.to_string()),
                    crate::keys::OUT_OF_SCOPE_HINT,
                ));
            }
        }
    }
    for arg in args {
        let (key, value) = split_flag(arg)?;
        if find_key(key).is_some_and(|def| def.name == "name") {
            match value.map(str::trim) {
                Some(GLOBAL_NAME) => in_global = true,
                Some(name) if !name.is_empty() => {
                    in_global = false;
                    // The new job starts from the global flags given so far, as in fio.
                    let mut draft = global.clone();
                    draft.set(key, Some(name), &Location::Flag)?;
                    jobs.push((name.to_string(), draft));
                }
                _ => {
                    return Err(JobError::invalid(
                        Location::Flag,
                        key,
                        value.map(str::to_string),
                        "a job name is needed (e.g. --name=randread)",
                    ))
                }
            }
            continue;
        }
        let draft = match jobs.last_mut() {
            Some((_, draft)) if !in_global => draft,
            _ => &mut global,
        };
        draft.set(key, value, &Location::Flag)?;
    }
    if jobs.is_empty() {
        if args.is_empty() {
            return Err(JobError::syntax(
                Location::Unknown,
                "no job flags given (e.g. --rw=randread --bs=4k --size=1G)",
            ));
        }
        jobs.push((DEFAULT_JOB_NAME.to_string(), global));
    }
    let mut finished: Vec<JobSpec> = Vec::with_capacity(jobs.len());
    for (name, draft) in &jobs {
        let location = Location::Job(name.clone());
        let spec = draft.finish(name, &location)?;
        draft.check_wait_for(&spec, &finished, &location)?;
        finished.push(spec);
    }
    let mut jobs = finished;
    crate::keys::note_fio_differences(&mut jobs);
    Ok(JobSet { jobs })
}

/// One `--key=value` (or bare `--key`) argument as its key and value.
pub(crate) fn split_flag(arg: &str) -> Result<(&str, Option<&str>), JobError> {
    let Some(flag) = arg.strip_prefix("--") else {
        return Err(JobError::syntax(
            Location::Flag,
            format!("'{arg}' is not a job flag; write --key=value (e.g. --rw=randread)"),
        ));
    };
    let (key, value) = match flag.split_once('=') {
        Some((key, value)) => (key, Some(value)),
        None => (flag, None),
    };
    if key.is_empty() {
        return Err(JobError::syntax(
            Location::Flag,
            format!("'{arg}' has no flag name"),
        ));
    }
    Ok((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BlockSizeSpec, EngineKind, JobSpec, Target, TargetShares};
    use crate::size::NS_PER_S;

    fn flags(line: &str) -> Result<JobSet, JobError> {
        let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        parse_flags(&args, None)
    }

    #[test]
    fn quick_run_like_fio() {
        let set = flags(
            "--rw=randread --bs=4k --iodepth=32 --ioengine=io_uring --direct=1 \
             --filename=/tmp/f --size=1G --runtime=10 --time_based --name=x",
        )
        .unwrap();
        let mut expected = JobSpec::new("x", EngineKind::IoUring, Target::Path("/tmp/f".into()));
        expected.block_size_read = BlockSizeSpec::Fixed(4096);
        expected.block_size_write = BlockSizeSpec::Fixed(4096);
        expected.iodepth = 32;
        expected.direct = true;
        expected.size_bytes = Some(1 << 30);
        expected.runtime_ns = Some(10 * NS_PER_S);
        expected.time_based = true;
        expected.fio_random = Some(crate::FioRandom {
            randseed: 0x89,
            randrepeat: true,
            randseed_given: false,
            tausworthe64: false,
            lfsr: false,
            allrandrepeat: false,
            rand_mode: true,
        });
        assert_eq!(set.jobs, vec![expected]);
    }

    #[test]
    fn name_starts_a_new_job_inheriting_earlier_flags() {
        let set = flags("--size=1M --iodepth=4 --name=a --rw=write --name=b --iodepth=8").unwrap();
        let summary: Vec<(&str, &str, u32)> = set
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.rw_name(), j.iodepth))
            .collect();
        // Job b sets no `rw`: fio's default, sequential read.
        assert_eq!(summary, vec![("a", "write", 4), ("b", "read", 8)]);
    }

    #[test]
    fn name_global_goes_back_to_shared_flags() {
        let set = flags("--name=a --size=1M --name=global --iodepth=2 --name=b --size=2M").unwrap();
        assert_eq!(set.jobs[0].iodepth, 1);
        assert_eq!(set.jobs[0].size_bytes, Some(1 << 20));
        assert_eq!(set.jobs[1].iodepth, 2);
        assert_eq!(set.jobs[1].size_bytes, Some(2 << 20));
    }

    #[test]
    fn job_keys_are_recognised_with_aliases() {
        assert!(is_job_key("iodepth"));
        assert!(is_job_key("readwrite"));
        assert!(is_job_key("name"));
        assert!(!is_job_key("output-format"));
        assert!(!is_job_key(""));
    }

    #[test]
    fn flags_without_name_make_one_job() {
        let set = flags("--ioengine=null --size=1M --number_ios=1000").unwrap();
        assert_eq!(set.jobs.len(), 1);
        assert_eq!(set.jobs[0].name, DEFAULT_JOB_NAME);
        assert_eq!(set.jobs[0].target, Target::None);
    }

    #[test]
    fn mistakes_name_the_flag() {
        let cases = [
            ("--iodepth=0 --size=1M", "--iodepth=0: queue depth must be at least 1"),
            ("--size=1M --name=a --iodepth=0", "--iodepth=0: queue depth must be at least 1"),
            ("--iodeph=4", "unknown flag '--iodeph' (did you mean 'iodepth'?)"),
            ("--foo=1", "unknown flag '--foo'"),
            ("--iodepth", "--iodepth: iodepth needs a value"),
            ("--size=1M -q", "'-q' is not a job flag; write --key=value (e.g. --rw=randread)"),
            ("--name=", "--name=: a job name is needed (e.g. --name=randread)"),
            ("--bs=4k", "job [job]: size: a temporary test file needs a size (e.g. size=1G), or name an existing file with filename="),
            ("--size=1M --ioengine=rdma", "--ioengine=rdma: out of scope: storlab measures local files, block devices and its simulated stacks"),
            ("--hostname=peer --ioengine=net", "--ioengine=net: out of scope: storlab measures local files, block devices and its simulated stacks"),
            ("--size=1M --bssplit=4k/60:8k/60", "--bssplit=4k/60:8k/60: bssplit shares sum to 120%, not 100%"),
            ("", "no job flags given (e.g. --rw=randread --bs=4k --size=1G)"),
            // Regression: the runner added these unchecked (a debug build panicked).
            ("--ioengine=null --runtime=1 --ramp_time=10000000000", "--ramp_time=10000000000: ramp_time is above the maximum of 3650d (ten years)"),
            ("--ioengine=null --size=1M --numjobs=1024 --offset_increment=17p", "--offset_increment=17p: worker 1023 would start beyond 16 EiB (offset + 1023 * offset_increment), past any device"),
        ];
        for (line, expected) in cases {
            assert_eq!(flags(line).unwrap_err().to_string(), expected, "for {line}");
        }
    }

    #[test]
    fn a_target_given_with_the_flags_is_validated_as_the_target() {
        let args: Vec<String> = ["--bs=4k", "--name=a", "--name=b", "--rw=read"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let sim = Target::Sim("usb3-uas-ssd".into());
        let set = parse_flags(&args, Some(&sim)).unwrap();
        for job in &set.jobs {
            assert_eq!((job.engine, &job.target), (EngineKind::Sim, &sim));
            assert_eq!(job.size_bytes, None, "the whole drive");
        }
        // Without one, the same flags ask for a temporary file, which needs a size.
        assert!(parse_flags(&args, None).is_err());
    }

    #[test]
    fn shares_of_the_target_replace_bytes_and_the_last_setting_wins() {
        let args = |list: &[&str]| -> Vec<String> { list.iter().map(|s| s.to_string()).collect() };
        let sim = Target::Sim("usb3-uas-ssd".into());
        let set = parse_flags(
            &args(&["--offset=50%", "--size=12.5%", "--offset_increment=25%"]),
            Some(&sim),
        )
        .unwrap();
        let job = &set.jobs[0];
        assert_eq!(
            job.target_shares,
            TargetShares {
                offset_ppm: Some(500_000),
                offset_increment_ppm: Some(250_000),
                size_ppm: Some(125_000),
            }
        );
        assert_eq!((job.offset_bytes, job.size_bytes), (0, None));
        // A later size in bytes replaces the share, as any later setting of a key does.
        let set = parse_flags(&args(&["--size=50%", "--size=1m"]), Some(&sim)).unwrap();
        assert_eq!(
            (set.jobs[0].size_bytes, set.jobs[0].target_shares.size_ppm),
            (Some(1 << 20), None)
        );
    }

    /// A sample setting of every key of the shared table (but the replay keys, which need a
    /// trace, and `wait_for`, which needs an earlier job): each must parse in both readers with
    /// the same result. A sample's settings after the first go with it.
    const KEY_SAMPLES: &[&str] = &[
        "name=n",
        "description=d",
        "ioengine=io_uring",
        "filename=/tmp/x",
        "directory=/tmp",
        "direct=1",
        "buffered=0",
        "fadvise_hint=random",
        "rw=randrw",
        "readwrite=rw",
        "rwmixread=60",
        "rwmixwrite=30",
        "percentage_random=50",
        "norandommap",
        "io_size=2m",
        "io_limit=2m",
        "loops=3",
        "bs=8k",
        "blocksize=8k",
        "bsrange=4k-8k",
        "blocksize_range=4k-8k",
        "bssplit=4k/50:8k/50",
        "blockalign=4k",
        "ba=8k",
        "iodepth=2",
        "iodepth_batch_submit=4 iodepth=8",
        "iodepth_batch=4 iodepth=8",
        "iodepth_batch_complete_min=2 iodepth=8",
        "iodepth_batch_complete=2 iodepth=8",
        "iodepth_batch_complete_max=4 iodepth=8",
        "iodepth_low=2 iodepth=8",
        "hipri ioengine=io_uring",
        "nowait=1 ioengine=io_uring",
        "fixedbufs ioengine=io_uring",
        "registerfiles=0 ioengine=io_uring",
        "sqthread_poll=1 ioengine=io_uring",
        "nonvectored=0 ioengine=io_uring",
        "cmdprio_percentage=10 ioengine=libaio",
        "userspace_reap ioengine=libaio",
        "numjobs=2",
        "offset=4k",
        "offset_increment=1M",
        "size=2M",
        "number_ios=10",
        "runtime=1",
        "time_based=1",
        "ramp_time=1",
        "rate_iops=10",
        "rate=1m,512k",
        "data_pattern=zeros",
        "buffer_compress_percentage=20",
        "zero_buffers=1",
        "refill_buffers=1",
        "dedupe_percentage=20",
        "dedupe_mode=working_set dedupe_percentage=20",
        "dedupe_working_set_percentage=10 dedupe_percentage=20",
        "dedupe_global=1 dedupe_percentage=20",
        "seed=7",
        "randseed=7",
        "randrepeat=1",
        "verify=0",
        "stonewall=1",
        "rate=1m,2m,3m",
        "startdelay=1-2",
        "exitall=1",
        "exit_what=stonewall",
        "exitall_on_error=1",
        "prio=5",
        "prioclass=2",
        "wait_for_previous=1",
        "new_group=1",
        "group_reporting=1",
        "thread=1",
        "kb_base=1024",
        "scramble_buffers=0",
        "rw_sequencer=identical",
        "allrandrepeat=1",
        "softrandommap=1",
        "offset_align=8k",
        "bs_is_seq_rand=1",
        "bs_unaligned=1",
        "overwrite=1",
        "create_fsync=0",
        "unified_rw_reporting=none",
        "unit_base=8",
        "clat_percentiles=1",
        "lat_percentiles=0",
        "slat_percentiles=0",
        "significant_figures=4",
        "unified_rw_reporting=both unit_base=1 significant_figures=6",
        "percentile_list=99:99.9:50 lat_percentiles=1 slat_percentiles=1 clat_percentiles=0",
        "disable_lat=1 write_lat_log=lat",
        "disable_clat=1 write_iops_log=iops",
        "disable_slat=1 slat_percentiles=1",
        "disable_bw_measurement=1 write_bw_log=bw",
        "disable_bw=1 gtod_reduce=1",
        "invalidate=0",
        "write_iolog=/tmp/storlab-iolog",
        "fsync=4",
        "fdatasync=8",
        "end_fsync=1",
        "fsync_on_close=1",
        "sync=none",
        "thinktime=1100",
        "thinktime_spin=50",
        "thinktime_blocks=4",
        "thinktime_blocks_type=complete",
        "thinktime_iotime=1",
        "random_distribution=zipf:1.2",
        "random_generator=lfsr",
        "zonemode=none",
        "rw=write:4k",
        "allow_file_create=1",
        "create_on_open=1",
        "unlink=0",
        "filename_format=$jobname.$jobnum.$filenum",
        "filesize=1M",
        "nrfiles=1",
        "nr_files=1",
        "openfiles=2",
        "file_service_type=zipf:1.2:0.5",
        "rate_process=poisson",
        "io_submit_mode=offload",
        "gtod_reduce=1",
        "clocksource=clock_gettime",
        "fallocate=none",
        "flow=2",
        "flow_id=3 flow=2",
        "flow_sleep=100",
        "serialize_overlap=1 iodepth=4 rw=write",
        "cpus_allowed=0-1",
        "cpus_allowed_policy=split cpus_allowed=0-1",
        "numa_cpu_nodes=0",
        "latency_target=500 iodepth=8",
        "latency_window=50ms latency_target=1ms",
        "latency_percentile=99.9 latency_target=1ms",
        "latency_run=1 latency_target=1ms",
        "numa_mem_policy=bind:0",
        "threads=1",
        "buffer_pattern=0xdeadbeef",
        "verify_pattern=0x5a",
        "do_verify=1",
        "verify_only=0",
        "verify_fatal=1",
        "continue_on_error=io",
        "ignore_error=EIO:84,5:ENOSPC",
        "error_dump=0",
        "fill_device=1 rw=write filename=sim:usb3-uas-ssd",
        "create_serialize=0",
        "verify_dump=0",
        "verify_interval=0",
        "verify_offset=0",
        "verify_backlog=0",
        "verify_backlog_batch=0",
        "verify_async=0",
        "verify_async_cpus=0",
        "verify_state_save=0",
        "verify_state_load=0",
        "experimental_verify=0",
        "rate_min=1m",
        "ratemin=1m,512k",
        "rate_iops_min=100",
        "cmdprio_class=2 ioengine=io_uring cmdprio_percentage=10",
        "cmdprio=3 ioengine=io_uring cmdprio_percentage=10",
        "cmdprio_bssplit=4k/10:64k/50/2/3,8k/20 ioengine=libaio",
        "cmdprio_percentage=10,30 ioengine=libaio cmdprio_class=1,2 cmdprio=0,4",
        "percentage_random=50,80 rw=randrw",
        "sqthread_poll_cpu=0 ioengine=io_uring sqthread_poll=1",
        "rate_iops_min=100,50",
        "steadystate=iops:5%",
        "ss=bw_slope:1m",
        "steadystate_duration=30",
        "ss_dur=30",
        "steadystate_ramp_time=5",
        "ss_ramp=5",
        "write_bw_log=b",
        "write_iops_log=i",
        "write_lat_log=l",
        "write_hist_log=h",
        "log_avg_msec=500",
        "log_hist_msec=250",
        "log_hist_coarseness=2",
        "log_max_value=1",
        "log_offset=1",
        "log_prio=1",
        "per_job_logs=0",
        "log_entries=4096",
        "log_compression=0",
        "log_store_compressed=0",
        "log_unix_epoch=0",
        // Keys that need a companion: the settings after the first go with it.
        "zonesize=16k zonemode=strided",
        "zonerange=8k zonemode=strided zonesize=16k",
        "zoneskip=8k zonemode=strided zonesize=16k",
    ];

    #[test]
    fn flags_and_file_accept_the_same_keys() {
        // The replay keys need a trace to read.
        let trace_dir = std::env::temp_dir().join(format!("storlab-flags-{}", std::process::id()));
        std::fs::create_dir_all(&trace_dir).unwrap();
        let trace = trace_dir.join("trace.log");
        std::fs::write(&trace, "fio version 2 iolog\nf add\nf read 0 4096\n").unwrap();
        let trace = trace.display();
        let replay_samples = [
            format!("read_iolog={trace}"),
            format!("replay_redirect=/tmp/r read_iolog={trace}"),
            format!("replay_no_stall=1 read_iolog={trace}"),
            format!("replay_time_scale=200 read_iolog={trace}"),
            format!("replay_skip=sync,write read_iolog={trace}"),
        ];
        let mut covered = std::collections::HashSet::new();
        for sample in KEY_SAMPLES
            .iter()
            .map(|s| s.to_string())
            .chain(replay_samples)
        {
            let sample = sample.as_str();
            let key = sample.split(['=', ' ']).next().unwrap();
            covered.insert(crate::keys::find_key(key).unwrap().name);
            let settings: Vec<&str> = sample.split(' ').collect();
            let file = crate::fio::parse_fio_str(
                &format!("[n]\nsize=2M\nruntime=5\n{}\n", settings.join("\n")),
                "t.fio",
                None,
            )
            .unwrap();
            // `--name` would start a second job on the command line, so it is only given once.
            let extra = if key == "name" {
                String::new()
            } else {
                settings.iter().map(|s| format!(" --{s}")).collect()
            };
            let from_flags = flags(&format!("--name=n --size=2M --runtime=5{extra}")).unwrap();
            assert_eq!(file, from_flags, "{sample}");
        }
        std::fs::remove_dir_all(&trace_dir).unwrap();
        // `wait_for` names an earlier job, which a one-job sample cannot have: its own test
        // below gives it one.
        covered.insert("wait_for");
        for key in crate::keys::KEYS {
            assert!(covered.contains(key.name), "no sample for key {}", key.name);
        }
    }

    /// `wait_for` in a file and as flags names the same earlier job.
    #[test]
    fn wait_for_names_an_earlier_job_in_files_and_flags() {
        let file =
            crate::fio::parse_fio_str("[w]\nsize=2M\n[n]\nsize=2M\nwait_for=w\n", "t.fio", None)
                .unwrap();
        let from_flags = flags("--name=w --size=2M --name=n --size=2M --wait_for=w").unwrap();
        assert_eq!(file, from_flags);
        assert_eq!(file.jobs[1].wait_for.as_deref(), Some("w"));
        assert_eq!(
            flags("--name=n --size=2M --wait_for=w").unwrap_err().to_string(),
            "--wait_for=w: no job named 'w' comes before this one (fio waits only for an earlier job)"
        );
    }

    /// fio's `read,write,trim` rate (exitwhat.fio's `rate=300,300,300`): the trim value is
    /// checked and left out, storlab running no trims.
    #[test]
    fn a_third_rate_value_is_the_trim_rate_and_has_no_effect() {
        let set = flags("--name=n --size=2M --rw=randrw --rate=300,200,100").unwrap();
        let job = &set.jobs[0];
        assert_eq!(
            (job.rate_bytes.read, job.rate_bytes.write),
            (Some(300), Some(200))
        );
        let set = flags("--name=n --size=2M --rw=randrw --rate_iops=,200,").unwrap();
        let job = &set.jobs[0];
        assert_eq!((job.rate_iops.read, job.rate_iops.write), (None, Some(200)));
    }
}
