//! Edge values in every numeric key of every shipped part (hosts, controllers, links, bridges,
//! drives) and of the simple drive model, including the optional keys a file leaves out: 0, 1,
//! -1, 2^31, the largest u32 and one beyond, 2^62, the largest TOML integer and 1e308, and for
//! fractions also NaN and ±inf. A profile file is user input (`--profiles DIR`), so each value
//! must either be refused with one line naming the file and the key, or build a simulator that
//! completes reads, writes and a TRIM of 4 KiB and 1 MiB, 4 KiB at the end of the drive and one
//! 64 MiB read, within a bounded number of events, without a panic, without gigabytes of
//! memory and without a runaway loop.
//!
//! Each value goes in twice: as an override file of the part (as `--profiles DIR` gives it) and
//! as a stack's `[overrides.ROLE]`; both must agree. Every case runs under `catch_unwind`, and
//! all failures are reported together. `STORLAB_EDGE_VERBOSE=1` prints each case as it starts
//! (an allocation refused by the counting allocator aborts the process, after the last one).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};
use storlab_sim::{Op, ProfileSet, SimError, SimRequest, Simulator};

/// Counts live heap bytes (and their peak), so a case that allocates by a profile's absurd size
/// shows up as a failure instead of a slow machine; a single allocation beyond
/// [`HARD_LIMIT_BYTES`] is refused outright (the test then aborts with the allocation size).
struct CountingAlloc;

thread_local! {
    /// Live heap bytes this thread allocated (the simulator is single-threaded), and their peak.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// One allocation larger than this is refused (it would only be touched in part, but a profile
/// must not be able to ask for it).
const HARD_LIMIT_BYTES: usize = 8 << 30;
/// Peak live heap of one case above what it started with; more fails the case. The largest
/// shipped drive (the Vertex 3's 2^27 one-KiB allocation slots) needs about 0.7 GiB.
const CASE_LIMIT_BYTES: usize = 2 << 30;
/// The largest request a job may make (`storlab-job`'s block size limit, 64 MiB).
const LARGEST_REQUEST: u32 = 64 << 20;
/// Events a case may process for its requests.
const EVENT_BUDGET: u64 = 200_000;
/// Wall time one case may take (debug build) before it counts as a runaway loop.
const CASE_WALL_LIMIT: Duration = Duration::from_secs(3);

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > HARD_LIMIT_BYTES {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note_alloc(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > HARD_LIMIT_BYTES {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note_alloc(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        note_free(layout.size());
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > HARD_LIMIT_BYTES {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note_free(layout.size());
            note_alloc(new_size);
        }
        p
    }
}

fn note_alloc(size: usize) {
    let _ = LIVE.try_with(|live| {
        live.set(live.get() + size as isize);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
    });
}

fn note_free(size: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get() - size as isize));
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// A small drive for the stacks that test the other parts, so their cases stay cheap.
const SMALL_DRIVE: &str = "description = \"edge-value test drive\"\nmodel = \"simple\"\n\
    medium = \"ssd\"\ncapacity_bytes = 1073741824\nparallel_units = 4\nqueue_depth = 32\n\
    read_command_ns = 50000\nwrite_command_ns = 50000\nread_rate_mb_s = 250\n\
    write_rate_mb_s = 200\ntransfer_unit_bytes = 4096\ntrim_command_ns = 100000\n";

/// The simple drive model as an HDD (no shipped profile uses the simple model, so these two
/// stand in for it), with its optional keys.
const SIMPLE_HDD: &str = "description = \"edge-value simple HDD\"\nmodel = \"simple\"\n\
    medium = \"hdd\"\ncapacity_bytes = 500107862016\nparallel_units = 1\nqueue_depth = 1\n\
    read_command_ns = 100000\nwrite_command_ns = 100000\nread_rate_mb_s = 100\n\
    write_rate_mb_s = 100\nrandom_access_ns = 12000000\nlatency_jitter_ns = 1000000\n\
    transfer_unit_bytes = 65536\ntrim_command_ns = 100000\n";

/// Optional numeric keys a file may leave out, by part kind: they get edge values too.
fn optional_keys(category: &str, kind: &str) -> &'static [&'static str] {
    match (category, kind) {
        ("hosts", _) => &[
            "max_transfer_bytes_high_speed",
            "cpu_ns_per_kib",
            "phase_cpu_ns",
            "coalesce_hold_ns",
            "cpu_threads",
        ],
        ("controllers", _) => &["max_streams"],
        ("bridges", _) => &[
            "bot_write_buffer_bytes",
            "firmware_read_ns",
            "firmware_write_ns",
            "firmware_unmap_ns",
        ],
        ("drives", model) => drive_optional_keys(model),
        _ => &[],
    }
}

/// Optional numeric keys of each drive model. Every model the registry has must have a row
/// (`every_drive_model_is_in_the_edge_value_table`): a new model is not skipped silently.
fn drive_optional_keys(model: &str) -> &'static [&'static str] {
    match model {
        "ssd" => &[
            "command_latency_ns",
            "compression_slot_bytes",
            "read_ahead_bytes",
            "read_ahead_streams",
            "read_cpu_ns",
            "write_cpu_ns",
            "log_blocks",
        ],
        "hdd" => &[
            "write_head_switch_ns",
            "cache_bytes",
            "write_back_read_idle_ns",
            "rpo_candidates",
            "write_back_candidates",
            "rpo_settle_margin_ns",
        ],
        "simple" => &["random_access_ns", "latency_jitter_ns"],
        other => panic!(
            "drive model `{other}` has no row in profile_edge_values.rs's table: list its \
             optional numeric keys in drive_optional_keys"
        ),
    }
}

fn integer_edges() -> Vec<toml::Value> {
    use toml::Value::{Float, Integer};
    vec![
        Integer(0),
        Integer(1),
        Integer(-1),
        // Largest u32, and a power of two below it (a whole number of sectors and pages).
        Integer(i64::from(u32::MAX)),
        Integer(1 << 31),
        Integer(i64::from(u32::MAX) + 1),
        // A whole number of sectors, far beyond 48-bit LBAs; and the largest TOML integer.
        Integer(1 << 62),
        Integer(i64::MAX),
        Float(1e308),
    ]
}

fn float_edges() -> Vec<toml::Value> {
    use toml::Value::{Float, Integer};
    vec![
        Float(0.0),
        Float(1.0),
        Float(-1.0),
        Float(1e308),
        Float(f64::NAN),
        Float(f64::INFINITY),
        Float(f64::NEG_INFINITY),
        Integer(0),
        Integer(i64::MAX),
    ]
}

/// Dotted paths of the numeric keys of `table` (`pcie.generation`), with whether each is a float.
fn numeric_keys(table: &toml::Table, prefix: &str, out: &mut Vec<(String, bool)>) {
    for (key, value) in table {
        let path = format!("{prefix}{key}");
        match value {
            toml::Value::Integer(_) => out.push((path, false)),
            toml::Value::Float(_) => out.push((path, true)),
            toml::Value::Table(inner) => numeric_keys(inner, &format!("{path}."), out),
            _ => {}
        }
    }
}

fn set_path(table: &mut toml::Table, path: &str, value: toml::Value) {
    match path.split_once('.') {
        Some((head, rest)) => {
            let inner = table
                .entry(head)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            set_path(
                inner.as_table_mut().expect("dotted keys name tables"),
                rest,
                value,
            );
        }
        None => {
            table.insert(path.to_string(), value);
        }
    }
}

/// Nested override tables for a dotted key: `pcie.generation = 1` → `{pcie: {generation: 1}}`.
fn override_table(path: &str, value: toml::Value) -> toml::Table {
    let mut t = toml::Table::new();
    set_path(&mut t, path, value);
    t
}

/// The stacks that exercise a part: the part in its role, every other part a shipped one (and
/// the small drive). USB hosts and links run behind both BOT and UAS where both apply.
fn stacks_for(category: &str, name: &str, table: &toml::Table) -> Vec<(String, toml::Table)> {
    let s = |pairs: &[(&str, &str)]| {
        let mut t = toml::Table::new();
        t.insert("description".into(), "edge-value test stack".into());
        for (k, v) in pairs {
            t.insert((*k).into(), (*v).into());
        }
        t
    };
    let kind = |key: &str| table.get(key).and_then(|v| v.as_str()).unwrap_or("");
    let usb = |host: &str, link: &str, bridge: &str, drive: &str| {
        s(&[
            ("host", host),
            ("controller", "xhci-gen2-x1"),
            ("usb_link", link),
            ("bridge", bridge),
            ("sata_link", "sata-3g"),
            ("drive", drive),
        ])
    };
    let sata = |host: &str, controller: &str, link: &str, drive: &str| {
        s(&[
            ("host", host),
            ("controller", controller),
            ("sata_link", link),
            ("drive", drive),
        ])
    };
    let small = "edge-small";
    let role_and = |role: &str, stacks: Vec<toml::Table>| {
        stacks
            .into_iter()
            .map(|t| (role.to_string(), t))
            .collect::<Vec<_>>()
    };
    match category {
        "hosts" => match kind("driver") {
            "bot" => role_and(
                "host",
                vec![
                    usb(name, "usb3-ss", "bot-bridge", small),
                    usb(name, "usb2-hs", "bot-bridge", small),
                ],
            ),
            "uas" => role_and(
                "host",
                vec![
                    usb(name, "usb3-ss", "uas-bridge", small),
                    usb(name, "usb2-hs", "uas-bridge", small),
                ],
            ),
            _ => role_and("host", vec![sata(name, "ahci-chipset", "sata-3g", small)]),
        },
        "controllers" => match kind("kind") {
            "xhci" => {
                let mut t = usb("vendor-uas", "usb3-ss", "uas-bridge", small);
                t.insert("controller".into(), name.into());
                role_and("controller", vec![t])
            }
            _ => role_and("controller", vec![sata("ahci", name, "sata-3g", small)]),
        },
        "links" => match kind("kind") {
            "sata" => role_and("sata_link", vec![sata("ahci", "ahci-chipset", name, small)]),
            _ => role_and(
                "usb_link",
                vec![
                    usb("vendor-uas", name, "uas-bridge", small),
                    usb("win7-bot", name, "bot-bridge", small),
                ],
            ),
        },
        "bridges" => role_and(
            "bridge",
            vec![
                usb("vendor-uas", "usb3-ss", name, small),
                usb("win7-bot", "usb3-ss", name, small),
            ],
        ),
        "drives" => role_and("drive", vec![sata("ahci", "ahci-chipset", "sata-3g", name)]),
        _ => Vec::new(),
    }
}

/// What went wrong in one case, if anything.
fn check_error(err: &SimError, file: &str, key: &str) -> Option<String> {
    let msg = err.to_string();
    if msg.contains('\n') {
        return Some(format!("error is not one line: {msg:?}"));
    }
    if !msg.contains(file) {
        return Some(format!("error does not name the file `{file}`: {msg}"));
    }
    if !msg.contains(key) {
        return Some(format!("error does not name the key `{key}`: {msg}"));
    }
    None
}

/// Build the stack and run a few requests; Err describes what went wrong.
fn run_stack(set: &ProfileSet, stack: &str) -> Result<(), String> {
    let mut sim = Simulator::from_profiles(set, stack, 7).map_err(|e| format!("build: {e}"))?;
    let host_discards = set
        .resolve(stack)
        .map_err(|e| format!("resolve: {e}"))?
        .host
        .discard;
    let big = 1u32 << 20;
    sim.setup_slots(2, LARGEST_REQUEST as usize)
        .map_err(|e| format!("slots: {e}"))?;
    // The last two 4 KiB of the drive (48-bit LBAs at their end).
    let tail = (sim.capacity_bytes() / 4096).saturating_sub(2) * 4096;
    let mut events = 0u64;
    let batches: [(Op, u32, u64); 10] = [
        (Op::Write, 4096, 0),
        (Op::Read, 4096, 0),
        (Op::Write, big, big.into()),
        (Op::Read, big, big.into()),
        (Op::Read, 4096, 3 << 20),
        (Op::Trim, big, big.into()),
        (Op::Write, 4096, 5 << 20),
        (Op::Write, 4096, tail),
        (Op::Read, 4096, tail),
        (Op::Read, LARGEST_REQUEST, 0),
    ];
    for (op, len, offset) in batches {
        if len == LARGEST_REQUEST {
            // Timing only: copying 128 MiB of zeros per case would be most of the test's time,
            // and the payload store does not depend on the profile.
            sim.set_store_payload(false);
        }
        // Two at once, so queued paths (NCQ, UAS tags, merging) run too.
        for slot in 0..2u32 {
            sim.submit(SimRequest {
                slot,
                op,
                offset_bytes: offset + u64::from(slot) * u64::from(len),
                len_bytes: len,
            })
            .map_err(|e| format!("submit: {e}"))?;
        }
        let mut done = 0;
        while done < 2 {
            while let Some(c) = sim.pop_completion() {
                done += 1;
                match c.result {
                    Ok(n) if n == len => {}
                    // A drive smaller than the offset refuses the request; that is fine.
                    Err(errno) if errno == storlab_sim::ERRNO_EINVAL => {}
                    // A host without discard (Linux's usb-storage) refuses a trim before any
                    // command, as the block layer does: the other requests still exercise it.
                    Err(errno)
                        if op == Op::Trim
                            && !host_discards
                            && errno == storlab_sim::ERRNO_EOPNOTSUPP => {}
                    other => return Err(format!("{op:?} {len} B: completion {other:?}")),
                }
            }
            if done >= 2 {
                break;
            }
            if !sim.step() {
                return Err(format!("{op:?} {len} B: stalled with requests outstanding"));
            }
            events += 1;
            if events > EVENT_BUDGET {
                return Err(format!(
                    "{op:?} {len} B: over {EVENT_BUDGET} events (simulated {} ns)",
                    sim.now_ns()
                ));
            }
        }
    }
    let report = sim.report();
    let _ = report.to_json();
    let _ = report.details();
    Ok(())
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn describe(value: &toml::Value) -> String {
    match value {
        toml::Value::Float(f) => format!("{f:?}"),
        other => other.to_string(),
    }
}

/// Every part the edge-value test sets keys of: the shipped parts (stacks aside) and the
/// simple drive model as an SSD and an HDD.
fn edge_parts() -> Vec<(&'static str, String, String)> {
    let mut parts: Vec<(&str, String, String)> = storlab_sim::profiles::embedded::EMBEDDED_PROFILES
        .iter()
        .filter(|(category, _, _)| *category != "stacks")
        .map(|(c, n, t)| (*c, n.to_string(), t.to_string()))
        .collect();
    parts.push(("drives", "edge-simple-ssd".into(), SMALL_DRIVE.into()));
    parts.push(("drives", "edge-simple-hdd".into(), SIMPLE_HDD.into()));
    parts
}

/// A drive model added to the registry (`drive/mod.rs`, one `drive_models!` line) gets edge
/// values too: some part the test runs uses it, and the table lists its optional keys.
#[test]
fn every_drive_model_is_in_the_edge_value_table() {
    let parts = edge_parts();
    for model in storlab_sim::drive::DRIVE_MODELS {
        let tested = parts.iter().any(|(category, _, text)| {
            let table: toml::Table = toml::from_str(text).unwrap();
            *category == "drives" && table.get("model").and_then(|v| v.as_str()) == Some(model)
        });
        assert!(
            tested,
            "drive model `{model}`: no shipped drive profile or edge part uses it, so no edge \
             value reaches it; add one to edge_parts"
        );
        drive_optional_keys(model);
    }
}

#[test]
fn every_numeric_key_survives_edge_values() {
    let base = {
        let mut set = ProfileSet::embedded();
        set.insert_text(
            "drives",
            "edge-small",
            "edge/drives/edge-small.toml",
            SMALL_DRIVE,
        )
        .unwrap();
        set
    };
    let parts = edge_parts();

    // Panics of this test's cases are collected, not printed; other tests' go on as usual.
    let others = std::panic::take_hook();
    let this_test = std::thread::current().id();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == this_test {
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(info.to_string().replace('\n', " ")));
        } else {
            others(info);
        }
    }));
    let verbose = std::env::var_os("STORLAB_EDGE_VERBOSE").is_some();
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut cases = 0u32;
    let mut simulated = 0u32;
    for (category, name, text) in &parts {
        let table: toml::Table = toml::from_str(text).unwrap();
        let kind_key = match *category {
            "drives" => "model",
            "hosts" => "driver",
            _ => "kind",
        };
        let kind = table.get(kind_key).and_then(|v| v.as_str()).unwrap_or("");
        let mut keys = Vec::new();
        numeric_keys(&table, "", &mut keys);
        for optional in optional_keys(category, kind) {
            if !keys.iter().any(|(k, _)| k == optional) {
                keys.push((optional.to_string(), false));
            }
        }
        // The key the part's own file is tested under: a fresh name, so the shipped part the
        // other stacks use stays as it is.
        let part_name = format!("edge-{name}");
        let file = format!("edge/{category}/{part_name}.toml");
        let stacks = stacks_for(category, &part_name, &table);
        assert!(!stacks.is_empty(), "{category}/{name}: no test stack");
        for (key, is_float) in keys {
            let values = if is_float {
                float_edges()
            } else {
                integer_edges()
            };
            for value in values {
                cases += 1;
                let label = format!("{category}/{name} {key} = {}", describe(&value));
                if verbose {
                    eprintln!("{label}");
                }
                let mut edited = table.clone();
                set_path(&mut edited, &key, value.clone());
                let edited_text = toml::to_string(&edited).unwrap();
                let before = LIVE.with(Cell::get);
                PEAK.with(|peak| peak.set(before));
                let clock = Instant::now();
                let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<bool, String> {
                    let mut set = base.clone();
                    set.insert_text(category, &part_name, &file, &edited_text)
                        .unwrap();
                    // The same value as a stack override of the unedited part.
                    set.insert_text(category, "edge-plain", "edge/plain.toml", text)
                        .unwrap();
                    let mut ran = false;
                    for (i, (role, stack)) in stacks.iter().enumerate() {
                        let direct = format!("edge-direct-{i}");
                        let stack_file = format!("edge/stacks/{direct}.toml");
                        set.insert_text(
                            "stacks",
                            &direct,
                            &stack_file,
                            &toml::to_string(stack).unwrap(),
                        )
                        .unwrap();
                        let mut via = stack.clone();
                        via.insert(role.clone(), "edge-plain".into());
                        let mut overrides = toml::Table::new();
                        overrides.insert(
                            role.clone(),
                            toml::Value::Table(override_table(&key, value.clone())),
                        );
                        via.insert("overrides".into(), toml::Value::Table(overrides));
                        let over = format!("edge-override-{i}");
                        let over_file = format!("edge/stacks/{over}.toml");
                        set.insert_text(
                            "stacks",
                            &over,
                            &over_file,
                            &toml::to_string(&via).unwrap(),
                        )
                        .unwrap();
                        let direct_result = set.resolve(&direct);
                        let over_result = set.resolve(&over);
                        match (&direct_result, &over_result) {
                            (Err(e), Err(o)) => {
                                if let Some(why) = check_error(e, &file, &key) {
                                    return Err(why);
                                }
                                if let Some(why) = check_error(o, &over_file, &key) {
                                    return Err(format!("as a stack override: {why}"));
                                }
                                return Ok(false);
                            }
                            (Ok(_), Ok(_)) => {}
                            (Ok(_), Err(o)) => {
                                return Err(format!(
                                    "accepted in the file, refused as an override: {o}"
                                ))
                            }
                            (Err(e), Ok(_)) => {
                                return Err(format!(
                                    "refused in the file ({e}), accepted as an override"
                                ))
                            }
                        }
                        run_stack(&set, &direct)?;
                        ran = true;
                    }
                    Ok(ran)
                }));
                let elapsed = clock.elapsed();
                let peak = PEAK.with(Cell::get).saturating_sub(before).max(0) as usize;
                match outcome {
                    Ok(Ok(ran)) => simulated += u32::from(ran),
                    Ok(Err(why)) => failures.push(format!("{label}: {why}")),
                    Err(_) => {
                        let msg = LAST_PANIC
                            .with(|p| p.borrow_mut().take())
                            .unwrap_or_else(|| "panic".into());
                        failures.push(format!("{label}: PANIC {msg}"));
                    }
                }
                if peak > CASE_LIMIT_BYTES {
                    failures.push(format!("{label}: peak heap {} MiB", peak >> 20));
                }
                if elapsed > CASE_WALL_LIMIT {
                    failures.push(format!("{label}: took {elapsed:?}"));
                }
            }
        }
    }
    let _ = std::panic::take_hook();
    eprintln!(
        "{cases} cases ({simulated} simulated) in {:?}",
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} of {cases} edge-value cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The deepest queues the protocols allow: a UAS host, bridge and controller at 65535 tags and
/// streams, kept full by the job (whose iodepth may go that deep). Each command books work on
/// the shared resources ahead of time, so their calendars must hold that many commands' worth.
#[test]
fn the_deepest_uas_queue_runs() {
    let shipped = |name: &str| {
        storlab_sim::profiles::embedded::EMBEDDED_PROFILES
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(_, _, text)| text.to_string())
            .unwrap()
    };
    let deepest = |text: String, key: &str| {
        let mut table: toml::Table = toml::from_str(&text).unwrap();
        table.insert(key.into(), toml::Value::Integer(65_535));
        toml::to_string(&table).unwrap()
    };
    let mut set = ProfileSet::embedded();
    for (category, name, key) in [
        ("hosts", "vendor-uas", "max_outstanding_commands"),
        ("bridges", "uas-bridge", "max_uas_tags"),
        ("controllers", "xhci-gen2-x1", "max_streams"),
    ] {
        set.insert_text(category, "deep", "deep.toml", &deepest(shipped(name), key))
            .unwrap();
    }
    set.insert_text("drives", "edge-small", "edge-small.toml", SMALL_DRIVE)
        .unwrap();
    for link in ["usb3-ss", "usb2-hs"] {
        let stack = format!(
            "description = \"deep\"\nhost = \"deep\"\ncontroller = \"deep\"\n\
             usb_link = \"{link}\"\nbridge = \"deep\"\nsata_link = \"sata-3g\"\n\
             drive = \"edge-small\"\n"
        );
        set.insert_text("stacks", "deep", "deep-stack.toml", &stack)
            .unwrap();
        for op in [Op::Read, Op::Write] {
            let mut sim = Simulator::from_profiles(&set, "deep", 1).unwrap();
            assert_eq!(sim.max_outstanding_commands(), 65_535);
            sim.set_store_payload(false);
            sim.setup_slots(65_535, 512).unwrap();
            let result = storlab_sim::workload::ClosedLoop {
                op,
                block_bytes: 512,
                queue_depth: 65_535,
                random: true,
                region_bytes: 0,
                ios: 65_535,
                seed: 1,
            }
            .run(&mut sim);
            assert_eq!(result.ios, 65_535, "{link} {op:?}");
        }
    }
}

/// Past 146 years of virtual time the simulator takes no more requests: a stack slow enough
/// to get there ends its run with an error instead of overflowing the nanosecond clock.
#[test]
fn the_clock_stops_taking_requests_at_its_limit() {
    let mut sim = Simulator::from_profiles(&ProfileSet::embedded(), "sata-ahci-ssd", 1).unwrap();
    sim.setup_slots(1, 4096).unwrap();
    let request = SimRequest {
        slot: 0,
        op: Op::Read,
        offset_bytes: 0,
        len_bytes: 4096,
    };
    sim.step_until(storlab_sim::CLOCK_LIMIT_NS - 1);
    sim.submit(request).unwrap();
    sim.run_until_completions(1);
    assert!(sim.pop_completion().unwrap().result.is_ok());
    assert!(sim.now_ns() >= storlab_sim::CLOCK_LIMIT_NS);
    let err = sim.submit(request).unwrap_err().to_string();
    assert!(err.contains("too slow"), "{err}");
}
