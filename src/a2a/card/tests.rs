use super::*;

#[test]
fn reads_a_1_0_card() {
    let card = br#"{"name":"a","supportedInterfaces":[
        {"url":"http://10.0.0.5:9999/","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
        {"url":"http://10.0.0.5:9999/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],
        "capabilities":{"streaming":true,"extendedAgentCard":false}}"#;
    let c = CardInfo::parse(card).unwrap();
    assert_eq!(c.dialect, Version::V1_0);
    assert_eq!(c.interfaces.len(), 2);
    assert_eq!(c.interfaces[0].path, "");
    assert_eq!(c.interfaces[1].path, "/rest");
    assert_eq!(c.streaming, Some(true));
    assert_eq!(c.push_notifications, None);
    assert_eq!(c.extended_card, Some(false));
    assert!(c.offers_rest_at("/rest/message:send"));
    assert!(c.offers_rest_at("/rest/acme/tasks/t1"));
    assert!(!c.offers_rest_at("/restx/tasks/t1"));
    assert!(!c.offers_rest_at("/api/tasks/t1"));
    assert_eq!(c.interfaces[0].tenant, None);
}

#[test]
fn keeps_an_interface_tenant() {
    let card = br#"{"supportedInterfaces":[
        {"url":"http://a/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0","tenant":"acme"},
        {"url":"http://a/","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":""}]}"#;
    let c = CardInfo::parse(card).unwrap();
    assert_eq!(c.interfaces[0].tenant.as_deref(), Some("acme"));
    assert_eq!(c.interfaces[1].tenant, None);
}

#[test]
fn reads_a_0_3_card() {
    let card = br#"{"url":"http://a:1/","preferredTransport":"JSONRPC","protocolVersion":"0.3.0",
        "additionalInterfaces":[{"url":"http://a:1/","transport":"JSONRPC"},{"url":"http://a:1/rest","transport":"HTTP+JSON"}],
        "capabilities":{"streaming":true,"pushNotifications":false},"supportsAuthenticatedExtendedCard":true}"#;
    let c = CardInfo::parse(card).unwrap();
    assert_eq!(c.dialect, Version::V0_3);
    assert_eq!(c.interfaces.len(), 3);
    assert_eq!(c.interfaces[0].version.as_deref(), Some("0.3.0"));
    assert!(c.offers_rest_at("/rest/v1/tasks/t"));
    assert_eq!(c.push_notifications, Some(false));
    assert_eq!(c.extended_card, Some(true));
    // A REST interface at the root covers every path.
    let root =
        CardInfo::parse(br#"{"url":"http://a:1","preferredTransport":"HTTP+JSON"}"#).unwrap();
    assert!(root.offers_rest_at("/v1/tasks/t"));
}

#[test]
fn a_card_lacking_what_its_version_requires_says_what() {
    let ok = br#"{"name":"a","version":"1","capabilities":{},"supportedInterfaces":[
        {"url":"http://a/","protocolBinding":"SOME-NEW-BINDING","protocolVersion":"1.0"}]}"#;
    assert!(
        CardInfo::parse(ok).unwrap().problems.is_empty(),
        "an open binding name is fine"
    );
    let bad = br#"{"name":"","capabilities":true,"supportedInterfaces":[{"url":"http://a/"},7]}"#;
    assert_eq!(
        CardInfo::parse(bad).unwrap().problems,
        [
            "name is missing",
            "version is missing",
            "supportedInterfaces[0].protocolBinding is missing",
            "supportedInterfaces[0].protocolVersion is missing",
            "supportedInterfaces[1] is not an object",
            "capabilities is not an object",
        ]
    );
    let v03 = br#"{"name":"a","version":"1","capabilities":{},"protocolVersion":"0.3.0",
        "additionalInterfaces":[{"url":"http://a/rest"}]}"#;
    assert_eq!(
        CardInfo::parse(v03).unwrap().problems,
        [
            "url is missing",
            "additionalInterfaces[0].transport is missing"
        ]
    );
}

#[test]
fn bodies_that_are_no_card() {
    assert!(CardInfo::parse(b"nope").is_err());
    assert!(CardInfo::parse(b"[1]").is_err());
    let empty = CardInfo::parse(b"{}").unwrap();
    assert!(empty.interfaces.is_empty());
    assert!(!empty.offers_rest_at("/tasks/1"));
}

#[test]
fn interface_urls_that_lead_past_the_proxy() {
    let card = |url: &str| {
        CardInfo::parse(
            format!(r#"{{"supportedInterfaces":[{{"url":"{url}","protocolBinding":"JSONRPC","protocolVersion":"1.0"}}]}}"#)
                .as_bytes(),
        )
        .unwrap()
    };
    let past = |url: &str, host: Option<&str>, public: Option<&str>| {
        !card(url).bypassing(host, public).is_empty()
    };
    // The agent's own address, fetched through the proxy at tap:8080.
    assert!(past("http://127.0.0.1:9999/", Some("tap:8080"), None));
    assert!(past("http://tap:9999/", Some("tap:8080"), None));
    assert!(past(
        "http://agent.svc/",
        Some("tap:8080"),
        Some("tap.example")
    ));
    // Look-alikes: the caller's own authority, any case; the public URL;
    // default ports either way.
    assert!(!past("http://TAP:8080/a2a", Some("tap:8080"), None));
    assert!(!past(
        "https://tap.example/a2a",
        Some("tap:8080"),
        Some("tap.example")
    ));
    assert!(!past("https://tap.example/", Some("tap.example"), None));
    assert!(!past(
        "http://tap.example:80/",
        Some("tap.example:80"),
        None
    ));
    assert!(!past("http://[::1]:8080/", Some("[::1]:8080"), None));
    // Nothing to compare with, or no absolute URL: not judged.
    assert!(!past("http://127.0.0.1:9999/", None, None));
    assert!(!past("/a2a", Some("tap:8080"), None));
}

/// Spec 1.0.2: a gRPC interface's url is `host:port`, not an absolute URL.
/// It is no problem of the card, and it leads where its authority does.
#[test]
fn a_grpc_interface_at_host_port() {
    let card = |url: &str, binding: &str| {
        CardInfo::parse(
            format!(r#"{{"name":"a","version":"1","capabilities":{{}},"supportedInterfaces":[{{"url":"{url}","protocolBinding":"{binding}","protocolVersion":"1.0"}}]}}"#)
                .as_bytes(),
        )
        .unwrap()
    };
    let grpc = card("agent.svc:50051", "GRPC");
    assert!(grpc.problems.is_empty(), "{:?}", grpc.problems);
    assert_eq!(grpc.bypassing(Some("tap:8080"), None), ["agent.svc:50051"]);
    assert!(card("TAP:8080", "GRPC")
        .bypassing(Some("tap:8080"), None)
        .is_empty());
    assert!(card("[::1]:8080", "GRPC")
        .bypassing(Some("[::1]:8080"), None)
        .is_empty());
    // Only a gRPC interface is read so: a bare authority elsewhere is no URL.
    assert!(card("agent.svc:50051", "JSONRPC")
        .bypassing(Some("tap:8080"), None)
        .is_empty());
}
