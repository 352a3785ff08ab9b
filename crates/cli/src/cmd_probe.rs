//! `storlab probe [PATH]`: what a file, directory or block device really is — mount, driver
//! chain, USB link and bridge, controller and PCIe link, queue limits, what the device answers —
//! and what that implies for a measurement. Read-only; needs no `--destructive`.

use crate::args::{ProbeArgs, ProbeFormat};
use crate::exit::{bad_input, Failure};
use std::fmt::Write;
use storlab_engine::probe::query::{Answer, DeviceQuery, VpdFacts};
use storlab_engine::probe::{
    DeviceFacts, PciFacts, ProbeReport, Prober, QueueFacts, SysRoot, UsbFacts,
};
use storlab_report::escape_control;

/// Version of the JSON document `probe --output-format json` prints (docs/probe.md).
pub const PROBE_SCHEMA_VERSION: u32 = 1;

pub fn run(args: ProbeArgs) -> Result<(), Failure> {
    let mut prober = Prober::default();
    if let Some(dir) = &args.sys_root {
        if !dir.join("block").is_dir() {
            return Err(bad_input(format!(
                "--sys-root {}: no block/ directory there",
                dir.display()
            )));
        }
        prober.sys = SysRoot::new(dir);
        prober.query_device = false;
    }
    let reports = match (&args.path, &args.sys_root) {
        (None, _) => prober.probe_all(),
        (Some(path), Some(_)) => prober
            .probe_block_name(&path.to_string_lossy())
            .map(|r| vec![r]),
        (Some(path), None) => prober.probe_path(path).map(|r| vec![r]),
    }
    .map_err(|e| bad_input(format!("probe {e}")))?;
    let text = match args.output_format {
        ProbeFormat::Table => reports
            .iter()
            .map(render_table)
            .collect::<Vec<_>>()
            .join("\n"),
        ProbeFormat::Json => to_json(&reports),
    };
    crate::output::print(&text)
}

/// The JSON document: `{"schema_version": 1, "probes": [ProbeReport, ...]}`.
pub fn to_json(reports: &[ProbeReport]) -> String {
    let doc = serde_json::json!({
        "schema_version": PROBE_SCHEMA_VERSION,
        "probes": reports,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

fn opt<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or("-".to_string(), |v| v.to_string())
}

fn row(out: &mut String, indent: &str, key: &str, value: &str) {
    let _ = writeln!(out, "{indent}{key:<18}{}", escape_control(value));
}

fn size_text(bytes: u64) -> String {
    const GB: f64 = 1e9;
    format!("{:.1} GB ({bytes} bytes)", bytes as f64 / GB)
}

/// The USB rows: link speed, ids and protocol, the product, the bridge.
fn usb_rows(out: &mut String, usb: &UsbFacts, indent: &str) {
    let ids = match (usb.vendor_id, usb.product_id) {
        (Some(v), Some(p)) => format!("{v:04x}:{p:04x}"),
        _ => "-".into(),
    };
    let protocol = match (&usb.protocol, usb.interface_protocol) {
        (Some(name), Some(code)) => format!("{name} (bInterfaceProtocol {code:#04x})"),
        _ => "-".into(),
    };
    row(
        out,
        indent,
        "usb",
        &format!("{} Mb/s, {ids}, {protocol}", opt(usb.speed_mbps)),
    );
    let product = [usb.manufacturer.as_deref(), usb.product.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    if !product.is_empty() {
        row(out, indent, "usb product", &product);
    }
    match &usb.bridge {
        Some(b) => row(
            out,
            indent,
            "bridge",
            &format!(
                "{} {} → {} (source: {})",
                b.maker, b.chip, b.downstream, b.source
            ),
        ),
        None => row(out, indent, "bridge", "not in storlab's table"),
    }
}

/// The host controller's row: PCI address, ids, driver and PCIe link.
fn controller_row(out: &mut String, pci: &PciFacts, indent: &str) {
    let ids = match (pci.vendor_id, pci.device_id) {
        (Some(v), Some(p)) => format!("{v:04x}:{p:04x}"),
        _ => "-".into(),
    };
    let link = match &pci.link {
        Some(l) => format!(
            "PCIe {} GT/s x{} (max {} GT/s x{})",
            opt(l.current_speed_gts),
            opt(l.current_width),
            opt(l.max_speed_gts),
            opt(l.max_width)
        ),
        None => "no PCIe link of its own (integrated)".into(),
    };
    row(
        out,
        indent,
        "controller",
        &format!(
            "{} {ids} {}, {link}",
            pci.address,
            pci.driver.as_deref().unwrap_or("-")
        ),
    );
}

/// The block layer's rows: queue limits, scheduler, block sizes, discard, write cache.
fn queue_rows(out: &mut String, q: &QueueFacts, indent: &str) {
    row(
        out,
        indent,
        "queue",
        &format!(
            "max_sectors_kb {}, max_hw_sectors_kb {}, device queue_depth {}, nr_requests {}",
            opt(q.max_sectors_kb),
            opt(q.max_hw_sectors_kb),
            opt(q.device_queue_depth),
            opt(q.nr_requests)
        ),
    );
    row(
        out,
        indent,
        "",
        &format!(
            "scheduler {}, rotational {}, blocks {}/{} bytes",
            q.scheduler.as_deref().unwrap_or("-"),
            opt(q.rotational.map(|r| if r { "yes" } else { "no" })),
            opt(q.logical_block_size),
            opt(q.physical_block_size)
        ),
    );
    row(
        out,
        indent,
        "discard",
        &format!(
            "granularity {} bytes, max {} bytes",
            opt(q.discard_granularity),
            opt(q.discard_max_bytes)
        ),
    );
    row(
        out,
        indent,
        "write cache",
        q.write_cache.as_deref().unwrap_or("-"),
    );
}

fn device_rows(out: &mut String, d: &DeviceFacts, indent: &str) {
    let name = match &d.partition {
        Some(p) => format!("{} (partition {p})", d.node),
        None => d.node.clone(),
    };
    row(out, indent, "device", &name);
    row(out, indent, "transport", &d.transport);
    if let Some(size) = d.size_bytes {
        row(out, indent, "size", &size_text(size));
    }
    if !d.driver_chain.is_empty() {
        let chain: Vec<String> = d
            .driver_chain
            .iter()
            .map(|l| format!("{} ({})", l.driver.as_deref().unwrap_or("-"), l.node))
            .collect();
        row(out, indent, "driver chain", &chain.join(" → "));
    }
    if let Some(usb) = &d.usb {
        usb_rows(out, usb, indent);
    }
    if let Some(pci) = &d.host_controller {
        controller_row(out, pci, indent);
    }
    queue_rows(out, &d.queue, indent);
    if let Some(file) = &d.loop_backing_file {
        row(out, indent, "backing file", file);
    }
    if let Some(dm) = &d.dm {
        row(
            out,
            indent,
            "device-mapper",
            &format!(
                "{} ({})",
                dm.name.as_deref().unwrap_or("-"),
                dm.target.as_deref().unwrap_or("other target")
            ),
        );
    }
    if let Some(level) = &d.md_level {
        row(out, indent, "md level", level);
    }
    if let Some(query) = &d.device_query {
        query_rows(out, query, indent);
    }
    for member in &d.members {
        let _ = writeln!(out, "{indent}member:");
        device_rows(out, member, &format!("{indent}  "));
    }
}

fn answer_text<T>(answer: &Answer<T>, show: impl Fn(&T) -> String) -> String {
    match answer {
        Answer::Answered { value } => show(value),
        Answer::NotSupported { reason } => format!("not supported ({reason})"),
        Answer::Malformed { reason } => format!("malformed answer ({reason})"),
    }
}

fn vpd_text(facts: &VpdFacts) -> String {
    match facts {
        VpdFacts::SupportedPages { pages } => pages
            .iter()
            .map(|p| format!("{p:02X}h"))
            .collect::<Vec<_>>()
            .join(" "),
        VpdFacts::UnitSerialNumber { serial } => serial.clone(),
        VpdFacts::DeviceIdentification { designators } => designators.join(", "),
        VpdFacts::BlockLimits {
            maximum_transfer_blocks,
            optimal_transfer_blocks,
            maximum_unmap_lba_count,
            ..
        } => format!(
            "max transfer {maximum_transfer_blocks} blocks, optimal {optimal_transfer_blocks}, \
             max unmap {maximum_unmap_lba_count} blocks"
        ),
        VpdFacts::BlockDeviceCharacteristics {
            medium_rotation_rate,
            ..
        } => match medium_rotation_rate {
            0 => "rotation not reported".into(),
            1 => "non-rotating (solid state)".into(),
            rpm => format!("{rpm} rpm"),
        },
        VpdFacts::LogicalBlockProvisioning {
            unmap_supported, ..
        } => format!(
            "UNMAP {}",
            if *unmap_supported {
                "supported"
            } else {
                "not supported"
            }
        ),
    }
}

fn query_rows(out: &mut String, q: &DeviceQuery, indent: &str) {
    if let Some(reason) = &q.unavailable {
        row(out, indent, "device query", reason);
        return;
    }
    if let Some(inquiry) = &q.inquiry {
        row(
            out,
            indent,
            "INQUIRY",
            &answer_text(inquiry, |i| {
                format!(
                    "{} {} {}{}",
                    i.vendor,
                    i.product,
                    i.revision,
                    if i.command_queueing { ", CMDQUE" } else { "" }
                )
            }),
        );
    }
    for page in &q.vpd {
        row(
            out,
            indent,
            &format!("VPD {:#04X}", page.page).replace("0X", "0x"),
            &answer_text(&page.answer, vpd_text),
        );
    }
    if let Some(capacity) = &q.read_capacity16 {
        row(
            out,
            indent,
            "READ CAPACITY(16)",
            &answer_text(capacity, |c| {
                format!(
                    "{} × {} bytes (physical {}), LBPME {}",
                    c.last_lba + 1,
                    c.block_len_bytes,
                    c.physical_block_bytes,
                    c.provisioning_enabled
                )
            }),
        );
    }
    if let Some(identify) = &q.ata_identify {
        row(
            out,
            indent,
            "ATA IDENTIFY",
            &answer_text(identify, |i| {
                format!(
                    "{} fw {}, {}, NCQ {} (depth {}), TRIM {}",
                    i.model,
                    i.firmware,
                    i.rotation,
                    i.ncq_supported,
                    i.queue_depth,
                    i.trim_supported
                )
            }),
        );
    }
}

/// The readable form of one probe.
pub fn render_table(report: &ProbeReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", escape_control(&report.path));
    if let Some(file) = &report.file {
        row(
            &mut out,
            "  ",
            "filesystem",
            &format!("{} on {} ({})", file.fs_type, file.mount_point, file.source),
        );
        row(&mut out, "  ", "mount options", &file.mount_options);
        row(&mut out, "  ", "super options", &file.super_options);
    }
    match &report.device {
        Some(device) => device_rows(&mut out, device, "  "),
        None => row(&mut out, "  ", "device", "no block device beneath"),
    }
    if !report.diagnosis.is_empty() {
        let _ = writeln!(out, "  diagnosis:");
        for line in &report.diagnosis {
            let _ = writeln!(out, "    - {}", escape_control(line));
        }
    }
    out
}
