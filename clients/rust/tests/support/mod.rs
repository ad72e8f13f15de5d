//! A real `statekeeper serve` process for the tests: started on a free
//! loopback port with its own data directory, killed (SIGKILL) and restarted
//! on the same port and directory, and always killed and cleaned up on drop,
//! even when a test fails.

#![allow(dead_code)]

use std::fs::File;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use statekeeper_client::{Client, ClientBuilder, RetryPolicy, TlsOptions};

/// Seconds a server may take to get ready: generous, since the machine may be
/// busy (scaled by STATEKEEPER_TEST_TIMEOUT_SCALE if set).
pub fn scaled(seconds: u64) -> Duration {
    let scale: f64 = std::env::var("STATEKEEPER_TEST_TIMEOUT_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    Duration::from_secs_f64(seconds as f64 * scale.max(1.0))
}

fn executable() -> PathBuf {
    match std::env::var_os("STATEKEEPER_BIN") {
        Some(bin) if !bin.is_empty() => PathBuf::from(bin),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/statekeeper"),
    }
}

/// A suffix that differs between test runs (tenants of a shared store).
fn fastrand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default()
}

/// The flags that put a server on the production tier, from the environment
/// `scripts/services.sh start DIR` writes (DIR/env): PostgreSQL and Redis.
/// Empty (the embedded store) when they are not set.
pub fn tier_args() -> Vec<String> {
    let dsn = std::env::var("STATEKEEPER_TEST_POSTGRES_DSN").unwrap_or_default();
    let redis = std::env::var("STATEKEEPER_TEST_REDIS_URL").unwrap_or_default();
    if dsn.is_empty() || redis.is_empty() {
        return Vec::new();
    }
    vec![
        "--postgres-dsn".into(),
        dsn,
        "--redis-url".into(),
        redis,
        "--migrate-on-start".into(),
        "true".into(),
    ]
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

pub struct Server {
    pub port: u16,
    dir: PathBuf,
    child: Option<Child>,
    starts: u32,
    /// Extra `serve` flags (TLS, API keys).
    args: Vec<String>,
    /// How clients reach it: TLS options and API key.
    tls: Option<TlsOptions>,
    api_key: String,
}

impl Server {
    /// Starts a server on a free port (another port if one is taken
    /// meanwhile), with an API key of its own that maps to a tenant of its
    /// own (so that servers sharing a production store do not see each
    /// other's data).
    pub async fn start() -> Server {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let key = format!("sk-rust-{}-{n}", std::process::id());
        let tenant = format!("rust-test-{}-{n}-{}", std::process::id(), fastrand_suffix());
        Self::start_with(
            vec!["--api-key".into(), format!("{key}={tenant}")],
            None,
            &key,
        )
        .await
    }

    /// A directory of its own for a server (removed when the server is dropped).
    pub fn directory() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "sk-rust-test-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(dir.join("data")).expect("test directory");
        dir
    }

    /// Starts a server with extra `serve` flags, reached with `tls` and `api_key`.
    pub async fn start_with(args: Vec<String>, tls: Option<TlsOptions>, api_key: &str) -> Server {
        Self::start_in(Self::directory(), args, tls, api_key).await
    }

    /// As `start_with`, in `dir` (from `directory()`).
    pub async fn start_in(
        dir: PathBuf,
        args: Vec<String>,
        tls: Option<TlsOptions>,
        api_key: &str,
    ) -> Server {
        let mut server = Server {
            port: 0,
            dir,
            child: None,
            starts: 0,
            args,
            tls,
            api_key: api_key.to_string(),
        };
        for attempt in 0..5 {
            server.port = free_port();
            match server.spawn_and_wait().await {
                Ok(()) => return server,
                Err(e) if attempt < 4 && e.contains("address") => continue,
                Err(e) => panic!("{e}"),
            }
        }
        unreachable!()
    }

    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// A client with the default policy (channel connected lazily, so that it
    /// outlives restarts).
    pub async fn client(&self) -> Client {
        self.builder()
            .lazy(true)
            .retry(RetryPolicy {
                max_attempts: 20,
                max_backoff: Duration::from_secs(1),
                ..Default::default()
            })
            .timeout(scaled(60))
            .connect()
            .await
            .expect("client")
    }

    /// A builder for this server's address, TLS options and API key.
    pub fn builder(&self) -> ClientBuilder {
        let builder = Client::builder(format!("http://{}", self.address())).api_key(&self.api_key);
        match &self.tls {
            Some(tls) => builder.tls(tls.clone()),
            None => builder,
        }
    }

    pub fn dir(&self) -> &PathBuf {
        &self.dir
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join(format!("server-{}.log", self.starts))
    }

    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    }

    /// Spawns the process; ready when health answers SERVING.
    async fn spawn_and_wait(&mut self) -> Result<(), String> {
        self.starts += 1;
        let log = File::create(self.log_path()).map_err(|e| e.to_string())?;
        let child = Command::new(executable())
            .args(["serve", "--listen", &self.address(), "--data-dir"])
            .arg(self.dir.join("data"))
            .args(["--log-format", "text", "--shutdown-grace-seconds", "1"])
            .args(&self.args)
            .args(tier_args())
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", executable().display()))?;
        self.child = Some(child);
        let client = self
            .builder()
            .lazy(true)
            .retry(RetryPolicy::NONE)
            .timeout(Duration::from_secs(2))
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        let deadline = tokio::time::Instant::now() + scaled(120);
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    self.child = None;
                    let tail = self.log_tail();
                    let taken = ["address already in use", "cannot listen", "failed to bind"]
                        .iter()
                        .any(|m| tail.to_lowercase().contains(m));
                    return Err(format!(
                        "server exited ({status}){}:\n{tail}",
                        if taken { " (address taken)" } else { "" }
                    ));
                }
            }
            if let Ok(statekeeper_client::ServingStatus::Serving) = client.health_status().await {
                return Ok(());
            }
            if tokio::time::Instant::now() > deadline {
                self.kill();
                return Err(format!("server not ready in time:\n{}", self.log_tail()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGKILL, and wait for the process to be gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the server and starts it again on the same port and data dir.
    pub async fn restart(&mut self) {
        self.kill();
        // The port is free again once the process is gone; a few tries in
        // case the kernel is slow to release it.
        let mut last = String::new();
        for _ in 0..5 {
            match self.spawn_and_wait().await {
                Ok(()) => return,
                Err(e) => last = e,
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        panic!("restart failed: {last}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
