//! The trace hooks: where in a command's life the core tells the pcap recorder what happened.
//! They run on every command while recording is rare: each is an inlined check, and the body
//! that tells the recorder stays out of the hot path.

use crate::command::UNMAP_LIST_BYTES;
use crate::core::Simulator;
use crate::cx::UsbTiming;
use crate::driver_uas::{ReadyIu, TaskManagement};
use crate::endpoints::{Bridged, Endpoints};
use crate::event::CmdId;
use crate::op::Op;
use crate::trace::data_urb;
use crate::trace::{
    PcapRecorder, TraceEvent, TracedCommand, Urb, CAPTURE_DATA_BYTES_MAX, STATUS_URB_BYTES,
    URB_KILLED,
};

impl Simulator {
    /// Record the session as a usbmon pcap from now on (USB stacks only; enumeration first).
    pub fn enable_pcap(&mut self) {
        if self.pcap.is_some() {
            return;
        }
        let uas = match &self.endpoints {
            Endpoints::Bridged(Bridged::Bot(_)) => false,
            Endpoints::Bridged(Bridged::Uas(_)) => true,
            Endpoints::Direct(_) => return,
        };
        let super_speed = matches!(self.cx.usb, Some(UsbTiming::Super(_)));
        let host = &self.spec.host;
        let status_urb_bytes = host.status_urb_bytes.unwrap_or(STATUS_URB_BYTES);
        self.pcap = Some(
            PcapRecorder::new(uas, super_speed)
                .with_status_urbs(status_urb_bytes, host.status_before_data_after_ready)
                .with_transfer_flags(host.urb_transfer_flags),
        );
    }

    /// The capture so far, ending the recording (empty when tracing was not enabled).
    pub fn take_pcap(&mut self) -> Vec<u8> {
        self.pcap
            .take()
            .map(PcapRecorder::into_bytes)
            .unwrap_or_default()
    }

    /// Record one task management exchange: the status transfer queued for the response, the
    /// Task Management IU, and the Response IU, or (hung bridge) the status transfer killed when
    /// the host stopped waiting.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn trace_task_management(&mut self, tm: &TaskManagement) {
        if let Some(p) = self.pcap.as_mut() {
            let status = p.begin_transfer(Urb::Status, tm.submit_ns, p.status_urb_bytes(), &[]);
            p.transfer(Urb::Command, tm.submit_ns, tm.request_done_ns, &tm.request);
            match &tm.response {
                Some(r) => p.end_transfer(status, Urb::Status, tm.response_ns, r, 0),
                None => p.end_transfer(status, Urb::Status, tm.response_ns, &[], URB_KILLED),
            }
        }
    }

    /// Record the end of an aborted UAS command's transfers at `at_ns`: no Sense IU will come,
    /// and the driver kills its status transfer and its data transfer when one was queued
    /// (with streams at issue; at High-Speed on the device's Ready IU).
    pub(in crate::core) fn trace_aborted_urbs(
        &mut self,
        id: CmdId,
        at_ns: u64,
        data_urb_queued: bool,
    ) {
        if let Some(p) = self.pcap.as_mut() {
            if data_urb_queued {
                p.end_urb(
                    at_ns,
                    id,
                    data_urb(self.commands[id as usize].op),
                    URB_KILLED,
                );
            }
            p.end_urb(at_ns, id, Urb::Status, URB_KILLED);
        }
    }

    #[inline]
    pub(in crate::core) fn trace(&mut self, id: CmdId, hook: TraceHook) {
        if self.pcap.is_some() {
            self.record(id, hook);
        }
    }

    #[inline]
    pub(in crate::core) fn trace_ready(&mut self, id: CmdId, iu: &ReadyIu) {
        if self.pcap.is_some() {
            self.record(id, TraceHook::Ready(iu.at_ns, iu.bytes));
        }
    }

    /// Tell the recorder what happened to `id`, with what it needs of the command.
    #[cold]
    #[inline(never)]
    pub(in crate::core) fn record(&mut self, id: CmdId, hook: TraceHook) {
        let now = self.cx.now_ns;
        let c = &self.commands[id as usize];
        let bot = match &self.endpoints {
            Endpoints::Bridged(Bridged::Bot(_)) => Some(c.bot),
            Endpoints::Bridged(Bridged::Uas(_)) | Endpoints::Direct(_) => None,
        };
        let data_head: &[u8] = if c.op == Op::Trim {
            &c.unmap_list
        } else {
            let part = c.parts[0];
            let start = part.slot as usize * self.slot_bytes + part.slot_offset as usize;
            let n = (part.len as usize).min(CAPTURE_DATA_BYTES_MAX);
            &self.slot_buffers[start..start + n]
        };
        let traced = TracedCommand {
            id,
            op: c.op,
            data_len: if c.op == Op::Trim {
                UNMAP_LIST_BYTES as u32
            } else {
                c.len_bytes
            },
            command: &c.command_bytes[..usize::from(c.command_len)],
            status: &c.status_bytes[..usize::from(c.status_len)],
            data_head,
        };
        let ready_iu;
        let event = match hook {
            TraceHook::Issued => TraceEvent::Issued,
            TraceHook::CommandDelivered => TraceEvent::CommandDelivered {
                data_urb_ns: bot.map_or(0, |b| b.data_urb_ns),
            },
            TraceHook::Ready(at_ns, bytes) => {
                ready_iu = bytes;
                TraceEvent::Ready {
                    at_ns,
                    ready_iu: &ready_iu,
                }
            }
            // Chained BOT: the data transfer completed at the host when its last byte arrived
            // (for a write held in the bridge's buffer, before the drive finished), and the CSW
            // transfer was submitted once that completion was handled.
            TraceHook::DataDone => match bot {
                Some(b) if b.status_urb_ns > 0 => TraceEvent::DataDone {
                    done_at_ns: b.data_urb_done_ns,
                    status_at_ns: b.status_urb_ns,
                },
                _ => TraceEvent::DataDone {
                    done_at_ns: now,
                    status_at_ns: now,
                },
            },
            TraceHook::Status(at_ns) => TraceEvent::Status { at_ns },
        };
        if let Some(p) = self.pcap.as_mut() {
            p.on_event(now, &traced, event);
        }
    }
}

/// Where in a command's life the simulator calls the recorder.
#[derive(Clone, Copy)]
pub(in crate::core) enum TraceHook {
    Issued,
    CommandDelivered,
    Ready(u64, [u8; storlab_wire::uas::READY_IU_LEN]),
    DataDone,
    Status(u64),
}
