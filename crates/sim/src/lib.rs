//! storlab-sim: see ARCHITECTURE.md for what this crate is for.
