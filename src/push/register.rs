//! The relay's alterations of the caller's traffic: a push config's `url`
//! replaced by a relay URL on the way to the agent (nothing else of the
//! request changes), and relay URLs in the agent's config answers
//! (Create, Get, List) shown back as the caller's own URL.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::{header, HeaderValue, Method};
use http_body_util::{BodyExt, Either};

use super::table::Refused;
use super::Relay;
use crate::a2a::classify::classify;
use crate::a2a::model::{Binding, Operation};
use crate::a2a::push::{configs, deleted_config, grpc};
use crate::judge::push::Registration;
use crate::proxy::gather::{gather, Gathered, Held};
use crate::proxy::{
    ProxyBody, RequestTransform, RequestTransformed, ResponseTransform, Transformed,
};

/// Whether a request may carry, delete or show a push config (the
/// requests the relay reads before they go upstream): a gRPC call only of
/// those operations (its other calls, streams of either way, pass as
/// they come).
pub(super) fn concerns(head: &http::request::Parts) -> bool {
    let grpc = head
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"));
    match head.method {
        Method::POST if grpc => grpc_route(head.uri.path()).is_some_and(|op| {
            matches!(
                op,
                Operation::SendMessage
                    | Operation::SendStreamingMessage
                    | Operation::CreateTaskPushNotificationConfig
                    | Operation::GetTaskPushNotificationConfig
                    | Operation::ListTaskPushNotificationConfigs
                    | Operation::DeleteTaskPushNotificationConfig
            )
        }),
        Method::POST | Method::DELETE => true,
        Method::GET => head.uri.path().contains("/pushNotificationConfigs"),
        _ => false,
    }
}

fn grpc_route(path: &str) -> Option<Operation> {
    crate::a2a::grpc::route(path).map(|(op, _)| op)
}

/// The alteration of one request.
pub(super) struct Register {
    pub(super) relay: Arc<Relay>,
    pub(super) id: u64,
    /// The route the request came on.
    pub(super) route: Arc<str>,
}

impl RequestTransform for Register {
    fn apply(
        self: Box<Self>,
        head: http::request::Parts,
        body: crate::proxy::UpstreamBody,
    ) -> RequestTransformed {
        Box::pin(self.run(head, body))
    }
}

type Out = (
    http::request::Parts,
    crate::proxy::UpstreamBody,
    Option<Box<dyn ResponseTransform>>,
);

impl Register {
    async fn run(self, mut head: http::request::Parts, body: crate::proxy::UpstreamBody) -> Out {
        let relay = &self.relay;
        let boxed: ProxyBody = body.boxed_unsync();
        let (wire, trailers) = match gather(boxed, relay.max_request_bytes).await {
            Gathered::Whole { wire, trailers } => (wire, trailers),
            Gathered::Over(held) => {
                if mentions_config(held.first()) {
                    relay.unrelayed(&self.route, "too_large");
                }
                return (head, Either::Right(held.boxed_unsync()), None);
            }
            Gathered::Broken(held) => return (head, Either::Right(held.boxed_unsync()), None),
        };
        let as_sent =
            |wire: Bytes| Either::Right(Held::whole(wire, trailers.clone()).boxed_unsync());
        let encoded = head.headers.contains_key(header::CONTENT_ENCODING);
        let exchange = if encoded {
            None
        } else {
            classify(&head.method, &head.uri, &head.headers, &wire)
        };
        let Some(exchange) = exchange else {
            if encoded && mentions_config(&wire) {
                relay.unrelayed(&self.route, "encoded");
            }
            return (head, as_sent(wire), None);
        };
        let restore = matches!(
            exchange.operation,
            Operation::CreateTaskPushNotificationConfig
                | Operation::GetTaskPushNotificationConfig
                | Operation::ListTaskPushNotificationConfigs
        );
        let grpc = exchange.binding == Binding::Grpc;
        let restore = restore.then(|| {
            Box::new(Restore {
                relay: self.relay.clone(),
                grpc,
                route: self.route.clone(),
            }) as Box<dyn ResponseTransform>
        });
        if exchange.operation == Operation::DeleteTaskPushNotificationConfig {
            let (task, config) = if grpc {
                let named = grpc::deleted_config(&exchange, &wire);
                let (task, config) = named.map_or((None, None), |(t, c)| (t, Some(c)));
                (task.or_else(|| exchange.task_id.clone()), config)
            } else {
                let config = deleted_config(&exchange, head.uri.path(), &wire);
                (exchange.task_id.clone(), config)
            };
            relay
                .notes
                .deleting(self.id, (task, config), Some(self.route.clone()));
            return (head, as_sent(wire), restore);
        }
        if grpc {
            let (body, regs) = self.register_grpc(&exchange, &wire);
            if regs.is_empty() {
                return (head, as_sent(wire), restore);
            }
            relay
                .notes
                .registered(self.id, regs, Some(self.route.clone()));
            if head.headers.contains_key(header::CONTENT_LENGTH) {
                head.headers
                    .insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
            }
            return (head, as_sent(Bytes::from(body)), restore);
        }
        let spots = configs(&exchange, &wire);
        if spots.is_empty() {
            return (head, as_sent(wire), restore);
        }
        let now = Instant::now();
        let mut out = Vec::with_capacity(wire.len() + 128);
        let mut copied = 0;
        let mut regs = Vec::new();
        for spot in spots {
            let token = match relay.table.insert(&spot.webhook, &self.route, now) {
                Ok(token) => token,
                Err(Refused::Full) => {
                    relay.unrelayed(&self.route, "table_full");
                    continue;
                }
                Err(Refused::BadUrl) => {
                    relay.unrelayed(&self.route, "bad_url");
                    continue;
                }
            };
            out.extend_from_slice(&wire[copied..spot.url.start]);
            out.push(b'"');
            out.extend_from_slice(relay.url_of(&token).as_bytes());
            out.push(b'"');
            copied = spot.url.end;
            regs.push(Registration {
                token,
                version: exchange.version,
                task_id: spot.task_id,
                config_id: spot.id,
                auth: spot.auth,
            });
        }
        relay.registered_now();
        if regs.is_empty() {
            return (head, as_sent(wire), restore);
        }
        out.extend_from_slice(&wire[copied..]);
        relay
            .notes
            .registered(self.id, regs, Some(self.route.clone()));
        head.headers
            .insert(header::CONTENT_LENGTH, HeaderValue::from(out.len()));
        (head, as_sent(Bytes::from(out)), restore)
    }
}

impl Register {
    /// A gRPC request's configs relayed: the new body (empty when none
    /// was) and the registrations.
    fn register_grpc(
        &self,
        exchange: &crate::a2a::model::Exchange,
        wire: &[u8],
    ) -> (Vec<u8>, Vec<Registration>) {
        let relay = &self.relay;
        let now = Instant::now();
        let mut regs = Vec::new();
        if wire.first() == Some(&1) {
            // A compressed message: not read here (counted when it is a
            // registering call: every such call may carry a config).
            if crate::a2a::push::registers_grpc(exchange) {
                relay.unrelayed(&self.route, "encoded");
            }
            return (Vec::new(), regs);
        }
        let body = grpc::rewrite(exchange, wire, &mut |c| {
            let token = match relay.table.insert(&c.webhook, &self.route, now) {
                Ok(token) => token,
                Err(Refused::Full) => {
                    relay.unrelayed(&self.route, "table_full");
                    return None;
                }
                Err(Refused::BadUrl) => {
                    relay.unrelayed(&self.route, "bad_url");
                    return None;
                }
            };
            let url = relay.url_of(&token);
            regs.push(Registration {
                token,
                version: exchange.version,
                task_id: c.task_id.clone(),
                config_id: c.id.clone(),
                auth: c.auth.clone(),
            });
            Some(url)
        });
        relay.registered_now();
        (body.unwrap_or_default(), regs)
    }
}

/// Whether bytes name a push config member (for counting what passed
/// unread: a body too large or encoded).
fn mentions_config(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, b"ushNotificationConfig").is_some()
}

/// Shows relay URLs in a config answer as the caller's own.
struct Restore {
    relay: Arc<Relay>,
    /// The answer is gRPC's (protobuf messages, trailers).
    grpc: bool,
    route: Arc<str>,
}

impl ResponseTransform for Restore {
    fn apply(self: Box<Self>, head: http::response::Parts, body: ProxyBody) -> Transformed {
        Box::pin(self.run(head, body))
    }
}

impl Restore {
    async fn run(
        self,
        mut head: http::response::Parts,
        body: ProxyBody,
    ) -> (http::response::Parts, ProxyBody) {
        if !head.status.is_success() {
            return (head, body);
        }
        let (wire, trailers) = match gather(body, self.relay.max_request_bytes).await {
            Gathered::Whole { wire, trailers } => (wire, trailers),
            Gathered::Over(held) | Gathered::Broken(held) => return (head, held.boxed_unsync()),
        };
        if head.headers.contains_key(header::CONTENT_ENCODING) {
            // Compressed answers are not undone here: the caller sees the
            // relay's URL in them (counted).
            if memchr::memmem::find(&wire, self.relay.public.as_bytes()).is_some() {
                self.relay.unrelayed(&self.route, "encoded");
            }
            return (head, Held::whole(wire, trailers).boxed_unsync());
        }
        let now = Instant::now();
        let new = if self.grpc {
            grpc::restore(&wire, &|v| self.relay.swap(v, now))
        } else {
            self.relay.restore(&wire, now)
        };
        let Some(new) = new else {
            return (head, Held::whole(wire, trailers).boxed_unsync());
        };
        if !self.grpc || head.headers.contains_key(header::CONTENT_LENGTH) {
            head.headers
                .insert(header::CONTENT_LENGTH, HeaderValue::from(new.len()));
        }
        (head, Held::whole(Bytes::from(new), trailers).boxed_unsync())
    }
}
