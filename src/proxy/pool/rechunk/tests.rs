//! The rewriter's laws: every response keeps its bytes (a chunked body its
//! data and trailers, any other answer every byte), whatever the reads; the
//! chunks a read brought whole are joined; and from the first byte it
//! cannot account for, hyper gets what the upstream sent.

use std::sync::Arc;

use proptest::prelude::*;

use super::{NextRequest, Rechunk};

/// A rewriter and the slot its lease tells it requests through.
fn rewriter() -> (Rechunk, Arc<NextRequest>) {
    let next = Arc::new(NextRequest::default());
    (Rechunk::new(next.clone()), next)
}

/// `wire` through `r`, read in pieces cut at `cuts`: each read's output is
/// never longer than it, and not empty when it is not.
fn feed(r: &mut Rechunk, wire: &[u8], cuts: &[usize]) -> Vec<u8> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (wire.len() + 1)).collect();
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut at = 0;
    for cut in cuts.into_iter().chain([wire.len()]) {
        if cut <= at {
            continue;
        }
        let before = out.len();
        r.rewrite(&wire[at..cut], &mut |p| out.extend_from_slice(p));
        let n = out.len() - before;
        assert!(n <= cut - at, "a read grew: {} → {n}", cut - at);
        assert!(n > 0, "a read of {} bytes became none (EOF)", cut - at);
        at = cut;
    }
    out
}

// === a reference decoder ===

/// How a chunked body ended, by hyper's rules.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Whole, these many bytes long.
    Done(usize),
    /// Refused at this byte.
    Error(usize),
    /// Cut short.
    Incomplete,
}

/// A chunked body decoded by the rules of hyper's decoder
/// (`proto/h1/decode.rs`): its data, its trailer section as sent, and how
/// it ended.
fn decode(wire: &[u8]) -> (Vec<u8>, Vec<u8>, Outcome) {
    #[derive(Clone, Copy)]
    enum S {
        Start,
        Size,
        Lws,
        Ext,
        SizeLf,
        Body(u64),
        BodyCr,
        BodyLf,
        EndCr,
        Trailer,
        TrailerLf,
        EndLf,
    }
    let (mut data, mut trailers) = (Vec::new(), Vec::new());
    let (mut s, mut size, mut trailers_at) = (S::Start, 0u64, 0);
    let mut i = 0;
    while i < wire.len() {
        let b = wire[i];
        let digit = super::hex(b).map(u64::from);
        s = match (s, digit, b) {
            (S::Start | S::Size, Some(d), _) => {
                match size.checked_mul(16).and_then(|n| n.checked_add(d)) {
                    Some(n) => size = n,
                    None => return (data, trailers, Outcome::Error(i)),
                }
                S::Size
            }
            (S::Size | S::Lws, _, b' ' | b'\t') => S::Lws,
            (S::Size | S::Lws, _, b';') => S::Ext,
            (S::Size | S::Lws | S::Ext, _, b'\r') => S::SizeLf,
            (S::Ext, _, b) if b != b'\n' => S::Ext,
            (S::SizeLf, _, b'\n') if size == 0 => {
                trailers_at = i + 1;
                S::EndCr
            }
            (S::SizeLf, _, b'\n') => S::Body(std::mem::take(&mut size)),
            (S::Body(left), _, _) => {
                let n = (left as usize).min(wire.len() - i);
                data.extend_from_slice(&wire[i..i + n]);
                i += n;
                s = if n as u64 == left {
                    S::BodyCr
                } else {
                    S::Body(left - n as u64)
                };
                continue;
            }
            (S::BodyCr, _, b'\r') => S::BodyLf,
            (S::BodyLf, _, b'\n') => S::Start,
            (S::EndCr, _, b'\r') => S::EndLf,
            (S::Trailer, _, b'\r') => S::TrailerLf,
            (S::EndCr | S::Trailer, _, _) => S::Trailer,
            (S::TrailerLf, _, b'\n') => S::EndCr,
            (S::EndLf, _, b'\n') => {
                trailers.extend_from_slice(&wire[trailers_at..=i]);
                return (data, trailers, Outcome::Done(i + 1));
            }
            _ => return (data, trailers, Outcome::Error(i)),
        };
        i += 1;
    }
    (data, trailers, Outcome::Incomplete)
}

// === generated responses ===

/// One answer the tests send, and its request's method.
#[derive(Debug, Clone)]
enum Answer {
    /// A chunked 200, maybe after 1xx heads: data cut into chunks of
    /// `sizes`, some with an extension, spelled in various ways; trailers.
    Chunked {
        interim: Vec<u16>,
        data: Vec<u8>,
        sizes: Vec<(usize, u8)>,
        trailers: Vec<String>,
    },
    /// `content-length` body.
    Length(Vec<u8>),
    /// 204 or 304 (a chunked head, no body).
    Bodiless(u16),
    /// A chunked head answering `HEAD`: no body.
    Head,
}

impl Answer {
    fn method(&self) -> http::Method {
        match self {
            Answer::Head => http::Method::HEAD,
            _ => http::Method::GET,
        }
    }

    /// The head(s) and the body as sent.
    fn wire(&self) -> (Vec<u8>, Vec<u8>) {
        match self {
            Answer::Chunked {
                interim,
                data,
                sizes,
                trailers,
            } => {
                let mut head = Vec::new();
                for code in interim {
                    head.extend_from_slice(
                        format!("HTTP/1.1 {code} Info\r\nx: y\r\n\r\n").as_bytes(),
                    );
                }
                head.extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
                (head, chunked(data, sizes, trailers))
            }
            Answer::Length(data) => {
                let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", data.len());
                (head.into_bytes(), data.clone())
            }
            Answer::Bodiless(code) => (
                format!("HTTP/1.1 {code} X\r\ntransfer-encoding: chunked\r\n\r\n").into_bytes(),
                Vec::new(),
            ),
            Answer::Head => (
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec(),
                Vec::new(),
            ),
        }
    }
}

/// `data` in chunks of `sizes` (cycled; the style byte picks an extension,
/// upper case or leading zeros), the last chunk, `trailers` and the CRLF.
fn chunked(data: &[u8], sizes: &[(usize, u8)], trailers: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut sizes = sizes.iter().copied().cycle();
    while at < data.len() {
        let (n, style) = sizes.next().unwrap_or((data.len(), 0));
        let n = n.clamp(1, data.len() - at);
        let line = match style % 8 {
            0 => format!("{n:X}"),
            1 => format!("00{n:x}"),
            2 => format!("{n:x};ext=\"v\""),
            3 => format!("{n:x};e"),
            _ => format!("{n:x}"),
        };
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&data[at..at + n]);
        out.extend_from_slice(b"\r\n");
        at += n;
    }
    out.extend_from_slice(b"0\r\n");
    for t in trailers {
        out.extend_from_slice(t.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

fn answer() -> impl Strategy<Value = Answer> {
    let bytes = || proptest::collection::vec(any::<u8>(), 0..1500);
    prop_oneof![
        4 => (
            proptest::collection::vec(prop_oneof![Just(100u16), Just(102), Just(103)], 0..3),
            bytes(),
            proptest::collection::vec((1usize..300, any::<u8>()), 1..12),
            proptest::collection::vec("[a-z]{1,8}: [a-z0-9 ]{0,12}", 0..3),
        )
            .prop_map(|(interim, data, sizes, trailers)| Answer::Chunked {
                interim,
                data,
                sizes,
                trailers,
            }),
        1 => bytes().prop_map(Answer::Length),
        1 => prop_oneof![Just(204u16), Just(304)].prop_map(Answer::Bodiless),
        1 => Just(Answer::Head),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// On one kept-alive connection, answer after answer, each read in
    /// random pieces: a chunked body keeps its data and trailers and its
    /// end, every other answer every byte, and the rewriter never gives up.
    #[test]
    fn every_answer_keeps_its_bytes_whatever_the_reads(
        answers in proptest::collection::vec(answer(), 1..6),
        cuts in proptest::collection::vec(proptest::collection::vec(any::<usize>(), 0..10), 6),
    ) {
        let (mut r, next) = rewriter();
        for (answer, cuts) in answers.iter().zip(&cuts) {
            next.announce(&answer.method());
            let (head, body) = answer.wire();
            let sent = [head.clone(), body.clone()].concat();
            let got = feed(&mut r, &sent, cuts);
            if let Answer::Chunked { .. } = answer {
                let (got_head, got_body) = got.split_at(head.len().min(got.len()));
                prop_assert_eq!(got_head, &head[..]);
                let (data, trailers, end) = decode(got_body);
                let (want_data, want_trailers, want_end) = decode(&body);
                prop_assert_eq!(data, want_data);
                prop_assert_eq!(trailers, want_trailers);
                prop_assert_eq!(want_end, Outcome::Done(body.len()));
                prop_assert_eq!(end, Outcome::Done(got_body.len()));
            } else {
                prop_assert_eq!(got, sent);
            }
            prop_assert!(!r.is_through(), "gave up on {:?}", answer);
        }
    }

    /// One byte of a chunked body changed, anything: the data hyper decodes
    /// is the same and ends the same way, and from the byte hyper refuses,
    /// it gets the bytes as sent.
    #[test]
    fn a_corrupted_chunked_body_decodes_as_it_was_sent(
        data in proptest::collection::vec(any::<u8>(), 1..1500),
        sizes in proptest::collection::vec((1usize..300, any::<u8>()), 1..12),
        at in any::<usize>(),
        byte in any::<u8>(),
        cuts in proptest::collection::vec(any::<usize>(), 0..10),
    ) {
        let head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
        let mut body = chunked(&data, &sizes, &[]);
        let at = at % body.len();
        body[at] = byte;
        let (mut r, next) = rewriter();
        next.announce(&http::Method::POST);
        let got = feed(&mut r, &[head.clone(), body.clone()].concat(), &cuts);
        let got_body = &got[head.len()..];
        let (want_data, _, want_end) = decode(&body);
        let (got_data, _, got_end) = decode(got_body);
        prop_assert_eq!(got_data, want_data);
        match want_end {
            Outcome::Error(e) => {
                prop_assert!(matches!(got_end, Outcome::Error(_)), "{:?}", got_end);
                prop_assert!(got_body.ends_with(&body[e..]));
            }
            Outcome::Done(n) => {
                prop_assert_eq!(got_end, Outcome::Done(got_body.len() - (body.len() - n)));
                prop_assert!(got_body.ends_with(&body[n..]));
            }
            Outcome::Incomplete => prop_assert_eq!(got_end, Outcome::Incomplete),
        }
    }

    /// Bytes that are no answer pass unchanged.
    #[test]
    fn garbage_passes_unchanged(
        wire in proptest::collection::vec(any::<u8>(), 1..3000),
        cuts in proptest::collection::vec(any::<usize>(), 0..10),
    ) {
        let (mut r, next) = rewriter();
        next.announce(&http::Method::GET);
        prop_assert_eq!(feed(&mut r, &wire, &cuts), wire);
    }

    /// Garbage in place of a chunk, after chunks that came whole: what
    /// came before decodes the same, the garbage reaches hyper as sent.
    #[test]
    fn garbage_after_whole_chunks_reaches_hyper_as_sent(
        data in proptest::collection::vec(any::<u8>(), 1..800),
        sizes in proptest::collection::vec((1usize..200, 4u8..8), 1..8),
        garbage in proptest::collection::vec(any::<u8>(), 1..200),
        cuts in proptest::collection::vec(any::<usize>(), 0..6),
    ) {
        let head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
        let mut body = chunked(&data, &sizes, &[]);
        body.truncate(body.len() - 5); // without the last chunk
        let (want_data, _, _) = decode(&body);
        body.extend_from_slice(&garbage);
        let (mut r, next) = rewriter();
        next.announce(&http::Method::GET);
        let got = feed(&mut r, &[head.clone(), body.clone()].concat(), &cuts);
        let got_body = &got[head.len()..];
        let (got_data, _, _) = decode(got_body);
        prop_assert!(got_data.starts_with(&want_data));
        if super::hex(garbage[0]).is_none() {
            prop_assert!(got_body.ends_with(&garbage));
            prop_assert!(r.is_through());
        }
    }
}

// === the cases by name ===

fn events(n: usize) -> (Vec<u8>, Vec<u8>) {
    let mut data = Vec::new();
    let mut wire = Vec::new();
    for i in 0..n {
        let event = format!("data: {{\"n\":{i}}}\n\n");
        wire.extend_from_slice(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes());
        data.extend_from_slice(event.as_bytes());
    }
    (data, wire)
}

const SSE_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";

#[test]
fn chunks_read_together_become_one() {
    let (data, body) = events(20);
    let (mut r, next) = rewriter();
    next.announce(&http::Method::POST);
    let wire = [SSE_HEAD, &body, b"0\r\n\r\n"].concat();
    let got = feed(&mut r, &wire, &[]);
    let want = [
        SSE_HEAD,
        format!("{:x}\r\n", data.len()).as_bytes(),
        &data,
        b"\r\n0\r\n\r\n",
    ]
    .concat();
    assert_eq!(got, want);
}

#[test]
fn a_chunk_cut_by_a_read_passes_in_its_parts() {
    let (_, body) = events(3);
    let (mut r, next) = rewriter();
    next.announce(&http::Method::GET);
    let wire = [SSE_HEAD, &body].concat();
    // The head, then the first two chunks whole and a third cut in its data.
    let cut = wire.len() - 5;
    let got = feed(&mut r, &wire, &[SSE_HEAD.len(), cut]);
    let (data2, _) = events(2);
    let third = &body[events(2).1.len()..];
    let want = [
        SSE_HEAD,
        format!("{:x}\r\n", data2.len()).as_bytes(),
        &data2,
        b"\r\n",
        third,
    ]
    .concat();
    assert_eq!(got, want);
}

#[test]
fn an_answer_no_request_was_told_for_passes_unchanged() {
    let (_, body) = events(3);
    let wire = [SSE_HEAD, &body, b"0\r\n\r\n"].concat();
    let (mut r, _next) = rewriter();
    assert_eq!(feed(&mut r, &wire, &[]), wire);
    assert!(r.is_through());
    // Two answers in one read: the second had no request told.
    let (mut r, next2) = rewriter();
    next2.announce(&http::Method::GET);
    let two = [&wire[..], &wire[..]].concat();
    let got = feed(&mut r, &two, &[]);
    assert!(got.ends_with(&wire) && got.len() < two.len(), "{got:?}");
}

#[test]
fn lws_and_long_extensions_are_left_to_hyper() {
    for odd in [
        &b"5 \r\nhello\r\n"[..],
        b"5\t;x\r\nhello\r\n",
        b"5;x\nhello\r\n",
    ] {
        let (_, body) = events(2);
        let wire = [SSE_HEAD, &body, odd, &body, b"0\r\n\r\n"].concat();
        let (mut r, next) = rewriter();
        next.announce(&http::Method::GET);
        let got = feed(&mut r, &wire, &[]);
        assert!(got.ends_with(&[odd, &body, b"0\r\n\r\n"].concat()));
        assert!(r.is_through());
    }
}

/// A hostile upstream's sizes: a head past `MAX_HEAD` (in small reads, so
/// it is held), trailers past `MAX_TRAILERS` and an extension past
/// `MAX_EXTENSION` make the rewriter give up, every byte passing as read,
/// and it holds no head bytes after.
#[test]
fn heads_trailers_and_extensions_over_their_bounds_give_up() {
    let big_head = {
        let mut h = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n".to_vec();
        while h.len() <= super::MAX_HEAD {
            h.extend_from_slice(b"x-pad: 0123456789012345678901234567890123456789\r\n");
        }
        h.extend_from_slice(b"\r\n");
        h
    };
    let (_, body) = events(2);
    let trailers = format!("0\r\nx-t: {}\r\n\r\n", "t".repeat(super::MAX_TRAILERS));
    let extension = format!("5;{}\r\nhello\r\n", "e".repeat(super::MAX_EXTENSION + 1));
    for wire in [
        [&big_head[..], &body, b"0\r\n\r\n"].concat(),
        [SSE_HEAD, &body, trailers.as_bytes()].concat(),
        [SSE_HEAD, &body, extension.as_bytes(), b"0\r\n\r\n"].concat(),
    ] {
        let (mut r, next) = rewriter();
        next.announce(&http::Method::GET);
        let cuts: Vec<usize> = (1..wire.len() / 1000).map(|i| i * 1000).collect();
        let got = feed(&mut r, &wire, &cuts);
        assert!(r.is_through(), "{} bytes followed", wire.len());
        assert_eq!(r.head.capacity(), 0, "head bytes held after giving up");
        // Only whole chunks before the fault may have been joined.
        let tail = &wire[wire.len() - 1000..];
        assert!(got.ends_with(tail));
    }
}

/// What the rewriter is for, through hyper's own client: the 20 chunks an
/// upstream wrote together are one data frame for hyper (20 without it).
#[tokio::test]
async fn hyper_decodes_chunks_read_together_in_one_frame() {
    use http_body_util::BodyExt;
    use hyper_util::rt::TokioIo;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn frames(rewrite: bool) -> usize {
        let (near, mut far) = tokio::io::duplex(64 * 1024);
        let (data, body) = events(20);
        tokio::spawn(async move {
            let mut buf = [0u8; 1024];
            let _ = far.read(&mut buf).await;
            let answer = [SSE_HEAD, &body, b"0\r\n\r\n"].concat();
            let _ = far.write_all(&answer).await;
            let _ = far.read(&mut buf).await;
        });
        let next = Arc::new(NextRequest::default());
        let req = http::Request::get("/")
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .expect("request");
        next.announce(req.method());
        let resp = if rewrite {
            let io = super::RechunkIo::new(TokioIo::new(near), next);
            let (mut send, conn) = hyper::client::conn::http1::handshake(io)
                .await
                .expect("handshake");
            tokio::spawn(conn);
            send.send_request(req).await.expect("answer")
        } else {
            let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(near))
                .await
                .expect("handshake");
            tokio::spawn(conn);
            send.send_request(req).await.expect("answer")
        };
        let mut body = resp.into_body();
        let (mut count, mut got) = (0, Vec::new());
        while let Some(frame) = body.frame().await {
            if let Ok(d) = frame.expect("frame").into_data() {
                count += usize::from(!d.is_empty());
                got.extend_from_slice(&d);
            }
        }
        assert_eq!(got, data);
        count
    }
    assert_eq!(frames(false).await, 20);
    assert_eq!(frames(true).await, 1);
}
