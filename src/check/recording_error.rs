//! Why a recording (or its sidecar) could not be read as exchanges: the
//! text after the file's name in `a2a-tap check`'s error.

use std::path::PathBuf;

/// Why a recording could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// The sidecar given with an in-memory recording is not one.
    #[error("{0}")]
    Sidecar(serde_json::Error),
    /// The `STEM.json` beside the file is not a sidecar.
    #[error("sidecar {}: {source}", path.display())]
    SidecarFile {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("sidecar lists no exchange")]
    NoExchange,
    #[error("{lines} lines but the sidecar lists {exchanges} exchanges")]
    LineCount { lines: usize, exchanges: usize },
    #[error("bad method {0:?}")]
    Method(String),
    #[error("bad path {0:?}")]
    Path(String),
    #[error("unknown file type: expected .sse, .jsonl, .har, or - for stdin")]
    UnknownType,
    #[error("not a HAR file: {0}")]
    NotHar(serde_json::Error),
    /// A HAR entry (its rank in `log.entries`) that cannot be read.
    #[error("entry {index}: {why}")]
    Entry {
        index: usize,
        why: Box<RecordingError>,
    },
    #[error("bad url {0:?}")]
    Url(String),
    #[error("response text is not base64")]
    NotBase64,
}
