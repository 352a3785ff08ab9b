//! Integration tests of storlab-report, as one test binary (one link instead of one per file;
//! the fixed report in `common` is compiled once). Insta names snapshots by module path, so
//! they live in `it/snapshots/` as `it__MODULE__TEST.snap`.

mod common;
mod fio_shape;
mod outputs;
