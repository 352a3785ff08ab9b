//! One command in flight through the stack: what the host asked for, the bytes each layer sent,
//! and what the device side decoded from them. State only one transport needs lives with that
//! transport (BOT's transfer times in `driver_bot.rs`), not here.

use crate::drive::DriveCommand;
use crate::fault::CommandFault;
use crate::op::Op;
use crate::resource::Flow;

/// Host requests merged into one command at most (bounds the command's part list).
pub const MAX_MERGED_PARTS: usize = 32;
/// Room for the largest command message (UAS Command IU: 32 bytes; CBW: 31).
pub const COMMAND_BYTES_MAX: usize = 32;
/// Room for the largest status message sent (Sense IU header with 18 bytes of fixed-format
/// sense data: 34; CSW: 13).
pub const STATUS_BYTES_MAX: usize = 34;
/// UNMAP parameter list with one block descriptor (SBC-3 §5.28.2): 8-byte header + 16.
pub const UNMAP_LIST_BYTES: usize = 24;

/// A piece of one host request's slot buffer that a command carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Part {
    pub slot: u32,
    pub slot_offset: u32,
    pub len: u32,
}

/// A command in flight.
#[derive(Clone, Debug)]
pub struct Command {
    pub op: Op,
    /// Host view: byte offset on the device and length.
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub parts: [Part; MAX_MERGED_PARTS],
    pub part_count: u8,
    /// Transport tag the host chose (BOT dCBWTag, UAS tag = stream id, NCQ tag).
    pub tag: u32,
    /// The command message as sent (CBW or Command IU).
    pub command_bytes: [u8; COMMAND_BYTES_MAX],
    pub command_len: u8,
    /// The status message as sent (CSW or Sense IU).
    pub status_bytes: [u8; STATUS_BYTES_MAX],
    pub status_len: u8,
    /// The UNMAP parameter list as sent.
    pub unmap_list: [u8; UNMAP_LIST_BYTES],
    /// DATA SET MANAGEMENT (TRIM) payload sent to the drive (allocated only for trims).
    pub dsm_payload: Vec<u8>,
    /// Device side: the tag it decoded from the command bytes, echoed in the status.
    pub device_tag: u32,
    /// Device side: the medium operation it decoded (LBA, blocks, direction).
    pub device: DriveCommand,
    /// Whether this command holds one of the drive's queue slots.
    pub holds_drive_slot: bool,
    /// Read: when the data leaves the media.
    pub media: Flow,
    /// When the host driver issued the command.
    pub issued_ns: u64,
    /// The driver served it from its own buffer (`driver_buffer.rs`): no transfer, no status.
    pub served_by_driver: bool,
    /// The fault the plan put on this attempt (`fault.rs`), if any.
    pub(crate) fault: CommandFault,
    /// With a fault plan: this attempt's index among the commands the host sent (1-based).
    pub(crate) attempt: u64,
    /// Times the host has sent this command again after a failure.
    pub(crate) retries: u32,
    /// The errno the command failed with after the host's recovery (0: it did not).
    pub(crate) errno: i32,
    /// BOT's transfer times for this command (BOT's host driver sets them at issue; no other
    /// transport reads them). Kept here, not in `Bot`, so `Bot` is a `Copy` value the core
    /// hands down the bridged path.
    pub(crate) bot: BotCommand,
}

/// BOT's state of one command in flight.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BotCommand {
    /// When the host has queued the data transfer (after the CBW's completion).
    pub data_urb_ns: u64,
    /// When the data transfer completed at the host.
    pub data_urb_done_ns: u64,
    /// When the host has queued the CSW transfer (after the data's completion).
    pub status_urb_ns: u64,
    /// The write's data is already in the bridge's buffer (see
    /// `BridgeProfile::bot_write_buffer_bytes`).
    pub buffered: bool,
}

impl Command {
    pub fn new() -> Command {
        Command {
            op: Op::Read,
            offset_bytes: 0,
            len_bytes: 0,
            parts: [Part::default(); MAX_MERGED_PARTS],
            part_count: 0,
            tag: 0,
            command_bytes: [0; COMMAND_BYTES_MAX],
            command_len: 0,
            status_bytes: [0; STATUS_BYTES_MAX],
            status_len: 0,
            unmap_list: [0; UNMAP_LIST_BYTES],
            dsm_payload: Vec::new(),
            device_tag: 0,
            device: DriveCommand::default(),
            holds_drive_slot: false,
            media: Flow::default(),
            issued_ns: 0,
            served_by_driver: false,
            fault: CommandFault::None,
            attempt: 0,
            retries: 0,
            errno: 0,
            bot: BotCommand::default(),
        }
    }

    pub fn parts(&self) -> &[Part] {
        &self.parts[..usize::from(self.part_count)]
    }
}

impl Default for Command {
    fn default() -> Self {
        Command::new()
    }
}
