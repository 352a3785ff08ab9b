//! The transport's endpoints between the host driver and the device side, assembled once from the stack
//! after fallbacks: a bridged path (`Bridged`: BOT or UAS to a USB bridge) or a direct one
//! (AHCI/IDE to the drive), two types, so the bridge's steps take a `Bridged` and have no arm
//! for AHCI. Every endpoint is a small `Copy` value (a command's own transport state sits in
//! its `Command`): the core's central dispatch matches `Endpoints` whole, with no catch-all
//! arm, and hands the variant down to the phase's functions, so a new transport fails to
//! compile until every phase says what it does.

use crate::command::Command;
use crate::cx::Cx;
use crate::driver_bot::Bot;
use crate::driver_sata::Ahci;
use crate::driver_uas::Uas;
use crate::scsi::ScsiOp;
use crate::transport::Transport;

/// The running transport's host driver and device endpoint.
pub(crate) enum Endpoints {
    /// USB to a bridge, which translates to ATA for its drive.
    Bridged(Bridged),
    /// Direct SATA through an AHCI controller (NCQ or IDE mode).
    Direct(Ahci),
}

/// A USB transport to a bridge.
#[derive(Clone, Copy)]
pub(crate) enum Bridged {
    /// USB Bulk-Only Transport.
    Bot(Bot),
    /// USB Attached SCSI.
    Uas(Uas),
}

impl Endpoints {
    /// What ran, as the public API and the report name it.
    pub fn kind(&self) -> Transport {
        match self {
            Endpoints::Bridged(usb) => usb.kind(),
            Endpoints::Direct(a) if a.ncq => Transport::SataNcq,
            Endpoints::Direct(_) => Transport::SataIde,
        }
    }

    /// The host maps a command's data buffer before the command goes out (a BOT driver that
    /// chains its transfers maps it when it submits the data transfer instead).
    #[inline]
    pub fn maps_buffer_before_issue(&self) -> bool {
        match self {
            Endpoints::Bridged(Bridged::Bot(b)) => !b.chains_transfers,
            Endpoints::Bridged(Bridged::Uas(_)) | Endpoints::Direct(_) => true,
        }
    }

    /// Commands reach a USB bridge (whose layers the report shows), not the drive directly.
    pub fn is_usb(&self) -> bool {
        match self {
            Endpoints::Bridged(_) => true,
            Endpoints::Direct(_) => false,
        }
    }

    /// The transport is UAS (a USB reset restores its alternate setting).
    pub fn is_uas(&self) -> bool {
        match self {
            Endpoints::Bridged(Bridged::Uas(_)) => true,
            Endpoints::Bridged(Bridged::Bot(_)) | Endpoints::Direct(_) => false,
        }
    }

    /// The host's port is held by libata's error handler at `now_ns`: a command issued now
    /// waits for it. A bridged path has no such port (its bridge holds the drive's).
    #[inline]
    pub fn port_recovering_at(&self, now_ns: u64) -> bool {
        match self {
            Endpoints::Direct(ahci) => ahci.recovery_until_ns > now_ns,
            Endpoints::Bridged(_) => false,
        }
    }
}

impl Bridged {
    /// What ran, as the public API and the report name it.
    pub fn kind(self) -> Transport {
        match self {
            Bridged::Bot(_) => Transport::Bot,
            Bridged::Uas(u) => Transport::Uas { streams: u.streams },
        }
    }

    /// The bridge parses the command's bytes (CBW or Command IU).
    #[inline]
    pub fn decode_command(self, c: &mut Command) -> ScsiOp {
        match self {
            Bridged::Bot(_) => Bot::decode_command(c),
            Bridged::Uas(_) => Uas::decode_command(c),
        }
    }

    /// The bridge builds the command's status (CSW or Sense IU), ready to send at `built_ns`.
    /// Returns when it can leave (BOT: once the host has queued the CSW transfer) and its
    /// length.
    #[inline]
    pub fn encode_status(self, c: &mut Command, built_ns: u64) -> (u64, u64) {
        match self {
            Bridged::Bot(_) => (built_ns.max(c.bot.status_urb_ns), Bot::encode_status(c)),
            Bridged::Uas(_) => (built_ns, Uas::encode_status(c)),
        }
    }

    /// A data transfer completed at the host at `at_ns` (BOT's chaining driver then queues
    /// the CSW transfer; UAS queued its status transfer with the command).
    #[inline]
    pub fn data_done_at_host(self, cx: &mut Cx, c: &mut Command, at_ns: u64) {
        match self {
            Bridged::Bot(bot) => bot.data_done_at_host(cx, c, at_ns),
            Bridged::Uas(_) => {}
        }
    }

    /// A command without a data phase (a flush) finished at the drive (BOT's chaining driver
    /// queued the CSW transfer when it would have queued the data transfer).
    pub fn no_data_phase(self, c: &mut Command) {
        match self {
            Bridged::Bot(_) => Bot::no_data_phase(c),
            Bridged::Uas(_) => {}
        }
    }

    /// The write's data is already in the bridge's buffer (BOT's buffered writes).
    #[inline]
    pub fn write_buffered(self, c: &Command) -> bool {
        match self {
            Bridged::Bot(_) => c.bot.buffered,
            Bridged::Uas(_) => false,
        }
    }

    /// The data phase the host set up for a failed command ends in a STALL (BOT); UAS has
    /// none to end (no Ready IU came, the Sense IU ends the command).
    pub fn stalls_failed_data_phase(self) -> bool {
        match self {
            Bridged::Bot(_) => true,
            Bridged::Uas(_) => false,
        }
    }
}
