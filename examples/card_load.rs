//! The large-card load of issue 34, to measure what one agent card costs
//! the other callers of a2a-tap with `rewrite_agent_card = true`.
//!
//! `card_load serve ADDR`: an upstream whose agent card (at any
//! `…/agent-card.json`) has 10,000 interfaces (1,030,070 bytes, as sent),
//! every other path a small JSON-RPC answer.
//! `card_load load PROXY_ADDR SECONDS CARD_CLIENTS`: CARD_CLIENTS callers
//! fetch the card in a loop while 8 other callers each send a small request
//! every 10 ms (a bounded load); prints the other callers' p50 and p99 and
//! how many cards were fetched.
#![forbid(unsafe_code)]

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};

/// The 1 MB card, naming the upstream's own address 10,000 times.
fn card(addr: &str) -> Bytes {
    let interfaces: Vec<String> = (0..10_000)
        .map(|i| {
            format!(
                r#"{{"url":"http://{addr}/a2a/jsonrpc/{i:05}","protocolBinding":"JSONRPC","protocolVersion":"1.0"}}"#
            )
        })
        .collect();
    Bytes::from(format!(
        r#"{{"name":"big","version":"1","capabilities":{{}},"supportedInterfaces":[{}]}}"#,
        interfaces.join(",")
    ))
}

async fn serve(addr: &str) {
    let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
    let card = card(addr);
    eprintln!("card_load: serving a {} byte card at {addr}", card.len());
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let card = card.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req: Request<Incoming>| {
                let body = if req.uri().path().ends_with("/agent-card.json") {
                    card.clone()
                } else {
                    Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
                };
                async move {
                    let _ = req.into_body().collect().await;
                    Ok::<_, Infallible>(
                        Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(body))
                            .expect("response"),
                    )
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), svc)
                .await;
        });
    }
}

async fn load(proxy: String, seconds: u64, card_clients: usize) {
    let client: Client<_, Empty<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let until = Instant::now() + Duration::from_secs(seconds);
    let cards = Arc::new(AtomicU64::new(0));
    let mut fetchers = Vec::new();
    for _ in 0..card_clients {
        let (client, cards, url) = (
            client.clone(),
            cards.clone(),
            format!("http://{proxy}/.well-known/agent-card.json"),
        );
        fetchers.push(tokio::spawn(async move {
            while Instant::now() < until {
                let Ok(resp) = client.get(url.parse().expect("url")).await else {
                    continue;
                };
                if resp.into_body().collect().await.is_ok() {
                    cards.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let mut others = Vec::new();
    for _ in 0..8 {
        let (client, url) = (client.clone(), format!("http://{proxy}/ping"));
        others.push(tokio::spawn(async move {
            let mut took = Vec::new();
            while Instant::now() < until {
                let start = Instant::now();
                if let Ok(resp) = client.get(url.parse().expect("url")).await {
                    let _ = resp.into_body().collect().await;
                    took.push(start.elapsed());
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            took
        }));
    }
    let mut took = Vec::new();
    for o in others {
        took.extend(o.await.unwrap_or_default());
    }
    for f in fetchers {
        let _ = f.await;
    }
    took.sort();
    let at = |q: f64| {
        took.get(((took.len() as f64 * q) as usize).min(took.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "card_clients={card_clients} other_requests={} p50_ms={:.2} p99_ms={:.2} cards_fetched={}",
        took.len(),
        at(0.5),
        at(0.99),
        cards.load(Ordering::Relaxed)
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("serve") => serve(args.get(2).map_or("127.0.0.1:18920", |a| a)).await,
        Some("load") if args.len() == 5 => {
            let seconds = args[3].parse().expect("SECONDS");
            let clients = args[4].parse().expect("CARD_CLIENTS");
            load(args[2].clone(), seconds, clients).await;
        }
        _ => eprintln!(
            "usage: card_load serve ADDR | card_load load PROXY_ADDR SECONDS CARD_CLIENTS"
        ),
    }
}
