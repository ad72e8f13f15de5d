//! Two replicas on the production tier (PostgreSQL + Redis from
//! `scripts/services.sh start DIR; . DIR/env`): a Watch through replica A,
//! A killed (SIGKILL) while a writer puts keys through B, the watch moved to
//! B from its resume revision: every revision exactly once, in order, equal
//! to a replay. Without STATEKEEPER_TEST_POSTGRES_DSN and
//! STATEKEEPER_TEST_REDIS_URL there is no shared store: the test says so and
//! does nothing.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use statekeeper_client::v1::{blackboard_value, BlackboardValue, Payload, PutEntryRequest};
use statekeeper_client::{Client, RetryPolicy, RpcError, WatchOptions, WatchUpdate};
use support::{scaled, tier_args, Server};

async fn put(sk: &Client, board: &str, key: &str) -> Result<i64, RpcError> {
    let value = BlackboardValue {
        kind: Some(blackboard_value::Kind::Payload(Payload {
            content_type: "text/plain".into(),
            schema_version: 0,
            data: key.as_bytes().to_vec(),
        })),
    };
    let response = sk
        .blackboard
        .put_entry(PutEntryRequest {
            board: board.into(),
            key: key.into(),
            value: Some(value),
            ..Default::default()
        })
        .await?;
    Ok(response.header.map(|h| h.revision).unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_moves_to_the_other_replica_without_gap_or_repeat() {
    if tier_args().is_empty() {
        eprintln!("no production store (STATEKEEPER_TEST_POSTGRES_DSN/REDIS_URL unset): not run");
        return;
    }
    let key = format!("sk-replicas-{}", std::process::id());
    let tenant = format!("rust-replicas-{}-{}", std::process::id(), {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        now.as_nanos()
    });
    let args = vec!["--api-key".to_string(), format!("{key}={tenant}")];
    let mut a = Server::start_with(args.clone(), None, &key).await;
    let b = Server::start_with(args, None, &key).await;
    let (sk_a, sk_b) = (a.client().await, b.client().await);
    let board = "replicated";
    let before = put(&sk_b, board, "before").await.expect("first put");

    let mut watch = sk_a.watch(
        WatchOptions::new(board)
            .prefix("k/")
            .start_revision(before + 1)
            .retry(RetryPolicy {
                max_attempts: 400,
                max_backoff: Duration::from_millis(500),
                ..Default::default()
            }),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (sk, stop) = (sk_b.clone(), stop.clone());
        tokio::spawn(async move {
            let mut acknowledged = Vec::new();
            for i in 0..100_000u32 {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(revision) = put(&sk, board, &format!("k/{i:06}")).await {
                    acknowledged.push(revision);
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            acknowledged
        })
    };
    let (killed_tx, mut killed_rx) = tokio::sync::oneshot::channel::<()>();
    let watcher = {
        let blackboard_b = sk_b.blackboard.clone();
        tokio::spawn(async move {
            let mut seen = Vec::new();
            let mut switched = false;
            let result: Result<(), RpcError> = async {
                loop {
                    match watch.next().await? {
                        WatchUpdate::Events { events, .. } => {
                            for event in events {
                                seen.push((event.revision, event.entry.unwrap_or_default().key));
                            }
                            if seen.iter().any(|(_, k)| k == "k/end") {
                                return Ok(());
                            }
                        }
                        // A is gone: continue through B.
                        WatchUpdate::Interrupted { .. }
                            if !switched && killed_rx.try_recv().is_ok() =>
                        {
                            watch.switch_to(blackboard_b.clone());
                            switched = true;
                        }
                        _ => {}
                    }
                }
            }
            .await;
            (result, seen, switched)
        })
    };

    tokio::time::sleep(Duration::from_millis(1500)).await;
    a.kill();
    killed_tx.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::SeqCst);
    let acknowledged = tokio::time::timeout(scaled(120), writer)
        .await
        .unwrap()
        .unwrap();
    let end = put(&sk_b, board, "k/end").await.expect("last put");
    let (result, seen, switched) = tokio::time::timeout(scaled(120), watcher)
        .await
        .unwrap()
        .unwrap();
    result.expect("the watch reached the end through B");
    assert!(switched, "the watch was moved to B");

    let mut replay = sk_b.watch(
        WatchOptions::new(board)
            .prefix("k/")
            .start_revision(before + 1),
    );
    let mut truth = Vec::new();
    while truth.last().map(|(r, _): &(i64, String)| *r).unwrap_or(0) < end {
        if let WatchUpdate::Events { events, .. } = tokio::time::timeout(scaled(60), replay.next())
            .await
            .unwrap()
            .unwrap()
        {
            truth.extend(
                events
                    .into_iter()
                    .map(|e| (e.revision, e.entry.unwrap_or_default().key)),
            );
        }
    }
    assert!(acknowledged.len() > 20, "the writer made progress");
    assert_eq!(
        seen, truth,
        "the moved watch saw exactly the replayed events"
    );
    let revisions: Vec<i64> = seen.iter().map(|(r, _)| *r).collect();
    for revision in &acknowledged {
        assert!(
            revisions.contains(revision),
            "acknowledged put at {revision} missed"
        );
    }
    a.kill();
}
