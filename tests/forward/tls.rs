//! TLS to the upstream: a working chain through `proxy.tls_ca_file`, and
//! each usual mistake answered (502, counted as `tls`) in words that name
//! what is wrong and the key that fixes it, not rustls's debug text.

use std::net::SocketAddr;
use std::sync::Arc;

use http::{Response, StatusCode};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;

use crate::support::*;

/// A CA, and a server certificate for `names` signed by it.
pub(crate) struct Chain {
    pub(crate) ca_pem: String,
    pub(crate) leaf: CertificateDer<'static>,
    pub(crate) leaf_key: PrivateKeyDer<'static>,
}

fn ca() -> (rcgen::Certificate, KeyPair) {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().expect("key");
    (params.self_signed(&key).expect("ca"), key)
}

pub(crate) fn chain(names: &[&str]) -> Chain {
    let (ca, ca_key) = ca();
    let key = KeyPair::generate().expect("key");
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let leaf = CertificateParams::new(names)
        .expect("params")
        .signed_by(&key, &ca, &ca_key)
        .expect("leaf");
    Chain {
        ca_pem: ca.pem(),
        leaf: leaf.der().clone(),
        leaf_key: PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
    }
}

/// An HTTPS upstream presenting `cert` (answering "ok").
pub(crate) async fn tls_upstream(
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
) -> SocketAddr {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                let service = hyper::service::service_fn(|_req| async {
                    Ok::<_, std::convert::Infallible>(Response::new(full("ok")))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    addr
}

/// Starts the proxy in front of `https://{up}` trusting `ca_pem` (if any);
/// the answer to one GET.
async fn through(up: SocketAddr, ca_pem: Option<&str>) -> (StatusCode, String, String) {
    let dir = tempfile::tempdir().expect("dir");
    let mut c = config(up);
    c.upstream = Some(format!("https://{up}").parse().expect("url"));
    if let Some(pem) = ca_pem {
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, pem).expect("write ca");
        c.proxy.tls_ca_file = Some(path);
    }
    let tap = proxy(c).await;
    let (head, body) = get(tap.listen_addr(), "/").await;
    let m = scrape(&tap).await;
    (head.status, String::from_utf8_lossy(&body).into_owned(), m)
}

fn counted_as_tls(m: &str) {
    assert_eq!(
        total(m, "a2a_upstream_errors_total", &[("reason", "tls")]),
        Some(1.0),
        "{m}"
    );
}

#[tokio::test]
async fn a_chain_trusted_through_the_ca_file_is_forwarded() {
    let c = chain(&["127.0.0.1"]);
    let up = tls_upstream(c.leaf, c.leaf_key).await;
    let (status, body, _) = through(up, Some(&c.ca_pem)).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "ok"));
}

#[tokio::test]
async fn an_untrusted_ca_names_the_ca_file_key() {
    let c = chain(&["127.0.0.1"]);
    let up = tls_upstream(c.leaf, c.leaf_key).await;
    let (status, body, m) = through(up, None).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(body.contains("CA this proxy does not trust"), "{body}");
    assert!(body.contains("proxy.tls_ca_file"), "{body}");
    assert!(!body.contains("UnknownIssuer"), "no debug text: {body}");
    counted_as_tls(&m);
}

#[tokio::test]
async fn a_ca_certificate_served_as_the_server_certificate_is_explained() {
    let (ca, ca_key) = ca();
    let up = tls_upstream(
        ca.der().clone(),
        PrivatePkcs8KeyDer::from(ca_key.serialize_der()).into(),
    )
    .await;
    let (status, body, m) = through(up, Some(&ca.pem())).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(
        body.contains("presents a CA certificate as its own"),
        "{body}"
    );
    assert!(!body.contains("CaUsedAsEndEntity"), "no debug text: {body}");
    counted_as_tls(&m);
}

#[tokio::test]
async fn a_certificate_for_another_name_says_so() {
    let c = chain(&["agent.example"]);
    let up = tls_upstream(c.leaf, c.leaf_key).await;
    let (status, body, m) = through(up, Some(&c.ca_pem)).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(
        body.contains("not issued for the host name in `upstream`"),
        "{body}"
    );
    counted_as_tls(&m);
}

#[tokio::test]
async fn https_to_a_plain_port_and_http_to_a_tls_port_say_which() {
    let plain = upstream(|_req| async move { Response::new(full("plain")) }).await;
    let (status, body, m) = through(plain, None).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    assert!(
        body.contains("did not answer in TLS") && body.contains("http://"),
        "{body}"
    );
    counted_as_tls(&m);

    let c = chain(&["127.0.0.1"]);
    let tls = tls_upstream(c.leaf, c.leaf_key).await;
    let tap = proxy(config(tls)).await;
    let (head, body) = get(tap.listen_addr(), "/").await;
    let body = String::from_utf8_lossy(&body);
    assert_eq!(head.status, StatusCode::BAD_GATEWAY);
    assert!(body.contains("needs https://"), "{body}");
}
