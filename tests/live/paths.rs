//! The live path's edges through the running proxy: bodies over the
//! analysis limit, compressed responses, and how a stream ends (upstream
//! death, caller hang-up). The caller's bytes always equal the upstream's.

use std::io::Write;

use crate::support::a2a::*;
use crate::support::{metric, tap::Proxy, total, Hold, Proxied, Reply, Upstream, NAME};
use flate2::write::{GzEncoder, ZlibEncoder};
use flate2::Compression;
use serde_json::json;

async fn setup(extra: &str) -> (Upstream, Proxy) {
    let up = Upstream::start().await;
    let proxy = Proxy::start(up.addr, extra).await;
    (up, proxy)
}

fn stream_req(id: i64) -> String {
    request(json!(id), "SendStreamingMessage", new_message())
}

/// A stream answer of `events`: the first two frames go at once, the rest
/// and the end only once the returned hold is released.
fn held_after_two(events: &[serde_json::Value]) -> (Reply, Hold) {
    let hold = Hold::after(2);
    let mut r = Reply::sse(&frames(1, events));
    r.hold = Some(hold.clone());
    (r, hold)
}

fn skipped(scrape: &str, reason: &str) -> Option<f64> {
    metric(
        scrape,
        "a2a_analysis_skipped_total",
        &[("upstream", NAME), ("reason", reason)],
    )
}

#[tokio::test]
async fn json_body_over_the_limit_is_skipped_not_judged() {
    let (up, p) = setup("[analysis]\nmax_body_bytes = 256\n").await;
    // Over the limit: a violation (blocking send returned working), unjudged.
    let mut big = task("t-big", "c", "TASK_STATE_WORKING");
    big["task"]["metadata"] = json!({"pad": "x".repeat(400)});
    let body = rpc(json!(1), big);
    assert!(body.len() > 256);
    pass(
        &up,
        &p,
        "/",
        V1,
        &request(json!(1), "SendMessage", new_message()),
        Reply::json(200, &body),
    )
    .await;
    // Under the limit: the same violation is judged (the limit is what spared the first).
    let small = rpc(json!(2), task("t-small", "c", "TASK_STATE_WORKING"));
    assert!(small.len() <= 256);
    pass(
        &up,
        &p,
        "/",
        V1,
        &request(json!(2), "SendMessage", new_message()),
        Reply::json(200, &small),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["blocking_returned_active"], "{recs:#?}");
    assert_eq!(recs[0]["task_id"], "t-small");
    let scrape = p.metrics().await;
    assert_eq!(skipped(&scrape, "body_too_large"), Some(1.0), "{scrape}");
}

pub(super) fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

pub(super) fn zlib(b: &[u8]) -> Vec<u8> {
    let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

/// A valid brotli stream of stored (uncompressed) meta-blocks: no brotli
/// encoder is a dependency, and the format allows this.
pub(super) fn brotli_stored(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, block) in b.chunks(1 << 16).enumerate() {
        let m = (block.len() - 1) as u32;
        // Bits, LSB first: [WBITS=16: 0, first block only], ISLAST=0,
        // MNIBBLES=4 (00), MLEN-1 (16 bits), ISUNCOMPRESSED=1; zero padding.
        let (bits, n) = if i == 0 {
            ((m << 4) | (1 << 20), 21)
        } else {
            ((m << 3) | (1 << 19), 20)
        };
        out.extend_from_slice(&bits.to_le_bytes()[..(n as usize).div_ceil(8)]);
        out.extend_from_slice(block);
    }
    out.push(0b11); // ISLAST, ISLASTEMPTY
    out
}

/// An SSE reply compressed with `enc`, cut into small chunks.
fn compressed(frames: &[String], enc: &str) -> Reply {
    let plain = Reply::sse(frames).bytes();
    let packed = match enc {
        "gzip" => gzip(&plain),
        "deflate" => zlib(&plain),
        _ => brotli_stored(&plain),
    };
    if enc == "br" {
        let mut dec = brotli_decompressor::DecompressorWriter::new(Vec::new(), 4096);
        dec.write_all(&packed).unwrap();
        assert_eq!(
            dec.into_inner().unwrap(),
            plain,
            "the stored brotli stream is valid"
        );
    }
    let mut r = Reply::sse(&[]).header("content-encoding", enc);
    r.chunks = packed
        .chunks(17)
        .map(bytes::Bytes::copy_from_slice)
        .collect();
    r
}

#[tokio::test]
async fn compressed_streams_are_judged_decoded_and_forwarded_as_sent() {
    let (up, p) = setup("").await;
    for (id, enc) in [(1, "gzip"), (2, "deflate"), (3, "br")] {
        let t = format!("t-{enc}");
        // Look-alike first: the artifact closed properly.
        let ok = frames(
            id,
            &[
                task(&format!("{t}-ok"), "c", "TASK_STATE_WORKING"),
                artifact(&format!("{t}-ok"), "c", "a1", false, true),
                status(&format!("{t}-ok"), "c", "TASK_STATE_COMPLETED"),
            ],
        );
        let reply = compressed(&ok, enc);
        let want = reply.bytes();
        up.push(reply);
        let (_, head, got) = p.request("POST", "/", V1, &stream_req(id)).await;
        assert_eq!(
            got, want,
            "{enc}: caller gets the compressed bytes unchanged"
        );
        assert_eq!(
            head.get("content-encoding").and_then(|v| v.to_str().ok()),
            Some(enc)
        );
        let bad = frames(
            id,
            &[
                task(&t, "c", "TASK_STATE_WORKING"),
                artifact(&t, "c", "a1", false, false),
                status(&t, "c", "TASK_STATE_COMPLETED"),
            ],
        );
        pass(&up, &p, "/", V1, &stream_req(id), compressed(&bad, enc)).await;
    }
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["abandoned_artifact"; 3], "{recs:#?}");
    for (r, t) in recs.iter().zip(["t-gzip", "t-deflate", "t-br"]) {
        assert_eq!(r["task_id"], t);
        assert_eq!(r["severity"], "error");
        assert_eq!(r["event_index"], 2);
        // Evidence is the decoded frame, not compressed bytes.
        assert!(
            r["evidence"]
                .as_str()
                .unwrap()
                .contains("TASK_STATE_COMPLETED"),
            "{r}"
        );
    }
    let scrape = p.metrics().await;
    assert_eq!(skipped(&scrape, "content_encoding"), Some(0.0), "{scrape}");
}

#[tokio::test]
async fn corrupt_compressed_stream_is_skipped_without_a_finding() {
    let (up, p) = setup("").await;
    let mut r = Reply::sse(&[]).header("content-encoding", "gzip");
    r.chunks = vec![bytes::Bytes::from_static(
        b"this is not gzip at all, data: {}\n\n",
    )];
    pass(&up, &p, "/", V1, &stream_req(1), r).await;
    let recs = settle(&up, &p).await;
    assert!(recs.is_empty(), "{recs:#?}");
    assert_eq!(skipped(&p.metrics().await, "content_encoding"), Some(1.0));
}

#[tokio::test]
async fn upstream_dying_mid_stream_while_working_is_truncation() {
    let (up, p) = setup("").await;
    // The frames go out, then (once the caller has them) the upstream dies.
    let (mut r, hold) = held_after_two(&[
        task("t-1", "c", "TASK_STATE_SUBMITTED"),
        status("t-1", "c", "TASK_STATE_WORKING"),
    ]);
    r.die = true;
    let sent = r.chunks.clone();
    up.push(r);
    let (mut caller, mut got) = p
        .post_until("/", V1, &stream_req(1), "TASK_STATE_WORKING")
        .await;
    hold.release.notify_one();
    read_to_end(&mut caller, &mut got).await;
    // Chunked framing aside, every upstream frame reached the caller intact and in order.
    let text = String::from_utf8_lossy(&got);
    let mut at = 0;
    for chunk in &sent {
        let c = std::str::from_utf8(chunk).unwrap();
        at += text[at..]
            .find(c)
            .unwrap_or_else(|| panic!("frame {c:?} missing after byte {at}: {text}"))
            + c.len();
    }
    assert!(
        !text.ends_with("0\r\n\r\n"),
        "a dead upstream must not look like a clean end: {text}"
    );
    let outcome = |s: &str, o| {
        metric(
            s,
            "a2a_stream_duration_seconds_count",
            &[("upstream", NAME), ("outcome", o)],
        )
    };
    p.wait_metrics("a truncated stream", |s| {
        outcome(s, "truncated") == Some(1.0)
    })
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["stream_truncated"], "{recs:#?}");
    check_fields(&recs[0]);
    assert_eq!(recs[0]["severity"], "warning");
    assert_eq!(recs[0]["task_id"], "t-1");
    let scrape = p.metrics().await;
    assert_eq!(outcome(&scrape, "client_gone"), Some(0.0), "{scrape}");
}

#[tokio::test]
async fn a_finding_on_an_open_stream_is_reported_before_the_stream_ends() {
    let (up, p) = setup("").await;
    // The second frame is for another task; the stream then stays open.
    let (r, hold) = held_after_two(&[
        task("t-1", "c", "TASK_STATE_SUBMITTED"),
        status("t-2", "c", "TASK_STATE_WORKING"),
        status("t-1", "c", "TASK_STATE_COMPLETED"),
    ]);
    up.push(r);
    let (mut caller, mut got) = p
        .post_until("/", V1, &stream_req(1), "TASK_STATE_WORKING")
        .await;
    // Judged as it passed, not held back until the end.
    let recs = p.wait_records(1).await;
    assert_eq!(kinds(&recs), ["task_id_mismatch"], "{recs:#?}");
    assert_eq!(recs[0]["task_id"], "t-1");
    assert!(
        recs[0]["evidence"].as_str().unwrap().contains("t-2"),
        "{}",
        recs[0]
    );
    hold.release.notify_one();
    read_until_end_chunk(&mut caller, &mut got).await;
    assert!(String::from_utf8_lossy(&got).contains("TASK_STATE_COMPLETED"));
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["task_id_mismatch"], "{recs:#?}");
}

/// Reads until the chunked response's last chunk (bounded).
async fn read_until_end_chunk(tcp: &mut tokio::net::TcpStream, got: &mut Vec<u8>) {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 8192];
    while !got.ends_with(b"0\r\n\r\n") {
        match tokio::time::timeout(std::time::Duration::from_secs(10), tcp.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
            other => panic!("the response never ended: {other:?}"),
        }
    }
}

/// Reads until the proxy closes the connection (bounded).
async fn read_to_end(tcp: &mut tokio::net::TcpStream, got: &mut Vec<u8>) {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 8192];
    loop {
        match tokio::time::timeout(std::time::Duration::from_secs(10), tcp.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return,
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => panic!("the proxy never closed the caller's connection"),
        }
    }
}

#[tokio::test]
async fn caller_hanging_up_mid_stream_is_not_truncation() {
    let (up, p) = setup("").await;
    let (r, hold) = held_after_two(&[
        task("t-1", "c", "TASK_STATE_SUBMITTED"),
        status("t-1", "c", "TASK_STATE_WORKING"),
        status("t-1", "c", "TASK_STATE_COMPLETED"),
    ]);
    up.push(r);
    let (caller, got) = p
        .post_until("/", V1, &stream_req(1), "TASK_STATE_WORKING")
        .await;
    assert!(String::from_utf8_lossy(&got).contains("TASK_STATE_SUBMITTED"));
    drop(caller);
    // The proxy lets go of the upstream's stream, and reports the end.
    tokio::time::timeout(std::time::Duration::from_secs(10), hold.dropped.notified())
        .await
        .expect("proxy dropped the upstream stream after the caller left");
    p.wait_metrics("a client_gone stream", |s| {
        metric(
            s,
            "a2a_stream_duration_seconds_count",
            &[("upstream", NAME), ("outcome", "client_gone")],
        ) == Some(1.0)
    })
    .await;
    let recs = settle(&up, &p).await;
    assert!(
        recs.is_empty(),
        "a caller hanging up is not stream_truncated: {recs:#?}"
    );
    let scrape = p.metrics().await;
    assert_eq!(
        total(
            &scrape,
            "a2a_violations_total",
            &[("kind", "stream_truncated"), ("severity", "warning")]
        ),
        Some(0.0)
    );
    assert_eq!(
        metric(&scrape, "a2a_streams_active", &[("upstream", NAME)]),
        Some(0.0),
        "{scrape}"
    );
}

#[tokio::test]
async fn compressed_json_bodies_are_judged_too() {
    let (up, p) = setup("").await;
    for (id, enc) in [(1, "gzip"), (2, "deflate"), (3, "br")] {
        let body = rpc(
            json!(id),
            task(&format!("t-{enc}"), "c", "TASK_STATE_WORKING"),
        );
        let packed = match enc {
            "gzip" => gzip(body.as_bytes()),
            "deflate" => zlib(body.as_bytes()),
            _ => brotli_stored(body.as_bytes()),
        };
        let mut r = Reply::json(200, "").header("content-encoding", enc);
        r.chunks = packed
            .chunks(5)
            .map(bytes::Bytes::copy_from_slice)
            .collect();
        let req = request(json!(id), "SendMessage", new_message());
        pass(&up, &p, "/", V1, &req, r).await;
    }
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["blocking_returned_active"; 3], "{recs:#?}");
    for (r, t) in recs.iter().zip(["t-gzip", "t-deflate", "t-br"]) {
        assert_eq!(r["task_id"], t);
        assert!(r["evidence"].as_str().unwrap().contains(t), "{r}");
    }
}

#[tokio::test]
async fn bytes_analysis_could_not_take_leave_the_exchange_unjudged() {
    let (up, p) = setup("[analysis]\nqueue_bytes = 200\n").await;
    // A would-be abandoned artifact whose artifact frame alone exceeds
    // what analysis may hold: forwarded whole, never judged.
    let mut big = artifact("t-1", "c", "a1", false, false);
    big["artifactUpdate"]["artifact"]["parts"] = json!([{"text": "x".repeat(300)}]);
    let evs = [
        task("t-1", "c", "TASK_STATE_WORKING"),
        big,
        status("t-1", "c", "TASK_STATE_COMPLETED"),
    ];
    pass(
        &up,
        &p,
        "/",
        V1,
        &stream_req(1),
        Reply::sse(&frames(1, &evs)),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert!(
        recs.is_empty(),
        "no finding from a half-seen stream: {recs:#?}"
    );
    assert_eq!(skipped(&p.metrics().await, "overload"), Some(1.0));
}
