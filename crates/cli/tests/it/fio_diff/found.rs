//! Jobs the soaks of unseen seeds found doing other I/O than fio, shrunk to the keys that show
//! it, each fixed since: they run in CI beside the corpus so a class once fixed stays fixed
//! (and a job storlab now refuses on purpose stays refused, not silently different).

/// Must do fio's I/O (each comment: the seed that found it and what differed).
pub const AGREE: &[&str] = &[
    // 1313, 5445, 7887, 2121 (silent until session 29): a verify write's data is fio's, drawn
    // from fio's `verify_state` (re-seeded by each loop under `randrepeat`, at each verify
    // pass without it, drawn from by every read of fio's log), so each loop's blocks repeat
    // as fio's do; the bytes compared whole but for the headers' clock.
    "--rw=randwrite:16k --bs=8k --size=64k --loops=2 --verify=sha256 --do_verify=0",
    "--rw=randrw:4 --bs=8k --size=128k --io_size=256k --number_ios=37 --verify=crc32c",
    "--rw=randrw --rwmixread=40 --bs=8k --size=64k --loops=3 --randseed=22596 --random_generator=lfsr --random_distribution=pareto:0.5 --ioengine=io_uring --invalidate=0 --verify=xxhash --verify_backlog=16",
    "--rw=write --bsrange=4k-32k --size=256k --loops=2 --verify=xxhash --verify_interval=4k --buffer_compress_percentage=30",
    // 777: a Gauss distribution on `null` hashes the file name fio gives the job (`filename`).
    "--rw=randwrite --size=128k --random_distribution=normal:30 --ioengine=null",
    // 4711: the same on a temporary file, whose fio name is NAME.SUBJOB.0, per clone.
    "--rw=randtrim --bs=16k --size=256k --io_size=512k --norandommap --random_distribution=normal:30 --ioengine=null",
    "--rw=randwrite --size=128k --random_distribution=zipf:1.2 --numjobs=2",
    // 777: `verify_pattern` alone makes the job verify (options.c, `str_verify_pattern_cb`).
    "--rw=write:4k --bs=1k --size=128k --fsync=4 --verify_pattern=0xabcd",
    // 777: after a loop's read-back, an `fsync=N` due on the write count syncs first.
    "--rw=write:4k --bs=1k --size=128k --fsync=4 --verify=pattern --verify_pattern=0xabcd",
    // 777: a synchronous engine has nothing in flight at a failed placement (the end sync's offset).
    "--rw=write --bssplit=512/20:4k/80 --size=256k --loops=2 --ioengine=mmap --iodepth=8 --fsync_on_close=1",
    // 777: a mixed random job without a map is a writing one: `io_size` in one loop.
    "--rw=randrw --blockalign=512 --size=128k --io_size=256k --ioengine=libaio",
    // 4711: loops left after `number_ios` ran out still run, empty, and sync.
    "--rw=rw --loops=2 --number_ios=10 --fsync_on_close=1",
    // 4711: without a random map a write drops every earlier piece it overlaps, whole.
    "--rw=randwrite --bssplit=512/20:4k/80 --norandommap --verify=xxhash",
    "--rw=randwrite --bsrange=512-8k --blockalign=512 --size=128k --norandommap --random_distribution=normal:30 --refill_buffers --verify=md5",
    "--rw=randwrite --bsrange=4k-16k --size=256k --norandommap --fsync=5 --verify=pattern --verify_pattern=0xabcd --numjobs=2",
    // 777, 4711: a verify write's compressible share is the end of the whole write.
    "--rw=write --bs=64k --size=64k --buffer_compress_percentage=25 --verify=crc32c",
    "--rw=rw --bs=8k --offset=4096 --size=512k --loops=3 --ioengine=libaio --buffer_compress_percentage=50 --verify=crc32c",
    "--rw=randwrite --bssplit=4k/50:16k/50 --buffer_compress_percentage=30 --verify=md5 --size=256k",
    // 4711: options' callbacks run in the order given: `dedupe_percentage` after
    // `buffer_pattern` refills every write again.
    "--rw=randwrite --bs=1k --size=256k --buffer_pattern=0xdeadbeef --dedupe_percentage=50",
    // 9001: a queued engine's loop ends right after the I/O that reached its bytes, before
    // a sync is chosen; the next loop's start chooses it.
    "--rw=readwrite --size=64k --loops=3 --ioengine=libaio --fsync=4",
    "--rw=randwrite --offset=65536 --loops=2 --ioengine=libaio --fsync=6",
    // 9001: clones that verify random writes to bytes they share fail in fio; storlab
    // refuses them (fio's failure and storlab's refusal agree).
    "--rw=randwrite --bs=32k --ioengine=psync --verify=sha256 --numjobs=2",
    // 31337 (and every seed before): fio's mmap engine puts each I/O at its offset less the
    // region's start; on a regular file storlab does the same (it refused before).
    "--rw=rw --rwmixread=90 --bs=4k,32k --offset=4096 --size=256k --ioengine=mmap --fsync_on_close=1",
    "--bs=8k --blockalign=512 --offset=6144 --size=512k --ioengine=mmap --numjobs=2",
    "--rw=randwrite --bs=4k --offset=65536 --size=64k --ioengine=mmap --verify=crc32c",
    "--rw=rw --bs=64k --size=128k --ioengine=mmap --fdatasync=6 --numjobs=2 --offset_increment=256k",
    // 31337: the empty loop's sync after the read-back logs the last read-back read's offset.
    "--rw=readwrite --bs=64k --size=512k --loops=3 --end_fsync=1 --verify=xxhash",
    // 5150: a fio job's random offsets step by its smallest block, so a 64 KiB block keeps one
    // verify header as in fio (storlab put one every 4 KiB).
    "--rw=randwrite --bs=64k --buffer_compress_percentage=50 --verify=sha256",
    // 5150: a trimwrite loop may issue `size` plus the job's bytes (trims count in a loop's
    // bytes); on null at depth 2 storlab stopped halfway.
    "--rw=trimwrite --size=256k --ioengine=null --iodepth=2",
    // 5150: a sync on an engine that queues logs the offset of the I/O unit it takes, the
    // one freed last; fio's libaio syncs beside the I/O in flight, without draining it.
    "--rw=readwrite:16k --ioengine=libaio --iodepth=2 --fdatasync=8",
    "--rw=readwrite --bs=2k --size=64k --ioengine=io_uring --iodepth=4 --end_fsync=1",
    // A probe of fio's keys: an `offset` in bytes with an `offset_increment` share is rounded
    // up whole, the clone's increment included, to the smallest block (or `offset_align`).
    "--rw=write --offset=6k --offset_increment=10% --numjobs=3 --size=32k",
    // 8128: sizes of any byte count and by sequential or random offset, with fio's buffers
    // written as filled (`scramble_buffers=0`).
    "--rw=rw --rwmixread=40 --bsrange=2k-4k --offset=6144 --size=64k --norandommap --ioengine=psync --invalidate=0 --bs_unaligned=1",
    "--rw=rw --bsrange=512-8k --size=256k --random_generator=lfsr --ioengine=psync --iodepth=8 --end_fsync=1 --bs_unaligned=1",
    "--rw=readwrite:4k --bsrange=512-8k --offset=65536 --size=256k --io_size=128k --iodepth=2 --numjobs=2 --offset_increment=256k --scramble_buffers=0 --bs_is_seq_rand=1",
    "--rw=readwrite --bsrange=2k-4k --offset=0 --size=128k --norandommap --dedupe_percentage=25 --numjobs=2",
    // 1618: with fio's random map its verify log is a list in write order, so a block a later
    // write of the pass overwrote (`:N`'s sequential I/Os bypass the map) fails fio's check.
    "--rw=randrw:2 --offset=512 --size=512k --ioengine=io_uring --end_fsync=1 --verify=crc32",
    "--rw=randrw:4k --rwmixread=50 --bs=1k,1k --size=512k --iodepth=8 --fsync=1 --verify=md5",
    // 2357: a non-uniform distribution turns fio's map off (`norandommap` set), so a writing
    // job's loop on a queued engine issues `io_size` as a job without the map does.
    "--rw=randrw --bs=32k --io_size=2048k --loops=2 --random_distribution=zoned:50/10:50/90 --ioengine=libaio",
    // 5555: fio reads its list back whole, a piece a later write overlapped too (a job that only
    // writes takes each header's seed, and with several sizes checks no write number) ...
    "--rw=randwrite:4k --bssplit=16k/10:4k/90 --verify=md5",
    // ... with one size it checks the write number, and fails the first piece rewritten ...
    "--rw=randwrite:4k --bs=4k --verify=md5",
    // ... and a pass that did not re-seed (`randseed` given) fails its first piece's seed.
    "--rw=randrw --size=512k --io_size=1024k --randseed=51767 --verify=xxhash",
    // 5555: a sync engine at depth > 1 does one I/O at a time, so a write carries the data
    // the read before it brought into the same I/O unit.
    "--rw=readwrite --size=64k --iodepth=8 --scramble_buffers=0",
    // 6007: verify reads count towards `number_ios` (fio's `io_blocks`), a loop's read-back
    // and `verify_backlog`'s alike.
    "--rw=write --loops=3 --number_ios=100 --verify=xxhash",
    "--rw=write --loops=3 --number_ios=100 --verify=xxhash --verify_backlog=8",
    // 7331: fio takes its start again at each loop, and its null engine's file has grown to
    // the first region's end, so a start given as a share moves on; a size drawn past that
    // file's end ends the loop.
    "--size=512k --loops=2 --ioengine=null --offset=25%",
    "--rw=rw --rwmixread=30 --bsrange=1k-64k --blockalign=1k --size=512k --loops=2 --ioengine=null --offset=25% --offset_align=64k",
    // 8443: a sequential write that starts before the region's end and runs past it is read
    // back whole, and a loop's pass counts the bytes fio's tree reads back, not those written.
    "--rw=randwrite --blockalign=1k --size=256k --percentage_random=25 --verify=pattern --verify_pattern=0xabcd",
    // ... and a writing job of one block size with a verify pattern checks fio's write numbers.
    "--rw=randwrite --size=256k --percentage_random=25 --verify_pattern=0xabcd",
    // 8443: verify with trims on `null`, whose verify checks nothing (FIO_FAKEIO), as fio.
    "--rw=trimwrite --size=128k --number_ios=10 --randseed=8568 --ioengine=null --verify=md5",
    "--rw=trimwrite:4k --bs=32k --size=128k --ioengine=null --fsync=3 --verify=crc32",
    "--rw=randtrimwrite --size=128k --ioengine=null --verify=md5 --loops=2",
    // Seed 34 with the later keys: a backlog read leaves fio's log whoever else writes the
    // piece, so the read-back after the writes does not read it again.
    "--rw=randrw --size=512k --ioengine=null --verify=xxhash --numjobs=2 --verify_backlog=4",
    "--rw=write --size=512k --verify=crc32c --numjobs=2 --verify_backlog=4",
    // Seed 34 with the reporting keys: without its latency clock (`disable_lat`, `gtod_reduce`)
    // fio scrambles each write with a start time of zero, the same bytes every run.
    "--rw=write --disable_lat=1",
    "--rw=readwrite --bs=1k --size=512k --fallocate=keep --gtod_reduce=1",
    // Strided zones as fio's sequence: the zone moved on for the direction at hand, the file
    // reset at each range's worth, random blocks and the map over one zone's range.
    "--rw=randwrite --size=128k --zonemode=strided --zonesize=16k --zoneskip=48k",
    "--rw=readwrite --zonemode=strided --zonesize=64k",
    "--rw=rw --bs=1k,64k --size=256k --zonemode=strided --zonesize=64k --zonerange=128k",
    "--rw=randread --size=256k --zonemode=strided --zonesize=32k --zonerange=16k --norandommap",
    "--rw=write --size=256k --zonemode=strided --zonesize=32k --zonerange=16k --zoneskip=16k --loops=2",
    // 9311: a drawn size fits `size` past fio's start, not the strided region's span, and the
    // job's bytes are `size`.
    "--rw=rw --rwmixread=50 --bsrange=1k-64k --blockalign=8k --offset=0 --size=256k --iodepth=1 --verify=sha256 --zonemode=strided --zonesize=64k --zonerange=128k",
    // 9311: the backlog counts fio's log (its tree drops overlapped pieces) and reads from
    // its head, the lowest offset of the tree.
    "--rw=randrw --bsrange=512-8k --blockalign=4k --size=128k --verify=xxhash --verify_backlog=16",
    // 4477: any verify kind seeds the write sizes from the read stream, `do_verify=0` too.
    "--rw=write --bssplit=512/20:4k/80 --offset=0 --size=64k --randseed=27463 --verify=md5 --do_verify=0",
    "--rw=randwrite --bsrange=2k-4k --offset=0 --size=64k --io_size=32k --verify=sha256 --bs_is_seq_rand=1 --do_verify=0",
    // 4477: a sync engine at depth > 1 logs each write before the backlog looks, and a due
    // backlog batch goes before a due sync.
    "--rw=readwrite --bs=2k --size=512k --norandommap --ioengine=sync --iodepth=4 --verify=md5 --verify_backlog=4 --verify_backlog_batch=2",
    "--rw=readwrite --fdatasync=6 --verify_pattern=0xabcd --verify_backlog=16",
    // 2899: a strided job's loop ends at `size` bytes on a queueing engine, a random block
    // at or past `size` from fio's start ends the job (`get_next_offset` against `io_size`) ...
    "--rw=randwrite --size=128k --loops=2 --ioengine=io_uring --zonemode=strided --zonesize=16k --zoneskip=32k",
    "--rw=randrw --bs=64k --offset=512 --size=64k --ioengine=libaio --rwmixwrite=80 --zonemode=strided --zonesize=16k --zonerange=128k --zoneskip=32k",
    // ... and `filesize` with a smaller `size` stops at the file's end: the job gave no
    // `io_size` (`keep_running`: a done file starts over only with one).
    "--rw=write:16k --bs=2k --offset=512 --size=64k --ioengine=psync --fsync=7 --filesize=512k",
    // Review: the keys that follow fio's own sequence run in strided zones as fio's too.
    "--rw=write:8k --bsrange=1k-8k --size=256k --zonemode=strided --zonesize=32k --zonerange=64k",
    "--rw=randread:4 --rw_sequencer=identical --size=256k --zonemode=strided --zonesize=16k --zoneskip=16k",
    "--rw=rw --bs=4k,16k --bs_is_seq_rand=1 --size=256k --zonemode=strided --zonesize=32k",
    "--rw=write --bsrange=1k-8k --bs_unaligned=1 --size=256k --zonemode=strided --zonesize=32k --zonerange=64k",
    // 3137: fio's header sits every interval from the write's start, here across storlab's
    // 2 KiB granules (2 KiB reads move the 8 KiB writes), its compressible zeros after it.
    "--rw=readwrite --bs=2k,8k --buffer_compress_percentage=50 --verify=crc32 --verify_offset=64",
    "--rw=randwrite --bs=8k --blockalign=4k --size=256k --buffer_compress_percentage=40 --verify=md5",
    // 3137: with `verify_backlog` fio still reads back at each loop's end what the backlog
    // has not read yet (`do_verify` after every `do_io`), in its log's order.
    "--rw=write --bs=4k --size=72k --loops=2 --verify=crc32c --verify_backlog=16",
    "--rw=randrw --bssplit=16k/10:4k/90 --blockalign=4k --loops=2 --fdatasync=8 --verify=crc32c --offset=25% --offset_align=64k --verify_backlog=16",
    // 4242: a `rand*` mode's `:N` is fio's `td_random` whatever `percentage_random` says:
    // `rw_sequencer=identical` repeats the offset between its turns.
    "--rw=randwrite:4 --percentage_random=0 --rw_sequencer=identical --size=64k",
    // 4242: fio's null file ends at the region's end, where strided zones wrap.
    "--rw=trimwrite --size=64k --ioengine=null --zonemode=strided --zonesize=64k",
    "--rw=write --size=64k --io_size=128k --ioengine=null --zonemode=strided --zonesize=32k --zonerange=64k",
    // 4242: the dedupe working set is a share of the `size` written, not of `filesize`.
    "--rw=randrw --size=128k --dedupe_percentage=50 --dedupe_mode=working_set --filesize=1m",
    // 5858: a loop's pass empties fio's log, pieces it read only in part included.
    "--rw=randwrite:8k --bsrange=1k-64k --size=64k --loops=3 --verify=xxhash",
    // 5858: a strided zone's range shorter than a block (storlab's map bound underflowed).
    "--bs=64k --blockalign=8k --zonemode=strided --zonesize=16k",
    // 5858: a job that writes nothing never draws from an empty dedupe working set.
    "--bs=32k --offset=6144 --size=256k --loops=2 --ioengine=pvsync2 --zero_buffers --dedupe_percentage=50 --dedupe_mode=working_set --dedupe_global=1",
    // 6464: in strided zones a run near the range's end goes on to its map word's end, as
    // fio's axmap marks it (several sizes at random; the ranges' maps are not whole words).
    "--rw=randread --bssplit=4k/50:16k/50 --size=128k --zonemode=strided --zonesize=32k --zonerange=64k",
    "--rw=randrw --bsrange=2k-16k --size=512k --zonemode=strided --zonesize=16k --zonerange=48k --zoneskip=16k",
    "--rw=randwrite --bssplit=4k/30:8k/30:32k/40 --size=512k --zonemode=strided --zonesize=32k --zonerange=96k --verify=md5",
    "--rw=randread --bsrange=1k-16k --size=256k --norandommap --zonemode=strided --zonesize=64k --zonerange=128k",
    // 8181: `bs_is_seq_rand` with a skewed distribution (no map) or one set of sizes.
    "--rw=randrw:4k --bsrange=512-8k --blockalign=512 --size=64k --random_distribution=zipf:1.1 --ioengine=mmap --refill_buffers --bs_is_seq_rand=1",
    "--rw=randrw:4k --rwmixread=90 --bssplit=16k/10:4k/90 --offset=0 --size=512k --iodepth=2 --fsync=3 --fdatasync=2 --rw_sequencer=identical --bs_is_seq_rand=1 --bs_unaligned=1",
    // 9393: a loop's failed sequential fill leaves its I/O unit flagged not to mark the map;
    // the unit's next fill, in the next loop, marks nothing (after the units then in flight).
    "--rw=randrw:2 --bs=1k --size=256k --loops=2 --randseed=39981",
    "--rw=randrw:2 --bs=1k --size=256k --loops=2 --randseed=39981 --ioengine=libaio --iodepth=4",
    // 9393: libaio runs a sync beside the I/O in flight, and fio clears `last_was_sync` as an
    // I/O completes: the writes issued before the earlier ones are reaped ask for no sync.
    "--rw=write --bsrange=2k-4k --number_ios=37 --ioengine=libaio --iodepth=4 --fsync=1",
    "--rw=randwrite --bs=4k --size=64k --ioengine=libaio --iodepth=4 --fsync=1 --iodepth_batch_complete_min=2",
    // 1212: a loop followed by one that draws I/O is no last, empty loop: no second end sync.
    "--rw=write --bs=32k --size=64k --io_size=32k --loops=3 --end_fsync=1",
    // 1212: a backlog's reads count in the bytes that decide whether fio runs another loop,
    // and leave fio's log (a later write over a piece read drops nothing).
    "--rw=randwrite:4k --bs=8k,2k --size=128k --norandommap --randseed=55564 --ioengine=null --fsync=5 --verify=pattern --verify_pattern=0xabcd --verify_backlog=4 --verify_backlog_batch=2 --zonemode=strided --zonesize=64k --zoneskip=32k",
    // fio logs a write for the backlog as it is issued and reads a piece only once its write
    // completed; its last direction is the last completed one's, a read before any.
    "--rw=randwrite --bsrange=2k-8k --size=128k --norandommap --verify=crc32c --verify_backlog=4 --ioengine=libaio --iodepth=4",
    "--rw=write --bs=4k --size=128k --verify=crc32c --verify_backlog=3 --verify_backlog_batch=5 --ioengine=libaio --iodepth=4",
    // 1212, 2424 (refused until then): a zipf, pareto or normal distribution in strided zones
    // draws over the region from each zone's start, past the zone, and ends past the file.
    "--rw=randread --random_distribution=zipf:1.1 --zonemode=strided --zonesize=64k",
    "--rw=randwrite --bs=2k --offset=4096 --size=64k --random_distribution=pareto:0.5 --zonemode=strided --zonesize=16k",
    "--rw=randrw:4 --bs=64k --size=512k --random_distribution=zipf:1.1 --rw_sequencer=sequential --zonemode=strided --zonesize=64k --zoneskip=64k",
    "--rw=randrw --bsrange=1k-8k --size=256k --random_distribution=normal:20 --zonemode=strided --zonesize=16k --zoneskip=16k --ioengine=libaio --iodepth=4",
    // 3636: a backlog read takes its piece out of fio's list even where a later write holds
    // the block (the read-back after the writes does not read it again).
    "--rw=randrw:4 --bssplit=16k/10:4k/90 --size=128k --io_size=64k --randseed=39696 --percentage_random=25 --fdatasync=2 --verify=md5 --rw_sequencer=identical --rwmixwrite=90 --verify_backlog=4 --filesize=512k",
    // 1212, 3636 (refused until then): clones under `filesize` each run from their start to
    // its end, moving `size` bytes.
    "--rw=read --bsrange=4k-16k --size=256k --numjobs=2 --offset_increment=256k --filesize=1m",
    "--rw=readwrite --offset=512 --size=128k --number_ios=37 --ioengine=io_uring --fdatasync=4 --refill_buffers --numjobs=2 --offset_increment=256k --filesize=1m",
    "--rw=randrw --bs=4k --size=64k --numjobs=2 --offset_increment=64k --filesize=512k --norandommap",
    // 5959 (refused until then): `filesize` with an offset given as a share and no `size`: the
    // region runs from the share of the file as found to `filesize`.
    "--bs=512 --loops=2 --refill_buffers --offset=10% --filesize=512k",
    "--rw=randwrite --bsrange=1k-8k --offset=30% --offset_align=8k --filesize=768k --verify=crc32c",
    // 8282: a strided job without `size` moves the file's bytes past its offset, not rounded
    // to a block: a last I/O in the zone at the file's end (and the sync after it).
    "--rw=readwrite --offset=6144 --random_generator=tausworthe64 --fsync_on_close=1 --zonemode=strided --zonesize=16k",
    "--rw=randwrite:4k --bssplit=16k/10:4k/90 --offset=512 --ioengine=pvsync --fsync_on_close=1 --numjobs=2 --zonemode=strided --zonesize=64k --zoneskip=64k",
    // 1357: on fio's synchronous engines no I/O unit is in flight when the next is filled,
    // whatever depth storlab batches them at (a stale unit's unmarked fill comes at once).
    "--rw=randrw:4k --size=256k --io_size=512k --randseed=7650 --iodepth=4 --numjobs=2",
    // 3579 (and 4711's null refusal): a rand* job with `percentage_random=0` is fio's
    // `td_random`: a sequential offset past the file's end falls back to a random block, and
    // the loop goes on from there.
    "--rw=randrw:4k --loops=3 --percentage_random=0",
    "--rw=randread --size=128k --loops=3 --percentage_random=0 --ioengine=null",
    // 2468, 3579, 4680 (refused until then): `filesize` with a smaller `size` over several
    // loops on a queueing engine ends each loop at `size` bytes.
    "--rw=rw --rwmixread=90 --bs=512,512 --size=128k --loops=3 --ioengine=libaio --fsync=4 --filesize=512k",
    "--rw=randread --size=64k --loops=3 --ioengine=posixaio --iodepth=2 --filesize=256k --offset=64k",
    // 1441 (refused until then): `null` above depth 1 with syncs every N writes: fio's busy
    // engine refuses each request once, syncs included, and storlab follows its loop.
    "--rw=write --bs=1k,2k --size=128k --randseed=87822 --ioengine=null --iodepth=4 --fsync=4 --dedupe_percentage=25",
    // 2552: a non-uniform `file_service_type` starts the file over where no I/O finds room.
    "--rw=write:8k --file_service_type=normal:20:0.5",
    "--rw=randrw --bsrange=512-8k --offset=131072 --size=256k --io_size=512k --loops=3 --file_service_type=normal:20:0.5",
    // 3663: the retry after that reset fills the same I/O unit, its BUSY_OK flag kept.
    "--rw=randrw:8k --bsrange=2k-4k --size=64k --file_service_type=zipf:1.2",
    // 3663 (refused until then): holes after I/Os of several sizes, `bs_unaligned` and
    // `rw_sequencer` with trims are fio's own sequence too.
    "--rw=trimwrite:16k --bsrange=512-8k --size=128k --loops=2 --ioengine=null --bs_unaligned=1",
    "--rw=randtrim:3 --bsrange=4k-16k --size=64k --ioengine=null --rw_sequencer=identical",
    // 4774: an LFSR job with `norandommap` given takes fio's loop bound for an unmapped
    // writer (`io_size` in one loop), where the file service resets the file.
    "--rw=randrw --size=128k --io_size=256k --norandommap --random_generator=lfsr --ioengine=libaio --file_service_type=pareto:0.5",
    // 2552: `null`'s verify passes every read (FIO_FAKEIO), fio's seed check included.
    "--rw=randrw --blockalign=8k --size=256k --ioengine=null --verify=crc32",
    // 7373: `null`'s file is `size` long, else (`filesize` alone) without end: holes wrap at
    // the end of the one, never in the other.
    "--rw=write:4k --filesize=512k --ioengine=null",
    "--rw=write:4k --filesize=128k --size=256k --ioengine=null",
    // 7373: on `null` the close where no I/O finds room fsyncs no descriptor (EBADF) with
    // I/Os in flight: fio fails the job, storlab stops it there.
    "--rw=write:4k --ioengine=null --iodepth=8 --fsync_on_close=1 --filesize=512k",
    // 7373: a verify write's compressible share holds `buffer_pattern`; a share of 100 is
    // fio's `zero_buffers`, which verify's fill ignores.
    "--rw=write --buffer_compress_percentage=50 --buffer_pattern=0xdeadbeef --verify=crc32c",
    "--rw=write --size=64k --buffer_compress_percentage=100 --verify=crc32c",
    // 7373's generator: `kb_base` holds for the flags after it; fio's default reads KiB as
    // 1000 (blocks of 512: storlab refuses a block that is no whole number of sectors).
    "--kb_base=1000 --rw=write --size=64k --bs=512",
    "--rw=read --size=64KiB --bs=512 --ioengine=null",
    // 4040: `do_verify=0` keeps a one-loop job's file done past its end: no second pass.
    "--rw=rw --size=256k --io_size=512k --verify=sha256 --do_verify=0",
    "--rw=randwrite --size=64k --io_size=128k --do_verify=0",
    // 8484: fio knows an engine's options only with that engine ("unrecognized option").
    "--userspace_reap=1",
    "--rw=randwrite --size=64k --ioengine=psync --hipri",
    // 6363: `randwrite` with `percentage_random=0` keeps fio's random map, so fio logs its
    // writes in a list and reads each back as often as written.
    "--rw=randwrite --percentage_random=0 --verify=pattern --verify_pattern=0xabcd --zonemode=strided --zonesize=16k --zoneskip=64k",
    // 6363: an I/O `serialize_overlap` holds back keeps the I/O unit fio took for it; the
    // write after it carries the buffer of the unit freed meanwhile.
    "--rw=rw --ioengine=io_uring --iodepth=2 --allrandrepeat=1 --scramble_buffers=0 --serialize_overlap=1",
    "--rw=randrw --ioengine=io_uring --iodepth=8 --scramble_buffers=0 --serialize_overlap=1 --size=128k --norandommap --bsrange=4k-16k",
    // 2020: a write `serialize_overlap` holds back draws its verify seed again when it goes
    // (fio populates it each time it takes it): fio's verify pass then finds another seed.
    "--rw=rw --bs=4k --size=64k --ioengine=libaio --iodepth=8 --verify=crc32 --serialize_overlap=1",
    // 2020: `openfiles` above 1 turns fio's strided zones off, even on one file.
    "--size=512k --norandommap --direct=1 --refill_buffers --zonemode=strided --zonesize=64k --zoneskip=64k --openfiles=4",
    // 8686: a random mode with `percentage_random=0` and no map issues `io_size` in one
    // loop on an engine that queues (backend.c `do_io`: `td_random`), past the file's end.
    "--rw=randwrite --blockalign=8k --io_size=2048k --percentage_random=0 --ioengine=libaio",
    // 9898: with a working set that holds blocks, fio runs tausworthe64 dedupe.
    "--rw=randread --bs=4k --size=256k --norandommap --random_generator=tausworthe64 --ioengine=posixaio --dedupe_percentage=25 --dedupe_mode=working_set --dedupe_working_set_percentage=10",
    // 9797: a reading job's bad blocks pass continue_on_error: fio reads on, counts each.
    "--verify=crc32 --continue_on_error=all",
    "--rw=randread --size=64k --verify=md5 --continue_on_error=verify",
    // Session 27 (refused until then): `filesize` with an offset given as a share and a
    // `size` (6661: the region runs from the share of the file as found to `filesize`, `size`
    // bounding the bytes), with a smaller `size` and an `io_size` on a queueing engine (each
    // loop ends at `size` bytes until `io_size` is done), and clones `offset_increment` apart
    // (each from its start to `filesize`, `size` cut to its region).
    "--rw=randrw --bs=2k --size=64k --io_size=32k --norandommap --percentage_random=50 --offset=10% --offset_align=64k --filesize=512k",
    "--rw=rw --size=512k --io_size=1024k --ioengine=posixaio --filesize=1m",
    "--rw=write --size=128k --io_size=512k --filesize=512k --ioengine=libaio",
    "--rw=write --numjobs=2 --offset_increment=128k --filesize=512k",
    "--rw=randwrite --numjobs=3 --offset_increment=128k --filesize=512k --size=320k --ioengine=libaio --iodepth=4",
    "--rw=randrw --numjobs=2 --offset_increment=10% --filesize=512k --size=128k",
    // 1313: a rand* mode with `percentage_random=0` keeps fio's LFSR, whose blocks its loops
    // take past their end on the null engine.
    "--rw=randrw --rwmixread=80 --size=256k --loops=2 --random_generator=lfsr --percentage_random=0 --ioengine=null",
    // 2626: clones verifying one region on the null engine each read back their own log,
    // fio's null engine keeping no data to race over.
    "--rw=randrw --size=512k --random_generator=lfsr --random_distribution=zoned:50/10:50/90 --ioengine=null --verify=sha256 --numjobs=2",
    // 9696 (refused until session 28): `null` with `unlink=1` deletes the named file at the
    // job's end, as fio does though its engine never opened it (an empty file left compares
    // unequal with fio's none).
    "--size=64k --ioengine=null --unlink=1",
    "--rw=randread --size=64k --ioengine=null --unlink=1 --numjobs=2",
    // 3030 (refused until session 28): a dedupe working set of no whole write block is fio's
    // set of one, its first state (`rand_between(0, -1)` over 32 bits draws 0).
    "--rw=randrw --rwmixread=40 --bs=2k,16k --size=64k --loops=2 --refill_buffers --dedupe_percentage=50 --dedupe_mode=working_set --dedupe_working_set_percentage=10",
    // 8989: strided zones wrapping on the null engine start again at the share of the file
    // fio set up (`io_size + file_offset`), as later loops do.
    "--rw=randwrite --bs=1k --size=128k --norandommap --ioengine=null --fsync=8 --offset=25% --offset_align=8k --zonemode=strided --zonesize=16k --zoneskip=32k",
    // 4141 (refused until session 28): a `verify_offset` inside the header on the null engine
    // (fio's minimum is its 40-byte common header; its swap moves overlapping bytes).
    "--rw=rw --bssplit=512/20:4k/80 --size=64k --io_size=128k --ioengine=null --verify=sha256 --verify_offset=64",
    // 4141, 1001 (refused until session 28): fio's mmap engine in strided zones copies each
    // I/O at its offset less the current zone's start.
    "--rw=randrw --rwmixread=90 --bsrange=4k-16k --ioengine=mmap --fsync_on_close=1 --zonemode=strided --zonesize=64k --zonerange=128k --zoneskip=64k",
    "--rw=rw --rwmixread=10 --bsrange=512-8k --size=256k --ioengine=mmap --bs_is_seq_rand=1 --zonemode=strided --zonesize=64k",
    "--rw=write --bs=4k --size=64k --ioengine=mmap --zonemode=strided --zonesize=16k --zoneskip=16k --offset=8k --loops=2 --buffer_pattern=0xdeadbeef",
    "--rw=randrw --size=64k --ioengine=mmap --zonemode=strided --zonesize=16k",
    // 5445, 2112, 6868 (refused until session 28): `verify_backlog` under `experimental_verify`
    // reads nothing, fio keeping no log of the writes to read back from.
    "--rw=write --bs=512 --size=512k --randseed=510 --iodepth=8 --verify=crc32 --offset=25% --verify_backlog=16 --experimental_verify=1",
    "--rw=randwrite --bs=1k,32k --size=64k --random_generator=tausworthe64 --percentage_random=100 --verify=md5 --verify_backlog=16 --verify_backlog_batch=8 --verify_fatal=1 --experimental_verify=1",
    "--rw=randwrite --bsrange=4k-16k --size=256k --verify=crc32c --verify_backlog=5 --experimental_verify=1 --ioengine=libaio --iodepth=8",
    // 7667 (silent until session 28): a backlog piece of fio's list a later write overwrote
    // before it is read fails fio's write-number check ("bad header numberio"), mixed jobs
    // too (the backlog takes the header's seed as the one wanted) ...
    "--rw=randwrite:4k --bs=2k --size=128k --end_fsync=1 --verify=crc32c --verify_backlog=16 --thinktime=10 --unified_rw_reporting=mixed --create_fsync=1",
    "--rw=randrw:4 --verify=crc32c --verify_backlog=16",
    "--rw=randwrite:4 --rw_sequencer=identical --verify=crc32c --verify_backlog=16",
    // ... 8778: and on an engine that queues a loop's backlog reads count in its bytes, which
    // may reach `size` more, ending it mid-batch (the batch's count carries into the next).
    "--rw=rw --bs=512 --offset=512 --size=64k --loops=3 --randseed=57883 --ioengine=libaio --end_fsync=1 --zero_buffers --verify=pattern --verify_pattern=0xabcd --rwmixwrite=80 --verify_backlog=16",
    "--rw=rw --loops=3 --ioengine=libaio --iodepth=4 --verify=crc32c --verify_backlog=7 --verify_backlog_batch=3 --size=256k",
    // 1221: `do_verify=0` too (fio's bound counts the verify kind, not the read-back), so the
    // loop ends at the file's end, which a `do_verify=0` job keeps done.
    "--rw=write --bs=64k --size=128k --io_size=256k --ioengine=libaio --dedupe_percentage=50 --verify=crc32c --scramble_buffers=0 --verify_backlog=16 --do_verify=0",
    "--rw=rw --size=128k --ioengine=libaio --iodepth=4 --verify=md5 --verify_backlog=8 --do_verify=0 --loops=2",
    // 2332 (silent until session 28): clones writing each other's bytes with a headerless
    // verify read back after every loop, as each of fio's threads does (storlab had read
    // back once after the last).
    "--rw=readwrite --bs=512 --size=512k --loops=3 --end_fsync=1 --verify=pattern --verify_pattern=0xabcd --numjobs=2 --offset_increment=256k --lat_percentiles=0 --create_fsync=1",
    "--rw=rw --loops=2 --verify=pattern --verify_pattern=0x12 --numjobs=3 --size=128k --ioengine=libaio --iodepth=4",
    // 3443: Poisson arrivals with syncs every N writes in a job that only reads, which never
    // syncs, run as fio's.
    "--rw=read:16k --bs=64k --offset=0 --size=256k --randseed=11988 --fdatasync=7 --rate=4m --rate_process=poisson",
    // 4554: nor one that writes fewer than N.
    "--rw=randwrite:4k --bs=64k --size=256k --norandommap --randseed=63042 --fdatasync=5 --rate=4m --rate_process=poisson",
    // 9889 (silent until session 28): a non-uniform `file_service_type` resets the file where
    // the loop's first I/O finds no room too, and fills again (here the countdown of
    // `randrw:2` then gives a sequential I/O that fits); storlab ended the job with none.
    "--rw=randrw:2 --rwmixread=10 --bs=4k,64k --loops=3 --random_distribution=normal:30 --ioengine=pvsync2 --iodepth=8 --fsync=7 --rw_sequencer=sequential --zonemode=strided --zonesize=16k --file_service_type=normal:20:0.5",
    // 4343 (silent until session 30): a write `serialize_overlap` holds back draws its verify
    // data again once per completion fio reaps before it goes (storlab drew once per look),
    // and in a loop's first draws from the loop's re-seeded stream.
    "--rw=rw --ioengine=libaio --iodepth=4 --verify=sha256 --do_verify=0 --serialize_overlap=1",
    "--rw=rw --bs=2k --offset=512 --size=64k --loops=3 --ioengine=libaio --iodepth=4 --verify=sha256 --verify_interval=4k --do_verify=0 --serialize_overlap=1",
    // 6565 and 9889 (silent until session 30): the stale BUSY_OK flag a loop's last, failed
    // fill leaves on its I/O unit is cleared by a sync on that unit (end_fsync, fsync=N)
    // before the next loop's first fill, which then marks the random map.
    "--rw=randrw:4 --bs=8k --size=64k --loops=2 --randseed=83537 --end_fsync=1",
    "--rw=randrw:2 --rwmixread=20 --bs=512 --offset=131072 --size=64k --loops=3 --random_generator=tausworthe64 --end_fsync=1",
    "--rw=randrw:2 --bs=4k --size=64k --loops=3 --randseed=44 --fsync_on_close=1 --fsync=3",
    // 8787 (silent until session 30): a write `serialize_overlap` holds back goes again
    // before any sync is chosen (fio's requeued unit skips `get_rw_ddir`).
    "--rw=rw --ioengine=libaio --iodepth=8 --fsync=6 --serialize_overlap=1",
    // 4949 (until session 30 storlab ran it): mmap with `direct=1` msyncs from the I/O's own
    // address, which `blockalign=1k` puts off a page: EINVAL in both.
    "--rw=randread --blockalign=1k --ioengine=mmap --direct=1",
    // 6161, 7272 (silent until session 30): a loop whose writes the backlog read back
    // entire still ends with fio's verify pass, which re-seeds the data stream (with
    // `randseed` given, `randrepeat` is off and only the pass re-seeds it).
    "--rw=readwrite --bs=1k --size=512k --loops=2 --randseed=18715 --verify=xxhash --verify_backlog=4",
    "--rw=write --loops=3 --randseed=28761 --verify=xxhash --verify_backlog=16",
    // 5757 (judged silent until session 31): posixaio clones at depth 8 log their end syncs
    // at whichever unit's offset completion timing left on top, different in every fio run;
    // the oracle saw it vary only in one worker's logs (clones' shared logs interleave).
    "--rw=randrw:2 --rwmixread=10 --bs=32k --blockalign=8k --offset=512 --loops=3 --number_ios=100 --random_generator=tausworthe64 --ioengine=posixaio --iodepth=8 --fsync_on_close=1 --buffer_compress_percentage=90 --numjobs=2 --rw_sequencer=identical --scramble_buffers=0 --continue_on_error=write",
    // 3535 (silent until session 31): a write shorter than the verify interval has one header
    // for the whole write (verify.c `get_hdr_inc`): `bs_is_seq_rand` gives a sequential job's
    // writes the 4 KiB of its first size under the 32 KiB interval its write size sets.
    "--rw=rw --bs=4k,32k --verify=crc32 --bs_is_seq_rand=1",
    "--rw=rw --rwmixread=50 --bs=4k,32k --size=256k --loops=3 --number_ios=100 --random_generator=tausworthe64 --verify=crc32 --bs_is_seq_rand=1 --unified_rw_reporting=none",
    // 1111 (silent until session 32): a pass that ends where no I/O can be placed, short of
    // the job's bytes, is followed by one more after the verify pass reopened the file; it
    // places nothing, but `clear_io_state` cleared `last_was_sync`, so the sync `fsync=N`
    // asks for comes first (one per I/O unit where the engine queues syncs), else its end
    // sync at the offset of its own failed placement.
    "--rw=randwrite --bs=2k --blockalign=4k --size=512k --random_distribution=pareto:0.5 --fsync=1 --verify=crc32c",
    "--rw=randwrite --bs=2k --blockalign=4k --size=512k --random_distribution=pareto:0.5 --fsync=1 --verify=crc32c --ioengine=io_uring --iodepth=4",
    "--rw=randwrite --bs=2k --blockalign=4k --size=512k --random_distribution=pareto:0.5 --fsync=2 --verify=crc32c --end_fsync=1",
    "--rw=randwrite --bs=2k --blockalign=4k --size=512k --random_distribution=pareto:0.5 --fsync=1 --io_size=1m",
    // 5678 (silent until session 32): fio's experimental pass counts its regenerated reads as
    // writes (`td_io_queue`, `acct_ddir`), so a later loop's `numberio` starts past them.
    "--rw=write --loops=3 --verify=md5 --experimental_verify=1",
    "--rw=write --blockalign=1k --size=64k --loops=3 --verify=md5 --experimental_verify=1",
    // Session 33 (the oracle now compares each latency's samples and short I/Os): a verify
    // read-back on a synchronous engine has no submission latency (fio: `slat_ns` N 0), and
    // fio counts each fdatasync in the reads' `short_ios` (its `total_io_u` overrun).
    "--rw=write --blockalign=4k --size=256k --verify=crc32",
    "--rw=readwrite --bs=1k --offset=0 --fdatasync=4 --bs_is_seq_rand=1 --thinktime=10 --thinktime_blocks=2",
    "--rw=randrw --size=256k --fdatasync=3 --unified_rw_reporting=both --end_fsync=1 --fsync=5",
    // 3141592: io_uring with `sqthread_poll` takes no submission latency (fio's commit leaves
    // the ring to the kernel's thread without `io_u_queued`).
    "--rw=randwrite:16k --bs=8k --ioengine=io_uring --sqthread_poll=1",
];

/// Refused with a reason, where fio's behaviour is not followed.
pub const REFUSED: &[&str] = &[
    // 1414: an experimental pass over loops of an io_size below size (fio's first loop runs
    // on past io_size on a synchronous engine, and reads all of it back).
    "--rw=write --bs=16k --size=512k --io_size=256k --loops=2 --ioengine=null --iodepth=2 --end_fsync=1 --verify=crc32c --experimental_verify=1 --continue_on_error=write",
    // 6767: a random mixed job's experimental pass draws the mix again with the writes' issue
    // counts kept; fio's second thread read back blocks its workload only read.
    "--rw=randrw --bs=4k --size=256k --ioengine=null --end_fsync=1 --refill_buffers --buffer_pattern=0xdeadbeef --verify=sha256 --numjobs=2 --offset_increment=256k --bs_is_seq_rand=1 --experimental_verify=1 --clat_percentiles=0",
    // 4141, 3223, 2121: a read of fio's mmap engine past its mapping reads whatever fio's
    // process maps beyond, or dies of SIGSEGV, as fio's memory layout decides (the first
    // completes here, the second crashes every run): storlab stops the job there.
    "--rw=read:4k --bs=32k --offset=6144 --size=256k --ioengine=mmap --fallocate=none --end_fsync=1 --buffer_pattern=0xdeadbeef",
    "--rw=randrw:8k --rwmixread=90 --bs=16k --blockalign=8k --size=512k --randseed=16492 --ioengine=mmap --unified_rw_reporting=none --write_lat_log=perf --log_avg_msec=10",
    // 5445: Poisson arrivals with syncs every N writes: fio's job dies of SIGFPE at its first
    // fsync (its sync's delay divides by a rate past its per-direction arrays).
    "--rw=randwrite --bs=16k --size=64k --norandommap --fsync=1 --rate=1m --rate_process=poisson",
    // 6174: verifying clones from shifted starts overwrite each other's blocks; fio 3.33
    // passes or fails its check as their pace decides (psync passed, posixaio failed).
    "--rw=readwrite --bsrange=512-8k --size=512k --ioengine=posixaio --verify=sha256 --numjobs=2 --offset_increment=256k",
    // 1618: mixed sequential clones from one start race the same way.
    "--rw=readwrite --size=128k --fsync=4 --refill_buffers --verify=sha256 --numjobs=2",
    // 3137: so do sequential clones over several loops (each reads back after its own loop
    // while the other writes its next).
    "--rw=write --bs=4k --size=64k --loops=3 --verify=crc32 --numjobs=2",
    // Seed 34 with the later keys: fio's mmap engine in strided zones with verify, whose
    // read-back moves with wherever the zones stand ...
    "--rw=randrw --size=64k --ioengine=mmap --zonemode=strided --zonesize=16k --verify=crc32c",
    // ... nor random offsets of several sizes there (9311: fio lets one run past the range) ...
    "--rw=randread --bsrange=1k-16k --size=256k --zonemode=strided --zonesize=64k --zonerange=128k",
    // ... nor `exitall` among a job's clones (fio's first to end stops the others, when their
    // start-up timing decides).
    "--rw=randread --size=512k --numjobs=2 --offset_increment=256k --exitall",
    // 4242: under a rate fio's null engine above depth 1 logs a request twice where its
    // clock fell behind (130, 131, 132 actions in three runs).
    "--size=512k --ioengine=null --iodepth=2 --rate_iops=50000",
    // 5858: without re-seeding fio's experimental pass draws new sizes.
    "--rw=write --bsrange=4k-16k --randseed=47798 --verify=md5 --experimental_verify=1",
    // 9797: continue_on_error past a header seed fio's verify pass did not draw.
    "--rw=randrw --rwmixread=70 --bssplit=4k/50:8k/50 --norandommap --randseed=35176 --random_distribution=zipf:1.1 --verify=crc32 --verify_interval=512 --continue_on_error=all",
    // 5353: holes make fio's experimental pass read back the first pass alone.
    "--rw=write:16k --size=128k --verify=crc32c --experimental_verify=1",
    // 5353: fio aborts with an empty dedupe working set drawn by tausworthe64.
    "--size=64k --random_generator=tausworthe64 --dedupe_percentage=25 --dedupe_mode=working_set",
    // 7575: the null engine above depth 1 with verify_async: fio's double logs vary.
    "--size=64k --number_ios=100 --ioengine=null --iodepth=2 --verify_pattern=0xabcd --verify_async=2",
    // 2828: nor new directions: a mixed job's regenerated draws ran its reads out first.
    "--rw=readwrite --bs=16k --size=64k --randseed=61193 --verify=crc32 --experimental_verify=1",
    // 7777: batched submits: fio's sync takes an older I/O unit's stale offset into its log.
    "--rw=randwrite --bs=32k --ioengine=libaio --iodepth=4 --fsync=2 --iodepth_batch_submit=2",
    // 4848: a zoned distribution turns fio's map off too: its experimental pass replays every
    // write in order, storlab's read-back goes by offset.
    "--rw=randwrite --bssplit=4k/50:8k/50 --size=512k --random_distribution=zoned:50/10:50/90 --iodepth=2 --verify=crc32c --experimental_verify=1",
    // bs_is_seq_rand: a random read of the write size runs past a map of whole 64-block words
    // into heap memory fio never set (storlab stops the job there in one line).
    "--rw=randread --bs=1k,64k --size=128k --bs_is_seq_rand=1",
    // 7373: more files than `filename` names with a non-uniform file choice: fio's job dies
    // of SIGSEGV before any I/O (its report says so and exits 0); storlab refuses.
    "--nrfiles=2 --file_service_type=normal:20:0.5",
    // 7373: `null`'s failing close on the completion of a sync instead passes in fio; storlab
    // stops the job where the close comes, either way.
    "--rw=write:4k --ioengine=null --iodepth=8 --fsync_on_close=1 --filesize=512k --fsync=4",
    // 8484: `io_submit_mode=offload` with `write_iolog`: fio's job dies of SIGSEGV (here it
    // logs nothing and exits 0).
    "--rw=write --bs=512,16k --size=64k --ioengine=posixaio --iodepth=2 --fsync=2 --io_submit_mode=offload",
    // 1717: reading clones with `unlink=1`: fio's first clone to end deletes the file.
    "--offset=6144 --numjobs=2 --unlink=1",
    // 3232: and with writes: a clone that opens after the deletion reads an empty new file
    // short (error 5 in half of fio's runs).
    "--rw=rw --bs=8k --offset=512 --size=64k --numjobs=2 --unlink=1",
    // 1313: `openfiles` above 1 turns strided zones off, and fio's clones then find a zone
    // size without a zone mode and are refused (storlab refuses the job).
    "--size=512k --numjobs=2 --zonemode=strided --zonesize=64k --openfiles=4",
    // Session 27: a share of the target under `filesize` on the null engine (fio refuses the
    // offset without `size`).
    "--rw=read --numjobs=2 --offset_increment=25% --filesize=512k --ioengine=null",
    // 3535 (silent until session 31): `number_ios` with syncs every N writes on an engine that
    // queues them, above depth 1: fio counts syncs in flight towards the count and not once
    // they complete, and runs on with more syncs as completion timing falls.
    "--rw=randwrite --number_ios=10 --ioengine=posixaio --iodepth=8 --fsync=6",
    "--rw=randrw --number_ios=10 --ioengine=io_uring --iodepth=4 --fdatasync=2 --size=256k",
    // 6666: sequential clones of several block sizes with verify_backlog rewrite each
    // other's bytes out of step; fio passes, storlab's backlog check failed some runs.
    "--rw=write --bsrange=1k-64k --size=256k --randseed=38495 --verify=md5 --numjobs=2 --verify_backlog=4 --verify_fatal=1 --group_reporting --percentile_list=50",
    // 1111, 4444: a sequential mixed job's experimental pass on ioengine=sync: fio 3.33
    // fails its own verify there (bad header rand_seed, or bad magic), not on other engines.
    "--rw=readwrite --ioengine=sync --verify=crc32c --experimental_verify=1",
    "--rw=readwrite --bs=32k,16k --size=128k --number_ios=37 --ioengine=sync --verify=crc32c --experimental_verify=1 --continue_on_error=read --clocksource=gettimeofday",
    // 2233445: experimental_verify with strided zones: the zones' writes come back to the
    // region's start, and fio's pass reads a block as often as it was written.
    "--rw=rw --verify=pattern --verify_pattern=0xabcd --experimental_verify=1 --zonemode=strided --zonesize=16k --zoneskip=64k",
    // 1618033: experimental_verify on null above depth 1: fio's pass drops each read its
    // null engine refuses, and reads back every other write.
    "--rw=write --size=512k --ioengine=null --iodepth=8 --verify=xxhash --experimental_verify=1",
];
