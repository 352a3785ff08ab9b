//! Checks of how a job issues its I/O: engine and target, sync, `rw`'s holes and think time.

use super::SECTOR_BYTES;
use crate::error::{JobError, Location};
use crate::model::{BlockSizeSpec, EngineKind, JobSpec, OpenSync, RwModifier, Target};

pub(super) fn check_engine_and_target(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    match (&spec.target, spec.engine) {
        (Target::Sim(_), EngineKind::Sim) => Ok(()),
        (Target::Sim(profile), engine) => Err(JobError::invalid(
            location.clone(),
            "ioengine",
            Some(engine.as_str().into()),
            format!("filename=sim:{profile} is a simulated drive and needs ioengine=sim"),
        )),
        (_, EngineKind::Sim) => Err(JobError::invalid(
            location.clone(),
            "ioengine",
            Some("sim".into()),
            "ioengine=sim needs a simulated drive: filename=sim:PROFILE",
        )),
        _ => Ok(()),
    }
}

/// `fsync` and friends run on every engine that can flush (the simulated stacks send SCSI
/// SYNCHRONIZE CACHE / ATA FLUSH CACHE EXT); `sync=1` / `sync=dsync` on every engine whose
/// writes go through the target's descriptor, which is opened with `O_SYNC` / `O_DSYNC` as fio
/// does (simulated drives flush after each write). Not `mmap`: stores into a mapping stay
/// asynchronous whatever the descriptor's flags (fio runs them so all the same).
/// `thinktime_spin` is part of `thinktime`.
pub(super) fn check_sync_and_think(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    let sync = &spec.sync;
    check_fio_zones_and_clones(spec, location)?;
    if let Some(replay) = &spec.replay {
        if replay.trace.counts() == (0, 0, 0) {
            return Err(JobError::invalid(
                location.clone(),
                "replay_skip",
                None,
                "leaves none of the trace's reads, writes and trims to replay",
            ));
        }
    }
    let unsynchronisable = match spec.engine {
        EngineKind::Mmap => Some(
            "ioengine=mmap writes by storing into a mapping, which O_SYNC / O_DSYNC do not make \
             synchronous (fio runs it, unsynchronised); fsync=1 (or direct=1, which msyncs each \
             I/O) makes every write stable before the next",
        ),
        EngineKind::Null => {
            Some("ioengine=null writes nothing that O_SYNC / O_DSYNC could make stable")
        }
        _ => None,
    };
    if let (Some(reason), true) = (unsynchronisable, sync.open_sync != OpenSync::None) {
        return Err(JobError::unsupported(
            location.clone(),
            "sync",
            Some(
                match sync.open_sync {
                    OpenSync::Dsync => "dsync",
                    _ => "sync",
                }
                .into(),
            ),
            reason,
        ));
    }
    check_rw_hole(spec, location)?;
    check_number_ios_with_queued_syncs(spec, location)?;
    // fio's trims are drawn by the same sequence (holes, `bs_unaligned` and `rw_sequencer`
    // with trims match fio 3.33's iologs), but `bs_is_seq_rand`'s sizes with `trimwrite` are
    // not storlab's (`--rw=trimwrite --bs=16k,4k --ioengine=null`: 16 actions from fio, 64).
    let trims = spec.trim != crate::model::TrimMode::None;
    for (asked, key) in [
        (spec.bs_is_seq_rand, "bs_is_seq_rand"),
        (spec.bs_unaligned, "bs_unaligned"),
    ] {
        if asked && (!follows_fio_sequence(spec) || trims && key == "bs_is_seq_rand") {
            return Err(JobError::unsupported(
                location.clone(),
                key,
                Some("1".into()),
                "storlab draws sizes as fio does in a fio job's own sequence only: not in a preset, with bs_is_seq_rand and trims, or in a random job aligned otherwise than fio",
            ));
        }
    }
    if spec.bs_unaligned && spec.verify {
        return Err(JobError::unsupported(
            location.clone(),
            "bs_unaligned",
            Some("1".into()),
            "storlab verifies whole blocks of the smallest size; with sizes of any byte count use verify=0",
        ));
    }
    if spec.bs_unaligned && matches!(spec.target, crate::model::Target::Sim(_)) {
        return Err(JobError::unsupported(
            location.clone(),
            "bs_unaligned",
            Some("1".into()),
            "a simulated drive is addressed in whole 512-byte sectors; sizes of any byte count need a file",
        ));
    }
    if let RwModifier::RepeatEveryIos(every) = spec.rw_modifier {
        if !follows_fio_sequence(spec) {
            return Err(JobError::unsupported(
                location.clone(),
                "rw_sequencer",
                Some("identical".into()),
                format!("storlab repeats an offset {every} times as fio does in a fio job's own sequence only: not in a preset"),
            ));
        }
    }
    let think = &spec.think;
    if think.spin_ns > think.think_ns && think.think_ns > 0 {
        return Err(JobError::invalid(
            location.clone(),
            "thinktime_spin",
            Some(format!("{}us", think.spin_ns / 1_000)),
            format!(
                "the spin is part of thinktime ({}us) and cannot be longer",
                think.think_ns / 1_000
            ),
        ));
    }
    Ok(())
}

/// `number_ios` with syncs every N writes on an engine that queues its syncs (posixaio,
/// io_uring) above depth 1: fio counts the I/O units in flight towards `number_ios`, a sync's
/// too, but a completed sync no more (backend.c `exceeds_number_ios`), so a job that stopped
/// on syncs in flight finds itself short once they complete and runs another round of syncs
/// (`keep_running`): how many, and where, is completion timing. Seed 3535: `--rw=randwrite
/// --number_ios=10 --ioengine=posixaio --iodepth=8 --fsync=6` logged 6 writes and 4 syncs,
/// then after a reopen 4 more syncs; 9 of 12 such jobs on io_uring and posixaio differed.
fn check_number_ios_with_queued_syncs(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    let counted = spec.number_ios.is_some_and(|n| n > 0) && !spec.time_based;
    if counted && spec.sync.every_n_writes() && spec.fio_engine_queues_syncs() && spec.iodepth > 1 {
        return Err(JobError::unsupported(
            location.clone(),
            "number_ios",
            spec.number_ios.map(|n| n.to_string()),
            "with fsync or fdatasync every N writes on an engine that queues its syncs above \
             iodepth=1, fio 3.33 counts syncs in flight towards number_ios and not once they \
             complete, then runs on with more syncs as completion timing falls (backend.c \
             exceeds_number_ios); drop number_ios or the every-N syncs, or use iodepth=1",
        ));
    }
    Ok(())
}

/// What a fio job asks that storlab does not follow, refused in one line: `exitall` among a
/// job's clones, and in strided zones a skewed distribution or fio's `mmap` engine.
fn check_fio_zones_and_clones(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    if spec.exit_all.on_end && spec.numjobs > 1 {
        // fio's first thread to end terminates its clones (backend.c `thread_main` calls
        // `fio_terminate_threads`), at a point their start-up timing decides.
        return Err(JobError::unsupported(
            location.clone(),
            "exitall",
            None,
            "with numjobs above 1 fio stops the job's other clones when its first clone ends, \
             where their timing decides, which storlab does not follow; give each clone a job \
             of its own or drop exitall",
        ));
    }
    let random = spec.random_percent > 0 || spec.random_percent_writes() > 0;
    // fio's map of a range counts its smallest blocks in words of 64; a run near the range's
    // end goes on to its last word's end (lib/axmap.c: `__axmap_set` loses its trim), and
    // storlab's map does too. A map of whole words lets the run go one word further, into the
    // heap's slack past fio's array, whose bits are whatever the heap left there.
    let sizes_vary = spec.fio_smallest_block_bytes() != spec.max_block_bytes();
    let axmap = spec.random_map && !spec.fio_random.as_ref().is_some_and(|fio| fio.lfsr);
    let whole_words = axmap
        && spec.strided_zones.is_some_and(|zones| {
            let blocks = zones.range_bytes / spec.fio_smallest_block_bytes().max(1);
            blocks.is_multiple_of(64)
        });
    if spec.fio_random.is_some() && random && sizes_vary && whole_words {
        return Err(JobError::unsupported(
            location.clone(),
            "zonemode",
            Some("strided".into()),
            "random offsets of several block sizes in strided zones whose range is a multiple of 64 of the smallest block are not followed: there fio 3.33 lets an I/O at the range's end mark bits past its map, in heap memory it never set (lib/axmap.c `__axmap_set`); use a zonerange that is not a multiple of 64 blocks, or one block size",
        ));
    }
    // Without verify each I/O is shifted by its own zone's start (the worker follows fio's
    // `file_offset`); fio's read-back would shift by wherever the zones then stand.
    if spec.fio_engine_shifts_to_file_start()
        && spec.strided_zones.is_some()
        && (spec.verify || spec.verify_spec.is_some())
    {
        return Err(JobError::unsupported(
            location.clone(),
            "zonemode",
            Some("strided".into()),
            "fio's mmap engine puts each I/O at its offset less fio's start, which strided zones move zone by zone (engines/mmap.c with io_u.c setup_strided_zone_mode); storlab does not follow where its verify reads go then: use another ioengine with zonemode=strided and verify",
        ));
    }
    Ok(())
}

/// Whether storlab draws `spec`'s offsets as fio's own sequence (io_u.c), which it does for a
/// fio job except with strided zones, or random offsets aligned otherwise than fio's
/// `blockalign` (`OffsetGenerator::use_fio_streams`).
fn follows_fio_sequence(spec: &JobSpec) -> bool {
    let random = spec.random_percent > 0 || spec.random_percent_writes() > 0;
    let align = spec.align_bytes.max(1);
    let aligned_as_fio = spec.align_given
        || (spec.block_size_read.min_bytes().is_multiple_of(align)
            && spec.block_size_write.min_bytes().is_multiple_of(align));
    spec.fio_random.is_some() && (aligned_as_fio || !random)
}

/// `rw=MODE:N`'s hole after each I/O: whole sectors, several block sizes and backward holes
/// only where storlab follows fio's sequence.
fn check_rw_hole(spec: &JobSpec, location: &Location) -> Result<(), JobError> {
    let hole = match spec.rw_modifier {
        RwModifier::SkipBytes(skip) => Some((skip, format!("{}:{skip}", spec.rw_name()))),
        RwModifier::BackBytes(back) => Some((back, format!("{}:-{back}", spec.rw_name()))),
        _ => None,
    };
    if let Some((skip, shown)) = hole {
        if skip % SECTOR_BYTES != 0 {
            return Err(JobError::invalid(
                location.clone(),
                "rw",
                Some(shown),
                format!("the hole after each I/O must be a multiple of {SECTOR_BYTES} bytes (one sector)"),
            ));
        }
        let one_size = match (&spec.block_size_read, &spec.block_size_write) {
            (BlockSizeSpec::Fixed(read), BlockSizeSpec::Fixed(write)) => read == write,
            _ => false,
        };
        // A fio job's holes come from fio's own sequence (io_u.c, `get_next_seq_offset`: the
        // hole after each I/O whatever its size), trims included, which storlab follows except
        // in strided zones (`OffsetGenerator::use_fio_streams`); a preset's pass counts one size.
        if !one_size && !follows_fio_sequence(spec) {
            return Err(JobError::unsupported(
                location.clone(),
                "rw",
                Some(shown),
                "storlab skips holes between I/Os of several block sizes as fio does in a fio job's own sequence, not in a preset (one block size there) nor in a random job aligned otherwise than fio",
            ));
        }
        if let RwModifier::BackBytes(_) = spec.rw_modifier {
            // Backward holes are drawn by fio's own sequence (io_u.c, `get_next_seq_offset`),
            // which storlab follows for plain sequential regions only.
            let unsupported = if spec.trim != crate::model::TrimMode::None {
                Some("storlab runs backward holes with reads and writes only, not trims")
            } else if spec.strided_zones.is_some() {
                Some("storlab runs backward holes over a whole region, not strided zones")
            } else if spec.verify && spec.loops > 1 {
                Some("storlab does not verify backward holes over several loops")
            } else {
                None
            };
            if let Some(reason) = unsupported {
                return Err(JobError::unsupported(
                    location.clone(),
                    "rw",
                    Some(shown),
                    reason,
                ));
            }
        }
    }
    Ok(())
}
