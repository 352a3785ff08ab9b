//! storlab-job: the job model, its validation, and the readers that build jobs (fio files, flags).

pub mod model;

pub use model::*;
