//! TeeBody: every byte seen, frames unchanged, the end reported exactly once.

use super::*;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Empty, Full};

#[derive(Default)]
struct Seen {
    bytes: Vec<u8>,
    chunks: usize,
    ends: Vec<BodyEnd>,
    /// Chunks seen at each pause.
    pauses: Vec<usize>,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Seen>>);

impl BodyObserver for Recorder {
    fn data(&mut self, chunk: &Bytes) {
        let mut seen = self.0.lock().expect("lock");
        seen.bytes.extend_from_slice(chunk);
        seen.chunks += 1;
    }
    fn pause(&mut self) {
        let mut seen = self.0.lock().expect("lock");
        let chunks = seen.chunks;
        seen.pauses.push(chunks);
    }
    fn end(&mut self, end: BodyEnd) {
        self.0.lock().expect("lock").ends.push(end);
    }
}

impl Recorder {
    fn seen(&self) -> (Vec<u8>, usize, Vec<BodyEnd>) {
        let s = self.0.lock().expect("lock");
        (s.bytes.clone(), s.chunks, s.ends.clone())
    }
}

/// A scripted body: yields its items in order, `Pending` once between each.
struct Script {
    items: VecDeque<Result<Frame<Bytes>, std::io::Error>>,
    pending_next: bool,
}

impl Script {
    fn new(items: Vec<Result<Frame<Bytes>, std::io::Error>>) -> Script {
        Script {
            items: items.into(),
            pending_next: true,
        }
    }
}

impl Body for Script {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        if self.pending_next {
            self.pending_next = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.pending_next = true;
        Poll::Ready(self.items.pop_front())
    }
}

fn data(s: &str) -> Result<Frame<Bytes>, std::io::Error> {
    Ok(Frame::data(Bytes::copy_from_slice(s.as_bytes())))
}

#[tokio::test]
async fn complete_body_passes_every_frame_and_ends_once() {
    let rec = Recorder::default();
    let trailers = http::HeaderMap::from_iter([(
        http::header::HeaderName::from_static("x-t"),
        http::HeaderValue::from_static("1"),
    )]);
    let script = Script::new(vec![
        data("data: a\n\n"),
        data(""),
        data("data: b\n\n"),
        Ok(Frame::trailers(trailers.clone())),
    ]);
    let mut tee = TeeBody::new(script, rec.clone());
    let mut out = Vec::new();
    let mut got_trailers = None;
    while let Some(frame) = tee.frame().await {
        let frame = frame.expect("no error");
        match frame.into_data() {
            Ok(d) => out.extend_from_slice(&d),
            Err(f) => got_trailers = f.into_trailers().ok(),
        }
    }
    assert_eq!(out, b"data: a\n\ndata: b\n\n");
    assert_eq!(got_trailers, Some(trailers));
    drop(tee);
    let (bytes, chunks, ends) = rec.seen();
    assert_eq!(bytes, out);
    assert_eq!(chunks, 3);
    assert_eq!(ends, vec![BodyEnd::Complete]);
}

#[tokio::test]
async fn a_pause_is_reported_each_time_the_body_has_nothing_ready() {
    let rec = Recorder::default();
    // Pending before each item: before "a", before "b", before the end.
    let script = Script::new(vec![data("a"), data("b")]);
    let mut tee = TeeBody::new(script, rec.clone());
    while tee.frame().await.is_some() {}
    assert_eq!(rec.0.lock().expect("lock").pauses, [0, 1, 2]);
    // A body that is always ready never pauses.
    let rec = Recorder::default();
    let mut tee = TeeBody::new(Full::new(Bytes::from_static(b"{}")), rec.clone());
    while tee.frame().await.is_some() {}
    assert!(rec.0.lock().expect("lock").pauses.is_empty());
}

#[tokio::test]
async fn error_is_passed_on_and_reported_once() {
    let rec = Recorder::default();
    let script = Script::new(vec![
        data("part"),
        Err(std::io::Error::other("upstream died")),
    ]);
    let mut tee = TeeBody::new(script, rec.clone());
    assert!(tee.frame().await.is_some_and(|f| f.is_ok()));
    assert!(tee.frame().await.is_some_and(|f| f.is_err()));
    drop(tee);
    let (bytes, _, ends) = rec.seen();
    assert_eq!(bytes, b"part");
    assert_eq!(ends, vec![BodyEnd::Error]);
}

#[tokio::test]
async fn dropped_before_the_end_is_reported_once() {
    let rec = Recorder::default();
    let script = Script::new(vec![data("one"), data("two")]);
    let mut tee = TeeBody::new(script, rec.clone());
    assert!(tee.frame().await.is_some());
    drop(tee);
    let (bytes, _, ends) = rec.seen();
    assert_eq!(bytes, b"one");
    assert_eq!(ends, vec![BodyEnd::Dropped]);
}

#[tokio::test]
async fn full_body_completes_without_a_trailing_poll() {
    // Full reports is_end_stream after its one frame: the end must come then.
    let rec = Recorder::default();
    let mut tee = TeeBody::new(Full::new(Bytes::from_static(b"{}")), rec.clone());
    assert_eq!(tee.size_hint().exact(), Some(2));
    assert!(tee.frame().await.is_some());
    assert!(tee.is_end_stream());
    assert_eq!(rec.seen().2, vec![BodyEnd::Complete]);
    drop(tee);
    assert_eq!(rec.seen().2, vec![BodyEnd::Complete]);
}

#[tokio::test]
async fn unpolled_empty_body_counts_as_complete() {
    let rec = Recorder::default();
    let tee = TeeBody::new(Empty::<Bytes>::new(), rec.clone());
    assert!(tee.is_end_stream());
    drop(tee);
    assert_eq!(rec.seen().2, vec![BodyEnd::Complete]);
}
