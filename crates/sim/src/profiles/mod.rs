//! Where profile text comes from: the table of profiles embedded in the binary.

pub mod embedded;
