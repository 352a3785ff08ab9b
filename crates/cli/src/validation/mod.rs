//! Validation of the simulator against published measurements (`storlab validate`): the
//! reference file reader, the planner that resolves every entry before anything runs, the
//! runner that measures each scenario on a fresh simulated stack, and the outputs.

pub mod measure;
pub mod output;
pub mod plan;
pub mod reference;
