//! storlab-report: see ARCHITECTURE.md for what this crate is for.
