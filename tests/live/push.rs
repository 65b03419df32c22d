//! The push relay through the running proxy (`[push] relay = true`,
//! docs/push.md): configs registered through the proxy reach the agent
//! with a relay URL and show the caller's URL again in the agent's
//! answers; deliveries reach the caller's webhook unchanged and its answer
//! reaches the agent unchanged, whatever the chunking; what the relay
//! refuses. The kinds it judges are in push_kinds.rs.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{json, Value};

use crate::support::a2a::*;
use crate::support::metrics::{metric, total};
use crate::support::ports::port_named_in_advance;
use crate::support::proxied::{request_to, Proxied};
use crate::support::tap::Proxy;
use crate::support::{Reply, Upstream};

/// One scripted webhook answer: status, headers, body chunks.
type HookAnswer = (u16, Vec<(String, String)>, Vec<Bytes>);

/// A caller's webhook: records what it got, answers from its script (200
/// with `{"ok":true}` when the script is empty).
pub struct Hook {
    pub addr: SocketAddr,
    pub got: Arc<Mutex<Vec<(http::request::Parts, Bytes)>>>,
    script: Arc<Mutex<VecDeque<HookAnswer>>>,
}

impl Hook {
    pub async fn start() -> Hook {
        let got: Arc<Mutex<Vec<(http::request::Parts, Bytes)>>> = Arc::default();
        let script: Arc<Mutex<VecDeque<_>>> = Arc::default();
        let (g, s) = (got.clone(), script.clone());
        let addr = crate::support::upstream(move |req: http::Request<Incoming>| {
            let (g, s) = (g.clone(), s.clone());
            async move {
                let (parts, body) = req.into_parts();
                let body = body
                    .collect()
                    .await
                    .map(|c| c.to_bytes())
                    .unwrap_or_default();
                g.lock().unwrap().push((parts, body));
                let (status, headers, chunks) = s.lock().unwrap().pop_front().unwrap_or((
                    200,
                    vec![("content-type".into(), "application/json".into())],
                    vec![Bytes::from_static(b"{\"ok\":true}")],
                ));
                let mut resp = http::Response::builder().status(status);
                for (k, v) in headers {
                    resp = resp.header(k, v);
                }
                let (tx, body) = crate::support::channel();
                tokio::spawn(async move {
                    let mut tx = tx;
                    for c in chunks {
                        if tx.send_data(c).await.is_err() {
                            return;
                        }
                        tokio::task::yield_now().await;
                    }
                });
                resp.body(body).unwrap()
            }
        })
        .await;
        Hook { addr, got, script }
    }

    pub fn url(&self) -> String {
        format!("http://{}/hooks/in?team=a", self.addr)
    }

    /// The webhook's next answer.
    pub fn answer(&self, status: u16, headers: &[(&str, &str)], chunks: &[&[u8]]) {
        let headers = headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let chunks = chunks.iter().map(|c| Bytes::copy_from_slice(c)).collect();
        self.script
            .lock()
            .unwrap()
            .push_back((status, headers, chunks));
    }

    pub fn deliveries(&self) -> Vec<(http::request::Parts, Bytes)> {
        self.got.lock().unwrap().clone()
    }
}

/// An agent behind a proxy with the relay on, and a caller's webhook.
pub struct Scene {
    pub up: Upstream,
    pub p: Proxy,
    pub hook: Hook,
    pub relay: SocketAddr,
}

pub async fn scene(extra: &str) -> Scene {
    let up = Upstream::start().await;
    let hook = Hook::start().await;
    let port = port_named_in_advance();
    let config = format!(
        "[push]\nrelay = true\nlisten = \"127.0.0.1:{port}\"\n\
         public_url = \"http://127.0.0.1:{port}/relay/\"\nterminal_wait = \"10s\"\n{extra}"
    );
    let p = Proxy::start(up.addr, &config).await;
    let relay = p.app.push_addr().expect("the relay listens");
    assert_eq!(relay.port(), port);
    Scene { up, p, hook, relay }
}

/// The push config of a 1.0 send to the scene's webhook.
pub fn config_of(hook: &Hook, auth: Option<(&str, &str)>, id: Option<&str>) -> Value {
    let mut c = json!({"url": hook.url(), "token": "tok-1"});
    if let Some((scheme, credentials)) = auth {
        c["authentication"] = json!({"scheme": scheme, "credentials": credentials});
    }
    if let Some(id) = id {
        c["id"] = json!(id);
    }
    c
}

/// A 1.0 SendMessage registering `config`, answered with task `t-1`
/// working; the relay URL the agent was given.
pub async fn register(s: &Scene, rpc_id: i64, config: Value) -> String {
    let mut params = new_message();
    params["configuration"] =
        json!({"taskPushNotificationConfig": config, "returnImmediately": true});
    let req = request(json!(rpc_id), "SendMessage", params);
    exchange(
        &s.up,
        &s.p,
        req,
        Reply::json(
            200,
            &rpc(json!(rpc_id), task("t-1", "c-1", "TASK_STATE_WORKING")),
        ),
    )
    .await;
    relay_url_seen(&s.up)
}

/// The relay URL in the last request the agent got.
pub fn relay_url_seen(up: &Upstream) -> String {
    let body = up.request_bodies().pop().expect("a request");
    let v: Value = serde_json::from_slice(&body).expect("JSON");
    let c = &v["params"]["configuration"]["taskPushNotificationConfig"];
    c["url"].as_str().expect("a url").to_owned()
}

/// POSTs a delivery to `url` (a relay URL) as an agent does.
pub async fn deliver(
    s: &Scene,
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, http::HeaderMap, Vec<u8>) {
    deliver_to(s.relay, url, headers, body).await
}

/// POSTs a delivery to `url`, a relay URL of the relay at `relay`.
pub async fn deliver_to(
    relay: SocketAddr,
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, http::HeaderMap, Vec<u8>) {
    let path = url
        .strip_prefix(&format!("http://{relay}"))
        .expect("a relay URL");
    request_to(relay, "POST", path, headers, body).await
}

pub fn status_event(state: &str) -> String {
    status("t-1", "c-1", state).to_string()
}

/// What a delivery says besides its body and the headers a hop sets.
fn said(parts: &http::request::Parts) -> Vec<(String, String)> {
    let mut h: Vec<(String, String)> = parts
        .headers
        .iter()
        .filter(|(k, _)| !["host", "content-length"].contains(&k.as_str()))
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("?").to_owned()))
        .collect();
    h.sort();
    h
}

/// The agent is given a relay URL of the proxy's, and nothing else of the
/// request changes; the caller's other requests pass untouched.
#[tokio::test]
async fn a_registered_config_reaches_the_agent_with_a_relay_url_only() {
    let s = scene("").await;
    let config = config_of(&s.hook, Some(("Bearer", "s3")), Some("cfg-1"));
    let url = register(&s, 1, config.clone()).await;
    let prefix = format!("http://127.0.0.1:{}/relay/", s.relay.port());
    let token = url.strip_prefix(&prefix).expect("public_url + token");
    assert_eq!(token.len(), 64, "an unguessable token: {token}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    let sent: Value = serde_json::from_slice(&s.up.request_bodies()[0]).unwrap();
    let mut back = sent.clone();
    back["params"]["configuration"]["taskPushNotificationConfig"]["url"] = json!(s.hook.url());
    let mut params = new_message();
    params["configuration"] =
        json!({"taskPushNotificationConfig": config, "returnImmediately": true});
    assert_eq!(
        back,
        serde_json::from_str::<Value>(&request(json!(1), "SendMessage", params)).unwrap(),
        "only the url moved"
    );
    // A second registration gets a token of its own.
    let other = register(&s, 2, config_of(&s.hook, None, None)).await;
    assert_ne!(other, url);
    let m = s.p.metrics().await;
    assert_eq!(
        metric(
            &m,
            "a2a_push_registrations",
            &[("upstream", "agent-under-test")]
        ),
        Some(2.0)
    );
    s.p.stop().await;
}

/// Get and List answers show the caller's own URL, byte for byte as the
/// agent wrote the rest, whatever escapes it wrote the URL with.
#[tokio::test]
async fn config_answers_show_the_callers_url_again() {
    let s = scene("").await;
    let url = register(&s, 1, config_of(&s.hook, None, Some("cfg-1"))).await;
    let mine = s.hook.url();
    let escaped = url.replace('/', "\\/");
    for (method, params, agent_said) in [
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": "t-1", "id": "cfg-1"}),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{{"taskId":"t-1","id":"cfg-1","url":"{url}"}}}}"#
            ),
        ),
        (
            "ListTaskPushNotificationConfigs",
            json!({"taskId": "t-1"}),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"result":{{"configs":[{{"taskId":"t-1", "url" : "{escaped}"}}]}}}}"#
            ),
        ),
    ] {
        s.up.push(Reply::json(200, &agent_said));
        let (status, headers, got) =
            s.p.request("POST", "/", V1, &request(json!(7), method, params))
                .await;
        assert_eq!(status, 200);
        let want = agent_said.replace(&escaped, &mine).replace(&url, &mine);
        assert_eq!(String::from_utf8(got).unwrap(), want, "{method}");
        assert_eq!(headers["content-length"], want.len().to_string().as_str());
    }
    s.p.stop().await;
}

/// A delivery reaches the webhook with its method, headers (but the hop's
/// own) and body unchanged; the webhook's answer reaches the agent
/// unchanged, chunk for chunk.
#[tokio::test]
async fn deliveries_and_answers_pass_the_relay_unchanged() {
    let s = scene("").await;
    let url = register(&s, 1, config_of(&s.hook, Some(("Bearer", "s3")), None)).await;
    let body = status_event("TASK_STATE_WORKING");
    let headers = [
        ("authorization", "Bearer s3"),
        ("x-a2a-notification-token", "tok-1"),
        ("x-custom", "kept"),
    ];
    // The same delivery sent straight to the webhook: what it must get.
    request_to(s.hook.addr, "POST", "/hooks/in?team=a", &headers, &body).await;
    s.hook.answer(
        202,
        &[("content-type", "text/plain"), ("x-hook", "yes")],
        &[b"acc", b"ept", b"ed"],
    );
    let (status, answer_headers, answer) = deliver(&s, &url, &headers, &body).await;
    assert_eq!(status, 202);
    assert_eq!(answer, b"accepted");
    assert_eq!(answer_headers["x-hook"], "yes");
    let got = s.hook.deliveries();
    assert_eq!(got.len(), 2);
    let (direct, _) = &got[0];
    let (parts, delivered) = &got[1];
    assert_eq!(parts.method, "POST");
    assert_eq!(parts.uri.path(), "/hooks/in");
    assert_eq!(parts.uri.query(), Some("team=a"));
    assert_eq!(delivered, body.as_bytes());
    assert_eq!(said(parts), said(direct), "no header added or dropped");
    assert_eq!(said(parts).len(), 4, "{:?}", said(parts));
    assert_eq!(parts.headers["host"], s.hook.addr.to_string());
    let m =
        s.p.wait_metrics("a2a_push_deliveries_total", |m| {
            total(m, "a2a_push_deliveries_total", &[("outcome", "delivered")]) == Some(1.0)
        })
        .await;
    assert_eq!(
        metric(
            &m,
            "a2a_requests_total",
            &[
                ("upstream", "agent-under-test"),
                ("binding", "webhook"),
                ("method", "PushDelivery"),
                ("code", "2xx")
            ]
        ),
        Some(1.0)
    );
    assert!(settle(&s.up, &s.p).await.is_empty(), "a legal delivery");
    s.p.stop().await;
}

/// Bytes of a delivery sent in pieces reach the webhook whole and equal,
/// for every way of cutting them.
#[tokio::test]
async fn delivery_bytes_are_equal_whatever_the_chunking() {
    let s = scene("").await;
    let url = register(&s, 1, config_of(&s.hook, None, None)).await;
    let body = task("t-1", "c-1", "TASK_STATE_WORKING").to_string();
    let path = url
        .strip_prefix(&format!("http://{}", s.relay))
        .unwrap()
        .to_owned();
    for cut in [1, 7, body.len() / 2, body.len() - 1] {
        let (tx, req_body) = crate::support::channel();
        let pieces: Vec<Bytes> = body
            .as_bytes()
            .chunks(cut)
            .map(Bytes::copy_from_slice)
            .collect();
        tokio::spawn(async move {
            let mut tx = tx;
            for p in pieces {
                let _ = tx.send_data(p).await;
                tokio::task::yield_now().await;
            }
        });
        let req = http::Request::post(format!("http://{}{path}", s.relay))
            .header("content-type", "application/json")
            .body(req_body)
            .unwrap();
        let resp = crate::support::client()
            .request(req)
            .await
            .expect("answered");
        assert_eq!(resp.status(), 200);
        let answer = resp.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(answer.as_ref(), b"{\"ok\":true}");
    }
    for (_, got) in s.hook.deliveries() {
        assert_eq!(got, body.as_bytes());
    }
    assert_eq!(s.hook.deliveries().len(), 4);
    assert!(settle(&s.up, &s.p).await.is_empty(), "repeats are legal");
    s.p.stop().await;
}

/// The relay is no open relay: an unknown token (or none) is 404, counted,
/// and nothing is sent anywhere; a webhook that cannot be reached is 502
/// to the agent, counted.
#[tokio::test]
async fn unknown_tokens_are_refused_and_unreachable_webhooks_counted() {
    let s = scene("").await;
    for path in [
        format!("/relay/{}", "0".repeat(64)),
        "/relay/".to_owned(),
        "/relay/../etc/passwd".to_owned(),
        format!("/{}", "z".repeat(64)),
    ] {
        let (status, _, body) = request_to(s.relay, "POST", &path, &[], "{}").await;
        assert_eq!(status, 404, "{path}");
        assert!(String::from_utf8_lossy(&body).contains("unknown or expired token"));
    }
    assert!(s.hook.deliveries().is_empty());
    // A webhook that is gone.
    let (_held, gone) = crate::support::ports::refused();
    let mut config = config_of(&s.hook, None, None);
    config["url"] = json!(format!("http://{gone}/in"));
    let url = register(&s, 1, config).await;
    let (status, _, _) = deliver(&s, &url, &[], &status_event("TASK_STATE_WORKING")).await;
    assert_eq!(status, 502);
    let m =
        s.p.wait_metrics("a2a_push_deliveries_total", |m| {
            total(
                m,
                "a2a_push_deliveries_total",
                &[("outcome", "webhook_unreachable")],
            ) == Some(1.0)
        })
        .await;
    assert_eq!(
        total(
            &m,
            "a2a_push_deliveries_total",
            &[("outcome", "unknown_token")]
        ),
        Some(4.0)
    );
    s.p.stop().await;
}

/// Past `push.max_registrations`, a config passes to the agent with the
/// caller's own URL (its deliveries go past the proxy): counted, never
/// refused, never an older registration dropped for it.
#[tokio::test]
async fn a_full_table_passes_the_config_unchanged_and_counts_it() {
    let s = scene("max_registrations = 1\n").await;
    let first = register(&s, 1, config_of(&s.hook, None, None)).await;
    assert!(first.contains("/relay/"));
    let second = register(&s, 2, config_of(&s.hook, None, None)).await;
    assert_eq!(second, s.hook.url(), "passed unchanged");
    let (status, _, _) = deliver(&s, &first, &[], &status_event("TASK_STATE_WORKING")).await;
    assert_eq!(status, 200, "the first still relays");
    let m = s.p.metrics().await;
    assert_eq!(
        total(&m, "a2a_push_unrelayed_total", &[("reason", "table_full")]),
        Some(1.0)
    );
    s.p.stop().await;
}

/// A length-delimited protobuf field.
fn pb(number: u32, value: &[u8]) -> Vec<u8> {
    let mut out = vec![u8::try_from(number << 3 | 2).unwrap()];
    let mut len = value.len();
    while len >= 0x80 {
        out.push((len as u8) | 0x80);
        len >>= 7;
    }
    out.push(len as u8);
    out.extend_from_slice(value);
    out
}

/// A 1.0 `TaskPushNotificationConfig` (`id` 2, `task_id` 3, `url` 4,
/// `authentication` 6).
fn pb_config(url: &str) -> Vec<u8> {
    let auth = [pb(1, b"Bearer"), pb(2, b"s3")].concat();
    [
        pb(2, b"cfg-g"),
        pb(3, b"t-1"),
        pb(4, url.as_bytes()),
        pb(6, &auth),
    ]
    .concat()
}

/// Over gRPC too: the config reaching the agent holds a relay URL (only its
/// bytes and the lengths around them changed), the agent's answers show
/// the caller's URL, and deliveries to it reach the webhook, judged.
#[tokio::test]
async fn grpc_configs_are_relayed_and_shown_back() {
    use crate::support::grpc::{call, framed, GrpcReply, GrpcUpstream};
    let up = GrpcUpstream::start().await;
    let hook = Hook::start().await;
    let port = port_named_in_advance();
    let config = format!(
        "[push]\nrelay = true\nlisten = \"127.0.0.1:{port}\"\n\
         public_url = \"http://127.0.0.1:{port}/relay\"\n"
    );
    let p = Proxy::start(up.addr, &config).await;
    let create = "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig";
    up.push(GrpcReply::messages(&[pb_config("http://stored/elsewhere")]).status(0, None));
    let answer = call(p.listen, create, &pb_config(&hook.url())).await;
    assert_eq!(answer.trailers.unwrap()["grpc-status"], "0");
    let (_, sent) = up.calls.lock().unwrap()[0].clone();
    let prefix = format!("http://127.0.0.1:{port}/relay/");
    let at = sent
        .windows(prefix.len())
        .position(|w| w == prefix.as_bytes())
        .expect("a relay URL reached the agent");
    let url = String::from_utf8(sent[at..at + prefix.len() + 64].to_vec()).unwrap();
    assert_eq!(
        sent.as_ref(),
        framed(&pb_config(&url), false),
        "only the url moved"
    );
    // The agent's Get answer names the relay URL: the caller sees its own.
    let get = "/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig";
    up.push(GrpcReply::messages(&[pb_config(&url)]).status(0, None));
    let answer = call(p.listen, get, &[pb(2, b"t-1"), pb(3, b"cfg-g")].concat()).await;
    assert_eq!(answer.body, framed(&pb_config(&hook.url()), false));
    assert_eq!(answer.trailers.unwrap()["grpc-status"], "0");
    // A delivery without the config's Authorization: relayed, judged.
    let path = url
        .strip_prefix(&format!("http://127.0.0.1:{port}"))
        .unwrap();
    let relay = p.app.push_addr().unwrap();
    let body = status("t-1", "c-1", "TASK_STATE_WORKING").to_string();
    let (code, _, _) = request_to(relay, "POST", path, &[], &body).await;
    assert_eq!(code, 200);
    assert_eq!(hook.deliveries().len(), 1);
    let recs = p.wait_records(1).await;
    let kinds: Vec<&str> = recs.iter().filter_map(|r| r["kind"].as_str()).collect();
    assert_eq!(kinds, ["push_auth_missing"], "{recs:#?}");
    assert_eq!(recs[0]["binding"], "webhook");
    p.stop().await;
}

/// The relay's connections keep the proxy's deadlines: an agent that
/// connects and sends nothing, or sends a delivery and then idles, does
/// not hold a slot.
#[tokio::test]
async fn silent_and_idle_relay_connections_are_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = scene(
        "[proxy]\nheader_read_timeout = \"300ms\"\nidle_timeout = \"300ms\"\nwrite_timeout = \"1s\"\n",
    )
    .await;
    let url = register(&s, 1, config_of(&s.hook, None, None)).await;
    let mut silent = tokio::net::TcpStream::connect(s.relay).await.unwrap();
    let mut buf = [0u8; 512];
    let n = crate::support::within("a silent connection to close", silent.read(&mut buf)).await;
    assert_eq!(n.unwrap_or(0), 0, "closed without an answer");
    let path = url.strip_prefix(&format!("http://{}", s.relay)).unwrap();
    let body = status_event("TASK_STATE_WORKING");
    let mut idle = tokio::net::TcpStream::connect(s.relay).await.unwrap();
    let req = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    idle.write_all(req.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let read_all = async {
        loop {
            match idle.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    crate::support::within("an idle connection to close", read_all).await;
    assert!(
        String::from_utf8_lossy(&got).starts_with("HTTP/1.1 200"),
        "answered, then closed"
    );
    s.p.stop().await;
}

/// A request the relay reads before it goes upstream (every POST) whose
/// caller stops sending its body is answered within
/// `upstream_header_timeout` (408, no upstream error counted: nothing
/// went upstream), as it is without the relay (where the timeout runs
/// while the body goes upstream, and gives 504). Before, the relay's read
/// had no deadline: such a caller held its connection for good (in
/// flight, so not idle; nothing written, so no write stall). Look-alike:
/// a body sent in two pieces inside the timeout is relayed and answered.
#[tokio::test]
async fn a_caller_that_stops_sending_a_body_the_relay_reads_is_answered_at_the_header_timeout() {
    use tokio::io::AsyncWriteExt;
    let s = scene("[proxy]\nupstream_header_timeout = \"1s\"\n").await;
    let body = request(json!(7), "GetTask", json!({"id": "t-7"})).to_string();
    let head = format!(
        "POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let (first, rest) = body.split_at(10);
    // Stopped after its first piece: 408, the request never sent.
    let mut stopped = tokio::net::TcpStream::connect(s.p.listen).await.unwrap();
    stopped
        .write_all(format!("{head}{first}").as_bytes())
        .await
        .unwrap();
    let answer = head_of(&mut stopped).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(s.up.request_bodies().is_empty(), "nothing went upstream");
    let m = s.p.metrics().await;
    assert_eq!(
        total(&m, "a2a_upstream_errors_total", &[]),
        Some(0.0),
        "{m}"
    );
    // Slow but whole within the timeout: relayed.
    s.up.push(Reply::json(
        200,
        &rpc(json!(7), task("t-7", "c-7", "TASK_STATE_WORKING")),
    ));
    let mut slow = tokio::net::TcpStream::connect(s.p.listen).await.unwrap();
    slow.write_all(format!("{head}{first}").as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    slow.write_all(rest.as_bytes()).await.unwrap();
    let answer = head_of(&mut slow).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(s.up.request_bodies(), [Bytes::from(body.clone())]);
    s.p.stop().await;
}

/// The answer's head read from `s`, bounded (`support::read_head`).
async fn head_of(s: &mut tokio::net::TcpStream) -> String {
    let head = crate::support::within("an answer's head", crate::support::read_head(s)).await;
    String::from_utf8_lossy(&head.unwrap_or_default()).into_owned()
}
