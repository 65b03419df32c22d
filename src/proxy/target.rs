//! Where requests go, and the request target the upstream is sent.

use http::uri::{Authority, PathAndQuery, Scheme};
use http::{HeaderValue, Uri};

/// Where requests go: the upstream's scheme, authority and base path.
pub(crate) struct Target {
    pub(crate) scheme: Scheme,
    pub(crate) authority: Authority,
    pub(crate) base_path: String,
    /// `scheme://authority/`, what the connector dials.
    pub(crate) origin: Uri,
    /// The `Host` header for HTTP/1.1.
    pub(crate) host: HeaderValue,
}

impl Target {
    /// The upstream request target: origin-form for HTTP/1.1 (with a `Host`
    /// header), absolute for HTTP/2. The path is base path + caller's path
    /// and query.
    pub(crate) fn uri(&self, caller: &Uri, http2: bool) -> Result<Uri, http::Error> {
        let pq = caller
            .path_and_query()
            .cloned()
            .unwrap_or_else(|| PathAndQuery::from_static("/"));
        let pq = if self.base_path.is_empty() {
            pq
        } else {
            let joined = format!("{}{}", self.base_path, pq.as_str());
            PathAndQuery::try_from(joined)?
        };
        if !http2 {
            return Ok(Uri::from(pq));
        }
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(pq)
            .build()
    }
}
