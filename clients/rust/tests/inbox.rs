//! The inbox consumer against a real server: every message handled and
//! acknowledged across a server restart (SIGKILL) in the middle, redelivery
//! after a nack, and visibility extension while a slow handler runs.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use statekeeper_client::v1::{
    ListDeadLettersRequest, Payload, PullMessagesRequest, SendMessageRequest,
};
use statekeeper_client::{Client, InboxOptions, Outcome, RetryPolicy};
use support::{scaled, Server};
use tokio::time::Instant;

fn proto(d: Duration) -> prost_types::Duration {
    prost_types::Duration {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

async fn send(sk: &Client, to: &str, body: &str, fail_once: bool) -> String {
    let mut headers = std::collections::HashMap::new();
    if fail_once {
        headers.insert("fail-once".to_string(), "yes".to_string());
    }
    sk.messages
        .send_message(SendMessageRequest {
            to_agent: to.into(),
            r#type: "test.job".into(),
            payload: Some(Payload {
                content_type: "text/plain".into(),
                schema_version: 0,
                data: body.into(),
            }),
            headers,
            ..Default::default()
        })
        .await
        .expect("send")
        .message_id
}

/// Pulls with another receiver: what is deliverable now.
async fn pull(sk: &Client, inbox: &str) -> usize {
    sk.messages
        .pull_messages(PullMessagesRequest {
            agent_id: inbox.into(),
            max_messages: 100,
            visibility_timeout: Some(proto(Duration::from_secs(1))),
            ..Default::default()
        })
        .await
        .expect("pull")
        .deliveries
        .len()
}

#[derive(Default)]
struct Seen {
    /// message id -> delivery counts with which the handler saw it.
    deliveries: BTreeMap<String, Vec<i32>>,
    /// ids whose handler answered Ack.
    acked: BTreeSet<String>,
    last_delivery: Option<Instant>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_message_is_handled_and_acked_across_a_restart_and_nacks_are_redelivered() {
    let mut server = Server::start().await;
    let sk = server.client().await;
    let inbox = "worker-restart";
    let mut expected = BTreeSet::new();
    let mut fail_once = BTreeSet::new();
    for i in 0..12 {
        let id = send(&sk, inbox, &format!("job {i}"), i % 4 == 1).await;
        if i % 4 == 1 {
            fail_once.insert(id.clone());
        }
        expected.insert(id);
    }

    let seen = Arc::new(Mutex::new(Seen::default()));
    let consumer = {
        let seen = seen.clone();
        let inbox = sk.inbox(
            InboxOptions::new(inbox)
                .visibility_timeout(Duration::from_secs(2))
                .reconnect(RetryPolicy {
                    max_attempts: 400,
                    max_backoff: Duration::from_millis(500),
                    ..Default::default()
                })
                .redelivery(RetryPolicy {
                    max_attempts: u32::MAX,
                    initial_backoff: Duration::from_millis(100),
                    max_backoff: Duration::from_millis(500),
                    multiplier: 2.0,
                    jitter: 0.0,
                }),
        );
        tokio::spawn(async move {
            inbox
                .run(|delivery| {
                    let seen = seen.clone();
                    async move {
                        let message = delivery.message.unwrap_or_default();
                        // Long enough for the restart to land while handling.
                        tokio::time::sleep(Duration::from_millis(150)).await;
                        let mut seen = seen.lock().unwrap();
                        seen.last_delivery = Some(Instant::now());
                        let counts = seen
                            .deliveries
                            .entry(message.message_id.clone())
                            .or_default();
                        counts.push(delivery.delivery_count);
                        if message.headers.contains_key("fail-once") && delivery.delivery_count == 1
                        {
                            return Err("first attempt fails");
                        }
                        seen.acked.insert(message.message_id);
                        Ok(())
                    }
                })
                .await
        })
    };

    // Restart in the middle: after some, not all, messages were handled.
    let deadline = Instant::now() + scaled(60);
    while seen.lock().unwrap().acked.len() < 3 {
        assert!(Instant::now() < deadline, "the consumer handles messages");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.kill();
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.restart().await;
    for i in 12..16 {
        expected.insert(send(&sk, inbox, &format!("job {i}"), false).await);
    }

    // Until every message was acked by the handler and nothing was delivered
    // for two visibility timeouts (a lost ack would bring its message back).
    let deadline = Instant::now() + scaled(120);
    loop {
        {
            let seen = seen.lock().unwrap();
            let quiet = seen
                .last_delivery
                .is_some_and(|t| t.elapsed() > Duration::from_secs(5));
            if seen.acked == expected && quiet {
                break;
            }
        }
        assert!(
            !consumer.is_finished(),
            "the consumer stopped: {:?}",
            consumer.is_finished()
        );
        assert!(
            Instant::now() < deadline,
            "not every message was acked: {:?}",
            seen.lock().unwrap().acked.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    consumer.abort();

    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.acked, expected, "every message handled and acked");
        for id in &fail_once {
            let counts = &seen.deliveries[id];
            assert_eq!(counts[0], 1, "{id}: first delivery");
            assert!(
                counts.len() >= 2 && counts[1] >= 2,
                "{id} redelivered after its nack: {counts:?}"
            );
        }
    }
    assert_eq!(pull(&sk, inbox).await, 0, "nothing left in the inbox");
    let dead = sk
        .messages
        .list_dead_letters(ListDeadLettersRequest {
            agent_id: inbox.into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        dead.dead_letters.is_empty(),
        "no dead letters: {:?}",
        dead.dead_letters
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visibility_is_extended_while_the_handler_runs_and_dead_letter_outcome() {
    let server = Server::start().await;
    let sk = server.client().await;
    let inbox = "worker-slow";
    let slow = send(&sk, inbox, "slow", false).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (started_tx, mut started_rx) = tokio::sync::mpsc::channel(4);
    let consumer = {
        let seen = seen.clone();
        let inbox = sk.inbox(
            InboxOptions::new(inbox)
                .visibility_timeout(Duration::from_secs(1))
                .extend_every(Duration::from_millis(300)),
        );
        tokio::spawn(async move {
            inbox
                .run(|delivery| {
                    let seen = seen.clone();
                    let started_tx = started_tx.clone();
                    async move {
                        let message = delivery.message.unwrap_or_default();
                        seen.lock()
                            .unwrap()
                            .push((message.message_id.clone(), delivery.delivery_count));
                        let _ = started_tx.send(message.message_id.clone()).await;
                        if message.payload.unwrap_or_default().data == b"poison" {
                            return Outcome::DeadLetter {
                                reason: "cannot parse".into(),
                            };
                        }
                        // Four visibility timeouts.
                        tokio::time::sleep(Duration::from_secs(4)).await;
                        Outcome::Ack
                    }
                })
                .await
        })
    };
    let first = tokio::time::timeout(scaled(60), started_rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first, slow);
    // While the handler runs past the visibility timeout, another receiver
    // gets nothing: the lease is being extended.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(900)).await;
        assert_eq!(pull(&sk, inbox).await, 0, "the message stayed invisible");
    }
    let poison = send(&sk, inbox, "poison", false).await;
    let second = tokio::time::timeout(scaled(60), started_rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second, poison);
    let deadline = Instant::now() + scaled(30);
    let dead = loop {
        let dead = sk
            .messages
            .list_dead_letters(ListDeadLettersRequest {
                agent_id: inbox.into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .dead_letters;
        if !dead.is_empty() || Instant::now() > deadline {
            break dead;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    consumer.abort();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        dead[0].message.as_ref().map(|m| m.message_id.as_str()),
        Some(poison.as_str())
    );
    assert_eq!(dead[0].detail, "cannot parse");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(slow, 1), (poison, 1)],
        "each delivered once"
    );
    assert_eq!(pull(&sk, inbox).await, 0, "the slow message was acked");
}
