//! The bounds each case is checked against, from the stack's own resolved profile and the spec
//! constants the simulator uses: the most each layer on the path can carry, what each drive
//! cache can hold, and the least latency a request can see.

use super::*;

/// Most payload bytes per second each layer on the data path can carry, from the resolved
/// profile and the spec constants the simulator uses. Every figure leaves out overheads the
/// model may or may not charge (SKP sets, burst gaps, handshakes, set-up times, DLLPs), so it
/// is at or above what the model can reach.
#[derive(Clone, Debug)]
struct PathCapacity {
    /// PCIe, each direction: lane rate of the generation (2.5/5 GT/s with 8b/10b, 8 GT/s with
    /// 128b/130b; `storlab_sim::pcie::lane_bytes_per_second`) × lanes.
    pcie_bytes_per_s: f64,
    /// USB link payload rate and whether both directions share it (High-Speed is half duplex).
    usb: Option<(f64, bool)>,
    /// Bridge data path (`data_rate_mb_s`), shared by both directions (one `bridge_data`).
    bridge_bytes_per_s: Option<f64>,
    /// SATA payload rate: line rate ÷ line bits per byte (8b/10b: 10), less each Data FIS's
    /// header dword and framing (SOF, CRC, EOF); one FIS at a time, so both directions share it.
    sata_bytes_per_s: f64,
}

impl PathCapacity {
    fn of(spec: &StackSpec) -> PathCapacity {
        let pcie = &spec.controller.pcie;
        let usb = spec.usb_link.as_ref().map(|link| match link {
            // 480 Mb/s: each 512-byte packet carries `packet_overhead_bits` of token, framing,
            // handshake and turnaround; and the host controller schedules at most
            // `max_bulk_packets_per_microframe` per 125 us microframe (USB 2.0 §5.8).
            LinkProfile::Usb2Hs(p) => {
                let packet_bits = f64::from(p.max_packet_bytes) * BITS_PER_BYTE;
                let wire = p.bit_rate_bps as f64 / BITS_PER_BYTE * packet_bits
                    / (packet_bits + f64::from(p.packet_overhead_bits));
                let scheduled = f64::from(p.max_bulk_packets_per_microframe)
                    * f64::from(p.max_packet_bytes)
                    / (p.microframe_ns as f64 / NS_PER_S);
                (wire.min(scheduled), true)
            }
            // 5 Gb/s with 8b/10b; each 1024-byte data packet has its header and framing.
            LinkProfile::Usb3Ss(p) => {
                let line = p.signal_rate_bps as f64 / f64::from(p.line_bits_per_byte);
                let packet = f64::from(p.max_packet_bytes);
                (
                    line * packet / (packet + f64::from(p.data_packet_overhead_bytes)),
                    false,
                )
            }
            LinkProfile::Sata(_) => unreachable!("validated: usb_link is a USB link"),
        });
        let sata = &spec.sata_link;
        let fis_payload = f64::from(sata.max_data_fis_bytes);
        let fis_overhead = FIS_DATA_HEADER_BYTES as f64 + f64::from(sata.fis_framing_bytes);
        PathCapacity {
            pcie_bytes_per_s: lane_bytes_per_second(pcie.generation) * f64::from(pcie.lanes),
            usb,
            bridge_bytes_per_s: spec
                .bridge
                .as_ref()
                .map(|b| b.data_rate_mb_s as f64 * BYTES_PER_MB),
            sata_bytes_per_s: sata.line_rate_bps as f64 / f64::from(sata.line_bits_per_byte)
                * fis_payload
                / (fis_payload + fis_overhead),
        }
    }

    /// The slowest layer every byte of one direction crosses, in bytes per second.
    fn slowest_bytes_per_s(&self) -> f64 {
        let mut rate = self.pcie_bytes_per_s.min(self.sata_bytes_per_s);
        if let Some((usb, _)) = self.usb {
            rate = rate.min(usb);
        }
        if let Some(bridge) = self.bridge_bytes_per_s {
            rate = rate.min(bridge);
        }
        rate
    }
}

/// Largest bytes one command carries: the host's transfer limit (its High-Speed variant on a
/// USB 2.0 link).
fn max_transfer_bytes(spec: &StackSpec) -> u64 {
    let high_speed = matches!(spec.usb_link, Some(LinkProfile::Usb2Hs(_)));
    match (high_speed, spec.host.max_transfer_bytes_high_speed) {
        (true, Some(hs)) => hs.into(),
        _ => spec.host.max_transfer_bytes.into(),
    }
}

/// The drive's fixed per-command time before a read's data leaves it or after a write's data
/// is in, which no cache skips: the simple model's command time, the SSD's firmware on a core
/// plus its hardware wait, the HDD's controller overhead.
fn drive_fixed_ns(drive: &DriveProfile, write: bool) -> u64 {
    match drive {
        DriveProfile::Simple(p) if write => p.write_command_ns,
        DriveProfile::Simple(p) => p.read_command_ns,
        DriveProfile::Ssd(p) => p.command_cpu_ns + p.command_latency_ns,
        DriveProfile::Hdd(p) => p.command_overhead_ns,
    }
}

/// Media rate of the HDD's outer (fastest) zone: a track of `outer_sectors_per_track` passes
/// the head once per revolution (60 s / rpm).
pub(super) fn hdd_outer_bytes_per_s(p: &HddProfile) -> f64 {
    let revolution_s = 60.0 / f64::from(p.rpm);
    f64::from(p.outer_sectors_per_track) * f64::from(SECTOR_BYTES) / revolution_s
}

/// Bytes the HDD's read cache can hold: its buffer (`cache_bytes`) when the profile gives one,
/// else every segment holding a command and its read-ahead.
pub(super) fn hdd_read_cache_bytes(p: &HddProfile, block_bytes: u64) -> u64 {
    p.cache_bytes.unwrap_or_else(|| {
        u64::from(p.cache_segments)
            * (u64::from(p.read_ahead_sectors) * u64::from(SECTOR_BYTES) + block_bytes)
    })
}

/// Bytes the HDD's write-back cache can hold: the buffer (a single larger write is taken when
/// the cache is empty) or, without a byte limit, its entries of one command each.
pub(super) fn hdd_write_cache_bytes(p: &HddProfile, block_bytes: u64) -> u64 {
    if !p.write_cache {
        return 0;
    }
    match p.cache_bytes {
        Some(bytes) => bytes.max(block_bytes),
        None => u64::from(p.write_cache_entries) * block_bytes,
    }
}

/// Most bytes per second the SSD's NAND can read: every channel busy (`channels` ×
/// `channel_rate_mb_s`); and program: the lesser of the channels and every die programming a
/// full multi-plane page per program time (an SLC-mode cache's when the drive has one).
fn ssd_nand_bytes_per_s(p: &SsdProfile) -> (f64, f64) {
    let channels = f64::from(p.channels) * p.channel_rate_mb_s as f64 * BYTES_PER_MB;
    let slc = p.slc_cache.as_ref();
    let program = match slc.map_or(p.page_program_ns, |c| c.page_program_ns) {
        0 => f64::INFINITY,
        program_ns => {
            f64::from(p.channels * p.dies_per_channel * p.planes_per_die) * f64::from(p.page_bytes)
                / (program_ns as f64 / NS_PER_S)
        }
    };
    (channels, channels.min(program))
}

/// One layer's bound on the measured phase: it needs at least `min_elapsed_ns`.
pub(super) struct Bound {
    pub(super) layer: String,
    pub(super) min_elapsed_ns: f64,
    pub(super) why: String,
}

/// Commands the phase needs at least: each request is split at the transfer limit; a merging
/// driver may join adjacent requests up to it.
fn commands_at_least(spec: &StackSpec, w: &Workload, requests: u64) -> u64 {
    let max = max_transfer_bytes(spec);
    let block = u64::from(w.block_bytes);
    if spec.host.merge_adjacent {
        (requests * block).div_ceil(max)
    } else {
        requests * block.div_ceil(max)
    }
}

/// Every layer's least time for what the phase moved.
pub(super) fn bounds(spec: &StackSpec, w: &Workload, m: &Measured) -> Vec<Bound> {
    let mut out = Vec::new();
    let mut add = |layer: &str, min_elapsed_ns: f64, why: String| {
        out.push(Bound {
            layer: layer.to_string(),
            min_elapsed_ns,
            why,
        })
    };
    link_bounds(&PathCapacity::of(spec), m, &mut add);
    let (reads, writes) = per_command_bounds(spec, w, m, &mut add);
    match &spec.drive {
        DriveProfile::Simple(p) => simple_drive_bounds(p, m, reads, writes, &mut add),
        DriveProfile::Ssd(p) => ssd_bounds(p, w, m, reads + writes, &mut add),
        DriveProfile::Hdd(p) => hdd_bounds(p, w, m, &mut add),
    }
    out
}

/// The links' bounds: bytes moved over each link's (or the bridge's) most bytes per second.
fn link_bounds(cap: &PathCapacity, m: &Measured, add: &mut impl FnMut(&str, f64, String)) {
    let (r, wr) = (m.read_bytes as f64, m.write_bytes as f64);
    let ns = |bytes: f64, rate: f64| bytes / rate * NS_PER_S;
    let mb = |rate: f64| format!("{:.1} MB/s", rate / BYTES_PER_MB);
    add(
        "pcie_upstream",
        ns(r, cap.pcie_bytes_per_s),
        format!(
            "reads at most {} (lanes x generation rate)",
            mb(cap.pcie_bytes_per_s)
        ),
    );
    add(
        "pcie_downstream",
        ns(wr, cap.pcie_bytes_per_s),
        format!("writes at most {}", mb(cap.pcie_bytes_per_s)),
    );
    if let Some((usb, half_duplex)) = cap.usb {
        if half_duplex {
            add(
                "usb",
                ns(r + wr, usb),
                format!("both directions at most {} (half duplex)", mb(usb)),
            );
        } else {
            add("usb_in", ns(r, usb), format!("reads at most {}", mb(usb)));
            add(
                "usb_out",
                ns(wr, usb),
                format!("writes at most {}", mb(usb)),
            );
        }
    }
    if let Some(bridge) = cap.bridge_bytes_per_s {
        add(
            "bridge_data",
            ns(r + wr, bridge),
            format!("at most {} (data_rate_mb_s)", mb(bridge)),
        );
    }
    add(
        "sata_link",
        ns(r + wr, cap.sata_bytes_per_s),
        format!("at most {} (one FIS at a time)", mb(cap.sata_bytes_per_s)),
    );
}

/// Per-command costs on serial resources (one calendar each): host CPU, controller, bridge
/// firmware. Returns the least (read, write) command counts.
fn per_command_bounds(
    spec: &StackSpec,
    w: &Workload,
    m: &Measured,
    add: &mut impl FnMut(&str, f64, String),
) -> (u64, u64) {
    let block = u64::from(w.block_bytes);
    let reads = commands_at_least(spec, w, m.reads);
    let writes = commands_at_least(spec, w, m.writes);
    let commands = reads + writes;
    let host = &spec.host;
    let interrupt = spec.controller.interrupt_cpu_ns;
    // Without chained transfers the driver maps the buffer before the command goes out:
    // `cpu_ns_per_kib` per KiB started, counted here per request as whole KiB only.
    let per_kib = if host.chains_transfers {
        0
    } else {
        host.cpu_ns_per_kib
    };
    let host_cpu = commands * (host.submit_cpu_ns + interrupt + host.complete_cpu_ns)
        + (m.reads + m.writes) * (block / KIB) * per_kib;
    add(
        "host_cpu",
        host_cpu as f64,
        format!(
            "{commands} commands x (submit {} + interrupt {interrupt} + complete {} ns) + \
             {per_kib} ns/KiB",
            host.submit_cpu_ns, host.complete_cpu_ns
        ),
    );
    let c = &spec.controller;
    let descriptors = block.div_ceil(u64::from(c.max_descriptor_bytes));
    // The chip's own data path (`data_path_mb_s`, 0: none): every payload byte passes it.
    let data_path_ns = match c.data_path_mb_s {
        0 => 0,
        mb_s => (m.reads + m.writes) * block * 1000 / mb_s,
    };
    add(
        "controller",
        ((m.reads + m.writes) * descriptors * c.per_descriptor_ns
            + commands * c.per_transfer_ns
            + data_path_ns) as f64,
        format!(
            "{commands} data transfers x {} ns + {descriptors} descriptors each x {} ns + \
             {data_path_ns} ns of data path ({} MB/s)",
            c.per_transfer_ns, c.per_descriptor_ns, c.data_path_mb_s
        ),
    );
    if let Some(b) = &spec.bridge {
        let fw = b.firmware_command_ns + b.firmware_status_ns;
        add(
            "bridge_cpu",
            (commands * fw) as f64,
            format!("{commands} commands x {fw} ns of firmware (IOPS <= 1 / firmware time)"),
        );
    }
    (reads, writes)
}

/// The simple model has no cache: its media path carries reads at `read_rate_mb_s` and writes
/// at `write_rate_mb_s`, and every command holds one of `parallel_units` for its command time.
fn simple_drive_bounds(
    p: &SimpleDriveProfile,
    m: &Measured,
    reads: u64,
    writes: u64,
    add: &mut impl FnMut(&str, f64, String),
) {
    let read_rate = p.read_rate_mb_s as f64 * BYTES_PER_MB;
    let write_rate = p.write_rate_mb_s as f64 * BYTES_PER_MB;
    add(
        "drive_media",
        (m.read_bytes as f64 / read_rate + m.write_bytes as f64 / write_rate) * NS_PER_S,
        format!(
            "reads at {} MB/s and writes at {} MB/s share the media path",
            p.read_rate_mb_s, p.write_rate_mb_s
        ),
    );
    add(
        "drive_units",
        (reads * p.read_command_ns + writes * p.write_command_ns) as f64
            / f64::from(p.parallel_units),
        format!(
            "command times {} / {} ns over {} units",
            p.read_command_ns, p.write_command_ns, p.parallel_units
        ),
    );
}

/// The SSD's firmware runs each command on one of its cores; reads of mapped pages that are not
/// in the write buffer cross a NAND channel (read-ahead reads cross one too); a write enters
/// the buffer only when a page leaves it, programmed. The compression ratio shrinks what
/// crosses the channels.
fn ssd_bounds(
    p: &SsdProfile,
    w: &Workload,
    m: &Measured,
    commands: u64,
    add: &mut impl FnMut(&str, f64, String),
) {
    add(
        "drive_cpu",
        (commands * p.command_cpu_ns) as f64 / f64::from(p.controller_cores),
        format!(
            "{commands} commands x {} ns on {} cores",
            p.command_cpu_ns, p.controller_cores
        ),
    );
    let (read_rate, program_rate) = ssd_nand_bytes_per_s(p);
    let buffer = u64::from(p.write_buffer_pages) * u64::from(LOGICAL_PAGE_BYTES);
    let ratio = m.compression_ratio.max(1.0);
    if w.precondition && w.reads_only() {
        // The fill wrote the region in order and the phase writes nothing, so the buffer holds
        // the region's last pages throughout: reads that end before them cross a channel.
        let buffered_from = w.region_bytes.saturating_sub(buffer);
        let block = u64::from(w.block_bytes);
        let from_nand = m
            .read_offsets
            .iter()
            .filter(|&&offset| offset + block <= buffered_from)
            .count() as u64
            * block;
        add(
            "nand_read",
            from_nand as f64 / ratio / read_rate * NS_PER_S,
            format!(
                "{} channels x {} MB/s for {} KiB of reads outside the last {} KiB written \
                 (the write buffer)",
                p.channels,
                p.channel_rate_mb_s,
                from_nand / KIB,
                buffer / KIB
            ),
        );
    }
    if w.writes_only() {
        let nand = (m.write_bytes as f64 / ratio - buffer as f64).max(0.0);
        add(
            "nand_program",
            nand / program_rate * NS_PER_S,
            format!(
                "{:.1} MB/s of programs (channels, dies x planes x page per program time), \
                 less the {} KiB write buffer",
                program_rate / BYTES_PER_MB,
                buffer / KIB
            ),
        );
    }
}

/// A sequential phase over a region larger than the HDD's cache cannot beat the outer zone's
/// media rate by more than what the cache holds per pass (even an ideal cache keeps at most its
/// size of a cyclic stream); random phases may hit a cache repeatedly and get no media bound.
fn hdd_bounds(p: &HddProfile, w: &Workload, m: &Measured, add: &mut impl FnMut(&str, f64, String)) {
    let outer = hdd_outer_bytes_per_s(p);
    let block = u64::from(w.block_bytes);
    if w.random {
        return;
    }
    if w.reads_only() {
        let cache = hdd_read_cache_bytes(p, block);
        // The fill (writes) may leave its data in the write-back cache.
        let written = if w.precondition {
            hdd_write_cache_bytes(p, block)
        } else {
            0
        };
        let allowance = cache * w.wraps() + written;
        add(
            "hdd_media_read",
            m.read_bytes.saturating_sub(allowance) as f64 / outer * NS_PER_S,
            format!(
                "outer zone {:.1} MB/s ({} sectors per track at {} rpm), less {} KiB of cache \
                 per pass after the first",
                outer / BYTES_PER_MB,
                p.outer_sectors_per_track,
                p.rpm,
                cache / KIB
            ),
        );
    }
    if w.writes_only() {
        let cache = hdd_write_cache_bytes(p, block);
        let allowance = cache * (w.wraps() + 1);
        add(
            "hdd_media_write",
            m.write_bytes.saturating_sub(allowance) as f64 / outer * NS_PER_S,
            format!(
                "outer zone {:.1} MB/s, less {} KiB of write-back cache per pass",
                outer / BYTES_PER_MB,
                cache / KIB
            ),
        );
    }
}

/// The least latency of one request of `op`: the host's CPU before and after it, the bridge's
/// firmware, the drive's fixed command time, and its bytes (one command's worth) through the
/// slowest layer of the path. A write's firmware may overlap its data (a BOT bridge buffers
/// the data phase), so only the larger of the two counts.
pub(super) fn min_latency_ns(spec: &StackSpec, w: &Workload, write: bool) -> (f64, String) {
    let cap = PathCapacity::of(spec);
    let piece = u64::from(w.block_bytes).min(max_transfer_bytes(spec));
    let host = &spec.host;
    let map_ns = if host.chains_transfers {
        0
    } else {
        host.cpu_ns_per_kib * piece.div_ceil(KIB)
    };
    let host_ns =
        host.submit_cpu_ns + map_ns + spec.controller.interrupt_cpu_ns + host.complete_cpu_ns;
    let (fw_command, fw_status) = spec
        .bridge
        .as_ref()
        .map_or((0, 0), |b| (b.firmware_command_ns, b.firmware_status_ns));
    let mut slowest = cap.slowest_bytes_per_s();
    if let DriveProfile::Simple(p) = &spec.drive {
        // No cache: the media rate is on every path.
        let media = if write {
            p.write_rate_mb_s
        } else {
            p.read_rate_mb_s
        };
        slowest = slowest.min(media as f64 * BYTES_PER_MB);
    }
    let data_ns = piece as f64 / slowest * NS_PER_S;
    let drive_ns = drive_fixed_ns(&spec.drive, write);
    let front = if write {
        data_ns.max(fw_command as f64)
    } else {
        data_ns + fw_command as f64
    };
    let total = (host_ns + fw_status + drive_ns) as f64 + front;
    let why = format!(
        "host {host_ns} ns + bridge firmware {fw_command}/{fw_status} ns + drive {drive_ns} ns + \
         {piece} B at {:.1} MB/s",
        slowest / BYTES_PER_MB
    );
    (total, why)
}

/// Every violation of the invariants by one case, as lines for the failure message.
pub(super) fn violations(spec: &StackSpec, w: &Workload, m: &Measured) -> Vec<String> {
    let mut out = Vec::new();
    let commands = (m.reads + m.writes) as f64;
    let slack_ns = m.elapsed_ns as f64 * RATE_TOLERANCE + commands * ROUNDING_NS_PER_COMMAND;
    let elapsed = m.elapsed_ns as f64;
    let mb_s = (m.read_bytes + m.write_bytes) as f64 / elapsed.max(1.0) * 1e3;
    for b in bounds(spec, w, m) {
        if elapsed + slack_ns < b.min_elapsed_ns {
            out.push(format!(
                "{}: took {:.3} ms ({mb_s:.1} MB/s, {:.0} IOPS) but needs at least {:.3} ms: {}",
                b.layer,
                elapsed / 1e6,
                commands / elapsed * NS_PER_S,
                b.min_elapsed_ns / 1e6,
                b.why
            ));
        }
    }
    for (write, min) in [(false, m.min_read_ns), (true, m.min_write_ns)] {
        let Some(min) = min else { continue };
        let (least, why) = min_latency_ns(spec, w, write);
        if (min as f64) + ROUNDING_NS_PER_COMMAND < least {
            out.push(format!(
                "{} latency {min} ns is below the path's least {least:.0} ns: {why}",
                if write { "write" } else { "read" }
            ));
        }
    }
    for (cache, held, capacity) in &m.cache_overflows {
        out.push(format!(
            "drive cache {cache} held {held} bytes, more than its {capacity}"
        ));
    }
    out
}
