//! fio's trim modes against fio itself: `trim`, `randtrim` and `randtrimwrite` draw from fio's
//! `DDIR_TRIM` streams (its own size seed, the offset stream, a random map in the smallest
//! block of all three directions), and a random trim/write pair writes the trim's offset and
//! length; the same actions in the same order as fio's, on hand-picked and generated jobs.

use crate::fio_diff::jobs::Rng;
use crate::fio_oracle::{both_actions, fio_present, MIB};

/// The first action where the two logs part, for the failure message.
fn first_difference(fio: &[String], storlab: &[String]) -> String {
    let at = fio
        .iter()
        .zip(storlab)
        .position(|(a, b)| a != b)
        .unwrap_or(fio.len().min(storlab.len()));
    format!(
        "{} actions from fio, {} from storlab; #{at}: fio {:?}, storlab {:?}",
        fio.len(),
        storlab.len(),
        fio.get(at),
        storlab.get(at)
    )
}

fn assert_as_fio(flags: &[&str]) {
    let (fio, storlab) = both_actions(MIB, flags);
    assert!(!fio.is_empty(), "{flags:?}: fio issued nothing");
    assert!(
        fio == storlab,
        "{}\nreproduce: truncate -s 1M data && fio --name=t --filename=data --write_iolog=f.log {} \
         && storlab run --name=t --filename=data --write_iolog=s.log {}",
        first_difference(&fio, &storlab),
        flags.join(" "),
        flags.join(" ")
    );
}

#[test]
fn trims_draw_from_fios_trim_streams() {
    if !fio_present() {
        return;
    }
    for flags in [
        // A size range: the trim's own size seed.
        &[
            "--rw=randtrim",
            "--bsrange=2k-4k",
            "--size=64k",
            "--norandommap",
        ][..],
        // Reads of 2 KiB make fio's map twice as fine as the 4 KiB trims: once the trims'
        // blocks above the draw are taken, the next free bit is past the region, and the job
        // ends there (ten trims), where a map of 4 KiB blocks would wrap and trim on.
        &["--rw=randtrim", "--bs=2k,4k", "--size=64k"][..],
        &["--rw=trim", "--bsrange=1k-8k", "--size=64k"][..],
        &[
            "--rw=randtrim",
            "--bs=4k",
            "--size=128k",
            "--loops=2",
            "--randseed=5",
        ][..],
        // A random pair writes the trim's offset and length.
        &["--rw=randtrimwrite", "--bsrange=1k-8k", "--size=64k"][..],
        &[
            "--rw=randtrimwrite",
            "--bs=4k",
            "--size=64k",
            "--norandommap",
            "--io_size=128k",
        ][..],
        // fio adds the region's start to the write's offset a second time (io_u.c: the last
        // trim's absolute start taken as relative): the writes land 8 KiB past their trims,
        // and a write that would start past the region ends the job.
        &["--rw=randtrimwrite", "--bs=4k", "--size=64k", "--offset=8k"][..],
        // A trim/write job never syncs every N writes (io_u.c, `set_rw_ddir`, replaces the
        // sync by the pair's trim or write), only at its end.
        &[
            "--rw=randtrimwrite",
            "--bs=4k",
            "--size=64k",
            "--fsync=3",
            "--end_fsync=1",
        ][..],
        &[
            "--rw=trimwrite",
            "--bs=4k",
            "--size=32k",
            "--fdatasync=2",
            "--loops=2",
        ][..],
        &[
            "--rw=trimwrite",
            "--bs=4k",
            "--size=32k",
            "--fsync_on_close=1",
            "--loops=2",
        ][..],
    ] {
        let mut flags = flags.to_vec();
        flags.extend(["--ioengine=null", "--iodepth=1"]);
        assert_as_fio(&flags);
    }
}

/// Generated trim jobs (fixed seed): every mode with block sizes, ranges, regions, loops, the
/// map on or off and both generators' seeds.
#[test]
fn generated_trim_jobs_issue_fios_actions() {
    if !fio_present() {
        return;
    }
    let mut rng = Rng::new(0x7219);
    for _ in 0..24 {
        let mut flags = vec![
            format!(
                "--rw={}",
                rng.pick(&["trim", "randtrim", "trimwrite", "randtrimwrite"])
            ),
            rng.pick(&[
                "--bs=4k",
                "--bs=2k,4k",
                "--bs=4k,4k,8k",
                "--bsrange=1k-8k",
                "--bsrange=512-4k",
                "--bssplit=4k/50:16k/50",
            ])
            .to_string(),
            format!("--size={}k", 32 << rng.below(3)),
            "--ioengine=null".to_string(),
            "--iodepth=1".to_string(),
        ];
        for (percent, flag) in [
            (30, "--norandommap"),
            (30, "--loops=2"),
            (20, "--offset=64k"),
            (20, "--randrepeat=0"),
            (20, "--randseed=77"),
            (20, "--io_size=96k"),
            (20, "--fsync=3"),
            (20, "--end_fsync=1"),
        ] {
            if rng.below(100) < percent {
                flags.push(flag.to_string());
            }
        }
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        if flags.contains(&"--randrepeat=0") && !flags.contains(&"--randseed=77") {
            // Without a seed fio draws from the clock: nothing to compare.
            continue;
        }
        assert_as_fio(&flags);
    }
}
