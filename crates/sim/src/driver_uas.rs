//! USB Attached SCSI, both ends: tagged Command IUs on the command pipe, data on streams
//! (stream id = tag) at SuperSpeed or announced by Read/Write Ready IUs at High-Speed, and a
//! Sense IU per command on the status pipe, whose tag the host checks. Its per-command state
//! is the tag (the command's index + 1), so it needs nothing beside the command's messages.

use crate::command::Command;
use crate::cx::layer;
use crate::cx::Cx;
use crate::event::CmdId;
use crate::fault::HangRecovery;
use crate::op::Op;
use crate::resource::Flow;
use crate::scsi::{decode_cdb, emit_cdb, emit_unmap_list, ScsiOp, CDB_BYTES_MAX};
use storlab_wire::scsi::{Lun, SenseKey, SenseRepr, Status};
use storlab_wire::uas::{
    IuId, IuPacket, IuRepr, ResponseCode, ResponseIu, TaskAttribute, TaskManagementFunction,
    TaskManagementIu, COMMAND_IU_CDB_LEN, COMMAND_IU_LEN, READY_IU_LEN, RESPONSE_IU_LEN,
    SENSE_IU_HEADER_LEN, TASK_MANAGEMENT_IU_LEN,
};

/// Fixed-format sense data a Sense IU carries with CHECK CONDITION: 18 bytes (SPC-4 §4.5.3).
pub(crate) const SENSE_DATA_BYTES: usize = 18;

/// UAS transfers queued per command besides the Command IU: status (Sense IU) and data.
const URBS_BESIDES_COMMAND: u64 = 2;

/// A Ready IU the device sent (High-Speed UAS): when it reached the host, and its bytes.
pub(crate) struct ReadyIu {
    pub at_ns: u64,
    pub bytes: [u8; READY_IU_LEN],
}

/// The UAS host driver and the bridge's UAS endpoint.
#[derive(Clone, Copy)]
pub(crate) struct Uas {
    /// Data moves on bulk streams (SuperSpeed); without them (High-Speed) the device announces
    /// each data phase with a Read/Write Ready IU.
    pub streams: bool,
    /// The tag of the host's task management requests: never a command's in flight (UAS-2
    /// §6.2.4: a tag names one outstanding IU).
    pub task_management_tag: u16,
}

impl Uas {
    /// UAS tag of a command: its table index + 1 (tag 0 is not a valid stream id).
    fn tag(id: CmdId) -> u16 {
        u16::try_from(id + 1).expect("outstanding commands are bounded by 16-bit tags")
    }

    /// Host: build the Command IU, queue the status and data transfers, send the IU. Returns
    /// when it reached the bridge.
    #[inline]
    pub fn issue(&self, cx: &mut Cx, id: CmdId, c: &mut Command) -> u64 {
        let now = cx.now_ns;
        let tag = Self::tag(id);
        c.tag = tag.into();
        c.status_len = 0;
        if c.op == Op::Trim {
            emit_unmap_list(c.offset_bytes, c.len_bytes, &mut c.unmap_list);
        }
        // Written in place through the packet view (SIMPLE, priority 0, LUN 0, no additional
        // CDB bytes, reserved bytes zero), as the Sense IU is: an `IuRepr::Command` carries
        // a 268-byte inline CDB, which building, moving and emitting copied for every command.
        let bytes = &mut c.command_bytes[..COMMAND_IU_LEN];
        bytes.fill(0);
        let mut packet = IuPacket::new_unchecked(bytes);
        packet.set_iu_id(IuId::Command);
        packet.set_tag(tag);
        packet.set_prio_attr(0, TaskAttribute::Simple);
        packet.set_additional_cdb_length_byte(0);
        packet.set_lun(Lun::from_index(0));
        let cdb: &mut [u8; CDB_BYTES_MAX] = (&mut packet.buffer_mut()
            [COMMAND_IU_LEN - COMMAND_IU_CDB_LEN..])
            .try_into()
            .expect("a Command IU ends with its 16 CDB bytes");
        emit_cdb(c.op, c.offset_bytes, c.len_bytes, cdb);
        c.command_len = COMMAND_IU_LEN as u8;
        // The driver rings the doorbell for the status and data transfers alongside.
        let extra = URBS_BESIDES_COMMAND * cx.controller.transfer_ns(0);
        cx.usb_message_out(now, COMMAND_IU_LEN as u64, extra)
    }

    /// Bridge: parse the Command IU and its CDB.
    #[inline]
    pub fn decode_command(c: &mut Command) -> ScsiOp {
        // Zero-copy view: the firmware reads fields in place, as a real bridge does.
        let packet = IuPacket::new_checked(&c.command_bytes[..usize::from(c.command_len)])
            .expect("bridge: short IU");
        assert_eq!(
            packet.iu_id(),
            IuId::Command,
            "bridge: expected a Command IU"
        );
        let tag = packet.tag();
        let op = decode_cdb(packet.cdb());
        c.device_tag = tag.into();
        op
    }

    /// Bridge: the Sense IU for this command; returns its bytes. GOOD status without sense
    /// data, or CHECK CONDITION with the fault's fixed-format sense in the same IU (UAS-2,
    /// Sense IU: no separate REQUEST SENSE): MEDIUM ERROR / UNRECOVERED READ ERROR (03/11/00)
    /// for a read the drive failed, NOT READY (02/04/01) or UNIT ATTENTION (06/29/00) after a
    /// power loss.
    #[inline]
    pub fn encode_status(c: &mut Command) -> u64 {
        assert_eq!(
            c.status_len, 0,
            "bridge sent a second Sense IU for one command"
        );
        let tag = u16::try_from(c.device_tag).expect("UAS tags are 16-bit");
        if let Some(sense) = c.fault.sense(c.device.lba) {
            let mut data = [0u8; SENSE_DATA_BYTES];
            let n = sense.emit(&mut data).expect("fixed sense is 18 bytes");
            let len = SENSE_IU_HEADER_LEN + n;
            let bytes = &mut c.status_bytes[..len];
            bytes.fill(0);
            let mut packet = IuPacket::new_unchecked(bytes);
            packet.set_iu_id(IuId::Sense);
            packet.set_tag(tag);
            packet.set_status(Status::CheckCondition);
            packet.set_sense_length(n as u16);
            packet.buffer_mut()[SENSE_IU_HEADER_LEN..len].copy_from_slice(&data[..n]);
            c.status_len = len as u8;
            return len as u64;
        }
        // Written in place through the packet view (reserved bytes zero, no sense data).
        let bytes = &mut c.status_bytes[..SENSE_IU_HEADER_LEN];
        bytes.fill(0);
        let mut packet = IuPacket::new_unchecked(bytes);
        packet.set_iu_id(IuId::Sense);
        packet.set_tag(tag);
        packet.set_status_qualifier(0);
        packet.set_status(Status::Good);
        packet.set_sense_length(0);
        c.status_len = SENSE_IU_HEADER_LEN as u8;
        SENSE_IU_HEADER_LEN as u64
    }

    /// Host: parse the Sense IU; its tag must be the command's. Returns the sense key of a
    /// CHECK CONDITION, None for GOOD.
    pub fn check_status(c: &Command) -> Option<SenseKey> {
        let packet = IuPacket::new_checked(&c.status_bytes[..usize::from(c.status_len)])
            .expect("host: short Sense IU");
        assert_eq!(packet.iu_id(), IuId::Sense, "host: expected a Sense IU");
        assert_eq!(
            u32::from(packet.tag()),
            c.tag,
            "Sense IU tag differs from the command's"
        );
        match packet.status() {
            Status::Good => None,
            Status::CheckCondition => Some(
                SenseRepr::parse(packet.sense_data())
                    .expect("host: invalid sense data")
                    .key,
            ),
            other => panic!("host: unexpected SCSI status {other:?}"),
        }
    }

    /// Host and bridge: the host's timers for the commands of `tags` fired; from `at_ns` the
    /// SCSI error handler aborts each in turn (`scsi_eh_abort_cmds`): ABORT TASK for its tag in
    /// a Task Management IU on the command pipe, and the bridge answers with a Response IU on
    /// the status pipe (UAS-2, Task Management IU and Response IU; SAM-4 §7.2: aborting a task
    /// the logical unit no longer has completes as FUNCTION COMPLETE). `firmware_ns` is the
    /// bridge's cost to handle each. Returns the exchanges in order, as sent, with their
    /// times; each one's `driver_ns` is when the host has checked the response.
    pub fn abort_tasks(
        &self,
        cx: &mut Cx,
        tags: &[u16],
        at_ns: u64,
        firmware_ns: u64,
    ) -> Vec<TaskManagement> {
        let mut t = at_ns;
        let mut exchanges = Vec::with_capacity(tags.len());
        for &tag in tags {
            let answer = Answer::Within(firmware_ns);
            let tm = self.task_management(cx, TaskManagementFunction::AbortTask, tag, t, answer);
            t = tm.driver_ns;
            exchanges.push(tm);
        }
        exchanges
    }

    /// Host and bridge: one task management function (ABORT TASK for `managed_tag`, LOGICAL
    /// UNIT RESET, I_T NEXUS RESET) in a Task Management IU on the command pipe, with the
    /// status transfer for its response queued alongside. The bridge parses it and either
    /// answers FUNCTION COMPLETE in a Response IU after `firmware_ns`, or, hung, not at all:
    /// the host then gives up on it after its timeout (`Answer::Never`).
    pub fn task_management(
        &self,
        cx: &mut Cx,
        function: TaskManagementFunction,
        managed_tag: u16,
        at_ns: u64,
        answer: Answer,
    ) -> TaskManagement {
        let request = IuRepr::TaskManagement(TaskManagementIu {
            tag: self.task_management_tag,
            function,
            // Only ABORT TASK and QUERY TASK name a task (UAS-2, Task Management IU).
            tag_of_managed_task: if function == TaskManagementFunction::AbortTask {
                managed_tag
            } else {
                0
            },
            lun: Lun::from_index(0),
        });
        let mut request_bytes = [0u8; TASK_MANAGEMENT_IU_LEN];
        request
            .emit_into(&mut request_bytes)
            .expect("16-byte TM IU");
        // The driver queues the status transfer for the response with the request (on the
        // request's tag's stream at SuperSpeed).
        let extra = cx.controller.transfer_ns(0);
        let request_done_ns = cx.usb_message_out(at_ns, TASK_MANAGEMENT_IU_LEN as u64, extra);
        // Bridge: the request names the function (and for ABORT TASK the lost command's tag).
        let IuRepr::TaskManagement(tm) =
            IuRepr::parse_bytes(&request_bytes).expect("bridge: TM IU")
        else {
            panic!("bridge: expected a Task Management IU");
        };
        assert_eq!(tm.function, function, "bridge decoded another function");
        assert_eq!(
            tm.tag_of_managed_task,
            if function == TaskManagementFunction::AbortTask {
                managed_tag
            } else {
                0
            },
            "bridge: task management for another tag"
        );
        let firmware_ns = match answer {
            Answer::Within(ns) => ns,
            Answer::Never(timeout_ns) => {
                return TaskManagement {
                    request: request_bytes,
                    response: None,
                    submit_ns: at_ns,
                    request_done_ns,
                    response_ns: at_ns + timeout_ns,
                    driver_ns: at_ns + timeout_ns,
                };
            }
        };
        let t = cx.reserve(layer::BRIDGE_CPU, request_done_ns, firmware_ns, 0);
        let response = IuRepr::Response(ResponseIu {
            tag: tm.tag,
            additional_response_info: [0; 3],
            response_code: ResponseCode::Complete,
        });
        let mut response_bytes = [0u8; RESPONSE_IU_LEN];
        response
            .emit_into(&mut response_bytes)
            .expect("8-byte Response IU");
        let response_ns = cx.usb_message_in(t, RESPONSE_IU_LEN as u64);
        let IuRepr::Response(r) = IuRepr::parse_bytes(&response_bytes).expect("host: Response IU")
        else {
            panic!("host: expected a Response IU");
        };
        assert_eq!(
            r.tag, self.task_management_tag,
            "Response IU for another request"
        );
        assert_eq!(
            r.response_code,
            ResponseCode::Complete,
            "task management failed"
        );
        TaskManagement {
            request: request_bytes,
            response: Some(response_bytes),
            submit_ns: at_ns,
            request_done_ns,
            response_ns,
            driver_ns: cx.hand_off(response_ns, 0),
        }
    }

    /// Host and bridge: the SCSI error handler's escalation for a bridge that hung with the
    /// commands of `aborted_tags` (the one whose timer fired first), from `at_ns`: one ABORT
    /// TASK per command (`scsi_eh_abort_cmds`), then LOGICAL UNIT RESET, then I_T NEXUS RESET,
    /// each waited for `timeout_ns` unless it is the step the bridge answers (`answered_by`,
    /// after `firmware_ns`). Computed as a value: every exchange in order, what it counts and
    /// what the host does next; the core records and applies it.
    pub fn escalate(
        &self,
        cx: &mut Cx,
        aborted_tags: &[u16],
        at_ns: u64,
        timeout_ns: u64,
        firmware_ns: u64,
        answered_by: HangRecovery,
    ) -> Escalation {
        use TaskManagementFunction as Tmf;
        let mut escalation = Escalation {
            exchanges: Vec::with_capacity(aborted_tags.len() + 2),
            aborts: aborted_tags.len() as u64,
            lu_resets: 0,
            it_nexus_resets: 0,
            ended_ns: at_ns,
            next: EscalationEnd::Answered,
        };
        // One ABORT TASK per timed-out command, none answered.
        for &tag in aborted_tags {
            let never = Answer::Never(timeout_ns);
            let abort = self.task_management(cx, Tmf::AbortTask, tag, escalation.ended_ns, never);
            escalation.ended_ns = abort.driver_ns;
            escalation.exchanges.push(abort);
        }
        let managed = aborted_tags[0];
        for (function, step) in [
            (Tmf::LogicalUnitReset, HangRecovery::LogicalUnitReset),
            (Tmf::ItNexusReset, HangRecovery::ItNexusReset),
        ] {
            match function {
                Tmf::LogicalUnitReset => escalation.lu_resets += 1,
                _ => escalation.it_nexus_resets += 1,
            }
            let answer = if answered_by == step {
                Answer::Within(firmware_ns)
            } else {
                Answer::Never(timeout_ns)
            };
            let tm = self.task_management(cx, function, managed, escalation.ended_ns, answer);
            escalation.ended_ns = tm.driver_ns;
            let answered = tm.response.is_some();
            escalation.exchanges.push(tm);
            if answered {
                // The reset aborted every task at the logical unit: they go again.
                return escalation;
            }
        }
        // The SCSI error handler's last step before it takes the device offline: the USB
        // device reset (3.x uas's bus-reset handler, `usb_reset_device`).
        escalation.next = if answered_by == HangRecovery::DeviceReset {
            EscalationEnd::DeviceReset
        } else {
            EscalationEnd::FallBackToBot
        };
        escalation
    }

    /// A Ready IU at High-Speed (no streams): the device names the tag whose data moves next;
    /// returns when the host has it. The host checks the tag is one it has outstanding.
    fn ready_iu(cx: &mut Cx, c: &Command, at_ns: u64, read: bool) -> ReadyIu {
        let tag = u16::try_from(c.device_tag).expect("UAS tags are 16-bit");
        let iu = if read {
            IuRepr::ReadReady { tag }
        } else {
            IuRepr::WriteReady { tag }
        };
        let mut bytes = [0u8; READY_IU_LEN];
        iu.emit_into(&mut bytes).expect("4-byte Ready IU");
        let at = cx.usb_message_in(at_ns, READY_IU_LEN as u64);
        let parsed = IuRepr::parse_bytes(&bytes).expect("host: invalid Ready IU");
        assert_eq!(u32::from(parsed.tag()), c.tag, "Ready IU names another tag");
        ReadyIu { at_ns: at, bytes }
    }

    /// Before read data leaves the bridge at High-Speed UAS, a Read Ready IU goes first.
    #[inline]
    pub fn data_in_gate(&self, cx: &mut Cx, c: &Command, flow: Flow) -> (Flow, Option<ReadyIu>) {
        if self.streams {
            return (flow, None);
        }
        let ready = flow.start_ns + flow.first_piece_ns;
        let iu = Self::ready_iu(cx, c, ready, true);
        let flow = Flow {
            start_ns: flow.start_ns + (iu.at_ns.max(ready) - ready),
            ..flow
        };
        (flow, Some(iu))
    }

    /// Before write data (or an UNMAP list) leaves the host at High-Speed UAS, the device sends
    /// a Write Ready IU. At SuperSpeed the stream's ERDY is part of the transfer setup.
    #[inline]
    pub fn data_out_start(&self, cx: &mut Cx, c: &Command, at_ns: u64) -> (u64, Option<ReadyIu>) {
        if self.streams {
            return (at_ns, None);
        }
        let iu = Self::ready_iu(cx, c, at_ns, false);
        (iu.at_ns, Some(iu))
    }
}

/// Whether the bridge answers a task management function: after its firmware's time, or never
/// (hung; the host gives up after the timeout it carries).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Answer {
    Within(u64),
    Never(u64),
}

/// One task management exchange: the Task Management IU and the Response IU as sent (none from a
/// hung bridge), when the host queued them, when the request's transfer and the response's
/// completed (or the host's wait ended), and when the driver had checked the response.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TaskManagement {
    pub request: [u8; TASK_MANAGEMENT_IU_LEN],
    pub response: Option<[u8; RESPONSE_IU_LEN]>,
    pub submit_ns: u64,
    pub request_done_ns: u64,
    pub response_ns: u64,
    pub driver_ns: u64,
}

/// The SCSI error handler's escalation for a hung UAS bridge (`Uas::escalate`).
pub(crate) struct Escalation {
    /// Every task management exchange, in the order the host sent them.
    pub exchanges: Vec<TaskManagement>,
    /// ABORT TASKs, LOGICAL UNIT RESETs and I_T NEXUS RESETs sent.
    pub aborts: u64,
    pub lu_resets: u64,
    pub it_nexus_resets: u64,
    /// When the last exchange ended (the response checked, or the host's wait over).
    pub ended_ns: u64,
    pub next: EscalationEnd,
}

/// What follows the task management of an escalation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EscalationEnd {
    /// A reset was answered: the commands go again.
    Answered,
    /// None was: the USB device reset, with which the bridge's firmware restarts.
    DeviceReset,
    /// None was, and the bridge does not recover with a device reset either: the host gives
    /// up on UAS (device reset, re-enumerated as BOT).
    FallBackToBot,
}
