//! Deadlines and retries of unary calls.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;
use tonic::{Code, Status};

use crate::RpcError;

/// Deadline of a unary call when none is configured.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Exponential backoff: retry `n` (1-based) waits
/// `min(max_backoff, initial_backoff * multiplier^(n-1))`, spread by
/// +/- `jitter` (a fraction in [0, 1)); at most `max_attempts` attempts in all.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1: never retry).
    pub max_attempts: u32,
    /// Wait before the first retry.
    pub initial_backoff: Duration,
    /// Longest wait between two attempts.
    pub max_backoff: Duration,
    /// Growth of the wait from one retry to the next (>= 1).
    pub multiplier: f64,
    /// Random spread of each wait, as a fraction of it.
    pub jitter: f64,
}

impl Default for RetryPolicy {
    /// 5 attempts, 100 ms doubling up to 5 s, +/- 20 %.
    fn default() -> Self {
        Self {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            multiplier: 2.0,
            jitter: 0.2,
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub const NONE: RetryPolicy = RetryPolicy {
        max_attempts: 1,
        initial_backoff: Duration::ZERO,
        max_backoff: Duration::ZERO,
        multiplier: 1.0,
        jitter: 0.0,
    };

    /// The wait before retry number `retry` (1-based).
    pub fn backoff(&self, retry: u32) -> Duration {
        let exponent = retry.saturating_sub(1).min(64) as i32;
        let base = self.initial_backoff.as_secs_f64() * self.multiplier.max(1.0).powi(exponent);
        let mut seconds = base.min(self.max_backoff.as_secs_f64());
        let jitter = self.jitter.clamp(0.0, 0.99);
        if jitter > 0.0 {
            seconds *= 1.0 + jitter * (fastrand::f64() * 2.0 - 1.0);
        }
        Duration::from_secs_f64(seconds.max(0.0))
    }
}

/// The deadline and retry policy of each unary call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallPolicy {
    /// Deadline of the whole call, retries and waits included.
    pub timeout: Duration,
    /// How UNAVAILABLE is retried (on calls that are safe to repeat).
    pub retry: RetryPolicy,
}

impl Default for CallPolicy {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
        }
    }
}

/// A fresh idempotency key (`request_id`): a random UUID.
pub fn new_request_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Prefixes of the messages tonic gives (as code UNKNOWN) to connection
/// failures that other gRPC implementations report as UNAVAILABLE.
const CONNECTION_LOST: &[&str] = &[
    "Service was not ready",
    "h2 protocol error",
    "transport error",
];

/// True if `status` says the server was not reached, the connection was lost,
/// or the server asked to be retried: UNAVAILABLE, the UNKNOWN status tonic
/// reports for a channel without a connection or a connection that broke
/// (what grpc-core calls UNAVAILABLE), or the CANCELLED it reports for a
/// request that was queued on a connection that closed.
pub fn is_transient(status: &Status) -> bool {
    match status.code() {
        Code::Unavailable => true,
        Code::Unknown => {
            CONNECTION_LOST
                .iter()
                .any(|prefix| status.message().starts_with(prefix))
                || caused_by_io(status)
        }
        // hyper cancels a request it had queued on a connection that then
        // closed: the request never reached the server, so sending it again
        // is as safe as after UNAVAILABLE. A CANCELLED the server sent has no
        // transport error behind it.
        Code::Cancelled => {
            status.message().starts_with(REQUEST_NOT_SENT)
                && std::error::Error::source(status).is_some()
        }
        _ => false,
    }
}

/// The message of hyper's error for a request canceled because its
/// connection closed before the request was sent.
const REQUEST_NOT_SENT: &str = "operation was canceled";

/// True if an I/O error is in the status's source chain.
fn caused_by_io(status: &Status) -> bool {
    let mut source = std::error::Error::source(status);
    // Bounded: source chains are short.
    for _ in 0..16 {
        let Some(error) = source else { return false };
        if error.is::<std::io::Error>() {
            return true;
        }
        source = error.source();
    }
    false
}

/// Runs a unary call with `policy`'s deadline (for the whole call, retries
/// included) and, when `retry_safe`, retries transient failures with backoff.
pub async fn unary<Req, Resp, F, Fut>(
    policy: &CallPolicy,
    method: &'static str,
    retry_safe: bool,
    request: Req,
    mut send: F,
) -> Result<Resp, RpcError>
where
    Req: Clone,
    F: FnMut(tonic::Request<Req>) -> Fut,
    Fut: Future<Output = Result<tonic::Response<Resp>, Status>>,
{
    let deadline = Instant::now() + policy.timeout;
    let attempts = if retry_safe {
        policy.retry.max_attempts.max(1)
    } else {
        1
    };
    let mut attempt = 1;
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(RpcError::new(
                Status::deadline_exceeded("call deadline passed"),
                method,
            ));
        }
        let mut call = tonic::Request::new(request.clone());
        call.set_timeout(remaining);
        // The client side enforces the deadline too (a server that is gone
        // cannot answer DEADLINE_EXCEEDED).
        let outcome = match tokio::time::timeout(remaining, send(call)).await {
            // tonic's own enforcement of the deadline says CANCELLED
            // ("Timeout expired"); gRPC calls it DEADLINE_EXCEEDED.
            Ok(Err(status))
                if status.code() == Code::Cancelled && status.message() == "Timeout expired" =>
            {
                Err(Status::deadline_exceeded("call deadline passed"))
            }
            Ok(outcome) => outcome,
            Err(_) => Err(Status::deadline_exceeded("call deadline passed")),
        };
        match outcome {
            Ok(response) => return Ok(response.into_inner()),
            Err(status) if attempt < attempts && is_transient(&status) => {
                let pause = policy.retry.backoff(attempt);
                if deadline.saturating_duration_since(Instant::now()) <= pause {
                    return Err(RpcError::new(status, method));
                }
                tokio::time::sleep(pause).await;
                attempt += 1;
            }
            Err(status) => return Err(RpcError::new(status, method)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_request_canceled_by_its_closed_connection_is_transient() {
        let mut status = Status::cancelled(REQUEST_NOT_SENT);
        let closed = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "connection closed");
        status.set_source(Arc::new(closed));
        assert!(is_transient(&status));
    }

    #[test]
    fn a_cancelled_status_from_the_server_is_not_transient() {
        assert!(!is_transient(&Status::cancelled(REQUEST_NOT_SENT)));
        assert!(!is_transient(&Status::cancelled("Timeout expired")));
    }
}
