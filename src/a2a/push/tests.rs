use super::*;
use crate::a2a::classify::classify;

fn exchange(method: &str, path: &str, version: Option<&str>, body: &str) -> Exchange {
    let mut headers = http::HeaderMap::new();
    if let Some(v) = version {
        headers.insert("a2a-version", v.parse().unwrap());
    }
    let method: http::Method = method.parse().unwrap();
    let uri: http::Uri = path.parse().unwrap();
    classify(&method, &uri, &headers, body.as_bytes()).expect("an A2A request")
}

fn spots(method: &str, path: &str, version: Option<&str>, body: &str) -> Vec<ConfigSpot> {
    configs(&exchange(method, path, version, body), body.as_bytes())
}

fn at<'b>(body: &'b str, spot: &ConfigSpot) -> &'b str {
    &body[spot.url.clone()]
}

#[test]
fn jsonrpc_1_0_send_config_is_found_with_its_authentication() {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"see http://x/y"}],"taskId":"t-1"},"configuration":{"taskPushNotificationConfig":{"url": "http://hook:9/in","token":"tok","authentication":{"scheme":"Bearer","credentials":"s3"}}}}}"#;
    let found = spots("POST", "/", None, body);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(at(body, &found[0]), r#""http://hook:9/in""#);
    assert_eq!(found[0].webhook, "http://hook:9/in");
    assert_eq!(
        found[0].task_id.as_deref(),
        Some("t-1"),
        "the message's task"
    );
    let auth = found[0].auth.as_ref().unwrap();
    assert_eq!(auth.schemes, ["Bearer"]);
    assert_eq!(auth.credentials.as_deref(), Some("s3"));
}

#[test]
fn jsonrpc_0_3_send_and_set_configs_are_found() {
    let body = r#"{"jsonrpc":"2.0","id":"a","method":"message/stream","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"pushNotificationConfig":{"id":"c1","url":"https://hook/a\/b","authentication":{"schemes":["Basic","Bearer"],"credentials":"x"}}}}}"#;
    let found = spots("POST", "/", None, body);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].webhook, "https://hook/a/b", "escapes read");
    assert_eq!(at(body, &found[0]), r#""https://hook/a\/b""#);
    assert_eq!(found[0].id.as_deref(), Some("c1"));
    assert_eq!(found[0].auth.as_ref().unwrap().schemes, ["Basic", "Bearer"]);

    let body = r#"{"jsonrpc":"2.0","id":2,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"t-9","pushNotificationConfig":{"url":"http://h/"}}}"#;
    let found = spots("POST", "/", None, body);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].task_id.as_deref(), Some("t-9"));
}

#[test]
fn jsonrpc_1_0_create_and_rest_bodies_are_found() {
    let body = r#"{"jsonrpc":"2.0","id":3,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"t-2","id":"cfg","url":"http://h/1"}}"#;
    let found = spots("POST", "/", None, body);
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].task_id.as_deref(), found[0].id.as_deref()),
        (Some("t-2"), Some("cfg"))
    );

    let body = r#"{"url":"http://h/2","token":"t"}"#;
    let found = spots(
        "POST",
        "/tasks/t-3/pushNotificationConfigs",
        Some("1.0"),
        body,
    );
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].task_id.as_deref(), Some("t-3"), "the path's task");

    // 0.3 HTTP+JSON, the proto's JSON: `pushNotification`, and a create's
    // `config.pushNotificationConfig`.
    let body = r#"{"message":{"messageId":"m","role":"ROLE_USER","content":[]},"configuration":{"pushNotification":{"url":"http://h/4"}}}"#;
    let found = spots("POST", "/v1/message:send", None, body);
    assert_eq!(found.len(), 1, "{found:?}");
    let body = r#"{"parent":"tasks/t-5","configId":"c","config":{"name":"tasks/t-5/pushNotificationConfigs/c","pushNotificationConfig":{"url":"http://h/5"}}}"#;
    let found = spots("POST", "/v1/tasks/t-5/pushNotificationConfigs", None, body);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].task_id.as_deref(), Some("t-5"));
    // The same with the proto's own field names (Python SDK 1.3.0 over 0.3).
    let body = r#"{"request":{"message_id":"m","role":"ROLE_USER","content":[]},"configuration":{"push_notification":{"url":"http://h/6"},"blocking":true}}"#;
    let found = spots("POST", "/rest/v1/message:stream", Some("0.3"), body);
    assert_eq!(found.len(), 1, "{found:?}");
    let body = r#"{"parent":"tasks/t-7","config_id":"c","config":{"name":"n","push_notification_config":{"id":"c","url":"http://h/7"}}}"#;
    let found = spots(
        "POST",
        "/rest/v1/tasks/t-7/pushNotificationConfigs",
        Some("0.3"),
        body,
    );
    assert_eq!((found.len(), found[0].id.as_deref()), (1, Some("c")));
    let body = r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[]},"configuration":{"taskPushNotificationConfig":{"url":"http://h/3"}}}"#;
    let found = spots("POST", "/message:send", Some("1.0"), body);
    assert_eq!(found.len(), 1);
    assert_eq!(at(body, &found[0]), r#""http://h/3""#);
}

#[test]
fn urls_outside_a_config_are_left_alone() {
    // A message's text, metadata and a send without a config.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"url":"http://file/x"}],"metadata":{"url":"http://m/"}},"metadata":{"config":{"url":"http://no/"}}}}"#;
    assert!(spots("POST", "/", None, body).is_empty());
    // GetTask never registers.
    let body =
        r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t","url":"http://h/"}}"#;
    assert!(spots("POST", "/", None, body).is_empty());
    // Broken JSON: nothing.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"taskPushNotificationConfig":{"url":"http://h/""#;
    let ex = exchange(
        "POST",
        "/",
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage"}"#,
    );
    assert!(configs(&ex, body.as_bytes()).is_empty());
}

#[test]
fn deletes_name_their_config() {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"DeleteTaskPushNotificationConfig","params":{"taskId":"t","id":"c-1"}}"#;
    let ex = exchange("POST", "/", None, body);
    assert_eq!(
        deleted_config(&ex, "/", body.as_bytes()).as_deref(),
        Some("c-1")
    );
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/delete","params":{"id":"t","pushNotificationConfigId":"c-2"}}"#;
    let ex = exchange("POST", "/", None, body);
    assert_eq!(
        deleted_config(&ex, "/", body.as_bytes()).as_deref(),
        Some("c-2")
    );
    let path = "/v1/tasks/t/pushNotificationConfigs/c%2D3";
    let ex = exchange("DELETE", path, None, "");
    assert_eq!(deleted_config(&ex, path, b"").as_deref(), Some("c-3"));
}
