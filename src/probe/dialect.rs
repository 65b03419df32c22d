//! The requests the probe sends, in each binding and version it speaks:
//! JSON-RPC and HTTP+JSON, 1.0 and 0.3 (spec 1.0 §9 JSON-RPC and §11
//! HTTP+JSON bindings; 0.3's method names, `kind` payloads and its
//! proto-JSON HTTP+JSON under `/v1`).

use http::{HeaderMap, Method, Uri};
use serde_json::{json, Value};

use super::client::headers;
use crate::a2a::model::{Binding, Version};

/// Where push notifications would go if an agent accepted the probe's
/// config: a name that never resolves (RFC 6761 `.invalid`), so that
/// nothing but the agent under test is ever contacted.
pub(crate) const WEBHOOK: &str = "https://a2a-tap-probe.invalid/webhook";

/// One interface to probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Iface {
    pub binding: Binding,
    pub version: Version,
    /// Its URL as the card gives it.
    pub url: Uri,
    /// The card's `tenant` for it (1.0), named in every request.
    pub tenant: Option<String>,
}

/// What to ask.
#[derive(Debug, Clone)]
pub(crate) enum Call<'a> {
    /// SendMessage; `task` names (task id, context id) for a follow-up.
    Send {
        text: &'a str,
        task: Option<(&'a str, Option<&'a str>)>,
        return_immediately: bool,
    },
    Stream {
        text: &'a str,
    },
    Get {
        id: &'a str,
    },
    Cancel {
        id: &'a str,
    },
    Subscribe {
        id: &'a str,
    },
    PushConfig {
        id: &'a str,
    },
}

/// A request ready to send.
pub(crate) struct Built {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Iface {
    /// How the report names it, e.g. `JSONRPC 1.0`.
    pub(crate) fn name(&self) -> String {
        let b = match self.binding {
            Binding::JsonRpc => "JSONRPC",
            Binding::Rest => "HTTP+JSON",
            Binding::Grpc => "GRPC",
            Binding::Webhook => "WEBHOOK",
        };
        format!("{b} {}", self.version.as_str())
    }

    /// The request for `call`: JSON-RPC id `rpc_id`, message id `msg_id`,
    /// `A2A-Version` header `version` (the interface's own unless given).
    pub(crate) fn request(
        &self,
        call: &Call<'_>,
        rpc_id: u64,
        msg_id: &str,
        version: Option<&str>,
    ) -> Built {
        let v = version.unwrap_or(self.version.as_str());
        let streams = matches!(call, Call::Stream { .. } | Call::Subscribe { .. });
        let accept = if streams {
            "text/event-stream"
        } else {
            "application/json"
        };
        let headers = headers(&[
            ("content-type", "application/json"),
            ("accept", accept),
            ("a2a-version", v),
        ]);
        let (method, path, body) = match self.binding {
            Binding::JsonRpc => {
                let (name, mut params) = self.rpc(call, msg_id);
                // 0.3 has no tenants.
                if let (Some(t), false) = (&self.tenant, self.v03()) {
                    params["tenant"] = json!(t);
                }
                let body =
                    json!({"jsonrpc": "2.0", "id": rpc_id, "method": name, "params": params});
                (Method::POST, self.url.path().to_owned(), Some(body))
            }
            _ => self.rest(call, msg_id),
        };
        let path_and_query = if path.is_empty() { "/".into() } else { path };
        let uri = with_path(&self.url, &path_and_query);
        Built {
            method,
            uri,
            headers,
            body: body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
        }
    }

    fn v03(&self) -> bool {
        self.version == Version::V0_3
    }

    /// The message, in the JSON-RPC dialect of the version.
    fn message(&self, text: &str, task: Option<(&str, Option<&str>)>, msg_id: &str) -> Value {
        let mut m = if self.v03() {
            json!({"kind": "message", "messageId": msg_id, "role": "user",
                   "parts": [{"kind": "text", "text": text}]})
        } else {
            json!({"messageId": msg_id, "role": "ROLE_USER", "parts": [{"text": text}]})
        };
        add_ids(&mut m, task);
        m
    }

    fn send_params(
        &self,
        text: &str,
        task: Option<(&str, Option<&str>)>,
        ri: bool,
        id: &str,
    ) -> Value {
        let mut p = json!({"message": self.message(text, task, id)});
        if self.v03() {
            p["configuration"] = json!({"blocking": !ri});
        } else if ri {
            p["configuration"] = json!({"returnImmediately": true});
        }
        p
    }

    fn rpc(&self, call: &Call<'_>, msg_id: &str) -> (&'static str, Value) {
        let v03 = self.v03();
        let pick = |one: &'static str, old: &'static str| if v03 { old } else { one };
        match call {
            Call::Send {
                text,
                task,
                return_immediately,
            } => (
                pick("SendMessage", "message/send"),
                self.send_params(text, *task, *return_immediately, msg_id),
            ),
            Call::Stream { text } => (
                pick("SendStreamingMessage", "message/stream"),
                json!({"message": self.message(text, None, msg_id)}),
            ),
            Call::Get { id } => (pick("GetTask", "tasks/get"), json!({"id": id})),
            Call::Cancel { id } => (pick("CancelTask", "tasks/cancel"), json!({"id": id})),
            Call::Subscribe { id } => (
                pick("SubscribeToTask", "tasks/resubscribe"),
                json!({"id": id}),
            ),
            Call::PushConfig { id } if v03 => (
                "tasks/pushNotificationConfig/set",
                json!({"taskId": id, "pushNotificationConfig": {"url": WEBHOOK}}),
            ),
            Call::PushConfig { id } => (
                "CreateTaskPushNotificationConfig",
                json!({"taskId": id, "id": "a2a-tap-probe", "url": WEBHOOK}),
            ),
        }
    }

    fn rest(&self, call: &Call<'_>, msg_id: &str) -> (Method, String, Option<Value>) {
        let base = self.url.path().trim_end_matches('/');
        let p = match (&self.tenant, self.v03()) {
            (_, true) => format!("{base}/v1"),
            (Some(t), false) => format!("{base}/{}", segment(t)),
            (None, false) => base.to_owned(),
        };
        // 0.3 HTTP+JSON is proto JSON: the message is `request`, its parts `content`.
        let body = |text: &str, task, ri: bool| {
            if self.v03() {
                let mut m = json!({"messageId": msg_id, "role": "ROLE_USER",
                                   "content": [{"text": text}]});
                add_ids(&mut m, task);
                json!({"request": m, "configuration": {"blocking": !ri}})
            } else {
                self.send_params(text, task, ri, msg_id)
            }
        };
        match call {
            Call::Send {
                text,
                task,
                return_immediately,
            } => (
                Method::POST,
                format!("{p}/message:send"),
                Some(body(text, *task, *return_immediately)),
            ),
            Call::Stream { text } => (
                Method::POST,
                format!("{p}/message:stream"),
                Some(body(text, None, false)),
            ),
            Call::Get { id } => (Method::GET, format!("{p}/tasks/{}", segment(id)), None),
            Call::Cancel { id } => (
                Method::POST,
                format!("{p}/tasks/{}:cancel", segment(id)),
                Some(json!({})),
            ),
            Call::Subscribe { id } => (
                Method::GET,
                format!("{p}/tasks/{}:subscribe", segment(id)),
                None,
            ),
            Call::PushConfig { id } => {
                let path = format!("{p}/tasks/{}/pushNotificationConfigs", segment(id));
                let body = if self.v03() {
                    json!({"parent": format!("tasks/{id}"), "configId": "a2a-tap-probe",
                           "config": {"name": format!("tasks/{id}/pushNotificationConfigs/a2a-tap-probe"),
                                      "pushNotificationConfig": {"url": WEBHOOK}}})
                } else {
                    json!({"taskId": id, "id": "a2a-tap-probe", "url": WEBHOOK})
                };
                (Method::POST, path, Some(body))
            }
        }
    }
}

fn add_ids(m: &mut Value, task: Option<(&str, Option<&str>)>) {
    if let Some((task_id, context_id)) = task {
        m["taskId"] = json!(task_id);
        if let Some(c) = context_id {
            m["contextId"] = json!(c);
        }
    }
}

/// `base` with its path replaced by `path` (scheme and authority kept).
pub(crate) fn with_path(base: &Uri, path: &str) -> Uri {
    let mut parts = base.clone().into_parts();
    parts.path_and_query = path.parse().ok();
    Uri::from_parts(parts).unwrap_or_else(|_| base.clone())
}

/// A path segment with everything but unreserved characters escaped.
fn segment(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iface(binding: Binding, version: Version, url: &str) -> Iface {
        Iface {
            binding,
            version,
            url: url.parse().expect("url"),
            tenant: None,
        }
    }

    #[test]
    fn rest_paths_sit_under_the_interface_url() {
        let i = iface(Binding::Rest, Version::V1_0, "http://a:1/rest/");
        let b = i.request(&Call::Get { id: "t 1" }, 1, "m", None);
        assert_eq!(b.uri.to_string(), "http://a:1/rest/tasks/t%201");
        let i = iface(Binding::Rest, Version::V0_3, "http://a:1/rest");
        let b = i.request(&Call::Cancel { id: "t" }, 1, "m", None);
        assert_eq!(b.uri.to_string(), "http://a:1/rest/v1/tasks/t:cancel");
    }

    #[test]
    fn a_tenant_is_named_in_every_request() {
        let mut i = iface(Binding::Rest, Version::V1_0, "http://a:1/rest");
        i.tenant = Some("acme".into());
        let b = i.request(&Call::Get { id: "t" }, 1, "m", None);
        assert_eq!(b.uri.to_string(), "http://a:1/rest/acme/tasks/t");
        i.binding = Binding::JsonRpc;
        let b = i.request(&Call::Get { id: "t" }, 1, "m", None);
        let body: Value = serde_json::from_slice(&b.body).expect("json");
        assert_eq!(body["params"]["tenant"], "acme");
    }

    #[test]
    fn jsonrpc_methods_follow_the_version() {
        let i = iface(Binding::JsonRpc, Version::V0_3, "http://a:1");
        let b = i.request(
            &Call::Send {
                text: "hi",
                task: None,
                return_immediately: true,
            },
            7,
            "m",
            None,
        );
        let body: Value = serde_json::from_slice(&b.body).expect("json");
        assert_eq!(body["method"], "message/send");
        assert_eq!(body["params"]["configuration"]["blocking"], false);
        assert_eq!(b.uri.to_string(), "http://a:1/");
        let i = iface(Binding::JsonRpc, Version::V1_0, "http://a:1/rpc");
        let b = i.request(&Call::Get { id: "t" }, 8, "m", Some("99.0"));
        assert_eq!(b.headers["a2a-version"], "99.0");
        assert_eq!(b.uri.to_string(), "http://a:1/rpc");
    }
}
