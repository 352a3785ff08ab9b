//! The simulator's report: per layer busy time, utilisation, operations and bytes; the I/O
//! sizes that reached the drive; host CPU use; which layer was the bottleneck; and warnings
//! such as request merging that makes a small-block test measure something else.

use crate::cx::layer;
use crate::drive::{Drive, DriveModelReport};
use crate::profile::StackSpec;
use crate::resource::Calendar;
use crate::sim::{Counters, Transport};
use crate::store::Store;
use serde::Serialize;

/// Engine-report key: written bytes the payload store did not keep (its budget was full).
pub const DETAIL_PAYLOAD_DROPPED_BYTES: &str = "sim.payload_dropped_bytes";

/// The layer that models the host CPU running the driver (its busy time is of one thread).
pub const LAYER_HOST_CPU: &str = "host_cpu";

/// Below this utilisation the busiest layer is not called saturated.
pub const SATURATED_UTILISATION: f64 = 0.8;

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
    pub stored_bytes: u64,
    /// Written bytes the payload store did not keep, its memory budget being full (session
    /// total): reading them returns zeros.
    pub payload_dropped_bytes: u64,
    /// The drive model's own figures (SSD: write amplification, GC, erases, free blocks; HDD:
    /// seeks, rotational waits, cache hits, NCQ reorders).
    pub drive: DriveModelReport,
    pub warnings: Vec<String>,
    /// Injected faults and the host's recovery (`--faults`; absent without a plan, so reports
    /// of runs without one are unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faults: Option<crate::fault::FaultCounts>,
    /// The full stack profile, so the result can be reproduced.
    pub stack_profile: StackSpec,
}

impl SimReport {
    /// The layer named `name` (see [`LAYER_HOST_CPU`]), if the stack has it.
    pub fn layer(&self, name: &str) -> Option<&LayerReport> {
        self.layers.iter().find(|l| l.name == name)
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
                ("request_senses", f.request_senses),
                ("read_log_exts", f.read_log_exts),
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
        let (bottleneck, bottleneck_utilisation) = layers
            .iter()
            .fold(None::<&LayerReport>, |best, l| match best {
                Some(b) if b.utilisation >= l.utilisation => Some(b),
                _ => Some(l),
            })
            .map(|l| (l.name.clone(), l.utilisation))
            .unwrap_or_default();
        let c = counters;
        let mut warnings = Vec::new();
        if c.commands > 0 && bottleneck_utilisation < SATURATED_UTILISATION {
            warnings.push(format!(
                "no layer is saturated (busiest: {bottleneck} at {:.0}%): throughput is bound by \
                 per-command latency and round trips, so more outstanding commands (where the \
                 protocol allows them) would raise it",
                bottleneck_utilisation * 100.0
            ));
        }
        if c.merged_requests > 0 || c.driver_buffer_reads > 0 {
            let largest = c.drive_io_sizes.keys().next_back().copied().unwrap_or(0);
            let read_ahead = if c.driver_buffer_reads > 0 {
                format!(
                    " and served {} reads from its own read-ahead",
                    c.driver_buffer_reads
                )
            } else {
                String::new()
            };
            warnings.push(format!(
                "the host driver merged {} requests into larger commands{read_ahead} (drive saw \
                 up to {} bytes while requests were {}..={} bytes): results reflect the merged \
                 size, not the requested one",
                c.merged_requests, largest, c.host_size_min, c.host_size_max
            ));
        }
        if c.trims_not_translated > 0 {
            warnings.push(format!(
                "{} UNMAP commands were not translated to TRIM by the bridge: the drive never \
                 learned those blocks are free",
                c.trims_not_translated
            ));
        }
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
            stored_bytes: store.stored_bytes(),
            payload_dropped_bytes: dropped,
            faults,
            drive: drive.model_report(),
            warnings,
            stack_profile: spec.clone(),
        }
    }
}
