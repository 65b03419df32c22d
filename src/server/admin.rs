//! The admin listener's answers (`/metrics`, `/healthz`, `/readyz`) and the
//! readiness state: not draining, and every route's upstream accepted a TCP
//! connection at the last probe.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::Full;
use tokio::sync::watch;

use std::convert::Infallible;
use std::time::Instant;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::backoff::AcceptBackoff;
use super::raised;
use crate::fd_limit;
use crate::proxy::activity::{Activity, Deadlines, Verdict};
use crate::proxy::forward::SharedRoutes;
use crate::report::Metrics;

/// How often the upstream is probed.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(2);

/// Readiness: false while draining or while the upstream is unreachable.
#[derive(Debug, Default)]
pub struct Readiness {
    draining: AtomicBool,
    upstream_ok: AtomicBool,
    /// `a2a_upstream_up`, kept in step with `upstream_ok`.
    up: Option<prometheus::IntGauge>,
}

// === impl Readiness ===

impl Readiness {
    /// Readiness that reports the probe's outcome in `up`.
    pub fn reporting(up: prometheus::IntGauge) -> Readiness {
        Readiness {
            up: Some(up),
            ..Readiness::default()
        }
    }

    /// Marks the process as draining (shutdown began).
    pub fn set_draining(&self) {
        if !self.draining.swap(true, Ordering::Relaxed) {
            tracing::info!(ready = false, reason = "draining", "readiness changed");
        }
    }

    /// Records a probe's outcome; a change is logged.
    pub fn set_upstream_ok(&self, ok: bool) {
        if let Some(up) = &self.up {
            up.set(i64::from(ok));
        }
        if self.upstream_ok.swap(ok, Ordering::Relaxed) != ok {
            if ok {
                tracing::info!(
                    upstream_reachable = true,
                    "readiness changed: the upstream answers"
                );
            } else {
                tracing::warn!(
                    upstream_reachable = false,
                    "readiness changed: the upstream does not accept connections"
                );
            }
        }
    }

    /// `Ok` when ready, else the reason.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.draining.load(Ordering::Relaxed) {
            Err("draining")
        } else if !self.upstream_ok.load(Ordering::Relaxed) {
            Err("upstream unreachable")
        } else {
            Ok(())
        }
    }
}

/// Probes `host:port` once: can a TCP connection be opened within `timeout`?
pub async fn probe(host: &str, port: u16, timeout: Duration) -> bool {
    matches!(
        tokio::time::timeout(timeout, tokio::net::TcpStream::connect((host, port))).await,
        Ok(Ok(_))
    )
}

/// Probes every route's upstream every [`PROBE_INTERVAL`] until `stop`
/// turns true.
pub async fn probe_loop(
    readiness: Arc<Readiness>,
    routes: SharedRoutes,
    metrics: Arc<Metrics>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = raised(&mut stop) => return,
            _ = tokio::time::sleep(PROBE_INTERVAL) => {}
        }
        probe_routes(&readiness, &routes, &metrics, false).await;
    }
}

/// Probes every route's upstream at once: `a2a_upstream_up{upstream}` of
/// each, and readiness (every upstream reachable). A route whose upstream
/// stops (or, `at_start`, does not) accept connections is logged.
pub async fn probe_routes(
    readiness: &Readiness,
    routes: &SharedRoutes,
    metrics: &Metrics,
    at_start: bool,
) {
    let table = routes.load_full();
    // Spawned, so that the probes (each bounded by its connect timeout)
    // run at once.
    // Every thread has an instance of each route: the first thread's.
    let probes: Vec<_> = table
        .routes(0)
        .iter()
        .map(|route| {
            let (host, port, timeout) = route.probe.clone();
            let name = route.name.clone();
            tokio::spawn(async move {
                let ok = probe(&host, port, timeout).await;
                (name, format!("{host}:{port}"), ok)
            })
        })
        .collect();
    let mut all = true;
    for joined in probes {
        let Ok((name, address, ok)) = joined.await else {
            all = false;
            continue;
        };
        // A route a reload removed meanwhile is not reported.
        if !routes.load().routes(0).iter().any(|r| r.name == name) {
            continue;
        }
        let up = metrics.upstream_up.with(&name);
        let was = up.get() == 1;
        up.set(i64::from(ok));
        all &= ok;
        if !ok && (at_start || was) {
            // `/readyz` alone would say so: an operator reads the log first.
            let when = if at_start { " at start" } else { "" };
            tracing::warn!(
                upstream = %name,
                address = %address,
                "the upstream does not accept connections{when}: its callers get 502 and \
                 /readyz is not ready until it does (probed every 2 s)"
            );
        } else if ok && !was && !at_start {
            tracing::info!(upstream = %name, "the upstream accepts connections again");
        }
    }
    readiness.set_upstream_ok(all);
}

/// Answers one admin request.
pub fn answer<B>(
    req: &Request<B>,
    metrics: &Metrics,
    readiness: &Readiness,
) -> Response<Full<Bytes>> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed\n".into(),
        );
    }
    match req.uri().path() {
        "/metrics" => {
            let mut resp = text(StatusCode::OK, metrics.encode());
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            resp
        }
        "/healthz" => text(StatusCode::OK, "ok\n".into()),
        "/readyz" => match readiness.check() {
            Ok(()) => text(StatusCode::OK, "ready\n".into()),
            Err(why) => text(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not ready: {why}\n"),
            ),
        },
        _ => text(StatusCode::NOT_FOUND, "not found\n".into()),
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

/// Deadlines of admin connections: a probe or a scrape is quick.
const ADMIN_DEADLINES: Deadlines = Deadlines {
    header_read: Duration::from_secs(5),
    idle: Duration::from_secs(15),
    write: Duration::from_secs(15),
};

/// Serves the admin listener until `stop` turns true: at most
/// `fd_limit::ADMIN_CONNECTIONS` connections at once (their descriptors are
/// kept in reserve), each with deadlines, so that silent connections to it
/// cannot stop `/healthz` answering.
pub(super) async fn serve_admin(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    readiness: Arc<Readiness>,
    mut stop: watch::Receiver<bool>,
) {
    let builder = Arc::new(auto::Builder::new(TokioExecutor::new()));
    let slots = Arc::new(Semaphore::new(fd_limit::ADMIN_CONNECTIONS));
    let accept_errors = metrics.accept_errors_total.with("admin");
    let mut backoff = AcceptBackoff::default();
    loop {
        let permit = tokio::select! {
            _ = raised(&mut stop) => return,
            p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => return },
        };
        let (stream, _) = tokio::select! {
            _ = raised(&mut stop) => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => {
                    backoff.reset();
                    a
                }
                Err(e) => {
                    backoff.failed(&e, &accept_errors, "admin accept failed");
                    tokio::select! {
                        _ = raised(&mut stop) => return,
                        _ = tokio::time::sleep(backoff.delay()) => continue,
                    }
                }
            },
        };
        let (metrics, readiness, builder) = (metrics.clone(), readiness.clone(), builder.clone());
        let mut stop = stop.clone();
        tokio::spawn(async move {
            let activity = Arc::new(Activity::new(Instant::now()));
            let on_conn = activity.clone();
            let service = service_fn(move |req| {
                on_conn.begin();
                let resp = answer(&req, &metrics, &readiness);
                on_conn.end();
                std::future::ready(Ok::<_, Infallible>(resp))
            });
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            let mut wait = Duration::ZERO;
            loop {
                tokio::select! {
                    _ = conn.as_mut() => break,
                    _ = raised(&mut stop) => break,
                    _ = tokio::time::sleep(wait) => match activity.verdict(Instant::now(), &ADMIN_DEADLINES) {
                        Verdict::Wait(next) => wait = next,
                        Verdict::Close(_) => break,
                    },
                }
            }
            drop(permit);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str) -> Request<()> {
        Request::get(path).body(()).expect("request")
    }

    #[test]
    fn routes() {
        let m = Metrics::new().expect("metrics");
        let r = Readiness::default();
        assert_eq!(answer(&get("/healthz"), &m, &r).status(), StatusCode::OK);
        assert_eq!(
            answer(&get("/nope"), &m, &r).status(),
            StatusCode::NOT_FOUND
        );
        assert_eq!(answer(&get("/metrics"), &m, &r).status(), StatusCode::OK);
        assert_eq!(
            answer(&get("/readyz"), &m, &r).status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
        r.set_upstream_ok(true);
        assert_eq!(answer(&get("/readyz"), &m, &r).status(), StatusCode::OK);
        r.set_draining();
        assert_eq!(
            answer(&get("/readyz"), &m, &r).status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
    }
}
