//! The corpus's known differences from fio, each `(job as flags, class of difference)`: the
//! fuzzer fails on any difference not listed and on any listed one that is gone, so this list
//! only shrinks as storlab's fio semantics are fixed (issue 34 names the classes).

pub const DIVERGENCES: &[(&str, &str)] = &[
    ("--rw=rw --bsrange=512-8k --blockalign=4k --size=256k --loops=3 --fsync_on_close=1 --verify=crc32", "iolog order"),
    ("--rw=readwrite --bs=2k --offset=6144 --size=256k --ioengine=io_uring --iodepth=4 --fdatasync=4", "iolog"),
    ("--rw=randrw --rwmixread=10 --bs=16k,16k --size=64k --ioengine=mmap --numjobs=2 --offset_increment=256k", "data sectors"),
];
