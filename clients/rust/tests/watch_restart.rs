//! The resuming Watch against a real server that is killed (SIGKILL) and
//! restarted on the same port and data directory several times while a
//! writer puts keys: the watch must deliver every revision exactly once, in
//! order, none missed (compared with a watch of the same board replayed from
//! revision 1 afterwards, on a server that is no longer restarted).

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use statekeeper_client::v1::{
    blackboard_value, BlackboardValue, CompactBlackboardRequest, Payload, PutEntryRequest,
};
use statekeeper_client::{
    Client, ErrorReason, OnCompaction, RetryPolicy, RpcError, Watch, WatchOptions, WatchUpdate,
};
use support::{scaled, Server};
use tonic::Code;

const RESTARTS: usize = 3;

fn value(text: &str) -> Option<BlackboardValue> {
    Some(BlackboardValue {
        kind: Some(blackboard_value::Kind::Payload(Payload {
            content_type: "text/plain".into(),
            schema_version: 0,
            data: text.as_bytes().to_vec(),
        })),
    })
}

async fn put(sk: &Client, board: &str, key: &str) -> Result<i64, RpcError> {
    let response = sk
        .blackboard
        .put_entry(PutEntryRequest {
            board: board.into(),
            key: key.into(),
            value: value(key),
            ..Default::default()
        })
        .await?;
    Ok(response.header.map(|h| h.revision).unwrap_or_default())
}

/// Collects (revision, key) of every event until `until` is seen or the
/// watch fails; returns the events and the updates other than events.
async fn collect(
    watch: &mut Watch,
    until: i64,
) -> Result<(Vec<(i64, String)>, Vec<WatchUpdate>), RpcError> {
    let mut events = Vec::new();
    let mut others = Vec::new();
    while events.last().map(|(r, _)| *r).unwrap_or(0) < until {
        match watch.next().await? {
            WatchUpdate::Events { events: batch, .. } => {
                for event in batch {
                    events.push((event.revision, event.entry.unwrap_or_default().key));
                }
            }
            other => others.push(other),
        }
    }
    Ok((events, others))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_resumes_across_server_restarts_without_gap_or_repeat() {
    let mut server = Server::start().await;
    let sk = server.client().await;
    let board = "restart-board";
    // The first revision the watch must deliver: after a put made before it.
    let before = put(&sk, board, "before").await.expect("first put");
    let mut watch = sk.watch(
        WatchOptions::new(board)
            .prefix("k/")
            .start_revision(before + 1)
            .progress_every(Duration::from_secs(1))
            .retry(RetryPolicy {
                max_attempts: 400,
                max_backoff: Duration::from_millis(500),
                ..Default::default()
            }),
    );

    // The writer puts keys until told to stop, and counts the puts that
    // succeeded (a put that fails while the server is down is skipped).
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let sk = sk.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut acknowledged = Vec::new();
            for i in 0..100_000u32 {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                match put(&sk, board, &format!("k/{i:06}")).await {
                    Ok(revision) => acknowledged.push(revision),
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
                // Another key outside the prefix: revisions the watch must skip.
                if i % 5 == 0 {
                    let _ = put(&sk, board, &format!("other/{i}")).await;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            acknowledged
        })
    };
    let watcher = tokio::spawn(async move {
        let mut seen: Vec<(i64, String)> = Vec::new();
        let mut interrupted = 0;
        // Until the test's end revision arrives through `target`.
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
                    WatchUpdate::Interrupted { .. } => interrupted += 1,
                    _ => {}
                }
            }
        }
        .await;
        (result, seen, interrupted, watch.streams_opened())
    });

    for round in 0..RESTARTS {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        server.kill();
        tokio::time::sleep(Duration::from_millis(300)).await;
        server.restart().await;
        eprintln!("restart {} done", round + 1);
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::SeqCst);
    let acknowledged = tokio::time::timeout(scaled(120), writer)
        .await
        .expect("writer ends")
        .expect("writer");
    let end = put(&sk, board, "k/end").await.expect("last put");

    let (result, seen, interrupted, streams) = tokio::time::timeout(scaled(120), watcher)
        .await
        .expect("watch reaches the end")
        .expect("watcher");
    result.expect("the watch ends only when it saw the last key");

    // Ground truth: the same board replayed from the same start revision.
    let mut replay = sk.watch(
        WatchOptions::new(board)
            .prefix("k/")
            .start_revision(before + 1),
    );
    let (truth, _) = tokio::time::timeout(scaled(60), collect(&mut replay, end))
        .await
        .expect("replay in time")
        .expect("replay");

    assert!(
        acknowledged.len() > 20,
        "the writer made progress: {} puts",
        acknowledged.len()
    );
    let revisions: Vec<i64> = seen.iter().map(|(r, _)| *r).collect();
    assert!(
        revisions.windows(2).all(|w| w[0] < w[1]),
        "ordered and unique: {revisions:?}"
    );
    assert_eq!(
        seen, truth,
        "the resumed watch saw exactly the replayed events"
    );
    for revision in &acknowledged {
        assert!(
            revisions.contains(revision),
            "acknowledged put at {revision} missed"
        );
    }
    assert_eq!(revisions.first(), truth.first().map(|(r, _)| r));
    assert!(
        streams as usize > RESTARTS,
        "reconnected after every restart: {streams} streams"
    );
    assert!(
        interrupted >= RESTARTS,
        "each break was reported: {interrupted}"
    );
    eprintln!(
        "{} events, {} streams, last revision {end}",
        seen.len(),
        streams
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_is_answered_by_a_relist_then_watch() {
    let server = Server::start().await;
    let sk = server.client().await;
    let board = "compacted-board";
    let first = put(&sk, board, "a").await.unwrap();
    put(&sk, board, "b").await.unwrap();
    let last = put(&sk, board, "a").await.unwrap();
    sk.blackboard
        .compact_blackboard(CompactBlackboardRequest { revision: last })
        .await
        .unwrap();

    // With Fail, the typed error comes out.
    let mut failing = sk.watch(
        WatchOptions::new(board)
            .start_revision(first)
            .on_compaction(OnCompaction::Fail),
    );
    let error = tokio::time::timeout(scaled(30), failing.next())
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(error.code(), Code::OutOfRange);
    assert_eq!(error.reason(), Some(ErrorReason::RevisionCompacted));
    assert_eq!(error.metadata_i64("oldest_revision"), Some(last));

    // By default: the listing at the current revision, then the events after it.
    let mut watch = sk.watch(WatchOptions::new(board).start_revision(first));
    let relisted = tokio::time::timeout(scaled(30), watch.next())
        .await
        .unwrap()
        .unwrap();
    let WatchUpdate::Relisted { revision, entries } = relisted else {
        panic!("expected a relist, got {relisted:?}")
    };
    assert_eq!(revision, last);
    let keys: Vec<_> = entries.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ["a", "b"]);
    assert_eq!(watch.resume_revision(), last + 1);
    let next = put(&sk, board, "c").await.unwrap();
    let (events, _) = tokio::time::timeout(scaled(30), collect(&mut watch, next))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(events, vec![(next, "c".to_string())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initial_snapshot_and_progress_are_exposed() {
    let server = Server::start().await;
    let sk = server.client().await;
    let board = "snapshot-board";
    put(&sk, board, "x").await.unwrap();
    let at = put(&sk, board, "y").await.unwrap();
    let mut watch = sk.watch(
        WatchOptions::new(board)
            .initial_snapshot(true)
            .progress_every(Duration::from_millis(200)),
    );
    let mut snapshot = None;
    let mut progress = None;
    let deadline = tokio::time::Instant::now() + scaled(60);
    while (snapshot.is_none() || progress.is_none()) && tokio::time::Instant::now() < deadline {
        match tokio::time::timeout(scaled(30), watch.next())
            .await
            .unwrap()
            .unwrap()
        {
            WatchUpdate::Snapshot { revision, entries } => {
                snapshot = Some((
                    revision,
                    entries.into_iter().map(|e| e.key).collect::<Vec<_>>(),
                ))
            }
            WatchUpdate::Progress { revision } => progress = Some(revision),
            _ => {}
        }
    }
    assert_eq!(snapshot, Some((at, vec!["x".to_string(), "y".to_string()])));
    assert_eq!(
        progress,
        Some(at),
        "progress bookmarks the quiet board's revision"
    );
    assert_eq!(watch.resume_revision(), at + 1);
}
