//! Serving threads: caller connections are shared out among one thread per
//! core, each exchange runs on its connection's thread from request to
//! response end, and request ids stay unique across the threads.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{request, response, Request, Response, StatusCode};
use http_body_util::BodyExt;

use crate::support::*;
use a2a_tap::proxy::{BodyEnd, ExchangeObserver, Inspector, ProxyError};

/// Where each exchange was seen: request id → the threads that saw it.
#[derive(Default)]
struct Threads(Mutex<HashMap<u64, HashSet<String>>>);

impl Threads {
    fn saw(&self, id: u64) {
        let name = std::thread::current().name().unwrap_or("?").to_string();
        if let Ok(mut m) = self.0.lock() {
            m.entry(id).or_default().insert(name);
        }
    }
}

struct Recording(Arc<Threads>);

struct Exchange {
    id: u64,
    threads: Arc<Threads>,
}

impl Inspector for Recording {
    fn begin(
        &self,
        id: u64,
        _head: &request::Parts,
        _has_body: bool,
    ) -> Option<Arc<dyn ExchangeObserver>> {
        self.0.saw(id);
        Some(Arc::new(Exchange {
            id,
            threads: self.0.clone(),
        }))
    }
}

impl ExchangeObserver for Exchange {
    fn request_data(&self, _data: &Bytes) {
        self.threads.saw(self.id);
    }
    fn request_end(&self, _end: BodyEnd) {
        self.threads.saw(self.id);
    }
    fn response_head(&self, _head: &response::Parts) {
        self.threads.saw(self.id);
    }
    fn response_data(&self, _data: &[u8]) {
        self.threads.saw(self.id);
    }
    fn response_end(&self, _data: &[u8], _end: BodyEnd) {
        self.threads.saw(self.id);
    }
    fn upstream_failed(&self, _error: &ProxyError) {
        self.threads.saw(self.id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_shared_out_and_each_exchange_stays_on_one_thread() {
    let up = upstream(|req| async move {
        let body = req.into_body().collect().await.map(|b| b.to_bytes());
        Response::new(full(body.unwrap_or_default()))
    })
    .await;
    let threads = Arc::new(Threads::default());
    let tap = proxy_with(config(up), Some(Arc::new(Recording(threads.clone())))).await;
    let addr = tap.listen_addr();

    // Eight caller connections at once, five exchanges on each.
    let mut callers = Vec::new();
    for c in 0..8 {
        callers.push(tokio::spawn(async move {
            let client = client();
            for i in 0..5 {
                let sent = format!("caller {c} exchange {i}");
                let req = Request::post(format!("http://{addr}/echo"))
                    .body(full(sent.clone()))
                    .expect("request");
                let (head, body) = send(&client, req).await;
                assert_eq!((head.status, &body[..]), (StatusCode::OK, sent.as_bytes()));
            }
        }));
    }
    for c in callers {
        within("caller", c).await.expect("caller finished");
    }

    let seen = threads.0.lock().expect("lock").clone();
    assert_eq!(seen.len(), 40, "40 exchanges, 40 distinct request ids");
    let mut used = HashSet::new();
    for (id, names) in &seen {
        assert_eq!(names.len(), 1, "exchange {id} crossed threads: {names:?}");
        let name = names.iter().next().expect("one");
        assert!(
            name.starts_with("a2a-tap-serve-"),
            "exchange {id} on {name}"
        );
        used.extend(names.iter().cloned());
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert_eq!(used.len(), cores.min(8), "serving threads used: {used:?}");
}

/// Request ids in the order `begin` saw them.
#[derive(Default)]
struct Order(Mutex<Vec<u64>>);

impl Inspector for Order {
    fn begin(
        &self,
        id: u64,
        _head: &request::Parts,
        _has_body: bool,
    ) -> Option<Arc<dyn ExchangeObserver>> {
        if let Ok(mut ids) = self.0.lock() {
            ids.push(id);
        }
        None
    }
}

/// Two connections on two serving threads, requests taken in turn: the
/// ids count up in arrival order (one counter for every thread), not per
/// thread (then the first connection's second request would be 3, ahead
/// of the other's 2).
#[tokio::test]
async fn request_ids_follow_arrival_order_across_threads() {
    let up = upstream(|_req| async move { Response::new(full("ok")) }).await;
    let order = Arc::new(Order::default());
    let mut cfg = config(up);
    cfg.proxy.threads = 2;
    let tap = proxy_with(cfg, Some(order.clone())).await;
    let addr = tap.listen_addr();
    // One client each: its own keep-alive connection, so its own thread.
    let (a, b) = (client(), client());
    for caller in [&a, &a, &b, &a, &b] {
        let req = Request::get(format!("http://{addr}/x"))
            .body(full(""))
            .expect("request");
        let (head, _) = send(caller, req).await;
        assert_eq!(head.status, StatusCode::OK);
    }
    let ids = order.0.lock().expect("lock").clone();
    assert_eq!(ids, [1, 2, 3, 4, 5], "ids in arrival order");
}
