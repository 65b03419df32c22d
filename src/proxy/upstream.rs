//! The pooled keep-alive upstream client: HTTP/1.1 (or h2 when configured),
//! `https://` verified by rustls against system roots plus an optional CA file.

use std::sync::Arc;

use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use super::pool::Pool;
use super::UpstreamBody;
use crate::config::{ProxySection, UpstreamUrl};
use crate::tls::tls_config;
pub use crate::tls::TlsError as ClientError;

/// The pooled client type used for HTTP/2 upstreams.
pub type UpstreamClient = Client<HttpsConnector<HttpConnector>, UpstreamBody>;

/// How the forwarder reaches the upstream.
pub struct Upstream {
    /// HTTP/1.1: connections leased to and driven by each exchange; `None`
    /// when `proxy.upstream_http2` sends everything over HTTP/2.
    pub http1: Option<Arc<Pool>>,
    /// HTTP/2 (h2c or ALPN h2): one multiplexed pooled client, for every
    /// request with `upstream_http2`, else for gRPC calls only (gRPC needs
    /// HTTP/2). It connects on first use.
    pub http2: Box<UpstreamClient>,
}

/// Builds the client for `upstream` with the `[proxy]` settings; its
/// HTTP/1.1 pool keeps idle connections within `idle` (its serving
/// thread's budget, shared with the other routes' pools).
pub fn build(
    cfg: &ProxySection,
    upstream: &UpstreamUrl,
    idle: Arc<super::pool::IdleBudget>,
) -> Result<Upstream, ClientError> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(cfg.connect_timeout.0));
    let tls = tls_config(upstream.is_https(), cfg.tls_ca_file.as_deref())?;
    let builder = || {
        HttpsConnectorBuilder::new()
            .with_tls_config(tls.clone())
            .https_or_http()
    };
    let http1 = (!cfg.upstream_http2).then(|| {
        let connector = builder().enable_http1().wrap_connector(http.clone());
        Arc::new(Pool::new(
            connector,
            cfg.pool_idle_timeout.0,
            idle.clone(),
            cfg.max_header_list_size,
        ))
    });
    let connector = builder().enable_http2().wrap_connector(http);
    // An answer's header list (a gRPC trailers-only answer's status
    // details) up to `max_header_list_size`: hyper's 16 KiB default turns a
    // larger one into an error the caller would see instead of the answer,
    // and silently drops the trailers past it.
    let max_header_list = u32::try_from(cfg.max_header_list_size).unwrap_or(u32::MAX);
    let http2 = Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .timer(TokioTimer::new())
        .pool_idle_timeout(cfg.pool_idle_timeout.0)
        .http2_only(true)
        .http2_max_header_list_size(max_header_list)
        .build(connector);
    Ok(Upstream {
        http1,
        http2: Box::new(http2),
    })
}
