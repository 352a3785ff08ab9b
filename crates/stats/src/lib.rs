//! storlab-stats: see ARCHITECTURE.md for what this crate is for.
