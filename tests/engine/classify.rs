//! The request classifier: every JSON-RPC method of both versions, every
//! REST route with prefixes, version sources, ids, blocking, non-A2A traffic.

use a2a_tap::a2a::classify::classify;
use a2a_tap::a2a::model::*;
use http::{HeaderMap, HeaderValue, Method, Uri};
use proptest::prelude::*;

fn req(method: Method, uri: &str, version: Option<&str>, body: &str) -> Option<Exchange> {
    let uri: Uri = uri.parse().expect("uri");
    let mut headers = HeaderMap::new();
    if let Some(v) = version {
        headers.insert("A2A-Version", HeaderValue::from_str(v).expect("header"));
    }
    classify(&method, &uri, &headers, body.as_bytes())
}

fn rpc(method: &str, params: &str) -> Option<Exchange> {
    let body = format!(r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{params}}}"#);
    req(Method::POST, "/a2a/v1", None, &body)
}

#[test]
fn every_jsonrpc_method_of_both_versions() {
    use Operation::*;
    let table = [
        ("SendMessage", SendMessage, Version::V1_0),
        ("SendStreamingMessage", SendStreamingMessage, Version::V1_0),
        ("GetTask", GetTask, Version::V1_0),
        ("ListTasks", ListTasks, Version::V1_0),
        ("CancelTask", CancelTask, Version::V1_0),
        ("SubscribeToTask", SubscribeToTask, Version::V1_0),
        (
            "CreateTaskPushNotificationConfig",
            CreateTaskPushNotificationConfig,
            Version::V1_0,
        ),
        (
            "GetTaskPushNotificationConfig",
            GetTaskPushNotificationConfig,
            Version::V1_0,
        ),
        (
            "ListTaskPushNotificationConfigs",
            ListTaskPushNotificationConfigs,
            Version::V1_0,
        ),
        (
            "ListTaskPushNotificationConfig",
            ListTaskPushNotificationConfigs,
            Version::V1_0,
        ),
        (
            "DeleteTaskPushNotificationConfig",
            DeleteTaskPushNotificationConfig,
            Version::V1_0,
        ),
        ("GetExtendedAgentCard", GetExtendedAgentCard, Version::V1_0),
        ("message/send", SendMessage, Version::V0_3),
        ("message/stream", SendStreamingMessage, Version::V0_3),
        ("tasks/get", GetTask, Version::V0_3),
        ("tasks/cancel", CancelTask, Version::V0_3),
        ("tasks/resubscribe", SubscribeToTask, Version::V0_3),
        (
            "tasks/pushNotificationConfig/set",
            CreateTaskPushNotificationConfig,
            Version::V0_3,
        ),
        (
            "tasks/pushNotificationConfig/get",
            GetTaskPushNotificationConfig,
            Version::V0_3,
        ),
        (
            "tasks/pushNotificationConfig/list",
            ListTaskPushNotificationConfigs,
            Version::V0_3,
        ),
        (
            "tasks/pushNotificationConfig/delete",
            DeleteTaskPushNotificationConfig,
            Version::V0_3,
        ),
        (
            "agent/getAuthenticatedExtendedCard",
            GetExtendedAgentCard,
            Version::V0_3,
        ),
    ];
    for (name, op, version) in table {
        let ex = rpc(name, "{}").unwrap_or_else(|| panic!("{name}"));
        assert_eq!(
            (ex.binding, ex.operation, ex.version),
            (Binding::JsonRpc, op, version),
            "{name}"
        );
        assert_eq!(ex.rpc_id, Some(RpcId::Number("7".into())));
    }
    assert_eq!(rpc("tasks/list", "{}"), None);
    assert_eq!(rpc("sendMessage", "{}"), None);
}

#[test]
fn jsonrpc_ids_and_context() {
    let ex = rpc("SendStreamingMessage", r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}],"taskId":"t1","contextId":"c1"}}"#).expect("a2a");
    assert_eq!(
        (ex.task_id.as_deref(), ex.context_id.as_deref()),
        (Some("t1"), Some("c1"))
    );
    assert_eq!(
        ex.message_id.as_deref(),
        Some("m"),
        "for the exchange's span"
    );
    assert!(!ex.blocking);
    let rest = req(
        Method::POST,
        "/message:send",
        Some("1.0"),
        r#"{"message":{"messageId":"m-rest","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#,
    )
    .expect("a2a");
    assert_eq!(rest.message_id.as_deref(), Some("m-rest"));
    let get = rpc("GetTask", r#"{"id":"t9"}"#).expect("a2a");
    assert_eq!(get.message_id, None, "only sends carry a message");
    for m in [
        "GetTask",
        "CancelTask",
        "SubscribeToTask",
        "tasks/get",
        "tasks/cancel",
        "tasks/resubscribe",
    ] {
        let ex = rpc(m, r#"{"id":"t9","historyLength":2}"#).expect("a2a");
        assert_eq!(ex.task_id.as_deref(), Some("t9"), "{m}");
    }
    let ex = rpc(
        "GetTaskPushNotificationConfig",
        r#"{"taskId":"t3","id":"cfg"}"#,
    )
    .expect("a2a");
    assert_eq!(ex.task_id.as_deref(), Some("t3"));
    let ex = rpc(
        "tasks/pushNotificationConfig/get",
        r#"{"id":"t4","pushNotificationConfigId":"cfg"}"#,
    )
    .expect("a2a");
    assert_eq!(ex.task_id.as_deref(), Some("t4"));
    let ex = rpc("ListTasks", r#"{"contextId":"c2","pageSize":5}"#).expect("a2a");
    assert_eq!((ex.task_id, ex.context_id.as_deref()), (None, Some("c2")));
    // Ids keep their form; no id is a notification.
    let body = r#"{"jsonrpc":"2.0","id":"abc","method":"GetTask","params":{"id":"t"}}"#;
    assert_eq!(
        req(Method::POST, "/", None, body).and_then(|e| e.rpc_id),
        Some(RpcId::String("abc".into()))
    );
    let body = r#"{"jsonrpc":"2.0","id":null,"method":"GetTask","params":{"id":"t"}}"#;
    assert_eq!(
        req(Method::POST, "/", None, body).and_then(|e| e.rpc_id),
        Some(RpcId::Null)
    );
    let body = r#"{"jsonrpc":"2.0","method":"GetTask","params":{"id":"t"}}"#;
    let ex = req(Method::POST, "/", None, body).expect("a2a");
    assert_eq!(ex.rpc_id, None);
}

#[test]
fn blocking_rules() {
    let b = |m: &str, cfg: &str| {
        rpc(m, &format!(r#"{{"message":{{"messageId":"m"}}{cfg}}}"#)).map(|e| e.blocking)
    };
    assert_eq!(b("SendMessage", ""), Some(true));
    assert_eq!(b("SendMessage", r#","configuration":{}"#), Some(true));
    assert_eq!(
        b(
            "SendMessage",
            r#","configuration":{"returnImmediately":false}"#
        ),
        Some(true)
    );
    assert_eq!(
        b(
            "SendMessage",
            r#","configuration":{"returnImmediately":true}"#
        ),
        Some(false)
    );
    assert_eq!(b("message/send", ""), Some(false));
    assert_eq!(
        b("message/send", r#","configuration":{"blocking":false}"#),
        Some(false)
    );
    assert_eq!(
        b("message/send", r#","configuration":{"blocking":true}"#),
        Some(true)
    );
    assert_eq!(b("SendStreamingMessage", ""), Some(false));
    assert_eq!(
        b("message/stream", r#","configuration":{"blocking":true}"#),
        Some(false)
    );
    // REST sends follow the version's rule.
    let body = r#"{"message":{"messageId":"m","taskId":"t","contextId":"c"}}"#;
    let ex = req(Method::POST, "/message:send", Some("1.0"), body).expect("a2a");
    assert!(ex.blocking);
    assert_eq!(
        (ex.task_id.as_deref(), ex.context_id.as_deref()),
        (Some("t"), Some("c"))
    );
    let body = r#"{"message":{"messageId":"m"},"configuration":{"returnImmediately":true}}"#;
    assert!(
        !req(Method::POST, "/message:send", Some("1.0"), body)
            .expect("a2a")
            .blocking
    );
    let body = r#"{"message":{"messageId":"m"},"configuration":{"blocking":true}}"#;
    let ex = req(Method::POST, "/v1/message:send", None, body).expect("a2a");
    assert_eq!((ex.version, ex.blocking), (Version::V0_3, true));
    let body = r#"{"message":{"messageId":"m"}}"#;
    assert!(
        !req(Method::POST, "/v1/message:send", None, body)
            .expect("a2a")
            .blocking
    );
}

#[test]
fn every_rest_route() {
    use Operation::*;
    let send = r#"{"message":{"messageId":"m"}}"#;
    let table: [(Method, &str, &str, Operation, Option<&str>); 22] = [
        (Method::POST, "/message:send", send, SendMessage, None),
        (
            Method::POST,
            "/message:stream",
            send,
            SendStreamingMessage,
            None,
        ),
        (
            Method::POST,
            "/rest/message:stream",
            send,
            SendStreamingMessage,
            None,
        ),
        (Method::GET, "/tasks/t1", "", GetTask, Some("t1")),
        (Method::GET, "/acme/tasks/t1", "", GetTask, Some("t1")),
        (
            Method::GET,
            "/tasks/t1?historyLength=3",
            "",
            GetTask,
            Some("t1"),
        ),
        (Method::GET, "/tasks/a%2Fb", "", GetTask, Some("a/b")),
        (Method::GET, "/tasks", "", ListTasks, None),
        (
            Method::GET,
            "/t1/tasks?status=TASK_STATE_WORKING",
            "",
            ListTasks,
            None,
        ),
        (Method::POST, "/tasks/t1:cancel", "", CancelTask, Some("t1")),
        (
            Method::POST,
            "/acme/tasks/t1:cancel",
            "{}",
            CancelTask,
            Some("t1"),
        ),
        (
            Method::POST,
            "/v1/tasks/t1:cancel",
            "not json",
            CancelTask,
            Some("t1"),
        ),
        (
            Method::GET,
            "/tasks/t1:subscribe",
            "",
            SubscribeToTask,
            Some("t1"),
        ),
        (
            Method::POST,
            "/tasks/t1:subscribe",
            "",
            SubscribeToTask,
            Some("t1"),
        ),
        (
            Method::POST,
            "/tasks/t1/pushNotificationConfigs",
            "{}",
            CreateTaskPushNotificationConfig,
            Some("t1"),
        ),
        (
            Method::GET,
            "/tasks/t1/pushNotificationConfigs",
            "",
            ListTaskPushNotificationConfigs,
            Some("t1"),
        ),
        (
            Method::GET,
            "/tasks/t1/pushNotificationConfigs/c1",
            "",
            GetTaskPushNotificationConfig,
            Some("t1"),
        ),
        (
            Method::DELETE,
            "/tasks/t1/pushNotificationConfigs/c1",
            "",
            DeleteTaskPushNotificationConfig,
            Some("t1"),
        ),
        (
            Method::GET,
            "/v1/tasks/t1/pushNotificationConfigs/c1",
            "",
            GetTaskPushNotificationConfig,
            Some("t1"),
        ),
        (
            Method::GET,
            "/extendedAgentCard",
            "",
            GetExtendedAgentCard,
            None,
        ),
        (
            Method::GET,
            "/acme/extendedAgentCard",
            "",
            GetExtendedAgentCard,
            None,
        ),
        (Method::GET, "/v1/card", "", GetExtendedAgentCard, None),
    ];
    for (method, uri, body, op, task) in table {
        let ex = req(method.clone(), uri, None, body).unwrap_or_else(|| panic!("{method} {uri}"));
        assert_eq!(
            (ex.binding, ex.operation),
            (Binding::Rest, op),
            "{method} {uri}"
        );
        assert_eq!(ex.task_id.as_deref(), task, "{method} {uri}");
        assert_eq!(ex.rpc_id, None);
        let want = if uri.starts_with("/v1/") {
            Version::V0_3
        } else {
            Version::V1_0
        };
        assert_eq!(ex.version, want, "{method} {uri}");
    }
    let ex = req(Method::GET, "/tasks?contextId=c%201", None, "").expect("a2a");
    assert_eq!(ex.context_id.as_deref(), Some("c 1"));
}

#[test]
fn version_from_header_or_query() {
    let v = |uri: &str, h: Option<&str>| req(Method::GET, uri, h, "").map(|e| e.version);
    assert_eq!(v("/tasks/t1", Some("1.0")), Some(Version::V1_0));
    assert_eq!(v("/tasks/t1", Some("1")), Some(Version::V1_0));
    assert_eq!(v("/tasks/t1", Some("0.3")), Some(Version::V0_3));
    assert_eq!(v("/v1/tasks/t1", Some("1.0")), Some(Version::V1_0));
    assert_eq!(v("/v1/tasks/t1", Some("")), Some(Version::V0_3));
    assert_eq!(v("/v1/tasks/t1", Some("7.2")), Some(Version::V0_3));
    assert_eq!(v("/tasks/t1?A2A-Version=0.3", None), Some(Version::V0_3));
    assert_eq!(v("/v1/tasks/t1?a2a-version=1.0", None), Some(Version::V1_0));
    assert_eq!(v("/v1/tasks/t1?A2A-Version=", None), Some(Version::V0_3));
    assert_eq!(
        v("/tasks/t1?A2A-Version=0.3", Some("1.0")),
        Some(Version::V1_0),
        "header wins"
    );
    assert_eq!(
        v("/v1/tasks", None),
        Some(Version::V1_0),
        "ListTasks is 1.0 only"
    );
    // JSON-RPC: the method name decides, whatever the header says.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}"#;
    assert_eq!(
        req(Method::POST, "/", Some("1.0"), body).map(|e| e.version),
        Some(Version::V0_3)
    );
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}"#;
    assert_eq!(
        req(Method::POST, "/", None, body).map(|e| e.version),
        Some(Version::V1_0)
    );
}

/// The public agent card's GET is classified, so that what the card says
/// (its HTTP+JSON URLs, its capabilities) is learned; it is no RPC.
#[test]
fn the_agent_card_get_is_classified() {
    for uri in ["/.well-known/agent-card.json", "/t1/.well-known/agent.json"] {
        let ex = req(Method::GET, uri, None, "").expect(uri);
        assert_eq!(ex.operation, Operation::GetAgentCard, "{uri}");
        assert!(!ex.guessed(), "the card path is certain: {uri}");
    }
}

/// An HTTP+JSON exchange is only guessed to be A2A from its path until a
/// version is declared (or an agent card names the path, see the worker).
#[test]
fn rest_paths_are_guessed_until_a_version_is_declared() {
    let guessed = req(Method::GET, "/api/tasks/t1", None, "").unwrap();
    assert_eq!(guessed.guessed_path.as_deref(), Some("/api/tasks/t1"));
    let declared = req(Method::GET, "/api/tasks/t1", Some("1.0"), "").unwrap();
    assert!(!declared.guessed());
    let query = req(Method::GET, "/api/tasks/t1?A2A-Version=1.0", None, "").unwrap();
    assert!(!query.guessed());
    let rpc = req(
        Method::POST,
        "/",
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}"#,
    )
    .unwrap();
    assert!(!rpc.guessed(), "a JSON-RPC method name is certain");
}

#[test]
fn non_a2a_traffic_is_none() {
    let none = |m: Method, uri: &str, body: &str| {
        assert_eq!(req(m.clone(), uri, None, body), None, "{m} {uri} {body}");
    };
    none(Method::POST, "/.well-known/agent-card.json", "");
    none(Method::GET, "/agent-card.json", "");
    none(
        Method::POST,
        "/",
        r#"{"jsonrpc":"2.0","id":1,"method":"GetAgentCard"}"#,
    );
    none(Method::GET, "/", "");
    none(Method::GET, "/healthz", "");
    none(Method::POST, "/", "");
    none(Method::POST, "/", "not json");
    none(Method::POST, "/", "[1,2]");
    none(
        Method::POST,
        "/",
        r#"{"jsonrpc":"2.0","id":1,"method":"eth_call"}"#,
    );
    none(Method::POST, "/", r#"{"jsonrpc":"2.0","id":1}"#);
    none(Method::POST, "/message:send", "not json");
    none(Method::POST, "/message:send", "");
    none(Method::GET, "/message:send", "");
    none(Method::PUT, "/tasks/t1", "");
    none(Method::DELETE, "/tasks/t1", "");
    none(Method::GET, "/tasks/t1:cancel", "");
    none(Method::POST, "/tasks/t1", "{}");
    none(Method::POST, "/", "{\"method\":\"GetTask\",\"id\":{}}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn never_panics(
        path in "(/[a-zA-Z0-9%:._-]{0,12}){0,5}",
        body in proptest::collection::vec(any::<u8>(), 0..120),
        get in any::<bool>(),
        method in r#"(SendMessage|tasks/get|message/send|x)"#,
        params in r#"[{}\[\]":,a-zA-Z0-9 ]{0,60}"#,
    ) {
        let m = if get { Method::GET } else { Method::POST };
        let uri: Uri = if path.is_empty() { Uri::from_static("/") } else { path.parse().unwrap_or(Uri::from_static("/")) };
        let h = HeaderMap::new();
        let _ = classify(&m, &uri, &h, &body);
        let rpc = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}"#);
        let _ = classify(&m, &uri, &h, rpc.as_bytes());
    }
}
