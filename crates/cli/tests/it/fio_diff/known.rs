//! The corpus's known differences from fio, each `(job as flags, class of difference)`: the
//! fuzzer fails on any difference not listed and on any listed one that is gone, so this list
//! only shrinks as storlab's fio semantics are fixed (issue 34 names the classes).

pub const DIVERGENCES: &[(&str, &str)] = &[];
