//! TLS, mTLS and credentials against a real server started with
//! `--tls-cert/--tls-key/--tls-client-ca` and an API key, with a CA, server
//! and client certificates generated for the test.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair,
};
use statekeeper_client::v1::{CreateSessionRequest, Session};
use statekeeper_client::{ErrorReason, RetryPolicy, TlsOptions};
use support::Server;

const API_KEY: &str = "sk-tls-test";

struct Pki {
    ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
}

fn write(dir: &Path, name: &str, pem: String) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, pem).expect("write pem");
    path
}

/// A CA, a server certificate for "localhost" and 127.0.0.1, and a client
/// certificate, as PEM files in `dir`.
fn make_pki(dir: &Path) -> Pki {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "rust test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();

    let server_key = KeyPair::generate().unwrap();
    let mut server =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    server
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_cert = server.signed_by(&server_key, &ca).unwrap();

    let client_key = KeyPair::generate().unwrap();
    let mut client = CertificateParams::new(Vec::<String>::new()).unwrap();
    client
        .distinguished_name
        .push(DnType::CommonName, "rust-agent");
    client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let client_cert = client.signed_by(&client_key, &ca).unwrap();

    Pki {
        ca: write(dir, "ca.pem", ca.pem()),
        server_cert: write(dir, "server.pem", server_cert.pem()),
        server_key: write(dir, "server.key", server_key.serialize_pem()),
        client_cert: write(dir, "client.pem", client_cert.pem()),
        client_key: write(dir, "client.key", client_key.serialize_pem()),
    }
}

fn session() -> CreateSessionRequest {
    CreateSessionRequest {
        session: Some(Session {
            user_id: "tls-user".into(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mtls_with_an_api_key_and_what_is_refused() {
    let dir = Server::directory();
    let pki = make_pki(&dir);
    let mtls = TlsOptions {
        root_ca: Some(pki.ca.clone()),
        client_cert: Some(pki.client_cert.clone()),
        client_key: Some(pki.client_key.clone()),
        server_name: Some("localhost".into()),
    };
    let args = vec![
        "--tls-cert".to_string(),
        pki.server_cert.display().to_string(),
        "--tls-key".to_string(),
        pki.server_key.display().to_string(),
        "--tls-client-ca".to_string(),
        pki.ca.display().to_string(),
        "--api-key".to_string(),
        format!("{API_KEY}=tenant-a"),
    ];
    let server = Server::start_in(dir, args, Some(mtls.clone()), API_KEY).await;

    // Certificate and API key: served.
    let sk = server.client().await;
    let created = sk
        .sessions
        .create_session(session())
        .await
        .expect("mTLS call");
    assert!(!created.session.unwrap_or_default().session_id.is_empty());

    // The same key as a bearer token.
    let bearer = server
        .builder()
        .bearer_token(API_KEY)
        .connect()
        .await
        .expect("connect");
    bearer
        .sessions
        .create_session(session())
        .await
        .expect("bearer call");

    // No key: UNAUTHENTICATED, with its typed reason.
    let anonymous = server
        .builder()
        .api_key("")
        .connect()
        .await
        .expect("connect");
    let error = anonymous
        .sessions
        .create_session(session())
        .await
        .unwrap_err();
    assert_eq!(error.code(), tonic::Code::Unauthenticated, "{error}");
    assert_eq!(error.reason(), Some(ErrorReason::Unauthenticated));

    // No client certificate: the handshake is refused.
    let no_cert = TlsOptions {
        client_cert: None,
        client_key: None,
        ..mtls.clone()
    };
    let refused = async {
        let client = statekeeper_client::Client::builder(server.address())
            .api_key(API_KEY)
            .tls(no_cert)
            .retry(RetryPolicy::NONE)
            .timeout(Duration::from_secs(20))
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        client
            .sessions
            .create_session(session())
            .await
            .map_err(|e| e.to_string())
    };
    assert!(
        refused.await.is_err(),
        "a client without a certificate got in"
    );

    // Plaintext to the TLS port: refused.
    let plaintext = async {
        let client = statekeeper_client::Client::builder(format!("http://{}", server.address()))
            .api_key(API_KEY)
            .retry(RetryPolicy::NONE)
            .timeout(Duration::from_secs(20))
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        client
            .sessions
            .create_session(session())
            .await
            .map_err(|e| e.to_string())
    };
    assert!(plaintext.await.is_err(), "a plaintext call got in");

    // A CA that did not sign the server's certificate: refused.
    let other_dir = Server::directory();
    let other = make_pki(&other_dir);
    let wrong_ca = TlsOptions {
        root_ca: Some(other.ca),
        ..mtls
    };
    let untrusted = async {
        let client = statekeeper_client::Client::builder(server.address())
            .tls(wrong_ca)
            .api_key(API_KEY)
            .retry(RetryPolicy::NONE)
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        client
            .sessions
            .create_session(session())
            .await
            .map_err(|e| e.to_string())
    };
    assert!(
        untrusted.await.is_err(),
        "a server certificate from another CA was trusted"
    );
    let _ = std::fs::remove_dir_all(other_dir);
}

#[test]
fn tls_options_need_the_certificate_and_key_together() {
    let options = TlsOptions {
        client_cert: Some("a.pem".into()),
        ..Default::default()
    };
    assert!(options.config().is_err());
    let missing = TlsOptions {
        root_ca: Some("/nonexistent/ca.pem".into()),
        ..Default::default()
    };
    let error = missing.config().unwrap_err().to_string();
    assert!(error.contains("/nonexistent/ca.pem"), "{error}");
}
