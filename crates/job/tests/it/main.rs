//! Integration tests of storlab-job, as one test binary (one link instead of one per file).

mod examples_and_docs;
mod no_panic;
