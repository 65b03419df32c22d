//! A response head read as hyper's client reads it (httparse with its
//! default configuration and hyper's 100 headers), reduced to how the body
//! after it is framed, when that is certain.

use super::Sent;

/// hyper's client reads at most this many headers (`DEFAULT_MAX_HEADERS`):
/// a head with more fails in both parsers alike.
const MAX_HEADERS: usize = 100;
/// Most digits of a `Content-Length` followed (19: under hyper's maximum).
const MAX_LENGTH_DIGITS: usize = 19;

/// How the body after a head is framed, as far as the rewriter follows it.
#[derive(Debug, PartialEq, Eq)]
pub enum Framing {
    /// A 1xx other than 101: no body, the same request's next head follows.
    Interim,
    /// No body (204, 304, an answer to `HEAD`).
    Empty,
    /// Exactly this many bytes (one plain `Content-Length`, no
    /// `Transfer-Encoding`).
    Length(u64),
    /// Chunked, and nothing else: one `Transfer-Encoding: chunked`, no
    /// `Content-Length`, HTTP/1.1.
    Chunked,
    /// Anything else (an upgrade, a tunnel, HTTP/1.0, a close-delimited
    /// body, other codings, lengths hyper might read otherwise): the
    /// rewriter gives up.
    Unknown,
}

/// A head read from the start of some bytes.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// The head's length and how its body is framed.
    Complete(usize, Framing),
    /// The head goes on past these bytes.
    Partial,
    /// Not a head httparse reads (hyper refuses it too).
    Bad,
}

/// The head at the start of `bytes`, an answer to a `method` request.
pub fn parse(bytes: &[u8], method: Sent) -> Parsed {
    // Uninitialised slots (as hyper's own client parses): 100 headers
    // cleared on every head would cost more than reading a short head.
    let mut headers = [const { std::mem::MaybeUninit::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        bytes,
        &mut headers,
    );
    let len = match parsed {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(_) => return Parsed::Bad,
    };
    let framing = match (response.code, method) {
        (Some(101), _) => Framing::Unknown,
        (Some(100..=199), _) => Framing::Interim,
        (Some(204 | 304), _) | (_, Sent::Head) => Framing::Empty,
        (_, Sent::Connect) => Framing::Unknown,
        _ if response.version != Some(1) => Framing::Unknown,
        _ => body_framing(response.headers),
    };
    Parsed::Complete(len, framing)
}

/// How a final HTTP/1.1 answer's headers frame its body.
fn body_framing(headers: &[httparse::Header<'_>]) -> Framing {
    let mut coding = None;
    let mut length = None;
    for h in headers {
        let slot = if h.name.eq_ignore_ascii_case("transfer-encoding") {
            &mut coding
        } else if h.name.eq_ignore_ascii_case("content-length") {
            &mut length
        } else {
            continue;
        };
        if slot.is_some() {
            // Two of either: hyper may join or compare them; not followed.
            return Framing::Unknown;
        }
        *slot = Some(h.value);
    }
    match (coding, length) {
        (Some(te), None) if te.eq_ignore_ascii_case(b"chunked") => Framing::Chunked,
        (None, Some(cl))
            if (1..=MAX_LENGTH_DIGITS).contains(&cl.len()) && cl.iter().all(u8::is_ascii_digit) =>
        {
            let n = cl.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
            Framing::Length(n)
        }
        _ => Framing::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framing(head: &str, method: Sent) -> Framing {
        match parse(head.as_bytes(), method) {
            Parsed::Complete(len, framing) => {
                assert_eq!(len, head.len());
                framing
            }
            other => panic!("{head:?}: {other:?}"),
        }
    }

    #[test]
    fn only_plain_chunked_and_plain_lengths_are_followed() {
        let cases = [
            (
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                Framing::Chunked,
            ),
            (
                "HTTP/1.1 200 OK\r\ntransfer-encoding: CHUNKED\r\n\r\n",
                Framing::Chunked,
            ),
            (
                "HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\n",
                Framing::Length(12),
            ),
            ("HTTP/1.1 100 Continue\r\n\r\n", Framing::Interim),
            (
                "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n",
                Framing::Interim,
            ),
            (
                "HTTP/1.1 101 Switching\r\nupgrade: x\r\n\r\n",
                Framing::Unknown,
            ),
            (
                "HTTP/1.1 204 No Content\r\ntransfer-encoding: chunked\r\n\r\n",
                Framing::Empty,
            ),
            (
                "HTTP/1.1 304 Not Modified\r\ncontent-length: 9\r\n\r\n",
                Framing::Empty,
            ),
            (
                "HTTP/1.0 200 OK\r\ntransfer-encoding: chunked\r\n\r\n",
                Framing::Unknown,
            ),
            ("HTTP/1.1 200 OK\r\n\r\n", Framing::Unknown),
            (
                "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n",
                Framing::Unknown,
            ),
            (
                "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n",
                Framing::Unknown,
            ),
            (
                "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n",
                Framing::Unknown,
            ),
            (
                "HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 3\r\n\r\n",
                Framing::Unknown,
            ),
            (
                "HTTP/1.1 200 OK\r\ncontent-length: +3\r\n\r\n",
                Framing::Unknown,
            ),
            (
                "HTTP/1.1 200 OK\r\ncontent-length: 3, 3\r\n\r\n",
                Framing::Unknown,
            ),
        ];
        for (head, want) in cases {
            assert_eq!(framing(head, Sent::Other), want, "{head:?}");
        }
    }

    #[test]
    fn the_method_frames_head_and_connect_answers() {
        let chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
        assert_eq!(framing(chunked, Sent::Head), Framing::Empty);
        assert_eq!(framing(chunked, Sent::Connect), Framing::Unknown);
    }

    #[test]
    fn obs_fold_and_broken_heads_are_not_read() {
        let folded = "HTTP/1.1 200 OK\r\ntransfer-encoding:\r\n chunked\r\n\r\n";
        assert_eq!(parse(folded.as_bytes(), Sent::Other), Parsed::Bad);
        assert_eq!(parse(b"HTTP/1.1 2000 OK\r\n\r\n", Sent::Other), Parsed::Bad);
        assert_eq!(
            parse(b"HTTP/1.1 200 OK\r\nx: y", Sent::Other),
            Parsed::Partial
        );
    }
}
