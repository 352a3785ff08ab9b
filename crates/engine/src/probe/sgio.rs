//! The SG_IO ioctl (Linux `include/uapi/scsi/sg.h`): one SCSI command with a data-in buffer,
//! sent through the block device node opened `O_RDONLY | O_NONBLOCK` (no medium wait, no
//! write access). Only data-in commands are ever sent from here.

use super::query::{CommandFailure, Transport};
use std::os::fd::AsRawFd;
use std::path::Path;

/// `SG_IO` request number (sg.h: `#define SG_IO 0x2285`).
const SG_IO: libc::c_ulong = 0x2285;
/// `interface_id` of the v3 interface (sg.h: `'S'`).
const SG_INTERFACE_ID_ORIG: libc::c_int = b'S' as libc::c_int;
/// `dxfer_direction`: data from the device (sg.h: `SG_DXFER_FROM_DEV -3`).
const SG_DXFER_FROM_DEV: libc::c_int = -3;
/// `info` bit set when the command did not complete cleanly (sg.h: `SG_INFO_OK_MASK 0x1`).
const SG_INFO_OK_MASK: libc::c_uint = 0x1;
/// Sense buffer length: fixed sense is 18 bytes, descriptor sense with an ATA Status Return
/// descriptor 8 + 14; 32 leaves room for both (SPC-4 4.5).
const SENSE_BUFFER_LEN: usize = 32;
/// Per-command timeout. A probe is a handful of small reads; a device slower than this is
/// reported as not answering rather than holding the probe.
const COMMAND_TIMEOUT_MS: libc::c_uint = 3_000;
/// SCSI status CHECK CONDITION (SAM-5 table 43).
const STATUS_CHECK_CONDITION: u8 = 0x02;

/// `struct sg_io_hdr` (sg.h), field for field.
#[repr(C)]
struct SgIoHdr {
    interface_id: libc::c_int,
    dxfer_direction: libc::c_int,
    cmd_len: libc::c_uchar,
    mx_sb_len: libc::c_uchar,
    iovec_count: libc::c_ushort,
    dxfer_len: libc::c_uint,
    dxferp: *mut libc::c_void,
    cmdp: *const libc::c_uchar,
    sbp: *mut libc::c_uchar,
    timeout: libc::c_uint,
    flags: libc::c_uint,
    pack_id: libc::c_int,
    usr_ptr: *mut libc::c_void,
    status: libc::c_uchar,
    masked_status: libc::c_uchar,
    msg_status: libc::c_uchar,
    sb_len_wr: libc::c_uchar,
    host_status: libc::c_ushort,
    driver_status: libc::c_ushort,
    resid: libc::c_int,
    duration: libc::c_uint,
    info: libc::c_uint,
}

/// A block device node open read-only for SG_IO.
pub struct SgDevice {
    file: std::fs::File,
}

impl SgDevice {
    /// Opens `node` `O_RDONLY | O_NONBLOCK`: never for writing, and without waiting for a
    /// medium (sd(4) and sg(4) both accept SG_IO on such a descriptor).
    pub fn open(node: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(node)?;
        Ok(SgDevice { file })
    }
}

impl Transport for SgDevice {
    fn data_in(&mut self, cdb: &[u8], buffer: &mut [u8]) -> Result<usize, CommandFailure> {
        let mut sense = [0u8; SENSE_BUFFER_LEN];
        let mut hdr = SgIoHdr {
            interface_id: SG_INTERFACE_ID_ORIG,
            dxfer_direction: SG_DXFER_FROM_DEV,
            cmd_len: cdb.len() as libc::c_uchar,
            mx_sb_len: SENSE_BUFFER_LEN as libc::c_uchar,
            iovec_count: 0,
            dxfer_len: buffer.len() as libc::c_uint,
            dxferp: buffer.as_mut_ptr().cast(),
            cmdp: cdb.as_ptr(),
            sbp: sense.as_mut_ptr(),
            timeout: COMMAND_TIMEOUT_MS,
            flags: 0,
            pack_id: 0,
            usr_ptr: std::ptr::null_mut(),
            status: 0,
            masked_status: 0,
            msg_status: 0,
            sb_len_wr: 0,
            host_status: 0,
            driver_status: 0,
            resid: 0,
            duration: 0,
            info: 0,
        };
        // SAFETY: `hdr` points at `cdb`, `buffer` and `sense`, all alive and of the lengths
        // given for the duration of this synchronous ioctl; the kernel writes only within
        // `dxfer_len` of `buffer` and `mx_sb_len` of `sense`.
        let rc = unsafe { libc::ioctl(self.file.as_raw_fd(), SG_IO as _, &mut hdr) };
        if rc < 0 {
            return Err(CommandFailure::Os(
                std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
            ));
        }
        if hdr.info & SG_INFO_OK_MASK == 0 {
            let resid = usize::try_from(hdr.resid).unwrap_or(0);
            return Ok(buffer.len().saturating_sub(resid));
        }
        let sense_len = usize::from(hdr.sb_len_wr).min(SENSE_BUFFER_LEN);
        if hdr.status == STATUS_CHECK_CONDITION || sense_len > 0 {
            return Err(CommandFailure::CheckCondition(sense[..sense_len].to_vec()));
        }
        if hdr.status != 0 {
            return Err(CommandFailure::Status(hdr.status));
        }
        Err(CommandFailure::Host {
            host_status: hdr.host_status,
            driver_status: hdr.driver_status,
        })
    }
}
