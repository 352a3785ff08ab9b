//! Which transport runs between the host and the drive, after fallbacks: what the public API
//! and the report name. The running endpoints of each are `endpoints.rs`'s.

/// How commands travel between host and drive, after fallbacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// USB Bulk-Only Transport.
    Bot,
    /// USB Attached SCSI; `streams` at SuperSpeed, Read/Write Ready IUs at High-Speed.
    Uas { streams: bool },
    /// Direct SATA, AHCI with NCQ.
    SataNcq,
    /// Direct SATA, IDE mode (no NCQ).
    SataIde,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Bot => "bot",
            Transport::Uas { streams: true } => "uas-streams",
            Transport::Uas { streams: false } => "uas-ready-ius",
            Transport::SataNcq => "sata-ncq",
            Transport::SataIde => "sata-ide",
        }
    }
    pub fn is_usb(self) -> bool {
        match self {
            Transport::Bot | Transport::Uas { .. } => true,
            Transport::SataNcq | Transport::SataIde => false,
        }
    }
}
