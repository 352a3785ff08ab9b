//! Every path a job writes, and every route to a job's target, refused where writing would
//! destroy something, derived from the key table: each key whose `path` says it names a written
//! file (`storlab_job::paths::KeyPath`) is tried on each kind of file it must never write (a
//! FIFO, a character device, a block device carrying ext4, a symbolic link, a dangling one, a
//! directory, the results database, the job file, the job's target, another output), and each
//! key that leads to the target on the database, its journals and the job file, and on a device
//! carrying ext4. Each must end with exit 2, one line naming the key, before any job ran, the
//! victim untouched. A new writing key is in these loops the moment its row says so. Loop
//! devices are set up here (root and losetup; skipped with a message otherwise, failed under
//! CI).

use crate::common::{stderr, LoopDevice};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use storlab_job::keys::{KeyDef, KEYS};
use storlab_job::paths::KeyPath;

const SIM: &str = "--target=sim:usb3-uas-ssd";
/// The job every case runs: a writing verify job (so `verify_state_save` writes its file).
const JOB_FLAGS: [&str; 5] = [
    "--name=j",
    "--rw=write",
    "--bs=4k",
    "--size=64k",
    "--verify=crc32c",
];
/// The same job as a fio job file.
const JOB_FILE_TEXT: &str = "[j]\nrw=write\nbs=4k\nsize=64k\nverify=crc32c\n";
/// Long enough for any refusal; a run blocked on a FIFO takes forever.
const DEADLINE: Duration = Duration::from_secs(60);
const LOOP_BACKING_BYTES: u64 = 32 << 20;

/// `storlab ARGS` in `dir`, killed (and the test failed) if it outlives [`DEADLINE`]: a FIFO
/// must never block it.
fn storlab_in(dir: &Path, args: &[String]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .current_dir(dir)
        .env("STORLAB_DB", dir.join("default.sqlite"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("storlab runs");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("storlab {args:?} blocked for {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// What a file is, to compare before and after: its kind, and the content and mtime of what a
/// regular file or a link's end holds; a device's first 64 KiB (ext4's superblock is at 1 KiB).
fn snapshot(path: &Path) -> String {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return "missing".into();
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        let to = std::fs::read_link(path).unwrap();
        let end = path.parent().unwrap().join(&to);
        return format!("link to {} ({})", to.display(), snapshot(&end));
    }
    if kind.is_fifo() {
        return "fifo".into();
    }
    if kind.is_dir() {
        let mut entries: Vec<String> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| snapshot(&e.unwrap().path()))
            .collect();
        entries.sort();
        return format!("directory {entries:?}");
    }
    if kind.is_char_device() || kind.is_block_device() {
        let mut head = vec![0u8; 64 << 10];
        if kind.is_block_device() {
            use std::os::unix::fs::FileExt;
            let device = std::fs::File::open(path).unwrap();
            device.read_exact_at(&mut head, 0).unwrap();
        }
        let digest: u64 = head.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
        });
        return format!("device {:x} head {digest:x}", meta.rdev());
    }
    format!(
        "file {:?} mtime {}.{}",
        std::fs::read(path).unwrap(),
        meta.mtime(),
        meta.mtime_nsec()
    )
}

/// Bad input before any job ran: exit 2, one line on stderr naming `needle`.
fn assert_refused_before_running(out: &Output, what: &str, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what} must say one line: {err}");
    assert!(err.starts_with("storlab: error: "), "{what}: {err}");
    assert!(err.contains(needle), "{what}: '{err}' should name {needle}");
    assert!(
        !err.contains("[1/"),
        "{what}: refused only after a job ran: {err}"
    );
}

/// The flag that sets `key` for the cases, and the file it then makes the job write, relative
/// to the run's directory (read from the job crate, as the front end's check reads it).
fn writing_flag(key: &KeyDef) -> Option<(String, PathBuf)> {
    let flag = match key.path {
        KeyPath::Written | KeyPath::WrittenPrefix => format!("--{}=out", key.name),
        KeyPath::WrittenAfterJob => format!("--{}=1", key.name),
        _ => return None,
    };
    let flags: Vec<String> = JOB_FLAGS
        .iter()
        .map(|f| f.to_string())
        .chain([flag.clone(), "--filename=sim:usb3-uas-ssd".into()])
        .collect();
    let set = storlab_job::parse_flags(&flags, None).unwrap();
    let written = set.written_paths();
    let (_, path) = written
        .iter()
        .find(|(k, _)| *k == key.name)
        .unwrap_or_else(|| panic!("{} writes no file: {written:?}", key.name));
    Some((flag, path.clone()))
}

fn writing_keys() -> Vec<(&'static str, String, PathBuf)> {
    let keys: Vec<_> = KEYS
        .iter()
        .filter_map(|key| writing_flag(key).map(|(flag, path)| (key.name, flag, path)))
        .collect();
    assert!(
        keys.len() >= 6,
        "the key table marks too few writing keys: {keys:?}"
    );
    keys
}

/// A kind of file a job's written file must never be, set up at `victim` in `dir`; returns the
/// extra arguments that make it what it is for the run (`--db`, a job file, a `--target`...),
/// or the job file to run instead of flags.
#[derive(Clone, Copy, Debug)]
enum Victim {
    Fifo,
    CharDevice,
    ExtBlockDevice,
    Symlink,
    DanglingSymlink,
    Database,
    JobFile,
    Target,
    AnotherOutput,
    Directory,
}

const VICTIMS: [Victim; 10] = [
    Victim::Fifo,
    Victim::CharDevice,
    Victim::ExtBlockDevice,
    Victim::Symlink,
    Victim::DanglingSymlink,
    Victim::Database,
    Victim::JobFile,
    Victim::Target,
    Victim::AnotherOutput,
    Victim::Directory,
];

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Root, losetup and mkfs.ext4, or a skip message (a failure under CI).
fn loop_devices_available() -> bool {
    let ok = is_root()
        && Command::new("losetup").arg("--version").output().is_ok()
        && Command::new("mkfs.ext4").arg("-V").output().is_ok();
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the device cases (root, losetup, mkfs.ext4)"
        );
        eprintln!("skipped the device cases: needs root, losetup and mkfs.ext4");
    }
    ok
}

/// A loop device carrying ext4, detached on drop.
fn ext4_loop_device() -> LoopDevice {
    let device = LoopDevice::attach(LOOP_BACKING_BYTES);
    let made = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&device.path)
        .output()
        .unwrap();
    assert!(made.status.success(), "mkfs.ext4: {}", stderr(&made));
    device
}

/// Makes `victim` at `path` (in `dir`); the arguments that run the job with it, before the key's
/// flag (`None`: the case needs what this machine lacks).
fn set_up(
    victim: Victim,
    dir: &Path,
    path: &Path,
    device: Option<&LoopDevice>,
) -> Option<Vec<String>> {
    use nix::sys::stat::{makedev, mknod, Mode, SFlag};
    let mut args: Vec<String> = vec!["run".into()];
    let db = format!("--db={}", dir.join("r.sqlite").display());
    match victim {
        Victim::Fifo => nix::unistd::mkfifo(path, Mode::S_IRUSR | Mode::S_IWUSR).unwrap(),
        Victim::CharDevice | Victim::ExtBlockDevice if !is_root() => return None,
        // /dev/null's numbers (Linux devices.txt: char 1:3), made inside the test's directory.
        Victim::CharDevice => mknod(
            path,
            SFlag::S_IFCHR,
            Mode::from_bits_truncate(0o666),
            makedev(1, 3),
        )
        .unwrap(),
        Victim::ExtBlockDevice => {
            let rdev = std::fs::metadata(&device?.path).unwrap().rdev();
            mknod(path, SFlag::S_IFBLK, Mode::from_bits_truncate(0o600), rdev).unwrap();
        }
        Victim::Symlink => {
            std::fs::write(dir.join("kept"), "kept").unwrap();
            std::os::unix::fs::symlink("kept", path).unwrap();
        }
        Victim::DanglingSymlink => std::os::unix::fs::symlink("nowhere", path).unwrap(),
        Victim::Database => {
            let made = storlab_in(
                dir,
                &[
                    "run".into(),
                    "--ioengine=null".into(),
                    "--size=1m".into(),
                    "--name=x".into(),
                    format!("--db={}", path.display()),
                ],
            );
            assert!(made.status.success(), "{}", stderr(&made));
            args.push(format!("--db={}", path.display()));
            args.extend(JOB_FLAGS.iter().map(|f| f.to_string()));
            args.push(SIM.into());
            return Some(args);
        }
        Victim::JobFile => {
            std::fs::write(path, JOB_FILE_TEXT).unwrap();
            args.extend([path.display().to_string(), SIM.into(), db]);
            return Some(args);
        }
        Victim::Target => {
            std::fs::write(path, vec![7u8; 64 << 10]).unwrap();
            args.extend(JOB_FLAGS.iter().map(|f| f.to_string()));
            args.extend([format!("--target={}", path.display()), db]);
            return Some(args);
        }
        Victim::Directory => {
            std::fs::create_dir(path).unwrap();
            std::fs::write(path.join("kept"), "kept").unwrap();
        }
        Victim::AnotherOutput => {
            std::fs::write(path, "kept").unwrap();
            args.push(format!("--output={}", path.display()));
        }
    }
    args.extend(JOB_FLAGS.iter().map(|f| f.to_string()));
    args.extend([SIM.into(), db]);
    Some(args)
}

/// Every writing key of the key table × every kind of file it must not write. The code before
/// this test wrote `write_iolog` into each (it blocked on the FIFO until the deadline killed
/// it; as root, `write_iolog=/dev/sda` would replace the partition table) and renamed
/// `verify_state_save`'s file over each.
#[test]
fn every_writing_key_refuses_every_file_it_must_not_write() {
    let device = loop_devices_available().then(ext4_loop_device);
    for (key, flag, written) in writing_keys() {
        for victim in VICTIMS {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(&written);
            let Some(mut args) = set_up(victim, dir.path(), &path, device.as_ref()) else {
                eprintln!("skipped {key} on {victim:?}: needs root");
                continue;
            };
            args.push(flag.clone());
            let before = snapshot(&path);
            let out = storlab_in(dir.path(), &args);
            let case = format!("{key} on {victim:?} ({args:?})");
            assert_refused_before_running(&out, &case, key);
            assert_eq!(snapshot(&path), before, "{case}: the victim changed");
            if matches!(victim, Victim::DanglingSymlink) {
                assert!(
                    !dir.path().join("nowhere").exists(),
                    "{case}: created through the link"
                );
            }
            let partial: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.contains("storlab-partial"))
                .collect();
            assert!(partial.is_empty(), "{case}: left {partial:?}");
        }
    }
}

/// The reproduction: `write_iolog` naming a block device that carries ext4, on a run
/// against a simulated drive without `--destructive`, wiped the signature with exit 0. And each
/// of the database's journals (SQLite's `-journal`, `-wal`, `-shm`, there or not yet) as a
/// `write_iolog`, `--output`, `--report` or `--pcap`.
#[test]
fn write_iolog_never_writes_a_device_or_the_database_journal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let mut args: Vec<String> = vec!["run".into(), SIM.into(), format!("--db={}", db.display())];
    args.extend(JOB_FLAGS.iter().map(|f| f.to_string()));
    for suffix in ["-journal", "-wal", "-shm"] {
        let journal = dir.path().join(format!("r.sqlite{suffix}"));
        for exists in [true, false] {
            if exists {
                std::fs::write(&journal, "journal").unwrap();
            }
            for option in ["--write_iolog", "--output", "--report", "--pcap"] {
                let mut with_log = args.clone();
                with_log.push(format!("{option}={}", journal.display()));
                let before = snapshot(&journal);
                let out = storlab_in(dir.path(), &with_log);
                let case = format!("{option} on the {suffix} (there: {exists})");
                assert_refused_before_running(&out, &case, "journal");
                assert_eq!(snapshot(&journal), before, "{case}");
            }
            let _ = std::fs::remove_file(&journal);
        }
    }
    if !loop_devices_available() {
        return;
    }
    let device = ext4_loop_device();
    let before = snapshot(&device.path);
    args.push(format!("--write_iolog={}", device.path.display()));
    let out = storlab_in(dir.path(), &args);
    assert_refused_before_running(&out, "write_iolog on a loop device", "write_iolog");
    assert_eq!(snapshot(&device.path), before, "the device was written");
    let blkid = Command::new("blkid")
        .args(["-o", "value", "-s", "TYPE"])
        .arg(&device.path)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&blkid.stdout).trim(), "ext4");
}

/// The job options (one per line, `key=value`) that lead a writing job's target to `victim`
/// through `key`, with the trace they need written in `dir`.
fn route_to(key: &str, victim: &Path, dir: &Path) -> Vec<String> {
    let name = victim.file_name().unwrap().to_string_lossy().into_owned();
    let trace = |naming: &Path| {
        let file = naming.display();
        let text = format!(
            "fio version 2 iolog\n{file} add\n{file} open\n{file} write 0 4096\n{file} close\n"
        );
        let trace = dir.join("trace.log");
        std::fs::write(&trace, text).unwrap();
        format!("read_iolog={}", trace.display())
    };
    match key {
        "filename" => vec![format!("filename={}", victim.display())],
        "directory" => vec![
            format!("directory={}", victim.parent().unwrap().display()),
            format!("filename={name}"),
        ],
        "filename_format" => vec![
            format!("directory={}", victim.parent().unwrap().display()),
            format!("filename_format={name}"),
        ],
        "read_iolog" => vec![trace(victim)],
        "replay_redirect" => vec![
            trace(&dir.join("elsewhere")),
            format!("replay_redirect={}", victim.display()),
        ],
        "unlink" => vec![
            format!("filename={}", victim.display()),
            "rw=read".into(),
            "unlink=1".into(),
        ],
        other => panic!("no route through {other}: say how this key reaches the target here"),
    }
}

/// Every key that leads to the job's target (its row's `path` says so), with a writing job (or
/// `unlink`), on the results database, each of its journals and the job file: refused before any I/O.
/// Today's code wrote (or deleted) each and then said the database "was left untouched".
#[test]
fn no_route_makes_the_database_or_the_job_file_a_written_target() {
    let route_keys: Vec<&str> = KEYS
        .iter()
        .filter(|k| matches!(k.path, KeyPath::Target | KeyPath::DeletesTarget))
        .map(|k| k.name)
        .collect();
    assert!(route_keys.len() >= 6, "{route_keys:?}");
    for key in route_keys {
        // The `-wal` is there, the `-shm` and `-journal` not (yet): writing one, or creating it.
        for victim in [
            "r.sqlite",
            "r.sqlite-wal",
            "r.sqlite-shm",
            "r.sqlite-journal",
            "job.fio",
        ] {
            let dir = tempfile::tempdir().unwrap();
            let db = dir.path().join("r.sqlite");
            let made = storlab_in(
                dir.path(),
                &["run", "--ioengine=null", "--size=1m", "--name=x"]
                    .iter()
                    .map(|s| s.to_string())
                    .chain([format!("--db={}", db.display())])
                    .collect::<Vec<_>>(),
            );
            assert!(made.status.success(), "{}", stderr(&made));
            std::fs::write(dir.path().join("r.sqlite-wal"), "wal").unwrap();
            let victim_path = dir.path().join(victim);
            let job_file = dir.path().join("job.fio");
            let mut text = String::from("[j]\nrw=write\nbs=4k\nsize=64k\n");
            for line in route_to(key, &victim_path, dir.path()) {
                text.push_str(&line);
                text.push('\n');
            }
            std::fs::write(&job_file, &text).unwrap();
            let before = (snapshot(&db), snapshot(&victim_path));
            let args = vec![
                "run".to_string(),
                job_file.display().to_string(),
                format!("--db={}", db.display()),
            ];
            let out = storlab_in(dir.path(), &args);
            let case = format!("{key} to {victim}:\n{text}");
            assert_refused_before_running(&out, &case, victim);
            assert_eq!((snapshot(&db), snapshot(&victim_path)), before, "{case}");
        }
    }
    // And `--target`, the route that is not a key.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let mut args: Vec<String> = vec![
        "run".into(),
        "--ioengine=null".into(),
        "--size=1m".into(),
        "--name=x".into(),
        format!("--db={}", db.display()),
    ];
    assert!(storlab_in(dir.path(), &args).status.success());
    let before = snapshot(&db);
    args.truncate(1);
    args.extend(JOB_FLAGS[..4].iter().map(|f| f.to_string()));
    args.extend([
        format!("--target={}", db.display()),
        format!("--db={}", db.display()),
    ]);
    let out = storlab_in(dir.path(), &args);
    assert_refused_before_running(&out, "--target on the database", "--target");
    assert_eq!(snapshot(&db), before);
}

/// `unlink=1` on the null engine deletes the file the job names (fio does, though its engine
/// never opens it): a name that is the job file or the database is refused before any job runs,
/// whether given (`filename`) or fio's default `NAME.SUBJOB.0`; any other regular file goes.
#[test]
fn null_unlink_deletes_only_what_it_may() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let run = |job_file: &Path| {
        let args = vec![
            "run".to_string(),
            job_file.display().to_string(),
            format!("--db={}", db.display()),
        ];
        storlab_in(dir.path(), &args)
    };
    // The job file under fio's default name for the job's first clone.
    let job_file = dir.path().join("j.0.0");
    std::fs::write(&job_file, "[j]\nioengine=null\nsize=64k\nunlink=1\n").unwrap();
    let before = snapshot(&job_file);
    assert_refused_before_running(&run(&job_file), "null unlink of its job file", "unlink=1");
    assert_eq!(snapshot(&job_file), before);
    // Another regular file named: deleted at the job's end, as fio deletes it.
    let victim = dir.path().join("scratch");
    std::fs::write(&victim, "x").unwrap();
    let job_file = dir.path().join("job.fio");
    let text = format!(
        "[j]\nioengine=null\nsize=64k\nunlink=1\nfilename={}\n",
        victim.display()
    );
    std::fs::write(&job_file, text).unwrap();
    let out = run(&job_file);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(snapshot(&victim), "missing");
}

/// The device guard on every route to a target: a block device carrying ext4 reached through
/// each target key (and `--target`) is refused, one line, exit 2, its signature intact.
#[test]
fn every_route_to_a_device_meets_the_device_guard() {
    if !loop_devices_available() {
        return;
    }
    let device = ext4_loop_device();
    let before = snapshot(&device.path);
    let route_keys = KEYS
        .iter()
        .filter(|k| matches!(k.path, KeyPath::Target | KeyPath::DeletesTarget));
    for key in route_keys {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec![
            "run".to_string(),
            "--ioengine=psync".into(),
            "--no-db".into(),
        ];
        args.extend(["--name=j", "--rw=write", "--bs=4k", "--size=64k"].map(String::from));
        // A read that deletes its file afterwards harms no device (unlink never deletes one):
        // the device case of `unlink` is the writing job's.
        for line in route_to(key.name, &device.path, dir.path()) {
            if !line.starts_with("rw=") {
                args.push(format!("--{line}"));
            }
        }
        let out = storlab_in(dir.path(), &args);
        let case = format!("{} ({args:?})", key.name);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{case}: {err}");
        assert_eq!(err.lines().count(), 1, "{case}: {err}");
        assert!(err.contains("--destructive"), "{case}: {err}");
        assert_eq!(
            snapshot(&device.path),
            before,
            "{case}: the device was written"
        );
    }
}

/// A database that something else wrote over while the run ran: the first save finds it
/// unusable and says so, not that it "was left untouched" (today's message, also when the run's
/// own `write_iolog` had truncated it).
#[test]
fn a_database_changed_during_the_run_is_not_said_to_be_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let child = Command::new(env!("CARGO_BIN_EXE_storlab"))
        .current_dir(dir.path())
        .args(["run", "--ioengine=null", "--name=j", "--size=1m"])
        .args(["--time_based", "--runtime=2s"])
        .arg(format!("--db={}", db.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    std::fs::write(&db, "not a database").unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("changed during the run"), "{err}");
    assert!(!err.contains("left untouched"), "{err}");
    assert_eq!(std::fs::read_to_string(&db).unwrap(), "not a database");
}

/// Two writers of one file in one command: the second would replace the first (today's code
/// wrote both, the last one winning), so the command is refused before any job runs.
#[test]
fn two_keys_or_two_jobs_never_write_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let job_file = dir.path().join("two.fio");
    std::fs::write(
        &job_file,
        "[a]\nrw=write\nsize=64k\nwrite_iolog=same\n[b]\nrw=write\nsize=64k\nwrite_iolog=same\n",
    )
    .unwrap();
    let two_jobs = [job_file.display().to_string(), SIM.into(), "--no-db".into()];
    let mut args = vec!["run".to_string()];
    args.extend(two_jobs);
    let out = storlab_in(dir.path(), &args);
    assert_refused_before_running(&out, "two jobs' write_iolog", "is also write_iolog");
    let mut args: Vec<String> = vec!["run".into(), SIM.into(), "--no-db".into()];
    args.extend(JOB_FLAGS.iter().map(|f| f.to_string()));
    args.extend([
        "--write_bw_log=out".into(),
        "--write_iolog=out_bw.1.log".into(),
    ]);
    let out = storlab_in(dir.path(), &args);
    assert_refused_before_running(&out, "write_iolog on a log's name", "write_iolog");
    assert!(!dir.path().join("same").exists() && !dir.path().join("out_bw.1.log").exists());
}

/// `--output` and `--report` naming the target a job file's `filename` gives (not `--target`):
/// refused before the run. The code before this test checked them against a job's target only
/// when some job also wrote a log, and replaced the target with the output.
#[test]
fn an_output_never_replaces_a_target_named_in_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.bin");
    std::fs::write(&data, vec![5u8; 4096]).unwrap();
    for option in ["--output", "--report"] {
        let args: Vec<String> = [
            "run",
            "--name=j",
            "--rw=read",
            "--size=4k",
            "--filename=data.bin",
            "--no-db",
            option,
            "data.bin",
        ]
        .map(String::from)
        .to_vec();
        let before = snapshot(&data);
        let out = storlab_in(dir.path(), &args);
        assert_refused_before_running(&out, option, option);
        assert_eq!(snapshot(&data), before, "{option} replaced the target");
    }
}

/// `verify_dump`'s files, named only when verify fails, meet the same guard when written: a
/// dump name that is a symbolic link is not written through (the code before wrote the block
/// into the link's target), and the failure still names the block.
#[test]
fn verify_dump_never_writes_through_a_link() {
    const BLOCK_BYTES: usize = 4096;
    let dir = tempfile::tempdir().unwrap();
    let job: Vec<String> = [
        "run",
        "--name=j",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--verify=crc32c",
        "--verify_state_save=0",
        "--ioengine=psync",
        "--filename=data",
        "--no-db",
    ]
    .map(String::from)
    .to_vec();
    let written = storlab_in(dir.path(), &job);
    assert!(written.status.success(), "{}", stderr(&written));
    let mut data = std::fs::read(dir.path().join("data")).unwrap();
    let bad_block = 5 * BLOCK_BYTES;
    data[bad_block + 1000] ^= 0x10;
    std::fs::write(dir.path().join("data"), &data).unwrap();
    std::fs::write(dir.path().join("kept"), "kept").unwrap();
    let dump = dir.path().join(format!("data.{bad_block}.received"));
    std::os::unix::fs::symlink("kept", &dump).unwrap();
    let before = snapshot(&dump);
    let mut check = job.clone();
    check.extend(["--verify_only=1".into(), "--verify_dump=1".into()]);
    let out = storlab_in(dir.path(), &check);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("verify failed"), "{err}");
    assert!(err.contains("is a symbolic link"), "{err}");
    assert_eq!(snapshot(&dump), before, "the dump went through the link");
}

/// `validate --output` naming the results database (validate saves nothing there, but the
/// database is the user's): refused before anything runs. The code before replaced it.
#[test]
fn validate_never_writes_its_output_over_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("default.sqlite");
    std::fs::write(&db, "the user's runs").unwrap();
    let reference = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../validation/calibration.toml"
    );
    let args: Vec<String> = [
        "validate",
        reference,
        "--filter=nothing-matches",
        "--output",
    ]
    .map(String::from)
    .into_iter()
    .chain([db.display().to_string()])
    .collect();
    let before = snapshot(&db);
    let out = storlab_in(dir.path(), &args);
    assert_refused_before_running(&out, "validate --output", "results database");
    assert_eq!(snapshot(&db), before);
}

/// A job that only reads, with a size past the end of the results database or the job file
/// (through `--target` and through `filename=`): opening it would lay the file out to that
/// size, as fio extends a short file before reading it, so it is refused before any I/O like a
/// writing job. The code before this test grew the database to 1 MiB of job data (and the job
/// file, which then no longer parsed) and exited 0.
#[test]
fn a_reading_job_never_lays_out_the_database_or_the_job_file() {
    let read_past_the_end = ["--name=j", "--rw=read", "--bs=4k", "--size=1m"].map(String::from);
    for route in ["--target", "filename"] {
        for victim in ["r.sqlite", "job.fio"] {
            let dir = tempfile::tempdir().unwrap();
            let db = dir.path().join("r.sqlite");
            let made = storlab_in(
                dir.path(),
                &["run", "--ioengine=null", "--size=1m", "--name=x"]
                    .map(String::from)
                    .into_iter()
                    .chain([format!("--db={}", db.display())])
                    .collect::<Vec<_>>(),
            );
            assert!(made.status.success(), "{}", stderr(&made));
            let victim_path = dir.path().join(victim);
            let job_file = dir.path().join("job.fio");
            let mut text = String::from("[j]\nrw=read\nbs=4k\nsize=1m\n");
            if route == "filename" {
                text.push_str(&format!("filename={}\n", victim_path.display()));
            }
            std::fs::write(&job_file, &text).unwrap();
            let mut args = vec!["run".to_string(), format!("--db={}", db.display())];
            if route == "--target" {
                args.push(format!("--target={}", victim_path.display()));
            }
            if victim == "job.fio" || route == "filename" {
                args.push(job_file.display().to_string());
            } else {
                args.extend(read_past_the_end.iter().cloned());
            }
            let before = (snapshot(&db), snapshot(&job_file));
            let out = storlab_in(dir.path(), &args);
            let case = format!("{route} on {victim} ({args:?})");
            assert_refused_before_running(&out, &case, victim);
            assert!(stderr(&out).contains("laying it out"), "{case}");
            assert_eq!((snapshot(&db), snapshot(&job_file)), before, "{case}");
        }
    }
}

/// An output naming an input the command reads: the `read_iolog` trace (through `--output`,
/// `--report` or `write_iolog`) and `validate`'s reference file. Read first and replaced at the
/// end, the input was lost (the code before this test replaced each, exit 0); refused before
/// anything runs, byte for byte as it was.
#[test]
fn an_output_never_replaces_an_input_the_command_reads() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), vec![0u8; 64 << 10]).unwrap();
    let trace = dir.path().join("trace.log");
    std::fs::write(
        &trace,
        "fio version 2 iolog\ndata add\ndata open\ndata read 0 4096\ndata close\n",
    )
    .unwrap();
    for option in ["--output", "--report", "--write_iolog"] {
        let args: Vec<String> = [
            "run",
            "--no-db",
            "--name=j",
            "--ioengine=psync",
            "--read_iolog=trace.log",
        ]
        .map(String::from)
        .into_iter()
        .chain([format!("{option}=trace.log")])
        .collect();
        let before = snapshot(&trace);
        let out = storlab_in(dir.path(), &args);
        let case = format!("{option} on the read_iolog trace");
        assert_refused_before_running(&out, &case, "read_iolog trace");
        assert_eq!(snapshot(&trace), before, "{case}");
    }
    let reference = dir.path().join("reference.toml");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../validation/calibration.toml"
        ),
        &reference,
    )
    .unwrap();
    let before = snapshot(&reference);
    let args: Vec<String> = ["validate", "reference.toml", "--check", "--output"]
        .map(String::from)
        .into_iter()
        .chain([reference.display().to_string()])
        .collect();
    let out = storlab_in(dir.path(), &args);
    assert_refused_before_running(&out, "validate --output on its reference", "reference file");
    assert_eq!(snapshot(&reference), before);
    // A `--profiles` file is read as the job file is: no output replaces it.
    let stacks = dir.path().join("profiles/stacks");
    std::fs::create_dir_all(&stacks).unwrap();
    let profile = stacks.join("usb3-uas-ssd.toml");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../profiles/stacks/usb3-uas-ssd.toml"
        ),
        &profile,
    )
    .unwrap();
    for option in ["--output", "--report", "--write_iolog"] {
        let before = snapshot(&profile);
        let args: Vec<String> = [
            "run",
            "--no-db",
            "--profiles=profiles",
            "--target=sim:usb3-uas-ssd",
            "--rw=read",
            "--size=1m",
        ]
        .map(String::from)
        .into_iter()
        .chain([format!("{option}=profiles/stacks/usb3-uas-ssd.toml")])
        .collect();
        let out = storlab_in(dir.path(), &args);
        let case = format!("{option} on a --profiles file");
        assert_refused_before_running(&out, &case, "--profiles file");
        assert_eq!(snapshot(&profile), before, "{case}");
    }
}
