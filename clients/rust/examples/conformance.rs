//! The statekeeper conformance scenario, Rust edition (see clients/CONFORMANCE.md).
//!
//!     STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev cargo run --example conformance
//!
//! A step whose service answers UNIMPLEMENTED is skipped, unless the service
//! is named in STATEKEEPER_REQUIRE (comma separated, or "all"). Exits 1 if a
//! step failed.

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use prost_types::{value, Struct, Value};
use statekeeper_client::v1::{
    blackboard_value, recall_request, watch_request, watch_response, AckMessagesRequest,
    AppendMessagesRequest, BlackboardEventType, BlackboardValue, Checkpoint, CreateSessionRequest,
    GetCheckpointRequest, GetContextWindowRequest, Payload, PullMessagesRequest, PutEntryRequest,
    RecallRequest, ReceiptStatus, RecordEpisodeRequest, RecordEpisodeStatus, RecordEpisodesRequest,
    Role, SaveCheckpointRequest, SendMessageRequest, Session, SessionMessage, ToolCall,
    WatchRequest,
};
use statekeeper_client::{
    Client, HealthCheckRequest, InboxOptions, RetryPolicy, RpcError, WatchOptions, WatchUpdate,
};
use tonic::Status;

const LANGUAGE: &str = "rust";
const BUDGET: i32 = 4096;
const RESERVE: i32 = 256;
const STATE: &[u8] = br#"{"step":1,"plan":["fetch","summarize"]}"#;

/// A step's failure: an RPC status (maybe UNIMPLEMENTED) or a failed check.
enum Failure {
    Rpc(Box<RpcError>),
    Check(String),
}

impl From<Status> for Failure {
    fn from(s: Status) -> Self {
        Failure::Rpc(Box::new(s.into()))
    }
}

impl From<RpcError> for Failure {
    fn from(e: RpcError) -> Self {
        Failure::Rpc(Box::new(e))
    }
}

fn check(condition: bool, message: impl Into<String>) -> Result<(), Failure> {
    if condition {
        Ok(())
    } else {
        Err(Failure::Check(message.into()))
    }
}

struct Report {
    required: HashSet<String>,
    passed: u32,
    failed: u32,
    skipped: u32,
    start: Instant,
}

impl Report {
    async fn run<F, Fut>(&mut self, step: &str, service: &str, body: F)
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<String, Failure>>,
    {
        let start = Instant::now();
        let outcome = tokio::time::timeout(Duration::from_secs(15), body()).await;
        let ms = start.elapsed().as_millis();
        match outcome {
            Ok(Ok(note)) => {
                self.passed += 1;
                println!("  [PASS] {step} ({ms} ms) {note}");
            }
            Ok(Err(Failure::Rpc(status)))
                if status.is_unimplemented()
                    && !self.required.contains(service)
                    && !self.required.contains("all") =>
            {
                self.skipped += 1;
                println!(
                    "  [SKIP] {step}: {service} service answers UNIMPLEMENTED ({})",
                    status.message()
                );
            }
            Ok(Err(Failure::Rpc(status))) => {
                self.failed += 1;
                println!("  [FAIL] {step} ({ms} ms): {status}");
            }
            Ok(Err(Failure::Check(message))) => {
                self.failed += 1;
                println!("  [FAIL] {step} ({ms} ms): {message}");
            }
            Err(_) => {
                self.failed += 1;
                println!("  [FAIL] {step} ({ms} ms): timed out");
            }
        }
    }

    fn finish(&self) -> ! {
        println!(
            "conformance {LANGUAGE}: {} passed, {} failed, {} skipped ({} ms)",
            self.passed,
            self.failed,
            self.skipped,
            self.start.elapsed().as_millis()
        );
        std::process::exit(if self.failed == 0 { 0 } else { 1 });
    }
}

fn conversation() -> Vec<SessionMessage> {
    vec![
        SessionMessage {
            role: Role::User as i32,
            content: "What is the weather in Paris?".into(),
            ..Default::default()
        },
        SessionMessage {
            role: Role::Assistant as i32,
            tool_calls: vec![ToolCall {
                id: "call-1".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Paris"}"#.into(),
            }],
            ..Default::default()
        },
        SessionMessage {
            role: Role::Tool as i32,
            tool_call_id: "call-1".into(),
            content: r#"{"temp_c":21}"#.into(),
            ..Default::default()
        },
        SessionMessage {
            role: Role::Assistant as i32,
            content: "It is 21 degrees in Paris.".into(),
            ..Default::default()
        },
    ]
}

fn run_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{LANGUAGE}-{:08x}",
        (nanos as u64 ^ std::process::id() as u64) as u32
    )
}

#[tokio::main]
async fn main() {
    let addr = std::env::var("STATEKEEPER_ADDR").unwrap_or_else(|_| "127.0.0.1:50051".into());
    let api_key = std::env::var("STATEKEEPER_API_KEY").unwrap_or_default();
    let required: HashSet<String> = std::env::var("STATEKEEPER_REQUIRE")
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let mut r = Report {
        required,
        passed: 0,
        failed: 0,
        skipped: 0,
        start: Instant::now(),
    };
    let run = run_id();
    let user = format!("conf-user-{run}");
    let agent = format!("conf-agent-{run}");
    let execution = format!("conf-exec-{run}");
    let board = format!("conf-board-{run}");
    let sender = format!("conf-sender-{run}");
    let receiver = format!("conf-receiver-{run}");

    println!("conformance {LANGUAGE} against {addr}");
    let mut client: Option<Client> = None;
    {
        let start = Instant::now();
        let connected = match statekeeper_client::TlsOptions::from_env() {
            Some(tls) => statekeeper_client::connect_with_tls(&addr, &api_key, &tls).await,
            None => statekeeper_client::connect(&format!("http://{addr}"), &api_key).await,
        };
        match connected {
            Ok(c) => {
                client = Some(c);
                r.passed += 1;
                println!(
                    "  [PASS] connect ({} ms) addr={addr}",
                    start.elapsed().as_millis()
                );
            }
            Err(e) => {
                r.failed += 1;
                println!("  [FAIL] connect ({} ms): {e}", start.elapsed().as_millis());
            }
        }
    }
    let Some(sk) = client else { r.finish() };

    r.run("health", "health", || {
        let mut health = sk.health.clone();
        async move {
            let res = health
                .check(HealthCheckRequest {
                    service: String::new(),
                })
                .await?
                .into_inner();
            check(res.status == 1, format!("health status {}", res.status))?;
            Ok("SERVING".to_string())
        }
    })
    .await;

    let mut session_id = String::new();
    {
        let sessions = sk.sessions.clone();
        let (user, agent) = (user.clone(), agent.clone());
        let sid = &mut session_id;
        r.run("create_session", "session", || async move {
            let s = sessions
                .create_session(CreateSessionRequest {
                    session: Some(Session {
                        user_id: user,
                        agent_id: agent,
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .await?
                .session
                .unwrap_or_default();
            check(!s.session_id.is_empty(), "no session_id")?;
            check(s.version == 1, format!("version {}", s.version))?;
            *sid = s.session_id.clone();
            Ok(format!("session_id={}", s.session_id))
        })
        .await;
    }

    r.run("append_messages", "session", || {
        let sessions = sk.sessions.clone();
        let (session_id, run) = (session_id.clone(), run.clone());
        async move {
            check(!session_id.is_empty(), "no session (create_session failed)")?;
            let res = sessions
                .append_messages(AppendMessagesRequest {
                    session_id,
                    messages: conversation(),
                    request_id: format!("append-{run}"),
                    ..Default::default()
                })
                .await?;
            let session = res.session.unwrap_or_default();
            check(
                res.messages.len() == 4,
                format!("{} messages appended", res.messages.len()),
            )?;
            check(
                session.message_count == 4,
                format!("message_count {}", session.message_count),
            )?;
            Ok(format!("version={}", session.version))
        }
    })
    .await;

    r.run("context_window", "session", || {
        let sessions = sk.sessions.clone();
        let session_id = session_id.clone();
        async move {
            check(!session_id.is_empty(), "no session (create_session failed)")?;
            let res = sessions
                .get_context_window(GetContextWindowRequest {
                    session_id,
                    token_budget: BUDGET,
                    reserved_output_tokens: RESERVE,
                    system_prompt: "You are a conformance test agent.".into(),
                    ..Default::default()
                })
                .await?;
            let total = res.accounting.map(|a| a.total_tokens).unwrap_or(-1);
            check(
                (0..=BUDGET - RESERVE).contains(&total),
                format!("total_tokens {total} > budget {BUDGET} - reserve {RESERVE}"),
            )?;
            check(
                res.messages.len() == 4,
                format!("{} messages in window", res.messages.len()),
            )?;
            Ok(format!(
                "total_tokens={total} messages={}",
                res.messages.len()
            ))
        }
    })
    .await;

    r.run("episode_record_recall", "memory", || {
        let memory = sk.memory.clone();
        let (user, session_id) = (user.clone(), session_id.clone());
        async move {
            let teal = RecordEpisodeRequest {
                user_id: user.clone(),
                session_id,
                user_message: "My favourite colour is teal.".into(),
                assistant_response: "Noted: your favourite colour is teal.".into(),
                importance: Some(0.9),
                ..Default::default()
            };
            // One RecordEpisodes call: the episode, then the same interaction again.
            let rec = memory
                .record_episodes(RecordEpisodesRequest {
                    episodes: vec![teal.clone(), teal],
                })
                .await?;
            let n = rec.results.len();
            check(n == 2, format!("{n} results for 2 episodes"))?;
            let (first, second) = (&rec.results[0], &rec.results[1]);
            check(
                first.status() == RecordEpisodeStatus::Created,
                format!("first item: status {:?}", first.status()),
            )?;
            let id = first
                .result
                .as_ref()
                .and_then(|r| r.episode.as_ref())
                .map(|e| e.id.clone())
                .unwrap_or_default();
            check(!id.is_empty(), "no episode id")?;
            let duplicate_of = second.result.as_ref().map(|r| r.duplicate_of.clone());
            check(
                second.status() == RecordEpisodeStatus::Duplicate
                    && duplicate_of.as_deref() == Some(id.as_str()),
                format!(
                    "second item: status {:?}, duplicate_of {duplicate_of:?}",
                    second.status()
                ),
            )?;
            let got = memory
                .recall(RecallRequest {
                    user_id: user,
                    query: Some(recall_request::Query::QueryText("favourite colour".into())),
                    top_k: 5,
                    ..Default::default()
                })
                .await?;
            check(
                got.results
                    .iter()
                    .any(|r| r.episode.as_ref().map(|e| e.id == id).unwrap_or(false)),
                format!("episode {id} not recalled"),
            )?;
            Ok(format!("episode_id={id}"))
        }
    })
    .await;

    r.run("checkpoint_save_get", "checkpoint", || {
        let checkpoints = sk.checkpoints.clone();
        let execution = execution.clone();
        async move {
            let saved = checkpoints
                .save_checkpoint(SaveCheckpointRequest {
                    checkpoint: Some(Checkpoint {
                        execution_id: execution.clone(),
                        step: 1,
                        step_name: "plan".into(),
                        state: Some(Payload {
                            content_type: "application/json".into(),
                            schema_version: 1,
                            data: STATE.to_vec(),
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .await?;
            check(!saved.checkpoint_id.is_empty(), "no checkpoint_id")?;
            let got = checkpoints
                .get_checkpoint(GetCheckpointRequest {
                    execution_id: execution,
                    ..Default::default()
                })
                .await?
                .checkpoint
                .unwrap_or_default();
            check(
                got.checkpoint_id == saved.checkpoint_id,
                format!("latest is {}", got.checkpoint_id),
            )?;
            check(
                got.state.map(|s| s.data).unwrap_or_default() == STATE,
                "state differs",
            )?;
            Ok(format!("checkpoint_id={}", saved.checkpoint_id))
        }
    })
    .await;

    r.run("blackboard_watch", "blackboard", || {
        let blackboard = sk.blackboard.clone();
        let (board, agent) = (board.clone(), agent.clone());
        async move {
            let mut stream = blackboard
                .watch(WatchRequest {
                    board: board.clone(),
                    selector: Some(watch_request::Selector::Prefix("plan/".into())),
                    ..Default::default()
                })
                .await?;
            let first = stream.message().await?;
            check(
                matches!(
                    first.and_then(|f| f.kind),
                    Some(watch_response::Kind::Started(_))
                ),
                "first response is not `started`",
            )?;
            let mut fields = BTreeMap::new();
            fields.insert(
                "status".to_string(),
                Value {
                    kind: Some(value::Kind::StringValue("done".into())),
                },
            );
            let put = blackboard
                .put_entry(PutEntryRequest {
                    board,
                    key: "plan/step-3".into(),
                    writer_agent_id: agent,
                    value: Some(BlackboardValue {
                        kind: Some(blackboard_value::Kind::Json(Struct { fields })),
                    }),
                    ..Default::default()
                })
                .await?;
            let revision = put.header.map(|h| h.revision).unwrap_or(-1);
            while let Some(res) = stream.message().await? {
                let resume = res.resume_revision;
                if let Some(watch_response::Kind::Events(events)) = res.kind {
                    for ev in events.events {
                        if ev.entry.as_ref().map(|e| e.key.as_str()) != Some("plan/step-3") {
                            continue;
                        }
                        check(
                            ev.r#type == BlackboardEventType::Put as i32,
                            format!("event type {}", ev.r#type),
                        )?;
                        check(
                            ev.revision == revision,
                            format!("event revision {} != put {revision}", ev.revision),
                        )?;
                        return Ok(format!("revision={revision} resume_revision={resume}"));
                    }
                }
            }
            Err(Failure::Check("watch ended without the event".into()))
        }
    })
    .await;

    r.run("message_send_receive", "message", || {
        let messages = sk.messages.clone();
        let (sender, receiver) = (sender.clone(), receiver.clone());
        async move {
            let sent = messages
                .send_message(SendMessageRequest {
                    from_agent: sender,
                    to_agent: receiver.clone(),
                    r#type: "conformance.ping".into(),
                    payload: Some(Payload {
                        content_type: "text/plain".into(),
                        schema_version: 0,
                        data: b"ping".to_vec(),
                    }),
                    ..Default::default()
                })
                .await?;
            check(!sent.message_id.is_empty(), "no message_id")?;
            let pulled = messages
                .pull_messages(PullMessagesRequest {
                    agent_id: receiver,
                    max_messages: 1,
                    wait_timeout: Some(prost_types::Duration {
                        seconds: 5,
                        nanos: 0,
                    }),
                    ..Default::default()
                })
                .await?;
            check(
                pulled.deliveries.len() == 1,
                format!("{} deliveries", pulled.deliveries.len()),
            )?;
            let delivery = &pulled.deliveries[0];
            let message = delivery.message.clone().unwrap_or_default();
            check(
                message.message_id == sent.message_id,
                "another message delivered",
            )?;
            check(
                message.payload.map(|p| p.data).unwrap_or_default() == b"ping",
                "payload differs",
            )?;
            let acked = messages
                .ack_messages(AckMessagesRequest {
                    receipt_handles: vec![delivery.receipt_handle.clone()],
                })
                .await?;
            check(
                acked.results.len() == 1 && acked.results[0].status == ReceiptStatus::Ok as i32,
                "ack failed",
            )?;
            Ok(format!("message_id={}", sent.message_id))
        }
    })
    .await;

    r.run("watch_resume", "blackboard", || {
        let sk = sk.clone();
        let (board, agent) = (format!("{board}-resume"), agent.clone());
        async move {
            let task = |key: &str| {
                let mut fields = BTreeMap::new();
                fields.insert(
                    "task".to_string(),
                    Value {
                        kind: Some(value::Kind::StringValue(key.into())),
                    },
                );
                PutEntryRequest {
                    board: board.clone(),
                    key: key.into(),
                    writer_agent_id: agent.clone(),
                    value: Some(BlackboardValue {
                        kind: Some(blackboard_value::Kind::Json(Struct { fields })),
                    }),
                    ..Default::default()
                }
            };
            let mut first = sk.watch(WatchOptions::new(board.clone()).prefix("task/"));
            let started = first.next().await?;
            check(
                matches!(started, WatchUpdate::Started { .. }),
                format!("first update {started:?}"),
            )?;
            let mut puts = Vec::new();
            for key in ["task/1", "task/2"] {
                puts.push(
                    sk.blackboard
                        .put_entry(task(key))
                        .await?
                        .header
                        .unwrap_or_default()
                        .revision,
                );
            }
            let mut seen = Vec::new();
            while seen.len() < 2 {
                if let WatchUpdate::Events { events, .. } = first.next().await? {
                    seen.extend(events.iter().map(|e| e.revision));
                }
            }
            check(seen == puts, format!("events {seen:?}, puts {puts:?}"))?;
            let resume_at = first.resume_revision();
            check(
                resume_at > seen[1],
                format!("resume_revision {resume_at} <= {}", seen[1]),
            )?;
            drop(first);
            // Written while no watch is open; the resumed watch must start with it.
            let third = sk
                .blackboard
                .put_entry(task("task/3"))
                .await?
                .header
                .unwrap_or_default()
                .revision;
            let mut again = sk.watch(
                WatchOptions::new(board.clone())
                    .prefix("task/")
                    .start_revision(resume_at),
            );
            loop {
                if let WatchUpdate::Events { events, .. } = again.next().await? {
                    let event = &events[0];
                    let key = event
                        .entry
                        .as_ref()
                        .map(|e| e.key.clone())
                        .unwrap_or_default();
                    check(
                        (key.as_str(), event.revision) == ("task/3", third),
                        format!("resumed at {key}@{}, want task/3@{third}", event.revision),
                    )?;
                    return Ok(format!("resume_revision={resume_at} next={third}"));
                }
            }
        }
    })
    .await;

    r.run("inbox_consumer", "message", || {
        let sk = sk.clone();
        let (sender, inbox) = (sender.clone(), format!("{receiver}-inbox"));
        async move {
            let jobs: [&[u8]; 3] = [b"job-0", b"job-1", b"job-2"];
            let mut sent = Vec::new();
            for job in jobs {
                let request = SendMessageRequest {
                    from_agent: sender.clone(),
                    to_agent: inbox.clone(),
                    r#type: "conformance.job".into(),
                    payload: Some(Payload {
                        content_type: "text/plain".into(),
                        schema_version: 0,
                        data: job.to_vec(),
                    }),
                    ..Default::default()
                };
                sent.push(sk.messages.send_message(request).await?.message_id);
            }
            let handled = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let all_done = std::sync::Arc::new(tokio::sync::Notify::new());
            // The first delivery of job-1 fails: the consumer nacks it and
            // handles its redelivery.
            let quick = RetryPolicy {
                max_attempts: u32::MAX,
                initial_backoff: Duration::from_millis(50),
                max_backoff: Duration::from_millis(50),
                multiplier: 1.0,
                jitter: 0.0,
            };
            let consumer = sk.inbox(
                InboxOptions::new(inbox)
                    .visibility_timeout(Duration::from_secs(10))
                    .redelivery(quick),
            );
            let stats = consumer
                .run_until(
                    |delivery| {
                        let (handled, all_done) = (handled.clone(), all_done.clone());
                        async move {
                            let data = delivery
                                .message
                                .and_then(|m| m.payload)
                                .unwrap_or_default()
                                .data;
                            let mut handled = handled.lock().unwrap();
                            handled.push((data.clone(), delivery.delivery_count));
                            if handled.len() >= 4 {
                                all_done.notify_one();
                            }
                            if data == b"job-1" && delivery.delivery_count == 1 {
                                return Err("job-1 fails on its first delivery");
                            }
                            Ok(())
                        }
                    },
                    all_done.notified(),
                )
                .await?;
            let handled = handled.lock().unwrap().clone();
            let mut jobs_seen: Vec<Vec<u8>> = handled.iter().map(|(j, _)| j.clone()).collect();
            jobs_seen.sort();
            jobs_seen.dedup();
            check(
                jobs_seen == jobs.map(|j| j.to_vec()),
                format!("handled {handled:?}"),
            )?;
            check(
                handled.contains(&(b"job-1".to_vec(), 2)),
                format!("job-1 not redelivered: {handled:?}"),
            )?;
            check(stats.acked == 3 && stats.nacked == 1, format!("{stats:?}"))?;
            Ok(format!(
                "messages={} handled={} acked={} nacked={}",
                sent.len(),
                stats.handled,
                stats.acked,
                stats.nacked
            ))
        }
    })
    .await;

    r.finish();
}
