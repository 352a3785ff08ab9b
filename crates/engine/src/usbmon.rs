//! Linux's usbmon binary interface (`/dev/usbmonN`), read one event at a time: the ioctls of
//! drivers/usb/mon/mon_bin.c (Documentation/usb/usbmon.rst, "Raw binary format and API").
//! `storlab usbmon-capture` turns the events into a pcap for the Linux oracle harness.
//!
//! MON_IOCX_GETX hands over one event (its 64-byte header, the LINKTYPE_USB_LINUX_MMAPPED
//! header libpcap writes, and up to `alloc` bytes of its data) and removes it from the ring;
//! MON_IOCT_RING_SIZE enlarges the ring; events a slow reader misses are dropped and counted,
//! and MON_IOCG_STATS returns the count, so a lossy capture can fail instead of looking whole.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Length of the header MON_IOCX_GETX returns (`struct mon_bin_hdr`).
pub const USBMON_EVENT_HEADER_LEN: usize = 64;

/// `_IOW(MON_IOC_MAGIC 0x92, 10, struct mon_bin_get)`: one event with the 64-byte header.
const MON_IOCX_GETX: libc::c_ulong = 0x4018_920a;
/// `_IO(MON_IOC_MAGIC, 4)`: set the ring's size in bytes.
const MON_IOCT_RING_SIZE: libc::c_ulong = 0x9204;
/// `_IOR(MON_IOC_MAGIC, 3, struct mon_bin_stats)`: events queued and dropped.
const MON_IOCG_STATS: libc::c_ulong = 0x8008_9203;
/// mon_bin.c's BUFF_MAX, the largest ring it accepts (1 200 KiB): each event's data is cut to a
/// fifth of the ring, and the largest ring also falls behind least.
const RING_BYTES: libc::c_ulong = 1200 * 1024;

/// `struct mon_bin_get`.
#[repr(C)]
struct MonBinGet {
    hdr: *mut u8,
    data: *mut u8,
    alloc: libc::size_t,
}

/// An open usbmon binary device.
pub struct UsbmonReader {
    file: File,
}

impl UsbmonReader {
    /// Opens `path` (read-only, non-blocking) and asks for the largest ring.
    pub fn open(path: &Path) -> io::Result<UsbmonReader> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?;
        // SAFETY: MON_IOCT_RING_SIZE takes its argument by value. A refusal keeps the default
        // ring, which only makes drops likelier, and those are counted.
        unsafe { libc::ioctl(file.as_raw_fd(), MON_IOCT_RING_SIZE, RING_BYTES) };
        Ok(UsbmonReader { file })
    }

    /// Waits up to `timeout_ms` for an event; false on timeout or a signal.
    pub fn wait(&self, timeout_ms: i32) -> bool {
        let mut poll = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the call.
        unsafe { libc::poll(&mut poll, 1, timeout_ms) > 0 }
    }

    /// Takes the oldest event off the ring into `header` and `data` (its data cut to
    /// `data.len()`); false when the ring is empty.
    pub fn next_event(
        &self,
        header: &mut [u8; USBMON_EVENT_HEADER_LEN],
        data: &mut [u8],
    ) -> io::Result<bool> {
        let mut get = MonBinGet {
            hdr: header.as_mut_ptr(),
            data: data.as_mut_ptr(),
            alloc: data.len(),
        };
        // SAFETY: `get` points at buffers of the sizes it states, alive for the call.
        let rc = unsafe { libc::ioctl(self.file.as_raw_fd(), MON_IOCX_GETX, &mut get) };
        if rc == 0 {
            return Ok(true);
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(false),
            _ => Err(error),
        }
    }

    /// Events the kernel dropped because the ring was full.
    pub fn dropped_events(&self) -> io::Result<u32> {
        let mut stats = [0u32; 2];
        // SAFETY: MON_IOCG_STATS writes `struct mon_bin_stats { u32 queued; u32 dropped; }`.
        let rc = unsafe { libc::ioctl(self.file.as_raw_fd(), MON_IOCG_STATS, stats.as_mut_ptr()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stats[1])
    }
}
