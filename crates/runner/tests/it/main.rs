//! Integration tests of storlab-runner, as one test binary (one link instead of one per file).

mod blockalign;
mod failed_job;
mod fast_state;
mod lone_job;
mod verify;
