//! Routes through the running proxy: several agents behind one a2a-tap,
//! matched by path prefix (longest wins, whole segments) or host, the
//! prefix stripped, each route's name on its metrics and records, its own
//! task registry and severity policy; requests no route takes are
//! answered 404 and counted; crafted paths never reach a route's agent.

use serde_json::{json, Value};

use crate::support::a2a::*;
use crate::support::metrics::metric;
use crate::support::scenes::bare_task;
use crate::support::tap::Proxy;
use crate::support::{within, Proxied, Reply, Upstream};

/// Two agents: `alpha` under `/agents/alpha` (its URL's path `/rpc`),
/// `beta` under `/agents/alpha/beta`, unstripped; `extra` is appended.
async fn two_routes(extra: &str) -> (Upstream, Upstream, Proxy) {
    let (a, b) = (Upstream::start().await, Upstream::start().await);
    let text = format!(
        "[[route]]\nname = \"alpha\"\nupstream = \"http://{}/rpc\"\npath_prefix = \"/agents/alpha\"\n\n\
         [[route]]\nname = \"beta\"\nupstream = \"http://{}\"\npath_prefix = \"/agents/alpha/beta/\"\n\
         strip_prefix = false\n{extra}\n",
        a.addr, b.addr
    );
    let proxy = Proxy::start_config(&text, None).await;
    (a, b, proxy)
}

async fn scrape(p: &Proxy) -> String {
    crate::support::scrape(&p.app).await
}

/// Sends a stream with one unreadable frame on `path` and waits for its
/// record: the routes' exchanges sent before it are then judged. Returns
/// the records before it that are not sentinels.
async fn settle_on(up: &Upstream, p: &Proxy, path: &str) -> Vec<Value> {
    const SENTINEL: &str = "route-sentinel-not-json";
    let before = p
        .records()
        .iter()
        .filter(|r| r["evidence"] == SENTINEL)
        .count();
    up.push(Reply::sse(&[SENTINEL.to_string()]));
    let req = request(json!("sentinel"), "SendStreamingMessage", new_message());
    p.send("POST", path, V1, &req).await;
    within("the sentinel record", async {
        loop {
            let recs = p.records();
            if recs.iter().filter(|r| r["evidence"] == SENTINEL).count() > before {
                return recs
                    .into_iter()
                    .filter(|r| r["evidence"] != SENTINEL)
                    .collect();
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
}

#[tokio::test]
async fn routes_by_longest_whole_segment_prefix_and_strips_it() {
    let (a, b, p) = two_routes("").await;
    let req = request(json!(1), "GetTask", json!({"id": "t"}));
    let answer = rpc(json!(1), bare_task("t", "c", "TASK_STATE_WORKING", None));
    for (up, path) in [
        (&a, "/agents/alpha/x?q=1"),
        (&a, "/agents/alpha"),
        (&b, "/agents/alpha/beta/y"),
        (&a, "/agents/alpha/betamax"),
    ] {
        up.push(Reply::json(200, &answer));
        let (status, body) = p.send("POST", path, V1, &req).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(String::from_utf8_lossy(&body), answer, "{path}");
    }
    // alpha's prefix stripped, its URL's path put before; the query kept.
    assert_eq!(a.request_targets(), ["/rpc/x?q=1", "/rpc/", "/rpc/betamax"],);
    assert_eq!(b.request_targets(), ["/agents/alpha/beta/y"]);

    // `/agents/alphabet` is not under `/agents/alpha`: no route, 404.
    let (status, head, body) =
        crate::support::request_to(p.listen, "POST", "/agents/alphabet", V1, &req).await;
    assert_eq!(status, 404);
    assert_eq!(
        String::from_utf8_lossy(&body),
        "a2a-tap: no route for path /agents/alphabet\n"
    );
    assert!(head["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    assert_eq!(a.request_targets().len(), 3);
    assert_eq!(b.request_targets().len(), 1);

    let text = scrape(&p).await;
    let requests = |up: &str, code: &str| {
        crate::support::total(
            &text,
            "a2a_requests_total",
            &[("upstream", up), ("code", code)],
        )
    };
    assert_eq!(
        requests("", "4xx"),
        Some(1.0),
        "the unrouted request counted"
    );
    assert_eq!(requests("alpha", "2xx"), Some(3.0));
    assert_eq!(requests("beta", "2xx"), Some(1.0));
    // Each route's series exist from the start.
    for route in ["alpha", "beta"] {
        let labels = [
            ("upstream", route),
            ("kind", "terminal_exit"),
            ("severity", "error"),
        ];
        assert_eq!(metric(&text, "a2a_violations_total", &labels), Some(0.0));
        assert!(metric(&text, "a2a_upstream_up", &[("upstream", route)]).is_some());
    }
    p.stop().await;
}

#[tokio::test]
async fn crafted_paths_never_reach_an_agent() {
    let (a, b, p) = two_routes("").await;
    let req = request(json!(1), "GetTask", json!({"id": "t"}));
    for path in [
        "/agents/alpha/../alpha/beta/x",
        "/agents/alpha/beta/../../x",
        "/agents/alpha//beta/x",
        "/agents/alpha/%2e%2E/x",
        "/agents/alpha/.%2e/beta",
        "/agents/alpha/./beta/x",
        "/agents/alpha%2Fbeta/x",
        "/agents/alpha/beta%2f..%2fx",
        "/agents/alpha/beta%5C..%5Cx",
    ] {
        let (status, body) = p.send("POST", path, V1, &req).await;
        assert_eq!(status, 400, "{path}: {}", String::from_utf8_lossy(&body));
        let text = String::from_utf8_lossy(&body);
        assert!(text.starts_with("a2a-tap: path "), "{text}");
        assert_eq!(text.lines().count(), 1, "{text}");
    }
    assert!(a.request_targets().is_empty(), "{:?}", a.request_targets());
    assert!(b.request_targets().is_empty(), "{:?}", b.request_targets());
    // A request hyper refuses before any routing is the unrouted's too.
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut tcp = tokio::net::TcpStream::connect(p.listen)
            .await
            .expect("connect");
        tcp.write_all(b"NOT HTTP AT ALL\r\n\r\n")
            .await
            .expect("write");
        let mut answer = Vec::new();
        let _ = within("hyper's 400", tcp.read_to_end(&mut answer)).await;
    }
    let m = p
        .wait_metrics("the refused requests", |m| {
            crate::support::total(
                m,
                "a2a_requests_total",
                &[("upstream", ""), ("code", "4xx")],
            ) == Some(10.0)
        })
        .await;
    let alpha = crate::support::total(&m, "a2a_requests_total", &[("upstream", "alpha")]);
    assert_eq!(alpha.unwrap_or(0.0), 0.0, "{m}");
    p.stop().await;
}

#[tokio::test]
async fn routes_by_host_and_prefers_the_host_at_equal_prefixes() {
    let (a, b) = (Upstream::start().await, Upstream::start().await);
    let text = format!(
        "[[route]]\nname = \"any\"\nupstream = \"http://{}\"\npath_prefix = \"/\"\n\n\
         [[route]]\nname = \"hosted\"\nupstream = \"http://{}\"\nhost = \"Agent.Example\"\n",
        a.addr, b.addr
    );
    let p = Proxy::start_config(&text, None).await;
    let req = request(json!(1), "GetTask", json!({"id": "t"}));
    let answer = rpc(json!(1), bare_task("t", "c", "TASK_STATE_WORKING", None));
    for (up, host) in [
        (&b, "agent.example:8080"),
        (&a, "other.example"),
        (&b, "AGENT.example"),
    ] {
        up.push(Reply::json(200, &answer));
        let mut headers = V1.to_vec();
        headers.push(("host", host));
        let (status, _) = p.send("POST", "/x", &headers, &req).await;
        assert_eq!(status, 200, "{host}");
    }
    assert_eq!(a.request_targets(), ["/x"]);
    assert_eq!(b.request_targets(), ["/x", "/x"]);
    p.stop().await;
}

/// A task completed on one route, then reported working on another: two
/// agents' tasks that share an id, no finding; the same on one route is
/// `terminal_exit`.
#[tokio::test]
async fn a_task_id_on_two_routes_is_two_tasks() {
    let (a, b, p) = two_routes("").await;
    let answer = |id: i64, state| rpc(json!(id), bare_task("shared", "c", state, None));
    let get = |id: i64| request(json!(id), "GetTask", json!({"id": "shared"}));
    a.push(Reply::json(200, &answer(1, "TASK_STATE_COMPLETED")));
    p.send("POST", "/agents/alpha", V1, &get(1)).await;
    b.push(Reply::json(200, &answer(2, "TASK_STATE_WORKING")));
    p.send("POST", "/agents/alpha/beta", V1, &get(2)).await;
    let records = settle_on(&a, &p, "/agents/alpha").await;
    assert!(records.is_empty(), "no cross-route finding: {records:#?}");

    // The look-alike on one route is a finding, under that route's name.
    a.push(Reply::json(200, &answer(3, "TASK_STATE_WORKING")));
    p.send("POST", "/agents/alpha", V1, &get(3)).await;
    let records = settle_on(&a, &p, "/agents/alpha").await;
    assert_eq!(kinds(&records), ["terminal_exit"], "{records:#?}");
    assert_eq!(records[0]["upstream"], "alpha");
    p.stop().await;
}

/// `[route.severity]` changes that route's findings alone.
#[tokio::test]
async fn a_route_severity_override_applies_to_that_route_alone() {
    let (a, b, p) = two_routes("[route.severity]\nmalformed_event = \"warning\"\n").await;
    for (up, path) in [(&a, "/agents/alpha"), (&b, "/agents/alpha/beta")] {
        up.push(Reply::sse(&["not json".to_string()]));
        let req = request(json!(1), "SendStreamingMessage", new_message());
        p.send("POST", path, V1, &req).await;
    }
    let records = settle_on(&a, &p, "/agents/alpha").await;
    let found: Vec<(&str, &str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["upstream"].as_str().unwrap_or(""),
                r["kind"].as_str().unwrap_or(""),
                r["severity"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("alpha", "malformed_event", "error"),
            ("beta", "malformed_event", "warning")
        ],
        "{records:#?}"
    );
    p.stop().await;
}

/// A stream open on a route when a reload removes that route ends on it:
/// its bytes whole, its finding under its route's name and policy; the
/// next request to that path finds no route.
#[tokio::test]
async fn an_exchange_in_flight_keeps_its_route_across_a_reload() {
    let (a, b, p) = two_routes("").await;
    let evs = [
        json!({"task": bare_task("t-1", "c", "TASK_STATE_WORKING", None)}),
        json!({"statusUpdate": {"taskId": "t-1", "contextId": "c",
               "status": {"state": "TASK_STATE_COMPLETED"}}}),
        json!({"statusUpdate": {"taskId": "t-1", "contextId": "c",
               "status": {"state": "TASK_STATE_WORKING"}}}),
    ];
    let hold = crate::support::Hold::after(1);
    let mut reply = Reply::sse(&frames(1, &evs));
    reply.hold = Some(hold.clone());
    let want = reply.bytes();
    a.push(reply);
    let req = request(json!(1), "SendStreamingMessage", new_message());
    let caller = tokio::spawn({
        let listen = p.listen;
        async move { crate::support::request_to(listen, "POST", "/agents/alpha", V1, &req).await }
    });
    p.wait_metrics("alpha's stream open", |s| {
        metric(s, "a2a_streams_active", &[("upstream", "alpha")]) == Some(1.0)
    })
    .await;
    // Only beta now, under the prefix alpha had; severities lowered.
    let text = format!(
        "listen = \"127.0.0.1:0\"\nadmin = \"127.0.0.1:0\"\n[severity]\nterminal_exit = \"off\"\n\
         [[route]]\nname = \"beta\"\nupstream = \"http://{}\"\npath_prefix = \"/agents/alpha/beta\"\n",
        b.addr
    );
    let config: a2a_tap::config::Config = text.parse().expect("config");
    p.app.reload(&config).expect("reloads");
    hold.release.notify_one();
    let (status, _, got) = within("the held stream", caller).await.expect("join");
    assert_eq!((status, got), (200, want));
    let (status, _) = p.send("POST", "/agents/alpha", V1, "{}").await;
    assert_eq!(status, 404, "alpha is gone");
    let records = settle_on(&b, &p, "/agents/alpha/beta").await;
    assert_eq!(kinds(&records), ["terminal_exit"], "{records:#?}");
    assert_eq!(records[0]["upstream"], "alpha");
    assert_eq!(records[0]["severity"], "error", "judged by alpha's policy");
    let m = scrape(&p).await;
    assert_eq!(
        metric(&m, "a2a_config_reloads_total", &[("result", "ok")]),
        Some(1.0)
    );
    // alpha's readiness gauge went with it; its counters stay.
    assert_eq!(
        metric(&m, "a2a_upstream_up", &[("upstream", "alpha")]),
        None,
        "{m}"
    );
    assert!(metric(&m, "a2a_upstream_up", &[("upstream", "beta")]).is_some());
    let labels = [
        ("upstream", "alpha"),
        ("kind", "terminal_exit"),
        ("severity", "error"),
    ];
    assert_eq!(metric(&m, "a2a_violations_total", &labels), Some(1.0));
    p.stop().await;
}

/// The push relay serves every route: a config registered on a route is
/// judged in that route's session (its registry, its label), so one task
/// id on two routes is two tasks there too.
#[tokio::test]
async fn push_deliveries_are_judged_on_the_route_that_registered_them() {
    push_deliveries_judged_per_route("").await;
}

/// The same with each route on its own analysis thread: a delivery is
/// stamped and judged on its route's thread.
#[tokio::test]
async fn push_deliveries_are_judged_on_their_routes_analysis_thread() {
    push_deliveries_judged_per_route("[analysis]\nthreads = 2\n").await;
}

async fn push_deliveries_judged_per_route(analysis: &str) {
    use crate::push::{deliver_to, Hook};
    let hook = Hook::start().await;
    let port = crate::support::ports::port_named_in_advance();
    let (a, b, p) = two_routes(&format!(
        "{analysis}[push]\nrelay = true\nlisten = \"127.0.0.1:{port}\"\npublic_url = \"http://127.0.0.1:{port}\"\n"
    ))
    .await;
    let relay = p.app.push_addr().expect("the relay");
    let mut urls = Vec::new();
    for (up, path, auth) in [
        (
            &a,
            "/agents/alpha",
            json!({"scheme": "Bearer", "credentials": "s"}),
        ),
        (&b, "/agents/alpha/beta/", json!(null)),
    ] {
        let mut params = new_message();
        params["configuration"] = json!({"returnImmediately": true,
            "taskPushNotificationConfig": {"url": hook.url(), "authentication": auth}});
        let answer = rpc(json!(1), task("t-1", "c-1", "TASK_STATE_WORKING"));
        up.push(Reply::json(200, &answer));
        let (status, _) = p
            .send("POST", path, V1, &request(json!(1), "SendMessage", params))
            .await;
        assert_eq!(status, 200);
        urls.push(crate::push::relay_url_seen(up));
    }
    let stamped = |state: &str, ts: &str| {
        let mut e = status("t-1", "c-1", state);
        e["statusUpdate"]["status"]["timestamp"] = json!(ts);
        e.to_string()
    };
    // Beta's task completes; alpha's task of the same id works on, later.
    deliver_to(
        relay,
        &urls[1],
        &[],
        &stamped("TASK_STATE_COMPLETED", "2026-01-01T00:00:10Z"),
    )
    .await;
    deliver_to(
        relay,
        &urls[0],
        &[("authorization", "Bearer s")],
        &stamped("TASK_STATE_WORKING", "2026-01-01T00:00:20Z"),
    )
    .await;
    // Alpha's config asked for authentication: its route's finding.
    deliver_to(
        relay,
        &urls[0],
        &[],
        &stamped("TASK_STATE_WORKING", "2026-01-01T00:00:21Z"),
    )
    .await;
    settle_on(&b, &p, "/agents/alpha/beta/").await;
    let recs = settle_on(&a, &p, "/agents/alpha").await;
    let got: Vec<(&str, &str)> = recs
        .iter()
        .map(|r| (r["kind"].as_str().unwrap(), r["upstream"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [("push_auth_missing", "alpha")],
        "no cross-route finding: {recs:#?}"
    );
    let m = scrape(&p).await;
    for route in ["alpha", "beta"] {
        let want = if route == "alpha" { 2.0 } else { 1.0 };
        let labels = [("upstream", route), ("outcome", "delivered")];
        assert_eq!(
            metric(&m, "a2a_push_deliveries_total", &labels),
            Some(want),
            "{route}"
        );
        assert_eq!(
            metric(&m, "a2a_push_registrations", &[("upstream", route)]),
            Some(1.0)
        );
    }
    p.stop().await;
}

/// Three agents on two analysis threads (`[analysis] threads = 2`): alpha
/// and gamma on the first, beta on the second.
async fn three_routes_on_two_threads() -> (Vec<(Upstream, &'static str)>, Proxy) {
    let mut ups = Vec::new();
    let mut text = String::from("[analysis]\nthreads = 2\n\n");
    for name in ["alpha", "beta", "gamma"] {
        let up = Upstream::start().await;
        text.push_str(&format!(
            "[[route]]\nname = \"{name}\"\nupstream = \"http://{}\"\npath_prefix = \"/agents/{name}\"\n\n",
            up.addr
        ));
        ups.push((up, name));
    }
    let proxy = Proxy::start_config(&text, None).await;
    (ups, proxy)
}

/// On each route of `ups`, the states `states` of task `shared`, one
/// GetTask answer each, in turn.
async fn walk(ups: &[(Upstream, &str)], p: &Proxy, states: &[(&str, &[&str])]) {
    for (route, states) in states {
        let (up, _) = ups.iter().find(|(_, n)| n == route).expect("a route");
        for (i, state) in states.iter().enumerate() {
            let id = json!(i);
            up.push(Reply::json(
                200,
                &rpc(id.clone(), bare_task("shared", "c", state, None)),
            ));
            let get = request(id, "GetTask", json!({"id": "shared"}));
            p.send("POST", &format!("/agents/{route}"), V1, &get).await;
        }
    }
}

/// A task's states that leave its terminal state: `terminal_exit`.
const DONE_THEN_WORKING: &[&str] = &["TASK_STATE_COMPLETED", "TASK_STATE_WORKING"];

/// The findings alpha and beta make with `DONE_THEN_WORKING`.
fn alpha_and_beta_exits() -> [(String, String); 2] {
    ["alpha", "beta"].map(|r| (r.to_owned(), "terminal_exit".to_owned()))
}

fn by_route(records: &[Value]) -> Vec<(String, String)> {
    let mut got: Vec<(String, String)> = records
        .iter()
        .filter(|r| r["evidence"] != "route-sentinel-not-json")
        .map(|r| {
            (
                r["upstream"].as_str().unwrap_or("").to_owned(),
                r["kind"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    got.sort();
    got
}

/// Routes judged on two threads find exactly what one thread finds: a
/// task leaving its terminal state on alpha (first thread) and on beta
/// (second), and nothing on gamma, where the same task id is another
/// agent's task. The first route's task gauges are its thread's alone: the
/// second thread never sets them (it holds no tasks of alpha's).
#[tokio::test]
async fn routes_on_two_analysis_threads_are_judged_as_on_one() {
    let (ups, p) = three_routes_on_two_threads().await;
    walk(
        &ups,
        &p,
        &[
            ("alpha", DONE_THEN_WORKING),
            ("beta", DONE_THEN_WORKING),
            ("gamma", &["TASK_STATE_WORKING"]),
        ],
    )
    .await;
    let mut records = Vec::new();
    for (up, name) in &ups {
        records = settle_on(up, &p, &format!("/agents/{name}")).await;
    }
    assert_eq!(by_route(&records), alpha_and_beta_exits(), "{records:#?}");
    let threads: Vec<String> = std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .collect();
    assert!(
        threads.iter().any(|c| c.trim() == "a2a-analysis-1"),
        "a second analysis thread: {threads:?}"
    );
    // Each thread sets its routes' gauges every second: alpha's task is
    // seen from the first sync on, and never unseen after.
    let tracked = |m: &str, route: &str| -> f64 {
        m.lines()
            .filter(|l| {
                l.starts_with("a2a_tasks_tracked{") && l.contains(&format!("upstream=\"{route}\""))
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    let start = std::time::Instant::now();
    let mut seen = false;
    while start.elapsed() < std::time::Duration::from_millis(3500) {
        let m = scrape(&p).await;
        let alpha = tracked(&m, "alpha");
        if seen {
            assert_eq!(alpha, 1.0, "alpha's task gauge set back: {m}");
        }
        seen |= alpha == 1.0;
        tokio::time::sleep(std::time::Duration::from_millis(40)).await;
    }
    assert!(seen, "alpha's task counted in a2a_tasks_tracked");
    p.stop().await;
}

/// At shutdown every analysis thread judges what it was sent: findings of
/// both threads' routes are in the audit log when the proxy has stopped,
/// with nothing settled before.
#[tokio::test]
async fn every_analysis_thread_judges_what_it_was_sent_before_shutdown() {
    let (ups, p) = three_routes_on_two_threads().await;
    walk(
        &ups,
        &p,
        &[("beta", DONE_THEN_WORKING), ("alpha", DONE_THEN_WORKING)],
    )
    .await;
    let records = p.stop().await;
    assert_eq!(by_route(&records), alpha_and_beta_exits(), "{records:#?}");
}

/// Each analysis thread holds at most its share of `analysis.queue_bytes`:
/// a stream of about 2.4 KB on beta fits the whole 3,000 bytes, not the
/// second thread's 1,500 when there are two threads (unjudged, counted
/// under beta's name, no finding); with one thread it is judged.
#[tokio::test]
async fn each_analysis_thread_holds_its_share_of_the_queue_bytes() {
    for (threads, overload) in [(1, 0.0), (2, 1.0)] {
        let (_, b, p) = two_routes(&format!(
            "[analysis]\nthreads = {threads}\nqueue_bytes = 3000\n"
        ))
        .await;
        let mut big = artifact("t-1", "c", "a1", false, false);
        big["artifactUpdate"]["artifact"]["parts"] = json!([{"text": "x".repeat(2000)}]);
        let evs = [task("t-1", "c", "TASK_STATE_WORKING"), big];
        b.push(Reply::sse(&frames(1, &evs)));
        let req = request(json!(1), "SendStreamingMessage", new_message());
        p.send("POST", "/agents/alpha/beta/", V1, &req).await;
        let recs = settle_on(&b, &p, "/agents/alpha/beta/").await;
        let labels = [("upstream", "beta"), ("reason", "overload")];
        let m = scrape(&p).await;
        assert_eq!(
            metric(&m, "a2a_analysis_skipped_total", &labels).unwrap_or(0.0),
            overload,
            "{threads} threads"
        );
        // Judged whole, the stream ending on a working task is a finding;
        // unjudged, none.
        let want: &[&str] = if overload == 0.0 {
            &["stream_truncated"]
        } else {
            &[]
        };
        assert_eq!(kinds(&recs), want, "{threads} threads: {recs:#?}");
        p.stop().await;
    }
}
