//! Request bodies on the HTTP/1.1 upstream leg (`proxy/pool/h1`): a
//! caller's chunked upload reaches the upstream whole and chunked, an
//! upstream that answers before reading a large upload has that answer
//! reach the caller, and a request body ends where the caller framed it,
//! however it is cut on the wire (property test).

use std::time::Duration;

use http::Response;
use http_body_util::BodyExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::*;

#[tokio::test]
async fn a_chunked_upload_reaches_the_upstream_chunked_and_whole() {
    let up = upstream(|req| async move {
        let chunked = req
            .headers()
            .get("transfer-encoding")
            .is_some_and(|v| v == "chunked");
        let length = req.headers().get("content-length").is_some();
        let body = req.into_body().collect().await.map(|b| b.to_bytes());
        let body = body.unwrap_or_default();
        let line = format!("chunked={chunked} length={length} bytes={}\n", body.len());
        let mut out = line.into_bytes();
        out.extend_from_slice(&body);
        Response::new(full(out))
    })
    .await;
    let tap = proxy(config(up)).await;
    let mut s = TcpStream::connect(tap.listen_addr())
        .await
        .expect("connect");
    s.write_all(
        b"POST /up HTTP/1.1\r\nhost: x\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n",
    )
    .await
    .expect("head");
    let mut sent = Vec::new();
    for i in 0..20u8 {
        let piece = vec![b'a' + i; 1000 + usize::from(i) * 37];
        let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
        chunk.extend_from_slice(&piece);
        chunk.extend_from_slice(b"\r\n");
        s.write_all(&chunk).await.expect("chunk");
        sent.extend_from_slice(&piece);
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    s.write_all(b"0\r\n\r\n").await.expect("end");
    let answer = crate::hostile::until_closed(&mut s).await;
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let line = format!("chunked=true length=false bytes={}\n", sent.len());
    let at = text
        .find(&line)
        .unwrap_or_else(|| panic!("{line:?} in {text}"));
    assert!(
        &answer[at + line.len()..] == sent.as_slice(),
        "the upload reached the upstream whole"
    );
}

#[tokio::test]
async fn an_upstream_answering_before_reading_a_large_upload_is_passed_on() {
    // It reads the head only, answers, and is gone, the upload unread.
    let up = crate::hostile::raw_upstream(
        b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 9\r\nconnection: close\r\n\r\ntoo large",
    )
    .await;
    let tap = proxy(config(up)).await;
    let mut s = TcpStream::connect(tap.listen_addr())
        .await
        .expect("connect");
    let total = 8 * 1024 * 1024;
    s.write_all(
        format!("POST /up HTTP/1.1\r\nhost: x\r\ncontent-length: {total}\r\n\r\n").as_bytes(),
    )
    .await
    .expect("head");
    let (mut reader, mut writer) = s.into_split();
    let upload = tokio::spawn(async move {
        let piece = vec![b'x'; 64 * 1024];
        for _ in 0..total / piece.len() {
            if writer.write_all(&piece).await.is_err() {
                return;
            }
        }
    });
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("too large") {
        match within("the answer", reader.read(&mut buf)).await {
            Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.ends_with("too large"), "{text}");
    upload.abort();
}

/// `body` as a request body on the wire, chunked (chunks of the `sizes`
/// in turn) or told by `content-length`, with its framing header line.
fn framed(body: &[u8], sizes: &[usize], chunked: bool) -> (String, Vec<u8>) {
    if chunked {
        let wire = crate::chunked::chunked(body, sizes, None);
        ("transfer-encoding: chunked\r\n".to_owned(), wire)
    } else {
        (format!("content-length: {}\r\n", body.len()), body.to_vec())
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

    /// Where a caller's request ends is where the upstream sees it end,
    /// however the body is framed and the wire cut: the upstream gets the
    /// first request's body whole, then the request after it as a request
    /// of its own (one that bled into the body, or a body that bled into
    /// the next request, would be a smuggled request).
    #[test]
    fn a_request_body_ends_where_the_caller_framed_it_whatever_the_cuts(
        body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
        sizes in proptest::collection::vec(1usize..500, 1..6),
        chunked in proptest::prelude::any::<bool>(),
        mut cuts in proptest::collection::vec(0usize..3200, 0..10),
    ) {
        cuts.sort_unstable();
        let rt = case_runtime();
        let seen = rt.block_on(async {
            let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let up = upstream({
                let seen = seen.clone();
                move |req| {
                    let seen = seen.clone();
                    async move {
                        let path = req.uri().path().to_owned();
                        let body = req.into_body().collect().await.map(|b| b.to_bytes());
                        let body = body.map(|b| b.to_vec()).unwrap_or_default();
                        seen.lock().expect("seen").push((path, body));
                        Response::new(full("ok"))
                    }
                }
            })
            .await;
            let tap = proxy(config(up)).await;
            let (framing, framed_body) = framed(&body, &sizes, chunked);
            let mut wire = format!("POST /first HTTP/1.1\r\nhost: x\r\n{framing}\r\n").into_bytes();
            wire.extend_from_slice(&framed_body);
            wire.extend_from_slice(b"GET /second HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
            let mut s = TcpStream::connect(tap.listen_addr()).await.expect("connect");
            s.set_nodelay(true).expect("nodelay");
            write_cut(&mut s, &wire, &cuts).await.expect("write");
            let answers = crate::hostile::until_closed(&mut s).await;
            let text = String::from_utf8_lossy(&answers);
            assert_eq!(text.matches("HTTP/1.1 200").count(), 2, "two answers: {text}");
            let seen = seen.lock().expect("seen").clone();
            seen
        });
        proptest::prop_assert_eq!(
            seen,
            vec![("/first".to_owned(), body), ("/second".to_owned(), Vec::new())]
        );
    }
}
