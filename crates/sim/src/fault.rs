//! Fault plans and their injector: which faults a simulated run injects, drawn from one seed
//! (per-kind rates) or placed at given command indexes, simulated times or LBAs, and the record
//! of what became of each one (recovered by the host driver, or reported to the job).
//!
//! The injector is consulted at the transport and device-link seams only (the host issuing a
//! command, the bridge receiving it, the bridge's status, the drive's read, the USB link's data
//! packets); the recovery each fault triggers is the transport's own (docs/simulator.md,
//! "Faults"; docs/decisions/0017-fault-injection.md). Its random stream is its own
//! (`ChaCha8Rng` from the plan's seed), so a run without a plan draws exactly what it drew
//! before faults existed, and a plan's faults do not shift the drive's own draws.
//!
//! Spec grammar (`storlab run --faults SPEC`), items separated by commas:
//!
//! ```text
//! seed=N                  the injector's seed (default 0)
//! KIND=RATE               a probability in [0, 1]: per data packet for usb_crc, per command
//!                         for drop (on every transport: USB bridges and SATA drives lose
//!                         commands) and phase_error, per read command for media_error
//! KIND@cmd=N              at the N-th command the host sends (1-based, retries count)
//! KIND@t=DURATION         at the first command the host sends at or after that simulated time
//! media_error@lba=N       the sector at LBA N is unreadable until it is written
//! power_loss@cmd=N, power_loss@t=DURATION
//!                         the drive's supply glitches as the host sends that command
//!                         (whatever else is in flight): the writes its volatile cache held
//!                         are lost, the commands it held fail NOT READY (USB) or are retried
//!                         by libata (AHCI), it spins up (NOT READY meanwhile), then reports
//!                         UNIT ATTENTION once; placed only, no rate
//! timeout=DURATION        the host's SCSI command timeout (default 30s; libata's too, which
//!                         then hardresets the SATA port: COMRESET and revalidation)
//! retries=N               the host's retries of a failed command (default 5)
//! reset_delay=DURATION    the host's wait after a Bulk-Only Mass Storage Reset (default 6s)
//! tm_timeout=DURATION     UAS: the host's wait for a task management response (default 3s)
//! hang_recovery=STEP      UAS: the first recovery step a hung bridge answers: lu_reset,
//!                         it_nexus_reset, device_reset (the USB device reset after the task
//!                         management) or none (default none: the host resets the device and
//!                         re-enumerates it as BOT); a hung BOT bridge recovers at the device
//!                         reset
//! disconnect_for=DURATION how long a disconnect keeps the device off the bus (default: for
//!                         good); what the hub sees of it decides between a warm reset that
//!                         keeps the device (SuperSpeed, back within 24 ms) and its removal
//! KIND := usb_crc | media_error | drop | phase_error | hang | bridge_reset | disconnect
//!         | power_loss
//!
//! A placed hang, bridge_reset or disconnect fires at its command whatever else is in flight:
//! every command the bridge or drive holds is lost with it and recovered with it; their rates
//! are drawn per command alone in flight. Each item names its key, rate or place once (a
//! second `seed=` or `hang@cmd=5` is refused).
//! A placed fault that has not fired is listed by `FaultInjector::unfired`.
//! DURATION := integer with ns, us, ms or s
//! ```

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::collections::BTreeSet;
use std::fmt;
use storlab_wire::scsi::{AdditionalSense, SenseKey, SenseRepr};

/// Linux's default SCSI command timeout for disks: `SD_TIMEOUT` = 30 s
/// (drivers/scsi/sd.h), also the block layer's `/sys/block/*/device/timeout` default.
pub const LINUX_SD_TIMEOUT_NS: u64 = 30_000_000_000;
/// Linux's retries of a failed disk command: `SD_MAX_RETRIES` = 5 (drivers/scsi/sd.h).
pub const LINUX_SD_MAX_RETRIES: u32 = 5;
/// Linux usb-storage waits 6 s after a Bulk-Only Mass Storage Reset before it clears the
/// endpoints' halts: `usb_stor_reset_common` (drivers/usb/storage/transport.c), `HZ*6`.
pub const LINUX_BOT_RESET_DELAY_NS: u64 = 6_000_000_000;
/// Linux's uas driver waited 3 s for the response to a task management function before its
/// error handler failed it: `uas_eh_task_mgmt`, `usb_wait_anchor_empty_timeout(..., 3000)`
/// (drivers/usb/storage/uas.c, 3.x kernels that still sent task management).
pub const LINUX_UAS_TM_TIMEOUT_NS: u64 = 3_000_000_000;

/// Linux retries a command the device answered NOT READY, LOGICAL UNIT IS IN PROCESS OF
/// BECOMING READY (02/04/01) after a short delay, without counting it against the command's
/// retries: `scsi_io_completion_action` (drivers/scsi/scsi_lib.c) picks `ACTION_DELAYED_RETRY`
/// for ASC 04h/ASCQ 01h, which requeues with `SCSI_MLQUEUE_DEVICE_BUSY`; that sets the
/// device's `device_blocked` to `max_device_blocked` (3, `SCSI_DEFAULT_DEVICE_BLOCKED`), which
/// counts down once per queue run, the queue being run again every 3 ms (`SCSI_QUEUE_DELAY`,
/// `BLK_MQ_BUDGET_DELAY` under blk-mq): the command goes again after two delays, 6 ms. Read from
/// the source, not measured on a machine.
pub const LINUX_NOT_READY_RETRY_DELAY_NS: u64 = 6_000_000;

/// The faults a plan can inject.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// A data packet on the USB link fails its CRC and is sent again (USB 3.0 ch. 8: DP retry
    /// with the ACK's Retry bit; USB 2.0 ch. 8: transaction retry after no handshake).
    UsbCrc,
    /// The drive cannot read a sector: CHECK CONDITION, MEDIUM ERROR / UNRECOVERED READ ERROR
    /// (sense 03/11/00, SAM-4 / SPC-4 §4.5.6).
    MediaError,
    /// The bridge (USB) or the drive (SATA) loses a command it received: the host's timer
    /// fires and the driver recovers (USB: Reset Recovery or ABORT TASK; SATA: libata's
    /// hardreset, COMRESET, and revalidation).
    Drop,
    /// The BOT bridge answers with a CSW of status 02h, Phase Error (BOT 1.0 §5.2, bCSWStatus).
    PhaseError,
    /// The UAS bridge's firmware hangs with a command: it is lost as with `Drop`, and task
    /// management goes unanswered up to the plan's `hang_recovery` step.
    Hang,
    /// The drive's supply glitches (a brown-out of the enclosure's or the drive's power): the
    /// writes its volatile write cache held are lost, it spins up again answering NOT READY,
    /// LOGICAL UNIT IS IN PROCESS OF BECOMING READY (02/04/01), then reports UNIT ATTENTION,
    /// POWER ON, RESET, OR BUS DEVICE RESET OCCURRED (06/29/00) once (SPC-4 §5.14, SAM-5
    /// §6.3.1 power on condition).
    PowerLoss,
    /// The bridge's firmware resets itself (its watchdog): the command it holds is lost, the
    /// host's timer fires and the driver recovers.
    BridgeReset,
    /// The device drops off the bus (cable or VBUS glitch) for the plan's `disconnect_for`:
    /// the hub warm-resets and keeps it, or removes it (`usb_reset::link_loss_seen`).
    Disconnect,
}

/// Kinds of fault a plan can name.
pub const FAULT_KINDS: usize = FaultKind::ALL.len();

impl FaultKind {
    pub const ALL: [FaultKind; 8] = [
        FaultKind::UsbCrc,
        FaultKind::MediaError,
        FaultKind::Drop,
        FaultKind::PhaseError,
        FaultKind::Hang,
        FaultKind::PowerLoss,
        FaultKind::BridgeReset,
        FaultKind::Disconnect,
    ];

    /// Its name in a fault spec and in reports.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::UsbCrc => "usb_crc",
            FaultKind::MediaError => "media_error",
            FaultKind::Drop => "drop",
            FaultKind::PhaseError => "phase_error",
            FaultKind::Hang => "hang",
            FaultKind::PowerLoss => "power_loss",
            FaultKind::BridgeReset => "bridge_reset",
            FaultKind::Disconnect => "disconnect",
        }
    }

    fn from_name(name: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a placed fault fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultAt {
    /// The N-th command the host sends (1-based; retries count).
    Command(u64),
    /// The first command the host sends at or after this simulated time.
    TimeNs(u64),
}

/// The first task management function a hung UAS bridge answers (its firmware recovers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HangRecovery {
    /// LOGICAL UNIT RESET (after ABORT TASK timed out).
    LogicalUnitReset,
    /// I_T NEXUS RESET (after LOGICAL UNIT RESET timed out too).
    ItNexusReset,
    /// The USB device reset (port reset and re-enumeration) after the task management: the
    /// bridge's firmware restarts with it.
    DeviceReset,
    /// None: the host resets the device and re-enumerates it as BOT.
    None,
}

/// What faults a run injects and the host's error-handling parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultPlan {
    pub seed: u64,
    /// Probability per kind, indexed by `FaultKind as usize`.
    pub rates: [f64; FAULT_KINDS],
    /// Faults placed at a command or a time.
    pub placed: Vec<(FaultKind, FaultAt)>,
    /// Sectors that cannot be read until they are written.
    pub bad_lbas: Vec<u64>,
    /// The host's command timeout.
    pub timeout_ns: u64,
    /// The host's retries of a failed command before the I/O fails.
    pub retries: u32,
    /// BOT: the host's wait after a Bulk-Only Mass Storage Reset.
    pub reset_delay_ns: u64,
    /// UAS: the host's wait for a task management response.
    pub tm_timeout_ns: u64,
    /// UAS: the step at which a hung bridge recovers.
    pub hang_recovery: HangRecovery,
    /// How long a disconnect keeps the device off the bus (None: for good).
    pub disconnect_for_ns: Option<u64>,
}

impl Default for FaultPlan {
    fn default() -> Self {
        FaultPlan {
            seed: 0,
            rates: [0.0; FAULT_KINDS],
            placed: Vec::new(),
            bad_lbas: Vec::new(),
            timeout_ns: LINUX_SD_TIMEOUT_NS,
            retries: LINUX_SD_MAX_RETRIES,
            reset_delay_ns: LINUX_BOT_RESET_DELAY_NS,
            tm_timeout_ns: LINUX_UAS_TM_TIMEOUT_NS,
            hang_recovery: HangRecovery::None,
            disconnect_for_ns: None,
        }
    }
}

/// The longest timeout or delay a plan may set: one hour (bounds the clock a run can use).
const PLAN_DURATION_MAX_NS: u64 = 3_600_000_000_000;
/// The most retries a plan may ask for (the SCSI midlayer's `retries` is a small count).
const PLAN_RETRIES_MAX: u32 = 100;

impl FaultPlan {
    /// Parse a fault spec (grammar in the module docs). Errors are one line naming the item.
    pub fn parse(spec: &str) -> Result<FaultPlan, String> {
        let mut plan = FaultPlan::default();
        if spec.trim().is_empty() {
            return Err("empty fault spec".into());
        }
        // Messages quote the spec's items: a control character (a newline) would break the
        // one-line error (found by the `sim_faults` fuzz target).
        if let Some(at) = spec.find(char::is_control) {
            return Err(format!("fault spec has a control character at byte {at}"));
        }
        let mut named: Vec<&str> = Vec::new();
        for item in spec.split(',') {
            let item = item.trim();
            // Each key, rate and place once: a second `seed=` or `hang@cmd=5` would silently
            // replace or double the first (issue 33).
            let key = match item.split_once('=') {
                Some((key, _)) if key.contains('@') => item,
                Some((key, _)) => key,
                None => item,
            };
            if named.contains(&key) {
                return Err(format!(
                    "fault spec item `{item}`: `{key}` is given twice (name each key, rate and \
                     place once)"
                ));
            }
            named.push(key);
            plan.parse_item(item)
                .map_err(|why| format!("fault spec item `{item}`: {why}"))?;
        }
        Ok(plan)
    }

    fn parse_item(&mut self, item: &str) -> Result<(), String> {
        let (key, value) = item
            .split_once('=')
            .ok_or("expected KEY=VALUE, KIND@cmd=N, KIND@t=DURATION or media_error@lba=N")?;
        if let Some((kind, at)) = key.split_once('@') {
            let kind = parse_kind(kind)?;
            match at {
                "cmd" => {
                    let n = parse_u64(value)?;
                    if n == 0 {
                        return Err("commands count from 1".into());
                    }
                    self.placed.push((kind, FaultAt::Command(n)));
                }
                "t" => self
                    .placed
                    .push((kind, FaultAt::TimeNs(parse_duration_ns(value)?))),
                "lba" if kind == FaultKind::MediaError => self.bad_lbas.push(parse_u64(value)?),
                "lba" => return Err("only media_error is placed at an LBA".into()),
                other => return Err(format!("unknown place `@{other}` (known: @cmd, @t, @lba)")),
            }
            return Ok(());
        }
        match key {
            "seed" => self.seed = parse_u64(value)?,
            "timeout" => self.timeout_ns = parse_bounded_duration(value)?,
            "reset_delay" => self.reset_delay_ns = parse_bounded_duration(value)?,
            "tm_timeout" => self.tm_timeout_ns = parse_bounded_duration(value)?,
            "hang_recovery" => {
                self.hang_recovery = match value {
                    "lu_reset" => HangRecovery::LogicalUnitReset,
                    "it_nexus_reset" => HangRecovery::ItNexusReset,
                    "device_reset" => HangRecovery::DeviceReset,
                    "none" => HangRecovery::None,
                    other => {
                        return Err(format!(
                            "unknown step `{other}` (lu_reset, it_nexus_reset, device_reset, \
                             none)"
                        ))
                    }
                }
            }
            "disconnect_for" => self.disconnect_for_ns = Some(parse_bounded_duration(value)?),
            "retries" => {
                let n = parse_u64(value)?;
                if n > u64::from(PLAN_RETRIES_MAX) {
                    return Err(format!("at most {PLAN_RETRIES_MAX} retries"));
                }
                self.retries = n as u32;
            }
            kind => {
                let kind = parse_kind(kind)?;
                if kind == FaultKind::PowerLoss {
                    // A supply glitch is an event of the power path, not a property of each
                    // command: it is placed (the swarm draws its place from the seed).
                    return Err(
                        "power_loss is placed (power_loss@cmd=N or power_loss@t=DURATION), \
                                not drawn at a rate"
                            .into(),
                    );
                }
                let rate: f64 = value
                    .parse()
                    .map_err(|_| format!("`{value}` is not a number"))?;
                if !(0.0..=1.0).contains(&rate) {
                    return Err(format!("rate {value} is not a probability in [0, 1]"));
                }
                self.rates[kind as usize] = rate;
            }
        }
        Ok(())
    }

    /// The plan injects `kind` (by rate, place or LBA).
    pub fn uses(&self, kind: FaultKind) -> bool {
        self.rates[kind as usize] > 0.0
            || self.placed.iter().any(|(k, _)| *k == kind)
            || (kind == FaultKind::MediaError && !self.bad_lbas.is_empty())
    }

    pub fn rate(&self, kind: FaultKind) -> f64 {
        self.rates[kind as usize]
    }
}

fn parse_kind(name: &str) -> Result<FaultKind, String> {
    FaultKind::from_name(name).ok_or_else(|| {
        let known: Vec<_> = FaultKind::ALL.iter().map(|k| k.name()).collect();
        format!(
            "unknown fault kind or key `{name}` (kinds: {}; keys: seed, timeout, retries, \
             reset_delay, tm_timeout, hang_recovery, disconnect_for)",
            known.join(", ")
        )
    })
}

fn parse_u64(value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("`{value}` is not a non-negative integer"))
}

/// An integer with a unit: ns, us, ms or s.
fn parse_duration_ns(value: &str) -> Result<u64, String> {
    let split = value
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("`{value}` needs a unit (ns, us, ms, s)"))?;
    let (digits, unit) = value.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{value}` is not a duration"))?;
    let scale = match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        other => return Err(format!("unknown unit `{other}` (ns, us, ms, s)")),
    };
    n.checked_mul(scale)
        .ok_or_else(|| format!("`{value}` is too long"))
}

fn parse_bounded_duration(value: &str) -> Result<u64, String> {
    let ns = parse_duration_ns(value)?;
    if ns > PLAN_DURATION_MAX_NS {
        return Err("at most one hour".into());
    }
    Ok(ns)
}

/// A duration as a spec writes it: in the largest unit that keeps it whole.
fn spec_duration(ns: u64) -> String {
    for (scale, unit) in [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if ns >= scale && ns.is_multiple_of(scale) {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

/// What became of one injected command fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultOutcome {
    /// The host driver has not finished handling it yet.
    Pending,
    /// Recovered: the command was sent again at this time.
    Retried { at_ns: u64 },
    /// The I/O failed with this errno, reported to the job at this time.
    Reported { errno: i32, at_ns: u64 },
}

/// One fault injected into a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultRecord {
    pub kind: FaultKind,
    /// The index of the command attempt it hit (1-based, as `@cmd`).
    pub command: u64,
    pub injected_ns: u64,
    pub outcome: FaultOutcome,
}

/// Counts for the report.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FaultCounts {
    /// USB data packets sent again after a CRC error.
    pub usb_crc_retries: u64,
    /// Command faults injected, recovered (retried), and reported as a failed I/O.
    pub injected: u64,
    pub retried: u64,
    pub reported: u64,
    /// Recovery sequences run: BOT reset recoveries, UAS ABORT TASKs, REQUEST SENSEs, READ LOG
    /// EXTs.
    pub bot_resets: u64,
    pub uas_aborts: u64,
    /// UAS escalation after a hung bridge: LOGICAL UNIT RESETs, I_T NEXUS RESETs sent, and
    /// times the host gave up on UAS and ran the device as BOT.
    pub uas_lu_resets: u64,
    pub uas_it_nexus_resets: u64,
    pub uas_bot_fallbacks: u64,
    /// USB device resets (`usb_reset_device`: port reset and re-enumeration) the host ran,
    /// after failed recovery or for a link the hub found in SS.Inactive.
    pub device_resets: u64,
    /// Bridge firmware resets, disconnects (the device off the bus), and devices the hub saw
    /// gone and removed.
    pub bridge_resets: u64,
    pub disconnects: u64,
    pub devices_removed: u64,
    pub request_senses: u64,
    pub read_log_exts: u64,
    /// SATA: hardresets (COMRESET, then revalidation) after a command timeout.
    pub comresets: u64,
    /// SATA: commands the drive aborted, beside the one at fault, after an NCQ error or a
    /// reset, and the host sent again without counting against their retries (libata's
    /// `ata_eh_qc_retry`: `scmd->allowed++` for a command with no error of its own).
    pub sata_aborted: u64,
    /// Power losses, the cached writes they took (a page of a write for an SSD), the bytes
    /// the store put back to what the media held, the commands answered NOT READY while the
    /// drive spun up, and the UNIT ATTENTIONs reported after.
    pub power_losses: u64,
    pub lost_writes: u64,
    pub lost_bytes: u64,
    pub not_ready: u64,
    pub unit_attentions: u64,
}

/// A fault hitting one command, as the seams see it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum CommandFault {
    #[default]
    None,
    /// The bridge drops the command.
    Drop,
    /// The BOT bridge answers Phase Error.
    PhaseError,
    /// The drive could not read the command's sectors.
    Medium,
    /// The bridge hangs with the command.
    Hang,
    /// The bridge answers for a drive spinning up after a power loss: CHECK CONDITION, NOT
    /// READY / LOGICAL UNIT IS IN PROCESS OF BECOMING READY (02/04/01); on AHCI the link is
    /// down and the command fails until the drive is ready.
    NotReady,
    /// The bridge reports the drive's pending unit attention condition: CHECK CONDITION,
    /// UNIT ATTENTION / POWER ON, RESET, OR BUS DEVICE RESET OCCURRED (06/29/00).
    UnitAttention,
    /// The bridge's firmware reset itself with the command.
    BridgeReset,
    /// The device dropped off the bus with the command.
    Disconnect,
    /// The device was removed: the command is not sent.
    Removed,
    /// The bridge or the device lost the command with another command's hang, bridge reset
    /// or disconnect (it was in flight then, or sent before the recovery): it waits for that
    /// command's recovery, which aborts and retries it (`FaultInjector::lost_with_device`).
    Lost,
}

impl CommandFault {
    /// The fixed-format sense data a bridge reports for this fault with CHECK CONDITION
    /// (`lba`: the command's first block, for a medium error's INFORMATION field); None for
    /// faults that end in no SCSI status with sense.
    pub(crate) fn sense(self, lba: u64) -> Option<SenseRepr> {
        match self {
            CommandFault::Medium => {
                let mut sense =
                    SenseRepr::fixed(SenseKey::MediumError, AdditionalSense::UnrecoveredReadError);
                sense.information = Some(lba);
                Some(sense)
            }
            CommandFault::NotReady => Some(SenseRepr::fixed(
                SenseKey::NotReady,
                AdditionalSense::NotReadyBecomingReady,
            )),
            CommandFault::UnitAttention => Some(SenseRepr::fixed(
                SenseKey::UnitAttention,
                AdditionalSense::PowerOnReset,
            )),
            CommandFault::None
            | CommandFault::Drop
            | CommandFault::PhaseError
            | CommandFault::Hang
            | CommandFault::BridgeReset
            | CommandFault::Disconnect
            | CommandFault::Removed
            | CommandFault::Lost => None,
        }
    }

    /// The bridge answers this fault itself, without the drive (its drive is spinning up, or
    /// it has a unit attention condition to report).
    pub(crate) fn answered_by_bridge(self) -> bool {
        matches!(self, CommandFault::NotReady | CommandFault::UnitAttention)
    }
}

/// The plan at run time: its random stream, the places not reached yet, the unreadable
/// sectors, and the record of every fault.
pub(crate) struct FaultInjector {
    pub plan: FaultPlan,
    rng: ChaCha8Rng,
    /// Commands the host has sent (attempts, retries included).
    commands_sent: u64,
    /// Placed faults not fired yet.
    placed: Vec<(FaultKind, FaultAt)>,
    /// Placed faults that fired at a command and wait for the seam that uses them.
    armed_media: u32,
    armed_crc: u32,
    armed_hang: u32,
    armed_power_loss: u32,
    armed_bridge_reset: u32,
    armed_disconnect: u32,
    /// The hub removed the device at this time: every later command fails.
    pub removed_at_ns: Option<u64>,
    pub bad_lbas: BTreeSet<u64>,
    pub records: Vec<FaultRecord>,
    pub counts: FaultCounts,
    /// After a power loss: when the drive answers commands again.
    pub drive_ready_ns: u64,
    /// Every power loss: when, and what the store put back.
    pub power_losses: Vec<PowerLossRecord>,
    /// A hang, bridge reset or disconnect hit this command (id) and lost every command at
    /// the device with it; until the host's recovery of it, a command sent is lost too.
    pub device_lost_with: Option<u32>,
    /// The kind of that fault, recorded for each command lost with it.
    pub device_loss_kind: FaultKind,
    /// The commands lost with the device beside the one the fault hit, waiting for its
    /// recovery (command ids).
    pub lost_with_device: Vec<u32>,
    /// Those of them whose data transfer the host had queued on a Ready IU (High-Speed UAS),
    /// with the end of the data phase as it was booked: the recovery kills the transfer too,
    /// not before it began (command id, time).
    pub lost_in_data_phase: Vec<(u32, u64)>,
    /// After the host fell back from UAS to BOT with several commands lost: those still to be
    /// sent again, one at a time as BOT allows (command ids).
    pub serial_retries: std::collections::VecDeque<u32>,
}

/// One power loss: when, and the byte ranges whose contents it took back to what the media
/// held (the writes the drive's volatile cache lost).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PowerLossRecord {
    pub at_ns: u64,
    /// When the drive was ready again.
    pub ready_ns: u64,
    pub restored: Vec<(u64, u64)>,
}

/// A uniform draw in [0, 1) from 53 random bits.
fn unit(rng: &mut ChaCha8Rng) -> f64 {
    const MANTISSA_BITS: u32 = 53;
    (rng.next_u64() >> (64 - MANTISSA_BITS)) as f64 / (1u64 << MANTISSA_BITS) as f64
}

impl FaultInjector {
    pub fn new(plan: FaultPlan) -> FaultInjector {
        FaultInjector {
            rng: ChaCha8Rng::seed_from_u64(plan.seed),
            commands_sent: 0,
            placed: plan.placed.clone(),
            armed_media: 0,
            armed_crc: 0,
            armed_hang: 0,
            armed_power_loss: 0,
            armed_bridge_reset: 0,
            armed_disconnect: 0,
            removed_at_ns: None,
            bad_lbas: plan.bad_lbas.iter().copied().collect(),
            records: Vec::new(),
            counts: FaultCounts::default(),
            drive_ready_ns: 0,
            power_losses: Vec::new(),
            device_lost_with: None,
            device_loss_kind: FaultKind::Hang,
            lost_with_device: Vec::new(),
            lost_in_data_phase: Vec::new(),
            serial_retries: std::collections::VecDeque::new(),
            plan,
        }
    }

    fn draw(&mut self, kind: FaultKind) -> bool {
        let p = self.plan.rates[kind as usize];
        p > 0.0 && unit(&mut self.rng) < p
    }

    /// The host sends a command at `now_ns`: which transport fault hits it (drop or phase
    /// error, where the transport has them), and arm placed media and CRC faults. Returns the
    /// fault and the command's attempt index. A drop hits any transport's command.
    pub fn on_command_sent(&mut self, now_ns: u64, bot: bool, usb: bool) -> (CommandFault, u64) {
        self.commands_sent += 1;
        let n = self.commands_sent;
        let mut fault = CommandFault::None;
        let mut i = 0;
        while i < self.placed.len() {
            let (kind, at) = self.placed[i];
            let due = match at {
                FaultAt::Command(c) => c <= n,
                FaultAt::TimeNs(t) => t <= now_ns,
            };
            if !due {
                i += 1;
                continue;
            }
            self.placed.swap_remove(i);
            match kind {
                FaultKind::Drop => fault = CommandFault::Drop,
                FaultKind::PhaseError if bot => fault = CommandFault::PhaseError,
                FaultKind::MediaError => self.armed_media += 1,
                FaultKind::UsbCrc if usb => self.armed_crc += 1,
                FaultKind::Hang if usb => self.armed_hang += 1,
                FaultKind::PowerLoss => self.armed_power_loss += 1,
                FaultKind::BridgeReset if usb => self.armed_bridge_reset += 1,
                FaultKind::Disconnect if usb => self.armed_disconnect += 1,
                // Checked when the plan was set: the stack has no such fault.
                FaultKind::PhaseError
                | FaultKind::UsbCrc
                | FaultKind::Hang
                | FaultKind::BridgeReset
                | FaultKind::Disconnect => {}
            }
        }
        if fault == CommandFault::None && self.draw(FaultKind::Drop) {
            fault = CommandFault::Drop;
        }
        if fault == CommandFault::None && bot && self.draw(FaultKind::PhaseError) {
            fault = CommandFault::PhaseError;
        }
        if fault != CommandFault::None {
            let kind = match fault {
                CommandFault::Drop => FaultKind::Drop,
                _ => FaultKind::PhaseError,
            };
            self.record(kind, n, now_ns);
        }
        (fault, n)
    }

    /// Does the bridge hang with command attempt `command`, which the plan's
    /// [`FaultInjector::on_command_sent`] left unharmed? A placed hang fires at its command
    /// whatever else is in flight (the core loses those commands with it and recovers them
    /// all); a rate is drawn per command alone in flight (`alone`), as before placed faults
    /// fired at any queue depth, so a seed's drawn scenario stays what it was.
    pub fn hangs(&mut self, alone: bool, command: u64, now_ns: u64) -> bool {
        let hang = if self.armed_hang > 0 {
            self.armed_hang -= 1;
            true
        } else {
            alone && self.draw(FaultKind::Hang)
        };
        if hang {
            self.record(FaultKind::Hang, command, now_ns);
        }
        hang
    }

    /// Does the drive lose power as command attempt `command` is sent? An armed power loss
    /// fires at once, whatever else is in flight: the core fails the commands the drive held
    /// (the bridge answers them NOT READY; on AHCI libata's error handler retries them once
    /// the drive is ready).
    pub fn power_fails(&mut self, command: u64, now_ns: u64) -> bool {
        if self.armed_power_loss == 0 {
            return false;
        }
        self.armed_power_loss -= 1;
        self.record(FaultKind::PowerLoss, command, now_ns);
        true
    }

    /// Does the bridge reset itself, or the device drop off the bus, with command attempt
    /// `command`? Placed ones fire at any queue depth, rates per command alone in flight, as
    /// for [`FaultInjector::hangs`]. A plan without these faults draws nothing more.
    pub fn loses_device(&mut self, alone: bool, command: u64, now_ns: u64) -> CommandFault {
        let fault = if self.armed_bridge_reset > 0 {
            self.armed_bridge_reset -= 1;
            CommandFault::BridgeReset
        } else if self.armed_disconnect > 0 {
            self.armed_disconnect -= 1;
            CommandFault::Disconnect
        } else if alone && self.draw(FaultKind::BridgeReset) {
            CommandFault::BridgeReset
        } else if alone && self.draw(FaultKind::Disconnect) {
            CommandFault::Disconnect
        } else {
            return CommandFault::None;
        };
        let kind = match fault {
            CommandFault::BridgeReset => FaultKind::BridgeReset,
            _ => FaultKind::Disconnect,
        };
        self.record(kind, command, now_ns);
        fault
    }

    /// Command attempt `command` was lost with the device by another command's `kind` fault
    /// (in flight then, or sent before the recovery): a fault of its own, which its recovery
    /// resolves as the other's is.
    pub fn record_lost(&mut self, kind: FaultKind, command: u64, now_ns: u64) {
        self.record(kind, command, now_ns);
    }

    fn record(&mut self, kind: FaultKind, command: u64, now_ns: u64) {
        self.counts.injected += 1;
        self.records.push(FaultRecord {
            kind,
            command,
            injected_ns: now_ns,
            outcome: FaultOutcome::Pending,
        });
    }

    /// The drive reads `blocks` sectors at `lba` for command attempt `command`: whether the
    /// read fails (a bad sector in range, an armed placed fault, or the rate's draw; a drawn
    /// error leaves its first sector bad until written, as a pending sector stays).
    pub fn media_read(&mut self, lba: u64, blocks: u32, command: u64, now_ns: u64) -> bool {
        let end = lba + u64::from(blocks);
        let mut bad = self.bad_lbas.range(lba..end).next().is_some();
        if !bad && self.armed_media > 0 {
            self.armed_media -= 1;
            self.bad_lbas.insert(lba);
            bad = true;
        }
        if !bad && self.draw(FaultKind::MediaError) {
            self.bad_lbas.insert(lba);
            bad = true;
        }
        if bad {
            self.record(FaultKind::MediaError, command, now_ns);
        }
        bad
    }

    /// The drive wrote `blocks` sectors at `lba`: a written bad sector is readable again
    /// (the drive reallocates a pending sector when it is written, ATA/ACS-3 SMART attribute
    /// "Current Pending Sector").
    pub fn media_written(&mut self, lba: u64, blocks: u32) {
        if self.bad_lbas.is_empty() {
            return;
        }
        let end = lba + u64::from(blocks);
        let hit: Vec<u64> = self.bad_lbas.range(lba..end).copied().collect();
        for b in hit {
            self.bad_lbas.remove(&b);
        }
    }

    /// Data packets among `packets` of one transfer that fail their CRC (each is sent once
    /// more; the retry is not drawn again).
    pub fn crc_errors(&mut self, packets: u64) -> u64 {
        let mut errors = 0;
        if self.armed_crc > 0 {
            self.armed_crc -= 1;
            errors += 1;
        }
        let p = self.plan.rates[FaultKind::UsbCrc as usize];
        if p > 0.0 {
            if p >= 1.0 {
                errors += packets;
            } else {
                // Geometric skips between errors: one draw per error, not one per packet.
                let ln_q = (1.0 - p).ln();
                let mut at = 0u64;
                loop {
                    let u = unit(&mut self.rng).max(f64::MIN_POSITIVE);
                    let skip = (u.ln() / ln_q).floor();
                    if skip >= (packets - at) as f64 {
                        break;
                    }
                    at += skip as u64 + 1;
                    errors += 1;
                    if at >= packets {
                        break;
                    }
                }
            }
        }
        let errors = errors.min(packets.max(1));
        self.counts.usb_crc_retries += errors;
        errors
    }

    /// Placed faults that have not fired, in spec form: places not reached yet, and faults
    /// armed at their place that no seam took (a media error waits for a read, a CRC error
    /// for a data packet, a power loss or a hang for a command no other fault hit).
    pub fn unfired(&self) -> Vec<String> {
        let mut unfired: Vec<String> = self
            .placed
            .iter()
            .map(|(kind, at)| match at {
                FaultAt::Command(n) => format!("{kind}@cmd={n}"),
                FaultAt::TimeNs(t) => format!("{kind}@t={}", spec_duration(*t)),
            })
            .collect();
        for (kind, armed) in [
            (FaultKind::MediaError, self.armed_media),
            (FaultKind::UsbCrc, self.armed_crc),
            (FaultKind::Hang, self.armed_hang),
            (FaultKind::PowerLoss, self.armed_power_loss),
            (FaultKind::BridgeReset, self.armed_bridge_reset),
            (FaultKind::Disconnect, self.armed_disconnect),
        ] {
            for _ in 0..armed {
                unfired.push(format!(
                    "{kind} (its place was reached; no command took it)"
                ));
            }
        }
        unfired
    }

    /// The host finished handling the faults of command attempt `command`.
    pub fn resolve(&mut self, command: u64, outcome: FaultOutcome) {
        for r in self.records.iter_mut().rev() {
            if r.command == command && r.outcome == FaultOutcome::Pending {
                r.outcome = outcome;
                match outcome {
                    FaultOutcome::Retried { .. } => self.counts.retried += 1,
                    FaultOutcome::Reported { .. } => self.counts.reported += 1,
                    FaultOutcome::Pending => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let plan = FaultPlan::parse(
            "seed=7,usb_crc=1e-4,media_error@lba=123456,phase_error@cmd=40,drop@t=2s,timeout=10s",
        )
        .unwrap();
        assert_eq!(plan.seed, 7);
        assert_eq!(plan.rate(FaultKind::UsbCrc), 1e-4);
        assert_eq!(plan.bad_lbas, vec![123456]);
        assert_eq!(
            plan.placed,
            vec![
                (FaultKind::PhaseError, FaultAt::Command(40)),
                (FaultKind::Drop, FaultAt::TimeNs(2_000_000_000)),
            ]
        );
        assert_eq!(plan.timeout_ns, 10_000_000_000);
        assert_eq!(plan.retries, LINUX_SD_MAX_RETRIES);
        for kind in [
            FaultKind::MediaError,
            FaultKind::Drop,
            FaultKind::PhaseError,
            FaultKind::UsbCrc,
        ] {
            assert!(plan.uses(kind), "{kind}");
        }
        assert!(!FaultPlan::parse("seed=1").unwrap().uses(FaultKind::Drop));
    }

    #[test]
    fn bad_specs_say_which_item_and_why_on_one_line() {
        for (spec, needle) in [
            ("", "empty"),
            ("seed", "expected KEY=VALUE"),
            ("flood=0.1", "unknown fault kind or key `flood`"),
            ("drop=2", "not a probability"),
            ("drop=x", "not a number"),
            ("drop@cmd=0", "count from 1"),
            ("hang_recovery=maybe", "unknown step `maybe`"),
            ("disconnect_for=5", "needs a unit"),
            ("disconnect_for=2h", "unknown unit"),
            ("disconnect_for=4000s", "at most one hour"),
            ("tm_timeout=2h", "unknown unit"),
            ("drop@lba=5", "only media_error"),
            ("usb\n_crc=1", "control character at byte 3"),
            ("drop@when=5", "unknown place"),
            ("drop@t=5", "needs a unit"),
            ("drop@t=5h", "unknown unit"),
            ("power_loss=0.1", "power_loss is placed"),
            ("power_loss@lba=5", "only media_error"),
            ("timeout=4000s,seed=1", "at most one hour"),
            ("retries=1000", "at most 100"),
            ("seed=-1", "non-negative integer"),
            ("seed=1,seed=2", "`seed` is given twice"),
            ("drop=0.1,drop=0.2", "`drop` is given twice"),
            ("hang@cmd=5,hang@cmd=5", "`hang@cmd=5` is given twice"),
            ("media_error@lba=8,media_error@lba=8", "given twice"),
        ] {
            let e = FaultPlan::parse(spec).unwrap_err();
            assert!(e.contains(needle), "{spec}: {e}");
            assert!(!e.contains('\n'), "{spec}: {e}");
        }
    }

    #[test]
    fn crc_draws_follow_the_rate() {
        let plan = FaultPlan::parse("seed=3,usb_crc=0.01").unwrap();
        let mut f = FaultInjector::new(plan);
        let packets = 1000;
        let total: u64 = (0..1000).map(|_| f.crc_errors(packets)).sum();
        // 10^6 packets at 1%: 10 000 expected, standard deviation ~100.
        assert!((9_500..=10_500).contains(&total), "{total}");
    }

    #[test]
    fn a_written_bad_sector_reads_again() {
        let mut f = FaultInjector::new(FaultPlan::parse("media_error@lba=100").unwrap());
        assert!(!f.media_read(0, 100, 1, 0));
        assert!(f.media_read(96, 8, 2, 0));
        f.media_written(100, 1);
        assert!(!f.media_read(96, 8, 3, 0));
        assert_eq!(f.counts.injected, 1);
    }
}
