//! Byte-exact codecs for every protocol message storlab's simulator speaks (see ARCHITECTURE.md).
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
