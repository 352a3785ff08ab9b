//! The first drive model: a fixed per-command cost plus a media rate, with internal parallelism
//! (SSD: several units work at once; HDD: one unit, plus a fixed access time when a command
//! does not continue where the previous one ended).

use super::{Drive, DriveCommand, DriveStats, TrimRange, SOLID_STATE_READY_NS};
use crate::error::SimError;
use crate::profile::limits::{
    capacity_out_of_range, in_range, positive, rate_mb_s, step_ns, transfer_size, NCQ_TAGS_MAX,
    PARALLEL_UNITS_MAX, SECTOR_BYTES,
};
use crate::resource::{bytes_ns, ps_per_byte, Flow, Server};
use rand_chacha::ChaCha8Rng;
use rand_core::RngCore;
use serde::{Deserialize, Serialize};

/// Storage medium of the simple drive model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Medium {
    Ssd,
    Hdd,
}

/// First drive model: fixed per-command cost plus media rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimpleDriveProfile {
    pub description: String,
    pub medium: Medium,
    pub capacity_bytes: u64,
    /// Commands the drive works on at once (SSD: channels × dies; HDD: 1).
    pub parallel_units: u32,
    /// NCQ depth the drive advertises (1 = no NCQ).
    pub queue_depth: u32,
    pub read_command_ns: u64,
    pub write_command_ns: u64,
    /// Aggregate media rate shared by all units.
    pub read_rate_mb_s: u64,
    pub write_rate_mb_s: u64,
    /// HDD: seek plus rotational latency when a command does not continue the previous one.
    #[serde(default)]
    pub random_access_ns: u64,
    /// Uniform random extra latency per command, 0..=this (seeded).
    #[serde(default)]
    pub latency_jitter_ns: u64,
    /// Data leaves the media in pieces of this size (NAND page, HDD buffer segment).
    pub transfer_unit_bytes: u32,
    /// Time to process a TRIM command.
    pub trim_command_ns: u64,
}

/// Check a simple drive profile's values against their limits; errors name `origin` and the key.
pub(crate) fn validate(origin: &str, p: &SimpleDriveProfile) -> Result<(), SimError> {
    positive(origin, "capacity_bytes", p.capacity_bytes)?;
    if !p.capacity_bytes.is_multiple_of(u64::from(SECTOR_BYTES)) {
        return Err(SimError::profile(
            origin,
            "capacity_bytes",
            format!("must be a multiple of {SECTOR_BYTES}"),
        ));
    }
    if let Some(reason) = capacity_out_of_range(p.capacity_bytes) {
        return Err(SimError::profile(origin, "capacity_bytes", reason));
    }
    in_range(
        origin,
        "parallel_units",
        p.parallel_units.into(),
        1,
        PARALLEL_UNITS_MAX.into(),
        "units working at once: at most the dies of the largest SSD",
    )?;
    rate_mb_s(origin, "read_rate_mb_s", p.read_rate_mb_s)?;
    rate_mb_s(origin, "write_rate_mb_s", p.write_rate_mb_s)?;
    transfer_size(
        origin,
        "transfer_unit_bytes",
        p.transfer_unit_bytes,
        "a piece is at least one sector and at most one ATA command",
    )?;
    step_ns(origin, "read_command_ns", p.read_command_ns)?;
    step_ns(origin, "write_command_ns", p.write_command_ns)?;
    step_ns(origin, "random_access_ns", p.random_access_ns)?;
    step_ns(origin, "latency_jitter_ns", p.latency_jitter_ns)?;
    step_ns(origin, "trim_command_ns", p.trim_command_ns)?;
    if p.queue_depth == 0 || p.queue_depth > NCQ_TAGS_MAX {
        return Err(SimError::profile(
            origin,
            "queue_depth",
            format!("NCQ has at most {NCQ_TAGS_MAX} tags: must be 1..={NCQ_TAGS_MAX}"),
        ));
    }
    if p.medium == Medium::Hdd && p.parallel_units != 1 {
        return Err(SimError::profile(
            origin,
            "parallel_units",
            "an HDD has one actuator: must be 1",
        ));
    }

    Ok(())
}

const BYTES_PER_MB: f64 = 1e6;

/// Simple SSD or HDD.
pub struct SimpleDrive {
    profile: SimpleDriveProfile,
    /// When each unit (die group / actuator) is free.
    units: Vec<Server>,
    /// The media data path all units share (aggregate media rate).
    media: Server,
    read_byte_ps: u64,
    write_byte_ps: u64,
    /// LBA right after the previous command (HDD sequential detection).
    next_sequential_lba: u64,
    trims: u64,
    trimmed_bytes: u64,
}

impl SimpleDrive {
    pub fn new(profile: &SimpleDriveProfile) -> SimpleDrive {
        SimpleDrive {
            units: vec![Server::default(); profile.parallel_units as usize],
            media: Server::default(),
            read_byte_ps: ps_per_byte(profile.read_rate_mb_s as f64 * BYTES_PER_MB),
            write_byte_ps: ps_per_byte(profile.write_rate_mb_s as f64 * BYTES_PER_MB),
            next_sequential_lba: u64::MAX,
            trims: 0,
            trimmed_bytes: 0,
            profile: profile.clone(),
        }
    }

    /// The unit that frees up first (lowest index on ties, for determinism).
    fn pick_unit(&self) -> usize {
        let mut best = 0;
        for (i, u) in self.units.iter().enumerate() {
            if u.busy_until_ns < self.units[best].busy_until_ns {
                best = i;
            }
        }
        best
    }

    /// Access cost: per-command time, plus (HDD) a fixed access time for a non-sequential
    /// command, plus seeded jitter.
    fn access_ns(&mut self, command: &DriveCommand, base_ns: u64, rng: &mut ChaCha8Rng) -> u64 {
        let mut ns = base_ns;
        if self.profile.medium == Medium::Hdd && command.lba != self.next_sequential_lba {
            ns += self.profile.random_access_ns;
        }
        if self.profile.latency_jitter_ns > 0 {
            ns += rng.next_u64() % (self.profile.latency_jitter_ns + 1);
        }
        self.next_sequential_lba = command.lba + u64::from(command.blocks);
        ns
    }

    fn piece_ns(&self, bytes: u64, byte_ps: u64) -> u64 {
        bytes_ns(bytes.min(self.profile.transfer_unit_bytes.into()), byte_ps)
    }
}

impl Drive for SimpleDrive {
    fn capacity_bytes(&self) -> u64 {
        self.profile.capacity_bytes
    }

    fn logical_block_bytes(&self) -> u32 {
        SECTOR_BYTES
    }

    fn queue_depth(&self) -> u32 {
        self.profile.queue_depth
    }

    /// unit_start = max(now, unit free); data_start = unit_start + access;
    /// media stream = bytes × read_byte_time through the shared media path.
    fn read(&mut self, now_ns: u64, command: &DriveCommand, rng: &mut ChaCha8Rng) -> Flow {
        let bytes = u64::from(command.blocks) * u64::from(SECTOR_BYTES);
        let unit = self.pick_unit();
        let access = self.access_ns(command, self.profile.read_command_ns, rng);
        let ready = now_ns.max(self.units[unit].busy_until_ns) + access;
        let duration = bytes_ns(bytes, self.read_byte_ps);
        let flow = self.media.pass(
            Flow::ready_at(ready),
            duration,
            self.piece_ns(bytes, self.read_byte_ps),
            bytes,
        );
        let unit_start = now_ns.max(self.units[unit].busy_until_ns);
        self.units[unit].reserve(unit_start, flow.end_ns - unit_start, bytes);
        flow
    }

    /// Data is absorbed at the write rate as it arrives (once a unit is free); the command
    /// completes a per-command cost after the last byte.
    fn write(
        &mut self,
        incoming: Flow,
        command: &DriveCommand,
        _payload: Option<&[u8]>,
        rng: &mut ChaCha8Rng,
    ) -> Flow {
        let bytes = u64::from(command.blocks) * u64::from(SECTOR_BYTES);
        let unit = self.pick_unit();
        let access = self.access_ns(command, self.profile.write_command_ns, rng);
        // The drive takes data only once a unit is free to hold it.
        let unit_start = incoming.start_ns.max(self.units[unit].busy_until_ns);
        let incoming = Flow {
            start_ns: unit_start,
            ..incoming
        };
        let absorbed = self.media.pass(
            incoming,
            bytes_ns(bytes, self.write_byte_ps),
            self.piece_ns(bytes, self.write_byte_ps),
            bytes,
        );
        let done = Flow {
            end_ns: absorbed.end_ns + access,
            ..absorbed
        };
        self.units[unit].reserve(unit_start, done.end_ns - unit_start, bytes);
        done
    }

    fn trim(&mut self, now_ns: u64, ranges: &[TrimRange]) -> u64 {
        self.trims += 1;
        self.trimmed_bytes += ranges
            .iter()
            .map(|r| r.blocks * u64::from(SECTOR_BYTES))
            .sum::<u64>();
        // TRIM is a non-queued command: it waits for every unit.
        let start = self
            .units
            .iter()
            .map(|u| u.busy_until_ns)
            .max()
            .unwrap_or(0)
            .max(now_ns);
        let end = start + self.profile.trim_command_ns;
        for u in &mut self.units {
            u.busy_until_ns = end;
        }
        end
    }

    /// The model has no write cache (a write completes once its media units absorbed it), so
    /// a flush has nothing to write: it completes as it arrives.
    fn flush(&mut self, now_ns: u64) -> u64 {
        now_ns
    }

    /// No spindle: ready as a solid-state drive is (nothing is cached, so nothing is lost).
    fn power_on_ready_ns(&self) -> u64 {
        SOLID_STATE_READY_NS
    }

    fn stats(&self) -> DriveStats {
        let units = self.units.len() as u64;
        DriveStats {
            // Whichever is busier: the units on average, or the media path they share.
            busy_ns: (self.units.iter().map(|u| u.busy_ns).sum::<u64>() / units)
                .max(self.media.busy_ns),
            commands: self.units.iter().map(|u| u.operations).sum(),
            bytes: self.units.iter().map(|u| u.bytes).sum(),
            trims: self.trims,
            trimmed_bytes: self.trimmed_bytes,
        }
    }
}
