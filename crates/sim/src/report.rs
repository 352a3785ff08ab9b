//! The simulator's report: per layer busy time, utilisation, operations and bytes; the I/O
//! sizes that reached the drive; host CPU use; which layer was the bottleneck; and warnings
//! such as request merging that makes a small-block test measure something else.

use crate::counters::Counters;
use crate::cx::layer;
use crate::drive::{Drive, DriveModelReport};
use crate::profile::StackSpec;
use crate::resource::Calendar;
use crate::store::Store;
use crate::transport::Transport;
use serde::Serialize;
use std::fmt;

mod interval;

/// Engine-report key: written bytes the payload store did not keep (its budget was full).
pub const DETAIL_PAYLOAD_DROPPED_BYTES: &str = "sim.payload_dropped_bytes";

/// The layer that models the host CPU running the driver (`cx.rs` names the layers).
pub use crate::cx::LAYER_HOST_CPU;

/// Below this utilisation the busiest layer is not called saturated.
pub const SATURATED_UTILISATION: f64 = 0.8;

/// A warning the simulator raises about a run: the drive did not see what the host asked for,
/// a command did not do what the host meant, or the stack ran differently from its profile.
/// Its text (`Display`) is what reports print; [`SimWarning::kind`] names it for code and tests.
#[derive(Clone, Debug, PartialEq)]
pub enum SimWarning {
    /// No layer was near saturation: throughput was bound by per-command latency.
    LatencyBound {
        busiest_layer: String,
        /// That layer's busy time over the elapsed time, 0..=1.
        utilisation: f64,
    },
    /// The host driver merged requests into larger commands, or answered reads from its own
    /// read-ahead: the drive saw other I/O than the job issued.
    MergedRequests {
        merged_requests: u64,
        driver_buffer_reads: u64,
        /// The largest transfer that reached the drive.
        largest_drive_bytes: u32,
        /// Smallest and largest host request, when known (the session's counters).
        request_bytes: Option<(u32, u32)>,
    },
    /// The bridge dropped SCSI UNMAP instead of translating it to ATA TRIM.
    TrimsNotTranslated { unmaps: u64 },
    /// The host did not use the transport its profile names (UAS → BOT): why.
    TransportFallback { reason: String },
    /// Host writes that covered a logical page only partly (smaller than it, or misaligned)
    /// the SSD served by reading the page first.
    ReadModifyWrite { partial_page_writes: u64 },
}

impl SimWarning {
    /// A stable name for the warning's kind (`latency-bound`, `merged-requests`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            SimWarning::LatencyBound { .. } => "latency-bound",
            SimWarning::MergedRequests { .. } => "merged-requests",
            SimWarning::TrimsNotTranslated { .. } => "trims-not-translated",
            SimWarning::TransportFallback { .. } => "transport-fallback",
            SimWarning::ReadModifyWrite { .. } => "read-modify-write",
        }
    }
}

impl fmt::Display for SimWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimWarning::LatencyBound {
                busiest_layer,
                utilisation,
            } => write!(
                f,
                "no layer is saturated (busiest: {busiest_layer} at {:.0}%): throughput is bound \
                 by per-command latency and round trips, so more outstanding commands (where the \
                 protocol allows them) would raise it",
                utilisation * 100.0
            ),
            SimWarning::MergedRequests {
                merged_requests,
                driver_buffer_reads,
                largest_drive_bytes,
                request_bytes,
            } => {
                write!(
                    f,
                    "the host driver merged {merged_requests} requests into larger commands"
                )?;
                if *driver_buffer_reads > 0 {
                    write!(
                        f,
                        " and served {driver_buffer_reads} reads from its own read-ahead"
                    )?;
                }
                write!(f, " (drive saw up to {largest_drive_bytes} bytes")?;
                if let Some((min, max)) = request_bytes {
                    write!(f, " while requests were {min}..={max} bytes")?;
                }
                write!(
                    f,
                    "): results reflect the merged size, not the requested one"
                )
            }
            SimWarning::TrimsNotTranslated { unmaps } => write!(
                f,
                "{unmaps} UNMAP commands were not translated to TRIM by the bridge: the drive \
                 never learned those blocks are free"
            ),
            SimWarning::TransportFallback { reason } => write!(
                f,
                "the stack did not run the transport its host profile names: {reason}"
            ),
            SimWarning::ReadModifyWrite {
                partial_page_writes,
            } => write!(
                f,
                "{partial_page_writes} writes covered a 4 KiB logical page only partly (smaller \
                 than it or misaligned) and the SSD read the page before programming it: write \
                 figures include that read-modify-write"
            ),
        }
    }
}

/// One layer's share of the run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LayerReport {
    pub name: String,
    pub busy_ns: u64,
    /// busy / elapsed, 0..=1 (a layer with several units reports its average unit).
    pub utilisation: f64,
    pub operations: u64,
    pub bytes: u64,
}

/// One I/O size that reached the drive.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SizeCount {
    pub size_bytes: u32,
    pub count: u64,
}

/// Everything the simulator reports about a session.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SimReport {
    pub stack: String,
    /// The transport that ran (after fallbacks).
    pub transport: String,
    pub fallback: Option<String>,
    pub max_outstanding_commands: u32,
    pub elapsed_ns: u64,
    pub layers: Vec<LayerReport>,
    /// The layer with the highest utilisation.
    pub bottleneck: String,
    /// That layer's utilisation; well below 1 means no layer is saturated and the stack is
    /// latency-bound (commands wait on round trips, not on bandwidth).
    pub bottleneck_utilisation: f64,
    /// Host CPU busy time over elapsed time, in percent of the whole CPU (`cpu_threads`).
    pub host_cpu_percent: f64,
    /// Hardware threads the host CPU has (the host profile's `cpu_threads`): layer busy times
    /// are of one thread, `host_cpu_percent` is of them all.
    pub host_cpu_threads: u32,
    pub host_requests: u64,
    pub rejected_requests: u64,
    pub commands: u64,
    pub merged_requests: u64,
    /// Reads the host driver answered from its own read-ahead, without a command
    /// (`driver_buffer.rs`): like merged requests, what the drive saw is not what was asked.
    pub driver_buffer_reads: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub drive_io_sizes: Vec<SizeCount>,
    pub trims_to_drive: u64,
    pub trims_not_translated: u64,
    /// Cache flushes the drive carried out (SYNCHRONIZE CACHE / FLUSH CACHE EXT); absent when
    /// none, so the reports of runs without flushes are unchanged.
    #[serde(skip_serializing_if = "no_flushes")]
    pub flushes_to_drive: u64,
    pub stored_bytes: u64,
    /// Written bytes the payload store did not keep, its memory budget being full (session
    /// total): reading them returns zeros.
    pub payload_dropped_bytes: u64,
    /// The drive model's own figures (SSD: write amplification, GC, erases, free blocks; HDD:
    /// seeks, rotational waits, cache hits, NCQ reorders).
    pub drive: DriveModelReport,
    /// The session's [`SimWarning`]s as text: latency-bound, merged requests, UNMAPs not
    /// translated (one job's, with the fallback and read-modify-writes: [`SimReport::warnings_since`]).
    pub warnings: Vec<String>,
    /// Injected faults and the host's recovery (`--faults`; absent without a plan, so reports
    /// of runs without one are unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faults: Option<crate::fault::FaultCounts>,
    /// Placed faults of the plan that have not fired so far, in spec form
    /// (`hang@cmd=5000`); absent when none (a run that ends with some left met a plan it
    /// could not take: `storlab run` says so and fails).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unfired_faults: Vec<String>,
    /// The full stack profile, so the result can be reproduced.
    pub stack_profile: StackSpec,
}

impl SimReport {
    /// The layer named `name` (see [`LAYER_HOST_CPU`]), if the stack has it.
    pub fn layer(&self, name: &str) -> Option<&LayerReport> {
        self.layers.iter().find(|l| l.name == name)
    }

    /// The warnings of the part of the session after `before` (the report taken when a job
    /// started; `None`: the whole session), from the differences of the counters, so a job on a
    /// stack kept from earlier jobs is not blamed for their merges or dropped UNMAPs. Besides
    /// what [`SimReport::warnings`] checks it names the transport fallback (every job on the
    /// stack ran over it) and the SSD's read-modify-writes of partial pages. Requests' sizes are
    /// the session's, so merges are described without them.
    pub fn warnings_since(&self, before: Option<&SimReport>) -> Vec<SimWarning> {
        let delta =
            |now: u64, then: fn(&SimReport) -> u64| now.saturating_sub(before.map_or(0, then));
        let mut warnings = Vec::new();
        if let Some(reason) = &self.fallback {
            warnings.push(SimWarning::TransportFallback {
                reason: reason.clone(),
            });
        }
        let commands = delta(self.commands, |b| b.commands);
        warnings.extend(latency_bound(&self.layers_since(before), commands));
        let merged_requests = delta(self.merged_requests, |b| b.merged_requests);
        let driver_buffer_reads = delta(self.driver_buffer_reads, |b| b.driver_buffer_reads);
        if merged_requests > 0 || driver_buffer_reads > 0 {
            let count_before = |size_bytes: u32| {
                before
                    .and_then(|b| b.drive_io_sizes.iter().find(|s| s.size_bytes == size_bytes))
                    .map_or(0, |s| s.count)
            };
            let largest_drive_bytes = self
                .drive_io_sizes
                .iter()
                .filter(|s| s.count > count_before(s.size_bytes))
                .map(|s| s.size_bytes)
                .max()
                .unwrap_or(0);
            warnings.push(SimWarning::MergedRequests {
                merged_requests,
                driver_buffer_reads,
                largest_drive_bytes,
                request_bytes: None,
            });
        }
        let unmaps = delta(self.trims_not_translated, |b| b.trims_not_translated);
        if unmaps > 0 {
            warnings.push(SimWarning::TrimsNotTranslated { unmaps });
        }
        let read_modify_writes = |report: &SimReport| match &report.drive {
            DriveModelReport::Ssd(ssd) => ssd.read_modify_writes,
            _ => 0,
        };
        let partial_page_writes = delta(read_modify_writes(self), read_modify_writes);
        if partial_page_writes > 0 {
            warnings.push(SimWarning::ReadModifyWrite {
                partial_page_writes,
            });
        }
        warnings
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serialises")
    }

    /// Flat key/value lines for a summary table, in a stable order.
    pub fn details(&self) -> Vec<(String, String)> {
        let mut out = vec![
            ("sim.stack".to_string(), self.stack.clone()),
            ("sim.transport".to_string(), self.transport.clone()),
            ("sim.bottleneck".to_string(), self.bottleneck.clone()),
            (
                "sim.bottleneck_utilisation_percent".to_string(),
                format!("{:.1}", self.bottleneck_utilisation * 100.0),
            ),
            (
                "sim.host_cpu_percent".to_string(),
                format!("{:.1}", self.host_cpu_percent),
            ),
            ("sim.commands".to_string(), self.commands.to_string()),
            (
                "sim.merged_requests".to_string(),
                self.merged_requests.to_string(),
            ),
            (
                DETAIL_PAYLOAD_DROPPED_BYTES.to_string(),
                self.payload_dropped_bytes.to_string(),
            ),
        ];
        for l in &self.layers {
            out.push((
                format!("sim.{}.utilisation_percent", l.name),
                format!("{:.1}", l.utilisation * 100.0),
            ));
        }
        let sizes: Vec<String> = self
            .drive_io_sizes
            .iter()
            .map(|s| format!("{}x{}", s.count, s.size_bytes))
            .collect();
        out.push(("sim.drive_io_sizes".to_string(), sizes.join(" ")));
        out.extend(self.drive.pairs());
        if self.flushes_to_drive > 0 {
            out.push((
                "sim.flushes_to_drive".to_string(),
                self.flushes_to_drive.to_string(),
            ));
        }
        if let Some(f) = &self.fallback {
            out.push(("sim.fallback".to_string(), f.clone()));
        }
        for (i, w) in self.warnings.iter().enumerate() {
            out.push((format!("sim.warning.{i}"), w.clone()));
        }
        if let Some(f) = &self.faults {
            for (key, n) in [
                ("injected", f.injected),
                ("retried", f.retried),
                ("reported", f.reported),
                ("usb_crc_retries", f.usb_crc_retries),
                ("bot_resets", f.bot_resets),
                ("uas_aborts", f.uas_aborts),
                ("uas_lu_resets", f.uas_lu_resets),
                ("uas_it_nexus_resets", f.uas_it_nexus_resets),
                ("uas_bot_fallbacks", f.uas_bot_fallbacks),
                ("device_resets", f.device_resets),
                ("bridge_resets", f.bridge_resets),
                ("disconnects", f.disconnects),
                ("devices_removed", f.devices_removed),
                ("request_senses", f.request_senses),
                ("read_log_exts", f.read_log_exts),
                ("comresets", f.comresets),
                ("sata_aborted", f.sata_aborted),
                ("power_losses", f.power_losses),
                ("lost_writes", f.lost_writes),
                ("lost_bytes", f.lost_bytes),
                ("not_ready", f.not_ready),
                ("unit_attentions", f.unit_attentions),
            ] {
                out.push((format!("sim.faults.{key}"), n.to_string()));
            }
        }
        out
    }
}

/// What the report is made of: the simulator's state, read only.
pub(crate) struct ReportParts<'a> {
    pub now_ns: u64,
    pub servers: &'a [Calendar; layer::COUNT],
    /// The stack has a USB bus and bridge (whose layers are shown).
    pub usb: bool,
    /// The USB link is High-Speed (half duplex: one layer for both directions).
    pub high_speed: bool,
    pub transport: Transport,
    pub fallback: Option<&'a str>,
    pub max_outstanding_commands: u32,
    pub drive: &'a dyn Drive,
    pub counters: &'a Counters,
    pub store: &'a Store,
    pub spec: &'a StackSpec,
    pub faults: Option<crate::fault::FaultCounts>,
    pub unfired_faults: Vec<String>,
}

/// The report of everything simulated so far.
pub(crate) fn build(parts: ReportParts) -> SimReport {
    let ReportParts {
        now_ns,
        servers,
        usb,
        high_speed,
        transport,
        fallback,
        max_outstanding_commands,
        drive,
        counters,
        store,
        spec,
        faults,
        unfired_faults,
    } = parts;
    {
        let elapsed = now_ns.max(1);
        let ratio = |busy: u64| busy as f64 / elapsed as f64;
        let mut layers = Vec::new();
        for (i, name) in layer::NAMES.iter().enumerate() {
            let relevant = match i {
                layer::USB_OUT | layer::BRIDGE_CPU | layer::BRIDGE_DATA => usb,
                layer::USB_IN => usb && !high_speed,
                _ => true,
            };
            if !relevant {
                continue;
            }
            let s = &servers[i];
            let name = if i == layer::USB_OUT && high_speed {
                "usb_half_duplex"
            } else {
                name
            };
            layers.push(LayerReport {
                name: name.to_string(),
                busy_ns: s.busy_ns,
                utilisation: ratio(s.busy_ns),
                operations: s.operations,
                bytes: s.bytes,
            });
        }
        let d = drive.stats();
        layers.push(LayerReport {
            name: "drive".to_string(),
            busy_ns: d.busy_ns,
            utilisation: ratio(d.busy_ns),
            operations: d.commands,
            bytes: d.bytes,
        });
        if let Some(p) = drive.processor_stats() {
            // Several cores report their average, as other layers with several units do.
            let busy_ns = p.busy_ns / u64::from(p.cores.max(1));
            layers.push(LayerReport {
                name: "drive_cpu".to_string(),
                busy_ns,
                utilisation: ratio(busy_ns),
                operations: p.operations,
                bytes: 0,
            });
        }
        let (bottleneck, bottleneck_utilisation) = busiest(&layers);
        let c = counters;
        let mut warnings = Vec::new();
        warnings.extend(latency_bound(&layers, c.commands));
        if c.merged_requests > 0 || c.driver_buffer_reads > 0 {
            warnings.push(SimWarning::MergedRequests {
                merged_requests: c.merged_requests,
                driver_buffer_reads: c.driver_buffer_reads,
                largest_drive_bytes: c.drive_io_sizes.keys().next_back().copied().unwrap_or(0),
                request_bytes: Some((c.host_size_min, c.host_size_max)),
            });
        }
        if c.trims_not_translated > 0 {
            warnings.push(SimWarning::TrimsNotTranslated {
                unmaps: c.trims_not_translated,
            });
        }
        let warnings = warnings.iter().map(SimWarning::to_string).collect();
        let dropped = store.dropped_bytes();
        SimReport {
            stack: spec.name.clone(),
            transport: transport.name().to_string(),
            fallback: fallback.map(str::to_string),
            max_outstanding_commands,
            elapsed_ns: now_ns,
            host_cpu_percent: ratio(servers[layer::HOST_CPU].busy_ns) * 100.0
                / f64::from(spec.host.cpu_threads),
            host_cpu_threads: spec.host.cpu_threads,
            layers,
            bottleneck,
            bottleneck_utilisation,
            host_requests: c.host_requests,
            rejected_requests: c.rejected_requests,
            commands: c.commands,
            merged_requests: c.merged_requests,
            driver_buffer_reads: c.driver_buffer_reads,
            bytes_read: c.bytes_read,
            bytes_written: c.bytes_written,
            drive_io_sizes: c
                .drive_io_sizes
                .iter()
                .map(|(&size_bytes, &count)| SizeCount { size_bytes, count })
                .collect(),
            trims_to_drive: c.trims_to_drive,
            trims_not_translated: c.trims_not_translated,
            flushes_to_drive: c.flushes_to_drive,
            stored_bytes: store.stored_bytes(),
            payload_dropped_bytes: dropped,
            faults,
            unfired_faults,
            drive: drive.model_report(),
            warnings,
            stack_profile: spec.clone(),
        }
    }
}

/// The latency-bound diagnosis of an interval whose layers are `layers`: commands ran
/// (`commands`) and no layer was near saturation (every one below [`SATURATED_UTILISATION`]).
fn latency_bound(layers: &[LayerReport], commands: u64) -> Option<SimWarning> {
    let (busiest_layer, utilisation) = busiest(layers);
    (commands > 0 && utilisation < SATURATED_UTILISATION).then_some(SimWarning::LatencyBound {
        busiest_layer,
        utilisation,
    })
}

/// The layer with the highest utilisation and that utilisation (the first of equals): the
/// bottleneck.
fn busiest(layers: &[LayerReport]) -> (String, f64) {
    layers
        .iter()
        .fold(None::<&LayerReport>, |best, l| match best {
            Some(b) if b.utilisation >= l.utilisation => Some(b),
            _ => Some(l),
        })
        .map(|l| (l.name.clone(), l.utilisation))
        .unwrap_or_default()
}

/// `flushes_to_drive` is left out of a report without flushes.
fn no_flushes(flushes: &u64) -> bool {
    *flushes == 0
}
