//! How long the inbox consumer and the Watch keep reconnecting, against a
//! real server that is killed (SIGKILL) and restarted, with the default
//! options: an idle consumer survives any number of restarts (each one is a
//! new run of failures), both survive an outage longer than the old cap of 10
//! reconnects (about 21 s) since the default is a 60 s budget without a
//! working stream; and the consumer's counts follow what the server answered
//! to each ack (an ack answered EXPIRED is not counted as acked).

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use statekeeper_client::v1::{
    blackboard_value, BlackboardValue, NackMessagesRequest, Payload, PutEntryRequest,
    SendMessageRequest,
};
use statekeeper_client::{
    Client, InboxOptions, InboxStats, Outcome, RpcError, WatchOptions, WatchUpdate,
};
use support::{scaled, Server};
use tokio::time::Instant;

async fn send(sk: &Client, to: &str, body: &str) -> String {
    sk.messages
        .send_message(SendMessageRequest {
            to_agent: to.into(),
            r#type: "test.job".into(),
            payload: Some(Payload {
                content_type: "text/plain".into(),
                schema_version: 0,
                data: body.into(),
            }),
            ..Default::default()
        })
        .await
        .expect("send")
        .message_id
}

async fn put(sk: &Client, board: &str, key: &str) -> i64 {
    sk.blackboard
        .put_entry(PutEntryRequest {
            board: board.into(),
            key: key.into(),
            value: Some(BlackboardValue {
                kind: Some(blackboard_value::Kind::Payload(Payload {
                    content_type: "text/plain".into(),
                    schema_version: 0,
                    data: key.as_bytes().to_vec(),
                })),
            }),
            ..Default::default()
        })
        .await
        .expect("put")
        .header
        .map(|h| h.revision)
        .unwrap_or_default()
}

type Consumer = tokio::task::JoinHandle<Result<InboxStats, RpcError>>;

/// A consumer with the default options that records the message ids it
/// handled (and acks them).
fn consume(sk: &Client, inbox: &str) -> (Arc<Mutex<Vec<String>>>, Consumer) {
    let handled = Arc::new(Mutex::new(Vec::new()));
    let inbox = sk.inbox(InboxOptions::new(inbox));
    let task = {
        let handled = handled.clone();
        tokio::spawn(async move {
            inbox
                .run(|delivery| {
                    let handled = handled.clone();
                    async move {
                        let id = delivery.message.unwrap_or_default().message_id;
                        handled.lock().unwrap().push(id);
                        Outcome::Ack
                    }
                })
                .await
        })
    };
    (handled, task)
}

/// Waits until `id` was handled; fails at once if the consumer ended.
async fn wait_handled(handled: &Mutex<Vec<String>>, consumer: &Consumer, id: &str) {
    let deadline = Instant::now() + scaled(90);
    while !handled.lock().unwrap().iter().any(|h| h == id) {
        assert!(!consumer.is_finished(), "the consumer stopped reconnecting");
        assert!(Instant::now() < deadline, "{id} was not handled in time");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_consumer_survives_many_restarts_with_the_default_options() {
    let mut server = Server::start().await;
    let sk = server.client().await;
    let inbox = "idle-worker";
    let (handled, consumer) = consume(&sk, inbox);
    let first = send(&sk, inbox, "before").await;
    wait_handled(&handled, &consumer, &first).await;

    // Each restart breaks the idle stream and costs at least one refused
    // reconnect while the server starts: more than 10 in all (the old
    // lifetime cap of a consumer that receives nothing).
    for round in 0..8 {
        tokio::time::sleep(Duration::from_secs(3)).await;
        server.kill();
        tokio::time::sleep(Duration::from_millis(500)).await;
        server.restart().await;
        eprintln!("restart {} done", round + 1);
        assert!(
            !consumer.is_finished(),
            "the consumer stopped after restart {}",
            round + 1
        );
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let last = send(&sk, inbox, "after").await;
    wait_handled(&handled, &consumer, &last).await;
    consumer.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_and_consumer_survive_an_outage_longer_than_ten_reconnects() {
    let mut server = Server::start().await;
    let sk = server.client().await;
    let board = "outage-board";
    let inbox = "outage-worker";
    let start = put(&sk, board, "k/before").await;

    let (handled, consumer) = consume(&sk, inbox);
    let first = send(&sk, inbox, "before").await;
    wait_handled(&handled, &consumer, &first).await;

    let keys = Arc::new(Mutex::new(Vec::new()));
    let mut watch = sk.watch(WatchOptions::new(board).start_revision(start));
    let watcher = {
        let keys = keys.clone();
        tokio::spawn(async move {
            loop {
                match watch.next().await? {
                    WatchUpdate::Events { events, .. } => {
                        let mut keys = keys.lock().unwrap();
                        for event in events {
                            keys.push(event.entry.unwrap_or_default().key);
                        }
                        if keys.iter().any(|k| k == "k/after") {
                            return Ok::<_, RpcError>(());
                        }
                    }
                    _ => continue,
                }
            }
        })
    };
    let deadline = Instant::now() + scaled(60);
    while keys.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the watch delivers");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Down for 30 s: ten reconnects with the default backoff (100 ms
    // doubling to 5 s, +/- 20 %) take at most about 26 s.
    server.kill();
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert!(
        !consumer.is_finished(),
        "the consumer gave up during the outage"
    );
    assert!(
        !watcher.is_finished(),
        "the watch gave up during the outage"
    );
    server.restart().await;

    let last = send(&sk, inbox, "after").await;
    wait_handled(&handled, &consumer, &last).await;
    put(&sk, board, "k/after").await;
    tokio::time::timeout(scaled(90), watcher)
        .await
        .expect("the watch delivers the put made after the restart")
        .expect("watcher")
        .expect("the watch did not end with an error");
    assert_eq!(
        *keys.lock().unwrap(),
        vec!["k/before".to_string(), "k/after".to_string()]
    );
    consumer.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ack_answered_expired_is_counted_expired_not_acked() {
    let server = Server::start().await;
    let sk = server.client().await;
    let inbox = "expiring-worker";
    send(&sk, inbox, "lost").await;
    send(&sk, inbox, "kept").await;
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
    let other = sk.clone();
    let stats = tokio::time::timeout(
        scaled(90),
        sk.inbox(InboxOptions::new(inbox)).run_until(
            |delivery| {
                let other = other.clone();
                let done_tx = done_tx.clone();
                async move {
                    let id = delivery.message.clone().unwrap_or_default().message_id;
                    if delivery
                        .message
                        .unwrap_or_default()
                        .payload
                        .unwrap_or_default()
                        .data
                        == b"lost"
                    {
                        // Another receiver gives the message back meanwhile
                        // (for a minute): this receipt handle is no longer
                        // valid, so the consumer's ack must be answered
                        // EXPIRED.
                        other
                            .messages
                            .nack_messages(NackMessagesRequest {
                                receipt_handles: vec![delivery.receipt_handle.clone()],
                                delay: Some(prost_types::Duration {
                                    seconds: 60,
                                    nanos: 0,
                                }),
                                ..Default::default()
                            })
                            .await
                            .expect("nack by another receiver");
                    }
                    let _ = done_tx.send(id);
                    Outcome::Ack
                }
            },
            async {
                let mut seen = Vec::new();
                while seen.len() < 2 {
                    match done_rx.recv().await {
                        Some(id) => seen.push(id),
                        None => return,
                    }
                }
            },
        ),
    )
    .await
    .expect("both messages handled in time")
    .expect("consumer");
    assert_eq!(stats.handled, 2, "{stats:?}");
    assert_eq!(stats.acked, 1, "only the ack the server applied: {stats:?}");
    assert_eq!(stats.expired, 1, "the ack answered EXPIRED: {stats:?}");
}
