//! Fixed-width integer reads and writes on byte slices, in both byte orders.
//!
//! Callers check lengths first (`check_len`), so these index directly; a short slice here is a
//! bug in this crate, never a property of the input.

pub(crate) fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
pub(crate) fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}
pub(crate) fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}
pub(crate) fn le16(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}
pub(crate) fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}
pub(crate) fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}
pub(crate) fn put_be16(b: &mut [u8], v: u16) {
    b[..2].copy_from_slice(&v.to_be_bytes());
}
pub(crate) fn put_be32(b: &mut [u8], v: u32) {
    b[..4].copy_from_slice(&v.to_be_bytes());
}
pub(crate) fn put_be64(b: &mut [u8], v: u64) {
    b[..8].copy_from_slice(&v.to_be_bytes());
}
pub(crate) fn put_le16(b: &mut [u8], v: u16) {
    b[..2].copy_from_slice(&v.to_le_bytes());
}
pub(crate) fn put_le32(b: &mut [u8], v: u32) {
    b[..4].copy_from_slice(&v.to_le_bytes());
}
pub(crate) fn put_le64(b: &mut [u8], v: u64) {
    b[..8].copy_from_slice(&v.to_le_bytes());
}

/// Declares a code enum that keeps unknown values: `Name::Unknown(raw)`, with `From` both ways.
macro_rules! code_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident : $ty:ty {
            $( $(#[$vmeta:meta])* $variant:ident = $value:expr ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this crate has no name for, kept as found.
            Unknown($ty),
        }
        impl From<$ty> for $name {
            fn from(value: $ty) -> Self {
                match value {
                    $( v if v == $value => $name::$variant, )+
                    other => $name::Unknown(other),
                }
            }
        }
        impl From<$name> for $ty {
            fn from(value: $name) -> Self {
                match value {
                    $( $name::$variant => $value, )+
                    $name::Unknown(other) => other,
                }
            }
        }
    };
}
pub(crate) use code_enum;

/// Declares the constructor/accessor boilerplate shared by every zero-copy `Packet` view.
macro_rules! packet_view {
    ($name:ident, $min_len:expr) => {
        impl<T: AsRef<[u8]>> $name<T> {
            /// Wraps a buffer without checking its length; getters may panic on a short buffer.
            pub const fn new_unchecked(buffer: T) -> Self {
                $name { buffer }
            }
            /// Wraps a buffer after [`Self::check_len`] confirmed every getter is in bounds.
            pub fn new_checked(buffer: T) -> $crate::Result<Self> {
                let packet = Self::new_unchecked(buffer);
                packet.check_len()?;
                Ok(packet)
            }
            /// Minimum length of this message in bytes.
            pub const MIN_LEN: usize = $min_len;
            /// Returns the wrapped buffer.
            pub fn into_inner(self) -> T {
                self.buffer
            }
        }
        impl<T: AsRef<[u8]>> AsRef<[u8]> for $name<T> {
            fn as_ref(&self) -> &[u8] {
                self.buffer.as_ref()
            }
        }
    };
}
pub(crate) use packet_view;

/// Up to `N` bytes stored inline, so `Repr`s holding variable-length payloads (CDBs, sense data)
/// need no allocator and stay `Copy`.
#[derive(Clone, Copy)]
pub struct InlineBytes<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> InlineBytes<N> {
    /// Capacity in bytes.
    pub const CAPACITY: usize = N;

    /// Copies `bytes`; `None` if it is longer than `N`.
    pub fn new(bytes: &[u8]) -> Option<Self> {
        if bytes.len() > N {
            return None;
        }
        let mut buf = [0u8; N];
        buf[..bytes.len()].copy_from_slice(bytes);
        Some(InlineBytes {
            buf,
            len: bytes.len(),
        })
    }
    /// Empty.
    pub const fn empty() -> Self {
        InlineBytes {
            buf: [0u8; N],
            len: 0,
        }
    }
    /// The stored bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }
    /// Number of stored bytes.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<const N: usize> core::ops::Deref for InlineBytes<N> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}
impl<const N: usize> PartialEq for InlineBytes<N> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl<const N: usize> Eq for InlineBytes<N> {}
impl<const N: usize> core::hash::Hash for InlineBytes<N> {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}
impl<const N: usize> core::fmt::Debug for InlineBytes<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "[")?;
        for (i, b) in self.as_slice().iter().enumerate() {
            if i > 0 {
                write!(f, " ")?;
            }
            write!(f, "{b:02x}")?;
        }
        write!(f, "]")
    }
}
