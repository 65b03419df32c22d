use super::*;

fn relay(public: &str) -> Relay {
    let mut config = Config::default();
    config.push.relay = true;
    config.push.public_url = Some(public.parse().unwrap());
    let metrics = Arc::new(Metrics::new().unwrap());
    let (tx, _rx) = crate::analysis::queue_for_tests();
    Arc::into_inner(Relay::new(&config, metrics, tx).unwrap().expect("relay on")).unwrap()
}

#[tokio::test]
async fn answers_show_the_callers_url_again_and_nothing_else_moves() {
    let r = relay("https://tap.example:8443/push/");
    let now = Instant::now();
    let token = r
        .table
        .insert("http://hook:9/in?a=b", &r.upstream, now)
        .unwrap();
    let url = r.url_of(&token);
    assert_eq!(url, format!("https://tap.example:8443/push/{token}"));
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"taskId":"t","url":"{url}","note":"{url}x"}}}}"#
    );
    let restored = String::from_utf8(r.restore(answer.as_bytes(), now).unwrap()).unwrap();
    assert_eq!(
        restored,
        r#"{"jsonrpc":"2.0","id":1,"result":{"taskId":"t","url":"http://hook:9/in?a=b","note":"https://tap.example:8443/push/"#
            .to_owned()
            + &token
            + r#"x"}}"#,
        "only a whole string that is a relay URL moves"
    );
    // Escaped slashes, as some JSON writers send them.
    let escaped = url.replace('/', "\\/");
    let answer = format!(r#"[{{"url":"{escaped}"}}]"#);
    let restored = String::from_utf8(r.restore(answer.as_bytes(), now).unwrap()).unwrap();
    assert_eq!(restored, r#"[{"url":"http://hook:9/in?a=b"}]"#);
    // A token the relay does not hold: as sent.
    let other = format!(
        r#"{{"url":"https://tap.example:8443/push/{}"}}"#,
        "a".repeat(64)
    );
    assert!(r.restore(other.as_bytes(), now).is_none());
}
