//! The transport's endpoints between the host driver and the device side, assembled once from the stack
//! after fallbacks: a closed enum whose variants hold their own per-command state (BOT's
//! chained transfer times; UAS needs none beyond its tag; AHCI/IDE none beyond the drive
//! link's). The simulator matches it whole at each phase, with no catch-all arm, so a new
//! transport fails to compile until every phase says what it does.

use crate::cx::Cx;
use crate::driver_bot::Bot;
use crate::driver_sata::Ahci;
use crate::driver_uas::Uas;
use crate::event::CmdId;
use crate::transport::Transport;

/// The running transport's host driver and device endpoint.
pub(crate) enum Endpoints {
    /// USB Bulk-Only Transport to a bridge.
    Bot(Bot),
    /// USB Attached SCSI to a bridge.
    Uas(Uas),
    /// Direct SATA through an AHCI controller (NCQ or IDE mode).
    Ahci(Ahci),
}

impl Endpoints {
    /// What ran, as the public API and the report name it.
    pub fn kind(&self) -> Transport {
        match self {
            Endpoints::Bot(_) => Transport::Bot,
            Endpoints::Uas(u) => Transport::Uas { streams: u.streams },
            Endpoints::Ahci(a) if a.ncq => Transport::SataNcq,
            Endpoints::Ahci(_) => Transport::SataIde,
        }
    }

    /// The host maps a command's data buffer before the command goes out (a BOT driver that
    /// chains its transfers maps it when it submits the data transfer instead).
    #[inline]
    pub fn maps_buffer_before_issue(&self) -> bool {
        match self {
            Endpoints::Bot(b) => !b.chains_transfers,
            Endpoints::Uas(_) | Endpoints::Ahci(_) => true,
        }
    }

    /// A data transfer completed at the host at `at_ns` (BOT's chaining driver then queues
    /// the CSW transfer; the others queued theirs with the command).
    #[inline]
    pub fn data_done_at_host(&mut self, cx: &mut Cx, id: CmdId, at_ns: u64) {
        match self {
            Endpoints::Bot(bot) => bot.data_done_at_host(cx, id, at_ns),
            Endpoints::Uas(_) | Endpoints::Ahci(_) => {}
        }
    }

    /// Commands reach a USB bridge (whose layers the report shows), not the drive directly.
    pub fn is_usb(&self) -> bool {
        match self {
            Endpoints::Bot(_) | Endpoints::Uas(_) => true,
            Endpoints::Ahci(_) => false,
        }
    }
}
