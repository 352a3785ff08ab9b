//! storlab-runner: see ARCHITECTURE.md for what this crate is for.
