//! A tiny example agent: it keeps its conversation in a statekeeper session,
//! asks for a context window that fits its model, answers (a canned echo
//! instead of a model call) and announces progress on the team blackboard.
//!
//!     STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev cargo run --example agent

use std::collections::BTreeMap;

use prost_types::{value, Struct, Value};
use statekeeper_client::connect;
use statekeeper_client::v1::{
    blackboard_value, AppendMessagesRequest, BlackboardValue, CreateSessionRequest,
    GetContextWindowRequest, PutEntryRequest, Role, Session, SessionMessage,
};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::var("STATEKEEPER_ADDR").unwrap_or_else(|_| "127.0.0.1:50051".into());
    let api_key = std::env::var("STATEKEEPER_API_KEY").unwrap_or_default();
    let sk = connect(&format!("http://{addr}"), &api_key).await?;

    let session = sk
        .sessions
        .create_session(CreateSessionRequest {
            session: Some(Session {
                user_id: "alice".into(),
                agent_id: "example-agent-rust".into(),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await?
        .session
        .unwrap_or_default();
    let say = |role: Role, content: String| AppendMessagesRequest {
        session_id: session.session_id.clone(),
        messages: vec![SessionMessage {
            role: role as i32,
            content,
            ..Default::default()
        }],
        ..Default::default()
    };

    for question in ["Hello!", "What can you remember?"] {
        sk.sessions
            .append_messages(say(Role::User, question.into()))
            .await?;
        let window = sk
            .sessions
            .get_context_window(GetContextWindowRequest {
                session_id: session.session_id.clone(),
                token_budget: 8192,
                reserved_output_tokens: 1024,
                system_prompt: "You are a helpful agent.".into(),
                ..Default::default()
            })
            .await?;
        // A real agent sends window.messages to its model here.
        let answer = format!(
            "(echo) {question} [{} messages, {} tokens in context]",
            window.messages.len(),
            window
                .accounting
                .map(|a| a.total_tokens)
                .unwrap_or_default()
        );
        sk.sessions
            .append_messages(say(Role::Assistant, answer.clone()))
            .await?;
        println!("agent: {answer}");
    }

    let mut fields = BTreeMap::new();
    fields.insert(
        "session".to_string(),
        Value {
            kind: Some(value::Kind::StringValue(session.session_id.clone())),
        },
    );
    fields.insert(
        "state".to_string(),
        Value {
            kind: Some(value::Kind::StringValue("done".into())),
        },
    );
    let put = sk
        .blackboard
        .put_entry(PutEntryRequest {
            board: "team".into(),
            key: "agents/example-agent-rust".into(),
            writer_agent_id: "example-agent-rust".into(),
            value: Some(BlackboardValue {
                kind: Some(blackboard_value::Kind::Json(Struct { fields })),
            }),
            ..Default::default()
        })
        .await;
    match put {
        Ok(_) => println!("announced on the blackboard"),
        Err(error) if error.is_unimplemented() => {
            println!(
                "blackboard not available on this server yet: {}",
                error.message()
            )
        }
        Err(error) => return Err(error.into()),
    }
    Ok(())
}
