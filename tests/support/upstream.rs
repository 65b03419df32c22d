//! The scripted upstream of the live tests: answers requests in order from
//! its script, with bodies that may hold open or die mid-way.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// One scripted upstream answer.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub chunks: Vec<Bytes>,
    /// End the body with an error after the chunks (connection dies).
    pub die: bool,
    /// Extra response headers (e.g. `content-encoding`).
    pub headers: Vec<(String, String)>,
    /// Hold the body open after some chunks until released.
    pub hold: Option<Hold>,
}

/// Holds a scripted body open: the first `after` chunks go at once, the
/// rest (and the end) only once `release` is notified. `dropped` is
/// notified when the proxy lets go of the upstream response.
#[derive(Clone, Debug)]
pub struct Hold {
    pub after: usize,
    pub release: Arc<tokio::sync::Notify>,
    pub dropped: Arc<tokio::sync::Notify>,
}

impl Hold {
    pub fn after(n: usize) -> Hold {
        Hold {
            after: n,
            release: Arc::default(),
            dropped: Arc::default(),
        }
    }
}

impl Reply {
    /// An SSE answer, one chunk per frame.
    pub fn sse(frames: &[String]) -> Reply {
        Reply {
            status: 200,
            content_type: "text/event-stream".into(),
            chunks: frames
                .iter()
                .map(|f| Bytes::from(format!("data: {f}\n\n")))
                .collect(),
            die: false,
            headers: Vec::new(),
            hold: None,
        }
    }

    /// A JSON answer.
    pub fn json(status: u16, body: &str) -> Reply {
        Reply {
            status,
            content_type: "application/json".into(),
            chunks: vec![Bytes::from(body.to_owned())],
            die: false,
            headers: Vec::new(),
            hold: None,
        }
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.chunks.iter().flat_map(|c| c.iter().copied()).collect()
    }
}

/// A body that yields its chunks one per poll, then maybe an error.
struct Scripted {
    chunks: VecDeque<Bytes>,
    die: bool,
}

impl Body for Scripted {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(c) = self.chunks.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(c))));
        }
        if self.die {
            self.die = false;
            return Poll::Ready(Some(Err(std::io::Error::other("upstream died"))));
        }
        Poll::Ready(None)
    }
}

/// A held body: chunks come through a channel fed by a task that waits
/// for the release; the feeder learns of the body's drop when sends fail.
struct Held {
    rx: tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>,
}

impl Body for Held {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.rx.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data)))
    }
}

fn held_body(reply: Reply, hold: Hold) -> Held {
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        let mut chunks = reply.chunks.into_iter();
        for c in chunks.by_ref().take(hold.after) {
            if tx.send(Ok(c)).await.is_err() {
                hold.dropped.notify_one();
                return;
            }
        }
        tokio::select! {
            _ = hold.release.notified() => {}
            _ = tx.closed() => {
                hold.dropped.notify_one();
                return;
            }
        }
        for c in chunks {
            if tx.send(Ok(c)).await.is_err() {
                hold.dropped.notify_one();
                return;
            }
        }
        if reply.die {
            let _ = tx.send(Err(std::io::Error::other("upstream died"))).await;
        }
    });
    Held { rx }
}

/// The scripted upstream: answers requests in order from its script.
pub struct Upstream {
    pub addr: SocketAddr,
    script: Arc<Mutex<VecDeque<Reply>>>,
    /// The headers of every request it got, in order.
    heads: Arc<Mutex<Vec<http::HeaderMap>>>,
    /// The bodies of every request it got, in order.
    bodies: Arc<Mutex<Vec<Bytes>>>,
    /// The request target (path and query) of every request it got, in order.
    targets: Arc<Mutex<Vec<String>>>,
    /// Told each time a request takes its reply.
    taken: Arc<tokio::sync::Notify>,
}

impl Upstream {
    pub async fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let script: Arc<Mutex<VecDeque<Reply>>> = Arc::default();
        let heads: Arc<Mutex<Vec<http::HeaderMap>>> = Arc::default();
        let taken: Arc<tokio::sync::Notify> = Arc::default();
        let bodies: Arc<Mutex<Vec<Bytes>>> = Arc::default();
        let (s, h, t, b) = (script.clone(), heads.clone(), taken.clone(), bodies.clone());
        let targets: Arc<Mutex<Vec<String>>> = Arc::default();
        let p = targets.clone();
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let (s, h, t, b) = (s.clone(), h.clone(), t.clone(), b.clone());
                let p = p.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                        let (s, t, b) = (s.clone(), t.clone(), b.clone());
                        h.lock().unwrap().push(req.headers().clone());
                        p.lock().unwrap().push(req.uri().to_string());
                        async move {
                            // Read the whole request first, as agents do.
                            let body = req.into_body().collect().await;
                            b.lock()
                                .unwrap()
                                .push(body.map(|c| c.to_bytes()).unwrap_or_default());
                            let reply = s.lock().unwrap().pop_front().unwrap_or_else(|| {
                                Reply::json(500, r#"{"error":"script exhausted"}"#)
                            });
                            t.notify_waiters();
                            let mut resp = hyper::Response::builder()
                                .status(reply.status)
                                .header("content-type", reply.content_type.clone());
                            for (k, v) in &reply.headers {
                                resp = resp.header(k, v);
                            }
                            let body = match reply.hold.clone() {
                                Some(hold) => held_body(reply, hold).boxed_unsync(),
                                None => Scripted {
                                    chunks: reply.chunks.into(),
                                    die: reply.die,
                                }
                                .boxed_unsync(),
                            };
                            let resp = resp.body(body).unwrap();
                            Ok::<_, Infallible>(resp)
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tcp), svc)
                        .await;
                });
            }
        });
        Upstream {
            addr,
            script,
            heads,
            bodies,
            targets,
            taken,
        }
    }

    /// The request target of every request it got so far, in order.
    pub fn request_targets(&self) -> Vec<String> {
        self.targets.lock().unwrap().clone()
    }

    /// The bodies of every request it got so far, in order.
    pub fn request_bodies(&self) -> Vec<Bytes> {
        self.bodies.lock().unwrap().clone()
    }

    /// The headers of every request it got so far, in order.
    pub fn request_headers(&self) -> Vec<http::HeaderMap> {
        self.heads.lock().unwrap().clone()
    }

    pub fn push(&self, reply: Reply) {
        self.script.lock().unwrap().push_back(reply);
    }

    /// Replies not yet taken: a request takes its reply once the upstream
    /// has read it whole (so it has passed the proxy).
    pub fn pending(&self) -> usize {
        self.script.lock().unwrap().len()
    }

    /// Waits (bounded) until every reply pushed has been taken.
    pub async fn wait_taken(&self) {
        super::within("the upstream to take every reply pushed", async {
            loop {
                let taken = self.taken.notified();
                tokio::pin!(taken);
                // Listening before looking: a take in between is not missed.
                taken.as_mut().enable();
                if self.pending() == 0 {
                    return;
                }
                taken.await;
            }
        })
        .await
    }
}
