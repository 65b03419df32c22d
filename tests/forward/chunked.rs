//! Chunked upstream bodies: the caller gets the upstream's bytes whatever
//! the chunk sizes and however they are cut on the wire, and chunks that
//! arrive together go to the caller together (one chunk, not one each),
//! without ever waiting for a chunk still to come.

use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::*;

/// `body` in chunked transfer coding, cut into chunks of the `sizes` in
/// turn (a zero size is skipped: it would end the body), then the last
/// chunk and, if given, a trailer section.
pub(crate) fn chunked(body: &[u8], sizes: &[usize], trailer: Option<&str>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut sizes = sizes.iter().copied().filter(|s| *s > 0).cycle();
    while at < body.len() {
        let n = sizes.next().unwrap_or(body.len()).min(body.len() - at);
        out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
        out.extend_from_slice(&body[at..at + n]);
        out.extend_from_slice(b"\r\n");
        at += n;
    }
    out.extend_from_slice(b"0\r\n");
    if let Some(t) = trailer {
        out.extend_from_slice(t.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// A raw upstream answering every request with `wire` (a chunked body)
/// after a chunked SSE head, cut at `cuts` (offsets into `wire`).
async fn raw_upstream(wire: Vec<u8>, cuts: Vec<usize>) -> std::net::SocketAddr {
    let mut all =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            .to_vec();
    let head = all.len();
    all.extend_from_slice(&wire);
    crate::support::raw_upstream(all, cuts.into_iter().map(|c| c + head).collect()).await
}

/// The caller's view on the wire: a GET's raw response, its body's chunks
/// (sizes) and the body decoded.
async fn raw_get(proxy: std::net::SocketAddr) -> (Vec<usize>, Vec<u8>) {
    let mut s = TcpStream::connect(proxy).await.expect("connect");
    s.write_all(b"GET /stream HTTP/1.1\r\nhost: tap\r\nconnection: close\r\n\r\n")
        .await
        .expect("write");
    let mut raw = Vec::new();
    within("the whole answer", s.read_to_end(&mut raw))
        .await
        .expect("read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    dechunk(&raw[split..])
}

/// Chunk sizes and the decoded body of a chunked body (trailers ignored).
fn dechunk(mut wire: &[u8]) -> (Vec<usize>, Vec<u8>) {
    let (mut sizes, mut body) = (Vec::new(), Vec::new());
    loop {
        let eol = wire
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("a size line");
        let line = std::str::from_utf8(&wire[..eol]).expect("ascii");
        let n = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)
            .expect("a hex size");
        wire = &wire[eol + 2..];
        if n == 0 {
            return (sizes, body);
        }
        body.extend_from_slice(&wire[..n]);
        assert_eq!(&wire[n..n + 2], b"\r\n", "a chunk ends with CRLF");
        wire = &wire[n + 2..];
        sizes.push(n);
    }
}

fn events(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| {
            format!("data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"n\":{i}}}}}\n\n")
                .into_bytes()
        })
        .collect()
}

#[tokio::test]
async fn events_that_arrive_together_reach_the_caller_as_one_chunk() {
    // 20 events, one upstream chunk each, all in one write: one read.
    let body = events(20);
    let sizes: Vec<usize> = (0..20)
        .map(|i| events(i + 1).len() - events(i).len())
        .collect();
    let up = raw_upstream(chunked(&body, &sizes, None), vec![]).await;
    let tap = proxy(config(up)).await;
    let (got_sizes, got) = raw_get(tap.listen_addr()).await;
    assert_eq!(got, body);
    assert_eq!(
        got_sizes,
        vec![body.len()],
        "the 20 chunks read together went out as one"
    );
}

#[tokio::test]
async fn events_that_arrive_apart_are_not_held_for_each_other() {
    // Each event written alone, 200 µs apart: the caller's chunks are the
    // upstream's writes at most, and the bytes are the same.
    let body = events(5);
    let sizes: Vec<usize> = (0..5)
        .map(|i| events(i + 1).len() - events(i).len())
        .collect();
    let wire = chunked(&body, &sizes, None);
    // Cut the wire after each whole chunk.
    let mut cuts = Vec::new();
    let mut at = 0;
    for s in &sizes {
        at += format!("{s:x}\r\n").len() + s + 2;
        cuts.push(at);
    }
    let up = raw_upstream(wire, cuts).await;
    let tap = proxy(config(up)).await;
    let (got_sizes, got) = raw_get(tap.listen_addr()).await;
    assert_eq!(got, body);
    assert!(
        got_sizes.len() >= 2,
        "{got_sizes:?}: events written apart were held together"
    );
}

#[tokio::test]
async fn a_trailer_section_after_gathered_chunks_ends_the_body_cleanly() {
    let body = events(6);
    let up = raw_upstream(
        chunked(&body, &[40, 7, 100], Some("x-checksum: abc\r\n")),
        vec![],
    )
    .await;
    let tap = proxy(config(up)).await;
    let (_, got) = raw_get(tap.listen_addr()).await;
    assert_eq!(got, body);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The law for chunked bodies: the caller receives exactly the
    /// upstream's bytes, whatever the chunk sizes and the cuts on the wire.
    #[test]
    fn caller_gets_the_upstream_bytes_whatever_the_chunks(
        body in proptest::collection::vec(any::<u8>(), 0..6000),
        sizes in proptest::collection::vec(1usize..700, 1..8),
        mut cuts in proptest::collection::vec(0usize..7000, 0..12),
    ) {
        cuts.sort_unstable();
        let rt = case_runtime();
        let got = rt.block_on(async {
            let up = raw_upstream(chunked(&body, &sizes, None), cuts).await;
            let tap = proxy(config(up)).await;
            raw_get(tap.listen_addr()).await.1
        });
        prop_assert_eq!(&got[..], &body[..]);
    }
}
