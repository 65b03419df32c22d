//! The one harness of every integration test binary: upstreams on
//! 127.0.0.1:0 (handler-based here, scripted in `upstream`), the app
//! in-process on :0 (`proxy` for forwarding tests; `tap::Proxy` with an
//! in-memory audit log and a manual clock for validation tests), the real
//! binary for what only a process shows (`process`), callers, bounded
//! waits, metric matchers, and A2A payload builders (`a2a`).
#![allow(dead_code, unused_imports, async_fn_in_trait)]

pub mod a2a;
pub mod bomb;
pub mod grpc;
pub mod metrics;
pub mod ports;
pub mod process;
pub mod proxied;
pub mod scenes;
pub mod tap;
pub mod upstream;

pub use metrics::{metric, total};
pub use proxied::{request_to, Proxied, NAME};
pub use upstream::{Hold, Reply, Upstream};

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

use a2a_tap::app::{App, Options};
use a2a_tap::config::Config;
use a2a_tap::proxy::Inspector;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub type Body = UnsyncBoxBody<Bytes, BoxError>;

/// The longest any single wait in a test may take.
pub const WAIT: Duration = Duration::from_secs(10);

/// Awaits `fut`, failing the test after [`WAIT`].
pub async fn within<F: Future>(what: &str, fut: F) -> F::Output {
    match tokio::time::timeout(WAIT, fut).await {
        Ok(out) => out,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// A whole body.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| -> BoxError { match never {} })
        .boxed_unsync()
}

/// A body fed through a channel, frame by frame.
pub fn channel() -> (http_body_util::channel::Sender<Bytes, BoxError>, Body) {
    let (tx, body) = http_body_util::channel::Channel::<Bytes, BoxError>::new(4);
    (tx, body.boxed_unsync())
}

/// What `stream` sends up to the end of a request head (`\r\n\r\n`,
/// and what came with it in the same reads); `None` when it closes or
/// fails first.
pub async fn read_head(stream: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 4096];
    let mut seen = Vec::new();
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    Some(seen)
}

/// A raw upstream on 127.0.0.1:0 that answers every request (once its head
/// is read) with `answer`, head included, written in the pieces `cuts`
/// marks (offsets into `answer`) with a 200 µs pause after each.
pub async fn raw_upstream(answer: Vec<u8>, cuts: Vec<usize>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (answer, cuts) = (answer.clone(), cuts.clone());
            tokio::spawn(async move {
                let _ = stream.set_nodelay(true);
                if read_head(&mut stream).await.is_none() {
                    return;
                }
                let _ = write_cut(&mut stream, &answer, &cuts).await;
            });
        }
    });
    addr
}

/// Writes `bytes` in the pieces `cuts` marks (ascending offsets into
/// `bytes`; out of range ones clamped), with a 200 µs pause after each.
pub async fn write_cut(
    stream: &mut tokio::net::TcpStream,
    bytes: &[u8],
    cuts: &[usize],
) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt;
    let mut at = 0;
    for &cut in cuts.iter().chain([&bytes.len()]) {
        let cut = cut.clamp(at, bytes.len());
        stream.write_all(&bytes[at..cut]).await?;
        at = cut;
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    Ok(())
}

/// A scripted HTTP upstream (HTTP/1.1 and h2c) on 127.0.0.1:0.
pub async fn upstream<F, Fut>(handler: F) -> SocketAddr
where
    F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<Body>> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind upstream");
    let addr = listener.local_addr().expect("addr");
    let handler = Arc::new(handler);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let handler = handler.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let fut = handler(req);
                    async move { Ok::<_, Infallible>(fut.await) }
                });
                // No `Date` of its own: tests see exactly the script's headers.
                let mut builder = auto::Builder::new(TokioExecutor::new());
                builder.http1().auto_date_header(false);
                builder.http2().auto_date_header(false);
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// A config for a plain proxy in front of `upstream` (validation off, as
/// forwarding tests want), all ports on 127.0.0.1:0.
pub fn config(upstream: SocketAddr) -> Config {
    Config {
        listen: Some("127.0.0.1:0".parse().expect("addr")),
        admin: "127.0.0.1:0".parse().expect("addr"),
        upstream: Some(format!("http://{upstream}").parse().expect("url")),
        name: Some("test".to_string()),
        validate: false,
        // Shutdown stops accepting at once (the drain delay has its test).
        proxy: a2a_tap::config::ProxySection {
            drain_delay: a2a_tap::config::HumanDuration::secs(0),
            ..Default::default()
        },
        ..Config::default()
    }
}

/// A runtime for one property test case (two workers, as many as the
/// proxy's serving threads on a 2-core box).
pub fn case_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Starts the app in-process.
pub async fn proxy(config: Config) -> App {
    within("proxy start", App::start(&config))
        .await
        .expect("proxy starts")
}

/// Starts the app in-process with `inspector` in place of validation.
pub async fn proxy_with(config: Config, inspector: Option<Arc<dyn Inspector>>) -> App {
    let options = Options {
        inspector,
        ..Options::default()
    };
    within("proxy start", App::start_with(&config, options))
        .await
        .expect("proxy starts")
}

/// A caller client (HTTP/1.1, keep-alive).
pub fn client() -> Client<HttpConnector, Body> {
    Client::builder(TokioExecutor::new()).build_http()
}

/// A caller client speaking h2c (prior knowledge), taking header lists of
/// up to 1 MiB (as grpc-go's 16 MiB default does; hyper's 16 KiB would cut
/// large gRPC status details on the caller's side).
pub fn h2_client() -> Client<HttpConnector, Body> {
    Client::builder(TokioExecutor::new())
        .http2_only(true)
        .http2_max_header_list_size(1 << 20)
        .build_http()
}

/// GETs `path` through the proxy and collects the answer.
pub async fn get(addr: SocketAddr, path: &str) -> (http::response::Parts, Bytes) {
    let req = Request::get(format!("http://{addr}{path}"))
        .body(full(Bytes::new()))
        .expect("request");
    send(&client(), req).await
}

/// GETs `url` with `client` and waits for the answer's head only (the
/// body left to the caller to read, or not).
pub async fn get_head(client: &Client<HttpConnector, Body>, url: &str) -> Response<Incoming> {
    let req = Request::get(url).body(full(Bytes::new())).expect("request");
    within("response head", client.request(req))
        .await
        .expect("response")
}

/// Sends `req` and collects the answer.
pub async fn send(
    client: &Client<HttpConnector, Body>,
    req: Request<Body>,
) -> (http::response::Parts, Bytes) {
    let resp = within("response head", client.request(req))
        .await
        .expect("response");
    let (head, body) = resp.into_parts();
    let bytes = within("response body", body.collect())
        .await
        .expect("body")
        .to_bytes();
    (head, bytes)
}

/// The admin listener's `/metrics` text.
pub async fn scrape(app: &App) -> String {
    let (head, body) = get(app.admin_addr(), "/metrics").await;
    assert_eq!(head.status, 200);
    String::from_utf8(body.to_vec()).expect("utf-8 metrics")
}

/// Waits (bounded) until `check` holds on the scraped metrics.
pub async fn eventually_metric(handle: &App, what: &str, check: impl Fn(&str) -> bool) {
    within(what, async {
        loop {
            let text = scrape(handle).await;
            if check(&text) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}
