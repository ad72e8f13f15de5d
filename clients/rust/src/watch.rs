//! A blackboard Watch that resumes where it stopped.
//!
//! `BlackboardService.Watch` gives every response a `resume_revision`: a new
//! Watch started there continues right after the last delivered message, on
//! any replica, with no gap and no repeat. [`Watch`] keeps that revision and,
//! when the stream breaks, opens a new one from it after an exponential
//! backoff:
//!
//! * UNAVAILABLE (server restart, lost connection, shutdown) and
//!   RESOURCE_EXHAUSTED/SLOW_CONSUMER are resumed; each break is reported as
//!   [`WatchUpdate::Interrupted`] (its `error.reason()` says which), so that a
//!   consumer can log it or slow down. The watch gives up (returns the
//!   error) when it has had no working stream for
//!   [`WatchOptions::reconnect_timeout`] (default 60 s): a run of failures
//!   starts at the first break and ends when a stream works again (it
//!   delivered an update other than `Started`, or stayed open for a second),
//!   so a quiet watch survives any number of restarts, each shorter than the
//!   timeout. [`WatchOptions::retry`] sets the backoff (and can bound the
//!   reconnects of one run with `max_attempts`).
//! * OUT_OF_RANGE/REVISION_COMPACTED (the history to replay is gone): with
//!   [`OnCompaction::Relist`] (the default) the watch lists the matching keys
//!   (all pages at one revision R), reports them as [`WatchUpdate::Relisted`]
//!   (replace your view of the board with them: the events between the last
//!   one you saw and R are not delivered) and continues from R + 1; with
//!   [`OnCompaction::Fail`] it returns the error.
//! * Any other error ends the watch: [`Watch::next`] returns it.
//!
//! ```no_run
//! # async fn demo(sk: statekeeper_client::Client) -> Result<(), statekeeper_client::RpcError> {
//! use statekeeper_client::{WatchOptions, WatchUpdate};
//! let mut watch = sk.watch(WatchOptions::new("team-1").prefix("plan/"));
//! loop {
//!     match watch.next().await? {
//!         WatchUpdate::Events { events, .. } => {
//!             for event in events {
//!                 println!("{} {}", event.revision, event.entry.unwrap_or_default().key);
//!             }
//!         }
//!         WatchUpdate::Relisted { entries, revision } => println!("{} keys at {revision}", entries.len()),
//!         _ => {}
//!     }
//! }
//! # }
//! ```

use std::time::Duration;

use tonic::{Code, Status};

use crate::reconnect::{Reconnects, DEFAULT_RECONNECT_TIMEOUT};
use crate::services::BlackboardService;
use crate::v1::{
    list_entries_request, watch_request, watch_response, BlackboardEntry, BlackboardEvent,
    BlackboardEventType, ListEntriesRequest, WatchRequest, WatchResponse,
};
use crate::{ErrorReason, RetryPolicy, RpcError};
use tokio::time::Instant;

const METHOD: &str = "statekeeper.v1.BlackboardService/Watch";

/// What to do when the revisions to replay have been compacted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnCompaction {
    /// List the matching keys, report them as [`WatchUpdate::Relisted`] and
    /// watch on from the listing's revision + 1.
    #[default]
    Relist,
    /// End the watch with the OUT_OF_RANGE/REVISION_COMPACTED error.
    Fail,
}

/// Which part of a board to watch, from where, and how to resume.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    board: String,
    selector: Option<watch_request::Selector>,
    start_revision: i64,
    initial_snapshot: bool,
    prev_value: bool,
    progress_notify_interval: Option<Duration>,
    event_types: Vec<BlackboardEventType>,
    retry: RetryPolicy,
    reconnect_timeout: Option<Duration>,
    on_compaction: OnCompaction,
    resume_slow_consumer: bool,
}

impl WatchOptions {
    /// Every key of `board`, changes after now, resumed after breaks (100 ms
    /// doubling to 5 s) until there was no working stream for 60 s,
    /// compaction answered by a relist.
    pub fn new(board: impl Into<String>) -> Self {
        Self {
            board: board.into(),
            selector: None,
            start_revision: 0,
            initial_snapshot: false,
            prev_value: false,
            progress_notify_interval: None,
            event_types: Vec::new(),
            retry: RetryPolicy {
                max_attempts: u32::MAX,
                ..RetryPolicy::default()
            },
            reconnect_timeout: Some(DEFAULT_RECONNECT_TIMEOUT),
            on_compaction: OnCompaction::Relist,
            resume_slow_consumer: true,
        }
    }

    /// Only keys starting with `prefix`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.selector = Some(watch_request::Selector::Prefix(prefix.into()));
        self
    }

    /// Only keys matching the glob `pattern`.
    pub fn pattern(mut self, pattern: impl Into<String>) -> Self {
        self.selector = Some(watch_request::Selector::Pattern(pattern.into()));
        self
    }

    /// The first revision to deliver (e.g. a listing's `header.revision + 1`,
    /// or a saved [`Watch::resume_revision`]); 0 (default): after now.
    pub fn start_revision(mut self, revision: i64) -> Self {
        self.start_revision = revision.max(0);
        self
    }

    /// Begin with the matching entries as of the revision before the first
    /// event ([`WatchUpdate::Snapshot`]).
    pub fn initial_snapshot(mut self, yes: bool) -> Self {
        self.initial_snapshot = yes;
        self
    }

    /// Events carry the entry as it was before the change.
    pub fn prev_value(mut self, yes: bool) -> Self {
        self.prev_value = yes;
        self
    }

    /// Ask for a [`WatchUpdate::Progress`] when nothing was sent for this long.
    pub fn progress_every(mut self, interval: Duration) -> Self {
        self.progress_notify_interval = Some(interval);
        self
    }

    /// Only events of these kinds.
    pub fn event_types(mut self, types: impl IntoIterator<Item = BlackboardEventType>) -> Self {
        self.event_types = types.into_iter().collect();
        self
    }

    /// Backoff between reconnects; `max_attempts` bounds the attempts of one
    /// run of failures (default: unbounded, see
    /// [`reconnect_timeout`](Self::reconnect_timeout)).
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// How long the watch keeps reconnecting without a working stream,
    /// counted from the first break of a run of failures (default 60 s);
    /// `None`: as long as the errors can be resumed.
    pub fn reconnect_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.reconnect_timeout = timeout.into();
        self
    }

    /// What to do on OUT_OF_RANGE/REVISION_COMPACTED.
    pub fn on_compaction(mut self, on_compaction: OnCompaction) -> Self {
        self.on_compaction = on_compaction;
        self
    }

    /// Whether RESOURCE_EXHAUSTED/SLOW_CONSUMER is resumed (default) or ends
    /// the watch with that error.
    pub fn resume_slow_consumer(mut self, yes: bool) -> Self {
        self.resume_slow_consumer = yes;
        self
    }
}

/// One step of a [`Watch`].
#[derive(Clone, Debug)]
pub enum WatchUpdate {
    /// A stream was opened; it delivers events from `start_revision` on.
    Started { start_revision: i64 },
    /// The initial snapshot: the matching entries at `revision`, whole (a
    /// snapshot broken half way is taken again).
    Snapshot {
        revision: i64,
        entries: Vec<BlackboardEntry>,
    },
    /// The events of one or more whole revisions, in order.
    Events {
        events: Vec<BlackboardEvent>,
        resume_revision: i64,
    },
    /// Every matching event at or below `revision` has been delivered.
    Progress { revision: i64 },
    /// The stream broke with `error` (UNAVAILABLE, or SLOW_CONSUMER); the
    /// watch reopens it from `resume_revision` after `retry_in`.
    Interrupted {
        error: RpcError,
        resume_revision: i64,
        retry_in: Duration,
    },
    /// The history to replay was compacted: these are the matching entries
    /// at `revision` (all pages), and the watch continues from `revision + 1`.
    /// Events between the last one delivered and `revision` are not delivered.
    Relisted {
        revision: i64,
        entries: Vec<BlackboardEntry>,
    },
}

/// A resuming blackboard watch; call [`next`](Watch::next) in a loop. Dropping
/// it cancels the stream.
pub struct Watch {
    service: BlackboardService,
    options: WatchOptions,
    resume_revision: i64,
    snapshot_pending: bool,
    snapshot: Vec<BlackboardEntry>,
    stream: Option<tonic::Streaming<WatchResponse>>,
    /// When the current stream was (or was tried to be) opened.
    opened: Instant,
    reconnects: Reconnects,
    pause: Option<Duration>,
    streams_opened: u32,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("board", &self.options.board)
            .field("resume_revision", &self.resume_revision)
            .field("streams_opened", &self.streams_opened)
            .finish()
    }
}

impl Watch {
    /// A watch through `service` (usually [`crate::Client::watch`]).
    pub fn new(service: BlackboardService, options: WatchOptions) -> Self {
        Self {
            resume_revision: options.start_revision,
            snapshot_pending: options.initial_snapshot,
            service,
            options,
            snapshot: Vec::new(),
            stream: None,
            opened: Instant::now(),
            reconnects: Reconnects::default(),
            pause: None,
            streams_opened: 0,
        }
    }

    /// The start revision of the next stream: where a new Watch would
    /// continue this one (0 before the first stream started "after now").
    pub fn resume_revision(&self) -> i64 {
        self.resume_revision
    }

    /// Moves the watch to another client, e.g. another replica after
    /// [`WatchUpdate::Interrupted`]: the next stream is opened through
    /// `service`, from [`resume_revision`](Self::resume_revision) (revisions
    /// are the same on every replica of a tenant's store).
    pub fn switch_to(&mut self, service: BlackboardService) {
        self.service = service;
        self.stream = None;
        self.snapshot.clear();
        self.pause = None;
    }

    /// Number of streams opened so far (1 + reconnects).
    pub fn streams_opened(&self) -> u32 {
        self.streams_opened
    }

    fn request(&self) -> WatchRequest {
        WatchRequest {
            board: self.options.board.clone(),
            selector: self.options.selector.clone(),
            start_revision: self.resume_revision,
            initial_snapshot: self.snapshot_pending,
            prev_value: self.options.prev_value,
            progress_notify_interval: self.options.progress_notify_interval.map(|d| {
                prost_types::Duration {
                    seconds: d.as_secs() as i64,
                    nanos: d.subsec_nanos() as i32,
                }
            }),
            event_types: self.options.event_types.iter().map(|t| *t as i32).collect(),
        }
    }

    /// The next update. Errors that are not resumed end the watch (the next
    /// call opens a new stream from [`resume_revision`](Self::resume_revision)).
    pub async fn next(&mut self) -> Result<WatchUpdate, RpcError> {
        loop {
            if let Some(pause) = self.pause.take() {
                tokio::time::sleep(pause).await;
            }
            if self.stream.is_none() {
                self.opened = Instant::now();
                let mut raw = self.service.raw();
                match raw.watch(self.request()).await {
                    Ok(response) => {
                        self.streams_opened += 1;
                        self.stream = Some(response.into_inner());
                    }
                    Err(status) => return self.broken(status).await,
                }
            }
            let Some(stream) = self.stream.as_mut() else {
                continue;
            };
            match stream.message().await {
                Ok(Some(response)) => {
                    // Started alone does not show a working stream: one that
                    // breaks right after it is a failure of the same run.
                    if !matches!(response.kind, Some(watch_response::Kind::Started(_))) {
                        self.reconnects.working();
                    }
                    if let Some(update) = self.observe(response) {
                        return Ok(update);
                    }
                }
                Ok(None) => {
                    return self
                        .broken(Status::unavailable("the watch stream ended"))
                        .await;
                }
                Err(status) => return self.broken(status).await,
            }
        }
    }

    fn observe(&mut self, response: WatchResponse) -> Option<WatchUpdate> {
        let kind = response.kind?;
        if let watch_response::Kind::SnapshotEnd(_) = &kind {
            self.snapshot_pending = false;
        }
        if !self.snapshot_pending {
            if response.resume_revision > 0 {
                self.resume_revision = response.resume_revision;
            } else if let watch_response::Kind::Started(started) = &kind {
                if started.start_revision > 0 {
                    self.resume_revision = started.start_revision;
                }
            }
        }
        match kind {
            watch_response::Kind::Started(started) => Some(WatchUpdate::Started {
                start_revision: started.start_revision,
            }),
            watch_response::Kind::SnapshotBegin(_) => {
                self.snapshot.clear();
                None
            }
            watch_response::Kind::SnapshotChunk(chunk) => {
                self.snapshot.extend(chunk.entries);
                None
            }
            watch_response::Kind::SnapshotEnd(end) => Some(WatchUpdate::Snapshot {
                revision: end.revision,
                entries: std::mem::take(&mut self.snapshot),
            }),
            watch_response::Kind::Events(events) => Some(WatchUpdate::Events {
                events: events.events,
                resume_revision: response.resume_revision,
            }),
            watch_response::Kind::Progress(progress) => Some(WatchUpdate::Progress {
                revision: progress.revision,
            }),
        }
    }

    async fn broken(&mut self, status: Status) -> Result<WatchUpdate, RpcError> {
        self.stream = None;
        self.snapshot.clear();
        let pause = self.reconnects.broken(
            self.opened,
            &status,
            &self.options.retry,
            self.options.reconnect_timeout,
        );
        let error = RpcError::new(status, METHOD);
        if error.code() == Code::OutOfRange && error.is(ErrorReason::RevisionCompacted) {
            return match self.options.on_compaction {
                OnCompaction::Fail => Err(error),
                OnCompaction::Relist => self.relist().await,
            };
        }
        let slow = error.code() == Code::ResourceExhausted && error.is(ErrorReason::SlowConsumer);
        if !(error.is_transient() || (slow && self.options.resume_slow_consumer)) {
            return Err(error);
        }
        let Some(retry_in) = pause else {
            return Err(error);
        };
        self.pause = Some(retry_in);
        Ok(WatchUpdate::Interrupted {
            error,
            resume_revision: self.resume_revision,
            retry_in,
        })
    }

    /// Lists the matching keys, all pages at one revision, and moves the
    /// resume point after it.
    async fn relist(&mut self) -> Result<WatchUpdate, RpcError> {
        let selector = self.options.selector.clone().map(|s| match s {
            watch_request::Selector::Prefix(p) => list_entries_request::Selector::Prefix(p),
            watch_request::Selector::Pattern(p) => list_entries_request::Selector::Pattern(p),
        });
        let mut entries = Vec::new();
        let mut revision = 0;
        let mut page_token = String::new();
        // Bounded: a board cannot have more pages than this at any page size.
        for _ in 0..1_000_000 {
            let page = self
                .service
                .list_entries(ListEntriesRequest {
                    board: self.options.board.clone(),
                    selector: selector.clone(),
                    page_token: std::mem::take(&mut page_token),
                    ..Default::default()
                })
                .await?;
            if revision == 0 {
                revision = page.header.map(|h| h.revision).unwrap_or(0);
            }
            entries.extend(page.entries);
            if page.next_page_token.is_empty() {
                break;
            }
            page_token = page.next_page_token;
        }
        self.resume_revision = revision + 1;
        self.snapshot_pending = false;
        self.reconnects.working();
        Ok(WatchUpdate::Relisted { revision, entries })
    }
}
