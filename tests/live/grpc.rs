//! The gRPC binding judged through the running proxy, against a scripted
//! h2c upstream: the catalogue's kinds provoked on protobuf streams and
//! answers with their legal look-alikes silent, messages cut across DATA
//! frames at every offset and several in one, gzip messages, statuses in
//! trailers and trailers-only answers; the caller always gets the
//! upstream's bytes and trailers.

use a2a_tap::a2a::grpc::proto::{self, Payload, StreamResponse};
use prost::Message as _;
use serde_json::Value;

use crate::support::a2a::{check_fields, kinds};
use crate::support::grpc::{call, Answer, GrpcReply, GrpcUpstream};
use crate::support::tap::Proxy;
use crate::support::{total, Proxied};

const SSM: &str = "/lf.a2a.v1.A2AService/SendStreamingMessage";
const SEND: &str = "/lf.a2a.v1.A2AService/SendMessage";
const GET: &str = "/lf.a2a.v1.A2AService/GetTask";
const WORKING: i32 = 2;
const COMPLETED: i32 = 3;

fn status(state: i32) -> Option<proto::TaskStatus> {
    Some(proto::TaskStatus {
        state,
        timestamp: None,
    })
}

fn task_msg(id: &str, state: i32) -> proto::Task {
    proto::Task {
        id: id.into(),
        context_id: "c".into(),
        status: status(state),
        artifacts: vec![],
    }
}

fn stream(p: Payload) -> Vec<u8> {
    StreamResponse { payload: Some(p) }.encode_to_vec()
}

fn task(id: &str, state: i32) -> Vec<u8> {
    stream(Payload::Task(task_msg(id, state)))
}

fn update(id: &str, state: i32) -> Vec<u8> {
    stream(Payload::StatusUpdate(proto::StatusUpdate {
        task_id: id.into(),
        context_id: "c".into(),
        status: status(state),
    }))
}

fn artifact(id: &str, append: bool, last: bool) -> Vec<u8> {
    stream(Payload::ArtifactUpdate(proto::ArtifactUpdate {
        task_id: id.into(),
        context_id: "c".into(),
        artifact: Some(proto::ArtifactId {
            artifact_id: "a".into(),
        }),
        append,
        last_chunk: last,
    }))
}

fn send_request(task_id: &str, return_immediately: bool) -> Vec<u8> {
    proto::SendRequest {
        message: Some(proto::Message {
            message_id: "m-1".into(),
            context_id: String::new(),
            task_id: task_id.into(),
        }),
        configuration: Some(proto::SendConfig { return_immediately }),
    }
    .encode_to_vec()
}

fn get_request(id: &str) -> Vec<u8> {
    proto::IdRequest { id: id.into() }.encode_to_vec()
}

/// A `google.rpc.Status` with an ErrorInfo naming `reason` in `domain`.
fn details(reason: &str, domain: &str) -> Vec<u8> {
    let info = proto::ErrorInfo {
        reason: reason.into(),
        domain: domain.into(),
    };
    proto::RpcStatus {
        code: 0,
        details: vec![proto::Any {
            type_url: "type.googleapis.com/google.rpc.ErrorInfo".into(),
            value: info.encode_to_vec(),
        }],
    }
    .encode_to_vec()
}

/// One call, checked: the caller got the upstream's body and status.
async fn exchange(
    up: &GrpcUpstream,
    p: &Proxy,
    path: &str,
    req: &[u8],
    reply: GrpcReply,
) -> Answer {
    let want = reply.bytes();
    let want_status = reply
        .trailers
        .as_ref()
        .and_then(|t| t.get("grpc-status").cloned())
        .or_else(|| {
            reply
                .head
                .iter()
                .find(|(k, _)| k == "grpc-status")
                .map(|(_, v)| v.parse().unwrap())
        });
    up.push(reply);
    let got = call(p.listen, path, req).await;
    assert_eq!(got.body, want, "forwarded bytes differ from upstream bytes");
    let status = got
        .trailers
        .as_ref()
        .and_then(|t| t.get("grpc-status").cloned())
        .or_else(|| got.head.headers.get("grpc-status").cloned());
    assert_eq!(status, want_status, "the status passes unchanged");
    got
}

/// The sentinel: a stream whose one message is 77 bytes that are no
/// StreamResponse; every record before its own is what came before.
async fn settle(up: &GrpcUpstream, p: &Proxy) -> Vec<Value> {
    let mut junk = vec![0x0a, 75];
    junk.extend(std::iter::repeat_n(0xff, 75));
    exchange(
        up,
        p,
        SSM,
        &send_request("", false),
        GrpcReply::messages(&[junk]),
    )
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let recs = p.records();
        let at = recs.iter().position(|r| {
            r["evidence"]
                .as_str()
                .is_some_and(|e| e.starts_with("[77 bytes of protobuf"))
        });
        if let Some(at) = at {
            return recs[..at].to_vec();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no sentinel: {recs:#?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_legal_stream_is_silent_cut_at_every_offset() {
    let up = GrpcUpstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    // A task of its own per stream (ids of one length: the cuts stay put).
    let legal = |n: usize| {
        let id = format!("t-{n:04}");
        GrpcReply::messages(&[
            task(&id, WORKING),
            artifact(&id, false, false),
            artifact(&id, true, true),
            update(&id, COMPLETED),
        ])
    };
    let len = legal(0).bytes().len();
    // All four messages in one DATA frame, then every two-piece cut.
    exchange(&up, &p, SSM, &send_request("", false), legal(0).cut_at(&[])).await;
    for cut in 1..len {
        let reply = legal(cut).cut_at(&[cut]);
        exchange(&up, &p, SSM, &send_request("", false), reply).await;
    }
    // One byte a DATA frame.
    let bytes: Vec<usize> = (1..len).collect();
    exchange(
        &up,
        &p,
        SSM,
        &send_request("", false),
        legal(len).cut_at(&bytes),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert!(recs.is_empty(), "{recs:#?}");
    let scrape = crate::support::scrape(&p.app).await;
    let events = total(
        &scrape,
        "a2a_stream_events_total",
        &[("binding", "grpc"), ("event", "status_update")],
    );
    assert_eq!(
        events,
        Some(len as f64 + 1.0),
        "one completed update per stream"
    );
}

#[tokio::test]
async fn the_catalogue_on_grpc_streams() {
    let up = GrpcUpstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    let cases: [(&str, Vec<Vec<u8>>); 10] = [
        (
            "terminal_exit",
            vec![
                task("t-1", WORKING),
                update("t-1", COMPLETED),
                update("t-1", WORKING),
            ],
        ),
        (
            "task_id_mismatch",
            vec![
                task("t-2", WORKING),
                update("t-other", COMPLETED),
                update("t-2", COMPLETED),
            ],
        ),
        (
            "abandoned_artifact",
            vec![
                task("t-3", WORKING),
                artifact("t-3", false, false),
                update("t-3", COMPLETED),
            ],
        ),
        ("unspecified_state", vec![task("t-4", 0)]),
        ("unknown_state", vec![task("t-5", 42)]),
        (
            "stream_start",
            vec![update("t-6", WORKING), update("t-6", COMPLETED)],
        ),
        (
            "sealed_artifact_updated",
            vec![
                task("t-7", WORKING),
                artifact("t-7", false, true),
                artifact("t-7", true, true),
                update("t-7", COMPLETED),
            ],
        ),
        (
            "event_after_terminal",
            vec![
                task("t-8", WORKING),
                update("t-8", COMPLETED),
                artifact("t-8", false, true),
            ],
        ),
        ("stream_truncated", vec![task("t-9", WORKING)]),
        (
            "malformed_event",
            vec![
                task("t-10", WORKING),
                vec![0x1a, 0x02, 0x08],
                update("t-10", COMPLETED),
            ],
        ),
    ];
    for (_, msgs) in &cases {
        exchange(
            &up,
            &p,
            SSM,
            &send_request("", false),
            GrpcReply::messages(msgs),
        )
        .await;
    }
    let recs = settle(&up, &p).await;
    let want: Vec<&str> = cases.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds(&recs), want);
    for r in &recs {
        check_fields(r);
        assert_eq!(r["binding"], "grpc", "{r}");
        assert_eq!(r["method"], "SendStreamingMessage", "{r}");
        assert_eq!(r["version"], "1.0", "{r}");
    }
    // The evidence of a message is its proto3 JSON.
    let exit = &recs[0];
    assert_eq!(exit["event_index"], 2);
    let evidence: Value = serde_json::from_str(exit["evidence"].as_str().unwrap()).unwrap();
    assert_eq!(
        evidence["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    let scrape = crate::support::scrape(&p.app).await;
    let v = total(
        &scrape,
        "a2a_violations_total",
        &[("kind", "terminal_exit")],
    );
    assert_eq!(v, Some(1.0));
}

/// gzip messages (`grpc-encoding: gzip`) are undone for judging only.
#[tokio::test]
async fn gzip_messages_are_judged_as_the_plain_ones() {
    let up = GrpcUpstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    let legal = [task("t-g", WORKING), update("t-g", COMPLETED)];
    exchange(
        &up,
        &p,
        SSM,
        &send_request("", false),
        GrpcReply::gzip(&legal).cut_at(&[3, 9, 30]),
    )
    .await;
    let exit = [
        task("t-h", WORKING),
        update("t-h", COMPLETED),
        update("t-h", WORKING),
    ];
    exchange(
        &up,
        &p,
        SSM,
        &send_request("", false),
        GrpcReply::gzip(&exit),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["terminal_exit"], "{recs:#?}");
    assert_eq!(recs[0]["task_id"], "t-h");
}

/// Unary calls and statuses: a task's terminal state known across calls,
/// a blocking send answered active, a message to a finished task accepted,
/// and a status that is not the one the specification maps its error to.
/// Look-alikes: the mapped statuses (both tables), a refused stream
/// (trailers-only), `return_immediately`.
#[tokio::test]
async fn unary_answers_and_statuses() {
    let up = GrpcUpstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    let unary = |m: proto::Task| GrpcReply::messages(&[m.encode_to_vec()]);
    let sent = |m: proto::Task| GrpcReply::messages(&[stream(Payload::Task(m))]);
    // Look-alikes.
    exchange(
        &up,
        &p,
        SEND,
        &send_request("", true),
        sent(task_msg("t-a", WORKING)),
    )
    .await;
    let not_found = details("TASK_NOT_FOUND", "a2a-protocol.org");
    exchange(
        &up,
        &p,
        GET,
        &get_request("t-x"),
        GrpcReply::trailers_only(5, Some(&not_found)),
    )
    .await;
    let unsupported = details("UNSUPPORTED_OPERATION", "a2a-protocol.org");
    for code in [12, 9] {
        exchange(
            &up,
            &p,
            SSM,
            &send_request("", false),
            GrpcReply::trailers_only(code, Some(&unsupported)),
        )
        .await;
    }
    // Provoked.
    exchange(
        &up,
        &p,
        GET,
        &get_request("t-u"),
        unary(task_msg("t-u", COMPLETED)),
    )
    .await;
    exchange(
        &up,
        &p,
        GET,
        &get_request("t-u"),
        unary(task_msg("t-u", WORKING)),
    )
    .await;
    exchange(
        &up,
        &p,
        SEND,
        &send_request("", false),
        sent(task_msg("t-b", WORKING)),
    )
    .await;
    exchange(
        &up,
        &p,
        GET,
        &get_request("t-c"),
        unary(task_msg("t-c", COMPLETED)),
    )
    .await;
    exchange(
        &up,
        &p,
        SEND,
        &send_request("t-c", false),
        sent(task_msg("t-c", COMPLETED)),
    )
    .await;
    exchange(
        &up,
        &p,
        GET,
        &get_request("t-y"),
        GrpcReply::trailers_only(13, Some(&not_found)),
    )
    .await;
    let foreign = details("TASK_NOT_FOUND", "example.com");
    exchange(
        &up,
        &p,
        GET,
        &get_request("t-z"),
        GrpcReply::trailers_only(5, Some(&foreign)),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(
        kinds(&recs),
        [
            "terminal_exit",
            "blocking_returned_active",
            "terminal_task_accepted",
            "error_code_mismatch",
            "error_code_mismatch"
        ],
        "{recs:#?}"
    );
    let detail = |i: usize| recs[i]["detail"].as_str().unwrap().to_owned();
    assert!(
        detail(3).contains("over gRPC with status 5 (NOT_FOUND)"),
        "{}",
        detail(3)
    );
    assert!(
        detail(3).ends_with("it came with 13 (INTERNAL)"),
        "{}",
        detail(3)
    );
    assert!(
        detail(4).contains("domain \"a2a-protocol.org\""),
        "{}",
        detail(4)
    );
    for r in &recs {
        check_fields(r);
        assert_eq!(r["binding"], "grpc");
    }
}

/// An upstream that cannot be reached answers a gRPC caller with a gRPC
/// status (UNAVAILABLE), not an HTTP 502 page.
#[tokio::test]
async fn an_unreachable_upstream_is_a_grpc_status() {
    let (_refusing, closed) = crate::support::ports::refused();
    let p = Proxy::start(closed, "").await;
    let got = call(p.listen, GET, &get_request("t")).await;
    assert_eq!(got.head.status, 200);
    assert_eq!(got.head.headers["content-type"], "application/grpc");
    assert_eq!(got.head.headers["grpc-status"], "14");
    let message = got.head.headers["grpc-message"].to_str().unwrap();
    assert!(
        message.starts_with("a2a-tap: upstream connect"),
        "{message}"
    );
    assert!(got.body.is_empty());
}

/// Status details of about `len` bytes once in base64: the A2A error's
/// `ErrorInfo` and a long `DebugInfo`, as a server with stack traces sends.
fn large_details(len: usize) -> Vec<u8> {
    let mut status = proto::RpcStatus::decode(&details("TASK_NOT_FOUND", "a2a-protocol.org")[..])
        .expect("status");
    status.details.push(proto::Any {
        type_url: "type.googleapis.com/google.rpc.DebugInfo".into(),
        value: vec![b'x'; len * 3 / 4],
    });
    status.encode_to_vec()
}

/// The status a call ended with and its details: in the trailers, or in
/// the head of a trailers-only answer.
fn ending(a: &Answer) -> (Option<http::HeaderValue>, Option<http::HeaderValue>) {
    let from = a.trailers.as_ref().unwrap_or(&a.head.headers);
    (
        from.get("grpc-status").cloned(),
        from.get("grpc-status-details-bin").cloned(),
    )
}

/// Forwarding does not change an answer: a trailers-only answer with 40 KB
/// of `grpc-status-details-bin`, and a status with the same details in the
/// trailers after a message, reach the caller as they reach it directly
/// (on main, hyper's 16 KiB header-list limit on the upstream client made
/// the first `14 UNAVAILABLE` and cut the details off the second).
#[tokio::test]
async fn large_status_details_arrive_as_sent() {
    const NOT_FOUND: u32 = 5;
    let up = GrpcUpstream::start().await;
    let p = Proxy::start(up.addr, "").await;
    let big = large_details(40_000);
    let replies = [
        GrpcReply::trailers_only(NOT_FOUND, Some(&big)),
        GrpcReply::messages(&[task_msg("t-1", WORKING).encode_to_vec()])
            .status(NOT_FOUND, Some(&big)),
    ];
    for reply in replies {
        up.push(reply.clone());
        let direct = call(up.addr, GET, &get_request("t-1")).await;
        let (status, details) = ending(&direct);
        assert_eq!(status.as_ref().map(|s| s.as_bytes()), Some(&b"5"[..]));
        let details = details.expect("details, directly");
        assert!(details.len() >= 40_000, "{}", details.len());
        up.push(reply);
        let proxied = call(p.listen, GET, &get_request("t-1")).await;
        assert_eq!(proxied.head.status, direct.head.status);
        let (got_status, got_details) = ending(&proxied);
        let size = |d: &Option<http::HeaderValue>| d.as_ref().map(http::HeaderValue::len);
        assert_eq!(
            (&got_status, size(&got_details)),
            (&status, Some(details.len())),
            "the answer changed (status, details' length)"
        );
        assert!(got_details == Some(details), "the details changed");
        assert_eq!(proxied.body, direct.body);
        assert_eq!(proxied.trailers.is_some(), direct.trailers.is_some());
    }
}

/// A header list over `proxy.max_header_list_size` is still refused (the
/// bound holds), as `13 INTERNAL` (the same answer would be refused again)
/// counted under its own reason, `protocol`.
#[tokio::test]
async fn a_header_list_over_the_limit_is_refused_and_counted() {
    let up = GrpcUpstream::start().await;
    let p = Proxy::start(up.addr, "[proxy]\nmax_header_list_size = \"16KiB\"\n").await;
    up.push(GrpcReply::trailers_only(5, Some(&large_details(40_000))));
    let got = call(p.listen, GET, &get_request("t-1")).await;
    assert_eq!(got.head.headers["grpc-status"], "13");
    p.wait_metrics("the refusal counted", |s| {
        total(s, "a2a_upstream_errors_total", &[("reason", "protocol")]) == Some(1.0)
    })
    .await;
}
