//! A scripted gRPC upstream (h2c): answers calls in order from its script,
//! each answer its body in the pieces the test chose (a message split over
//! DATA frames, or several in one) and its trailers; trailers-only answers
//! and gzip messages too. And the caller: one call through the proxy, its
//! body bytes and trailers.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::HeaderMap;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;

/// One scripted answer.
#[derive(Clone, Debug)]
pub struct GrpcReply {
    /// Response headers beyond `content-type: application/grpc`.
    pub head: Vec<(String, String)>,
    pub chunks: Vec<Bytes>,
    /// `None`: a trailers-only answer (the status is in `head`).
    pub trailers: Option<HeaderMap>,
}

/// A message with its 5-byte prefix (`compressed`: flag 1).
pub fn framed(msg: &[u8], compressed: bool) -> Vec<u8> {
    let mut out = vec![u8::from(compressed)];
    out.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    out.extend_from_slice(msg);
    out
}

fn status_headers(code: u32, details: Option<&[u8]>) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("grpc-status", code.into());
    if let Some(d) = details {
        h.insert("grpc-status-details-bin", base64(d).parse().unwrap());
    }
    h
}

/// Unpadded standard base64, as gRPC sends `-bin` values.
pub fn base64(bytes: &[u8]) -> String {
    let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            s.push(table[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    s
}

impl GrpcReply {
    /// The messages, one DATA frame each, then status OK.
    pub fn messages(msgs: &[Vec<u8>]) -> GrpcReply {
        GrpcReply {
            head: Vec::new(),
            chunks: msgs.iter().map(|m| Bytes::from(framed(m, false))).collect(),
            trailers: Some(status_headers(0, None)),
        }
    }

    /// The messages gzip-compressed (`grpc-encoding: gzip`), one DATA frame each.
    pub fn gzip(msgs: &[Vec<u8>]) -> GrpcReply {
        let chunks = msgs
            .iter()
            .map(|m| {
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                gz.write_all(m).unwrap();
                Bytes::from(framed(&gz.finish().unwrap(), true))
            })
            .collect();
        GrpcReply {
            head: vec![("grpc-encoding".into(), "gzip".into())],
            chunks,
            trailers: Some(status_headers(0, None)),
        }
    }

    /// A trailers-only answer: `code` (and details) in the head, no body.
    pub fn trailers_only(code: u32, details: Option<&[u8]>) -> GrpcReply {
        let head = status_headers(code, details)
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
            .collect();
        GrpcReply {
            head,
            chunks: Vec::new(),
            trailers: None,
        }
    }

    /// Ends with `code` (and details) instead of OK.
    pub fn status(mut self, code: u32, details: Option<&[u8]>) -> GrpcReply {
        self.trailers = Some(status_headers(code, details));
        self
    }

    /// The body re-cut at `cuts` (byte offsets, ascending).
    pub fn cut_at(mut self, cuts: &[usize]) -> GrpcReply {
        let all = self.bytes();
        let mut chunks = Vec::new();
        let mut from = 0;
        for &c in cuts.iter().chain(std::iter::once(&all.len())) {
            if c > from && c <= all.len() {
                chunks.push(Bytes::copy_from_slice(&all[from..c]));
                from = c;
            }
        }
        self.chunks = chunks;
        self
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.chunks.iter().flat_map(|c| c.iter().copied()).collect()
    }
}

/// A body of scripted pieces, then its trailers.
struct Scripted {
    chunks: VecDeque<Bytes>,
    trailers: Option<HeaderMap>,
}

impl Body for Scripted {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(c) = self.chunks.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(c))));
        }
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty() && self.trailers.is_none()
    }
}

/// The scripted gRPC upstream.
pub struct GrpcUpstream {
    pub addr: SocketAddr,
    script: Arc<Mutex<VecDeque<GrpcReply>>>,
    /// Each call's path and request body, in order.
    pub calls: Arc<Mutex<Vec<(String, Bytes)>>>,
}

impl GrpcUpstream {
    pub async fn start() -> GrpcUpstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let script: Arc<Mutex<VecDeque<GrpcReply>>> = Arc::default();
        let calls: Arc<Mutex<Vec<(String, Bytes)>>> = Arc::default();
        let (s, c) = (script.clone(), calls.clone());
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (s, c) = (s.clone(), c.clone());
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                        let (s, c) = (s.clone(), c.clone());
                        async move {
                            let path = req.uri().path().to_owned();
                            let body = req
                                .into_body()
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            c.lock().unwrap().push((path, body));
                            let reply = s
                                .lock()
                                .unwrap()
                                .pop_front()
                                .unwrap_or_else(|| GrpcReply::trailers_only(13, None));
                            let mut resp = hyper::Response::builder()
                                .header("content-type", "application/grpc");
                            for (k, v) in &reply.head {
                                resp = resp.header(k, v);
                            }
                            let body = Scripted {
                                chunks: reply.chunks.into(),
                                trailers: reply.trailers,
                            };
                            Ok::<_, Infallible>(resp.body(body).unwrap())
                        }
                    });
                    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tcp), svc)
                        .await;
                });
            }
        });
        GrpcUpstream {
            addr,
            script,
            calls,
        }
    }

    pub fn push(&self, reply: GrpcReply) {
        self.script.lock().unwrap().push_back(reply);
    }
}

/// What a gRPC call got back: the response head, its body bytes, its trailers.
pub struct Answer {
    pub head: http::response::Parts,
    pub body: Vec<u8>,
    pub trailers: Option<HeaderMap>,
}

/// One gRPC call through `proxy` (h2c): `path`, one request message.
pub async fn call(proxy: SocketAddr, path: &str, request: &[u8]) -> Answer {
    let req = http::Request::post(format!("http://{proxy}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(super::full(framed(request, false)))
        .unwrap();
    let resp = super::within("gRPC answer", super::h2_client().request(req))
        .await
        .expect("answer");
    let (head, body) = resp.into_parts();
    let collected = super::within("gRPC body", body.collect())
        .await
        .expect("body");
    let trailers = collected.trailers().cloned();
    Answer {
        head,
        body: collected.to_bytes().to_vec(),
        trailers,
    }
}
