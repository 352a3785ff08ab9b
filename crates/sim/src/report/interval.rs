//! The report of one interval of a session: a job measured after its state preparation (or
//! after earlier jobs on the same stack) is described by the differences of the session's
//! cumulative counters between the report taken before it and the one taken after, so its
//! elapsed time, layer utilisation, bottleneck and diagnosis are its own.

use super::{busiest, LayerReport, SimReport, SizeCount, LAYER_HOST_CPU};
use crate::drive::{DriveModelReport, HddReport, MergeReport, SsdReport};
use crate::fault::FaultCounts;

impl SimReport {
    /// The report of the part of the session after `before` (a report of the same session,
    /// taken earlier; `None`: the whole session). Counters, busy times and the elapsed time are
    /// differences, utilisation and the bottleneck are recomputed over the interval, the
    /// warnings are [`SimReport::warnings_since`]'s. What describes the drive's state rather
    /// than what it did (free blocks, mapped pages, cache sizes, the payload store's size and
    /// the written bytes it could not keep, which a later read-back misses whichever job wrote
    /// them) is the state at the interval's end.
    pub fn since(&self, before: Option<&SimReport>) -> SimReport {
        let Some(before) = before else {
            return self.clone();
        };
        let elapsed_ns = self.elapsed_ns.saturating_sub(before.elapsed_ns);
        let layers = self.layers_since(Some(before));
        let (bottleneck, bottleneck_utilisation) = busiest(&layers);
        let host_cpu_percent = layers
            .iter()
            .find(|l| l.name == LAYER_HOST_CPU)
            .map_or(0.0, |l| {
                l.utilisation * 100.0 / f64::from(self.host_cpu_threads.max(1))
            });
        let d = |now: u64, then: u64| now.saturating_sub(then);
        SimReport {
            elapsed_ns,
            layers,
            bottleneck,
            bottleneck_utilisation,
            host_cpu_percent,
            host_requests: d(self.host_requests, before.host_requests),
            rejected_requests: d(self.rejected_requests, before.rejected_requests),
            commands: d(self.commands, before.commands),
            merged_requests: d(self.merged_requests, before.merged_requests),
            driver_buffer_reads: d(self.driver_buffer_reads, before.driver_buffer_reads),
            bytes_read: d(self.bytes_read, before.bytes_read),
            bytes_written: d(self.bytes_written, before.bytes_written),
            drive_io_sizes: sizes_since(&self.drive_io_sizes, &before.drive_io_sizes),
            trims_to_drive: d(self.trims_to_drive, before.trims_to_drive),
            trims_not_translated: d(self.trims_not_translated, before.trims_not_translated),
            flushes_to_drive: d(self.flushes_to_drive, before.flushes_to_drive),
            drive: drive_since(&self.drive, &before.drive),
            warnings: self
                .warnings_since(Some(before))
                .iter()
                .map(ToString::to_string)
                .collect(),
            faults: self
                .faults
                .as_ref()
                .map(|now| faults_since(now, before.faults.as_ref())),
            ..self.clone()
        }
    }
}

impl SimReport {
    /// Every layer's busy time, operations and bytes after `before` (`None`: the whole
    /// session), its utilisation over that interval.
    pub(super) fn layers_since(&self, before: Option<&SimReport>) -> Vec<LayerReport> {
        let elapsed_ns = self
            .elapsed_ns
            .saturating_sub(before.map_or(0, |b| b.elapsed_ns));
        let ratio = |busy_ns: u64| busy_ns as f64 / elapsed_ns.max(1) as f64;
        self.layers
            .iter()
            .map(|layer| {
                let then = before.and_then(|b| b.layer(&layer.name));
                let busy_ns = layer.busy_ns.saturating_sub(then.map_or(0, |l| l.busy_ns));
                LayerReport {
                    name: layer.name.clone(),
                    busy_ns,
                    utilisation: ratio(busy_ns),
                    operations: layer
                        .operations
                        .saturating_sub(then.map_or(0, |l| l.operations)),
                    bytes: layer.bytes.saturating_sub(then.map_or(0, |l| l.bytes)),
                }
            })
            .collect()
    }
}

/// The transfer sizes the drive saw in the interval, sizes it did not see left out.
fn sizes_since(now: &[SizeCount], then: &[SizeCount]) -> Vec<SizeCount> {
    now.iter()
        .map(|s| SizeCount {
            size_bytes: s.size_bytes,
            count: s.count.saturating_sub(
                then.iter()
                    .find(|t| t.size_bytes == s.size_bytes)
                    .map_or(0, |t| t.count),
            ),
        })
        .filter(|s| s.count > 0)
        .collect()
}

/// The drive model's counters over the interval, its state (free blocks, mapped pages, cache
/// sizes) at the interval's end.
fn drive_since(now: &DriveModelReport, then: &DriveModelReport) -> DriveModelReport {
    match (now, then) {
        (DriveModelReport::Ssd(now), DriveModelReport::Ssd(then)) => {
            DriveModelReport::Ssd(ssd_since(now, then))
        }
        (DriveModelReport::Hdd(now), DriveModelReport::Hdd(then)) => {
            DriveModelReport::Hdd(HddReport {
                seeks: now.seeks.saturating_sub(then.seeks),
                seek_ns_total: now.seek_ns_total.saturating_sub(then.seek_ns_total),
                rotational_wait_ns_total: now
                    .rotational_wait_ns_total
                    .saturating_sub(then.rotational_wait_ns_total),
                head_switches: now.head_switches.saturating_sub(then.head_switches),
                read_cache_hits: now.read_cache_hits.saturating_sub(then.read_cache_hits),
                write_cache_absorbed: now
                    .write_cache_absorbed
                    .saturating_sub(then.write_cache_absorbed),
                reordered_reads: now.reordered_reads.saturating_sub(then.reordered_reads),
                reordered_destages: now
                    .reordered_destages
                    .saturating_sub(then.reordered_destages),
            })
        }
        _ => now.clone(),
    }
}

/// An SSD's FTL figures over the interval: pages written and programmed, GC copies, erases
/// and merges are differences, write amplification is the interval's own.
fn ssd_since(now: &SsdReport, then: &SsdReport) -> SsdReport {
    let host_pages_written = now
        .host_pages_written
        .saturating_sub(then.host_pages_written);
    let nand_pages_programmed = (now.nand_pages_programmed - then.nand_pages_programmed).max(0.0);
    SsdReport {
        host_pages_written,
        nand_pages_programmed,
        write_amplification: if host_pages_written > 0 {
            nand_pages_programmed / host_pages_written as f64
        } else {
            0.0
        },
        gc_copies: now.gc_copies.saturating_sub(then.gc_copies),
        read_modify_writes: now
            .read_modify_writes
            .saturating_sub(then.read_modify_writes),
        erases_total: now.erases_total.saturating_sub(then.erases_total),
        trimmed_pages: now.trimmed_pages.saturating_sub(then.trimmed_pages),
        merges: now.merges.as_ref().map(|m| {
            let t = then.merges.clone().unwrap_or_default();
            MergeReport {
                switch: m.switch.saturating_sub(t.switch),
                partial: m.partial.saturating_sub(t.partial),
                full: m.full.saturating_sub(t.full),
            }
        }),
        ..now.clone()
    }
}

/// The faults injected and recovered in the interval (a plan's counts are the session's).
fn faults_since(now: &FaultCounts, then: Option<&FaultCounts>) -> FaultCounts {
    let Some(then) = then else {
        return now.clone();
    };
    let d = |a: u64, b: u64| a.saturating_sub(b);
    FaultCounts {
        usb_crc_retries: d(now.usb_crc_retries, then.usb_crc_retries),
        injected: d(now.injected, then.injected),
        retried: d(now.retried, then.retried),
        reported: d(now.reported, then.reported),
        bot_resets: d(now.bot_resets, then.bot_resets),
        uas_aborts: d(now.uas_aborts, then.uas_aborts),
        uas_lu_resets: d(now.uas_lu_resets, then.uas_lu_resets),
        uas_it_nexus_resets: d(now.uas_it_nexus_resets, then.uas_it_nexus_resets),
        uas_bot_fallbacks: d(now.uas_bot_fallbacks, then.uas_bot_fallbacks),
        device_resets: d(now.device_resets, then.device_resets),
        bridge_resets: d(now.bridge_resets, then.bridge_resets),
        disconnects: d(now.disconnects, then.disconnects),
        devices_removed: d(now.devices_removed, then.devices_removed),
        request_senses: d(now.request_senses, then.request_senses),
        read_log_exts: d(now.read_log_exts, then.read_log_exts),
        comresets: d(now.comresets, then.comresets),
        sata_aborted: d(now.sata_aborted, then.sata_aborted),
        power_losses: d(now.power_losses, then.power_losses),
        lost_writes: d(now.lost_writes, then.lost_writes),
        lost_bytes: d(now.lost_bytes, then.lost_bytes),
        not_ready: d(now.not_ready, then.not_ready),
        unit_attentions: d(now.unit_attentions, then.unit_attentions),
    }
}
