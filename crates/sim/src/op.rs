//! What a host request or a command does: a leaf type every layer names (the block layer, the
//! transports, the bridge's firmware costs, the pcap writer), kept apart so naming it pulls in
//! nothing else.

/// What a command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Read,
    Write,
    Trim,
    /// Write the drive's volatile cache to the media: SCSI SYNCHRONIZE CACHE(10) over USB,
    /// ATA FLUSH CACHE EXT on the drive's link. No data phase; not queued at the drive.
    Flush,
}
