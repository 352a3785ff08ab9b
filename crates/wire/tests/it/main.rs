//! Integration tests of storlab-wire, as one test binary (one link instead of one per file).

mod ncq_log_props;
mod no_panic;
mod roundtrip;
mod sata_props;
mod tshark;
