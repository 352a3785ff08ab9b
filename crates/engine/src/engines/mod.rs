//! One module per engine; see each file.
