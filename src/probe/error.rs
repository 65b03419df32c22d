//! Why a probe could not run: a URL it cannot probe, or an agent card it
//! could not reach at all (exit codes 2 and 3).

use http::Uri;

use super::client::Refused;
use crate::tls::TlsError as ClientError;

/// Why a URL cannot be probed (the command line's check of `URL`).
#[derive(Debug, thiserror::Error)]
pub enum UrlError {
    #[error("not a URL: {0}")]
    NotAUrl(#[from] http::uri::InvalidUri),
    #[error("expected an http:// or https:// URL")]
    Scheme,
    #[error("the URL has no host")]
    NoHost,
}

/// Why the probe did not get as far as the agent card.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProbeError {
    /// The HTTP client could not be built (the system's roots).
    #[error("{0}")]
    Client(#[from] ClientError),
    /// The budget was spent before the card was asked for.
    #[error("{0}")]
    Refused(#[from] Refused),
    /// The card's URL gave no HTTP answer.
    #[error("cannot reach the agent card at {card}: {why}")]
    Unreachable { card: Uri, why: String },
}
