//! Rust client for the statekeeper gRPC server.
//!
//! [`v1`] holds the generated `statekeeper.v1` messages (prost) and clients
//! (tonic); [`connect`] opens one channel that carries the caller's API key on
//! every call and returns a client per service:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use statekeeper_client::v1::{CreateSessionRequest, Session};
//! let mut sk = statekeeper_client::connect("http://127.0.0.1:50051", "sk-dev").await?;
//! let created = sk
//!     .sessions
//!     .create_session(CreateSessionRequest {
//!         session: Some(Session { user_id: "u1".into(), ..Default::default() }),
//!         ..Default::default()
//!     })
//!     .await?
//!     .into_inner();
//! # Ok(()) }
//! ```

#[allow(clippy::all, missing_docs, rustdoc::all)]
pub mod v1 {
    //! Generated code (do not edit; see scripts/generate-clients.sh).
    include!("gen/statekeeper/v1/statekeeper.v1.rs");
    include!("gen/statekeeper/v1/statekeeper.v1.tonic.rs");
}

use std::time::Duration;

use tonic::metadata::{AsciiMetadataValue, MetadataKey};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request, Status};
pub use tonic_health::pb::health_client::HealthClient;
pub use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use v1::admin_service_client::AdminServiceClient;
use v1::blackboard_service_client::BlackboardServiceClient;
use v1::checkpoint_service_client::CheckpointServiceClient;
use v1::memory_service_client::MemoryServiceClient;
use v1::message_service_client::MessageServiceClient;
use v1::session_service_client::SessionServiceClient;

/// Adds the caller's credentials (`x-api-key` or `authorization`) to every call.
#[derive(Clone, Debug)]
pub struct Auth {
    key: Option<(MetadataKey<tonic::metadata::Ascii>, AsciiMetadataValue)>,
}

impl Auth {
    /// Sends `key` in the `x-api-key` metadata entry.
    pub fn api_key(key: &str) -> Result<Self, Error> {
        if key.is_empty() {
            return Ok(Self { key: None });
        }
        let value = key.parse().map_err(|_| Error::InvalidKey)?;
        Ok(Self { key: Some((MetadataKey::from_static("x-api-key"), value)) })
    }

    /// Sends `authorization: Bearer <token>`.
    pub fn bearer(token: &str) -> Result<Self, Error> {
        let value = format!("Bearer {token}").parse().map_err(|_| Error::InvalidKey)?;
        Ok(Self { key: Some((MetadataKey::from_static("authorization"), value)) })
    }
}

impl tonic::service::Interceptor for Auth {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some((key, value)) = &self.key {
            request.metadata_mut().insert(key.clone(), value.clone());
        }
        Ok(request)
    }
}

/// A channel with the credentials interceptor.
pub type AuthedChannel = InterceptedService<Channel, Auth>;

/// A client per service, sharing one connection.
#[derive(Clone, Debug)]
pub struct Client {
    pub sessions: SessionServiceClient<AuthedChannel>,
    pub memory: MemoryServiceClient<AuthedChannel>,
    pub checkpoints: CheckpointServiceClient<AuthedChannel>,
    pub blackboard: BlackboardServiceClient<AuthedChannel>,
    pub messages: MessageServiceClient<AuthedChannel>,
    pub admin: AdminServiceClient<AuthedChannel>,
    pub health: HealthClient<AuthedChannel>,
}

/// Why [`connect`] failed.
#[derive(Debug)]
pub enum Error {
    /// The key or token is not valid ASCII metadata.
    InvalidKey,
    /// The endpoint is malformed or cannot be reached.
    Transport(tonic::transport::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::InvalidKey => write!(f, "the API key is not valid ASCII metadata"),
            Error::Transport(e) => write!(f, "transport: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<tonic::transport::Error> for Error {
    fn from(e: tonic::transport::Error) -> Self {
        Error::Transport(e)
    }
}

impl Client {
    /// Builds the clients on an existing channel.
    pub fn new(channel: Channel, auth: Auth) -> Self {
        Self {
            sessions: SessionServiceClient::with_interceptor(channel.clone(), auth.clone()),
            memory: MemoryServiceClient::with_interceptor(channel.clone(), auth.clone()),
            checkpoints: CheckpointServiceClient::with_interceptor(channel.clone(), auth.clone()),
            blackboard: BlackboardServiceClient::with_interceptor(channel.clone(), auth.clone()),
            messages: MessageServiceClient::with_interceptor(channel.clone(), auth.clone()),
            admin: AdminServiceClient::with_interceptor(channel.clone(), auth.clone()),
            health: HealthClient::with_interceptor(channel, auth),
        }
    }
}

/// Connects to `endpoint` (e.g. "http://127.0.0.1:50051") with an API key,
/// a 10 s connect timeout and a 30 s default deadline per call.
pub async fn connect(endpoint: &str, api_key: &str) -> Result<Client, Error> {
    let channel = Endpoint::from_shared(endpoint.to_string())?
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .connect()
        .await?;
    Ok(Client::new(channel, Auth::api_key(api_key)?))
}

/// True if the call failed with UNIMPLEMENTED: the capability is part of the
/// contract but not built into this server (ErrorInfo reason NOT_IMPLEMENTED).
pub fn is_unimplemented(status: &Status) -> bool {
    status.code() == Code::Unimplemented
}

/// Retries `call` while it fails with UNAVAILABLE, with exponential backoff
/// (100 ms doubling to 5 s, at most `max_attempts` attempts). Nothing else is
/// retried. Calls with side effects should carry a request id or
/// idempotency key (AppendMessages.request_id, SendMessage.idempotency_key).
pub async fn retry_unavailable<T, F, Fut>(max_attempts: u32, mut call: F) -> Result<T, Status>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Status>>,
{
    let mut backoff = Duration::from_millis(100);
    let mut attempt = 1;
    loop {
        match call().await {
            Err(status) if status.code() == Code::Unavailable && attempt < max_attempts => {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
                attempt += 1;
            }
            other => return other,
        }
    }
}
