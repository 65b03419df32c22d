//! The probe's HTTP client: every request goes to the origin given on the
//! command line (scheme, host and port), within a request budget and a
//! deadline, each answer read up to a size limit and a time limit. Each
//! exchange is kept (request and answer) and judged by the engine at once.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client as Hyper;
use hyper_util::rt::TokioExecutor;

use super::answer::{event, settles, Answer};
use crate::judge::Answer as Answered;
use crate::lifecycle::End;
use crate::report::audit::Record;
use crate::report::offline::{Offline, Source};
use crate::sse::{Frame, Framer};

/// The bounds of one probe run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_requests: usize,
    pub total: Duration,
    pub per_request: Duration,
    /// Largest body kept of one answer (a stream's too); past it the
    /// probe stops reading.
    pub max_body: usize,
    /// How long a stream is still read after it showed a terminal or
    /// interrupted state (a correct agent closes it at once).
    pub grace: Duration,
}

/// One exchange the probe made.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    /// Its number in the run (1-based), also its record's `request_id`.
    pub n: usize,
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub status: Option<u16>,
    pub content_type: Option<String>,
    pub answer: Vec<u8>,
    /// The probe stopped reading before the body ended (time or size).
    pub cut: Option<String>,
    /// The connection failed, or no head came in time.
    pub failure: Option<String>,
    pub elapsed: Duration,
    /// The answer as read.
    pub read: Answer,
    /// The engine's findings on it.
    pub records: Vec<Record>,
}

/// Why a request was not sent: the request budget or the deadline is
/// spent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    #[error("the probe's request budget ({0}) was spent")]
    Requests(usize),
    #[error("the probe's time limit ({0} s) was reached")]
    Time(u64),
}

/// The client of one run.
pub(crate) struct Client {
    http: Hyper<HttpsConnector<HttpConnector>, Full<Bytes>>,
    limits: Limits,
    started: Instant,
    judge: Offline,
    upstream: String,
    /// Every exchange, in order.
    pub sent: Vec<Sent>,
}

impl Client {
    /// A client for `https` or plain http, judging with `judge`.
    pub(crate) fn new(
        https: bool,
        limits: Limits,
        judge: Offline,
        upstream: String,
    ) -> Result<Client, crate::tls::TlsError> {
        let tls = crate::tls::tls_config(https, None)?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(limits.per_request));
        let connector = HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        Ok(Client {
            http: Hyper::builder(TokioExecutor::new()).build(connector),
            limits,
            started: Instant::now(),
            judge,
            upstream,
            sent: Vec::new(),
        })
    }

    /// Time since the run began.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The run's limits.
    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// Sends one request and reads its answer; returns its index in `sent`.
    pub(crate) async fn send(
        &mut self,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Vec<u8>,
    ) -> Result<usize, Refused> {
        if self.sent.len() >= self.limits.max_requests {
            return Err(Refused::Requests(self.limits.max_requests));
        }
        let deadline = self.started + self.limits.total;
        let now = Instant::now();
        if now >= deadline {
            return Err(Refused::Time(self.limits.total.as_secs()));
        }
        let until = deadline.min(now + self.limits.per_request);
        let mut sent = Sent {
            n: self.sent.len() + 1,
            method: method.clone(),
            uri: uri.clone(),
            headers: headers.clone(),
            body: body.clone(),
            status: None,
            content_type: None,
            answer: Vec::new(),
            cut: None,
            failure: None,
            elapsed: Duration::ZERO,
            read: Answer::Silent(String::new()),
            records: Vec::new(),
        };
        let mut req = Request::builder().method(method).uri(uri);
        if let Some(h) = req.headers_mut() {
            *h = headers;
        }
        match req.body(Full::new(Bytes::from(body))) {
            Ok(req) => self.exchange(req, until, &mut sent).await,
            Err(e) => sent.failure = Some(format!("cannot build the request: {e}")),
        }
        sent.elapsed = now.elapsed();
        sent.read = match &sent.failure {
            Some(why) => Answer::Silent(why.clone()),
            None => Answer::read(
                sent.status.unwrap_or(0),
                sent.content_type.as_deref(),
                &sent.answer,
            ),
        };
        sent.records = self.judge_sent(&sent);
        self.sent.push(sent);
        Ok(self.sent.len() - 1)
    }

    async fn exchange(&self, req: Request<Full<Bytes>>, until: Instant, sent: &mut Sent) {
        let until = tokio::time::Instant::from_std(until);
        let resp = match tokio::time::timeout_at(until, self.http.request(req)).await {
            Err(_) => {
                sent.failure = Some(format!(
                    "no answer within {} s",
                    self.limits.per_request.as_secs()
                ));
                return;
            }
            Ok(Err(e)) => {
                sent.failure = Some(error_chain(&e));
                return;
            }
            Ok(Ok(resp)) => resp,
        };
        sent.status = Some(resp.status().as_u16());
        sent.content_type = resp
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let is_stream = sent
            .content_type
            .as_deref()
            .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
        let mut body = resp.into_body();
        let mut until = until;
        let mut settled = false;
        let mut framer = Framer::new(self.limits.max_body);
        loop {
            match tokio::time::timeout_at(until, body.frame()).await {
                Err(_) => {
                    sent.cut = Some(if settled {
                        format!(
                            "the stream stayed open {} ms after the task's last state",
                            self.limits.grace.as_millis()
                        )
                    } else {
                        format!(
                            "the answer did not end within {} s",
                            self.limits.per_request.as_secs()
                        )
                    });
                    return;
                }
                Ok(None) => return,
                Ok(Some(Err(e))) => {
                    sent.cut = Some(format!("the connection failed mid-body: {e}"));
                    return;
                }
                Ok(Some(Ok(frame))) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    let room = self.limits.max_body.saturating_sub(sent.answer.len());
                    sent.answer.extend_from_slice(&data[..data.len().min(room)]);
                    if data.len() > room {
                        sent.cut = Some(format!(
                            "the answer is larger than {} bytes",
                            self.limits.max_body
                        ));
                        return;
                    }
                    let mut ends = false;
                    if is_stream && !settled {
                        framer.push(&data, &mut |frame| {
                            if let Frame::Event(ev) = frame {
                                ends |= event(ev.data).is_some_and(|e| settles(&e));
                            }
                        });
                    }
                    if ends {
                        settled = true;
                        let grace = tokio::time::Instant::now() + self.limits.grace;
                        until = until.min(grace);
                    }
                }
            }
        }
    }

    /// The timelines of the exchanges judged so far (with
    /// `--format html`), taken.
    pub(crate) fn lanes(&mut self) -> Vec<crate::report::timeline::Lane> {
        std::mem::take(&mut self.judge.lanes)
    }

    /// The engine's records of one exchange (none for a request that is
    /// not A2A, or that had no answer).
    fn judge_sent(&mut self, sent: &Sent) -> Vec<Record> {
        let Some(status) = sent.status else {
            return Vec::new();
        };
        let version = sent.headers.get(crate::a2a::classify::A2A_VERSION);
        let exchange =
            crate::a2a::classify::classify_with(&sent.method, &sent.uri, version, &sent.body)
                .or_else(|| {
                    // A card URL at another path is still the agent card.
                    let card: Uri = "/.well-known/agent-card.json".parse().ok()?;
                    (sent.n == 1)
                        .then(|| {
                            crate::a2a::classify::classify_with(&Method::GET, &card, None, b"")
                        })
                        .flatten()
                });
        let Some(exchange) = exchange else {
            return Vec::new();
        };
        let millis = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let answer = Answered {
            status,
            content_type: sent.content_type.as_deref(),
            body: &sent.answer,
            // The probe stopped reading a stream itself.
            end: if sent.cut.is_some() {
                End::ClientGone
            } else {
                End::Upstream
            },
            at: Some(millis),
        };
        let from = Source {
            label: format!("#{}", sent.n),
            upstream: &self.upstream,
            started: None,
        };
        let records = self.judge.judge(exchange, answer, from);
        // The HTML report shows the request as sent.
        if let Some(lane) = self.judge.lanes.last_mut() {
            lane.request = format!("{} {} ({})", sent.method, sent.uri, lane.request);
        }
        records
    }
}

/// An error and its sources, on one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// A header map holding `pairs`.
pub(crate) fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        if let Ok(v) = HeaderValue::from_str(value) {
            map.insert(*name, v);
        }
    }
    map
}
