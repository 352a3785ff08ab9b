//! The one error type every codec in this crate returns: it names the field that is wrong.

use core::fmt;

/// Why a buffer could not be parsed (or a value could not be emitted).
///
/// Every variant says which field is at fault, so a caller can print one clear line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The buffer is shorter than the message (or one of its declared lengths) needs.
    Truncated {
        /// Which message or field needed the bytes.
        what: &'static str,
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        got: usize,
    },
    /// A magic signature (BOT `USBC`/`USBS`, pcap magic) does not match.
    BadSignature {
        /// Which signature.
        what: &'static str,
        /// The value the specification requires.
        expected: u32,
        /// The value found in the buffer.
        found: u32,
    },
    /// A field holds a value the specification forbids (reserved bits set, length out of range).
    BadField {
        /// The field, named as in the specification.
        field: &'static str,
        /// The offending value.
        value: u64,
        /// What the specification requires.
        reason: &'static str,
    },
    /// A well-formed message of a kind this crate does not decode (e.g. an unsupported opcode).
    Unsupported {
        /// What kind of code was not recognised.
        what: &'static str,
        /// The code.
        value: u64,
    },
    /// The destination buffer of an `emit` is too small.
    BufferTooSmall {
        /// Which message was being emitted.
        what: &'static str,
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        got: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Truncated { what, needed, got } => {
                write!(f, "{what} truncated: needs {needed} bytes, got {got}")
            }
            Error::BadSignature {
                what,
                expected,
                found,
            } => write!(
                f,
                "bad {what} signature: expected {expected:#010x}, found {found:#010x}"
            ),
            Error::BadField {
                field,
                value,
                reason,
            } => write!(f, "bad field {field} = {value:#x}: {reason}"),
            Error::Unsupported { what, value } => write!(f, "unsupported {what} {value:#x}"),
            Error::BufferTooSmall { what, needed, got } => write!(
                f,
                "buffer too small to emit {what}: needs {needed} bytes, got {got}"
            ),
        }
    }
}

impl core::error::Error for Error {}

/// Result of every codec operation in this crate.
pub type Result<T> = core::result::Result<T, Error>;

/// Fails with [`Error::Truncated`] unless `buffer` holds at least `needed` bytes.
pub(crate) fn need(what: &'static str, buffer: &[u8], needed: usize) -> Result<()> {
    if buffer.len() < needed {
        Err(Error::Truncated {
            what,
            needed,
            got: buffer.len(),
        })
    } else {
        Ok(())
    }
}

/// Fails with [`Error::BufferTooSmall`] unless `buffer` holds at least `needed` bytes.
pub(crate) fn room(what: &'static str, buffer: &[u8], needed: usize) -> Result<()> {
    if buffer.len() < needed {
        Err(Error::BufferTooSmall {
            what,
            needed,
            got: buffer.len(),
        })
    } else {
        Ok(())
    }
}
