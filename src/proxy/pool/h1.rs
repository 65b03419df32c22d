//! a2a-tap's own HTTP/1.1 client connection to an upstream, polled by the
//! exchange that leases it: it writes the request (streaming its body),
//! reads the answer's head as hyper's client would, and decodes the body
//! a read at a time, the data of every chunk that read brought together.
//!
//! Why not hyper's client: it is two thirds of the serving threads' work
//! an exchange, and most of it goes to a dispatcher, a body channel and
//! per-chunk polls that one exchange on one connection does not need
//! (BENCHMARKS.md). What it reads and refuses is hyper's: the same parser
//! and configuration, the same framing rules and limits, checked against
//! hyper itself in the tests.

use std::io;

pub(crate) mod chunked;
mod conn;
pub(crate) mod head;
pub(crate) mod request;
#[cfg(test)]
mod tests;

pub use conn::Conn;

/// Why an exchange with the upstream failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The connection ended before an answer's head did.
    #[error("connection closed before message completed")]
    Incomplete,
    /// An answer's head httparse does not read.
    #[error("invalid HTTP response head: {0}")]
    Head(httparse::Error),
    /// An answer's head longer than the read buffer allows.
    #[error("invalid HTTP response: head longer than {0} bytes")]
    HeadTooLarge(usize),
    /// An answer whose head reads but does not frame a message.
    #[error("{0}")]
    Parse(&'static str),
    /// Reading failed, or the body's framing did (chunks, early end).
    #[error("error reading the upstream's answer")]
    Read(#[source] io::Error),
    /// Writing the request failed.
    #[error("error writing the request to the upstream")]
    Write(#[source] io::Error),
    /// The request's body failed (the caller's upload broke off).
    #[error("the request body failed")]
    RequestBody(#[source] super::super::BoxError),
    /// The request's body did not match its `Content-Length`.
    #[error("the request body does not match its content-length")]
    RequestLength,
}

impl Error {
    /// Whether the answer's head was refused: one httparse does not read,
    /// one longer than the limit, or one that frames no message (the
    /// upstream broke HTTP/1.1, as a refused HTTP/2 head breaks HTTP/2).
    pub fn is_refused_head(&self) -> bool {
        matches!(
            self,
            Error::Head(_) | Error::HeadTooLarge(_) | Error::Parse(_)
        )
    }

    /// Whether the upstream hung up before the message was whole.
    pub fn is_incomplete(&self) -> bool {
        match self {
            Error::Incomplete => true,
            Error::Read(e) => e.kind() == io::ErrorKind::UnexpectedEof,
            _ => false,
        }
    }
}
