//! The `sim` engine: I/O against a simulated USB/SATA stack in virtual time. `reap` runs the
//! simulator's event loop until enough requests complete, `wait_until_ns` lets virtual time
//! pass, and the slot buffers are the simulator's own, so payload moves without extra copies.
//! `flush` sends the drive a cache flush (SYNCHRONIZE CACHE / FLUSH CACHE EXT) on a slot of
//! its own; with synchronous writes (fio's `sync=1`) each write's completion waits for a flush
//! sent on the write's slot once the write completed, as Linux makes an `O_SYNC` write stable
//! on a drive without FUA (`generic_write_sync` → `blkdev_issue_flush`).
//!
//! Profiles: the shipped ones are embedded in the binary; a profiles directory (by default the
//! workspace's `profiles/`, see [`default_profiles_dir`]) can add or override stacks and parts.

use super::reap_too_many;
use crate::{
    Capabilities, EngineError, EngineReport, EngineSetup, FlushKind, IoCompletion, IoDirection,
    IoEngine, IoRequest,
};
use std::path::{Path, PathBuf};
use storlab_sim::{Op, ProfileSet, SimError, SimRequest, Simulator};

/// Name of the profiles directory searched next to the binary's workspace.
const PROFILES_DIR_NAME: &str = "profiles";
/// How many directories above the executable to look for `profiles/` (target/release/x → 3).
const PROFILES_SEARCH_DEPTH: usize = 5;

/// `profiles/` next to the workspace the running binary was built in, if there is one
/// (found by walking up from the executable), else `./profiles` if it exists.
pub fn default_profiles_dir() -> Option<PathBuf> {
    let from_exe = std::env::current_exe().ok().and_then(|exe| {
        exe.ancestors()
            .skip(1)
            .take(PROFILES_SEARCH_DEPTH)
            .map(|dir| dir.join(PROFILES_DIR_NAME))
            .find(|dir| dir.join("stacks").is_dir())
    });
    from_exe.or_else(|| {
        let cwd = PathBuf::from(PROFILES_DIR_NAME);
        cwd.join("stacks").is_dir().then_some(cwd)
    })
}

/// The shipped profiles plus every `<category>/<name>.toml` under `dir` (which may override
/// them). Files may sit in subfolders of a category: `stacks/lucidport/x25e-uas-gen2.toml` is
/// the stack `lucidport/x25e-uas-gen2`. A missing directory is not an error; an unreadable
/// file is. The reading is here, not in `storlab-sim`: the simulator parses text it is given
/// and does no file I/O.
pub fn load_profiles(dir: &Path) -> Result<ProfileSet, SimError> {
    let mut set = ProfileSet::embedded();
    if !dir.is_dir() {
        return Ok(set);
    }
    for category in storlab_sim::profile::CATEGORIES {
        let category_dir = dir.join(category);
        if !category_dir.is_dir() {
            continue;
        }
        let mut paths = Vec::new();
        collect_toml_files(&category_dir, &mut paths)?;
        paths.sort();
        for path in paths {
            // A FIFO named like a profile would block the read, a link to a device never end.
            let text =
                crate::regular_file::read_regular_text(&path, PROFILE_MAX_BYTES).map_err(|e| {
                    SimError::Io {
                        path: path.display().to_string(),
                        reason: e.to_string(),
                    }
                })?;
            let name = profile_name(&category_dir, &path);
            set.insert_text(category, &name, &path.display().to_string(), &text)?;
        }
    }
    Ok(set)
}

/// Bytes a profile file may hold: the largest shipped one is a few KiB.
const PROFILE_MAX_BYTES: u64 = 1024 * 1024;

/// Every `.toml` file under `dir`, recursively (a category's subfolders group related parts).
fn collect_toml_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), SimError> {
    let io_err = |e: std::io::Error| SimError::Io {
        path: dir.display().to_string(),
        reason: e.to_string(),
    };
    for entry in std::fs::read_dir(dir).map_err(io_err)? {
        let path = entry.map_err(io_err)?.path();
        if path.is_dir() {
            collect_toml_files(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "toml") {
            out.push(path);
        }
    }
    Ok(())
}

/// A profile's name: its path below the category folder, without `.toml`, `/`-separated.
fn profile_name(category_dir: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(category_dir).unwrap_or(path);
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.last_mut() {
        if let Some(stem) = last.strip_suffix(".toml") {
            *last = stem.to_string();
        }
    }
    parts.join("/")
}

/// Every stack the embedded profiles plus `profiles_dir` define: (name, description), sorted.
/// An unreadable directory lists the embedded stacks only.
pub fn list_stacks(profiles_dir: &Path) -> Vec<(String, String)> {
    load_profiles(profiles_dir)
        .unwrap_or_else(|_| ProfileSet::embedded())
        .stacks()
}

fn sim_error(e: storlab_sim::SimError) -> EngineError {
    EngineError::Setup(e.to_string())
}

/// How a run opens a simulated stack through the registry (`registry::EngineTarget::Sim`):
/// which stack, from which profiles, with what seed, whether it records its USB session, keeps
/// written bytes, and which faults it injects.
#[derive(Clone, Debug)]
pub struct SimOpening {
    /// The stack's name (`sim:STACK` without the prefix).
    pub stack: String,
    /// Profiles added to the embedded ones (may be missing: then the embedded ones alone).
    pub profiles_dir: PathBuf,
    pub seed: u64,
    /// Record the session as a usbmon pcap.
    pub pcap: bool,
    /// Keep no written bytes (reads return zeros): timing-only runs.
    pub timing_only: bool,
    /// Faults to inject (`storlab_sim::fault`); a plan the stack cannot take is refused.
    pub faults: Option<storlab_sim::FaultPlan>,
}

/// The simulator engine.
pub struct SimEngine {
    sim: Simulator,
    queued: Vec<IoRequest>,
    in_flight: Vec<bool>,
    outstanding: usize,
    slot_bytes: usize,
    /// The slot `flush` sends its flush on: one past the caller's.
    flush_slot: u32,
    /// Writes complete only after a flush (`sync=1`).
    sync_writes: bool,
    /// Per slot: the request in flight is a write.
    writing: Vec<bool>,
    /// Per slot: the write's result, held while its flush runs.
    syncing: Vec<Option<Result<u32, i32>>>,
}

impl SimEngine {
    /// Open stack `stack_name` from the embedded profiles plus `profiles_dir` (which may be
    /// missing), with the simulator's RNG seeded by `seed`.
    pub fn open(
        stack_name: &str,
        profiles_dir: &Path,
        seed: u64,
    ) -> Result<SimEngine, EngineError> {
        let profiles = load_profiles(profiles_dir).map_err(sim_error)?;
        let sim = Simulator::from_profiles(&profiles, stack_name, seed).map_err(sim_error)?;
        Ok(SimEngine::from_simulator(sim))
    }

    /// Open the stack `opening` names, set up as it asks.
    pub fn open_as(opening: &SimOpening) -> Result<SimEngine, EngineError> {
        let mut engine = SimEngine::open(&opening.stack, &opening.profiles_dir, opening.seed)?;
        if opening.pcap {
            engine.enable_pcap();
        }
        if opening.timing_only {
            engine.sim.set_store_payload(false);
        }
        if let Some(plan) = &opening.faults {
            engine.sim.set_faults(plan.clone()).map_err(sim_error)?;
        }
        Ok(engine)
    }

    /// Wrap an already built simulator (tests, custom stacks).
    pub fn from_simulator(sim: Simulator) -> SimEngine {
        SimEngine {
            sim,
            queued: Vec::new(),
            in_flight: Vec::new(),
            outstanding: 0,
            slot_bytes: 0,
            flush_slot: 0,
            sync_writes: false,
            writing: Vec::new(),
            syncing: Vec::new(),
        }
    }

    pub fn simulator(&self) -> &Simulator {
        &self.sim
    }

    pub fn simulator_mut(&mut self) -> &mut Simulator {
        &mut self.sim
    }

    /// Record the session as a usbmon pcap (USB stacks; enumeration first, then every URB).
    pub fn enable_pcap(&mut self) {
        self.sim.enable_pcap();
    }

    fn check(&self, request: &IoRequest) -> Result<(), EngineError> {
        super::check_request(request, &self.in_flight, self.slot_bytes)
    }

    /// `reap` with synchronous writes: a write that completes is not handed back yet; a flush
    /// goes on its slot, and the write completes with that flush (at its time, with its error
    /// if it failed).
    fn reap_synchronous(
        &mut self,
        min: usize,
        out: &mut Vec<IoCompletion>,
    ) -> Result<usize, EngineError> {
        let mut reaped = 0;
        loop {
            while let Some(c) = self.sim.pop_completion() {
                let slot = c.slot as usize;
                let held = self.syncing[slot].take();
                if held.is_none() && self.writing[slot] && c.result.is_ok() {
                    self.syncing[slot] = Some(c.result);
                    self.sim
                        .submit(SimRequest {
                            slot: c.slot,
                            op: Op::Flush,
                            offset_bytes: 0,
                            len_bytes: 0,
                        })
                        .map_err(|e| EngineError::InvalidRequest(e.to_string()))?;
                    continue;
                }
                let result = match (held, c.result) {
                    (Some(written), Ok(_)) => written,
                    (_, result) => result,
                };
                self.in_flight[slot] = false;
                out.push(IoCompletion {
                    slot: c.slot,
                    result,
                    done_ns: c.done_ns,
                });
                reaped += 1;
            }
            if reaped >= min {
                break;
            }
            let ready = self.sim.completions_ready();
            self.sim.run_until_completions(ready + 1);
            if self.sim.completions_ready() == ready {
                return Err(EngineError::Setup(format!(
                    "simulator stalled: {reaped} of {min} completions with nothing left to run"
                )));
            }
        }
        self.outstanding -= reaped;
        Ok(reaped)
    }
}

impl IoEngine for SimEngine {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            queued: true,
            moves_data: true,
            trim: true,
            shared_timeline: true,
            page_cache: false,
        }
    }

    fn target_size_bytes(&self) -> u64 {
        self.sim.capacity_bytes()
    }

    fn setup(&mut self, setup: &EngineSetup) -> Result<(), EngineError> {
        // One more slot than the caller's: `flush` sends its flush there.
        self.sim
            .setup_slots(setup.slots + 1, setup.slot_bytes)
            .map_err(sim_error)?;
        self.flush_slot = setup.slots;
        self.writing = vec![false; setup.slots as usize];
        self.syncing = vec![None; setup.slots as usize];
        self.in_flight = vec![false; setup.slots as usize];
        self.queued = Vec::with_capacity(setup.slots as usize);
        self.slot_bytes = setup.slot_bytes;
        self.outstanding = 0;
        Ok(())
    }

    fn buffer(&self, slot: u32) -> &[u8] {
        self.sim.slot_buffer(slot)
    }

    fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        self.sim.slot_buffer_mut(slot)
    }

    fn buffer_head_mut(&mut self, slot: u32, len: usize) -> &mut [u8] {
        self.sim.slot_head_mut(slot, len)
    }

    fn queue(&mut self, request: IoRequest) -> Result<(), EngineError> {
        self.check(&request)?;
        self.in_flight[request.slot as usize] = true;
        self.writing[request.slot as usize] = request.direction == IoDirection::Write;
        self.queued.push(request);
        Ok(())
    }

    fn submit(&mut self) -> Result<usize, EngineError> {
        let issued = self.queued.len();
        for request in self.queued.drain(..) {
            let op = match request.direction {
                IoDirection::Read => Op::Read,
                IoDirection::Write => Op::Write,
                IoDirection::Trim => Op::Trim,
            };
            self.sim
                .submit(SimRequest {
                    slot: request.slot,
                    op,
                    offset_bytes: request.offset_bytes,
                    len_bytes: request.len_bytes,
                })
                .map_err(|e| EngineError::InvalidRequest(e.to_string()))?;
        }
        self.outstanding += issued;
        Ok(issued)
    }

    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> Result<usize, EngineError> {
        if min > self.outstanding {
            return Err(reap_too_many(min, self.outstanding));
        }
        if self.sync_writes {
            return self.reap_synchronous(min, out);
        }
        self.sim.run_until_completions(min);
        let mut reaped = 0;
        while let Some(c) = self.sim.pop_completion() {
            self.in_flight[c.slot as usize] = false;
            out.push(IoCompletion {
                slot: c.slot,
                result: c.result,
                done_ns: c.done_ns,
            });
            reaped += 1;
        }
        self.outstanding -= reaped;
        if reaped < min {
            return Err(EngineError::Setup(format!(
                "simulator stalled: {reaped} of {min} completions with nothing left to run"
            )));
        }
        Ok(reaped)
    }

    fn now_ns(&self) -> u64 {
        self.sim.now_ns()
    }

    /// A cache flush to the drive, sent on the engine's own slot; returns once the drive
    /// reported it done. The simulated stack has no file system, so `fsync` and `fdatasync`
    /// send the same command.
    fn flush(&mut self, _kind: FlushKind) -> Result<(), EngineError> {
        let slot = self.flush_slot;
        self.sim
            .submit(SimRequest {
                slot,
                op: Op::Flush,
                offset_bytes: 0,
                len_bytes: 0,
            })
            .map_err(|e| EngineError::InvalidRequest(e.to_string()))?;
        match self.sim.run_until_slot_completes(slot) {
            Some(c) => c
                .result
                .map(|_| ())
                .map_err(|errno| EngineError::Io(std::io::Error::from_raw_os_error(errno))),
            None => Err(EngineError::Setup(
                "simulator stalled: the flush did not complete with nothing left to run".into(),
            )),
        }
    }

    fn set_sync_writes(&mut self, kind: Option<FlushKind>) -> Result<(), EngineError> {
        self.sync_writes = kind.is_some();
        Ok(())
    }

    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.sim.step_until(deadline_ns);
    }

    /// The usbmon pcap recorded since `enable_pcap` (None when tracing is off or the stack has
    /// no USB session).
    fn take_pcap(&mut self) -> Option<Vec<u8>> {
        let bytes = self.sim.take_pcap();
        (!bytes.is_empty()).then_some(bytes)
    }

    fn report(&self) -> EngineReport {
        let report = self.sim.report();
        EngineReport {
            details: report.details(),
            sim: Some(Box::new(report)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(stack: &str, slots: u32, slot_bytes: usize) -> SimEngine {
        let mut e = SimEngine::open(stack, Path::new("/nonexistent"), 1).unwrap();
        e.setup(&EngineSetup {
            slots,
            slot_bytes,
            buffer_align_bytes: 4096,
        })
        .unwrap();
        e
    }

    #[test]
    fn writes_read_back_in_virtual_time() {
        let mut e = engine("usb3-uas-ssd", 2, 65536);
        e.enable_pcap();
        assert_eq!(e.now_ns(), 0);
        e.buffer_mut(0).fill(0x5A);
        e.queue(IoRequest {
            slot: 0,
            direction: IoDirection::Write,
            offset_bytes: 1 << 20,
            len_bytes: 65536,
            ioprio: None,
        })
        .unwrap();
        assert_eq!(e.submit().unwrap(), 1);
        let mut out = Vec::new();
        assert_eq!(e.reap(1, &mut out).unwrap(), 1);
        assert_eq!(out[0].result, Ok(65536));
        let written_at = out[0].done_ns;
        assert!(written_at > 0 && written_at == e.now_ns());
        e.queue(IoRequest {
            slot: 1,
            direction: IoDirection::Read,
            offset_bytes: 1 << 20,
            len_bytes: 65536,
            ioprio: None,
        })
        .unwrap();
        e.submit().unwrap();
        out.clear();
        e.reap(1, &mut out).unwrap();
        assert!(e.buffer(1).iter().all(|&b| b == 0x5A));
        assert!(out[0].done_ns > written_at);
        let report = e.report();
        assert!(report
            .sim
            .as_ref()
            .unwrap()
            .to_json()
            .contains("\"bottleneck\""));
        assert!(report
            .details
            .iter()
            .any(|(k, _)| k == "sim.drive_io_sizes"));
        // usbmon pcap: a 24-byte global header, then records.
        const PCAP_GLOBAL_HEADER_BYTES: usize = 24;
        let pcap = e.take_pcap().expect("tracing was enabled on a USB stack");
        assert!(pcap.len() > PCAP_GLOBAL_HEADER_BYTES);
        assert!(e.take_pcap().is_none(), "taking the capture ends it");
    }

    /// A flush waits for the drive's cache flush and leaves a request still in flight to be
    /// reaped; with synchronous writes a write completes only after its own flush.
    #[test]
    fn flush_keeps_other_completions_and_sync_writes_wait_for_a_flush() {
        let write = |slot| IoRequest {
            slot,
            direction: IoDirection::Write,
            offset_bytes: u64::from(slot) << 20,
            len_bytes: 4096,
            ioprio: None,
        };
        let mut e = engine("sata-ahci-hdd", 2, 4096);
        e.queue(write(0)).unwrap();
        e.submit().unwrap();
        let before = e.now_ns();
        e.flush(FlushKind::All).unwrap();
        assert!(e.now_ns() > before);
        let mut out = Vec::new();
        assert_eq!(e.reap(1, &mut out).unwrap(), 1, "the write is still reaped");
        assert_eq!(out[0].result, Ok(4096));
        assert_eq!(e.report().sim.unwrap().flushes_to_drive, 1);

        let timed = |sync: bool| {
            let mut e = engine("sata-ahci-hdd", 2, 4096);
            e.set_sync_writes(sync.then_some(FlushKind::All)).unwrap();
            let mut out = Vec::new();
            for slot in 0..2 {
                e.queue(write(slot)).unwrap();
            }
            e.submit().unwrap();
            e.reap(2, &mut out).unwrap();
            assert!(out.iter().all(|c| c.result == Ok(4096)), "{out:?}");
            (e.now_ns(), e.report().sim.unwrap().flushes_to_drive)
        };
        let (cached_ns, no_flushes) = timed(false);
        let (synchronous_ns, flushes) = timed(true);
        assert_eq!((no_flushes, flushes), (0, 2));
        assert!(
            synchronous_ns > cached_ns,
            "{synchronous_ns} vs {cached_ns}"
        );
    }

    #[test]
    fn wait_until_advances_virtual_time_and_contract_errors_are_reported() {
        let mut e = engine("sata-ahci-ssd", 1, 4096);
        e.wait_until_ns(5_000_000);
        assert_eq!(e.now_ns(), 5_000_000);
        let mut out = Vec::new();
        assert!(e.reap(1, &mut out).is_err(), "nothing outstanding");
        let r = IoRequest {
            slot: 0,
            direction: IoDirection::Read,
            offset_bytes: 0,
            len_bytes: 4096,
            ioprio: None,
        };
        e.queue(r).unwrap();
        assert!(e.queue(r).is_err(), "slot reused before reaped");
        assert!(SimEngine::open("no-such-stack", Path::new("/nonexistent"), 1).is_err());
        assert!(list_stacks(Path::new("/nonexistent"))
            .iter()
            .any(|(n, _)| n == "usb3-uas-ssd"));
    }

    #[test]
    fn a_profiles_directory_adds_and_overrides_by_path() {
        let dir =
            std::env::temp_dir().join(format!("storlab-engine-profiles-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("stacks/mine")).unwrap();
        let stack =
            "description = \"test\"\nhost = \"vendor-uas\"\ncontroller = \"xhci-gen2-x1\"\n\
                     usb_link = \"usb3-ss\"\nbridge = \"uas-bridge\"\nsata_link = \"sata-3g\"\n\
                     drive = \"ssd-sata3-fast\"\n";
        std::fs::write(dir.join("stacks/mine/nested.toml"), stack).unwrap();
        std::fs::write(dir.join("stacks/notes.txt"), "not a profile").unwrap();
        let set = load_profiles(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        let set = set.unwrap();
        assert_eq!(
            set.resolve("mine/nested").unwrap().drive_name,
            "ssd-sata3-fast"
        );
        assert!(
            set.resolve("usb3-uas-ssd").is_ok(),
            "shipped stacks stay available"
        );
        assert!(
            set.resolve("notes").is_err(),
            "only .toml files are profiles"
        );
    }
}
