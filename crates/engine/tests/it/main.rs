//! Integration tests of storlab-engine, as one test binary (one link instead of one per file);
//! `temp_cleanup` stays its own binary because the temporary-file registry is process-global.

mod common;
mod descriptors;
mod engines;
mod loop_safety;
mod posixaio_scan;
mod probe;
mod queued_sync;
mod signatures;
mod target;
