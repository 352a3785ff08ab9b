//! The oracle's QEMU guest: Debian's installed kernel (/boot/vmlinuz-*, /lib/modules) booted
//! under TCG with an initramfs built here, at test time, into a temporary directory: busybox,
//! the `storlab` under test (stripped), sg3-utils with their shared libraries (as `ldd` names
//! them), the USB and SCSI modules in modules.dep order, and init.sh. Four USB disks on image
//! files: QEMU's `usb-storage` (BOT) and `usb-uas` on `qemu-xhci` (SuperSpeed) and on
//! `usb-ehci` (High-Speed). The guest writes its results as a tar archive onto a virtio disk.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Modules the guest loads (with their dependencies, from modules.dep): usbmon, both host
/// controllers, both storage drivers, the SCSI disk and generic drivers, and virtio-blk for the
/// results disk.
const MODULES: [&str; 9] = [
    "usbmon",
    "xhci-pci",
    "ehci-pci",
    "usb-storage",
    "uas",
    "sd_mod",
    "sg",
    "virtio_pci",
    "virtio_blk",
];
/// Programs copied into the guest beside busybox and storlab.
const SG3_UTILS: [&str; 3] = ["sg_inq", "sg_vpd", "sg_readcap"];
/// Each USB disk's image size: room for every job's region.
const DISK_IMAGE_BYTES: u64 = 64 << 20;
/// The results disk's size (a tar archive of pcaps, JSON and raw pages).
const RESULTS_IMAGE_BYTES: u64 = 64 << 20;
/// Each USB disk's I/O rate (QEMU's block throttling, beneath the emulated device): slower
/// than the guest submits under TCG, so a job that queues more than the driver allows keeps the
/// driver at its limit whatever the host's load (unthrottled, QEMU's device can finish
/// commands faster than the TCG guest issues them, and the most in flight varies by run).
const DEVICE_IOPS: u32 = 400;
/// The requests QEMU's throttle lets through at once before it holds the rate: without an
/// explicit `iops-total-max` the bucket is a tenth of the rate for one second (util/throttle.c
/// throttle_fix_bucket), so a job of fewer I/Os is not slowed at all.
pub const DEVICE_BURST_IOS: u64 = DEVICE_IOPS as u64 / 10;
/// Guest memory: the initramfs (about 30 MB) unpacked, plus the capture buffers.
const GUEST_MEMORY_MB: u32 = 768;
/// The guest's whole run, boot to power-off, must end within this (it takes about a minute
/// under TCG on one core).
const GUEST_TIMEOUT: Duration = Duration::from_secs(600);
/// The four USB disks: (QEMU controller id, storage device).
pub const DISKS: [(&str, &str); 4] = [
    ("xhci", "usb-storage"),
    ("xhci", "usb-uas"),
    ("ehci", "usb-storage"),
    ("ehci", "usb-uas"),
];

/// The installed kernel: its image and its modules directory.
pub struct Kernel {
    pub image: PathBuf,
    pub modules: PathBuf,
}

/// Why the guest cannot run on this machine (the test skips, or fails under CI).
pub fn missing_prerequisite() -> Option<String> {
    for tool in [
        "qemu-system-x86_64",
        "busybox",
        "cpio",
        "strip",
        "ldd",
        "tar",
    ]
    .iter()
    .chain(SG3_UTILS.iter())
    {
        if which(tool).is_none() {
            return Some(format!("{tool} is not installed"));
        }
    }
    if installed_kernel().is_none() {
        return Some("no /boot/vmlinuz-* with its /lib/modules directory".into());
    }
    None
}

/// The newest /boot/vmlinuz-VERSION that has /lib/modules/VERSION/modules.dep.
pub fn installed_kernel() -> Option<Kernel> {
    let mut versions: Vec<String> = std::fs::read_dir("/boot")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("vmlinuz-").map(str::to_owned)
        })
        .filter(|version| Path::new(&format!("/lib/modules/{version}/modules.dep")).exists())
        .collect();
    versions.sort();
    let version = versions.pop()?;
    Some(Kernel {
        image: PathBuf::from(format!("/boot/vmlinuz-{version}")),
        modules: PathBuf::from(format!("/lib/modules/{version}")),
    })
}

/// `name`'s path on PATH.
fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    })
}

/// The modules to load, dependencies first, as paths relative to the modules directory.
pub fn module_load_order(modules_dep: &str, wanted: &[&str]) -> Vec<String> {
    let deps: Vec<(String, Vec<String>)> = modules_dep
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(module, deps)| {
            let deps = deps.split_whitespace().map(str::to_owned).collect();
            (module.to_owned(), deps)
        })
        .collect();
    let short = |path: &str| {
        let file = path.rsplit('/').next().unwrap_or(path);
        file.trim_end_matches(".ko").replace('-', "_")
    };
    let mut order = Vec::new();
    fn visit(
        module: &str,
        deps: &[(String, Vec<String>)],
        order: &mut Vec<String>,
        trail: &mut Vec<String>,
    ) {
        if order.iter().any(|m| m == module) || trail.iter().any(|m| m == module) {
            return;
        }
        trail.push(module.to_owned());
        // modules.dep lists a module's dependencies nearest first; load the farthest first.
        if let Some((_, list)) = deps.iter().find(|(m, _)| m == module) {
            for dep in list.iter().rev() {
                visit(dep, deps, order, trail);
            }
        }
        trail.pop();
        order.push(module.to_owned());
    }
    for want in wanted {
        let want = want.replace('-', "_");
        let module = deps
            .iter()
            .find(|(m, _)| short(m) == want)
            .unwrap_or_else(|| panic!("modules.dep has no {want}"));
        visit(&module.0, &deps, &mut order, &mut Vec::new());
    }
    order
}

/// Builds the initramfs in `work` from the installed programs, modules and `jobs` (one line
/// each: a name and the storlab job flags); returns its path.
pub fn build_initramfs(work: &Path, kernel: &Kernel, jobs: &[super::jobs::Job]) -> PathBuf {
    let root = work.join("root");
    for dir in ["bin", "modules", "proc", "sys", "dev", "tmp"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    copy(&which("busybox").unwrap(), &root.join("bin/busybox"));
    let storlab = root.join("bin/storlab");
    run(Command::new("strip")
        .arg("-o")
        .arg(&storlab)
        .arg(env!("CARGO_BIN_EXE_storlab")));
    let mut programs = vec![storlab];
    // The device guard loads libblkid at run time (dlopen) to look for signatures before a
    // write; ldd cannot see that, so it is named here.
    let blkid = root.join("lib/libblkid.so.1");
    copy(&find_library("libblkid.so.1"), &blkid);
    programs.push(blkid);
    for tool in SG3_UTILS {
        let to = root.join("bin").join(tool);
        copy(&which(tool).unwrap(), &to);
        programs.push(to);
    }
    for library in shared_libraries(&programs) {
        copy(&library, &root.join(library.strip_prefix("/").unwrap()));
    }
    let modules_dep = std::fs::read_to_string(kernel.modules.join("modules.dep")).unwrap();
    let mut order = String::new();
    for module in module_load_order(&modules_dep, &MODULES) {
        let file = module.rsplit('/').next().unwrap().to_owned();
        copy(
            &kernel.modules.join(&module),
            &root.join("modules").join(&file),
        );
        order.push_str(&file);
        order.push('\n');
    }
    std::fs::write(root.join("modules/order"), order).unwrap();
    let init = root.join("init");
    std::fs::write(&init, include_str!("init.sh")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&init, std::fs::Permissions::from_mode(0o755)).unwrap();
    let job_lines: String = jobs.iter().map(|(n, f)| format!("{n} {f}\n")).collect();
    std::fs::write(root.join("jobs"), job_lines).unwrap();
    std::fs::write(root.join("expected_disks"), format!("{}\n", DISKS.len())).unwrap();
    let image = work.join("initramfs.cpio");
    let listing = run(Command::new("find").arg(".").current_dir(&root));
    let archive = std::process::Command::new("cpio")
        .args(["-o", "-H", "newc", "--quiet"])
        .current_dir(&root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::fs::File::create(&image).unwrap())
        .spawn()
        .unwrap();
    use std::io::Write;
    let mut archive = archive;
    archive
        .stdin
        .take()
        .unwrap()
        .write_all(listing.as_bytes())
        .unwrap();
    assert!(archive.wait().unwrap().success(), "cpio failed");
    image
}

/// `name`'s path as the dynamic loader's cache lists it.
fn find_library(name: &str) -> PathBuf {
    let cache = run(Command::new("ldconfig").arg("-p"));
    cache
        .lines()
        .filter(|line| line.trim_start().starts_with(name) && line.contains("x86-64"))
        .find_map(|line| line.rsplit(" => ").next().map(PathBuf::from))
        .unwrap_or_else(|| panic!("ldconfig -p lists no {name}"))
}

/// The shared libraries (and the loader) `programs` need, as `ldd` lists them.
fn shared_libraries(programs: &[PathBuf]) -> BTreeSet<PathBuf> {
    let mut libraries = BTreeSet::new();
    for program in programs {
        let listing = run(Command::new("ldd").arg(program));
        for word in listing.split_whitespace() {
            if word.starts_with('/') && word.contains(".so") {
                libraries.insert(PathBuf::from(word));
            }
        }
    }
    libraries
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
}

/// Runs `command` to success; its stdout.
fn run(command: &mut Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What a guest run left: its results directory, and the serial console's log.
pub struct GuestRun {
    pub results: PathBuf,
    pub console: String,
    pub elapsed: Duration,
}

/// Boots the guest (TCG, one vCPU) on fresh disk images in `work` and unpacks its results.
/// Err with the console log when QEMU does not start or the guest writes no results.
pub fn boot(work: &Path, kernel: &Kernel, initramfs: &Path) -> Result<GuestRun, String> {
    let results_image = work.join("results.img");
    sized_file(&results_image, RESULTS_IMAGE_BYTES);
    let mut qemu = Command::new("qemu-system-x86_64");
    qemu.args([
        "-accel",
        "tcg",
        "-smp",
        "1",
        "-nographic",
        "-no-reboot",
        "-net",
        "none",
    ])
    .args(["-m", &GUEST_MEMORY_MB.to_string()])
    .arg("-kernel")
    .arg(&kernel.image)
    .arg("-initrd")
    .arg(initramfs)
    .args(["-append", "console=ttyS0 quiet panic=-1"])
    .args([
        "-device",
        "qemu-xhci,id=xhci",
        "-device",
        "usb-ehci,id=ehci",
    ]);
    for (index, (controller, device)) in DISKS.iter().enumerate() {
        let image = work.join(format!("disk{index}.img"));
        sized_file(&image, DISK_IMAGE_BYTES);
        let drive = format!(
            "if=none,id=disk{index},format=raw,file={},throttling.iops-total={DEVICE_IOPS}",
            image.display()
        );
        qemu.arg("-drive").arg(drive);
        if *device == "usb-uas" {
            qemu.arg("-device")
                .arg(format!("usb-uas,id=uas{index},bus={controller}.0"))
                .arg("-device")
                .arg(format!(
                    "scsi-hd,bus=uas{index}.0,scsi-id=0,lun=0,drive=disk{index}"
                ));
        } else {
            qemu.arg("-device")
                .arg(format!("usb-storage,bus={controller}.0,drive=disk{index}"));
        }
    }
    qemu.arg("-drive").arg(format!(
        "if=virtio,format=raw,file={}",
        results_image.display()
    ));
    let started = Instant::now();
    let console = run_with_timeout(&mut qemu, GUEST_TIMEOUT)?;
    let elapsed = started.elapsed();
    let results = work.join("results");
    std::fs::create_dir_all(&results).unwrap();
    let unpacked = Command::new("tar")
        .arg("-xf")
        .arg(&results_image)
        .arg("-C")
        .arg(&results)
        .output()
        .map_err(|e| e.to_string())?;
    if !unpacked.status.success() || !console.contains("oracle: done") {
        return Err(format!(
            "the guest wrote no results (tar: {}); console:\n{console}",
            String::from_utf8_lossy(&unpacked.stderr).trim()
        ));
    }
    Ok(GuestRun {
        results,
        console,
        elapsed,
    })
}

fn sized_file(path: &Path, bytes: u64) {
    std::fs::File::create(path).unwrap().set_len(bytes).unwrap();
}

/// Runs `command` with stdout and stderr to one log; kills it after `timeout`.
fn run_with_timeout(command: &mut Command, timeout: Duration) -> Result<String, String> {
    let log = tempfile::tempfile().unwrap();
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log.try_clone().unwrap())
        .spawn()
        .map_err(|e| format!("qemu-system-x86_64 does not start: {e}"))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    use std::io::{Read, Seek};
    let mut log = log;
    log.rewind().unwrap();
    let mut bytes = Vec::new();
    log.read_to_end(&mut bytes).ok();
    let console = String::from_utf8_lossy(&bytes).into_owned();
    match status {
        None => Err(format!(
            "the guest did not finish in {timeout:?}; console:\n{console}"
        )),
        Some(status) if !status.success() => Err(format!(
            "qemu-system-x86_64 exited with {status}; console:\n{console}"
        )),
        Some(_) => Ok(console),
    }
}
