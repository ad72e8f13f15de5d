//! The client layer against a real server: typed errors (the generated
//! ErrorReason), default deadlines, UNAVAILABLE retried only for reads and
//! mutations with an idempotency key (which the client sets).

mod support;

use std::time::Duration;

use statekeeper_client::errors::{all_reasons, reason_from_name, reason_name};
use statekeeper_client::v1::{
    blackboard_value, BlackboardValue, GetEntryRequest, GetSessionRequest, Payload,
    PullMessagesRequest, PutEntryRequest, RequestReplyRequest, SendMessageRequest,
};
use statekeeper_client::{ErrorReason, RetryPolicy, RpcError};
use support::{scaled, Server};
use tokio::time::Instant;
use tonic::Code;

fn value() -> Option<BlackboardValue> {
    Some(BlackboardValue {
        kind: Some(blackboard_value::Kind::Payload(Payload::default())),
    })
}

#[test]
fn every_generated_reason_has_a_wire_name_and_back() {
    let reasons: Vec<ErrorReason> = all_reasons().collect();
    assert!(reasons.contains(&ErrorReason::EtagMismatch));
    assert!(reasons.contains(&ErrorReason::SlowConsumer));
    assert!(!reasons.contains(&ErrorReason::Unspecified));
    for reason in reasons {
        let name = reason_name(reason);
        assert!(
            !name.starts_with("ERROR_REASON_") && !name.is_empty(),
            "{name}"
        );
        assert_eq!(reason_from_name(name), Some(reason), "{name}");
    }
    assert_eq!(
        reason_name(ErrorReason::RevisionCompacted),
        "REVISION_COMPACTED"
    );
    assert_eq!(reason_from_name("NO_SUCH_REASON"), None);
    assert_eq!(reason_from_name(""), None);
    assert_eq!(reason_from_name("UNSPECIFIED"), None);
}

#[test]
fn status_without_error_info_has_no_reason() {
    let error = RpcError::from(tonic::Status::unavailable("down"));
    assert_eq!(error.reason(), None);
    assert_eq!(error.reason_name(), "");
    assert!(error.is_transient());
    assert!(!RpcError::from(tonic::Status::aborted("x")).is_transient());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_carry_their_typed_reason() {
    let server = Server::start().await;
    let sk = server.client().await;

    let missing = sk
        .sessions
        .get_session(GetSessionRequest {
            session_id: "no-such-session".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    assert_eq!(missing.reason(), Some(ErrorReason::NotFound));
    assert_eq!(missing.domain(), statekeeper_client::errors::ERROR_DOMAIN);
    assert_eq!(missing.method(), "statekeeper.v1.SessionService/GetSession");

    let cas = sk
        .blackboard
        .put_entry(PutEntryRequest {
            board: "b".into(),
            key: "k".into(),
            value: value(),
            expected_mod_revision: Some(7),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(cas.code(), Code::FailedPrecondition);
    assert!(cas.is(ErrorReason::RevisionMismatch), "{cas}");
    assert_eq!(cas.metadata_i64("current_revision"), Some(0));

    let invalid = sk
        .blackboard
        .put_entry(PutEntryRequest {
            board: String::new(),
            key: "k".into(),
            value: value(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(invalid.code(), Code::InvalidArgument);
    assert_eq!(invalid.reason(), Some(ErrorReason::InvalidField));
    assert_eq!(
        invalid.metadata().get("field").map(String::as_str),
        Some("board")
    );
    assert!(invalid.to_string().contains("[INVALID_FIELD]"), "{invalid}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_reads_and_keyed_mutations_are_retried_while_the_server_is_down() {
    let mut server = Server::start().await;
    let sk = server.client().await;
    let put = PutEntryRequest {
        board: "r".into(),
        key: "k".into(),
        value: value(),
        ..Default::default()
    };
    sk.blackboard
        .put_entry(put.clone())
        .await
        .expect("put while up");

    server.kill();
    // Reads and keyed mutations wait for the server (retried with backoff);
    // it comes back in 2 s.
    let restarter = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        server.restart().await;
        server
    });
    // A mutation without an idempotency key fails at once, although this
    // client's policy (20 attempts, up to 1 s apart) would outlast the restart.
    let error = sk.blackboard.put_entry(put.clone()).await.unwrap_err();
    assert!(error.is_transient(), "{error}");
    let patient = sk.blackboard.with_retry(RetryPolicy {
        max_attempts: 1000,
        max_backoff: Duration::from_millis(300),
        ..Default::default()
    });
    let started = Instant::now();
    let read = patient
        .get_entry(GetEntryRequest {
            board: "r".into(),
            key: "k".into(),
            ..Default::default()
        })
        .await
        .expect("the read is retried until the server is back");
    assert!(read.found);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "the read waited for the restart"
    );
    let _server = restarter.await.unwrap();

    let sent = sk
        .messages
        .with_retry(RetryPolicy {
            max_attempts: 1000,
            max_backoff: Duration::from_millis(300),
            ..Default::default()
        })
        .send_message(SendMessageRequest {
            to_agent: "inbox-r".into(),
            ..Default::default()
        })
        .await
        .expect("send");
    // The client set an idempotency key.
    let pulled = sk
        .messages
        .pull_messages(PullMessagesRequest {
            agent_id: "inbox-r".into(),
            max_messages: 10,
            wait_timeout: Some(prost_types::Duration {
                seconds: 5,
                nanos: 0,
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    let message = pulled.deliveries[0].message.clone().unwrap();
    assert_eq!(message.message_id, sent.message_id);
    assert_eq!(
        message.request_id.len(),
        32,
        "a random request_id: {:?}",
        message.request_id
    );

    // The same key again is deduplicated by the server: a retry is safe.
    let again = sk
        .messages
        .send_message(SendMessageRequest {
            to_agent: "inbox-r".into(),
            request_id: message.request_id.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(again.duplicate);
    assert_eq!(again.message_id, sent.message_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_deadline_bounds_a_call() {
    let server = Server::start().await;
    let sk = server.client().await;
    let started = Instant::now();
    let error = sk
        .messages
        .with_timeout(Duration::from_secs(1))
        .request_reply(RequestReplyRequest {
            from_agent: "asker".into(),
            to_agent: "nobody".into(),
            timeout: Some(prost_types::Duration {
                seconds: 60,
                nanos: 0,
            }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(error.code(), Code::DeadlineExceeded, "{error}");
    assert!(
        started.elapsed() < scaled(30),
        "ended by the 1 s deadline, not the 60 s wait"
    );
    assert!(started.elapsed() >= Duration::from_millis(900));
}
