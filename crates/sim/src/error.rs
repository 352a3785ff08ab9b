//! Typed errors of the simulator: bad profiles (naming file, key and reason) and bad requests.

/// Why a stack could not be built or a request could not be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// A profile file is malformed or holds an impossible value.
    #[error("{file}: {key}: {reason}")]
    Profile {
        /// Where the profile came from (`embedded:stacks/x.toml` or a real path).
        file: String,
        /// The offending key (dotted path), or `-` when the whole file is at fault.
        key: String,
        /// What is wrong, in a few words.
        reason: String,
    },
    /// No stack of that name exists in the profile set.
    #[error("unknown stack `{name}` (known stacks: {known})")]
    UnknownStack { name: String, known: String },
    /// Reading a user profile directory failed.
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
    /// A request broke the simulator's contract (slot out of range, slot reused, too long).
    #[error("bad request: {0}")]
    Request(String),
}

impl SimError {
    pub(crate) fn profile(file: &str, key: &str, reason: impl Into<String>) -> SimError {
        SimError::Profile {
            file: file.to_string(),
            key: key.to_string(),
            reason: reason.into(),
        }
    }
}
