//! fio's loops, syncs and read-back against fio itself: where a loop ends and what ends it,
//! the syncs at each loop's end and their logged offsets, the order and pieces of a verify
//! read-back, and how fio reads the seed and `:N` options that shape them.

use crate::fio_oracle::{both_actions, both_logs, fio_present, MIB};

/// `end_fsync` and `fsync_on_close` sync at the end of every loop, and the sync logs the
/// offset of the I/O unit fio frees last: the last I/O's, or the one a placement that failed
/// left on its unit (relative to the region when it failed against `size`, absolute when the
/// block did not fit in the file). The same lines in the log as fio's.
#[test]
fn end_syncs_come_each_loop_at_fios_offset() {
    if !fio_present() {
        return;
    }
    for (flags, syncs) in [
        (
            &[
                "--rw=write",
                "--bs=1k",
                "--size=256k",
                "--loops=3",
                "--fsync_on_close=1",
            ][..],
            3,
        ),
        (&["--rw=write", "--offset=6144", "--end_fsync=1"][..], 1),
        (
            &[
                "--rw=write",
                "--bs=4k",
                "--offset=64k",
                "--size=64k",
                "--loops=2",
                "--end_fsync=1",
            ][..],
            2,
        ),
        // A job whose bytes ran out with loops to go begins one more, empty loop, which still
        // syncs at its end; and a job that writes syncs even when it drew only reads.
        (
            &[
                "--rw=randwrite",
                "--bs=32k",
                "--offset=64k",
                "--size=256k",
                "--io_size=512k",
                "--loops=3",
                "--norandommap",
                "--fsync=3",
                "--end_fsync=1",
            ][..],
            17,
        ),
        (
            &[
                "--rw=readwrite",
                "--bs=32k",
                "--size=64k",
                "--number_ios=37",
                "--fsync_on_close=1",
            ][..],
            1,
        ),
        // A new loop clears `last_was_sync` (libfio.c, `clear_io_state`): a sync `fdatasync=N`
        // still asks for comes again before the next loop's first I/O.
        (
            &[
                "--rw=randrw",
                "--rwmixread=80",
                "--bs=2k",
                "--io_size=2048k",
                "--fdatasync=5",
            ][..],
            234,
        ),
        // fio's null engine sizes its file as the region's end (filesetup.c): the loop ends
        // when the next offset would reach it, before one is chosen, and the sync logs the
        // last I/O's offset.
        (
            &[
                "--rw=write",
                "--bs=4k",
                "--size=32k",
                "--ioengine=null",
                "--fsync_on_close=1",
                "--loops=2",
            ][..],
            2,
        ),
    ] {
        let (fio, storlab) = both_actions(MIB, flags);
        let fio_syncs = fio.iter().filter(|a| a.contains("sync")).count();
        assert_eq!(fio_syncs, syncs, "fio's own count changed for {flags:?}");
        assert_eq!(storlab, fio, "{flags:?}");
    }
}

/// fio reads a verify job's blocks back in the order written when the file has a random map
/// (its written pieces are a list, iolog.c `log_io_piece`), sorted by offset otherwise (a
/// tree: `norandommap`, the LFSR), one read per written piece whatever the read size. The
/// same reads as fio's, in its order.
#[test]
fn verify_reads_back_in_fios_order() {
    if !fio_present() {
        return;
    }
    for flags in [
        &[
            "--rw=randrw",
            "--bs=2k",
            "--size=128k",
            "--number_ios=37",
            "--verify=md5",
        ][..],
        &[
            "--rw=randwrite",
            "--size=64k",
            "--iodepth=4",
            "--verify=sha256",
        ][..],
        &[
            "--rw=randwrite",
            "--size=64k",
            "--norandommap",
            "--verify=crc32c",
        ][..],
        &[
            "--rw=randwrite",
            "--size=64k",
            "--random_generator=lfsr",
            "--verify=crc32c",
        ][..],
        &[
            "--rw=write",
            "--bs=32k,16k",
            "--offset=4096",
            "--size=64k",
            "--verify=crc32c",
        ][..],
    ] {
        let (fio, storlab) = both_actions(MIB, flags);
        assert!(
            fio.iter().any(|a| a.starts_with("read")),
            "fio read back nothing: {flags:?}"
        );
        assert_eq!(storlab, fio, "{flags:?}");
    }
}

/// A given `randseed` turns `randrepeat` off after fio has seeded the thread (init.c runs
/// `setup_random_seeds` before `fixup_options`): the first loop is randrepeat's, and the next
/// loops go on in the same streams instead of starting them over.
#[test]
fn a_given_randseed_never_reseeds_a_loop_as_fio() {
    if !fio_present() {
        return;
    }
    for flags in [
        &[
            "--rw=randread",
            "--bs=4k",
            "--size=256k",
            "--randseed=1234",
            "--loops=2",
        ][..],
        &[
            "--rw=rw:16k",
            "--bs=32k",
            "--offset=6144",
            "--size=512k",
            "--loops=2",
            "--randseed=98072",
        ][..],
    ] {
        let (fio, storlab) = both_logs(MIB, flags);
        assert_eq!(storlab, fio, "{flags:?}");
    }
}

/// A random mode's `:N` is read with C's `atoi`, as fio's `str_rw_cb`: `randread:8k` takes a
/// new random offset every 8 I/Os, not every 8192.
#[test]
fn a_random_modes_count_is_its_leading_digits_as_fio() {
    if !fio_present() {
        return;
    }
    let flags = [
        "--rw=randread:8k",
        "--bs=512",
        "--size=512k",
        "--randseed=88735",
    ];
    let (fio, storlab) = both_logs(MIB, &flags);
    assert_eq!(fio.len(), 238, "fio's own count changed");
    assert_eq!(storlab, fio);
}

/// A loop's `size` bound counts only I/O an engine queued (backend.c, `io_queue_event`): on
/// `psync` or `sync` a mixed job's loop runs on until one direction reaches the region's end,
/// on `libaio` or `io_uring` it stops at `size` bytes of both. Both differ in order and agree
/// with fio I/O for I/O.
#[test]
fn a_loops_bytes_bound_counts_only_queued_io_as_fio() {
    if !fio_present() {
        return;
    }
    let job = ["--rw=rw", "--bs=4k", "--offset=64k", "--io_size=1920k"];
    let mut logs = Vec::new();
    for engine in ["--ioengine=psync", "--ioengine=sync", "--ioengine=libaio"] {
        let flags: Vec<&str> = job.iter().copied().chain([engine]).collect();
        let (fio, storlab) = both_logs(MIB, &flags);
        assert_eq!(fio.len(), 480, "fio's own count changed for {flags:?}");
        assert_eq!(storlab, fio, "{flags:?}");
        logs.push(fio);
    }
    assert_eq!(logs[0], logs[1], "psync and sync issue alike");
    assert_ne!(
        logs[0], logs[2],
        "a queued engine's loop ends at size bytes"
    );
}

/// fio verifies after every loop (backend.c, `thread_main`: `do_verify` after each `do_io`):
/// each loop's writes are read back before the next loop's first I/O, and a sync `fsync=N`
/// still asks for comes after that read-back, and a loop ended at the file's end goes on while
/// the job's bytes (its read-backs' counted) are short; a last, empty loop (the job's bytes ran out with
/// `loops` to go) syncs after the last loop's read-back. The same I/O as fio's, in its order.
#[test]
fn verify_reads_back_after_every_loop_as_fio() {
    if !fio_present() {
        return;
    }
    for flags in [
        &[
            "--rw=randwrite",
            "--bs=512",
            "--size=64k",
            "--loops=2",
            "--verify=crc32c",
        ][..],
        &[
            "--rw=randwrite",
            "--size=64k",
            "--loops=3",
            "--fsync=3",
            "--verify=crc32c",
        ][..],
        &[
            "--rw=rw",
            "--bsrange=512-8k",
            "--blockalign=4k",
            "--size=256k",
            "--loops=3",
            "--fsync_on_close=1",
            "--verify=crc32",
        ][..],
        // A loop that ends at its file's end is not a verify job's end: fio's verify pass
        // clears the file's done mark, and the job goes on while its bytes, the read-back's
        // counted, are short of `size` by a block (libfio.c `reset_io_counters`, backend.c
        // `keep_running`).
        &[
            "--rw=rw:4k",
            "--rwmixread=70",
            "--bsrange=2k-4k",
            "--size=512k",
            "--verify=md5",
        ][..],
        &["--rw=write:4k", "--bs=4k", "--size=64k", "--verify=crc32c"][..],
        &[
            "--rw=readwrite:12k",
            "--bs=4k",
            "--size=128k",
            "--verify=md5",
        ][..],
        // On null (no data to check) each loop's read-back still leaves the log as fio's.
        &[
            "--rw=rw",
            "--bs=512",
            "--size=16k",
            "--loops=2",
            "--ioengine=null",
            "--verify=xxhash",
        ][..],
    ] {
        let (fio, storlab) = both_actions(MIB, flags);
        let reads = fio.iter().filter(|a| a.starts_with("read")).count();
        let writes = fio.iter().filter(|a| a.starts_with("write")).count();
        if flags[0] == "--rw=randwrite" {
            assert_eq!(reads, writes, "fio reads back every write: {flags:?}");
        }
        assert_eq!(storlab, fio, "{flags:?}");
    }
}

/// fio's null engine above depth 1 refuses each request while the one before is unreaped and
/// fio logs it again when it queues it anew (engines/null.c FIO_Q_BUSY, backend.c
/// `requeue_io_u`): every I/O after the first of a loop or of the read-back is logged twice.
/// The same log as fio's, syncs every N writes included: fio queues each as a request, which
/// the busy engine refuses once too, and asks for one more while the first is unreaped; a
/// `thinktime` stall falls between the reap and the requeue.
#[test]
fn null_above_depth_one_logs_fios_requeues() {
    if !fio_present() {
        return;
    }
    for flags in [
        &[
            "--rw=read",
            "--size=512k",
            "--ioengine=null",
            "--iodepth=2",
            "--end_fsync=1",
        ][..],
        &[
            "--rw=randread",
            "--bs=32k",
            "--size=256k",
            "--ioengine=null",
            "--iodepth=8",
        ][..],
        &[
            "--rw=write",
            "--bs=4k",
            "--size=16k",
            "--ioengine=null",
            "--iodepth=4",
            "--verify=crc32c",
        ][..],
        &[
            "--rw=randwrite",
            "--bs=4k",
            "--size=32k",
            "--ioengine=null",
            "--iodepth=4",
            "--loops=2",
        ][..],
        &[
            "--rw=write",
            "--size=48k",
            "--ioengine=null",
            "--iodepth=4",
            "--fsync=3",
        ][..],
        &[
            "--rw=randrw",
            "--size=48k",
            "--ioengine=null",
            "--iodepth=3",
            "--fsync=2",
            "--loops=2",
        ][..],
        &[
            "--rw=write",
            "--size=48k",
            "--ioengine=null",
            "--iodepth=4",
            "--fsync=3",
            "--iodepth_batch_submit=2",
        ][..],
        &[
            "--rw=write",
            "--size=48k",
            "--ioengine=null",
            "--iodepth=4",
            "--fdatasync=2",
            "--thinktime=10",
            "--thinktime_blocks=3",
        ][..],
    ] {
        let (fio, storlab) = both_actions(MIB, flags);
        assert_eq!(storlab, fio, "{flags:?}");
    }
}
