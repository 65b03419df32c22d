//! Hostile agents and callers, and a faulty host, against the running
//! binary: agent data that tries to forge log lines, a full disk, request
//! bodies that never end, descriptor exhaustion, a log pipe nobody reads.

use crate::support::a2a::*;
use crate::support::process::{rss_kib, Process};
use crate::support::{Proxied, Reply, Upstream};
use serde_json::{json, Value};

async fn setup(extra: &str) -> (Upstream, Process) {
    let up = Upstream::start().await;
    let proxy = Process::start(up.addr, extra);
    (up, proxy)
}

async fn send_stream(up: &Upstream, p: &Process, id: i64, events: &[Value]) {
    let req = request(json!(id), "SendStreamingMessage", new_message());
    exchange(up, p, req, Reply::sse(&frames(id, events))).await;
}

/// An agent-chosen id with a newline, CR, BEL and an escape sequence lands
/// in a finding's detail, which the text log prints: it must stay one line,
/// its control characters escaped (before, the newline forged a whole log
/// line of the agent's choosing).
#[tokio::test]
async fn agent_data_cannot_forge_log_lines() {
    let (up, p) = setup("[log]\nformat = \"text\"\n").await;
    let forged = "a\n2026-12-01T00:00:00.000000Z  INFO a2a_tap: forged line\r\x07\x1b[2J";
    send_stream(
        &up,
        &p,
        1,
        &[
            task("t-1", "c", "TASK_STATE_WORKING"),
            artifact("t-1", "c", forged, true, true),
            status("t-1", "c", "TASK_STATE_COMPLETED"),
        ],
    )
    .await;
    let recs = settle(&up, &p).await;
    assert_eq!(kinds(&recs), ["append_to_unknown_artifact"], "{recs:#?}");
    // The audit record keeps the id as sent (JSON escapes it).
    assert!(recs[0]["detail"].as_str().unwrap().contains(forged));
    let log = p.stderr();
    let line = log
        .lines()
        .find(|l| l.contains("append_to_unknown_artifact"))
        .unwrap_or_else(|| panic!("no log line for the finding:\n{log}"));
    assert!(
        line.contains(r"a\n2026-12-01T00:00:00.000000Z  INFO a2a_tap: forged line\r\u{7}\u{1b}[2J"),
        "{line}"
    );
    assert!(
        !log.lines().any(|l| l.starts_with("2026-12-01T00:00:00")),
        "{log}"
    );
    assert!(
        !log.contains('\r') && !log.contains('\x07') && !log.contains('\x1b'),
        "{log:?}"
    );
}

/// A full disk (here a file size limit: the kernel fails the writes past
/// it, EFBIG) never leaves a partial record: each line in the file is a
/// whole record, the records that did not fit are counted as dropped, no
/// more and no less, and once there is room again records go on, each on
/// its own line (before, the cut record and the next one shared a line).
#[tokio::test]
async fn a_full_disk_leaves_whole_lines_and_counts_what_it_dropped() {
    let (up, p) = setup("").await;
    let limit = |spec: &str| {
        let ok = std::process::Command::new("prlimit")
            .args(["--pid", &p.pid().to_string(), &format!("--fsize={spec}")])
            .status()
            .expect("run prlimit (util-linux)")
            .success();
        assert!(ok, "prlimit --fsize={spec}");
    };
    let bad = |t: &str| {
        let pad = "p".repeat(600);
        vec![
            json!({"task": {"id": t, "contextId": "c", "status": {"state": "TASK_STATE_UNSPECIFIED"},
            "metadata": {"pad": pad}}}),
        ]
    };
    // Room for a few records, then the disk is "full".
    limit("2500:unlimited");
    for i in 0..6 {
        send_stream(&up, &p, i, &bad(&format!("t-full-{i}"))).await;
    }
    // Every one of the six is either in the file or counted.
    let audit = p.audit.clone();
    // Whole lines only: a record being cut back after a failed write may
    // show for a moment as a line without its end.
    let in_file = move || {
        let text = std::fs::read_to_string(&audit).unwrap_or_default();
        text.split_inclusive('\n')
            .filter(|l| l.ends_with('\n') && l.contains("t-full-"))
            .count()
    };
    let m = p
        .wait_metrics("six records written or dropped", |m| {
            let dropped =
                crate::support::metric(m, "a2a_audit_records_dropped_total", &[]).unwrap_or(0.0);
            dropped > 0.0 && dropped as usize + in_file() == 6
        })
        .await;
    let dropped = crate::support::metric(&m, "a2a_audit_records_dropped_total", &[]).unwrap();
    limit("unlimited:unlimited");
    for i in 6..9 {
        send_stream(&up, &p, i, &bad(&format!("t-room-{i}"))).await;
    }
    let _ = settle(&up, &p).await;
    let text = std::fs::read_to_string(&p.audit).expect("audit log");
    let lines: Vec<&str> = text.lines().collect();
    for line in &lines {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("torn line ({e}): {line}"));
        assert!(v["kind"].is_string());
    }
    assert!(text.ends_with('\n'));
    let full = lines.iter().filter(|l| l.contains("t-full-")).count();
    assert!((1..6).contains(&full), "some fit, some did not: {full}");
    assert_eq!(
        dropped,
        (6 - full) as f64,
        "exactly the records not written are counted"
    );
    for i in 6..9 {
        assert!(
            text.contains(&format!("t-room-{i}")),
            "record {i} after room came back"
        );
    }
    let m = p.metrics().await;
    assert_eq!(
        crate::support::metric(&m, "a2a_audit_records_dropped_total", &[]),
        Some(dropped)
    );
}

/// An upstream that reads every request body as it comes and never
/// answers (the bodies never end).
async fn sink_upstream() -> std::net::SocketAddr {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n) = s.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                }
            });
        }
    });
    addr
}

/// Request bodies gathered for classification share the one analysis
/// budget (`analysis.queue_bytes`): 40 callers that each send 400 KB of a
/// body and never the last byte do not make the proxy hold 40 × 400 KB
/// (before: each held up to `max_request_bytes` outside the budget, and
/// pinned its read buffer; 900 such callers grew RSS by 1.3 GB).
#[tokio::test]
async fn request_bodies_held_for_analysis_stay_within_the_budget() {
    use tokio::io::AsyncWriteExt;
    let up = sink_upstream().await;
    let p = Process::start(
        up,
        "[analysis]\nqueue_bytes = 1048576\nmax_request_bytes = 1048576\n",
    );
    let before = rss_kib(p.pid());
    let chunk = vec![b' '; 16 * 1024];
    let mut callers = Vec::new();
    for _ in 0..40 {
        let mut s = tokio::net::TcpStream::connect(p.listen)
            .await
            .expect("connect");
        let head = format!(
            "POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"x\":\"",
            1 << 20
        );
        s.write_all(head.as_bytes()).await.expect("head");
        for _ in 0..25 {
            s.write_all(&chunk).await.expect("body");
        }
        callers.push(s);
    }
    // Let the proxy take in what was sent: a kept sleep, as nothing tells
    // when it has read an unfinished body (no counter, no log line).
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let grown = rss_kib(p.pid()).saturating_sub(before);
    eprintln!("grown {grown} KiB");
    assert!(
        grown < 12 * 1024,
        "40 callers × 400 KB of unfinished bodies grew the proxy by {grown} KiB"
    );
    drop(callers);
}

/// The proxy's open file descriptors.
fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// An upstream that holds every request until `release` is notified, then
/// answers each; counts the connections it was opened.
async fn holding_upstream(
    release: std::sync::Arc<tokio::sync::Notify>,
) -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use hyper::service::service_fn;
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let open = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = open.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let release = release.clone();
            tokio::spawn(async move {
                let service = service_fn(move |_req| {
                    let release = release.clone();
                    async move {
                        release.notified().await;
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(
                            http_body_util::Full::new(bytes::Bytes::from_static(b"ok")),
                        ))
                    }
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(s), service)
                    .await;
            });
        }
    });
    (addr, open)
}

/// File descriptors are bounded: with `RLIMIT_NOFILE` at 256, 12 h2
/// callers opening 30 streams each (each would take an HTTP/1.1 upstream
/// connection: before, 12 such callers exhausted 2,048 descriptors) and 40
/// more callers that send nothing leave the proxy within its limit,
/// `/healthz` answering throughout, nothing logged as a failed accept; once
/// the upstream answers, every stream completes.
#[tokio::test]
async fn file_descriptors_stay_within_the_limit_and_healthz_answers() {
    use http_body_util::BodyExt;
    let release = std::sync::Arc::new(tokio::sync::Notify::new());
    let (up, upstream_conns) = holding_upstream(release.clone()).await;
    let p = Process::start_with_nofile(up, "validate = false\n", 256);
    assert!(
        p.stderr().contains("RLIMIT_NOFILE is too low"),
        "{}",
        p.stderr()
    );
    let mut streams = Vec::new();
    for _ in 0..12 {
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .http2_only(true)
                .build_http::<http_body_util::Full<bytes::Bytes>>();
        for i in 0..30 {
            let client = client.clone();
            let url = format!("http://{}/s{i}", p.listen);
            streams.push(tokio::spawn(async move {
                let req = hyper::Request::get(url)
                    .body(http_body_util::Full::default())
                    .unwrap();
                let resp = client.request(req).await.expect("response");
                let status = resp.status();
                let body = resp.into_body().collect().await.expect("body").to_bytes();
                (status, body)
            }));
        }
    }
    let mut silent = Vec::new();
    for _ in 0..40 {
        silent.push(
            tokio::net::TcpStream::connect(p.listen)
                .await
                .expect("connect"),
        );
    }
    for _ in 0..10 {
        // A kept sleep: the bound must hold while time passes.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let n = fds(p.pid());
        assert!(n <= 256, "{n} descriptors open");
        let health = tokio::time::timeout(std::time::Duration::from_secs(2), async {
            let client =
                hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                    .build_http::<http_body_util::Full<bytes::Bytes>>();
            let req = hyper::Request::get(format!("http://{}/healthz", p.admin))
                .body(http_body_util::Full::default())
                .unwrap();
            client.request(req).await.map(|r| r.status().as_u16())
        })
        .await;
        assert!(matches!(health, Ok(Ok(200))), "/healthz: {health:?}");
    }
    let opened = upstream_conns.load(std::sync::atomic::Ordering::SeqCst);
    assert!(opened < 256, "{opened} upstream connections");
    drop(silent);
    for _ in 0..400 {
        release.notify_waiters();
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        if streams.iter().all(|s| s.is_finished()) {
            break;
        }
    }
    for s in streams {
        let (status, body) = tokio::time::timeout(std::time::Duration::from_secs(20), s)
            .await
            .expect("stream in time")
            .expect("join");
        assert_eq!((status.as_u16(), &body[..]), (200, &b"ok"[..]));
    }
    assert!(!p.stderr().contains("accept failed"), "{}", p.stderr());
}

/// A log pipe nobody reads (a stuck log collector) does not block traffic:
/// every exchange here is refused (413) by the serving thread, which logs
/// it, to a stderr pipe that fills; the exchanges go on without waiting,
/// and the lines that could not be written are dropped and counted
/// (before, every serving thread blocked on stderr while `/healthz` still
/// said 200).
#[tokio::test]
async fn a_stalled_log_does_not_block_traffic() {
    let up = Upstream::start().await;
    let p = Process::start_with_unread_stderr(up.addr, "[proxy]\nmax_request_body = 16\n");
    let started = std::time::Instant::now();
    let mut dropped = 0.0;
    let body = "x".repeat(64);
    for i in 0..50_000 {
        let (status, _) = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            p.send("POST", "/", V1, &body),
        )
        .await
        .unwrap_or_else(|_| panic!("exchange {i} blocked"));
        assert_eq!(status, 413);
        if i % 500 == 499 {
            let m = p.metrics().await;
            dropped = crate::support::metric(&m, "a2a_log_lines_dropped_total", &[]).unwrap_or(0.0);
            if dropped > 0.0 {
                break;
            }
        }
    }
    assert!(dropped > 0.0, "no log line dropped: the pipe never filled?");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// The descriptor line at start: one line that says the limit it got and
/// what to set. A limit a little short of what the configured limits want
/// (2,000 of 2,346 here: 846 of 1,000 callers still served) is no warning;
/// one that halves the callers served (800) is.
#[tokio::test]
async fn the_nofile_line_names_the_limit_and_what_to_set_and_warns_only_when_it_bites() {
    let up = crate::support::Upstream::start().await;
    let config =
        "validate = false\n[proxy]\nmax_connections = 1000\nmax_upstream_connections = 1000\n";
    let warned = |log: &str| -> Vec<String> {
        log.lines()
            .filter(|l| l.contains("RLIMIT_NOFILE") && l.contains("WARN"))
            .map(str::to_owned)
            .collect()
    };
    let near = Process::start_with_nofile(up.addr, config, 2_000);
    let log = near.stderr();
    assert!(
        log.contains("RLIMIT_NOFILE is too low: 2000 descriptors"),
        "{log}"
    );
    assert_eq!(warned(&log), Vec::<String>::new(), "{log}");
    let low = Process::start_with_nofile(up.addr, config, 800);
    let log = low.stderr();
    let lines = warned(&log);
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains("800 descriptors"), "{log}");
    assert!(lines[0].contains("LimitNOFILE=2346"), "{log}");
    assert!(lines[0].contains("ulimit -n 2346"), "{log}");
}

/// A storm of findings (an agent breaking the protocol on every stream)
/// does not flood the log: at most 50 finding lines a second go to it, and
/// one line tells how many more there were; the audit log has every one.
/// The accounting is exact: lines written plus lines told of are the
/// records.
#[tokio::test]
async fn a_storm_of_findings_is_logged_within_its_allowance_and_audited_whole() {
    let (up, p) = setup("[log]\nformat = \"text\"\n").await;
    let streams = 150;
    // Every stream appends to an artifact it never opened and ends with its
    // task still working: findings on each, whichever request it answers.
    let events = [
        task("t-storm", "c", "TASK_STATE_WORKING"),
        artifact("t-storm", "c", "never-opened", true, false),
    ];
    for _ in 0..streams {
        up.push(Reply::sse(&frames(1, &events)));
    }
    let started = std::time::Instant::now();
    let mut sends = tokio::task::JoinSet::new();
    for _ in 0..streams {
        let (listen, body) = (
            p.listen(),
            request(json!(1), "SendStreamingMessage", new_message()),
        );
        sends.spawn(async move {
            crate::support::request_to(listen, "POST", "/", V1, &body)
                .await
                .0
        });
    }
    while let Some(status) = sends.join_next().await {
        assert_eq!(status.expect("join"), 200);
    }
    let sent_in = started.elapsed();
    let recs = settle(&up, &p).await;
    assert!(recs.len() >= streams, "{} records", recs.len());
    // Settling's own sentinel is a finding too.
    let findings = recs.len() as u64 + 1;
    let count = |log: &str| -> (usize, u64) {
        let lines = log
            .lines()
            .filter(|l| l.contains(" kind=") && l.contains("WARN"))
            .count();
        let told = log
            .lines()
            .filter_map(|l| l.split("not_logged=").nth(1))
            .map(|n| n.trim().parse::<u64>().expect("a count"))
            .sum();
        (lines, told)
    };
    // The count of the lines held back is told once their second is over.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let (lines, told) = loop {
        let (lines, told) = count(&p.stderr());
        if lines as u64 + told == findings || std::time::Instant::now() > deadline {
            break (lines, told);
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(
        lines as u64 + told,
        findings,
        "{lines} lines and {told} told of, for {findings} records"
    );
    let seconds = sent_in.as_secs() as usize + 2;
    assert!(
        lines <= 50 * seconds,
        "{lines} finding lines in about {seconds} s"
    );
    if sent_in < std::time::Duration::from_millis(900) {
        assert!(
            told > 0,
            "{} records in {sent_in:?}, all logged",
            recs.len()
        );
    }
}
