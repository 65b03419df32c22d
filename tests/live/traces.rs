//! Traces through the running proxy: an OTLP/HTTP receiver in the test
//! decodes what a2a-tap exports (the official trace.proto messages) and
//! checks the span of a streamed send, of a blocking send and of a
//! violating stream; the caller's trace is continued; nothing is exported
//! with tracing off or for an unsampled caller; a dead collector changes
//! neither traffic nor findings and counts its drops.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_tap::trace::context::TraceParent;
use a2a_tap::trace::otlp::{self, ExportTraceServiceRequest, Value as Any};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use prost::Message;
use serde_json::json;

use crate::support::a2a::*;
use crate::support::{metric, tap::Proxy, Proxied, Reply, Upstream};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

/// An OTLP/HTTP receiver: every span POSTed to `/v1/traces`, decoded.
struct Collector {
    addr: SocketAddr,
    spans: Arc<Mutex<Vec<(otlp::Resource, otlp::Span)>>>,
}

impl Collector {
    async fn start() -> Collector {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let spans: Arc<Mutex<Vec<_>>> = Arc::default();
        let got = spans.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let got = got.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        move |req: http::Request<hyper::body::Incoming>| {
                            let got = got.clone();
                            async move {
                                assert_eq!(req.uri().path(), "/v1/traces");
                                assert_eq!(req.headers()["content-type"], "application/x-protobuf");
                                let body =
                                    req.into_body().collect().await.expect("body").to_bytes();
                                let export =
                                    ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                                for rs in export.resource_spans {
                                    let resource = rs.resource.clone().expect("resource");
                                    for ss in rs.scope_spans {
                                        for s in ss.spans {
                                            got.lock().unwrap().push((resource.clone(), s));
                                        }
                                    }
                                }
                                Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(
                                    Bytes::new(),
                                )))
                            }
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Collector { addr, spans }
    }

    fn config(&self) -> String {
        format!(
            "[tracing]\nendpoint = \"http://{}\"\nbatch_delay = \"50ms\"\n",
            self.addr
        )
    }

    /// Waits until `n` spans came (bounded), then a little for any extra.
    async fn wait(&self, n: usize) -> Vec<(otlp::Resource, otlp::Span)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.spans.lock().unwrap().len() < n {
            assert!(
                Instant::now() < deadline,
                "{} of {n} spans came",
                self.spans.lock().unwrap().len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A kept sleep: extra spans, if any, have no signal to await.
        tokio::time::sleep(Duration::from_millis(200)).await;
        self.spans.lock().unwrap().clone()
    }
}

fn attr<'a>(span: &'a otlp::Span, key: &str) -> Option<&'a Any> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)?
        .value
        .as_ref()?
        .value
        .as_ref()
}

fn text(span: &otlp::Span, key: &str) -> String {
    match attr(span, key) {
        Some(Any::String(s)) => s.clone(),
        other => panic!("{key}: {other:?} in {span:#?}"),
    }
}

fn int(span: &otlp::Span, key: &str) -> i64 {
    match attr(span, key) {
        Some(Any::Int(i)) => *i,
        other => panic!("{key}: {other:?} in {span:#?}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn stream_req(id: i64) -> String {
    request(json!(id), "SendStreamingMessage", new_message())
}

#[tokio::test]
async fn a_streamed_send_is_a_child_span_of_the_callers_trace() {
    let collector = Collector::start().await;
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, &collector.config()).await;
    let evs = [
        task("t-1", "c", "TASK_STATE_SUBMITTED"),
        status("t-1", "c", "TASK_STATE_WORKING"),
        artifact("t-1", "c", "a1", false, true),
        status("t-1", "c", "TASK_STATE_COMPLETED"),
    ];
    let reply = Reply::sse(&frames(1, &evs));
    let want = reply.bytes();
    up.push(reply);
    let tp = format!("00-{TRACE}-{PARENT}-01");
    let headers = [
        ("A2A-Version", "1.0"),
        ("traceparent", tp.as_str()),
        ("tracestate", "vendor=x"),
    ];
    let (status, got) = p.send("POST", "/", &headers, &stream_req(1)).await;
    assert_eq!((status, got), (200, want), "traffic unchanged");
    let spans = collector.wait(1).await;
    assert_eq!(spans.len(), 1, "{spans:#?}");
    let (resource, s) = &spans[0];
    assert!(resource
        .attributes
        .iter()
        .any(|kv| kv.key == "service.name"));
    assert_eq!(hex(&s.trace_id), TRACE);
    assert_eq!(hex(&s.parent_span_id), PARENT);
    assert_eq!(s.span_id.len(), 8);
    assert_eq!(s.trace_state, "vendor=x");
    assert_eq!(s.name, "SendStreamingMessage");
    assert_eq!(s.kind, otlp::SPAN_KIND_SERVER);
    assert!(s.end_time_unix_nano >= s.start_time_unix_nano && s.start_time_unix_nano > 0);
    assert_eq!(text(s, "a2a.method.name"), "SendStreamingMessage");
    assert_eq!(text(s, "a2a.protocol.version"), "1.0");
    assert_eq!(text(s, "a2a.task.id"), "t-1");
    assert_eq!(text(s, "a2a.context.id"), "c");
    assert_eq!(text(s, "a2a.task.state"), "completed");
    let sent = new_message();
    assert_eq!(
        text(s, "a2a.message.id"),
        sent["message"]["messageId"].as_str().expect("messageId")
    );
    assert_eq!(text(s, "http.request.method"), "POST");
    assert_eq!(text(s, "url.path"), "/");
    assert_eq!(text(s, "rpc.system"), "jsonrpc");
    assert_eq!(int(s, "http.response.status_code"), 200);
    assert_eq!(int(s, "a2a.response.sse.event.count"), 4);
    assert!(matches!(
        attr(s, "a2a.response.time_to_first_event_ms"),
        Some(Any::Double(_))
    ));
    assert!(
        s.events.is_empty() && s.status.is_none(),
        "a clean stream: {s:#?}"
    );
}

#[tokio::test]
async fn findings_are_span_events_and_records_carry_the_trace_id() {
    let collector = Collector::start().await;
    let up = Upstream::start().await;
    let p = Proxy::start(up.addr, &collector.config()).await;
    // A root trace (no traceparent): the proxy's own trace id.
    let evs = [
        task("t-1", "c", "TASK_STATE_WORKING"),
        artifact("t-1", "c", "a1", false, false),
        status("t-1", "c", "TASK_STATE_COMPLETED"),
    ];
    exchange(&up, &p, stream_req(1), Reply::sse(&frames(1, &evs))).await;
    // A blocking send answered with a working task.
    let body = rpc(
        json!(2),
        task("t-2", "c", "TASK_STATE_WORKING")["task"].clone(),
    );
    exchange(
        &up,
        &p,
        request(json!(2), "SendMessage", new_message()),
        Reply::json(200, &body),
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(
        kinds(&recs),
        ["abandoned_artifact", "blocking_returned_active"],
        "{recs:#?}"
    );
    let spans = collector.wait(3).await;
    let by_name = |n: &str| {
        spans
            .iter()
            .map(|(_, s)| s)
            .find(|s| s.name == n)
            .unwrap_or_else(|| panic!("no {n} span: {spans:#?}"))
    };
    let stream = by_name("SendStreamingMessage");
    assert!(stream.parent_span_id.is_empty(), "a root span");
    assert_eq!(
        recs[0]["trace_id"],
        hex(&stream.trace_id),
        "the record names the span's trace"
    );
    let ev = &stream.events[0];
    assert_eq!(ev.name, "a2a.finding");
    let ev_attr = |k: &str| {
        ev.attributes
            .iter()
            .find(|kv| kv.key == k)
            .and_then(|kv| kv.value.clone()?.value)
    };
    assert_eq!(
        ev_attr("a2a.finding.kind"),
        Some(Any::String("abandoned_artifact".into()))
    );
    assert_eq!(
        ev_attr("a2a.finding.severity"),
        Some(Any::String("error".into()))
    );
    assert_eq!(ev_attr("a2a.finding.event_index"), Some(Any::Int(2)));
    assert_eq!(
        stream.status.as_ref().map(|s| s.code),
        Some(otlp::STATUS_ERROR)
    );
    let blocking = by_name("SendMessage");
    assert_eq!(blocking.events.len(), 1);
    assert_eq!(text(blocking, "a2a.task.state"), "working");
    assert!(
        attr(blocking, "a2a.response.sse.event.count").is_none(),
        "not a stream"
    );
    assert_ne!(
        blocking.trace_id, stream.trace_id,
        "each root its own trace"
    );
}

#[tokio::test]
async fn nothing_is_exported_off_or_unsampled_and_records_keep_the_callers_trace_id() {
    let collector = Collector::start().await;
    let up = Upstream::start().await;
    // Off: no endpoint. The record still names the caller's trace.
    let off = Proxy::start(up.addr, "").await;
    let bad = [
        task("t-1", "c", "TASK_STATE_WORKING"),
        artifact("t-1", "c", "a9", true, true),
        status("t-1", "c", "TASK_STATE_COMPLETED"),
    ];
    up.push(Reply::sse(&frames(1, &bad)));
    let tp = format!("00-{TRACE}-{PARENT}-01");
    off.send(
        "POST",
        "/",
        &[("A2A-Version", "1.0"), ("traceparent", tp.as_str())],
        &stream_req(1),
    )
    .await;
    let recs = settle(&up, &off).await;
    assert_eq!(recs.len(), 1, "{recs:#?}");
    assert_eq!(recs[0]["trace_id"], TRACE);
    // On, but the caller did not sample: no span (parent-based).
    let on = Proxy::start(up.addr, &collector.config()).await;
    up.push(Reply::sse(&frames(1, &bad)));
    let unsampled = format!("00-{TRACE}-{PARENT}-00");
    on.send(
        "POST",
        "/",
        &[("A2A-Version", "1.0"), ("traceparent", unsampled.as_str())],
        &stream_req(1),
    )
    .await;
    let recs = settle(&up, &on).await;
    assert_eq!(recs[0]["trace_id"], TRACE, "the caller's, sampled or not");
    // The sentinel stream of `settle` is a sampled root: one span, not two.
    let spans = collector.wait(1).await;
    assert_eq!(spans.len(), 1, "{spans:#?}");
    assert_ne!(hex(&spans[0].1.trace_id), TRACE);
}

#[tokio::test]
async fn a_dead_collector_changes_neither_traffic_nor_findings() {
    let (_refusing, addr) = crate::support::ports::refused();
    let up = Upstream::start().await;
    let config = format!(
        "[tracing]\nendpoint = \"http://{addr}\"\nbatch_delay = \"50ms\"\nexport_timeout = \"1s\"\n"
    );
    let p = Proxy::start(up.addr, &config).await;
    let evs = [
        task("t-1", "c", "TASK_STATE_WORKING"),
        artifact("t-1", "c", "a1", false, false),
        status("t-1", "c", "TASK_STATE_COMPLETED"),
    ];
    exchange(&up, &p, stream_req(1), Reply::sse(&frames(1, &evs))).await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["abandoned_artifact"]);
    p.wait_metrics("both spans dropped", |s| {
        metric(s, "a2a_trace_spans_dropped_total", &[]) == Some(2.0)
    })
    .await;
}

/// Off by default, the forwarded request keeps the caller's `traceparent`
/// (the agent's span stays the caller's child); with `propagate = true` it
/// names the proxy's span, the one exported, in the caller's trace.
#[tokio::test]
async fn propagate_makes_the_proxys_span_the_upstream_requests_parent() {
    let collector = Collector::start().await;
    let up = Upstream::start().await;
    let tp = format!("00-{TRACE}-{PARENT}-01");
    let headers = [("A2A-Version", "1.0"), ("traceparent", tp.as_str())];
    let clean = [
        task("t-1", "c", "TASK_STATE_WORKING"),
        status("t-1", "c", "TASK_STATE_COMPLETED"),
    ];
    let plain = Proxy::start(up.addr, &collector.config()).await;
    up.push(Reply::sse(&frames(1, &clean)));
    plain.send("POST", "/", &headers, &stream_req(1)).await;
    assert_eq!(
        up.request_headers()[0]["traceparent"],
        tp.as_str(),
        "unchanged by default"
    );

    let config = format!("{}propagate = true\n", collector.config());
    let p = Proxy::start(up.addr, &config).await;
    up.push(Reply::sse(&frames(1, &clean)));
    p.send("POST", "/", &headers, &stream_req(1)).await;
    let sent = up.request_headers()[1]["traceparent"]
        .to_str()
        .unwrap()
        .to_owned();
    let spans = collector.wait(2).await;
    let parent = TraceParent::parse(&sent).expect("a valid traceparent upstream");
    assert_eq!(hex(&parent.trace_id), TRACE, "the caller's trace");
    let ours = spans
        .iter()
        .map(|(_, s)| s)
        .find(|s| s.span_id == parent.span_id)
        .unwrap_or_else(|| panic!("no exported span is the upstream's parent {sent}: {spans:#?}"));
    assert_eq!(
        hex(&ours.parent_span_id),
        PARENT,
        "itself the caller's child"
    );
    assert!(parent.sampled());
}

/// A stream still open at shutdown is cut at the grace deadline; its span
/// is ended and exported before the proxy exits.
#[tokio::test]
async fn spans_of_exchanges_open_at_shutdown_are_flushed() {
    use crate::support::Hold;
    let collector = Collector::start().await;
    let up = Upstream::start().await;
    let config = format!("[proxy]\ngrace_period = \"1s\"\n{}", collector.config());
    let p = Proxy::start(up.addr, &config).await;
    let hold = Hold::after(1);
    let mut r = Reply::sse(&frames(
        1,
        &[
            task("t-1", "c", "TASK_STATE_WORKING"),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    ));
    r.hold = Some(hold.clone());
    up.push(r);
    let req = stream_req(1);
    let listen = p.listen;
    let caller =
        tokio::spawn(
            async move { crate::support::request_to(listen, "POST", "/", V1, &req).await },
        );
    p.wait_metrics("the stream open", |s| {
        metric(
            s,
            "a2a_streams_active",
            &[("upstream", crate::support::NAME)],
        ) == Some(1.0)
    })
    .await;
    p.stop().await;
    // Exported before the shutdown returned (the receiver answers after
    // it kept the span).
    let spans = collector.spans.lock().unwrap().clone();
    assert_eq!(spans.len(), 1, "{spans:#?}");
    let s = &spans[0].1;
    assert_eq!(s.name, "SendStreamingMessage");
    assert_eq!(text(s, "a2a.task.state"), "working");
    // Ended (the harness's judging clock stands still, so no duration).
    assert!(s.end_time_unix_nano >= s.start_time_unix_nano && s.end_time_unix_nano > 0);
    caller.abort();
}

/// A gRPC call's span: an RPC span in OpenTelemetry's terms (`rpc.system`
/// grpc, the A2A service and method), `a2a.binding` grpc, its task.
#[tokio::test]
async fn a_grpc_call_is_an_rpc_span() {
    use crate::support::grpc::{call, GrpcReply, GrpcUpstream};
    use a2a_tap::a2a::grpc::proto;
    let collector = Collector::start().await;
    let up = GrpcUpstream::start().await;
    let p = Proxy::start(up.addr, &collector.config()).await;
    let task = proto::Task {
        id: "t-g".into(),
        context_id: "c".into(),
        status: Some(proto::TaskStatus {
            state: 3,
            timestamp: None,
        }),
        artifacts: vec![],
    };
    up.push(GrpcReply::messages(&[task.encode_to_vec()]));
    let req = proto::IdRequest { id: "t-g".into() }.encode_to_vec();
    let got = call(p.listen, "/lf.a2a.v1.A2AService/GetTask", &req).await;
    assert_eq!(got.trailers.expect("trailers")["grpc-status"], "0");
    let spans = collector.wait(1).await;
    assert_eq!(spans.len(), 1, "{spans:#?}");
    let s = &spans[0].1;
    assert_eq!(s.name, "GetTask");
    assert_eq!(text(s, "a2a.binding"), "grpc");
    assert_eq!(text(s, "rpc.system"), "grpc");
    assert_eq!(text(s, "rpc.service"), "lf.a2a.v1.A2AService");
    assert_eq!(text(s, "rpc.method"), "GetTask");
    assert_eq!(text(s, "a2a.task.id"), "t-g");
    assert_eq!(text(s, "a2a.task.state"), "completed");
}

/// A collector (or anything at its address) that answers 200 and then
/// sends its body without end: a2a-tap reads at most 64 KiB of it and drops
/// the connection, so its memory does not follow the collector's body, and
/// the next batch still goes out (on a new connection). The collector's
/// side counts what it could write before a2a-tap hung up: the kernel's
/// socket buffers and the 64 KiB, not the body.
#[tokio::test]
async fn a_collector_answering_without_end_is_read_to_a_bound() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// What the collector gives up at: on main, a2a-tap read all of it.
    const CAP: usize = 256 << 20;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    // Each connection: the bytes written before a2a-tap hung up (or CAP).
    let (ended_tx, mut ended) = tokio::sync::mpsc::unbounded_channel::<usize>();
    let posts = Arc::new(AtomicUsize::new(0));
    let seen = posts.clone();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let (ended_tx, seen) = (ended_tx.clone(), seen.clone());
            tokio::spawn(async move {
                let mut head = [0u8; 16];
                if tcp.read_exact(&mut head).await.is_err() || !head.starts_with(b"POST /v1/traces")
                {
                    return;
                }
                seen.fetch_add(1, Ordering::SeqCst);
                let answer = b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\n\
                               transfer-encoding: chunked\r\n\r\n";
                let mut written = 0;
                if tcp.write_all(answer).await.is_ok() {
                    let chunk = format!("10000\r\n{}\r\n", "x".repeat(0x10000));
                    while written < CAP && tcp.write_all(chunk.as_bytes()).await.is_ok() {
                        written += chunk.len();
                    }
                }
                let _ = ended_tx.send(written);
            });
        }
    });
    let up = Upstream::start().await;
    let config = format!(
        "[tracing]\nendpoint = \"http://{addr}\"\nbatch_delay = \"50ms\"\nexport_timeout = \"30s\"\n"
    );
    let p = Proxy::start(up.addr, &config).await;
    let evs = [
        task("t-1", "c", "TASK_STATE_WORKING"),
        status("t-1", "c", "TASK_STATE_COMPLETED"),
    ];
    for id in 1..=2 {
        exchange(&up, &p, stream_req(id), Reply::sse(&frames(id, &evs))).await;
        let written = crate::support::within("a2a-tap to hang up on the collector", ended.recv())
            .await
            .expect("a connection");
        assert!(
            written < 32 << 20,
            "a2a-tap read {} MiB of the collector's answer",
            written >> 20
        );
        assert_eq!(
            posts.load(Ordering::SeqCst),
            id as usize,
            "batch {id} exported"
        );
    }
    // Status 200: the spans were taken, none counted dropped.
    let scrape = p.metrics().await;
    assert_eq!(
        metric(&scrape, "a2a_trace_spans_dropped_total", &[]),
        Some(0.0)
    );
}

/// Behind routes, each exchange's span names its own route's upstream
/// host (`server.address`).
#[tokio::test]
async fn each_routes_spans_name_its_upstream_host() {
    routes_spans("").await;
}

/// The same with each route on its own analysis thread: both threads'
/// spans reach the one exporter.
#[tokio::test]
async fn each_analysis_threads_spans_are_exported() {
    routes_spans("[analysis]\nthreads = 2\n").await;
}

async fn routes_spans(analysis: &str) {
    let collector = Collector::start().await;
    let (a, b) = (Upstream::start().await, Upstream::start().await);
    let config = format!(
        "{analysis}{}\n[[route]]\nname = \"a\"\nupstream = \"http://127.0.0.1:{}\"\npath_prefix = \"/a\"\n\
         [[route]]\nname = \"b\"\nupstream = \"http://localhost:{}\"\npath_prefix = \"/b\"\n",
        collector.config(),
        a.addr.port(),
        b.addr.port()
    );
    let p = Proxy::start_config(&config, None).await;
    let answer = |id| {
        rpc(
            json!(id),
            json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}),
        )
    };
    for (up, path, id) in [(&a, "/a", 1), (&b, "/b", 2)] {
        up.push(Reply::json(200, &answer(id)));
        let req = request(json!(id), "GetTask", json!({"id": "t"}));
        assert_eq!(p.send("POST", path, V1, &req).await.0, 200);
    }
    let spans = collector.wait(2).await;
    let mut hosts: Vec<String> = spans
        .iter()
        .map(|(_, s)| text(s, "server.address"))
        .collect();
    hosts.sort();
    assert_eq!(hosts, ["127.0.0.1", "localhost"]);
    p.stop().await;
}

/// A push delivery through the relay is a span of its own, named
/// `PushDelivery`, in the trace of the exchange that registered its config
/// (the agent sent no trace context of its own).
#[tokio::test]
async fn a_push_delivery_is_a_span_in_the_registering_exchanges_trace() {
    use crate::push::{config_of, deliver, register, scene, status_event};
    let collector = Collector::start().await;
    let s = scene(&collector.config()).await;
    let url = register(&s, 1, config_of(&s.hook, None, None)).await;
    deliver(&s, &url, &[], &status_event("TASK_STATE_WORKING")).await;
    let spans = collector.wait(2).await;
    let named = |n: &str| {
        spans
            .iter()
            .map(|(_, s)| s)
            .find(|s| s.name == n)
            .unwrap_or_else(|| panic!("no {n} span in {spans:#?}"))
    };
    let (send, push) = (named("SendMessage"), named("PushDelivery"));
    assert_eq!(push.trace_id, send.trace_id, "the task's trace");
    assert_eq!(push.parent_span_id, send.span_id);
    assert_eq!(text(push, "a2a.method.name"), "PushDelivery");
    assert_eq!(text(push, "a2a.task.id"), "t-1");
    assert_eq!(text(push, "a2a.task.state"), "working");
    assert_eq!(text(push, "http.request.method"), "POST");
    s.p.stop().await;
}
