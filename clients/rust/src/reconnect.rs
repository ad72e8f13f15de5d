//! When a broken stream (Watch, ReceiveMessages) is reopened, and when the
//! reconnects give up: shared by [`crate::Watch`] and [`crate::Inbox`].
//!
//! A run of failures starts at the first break after a working stream and
//! ends when a stream works again: it delivered something, or it stayed open
//! for [`STAYED_UP`] (an idle inbox stream sends nothing at all, not even its
//! headers, until a message comes). Within a run, the backoff grows with the
//! number of failures, and the reconnects give up when the next attempt would
//! come later than the reconnect timeout after the run's first failure (or
//! after `max_attempts` failures in the run).

use std::time::Duration;

use tokio::time::Instant;
use tonic::{Code, Status};

use crate::RetryPolicy;

/// How long a stream must stay open before it breaks to count as working.
pub(crate) const STAYED_UP: Duration = Duration::from_secs(1);

/// How long the reconnects go on without a working stream, by default.
pub const DEFAULT_RECONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// Messages tonic (hyper-util) gives a call whose connection could not be
/// made: such an attempt never worked, however long connecting took.
const NOT_CONNECTED: &[&str] = &["tcp connect error", "tcp open error", "dns error"];

fn never_connected(status: &Status) -> bool {
    status.code() == Code::Unavailable
        && NOT_CONNECTED
            .iter()
            .any(|prefix| status.message().starts_with(prefix))
}

/// The state of the current run of failures.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reconnects {
    failures: u32,
    broken_since: Option<Instant>,
}

impl Reconnects {
    /// A stream works: the next break starts a new run.
    pub(crate) fn working(&mut self) {
        self.failures = 0;
        self.broken_since = None;
    }

    /// A stream (opened, or tried, at `opened`) broke with `status`, which
    /// may be resumed: the pause before the next attempt, or None to give up.
    pub(crate) fn broken(
        &mut self,
        opened: Instant,
        status: &Status,
        retry: &RetryPolicy,
        timeout: Option<Duration>,
    ) -> Option<Duration> {
        let now = Instant::now();
        if now.saturating_duration_since(opened) >= STAYED_UP && !never_connected(status) {
            self.working();
        }
        self.failures = self.failures.saturating_add(1);
        let since = *self.broken_since.get_or_insert(now);
        if self.failures >= retry.max_attempts.max(1) {
            return None;
        }
        let pause = retry.backoff(self.failures);
        match timeout {
            Some(timeout) if now.saturating_duration_since(since) + pause > timeout => None,
            _ => Some(pause),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retry() -> RetryPolicy {
        RetryPolicy {
            max_attempts: u32::MAX,
            jitter: 0.0,
            ..RetryPolicy::default()
        }
    }

    fn ago(seconds: u64) -> Instant {
        Instant::now() - Duration::from_secs(seconds)
    }

    #[test]
    fn failures_of_one_run_back_off_and_a_stream_that_stayed_up_starts_a_new_run() {
        let down = Status::unavailable("tcp connect error");
        let mut r = Reconnects::default();
        let timeout = Some(DEFAULT_RECONNECT_TIMEOUT);
        // A stream that worked for a while breaks: the first failure of a run.
        let broke = Status::unavailable("the receive stream ended");
        assert_eq!(
            r.broken(ago(30), &broke, &retry(), timeout),
            Some(Duration::from_millis(100))
        );
        // Refused reconnects: the backoff grows.
        assert_eq!(
            r.broken(Instant::now(), &down, &retry(), timeout),
            Some(Duration::from_millis(200))
        );
        assert_eq!(
            r.broken(Instant::now(), &down, &retry(), timeout),
            Some(Duration::from_millis(400))
        );
        // A connection that could not be made, however long it took, does
        // not end the run.
        assert_eq!(
            r.broken(ago(10), &down, &retry(), timeout),
            Some(Duration::from_millis(800))
        );
        // A stream that stayed open (idle) then broke: a new run.
        assert_eq!(
            r.broken(ago(2), &broke, &retry(), timeout),
            Some(Duration::from_millis(100))
        );
        // So does one that delivered.
        r.broken(Instant::now(), &down, &retry(), timeout);
        r.working();
        assert_eq!(
            r.broken(Instant::now(), &broke, &retry(), timeout),
            Some(Duration::from_millis(100))
        );
    }

    #[test]
    fn the_run_gives_up_past_its_budget_or_its_attempts() {
        let down = Status::unavailable("tcp connect error");
        let mut r = Reconnects::default();
        // A budget shorter than the next pause: give up.
        assert_eq!(
            r.broken(
                Instant::now(),
                &down,
                &retry(),
                Some(Duration::from_millis(50))
            ),
            None
        );
        // No budget: as many attempts as max_attempts allows.
        let mut r = Reconnects::default();
        let three = RetryPolicy {
            max_attempts: 3,
            ..retry()
        };
        assert!(r.broken(Instant::now(), &down, &three, None).is_some());
        assert!(r.broken(Instant::now(), &down, &three, None).is_some());
        assert_eq!(r.broken(Instant::now(), &down, &three, None), None);
        let mut r = Reconnects::default();
        for _ in 0..1000 {
            assert!(r.broken(Instant::now(), &down, &retry(), None).is_some());
        }
    }
}
