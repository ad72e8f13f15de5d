//! An inbox consumer: receives an agent's messages, runs a handler on each,
//! and acknowledges it (or gives it back) by the handler's outcome.
//!
//! * Deliveries come from a `ReceiveMessages` stream that is reopened with
//!   backoff when it breaks (UNAVAILABLE, a server restart, SLOW_CONSUMER);
//!   any other error ends [`Inbox::run`], and so does having no working
//!   stream for [`InboxOptions::reconnect_timeout`] (default 60 s). A run of
//!   failures starts at the first break and ends when a stream works again:
//!   it delivered messages or stayed open for a second (an idle inbox stream
//!   sends nothing), so an idle consumer survives any number of restarts,
//!   each shorter than the timeout.
//! * While the handler runs, the delivery's visibility timeout is extended
//!   (every third of it), so a slow handler keeps the message to itself.
//! * [`Outcome::Ack`] (or `Ok(())`) acknowledges; [`Outcome::Nack`] (or
//!   `Err(_)`) gives the message back for redelivery, after a delay that grows
//!   with its delivery count; [`Outcome::DeadLetter`] moves it to the
//!   dead-letter list. Acks and nacks are retried on UNAVAILABLE (both are
//!   idempotent per receipt handle).
//! * Delivery is at least once: a message whose ack was lost (server restart)
//!   is delivered again after its visibility timeout, so handlers should be
//!   idempotent (`delivery.message.message_id` is stable).
//! * [`InboxStats`] counts what the server answered to each ack or nack: an
//!   ack answered EXPIRED (the lease was lost: the message is delivered
//!   again) is counted in `expired`, not in `acked`.
//!
//! ```no_run
//! # async fn demo(sk: statekeeper_client::Client) -> Result<(), statekeeper_client::RpcError> {
//! use statekeeper_client::{InboxOptions, Outcome};
//! sk.inbox(InboxOptions::new("worker-1"))
//!     .run(|delivery| async move {
//!         let message = delivery.message.unwrap_or_default();
//!         println!("{} {}", message.r#type, message.message_id);
//!         Outcome::Ack
//!     })
//!     .await?;
//! # Ok(()) }
//! ```
//! `run` only returns on an error that is not retried; `run_until(handler,
//! stop)` also returns, cleanly, when the `stop` future completes. Dropping
//! the future stops at once: messages being handled then come back after
//! their visibility timeout.

use std::collections::VecDeque;
use std::future::Future;
use std::time::Duration;

use tonic::Code;

use crate::reconnect::{Reconnects, DEFAULT_RECONNECT_TIMEOUT};
use crate::services::MessageService;
use crate::v1::{
    AckMessagesRequest, Delivery, ExtendVisibilityRequest, NackMessagesRequest, ReceiptResult,
    ReceiptStatus, ReceiveMessagesRequest, ReceiveMessagesResponse,
};
use crate::{call, CallPolicy, ErrorReason, RetryPolicy, RpcError};
use tokio::time::Instant;

/// What to do with a handled delivery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Remove the message for good.
    Ack,
    /// Deliver it again: after `delay`, or (None) after the consumer's
    /// redelivery backoff for its delivery count.
    Nack { delay: Option<Duration> },
    /// Move it to the dead-letter list now, with `reason`.
    DeadLetter { reason: String },
}

impl<E: std::fmt::Debug> From<Result<(), E>> for Outcome {
    /// `Ok(())` acks, `Err(_)` nacks with the redelivery backoff.
    fn from(result: Result<(), E>) -> Self {
        match result {
            Ok(()) => Outcome::Ack,
            Err(_) => Outcome::Nack { delay: None },
        }
    }
}

fn duration(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

/// Which inbox to consume and how.
#[derive(Clone, Debug)]
pub struct InboxOptions {
    agent_id: String,
    types: Vec<String>,
    visibility_timeout: Duration,
    extend_every: Option<Duration>,
    reconnect: RetryPolicy,
    reconnect_timeout: Option<Duration>,
    redelivery: RetryPolicy,
}

impl InboxOptions {
    /// The inbox of `agent_id`: all types, 30 s visibility timeout extended
    /// every 10 s while the handler runs, reconnects (100 ms doubling to 5 s)
    /// until there was no working stream for 60 s, redelivery after a nack
    /// from 1 s doubling to 1 min.
    pub fn new(agent_id: impl Into<String>) -> Self {
        Self {
            agent_id: agent_id.into(),
            types: Vec::new(),
            visibility_timeout: Duration::from_secs(30),
            extend_every: None,
            reconnect: RetryPolicy {
                max_attempts: u32::MAX,
                ..RetryPolicy::default()
            },
            reconnect_timeout: Some(DEFAULT_RECONNECT_TIMEOUT),
            redelivery: RetryPolicy {
                max_attempts: u32::MAX,
                initial_backoff: Duration::from_secs(1),
                max_backoff: Duration::from_secs(60),
                multiplier: 2.0,
                jitter: 0.2,
            },
        }
    }

    /// Only messages of these types.
    pub fn types(mut self, types: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.types = types.into_iter().map(Into::into).collect();
        self
    }

    /// How long a delivery stays invisible to other receivers (and how far
    /// each extension pushes its deadline).
    pub fn visibility_timeout(mut self, timeout: Duration) -> Self {
        self.visibility_timeout = timeout;
        self
    }

    /// How often the visibility of a delivery being handled is extended
    /// (default: a third of the visibility timeout).
    pub fn extend_every(mut self, interval: Duration) -> Self {
        self.extend_every = Some(interval);
        self
    }

    /// Backoff between reconnects of the receive stream; `max_attempts`
    /// bounds the attempts of one run of failures (default: unbounded, see
    /// [`reconnect_timeout`](Self::reconnect_timeout)).
    pub fn reconnect(mut self, retry: RetryPolicy) -> Self {
        self.reconnect = retry;
        self
    }

    /// How long the consumer keeps reconnecting without a working stream,
    /// counted from the first break of a run of failures (default 60 s);
    /// `None`: as long as the errors can be resumed.
    pub fn reconnect_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.reconnect_timeout = timeout.into();
        self
    }

    /// The delay of a nack without one, by delivery count (attempt n waits
    /// `backoff(n)`).
    pub fn redelivery(mut self, backoff: RetryPolicy) -> Self {
        self.redelivery = backoff;
        self
    }
}

/// What a consumer did (see [`Inbox::run_until`]), by what the server
/// answered to each settlement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InboxStats {
    /// Deliveries given to the handler.
    pub handled: u64,
    /// Of those, acknowledged (the server answered OK, or ALREADY_ACKED to a
    /// retried ack).
    pub acked: u64,
    /// Given back for redelivery (nack answered OK).
    pub nacked: u64,
    /// Moved to the dead-letter list (DEAD_LETTERED: asked for, or the
    /// message ran out of deliveries).
    pub dead_lettered: u64,
    /// Settled too late: the server answered EXPIRED (the lease had passed or
    /// the message was given back meanwhile), so it is (or was) delivered
    /// again.
    pub expired: u64,
    /// Not settled for another reason: the handle was NOT_FOUND, or the ack
    /// or nack failed after its retries; the message comes back after its
    /// visibility timeout if it is still there.
    pub unsettled: u64,
}

impl InboxStats {
    fn count(&mut self, settled: Option<ReceiptStatus>, outcome: &Outcome) {
        match (settled, outcome) {
            (Some(ReceiptStatus::Ok | ReceiptStatus::AlreadyAcked), Outcome::Ack) => {
                self.acked += 1
            }
            (Some(ReceiptStatus::Ok), Outcome::Nack { .. }) => self.nacked += 1,
            (Some(ReceiptStatus::Ok), Outcome::DeadLetter { .. })
            | (Some(ReceiptStatus::DeadLettered), _) => self.dead_lettered += 1,
            (Some(ReceiptStatus::Expired), _) => self.expired += 1,
            _ => self.unsettled += 1,
        }
    }
}

/// A consumer of one inbox (see the module documentation).
#[derive(Clone, Debug)]
pub struct Inbox {
    service: MessageService,
    options: InboxOptions,
}

impl Inbox {
    /// A consumer through `service` (usually [`crate::Client::inbox`]).
    pub fn new(service: MessageService, options: InboxOptions) -> Self {
        Self { service, options }
    }

    /// Receives and handles messages one at a time until an error that is
    /// not retried.
    pub async fn run<H, Fut, O>(&self, handler: H) -> Result<InboxStats, RpcError>
    where
        H: FnMut(Delivery) -> Fut,
        Fut: Future<Output = O>,
        O: Into<Outcome>,
    {
        self.run_until(handler, std::future::pending()).await
    }

    /// As [`run`](Self::run), until `stop` completes: the delivery being
    /// handled then is finished and settled, deliveries received but not
    /// handled yet are given back (nacked without delay), and the counts are
    /// returned.
    pub async fn run_until<H, Fut, O, S>(
        &self,
        mut handler: H,
        stop: S,
    ) -> Result<InboxStats, RpcError>
    where
        H: FnMut(Delivery) -> Fut,
        Fut: Future<Output = O>,
        O: Into<Outcome>,
        S: Future<Output = ()>,
    {
        const RECEIVE: &str = "statekeeper.v1.MessageService/ReceiveMessages";
        tokio::pin!(stop);
        let mut stats = InboxStats::default();
        let mut reconnects = Reconnects::default();
        // When the current receive stream was (or was tried to be) opened.
        let mut opened = Instant::now();
        // Deliveries received and not yet handled: their visibility is
        // extended too, while the handler works on the one before them.
        let mut queue: VecDeque<Delivery> = VecDeque::new();
        let mut stream: Option<tonic::Streaming<ReceiveMessagesResponse>> = None;
        loop {
            let stopped = tokio::select! {
                biased;
                _ = &mut stop => true,
                _ = std::future::ready(()) => false,
            };
            if stopped {
                let handles: Vec<String> = queue.drain(..).map(|d| d.receipt_handle).collect();
                if !handles.is_empty() {
                    let _ = self
                        .nack(NackMessagesRequest {
                            receipt_handles: handles,
                            ..Default::default()
                        })
                        .await;
                }
                return Ok(stats);
            }
            if let Some(delivery) = queue.pop_front() {
                let (outcome, broken) = self
                    .handle(&delivery, &mut handler, &mut queue, &mut stream)
                    .await;
                if broken.is_some() {
                    stream = None;
                }
                stats.handled += 1;
                let settled = self.settle(delivery, &outcome).await?;
                stats.count(settled, &outcome);
                continue;
            }
            if stream.is_none() {
                opened = Instant::now();
            }
            let received = async {
                match stream.as_mut() {
                    None => self
                        .service
                        .receive_messages(self.request())
                        .await
                        .map(|opened| {
                            stream = Some(opened);
                            Vec::new()
                        }),
                    Some(open) => match open.message().await {
                        Ok(Some(response)) => Ok(response.deliveries),
                        Ok(None) => Err(RpcError::new(
                            tonic::Status::unavailable("the receive stream ended"),
                            RECEIVE,
                        )),
                        Err(status) => Err(RpcError::new(status, RECEIVE)),
                    },
                }
            };
            let received = tokio::select! {
                received = received => received,
                _ = &mut stop => return Ok(stats),
            };
            let error = match received {
                Ok(deliveries) => {
                    if !deliveries.is_empty() {
                        reconnects.working();
                    }
                    queue.extend(deliveries);
                    continue;
                }
                Err(error) => error,
            };
            stream = None;
            let slow =
                error.code() == Code::ResourceExhausted && error.is(ErrorReason::SlowConsumer);
            if !(error.is_transient() || slow) {
                return Err(error);
            }
            let Some(pause) = reconnects.broken(
                opened,
                error.status(),
                &self.options.reconnect,
                self.options.reconnect_timeout,
            ) else {
                return Err(error);
            };
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = &mut stop => return Ok(stats),
            }
        }
    }

    fn request(&self) -> ReceiveMessagesRequest {
        ReceiveMessagesRequest {
            agent_id: self.options.agent_id.clone(),
            // One at a time: the handler runs on one delivery at a time.
            max_in_flight: 1,
            visibility_timeout: Some(duration(self.options.visibility_timeout)),
            types: self.options.types.clone(),
        }
    }

    /// Runs the handler on one delivery; meanwhile reads the stream (into
    /// `queue`) and extends the visibility of this delivery and the queued
    /// ones. Returns the outcome, and the error if the stream broke.
    async fn handle<H, Fut, O>(
        &self,
        delivery: &Delivery,
        handler: &mut H,
        queue: &mut VecDeque<Delivery>,
        stream: &mut Option<tonic::Streaming<ReceiveMessagesResponse>>,
    ) -> (Outcome, Option<tonic::Status>)
    where
        H: FnMut(Delivery) -> Fut,
        Fut: Future<Output = O>,
        O: Into<Outcome>,
    {
        let visibility = self.options.visibility_timeout;
        let every = self
            .options
            .extend_every
            .unwrap_or(visibility / 3)
            .max(Duration::from_millis(10));
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        let work = handler(delivery.clone());
        tokio::pin!(work);
        let mut broken = None;
        loop {
            let reading = async {
                match stream.as_mut() {
                    Some(open) if broken.is_none() => open.message().await,
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                outcome = &mut work => return (outcome.into(), broken),
                _ = tick.tick() => {
                    let mut handles = vec![delivery.receipt_handle.clone()];
                    handles.extend(queue.iter().map(|d| d.receipt_handle.clone()));
                    // A failed extension is tried again at the next tick.
                    let _ = self
                        .service
                        .extend_visibility(ExtendVisibilityRequest {
                            receipt_handles: handles,
                            visibility_timeout: Some(duration(visibility)),
                        })
                        .await;
                }
                message = reading => match message {
                    Ok(Some(response)) => queue.extend(response.deliveries),
                    Ok(None) => broken = Some(tonic::Status::unavailable("the receive stream ended")),
                    Err(status) => broken = Some(status),
                },
            }
        }
    }

    /// Acks, nacks or dead-letters a handled delivery: what the server
    /// answered for its receipt handle (None: no answer). A failure that
    /// outlives the retries is not fatal: the message comes back after its
    /// visibility timeout.
    async fn settle(
        &self,
        delivery: Delivery,
        outcome: &Outcome,
    ) -> Result<Option<ReceiptStatus>, RpcError> {
        let handle = delivery.receipt_handle;
        let count = delivery.delivery_count.max(1) as u32;
        let settled = match outcome {
            Outcome::Ack => self.ack(handle).await,
            Outcome::Nack { delay } => {
                let delay = delay.unwrap_or_else(|| self.options.redelivery.backoff(count));
                self.nack(NackMessagesRequest {
                    receipt_handles: vec![handle],
                    delay: Some(duration(delay)),
                    ..Default::default()
                })
                .await
            }
            Outcome::DeadLetter { reason } => {
                self.nack(NackMessagesRequest {
                    receipt_handles: vec![handle],
                    dead_letter: true,
                    reason: reason.clone(),
                    ..Default::default()
                })
                .await
            }
        };
        match settled {
            Ok(results) => Ok(results
                .first()
                .map(|r| ReceiptStatus::try_from(r.status).unwrap_or(ReceiptStatus::Unspecified))),
            Err(error) if !error.is_transient() && error.code() != Code::DeadlineExceeded => {
                Err(error)
            }
            Err(_) => Ok(None),
        }
    }

    /// Ack, nack and extend are not request_id mutations, but repeating them
    /// with the same receipt handle changes nothing: they are retried.
    fn settle_policy(&self) -> CallPolicy {
        CallPolicy {
            retry: RetryPolicy {
                max_attempts: 8,
                ..RetryPolicy::default()
            },
            ..self.service.policy()
        }
    }

    async fn ack(&self, handle: String) -> Result<Vec<ReceiptResult>, RpcError> {
        let raw = self.service.raw();
        let request = AckMessagesRequest {
            receipt_handles: vec![handle],
        };
        call::unary(
            &self.settle_policy(),
            "statekeeper.v1.MessageService/AckMessages",
            true,
            request,
            move |r| {
                let mut raw = raw.clone();
                async move { raw.ack_messages(r).await }
            },
        )
        .await
        .map(|response| response.results)
    }

    async fn nack(&self, request: NackMessagesRequest) -> Result<Vec<ReceiptResult>, RpcError> {
        let raw = self.service.raw();
        call::unary(
            &self.settle_policy(),
            "statekeeper.v1.MessageService/NackMessages",
            true,
            request,
            move |r| {
                let mut raw = raw.clone();
                async move { raw.nack_messages(r).await }
            },
        )
        .await
        .map(|response| response.results)
    }
}
