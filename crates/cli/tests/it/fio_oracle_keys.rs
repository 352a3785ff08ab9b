//! fio as the oracle over the key table (issue 24): every key of the job language that changes
//! which I/O is issued, in a job both tools run with `write_iolog`, compared as its row says.

use crate::fio_oracle::{fio_log, fio_present, parse_iolog, scratch, LoggedIo, MIB};
use std::process::Command;

/// How a row of the key table is compared with fio.
#[derive(Clone, Copy, Debug)]
enum Agreement {
    /// The same I/Os in the same order.
    Sequence,
    /// Draws storlab does not take from fio's streams (a `random_distribution` other than
    /// uniform, the 4 KiB alignment it keeps on purpose): the same number of I/Os and bytes in
    /// all, each direction's share within 5 points.
    Totals,
}

/// One line storlab must print for a row where it differs from fio on purpose (checked per
/// row: no other row may print such a note).
const DIFFERS_NOTE: &str = "storlab differs from fio here";

/// A key-table row: the job's flags, how storlab's log is compared with fio's, and the note
/// storlab prints where it differs from fio on purpose.
type KeyRow = (&'static [&'static str], Agreement, Option<&'static str>);

/// Every key of the job language that changes which I/O is issued, each in one job.
const KEY_TABLE: &[KeyRow] = {
    use Agreement::*;
    &[
        // Sequential: rw, bs, offset, size, io_size, filesize, nrfiles, loops, number_ios.
        (&["--rw=read", "--bs=8k", "--size=256k"], Sequence, None),
        (
            &[
                "--readwrite=write",
                "--blocksize=4k",
                "--offset=128k",
                "--size=64k",
            ],
            Sequence,
            None,
        ),
        (
            &["--rw=read", "--bs=4k", "--size=64k", "--io_size=160k"],
            Sequence,
            None,
        ),
        (
            &["--rw=write", "--bs=16k", "--filesize=128k", "--nrfiles=1"],
            Sequence,
            None,
        ),
        (
            &["--rw=read", "--bs=4k", "--size=32k", "--loops=2"],
            Sequence,
            None,
        ),
        (
            &["--rw=read", "--bs=4k", "--size=32k", "--number_ios=6"],
            Sequence,
            None,
        ),
        // fio bounds a looped job at `number_ios` × `loops`, each loop ending with its bytes:
        // blocks 0..=7, then 0..=6.
        (
            &[
                "--rw=read",
                "--bs=4k",
                "--size=32k",
                "--loops=3",
                "--number_ios=5",
            ],
            Sequence,
            None,
        ),
        (&["--rw=write", "--bs=4k,8k", "--size=64k"], Sequence, None),
        (
            &["--rw=read", "--bs=4k", "--offset=25%", "--size=25%"],
            Sequence,
            None,
        ),
        (&["--rw=write:8k", "--bs=4k", "--size=128k"], Sequence, None),
        (
            &[
                "--rw=read",
                "--bs=4k",
                "--size=256k",
                "--zonemode=strided",
                "--zonesize=16k",
                "--zoneskip=16k",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=write",
                "--bs=4k",
                "--size=64k",
                "--fsync=4",
                "--end_fsync=1",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=write",
                "--bs=4k",
                "--size=32k",
                "--iodepth=4",
                "--ioengine=libaio",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=read",
                "--bs=4k",
                "--size=32k",
                "--direct=1",
                "--invalidate=1",
                "--fadvise_hint=0",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=write",
                "--bs=4k",
                "--size=32k",
                "--thinktime=10",
                "--thinktime_blocks=4",
            ],
            Sequence,
            None,
        ),
        (
            &["--rw=write", "--bs=4k", "--size=32k", "--rate_iops=2000"],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=write",
                "--bs=4k",
                "--size=32k",
                "--buffer_pattern=0xab",
                "--randseed=3",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=read",
                "--bs=4k",
                "--size=64k",
                "--runtime=10",
                "--ramp_time=0",
            ],
            Sequence,
            None,
        ),
        // Random: fio's own streams (fio_rand.rs), seeded as fio seeds them, give fio's
        // sequence, through its random map or without it.
        (&["--rw=randread", "--bs=4k", "--size=256k"], Sequence, None),
        (
            &["--rw=randwrite", "--bs=16k", "--size=256k", "--loops=2"],
            Sequence,
            None,
        ),
        (
            &["--rw=randread", "--bs=4k", "--size=256k", "--randseed=12"],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--random_generator=tausworthe64",
            ],
            Sequence,
            None,
        ),
        (
            &["--rw=randrw", "--bs=4k,16k", "--size=512k", "--iodepth=4"],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=64k",
                "--io_size=128k",
                "--randrepeat=1",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=8k",
                "--blockalign=8k",
                "--offset=64k",
                "--size=128k",
            ],
            Sequence,
            None,
        ),
        // Sizes drawn at random, from fio's size stream: fio's sequence too, and at random
        // offsets the map shrinks an I/O to the free blocks before a taken one, as fio's does.
        (
            &[
                "--rw=read",
                "--bsrange=4k-16k",
                "--number_ios=4000",
                "--size=64m",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=write",
                "--bssplit=4k/50:16k/30:64k/20",
                "--number_ios=4000",
                "--size=512m",
            ],
            Sequence,
            None,
        ),
        (
            &["--rw=randread", "--bsrange=4k-64k", "--size=1m"],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randwrite",
                "--bssplit=4k/10:8k/60:32k/30",
                "--size=2m",
                "--randseed=77",
            ],
            Sequence,
            None,
        ),
        // The direction of each I/O: fio's mix stream and its switching rule.
        (
            &["--rw=randrw", "--bs=4k", "--size=4m", "--rwmixread=70"],
            Sequence,
            None,
        ),
        (
            &["--rw=rw", "--bs=4k", "--size=4m", "--rwmixwrite=25"],
            Sequence,
            None,
        ),
        (
            &["--rw=randread", "--bs=4k", "--size=256k", "--norandommap"],
            Sequence,
            None,
        ),
        // `percentage_random` between 0 and 100 on a region that ends before its file (as
        // here): fio ends the job when a sequential I/O after a random one would pass the
        // region's end, after 58, 44, 56 or 52 of 64 I/Os for randseed unset, 1, 9, 12;
        // storlab draws the same streams and ends at the same I/O.
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=50",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=50",
                "--randseed=1",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randwrite",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=10",
                "--randseed=12",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randrw",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=25,75",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=1",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--percentage_random=99",
            ],
            Sequence,
            None,
        ),
        (
            &["--rw=randread:4", "--bs=4k", "--size=256k"],
            Sequence,
            None,
        ),
        // `rw_sequencer=identical`: the I/Os between new offsets repeat the last one's.
        (
            &[
                "--rw=randrw:3",
                "--bsrange=1k-16k",
                "--size=256k",
                "--rw_sequencer=identical",
            ],
            Sequence,
            None,
        ),
        // `bs_is_seq_rand`: sizes by sequential or random offset; `bs_unaligned`: any bytes.
        (
            &[
                "--rw=randrw",
                "--bs=4k,16k",
                "--bs_is_seq_rand=1",
                "--percentage_random=50",
                "--size=256k",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randrw",
                "--bssplit=1k/30:3k/70",
                "--bs_unaligned=1",
                "--size=128k",
                "--ioengine=libaio",
                "--iodepth=4",
            ],
            Sequence,
            None,
        ),
        // `offset_align`: a share's start rounded up to it, not to the smallest block.
        (
            &[
                "--rw=randwrite",
                "--bs=1k",
                "--offset=33%",
                "--offset_align=3k",
                "--size=64k",
            ],
            Sequence,
            None,
        ),
        // `allrandrepeat`: every stream from fio's fixed seed, whatever `randseed` says.
        (
            &[
                "--rw=randrw",
                "--bsrange=1k-16k",
                "--size=256k",
                "--randseed=77",
                "--allrandrepeat=1",
            ],
            Sequence,
            None,
        ),
        (
            &[
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
                "--random_distribution=zipf:1.2",
            ],
            Totals,
            None,
        ),
        // fio's alignment (the smallest block) under 4 KiB too: fio input, fio semantics.
        (&["--rw=randread", "--bs=512", "--size=64k"], Sequence, None),
    ]
};

/// fio as the oracle over the key table: every key of the job language that changes which I/O
/// is issued, each in a job both tools run with `write_iolog`, compared as its row says. Keys
/// whose fio effect storlab does not reproduce print their one line (`warnings.rs` checks those
/// lines); keys that only change timing or data (rates, thinktime, patterns, engines, syncs) are
/// compared on counts here and on their own in `fio_oracle.rs`.
#[test]
fn the_key_table_issues_fios_io() {
    if !fio_present() {
        return;
    }
    for &(flags, agreement, note) in KEY_TABLE {
        // Sparse, and larger than any row's region, so that neither tool lays it out.
        let (dir, data) = scratch(512 * MIB);
        let fio = fio_log(dir.path(), &data, flags);
        let log = dir.path().join("storlab.log");
        let output = Command::new(env!("CARGO_BIN_EXE_storlab"))
            .args(["run", "--no-db"])
            .arg(format!("--filename={}", data.display()))
            .arg(format!("--write_iolog={}", log.display()))
            .args(flags)
            .output()
            .unwrap();
        assert!(output.status.success(), "storlab {flags:?}: {output:?}");
        let storlab = parse_iolog(&log);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let notes = stderr.lines().filter(|l| l.contains(DIFFERS_NOTE)).count();
        assert_eq!(notes, usize::from(note.is_some()), "{flags:?}: {stderr}");
        let totals = |log: &[LoggedIo]| {
            let writes: Vec<&LoggedIo> = log.iter().filter(|io| io.write).collect();
            (
                log.len(),
                log.iter().map(|io| io.len_bytes).sum::<u64>(),
                writes.len(),
            )
        };
        let (fio_ios, fio_bytes, fio_writes) = totals(&fio);
        let (ios, bytes, writes) = totals(&storlab);
        assert!(fio_ios > 0, "{flags:?}: fio did nothing");
        match agreement {
            Agreement::Sequence => assert_eq!(storlab, fio, "{flags:?}"),
            Agreement::Totals => {
                assert_eq!((ios, bytes), (fio_ios, fio_bytes), "{flags:?}");
                let share = |w: usize, n: usize| w as f64 * 100.0 / n as f64;
                assert!(
                    (share(writes, ios) - share(fio_writes, fio_ios)).abs() < 5.0,
                    "{flags:?}: {writes} writes against fio's {fio_writes}"
                );
            }
        }
    }
}
