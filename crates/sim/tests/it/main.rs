//! Integration tests of storlab-sim, as one test binary (one link instead of one per file; the
//! tests of all modules share one pool of test threads, as the tests of one file always did).
//! `profile_edge_values` stays its own binary: it installs a counting `#[global_allocator]`
//! that refuses huge allocations (a refusal aborts the process) and a panic hook, both
//! process-global, so it must not share a process with other tests.

mod behaviour;
mod common;
mod data;
mod determinism;
mod drives;
mod event_doc;
mod fault_depth;
mod faults;
mod findings;
mod flush;
mod interval;
mod module_graph;
mod no_panic;
mod path_matches;
mod physics;
mod power_loss;
mod profiles;
mod properties;
mod sata_faults;
mod slc_cache;
mod swarm;
mod table;
mod trace;
mod usb_reset;
