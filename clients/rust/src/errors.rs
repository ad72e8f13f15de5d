//! Typed errors: the AIP-193 `google.rpc.ErrorInfo` the server attaches to a
//! failed call, with its reason as the generated [`ErrorReason`] enum.
//!
//! ```
//! use statekeeper_client::{ErrorReason, RpcError};
//! fn explain(error: &RpcError) -> &'static str {
//!     match error.reason() {
//!         Some(ErrorReason::EtagMismatch) => "someone else wrote first: re-read and retry",
//!         Some(ErrorReason::NotFound) => "no such record",
//!         _ if error.is_transient() => "the server was not reached: retry later",
//!         _ => "other",
//!     }
//! }
//! ```

use std::collections::HashMap;
use std::fmt;

use tonic::{Code, Status};
use tonic_types::StatusExt;

pub use crate::v1::ErrorReason;

/// The `domain` of every ErrorInfo the statekeeper server sends.
pub const ERROR_DOMAIN: &str = "statekeeper.dev";

/// The prefix of the enum value names that the wire form of a reason drops.
const REASON_PREFIX: &str = "ERROR_REASON_";

/// The reason as sent on the wire: `ErrorReason::EtagMismatch` ->
/// `"ETAG_MISMATCH"` (the proto value name without `ERROR_REASON_`).
pub fn reason_name(reason: ErrorReason) -> &'static str {
    let name = reason.as_str_name();
    name.strip_prefix(REASON_PREFIX).unwrap_or(name)
}

/// The enum value of a wire reason (`"ETAG_MISMATCH"`), or None for a reason
/// this client's contract does not know.
pub fn reason_from_name(name: &str) -> Option<ErrorReason> {
    if name.is_empty() {
        return None;
    }
    ErrorReason::from_str_name(&format!("{REASON_PREFIX}{name}"))
        .filter(|reason| *reason != ErrorReason::Unspecified)
}

/// Every value of the generated enum but UNSPECIFIED, in number order.
pub fn all_reasons() -> impl Iterator<Item = ErrorReason> {
    // Proto enum numbers are small and dense; 0..1024 covers them.
    (1..1024).filter_map(|n| ErrorReason::try_from(n).ok())
}

/// A failed call: the gRPC status plus the server's ErrorInfo.
#[derive(Clone)]
pub struct RpcError {
    status: Status,
    method: &'static str,
    reason: Option<ErrorReason>,
    reason_name: String,
    domain: String,
    metadata: HashMap<String, String>,
}

impl RpcError {
    /// Decodes the ErrorInfo of `status` (if any); `method` names the call
    /// ("statekeeper.v1.SessionService/GetSession", or "" if unknown).
    pub fn new(status: Status, method: &'static str) -> Self {
        let info = status.get_details_error_info();
        let (reason_name, domain, metadata) = match info {
            Some(info) => (info.reason, info.domain, info.metadata),
            None => (String::new(), String::new(), HashMap::new()),
        };
        Self {
            reason: reason_from_name(&reason_name),
            status,
            method,
            reason_name,
            domain,
            metadata,
        }
    }

    /// The canonical status code.
    pub fn code(&self) -> Code {
        self.status.code()
    }

    /// The status message.
    pub fn message(&self) -> &str {
        self.status.message()
    }

    /// The ErrorInfo reason, None if the status carries none or one this
    /// client's contract does not know (see [`reason_name`](Self::reason_name)).
    pub fn reason(&self) -> Option<ErrorReason> {
        self.reason
    }

    /// The ErrorInfo reason as sent ("ETAG_MISMATCH"), "" if none.
    pub fn reason_name(&self) -> &str {
        &self.reason_name
    }

    /// The ErrorInfo domain ("statekeeper.dev"), "" if none.
    pub fn domain(&self) -> &str {
        &self.domain
    }

    /// The ErrorInfo metadata, e.g. `field`, `current_revision`,
    /// `oldest_revision`, `resume_revision`.
    pub fn metadata(&self) -> &HashMap<String, String> {
        &self.metadata
    }

    /// An ErrorInfo metadata value parsed as a revision (or any i64).
    pub fn metadata_i64(&self, key: &str) -> Option<i64> {
        self.metadata.get(key).and_then(|v| v.parse().ok())
    }

    /// The call that failed, "" if unknown.
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The underlying tonic status.
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// True if the reason is `reason`.
    pub fn is(&self, reason: ErrorReason) -> bool {
        self.reason == Some(reason)
    }

    /// True if the server does not serve the method (UNIMPLEMENTED).
    pub fn is_unimplemented(&self) -> bool {
        self.code() == Code::Unimplemented
    }

    /// True if the server was not reached or asked to be retried (see
    /// [`crate::call::is_transient`]).
    pub fn is_transient(&self) -> bool {
        crate::call::is_transient(&self.status)
    }
}

impl From<Status> for RpcError {
    fn from(status: Status) -> Self {
        Self::new(status, "")
    }
}

impl From<RpcError> for Status {
    fn from(error: RpcError) -> Self {
        error.status
    }
}

impl fmt::Debug for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcError")
            .field("method", &self.method)
            .field("code", &self.code())
            .field("reason", &self.reason_name)
            .field("message", &self.message())
            .field("metadata", &self.metadata)
            .finish()
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.method.is_empty() {
            write!(f, "{}: ", self.method)?;
        }
        write!(f, "{:?}", self.code())?;
        if !self.reason_name.is_empty() {
            write!(f, " [{}]", self.reason_name)?;
        }
        write!(f, ": {}", self.message())
    }
}

impl std::error::Error for RpcError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.status)
    }
}
