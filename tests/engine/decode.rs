//! The decoder: every accepted shape and state spelling, errors of every
//! kind, malformed inputs, and never panicking.

use a2a_tap::a2a::decode::decode;
use a2a_tap::a2a::model::*;
use a2a_tap::sse::{Frame, Framer};
use proptest::prelude::*;

fn ok(s: &str) -> Decoded<'_> {
    match decode(s.as_bytes()) {
        Ok(d) => d,
        Err(e) => panic!("{s}: {e:?}"),
    }
}

fn event(s: &str) -> Event<'_> {
    match ok(s).payload {
        Payload::Event(e) => e,
        other => panic!("{s}: {other:?}"),
    }
}

fn error(s: &str) -> ErrorInfo {
    match ok(s).payload {
        Payload::Error(e) => e,
        other => panic!("{s}: {other:?}"),
    }
}

fn state_of(s: &str) -> StateValue {
    match event(s) {
        Event::Task(t) => t.status.state,
        Event::StatusUpdate(u) => u.status.state,
        other => panic!("{other:?}"),
    }
}

fn known(s: TaskState) -> StateValue {
    StateValue::Known(s)
}

#[test]
fn jsonrpc_envelope_1_0_stream_responses() {
    let d = ok(
        r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED","timestamp":"2025-01-01T00:00:00Z"},"artifacts":[{"artifactId":"a1","parts":[]},{"artifactId":"a2"}],"history":[{"x":1}],"metadata":{}}}}"#,
    );
    assert_eq!(d.rpc_id, Some(RpcId::Number("1".into())));
    assert_eq!(
        d.payload,
        Payload::Event(Event::Task(TaskSnapshot {
            id: "t1".into(),
            context_id: Some("c1".into()),
            status: Status {
                state: known(TaskState::Submitted),
                timestamp: Some("2025-01-01T00:00:00Z".into())
            },
            artifact_ids: vec!["a1".into(), "a2".into()],
        }))
    );
    let d = ok(
        r#"{"jsonrpc":"2.0","id":"req-9","result":{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"text":"hi"}]},"append":true,"lastChunk":true}}}"#,
    );
    assert_eq!(d.rpc_id, Some(RpcId::String("req-9".into())));
    assert_eq!(
        d.payload,
        Payload::Event(Event::ArtifactUpdate(ArtifactUpdate {
            task_id: "t1".into(),
            context_id: Some("c1".into()),
            artifact_id: "a1".into(),
            append: true,
            last_chunk: true,
        }))
    );
    let e = event(
        r#"{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_WORKING"}}}}"#,
    );
    assert_eq!(
        e,
        Event::StatusUpdate(StatusUpdate {
            task_id: "t1".into(),
            context_id: None,
            status: Status {
                state: known(TaskState::Working),
                timestamp: None
            },
            final_flag: None,
        })
    );
    let e = event(
        r#"{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"m1","role":"ROLE_AGENT","parts":[{"text":"x"}],"contextId":"c"}}}"#,
    );
    assert_eq!(
        e,
        Event::Message(MessageEvent {
            message_id: Some("m1".into()),
            task_id: None,
            context_id: Some("c".into())
        })
    );
}

/// Ids come in their normal form (`spelling::number_id`): one text per
/// value, exact at any length, so equal text is an equal id.
#[test]
fn rpc_ids_take_their_normal_form() {
    let id = |s: &str| ok(s).rpc_id.map(RpcId::into_owned);
    let r = r#""result":{"message":{"messageId":"m"}}"#;
    assert_eq!(
        id(&format!(r#"{{"jsonrpc":"2.0",{r}}}"#)),
        Some(RpcId::Null)
    );
    assert_eq!(
        id(&format!(r#"{{"jsonrpc":"2.0","id":null,{r}}}"#)),
        Some(RpcId::Null)
    );
    assert_eq!(
        id(&format!(r#"{{"jsonrpc":"2.0","id":-7,{r}}}"#)),
        Some(RpcId::Number("-7".into()))
    );
    for same in ["1", "1.0", "1e0", "10E-1"] {
        assert_eq!(
            id(&format!(r#"{{"jsonrpc":"2.0","id":{same},{r}}}"#)),
            Some(RpcId::Number("1".into())),
            "{same}"
        );
    }
    for exact in ["9007199254740993", "123456789012345678901234567890"] {
        assert_eq!(
            id(&format!(r#"{{"jsonrpc":"2.0","id":{exact},{r}}}"#)),
            Some(RpcId::Number(exact.into()))
        );
    }
    assert_eq!(
        id(&format!(
            r#"{{"jsonrpc":"2.0","id":9007199254740993.0,{r}}}"#
        )),
        Some(RpcId::Number("9007199254740993".into()))
    );
    assert_eq!(
        id(&format!(r#"{{"jsonrpc":"2.0","id":"1",{r}}}"#)),
        Some(RpcId::String("1".into()))
    );
    assert_eq!(id(r#"{"message":{"messageId":"m"}}"#), None);
}

#[test]
fn rest_bare_shapes() {
    assert!(matches!(
        event(r#"{"task":{"id":"t","status":{"state":"TASK_STATE_COMPLETED"}}}"#),
        Event::Task(_)
    ));
    // GetTask / CancelTask: a bare Task.
    let e = event(
        r#"{"id":"t","contextId":"c","status":{"state":"TASK_STATE_CANCELED"},"history":[]}"#,
    );
    assert_eq!(e.task_id(), Some("t"));
    // A bare Message.
    assert!(matches!(
        event(r#"{"messageId":"m","role":"ROLE_AGENT","parts":[]}"#),
        Event::Message(_)
    ));
    assert!(matches!(
        event(r#"{"role":"ROLE_AGENT","parts":[]}"#),
        Event::Message(_)
    ));
    // ListTasks.
    let d = ok(
        r#"{"tasks":[{"id":"a","status":{"state":"TASK_STATE_WORKING"}},{"id":"b","status":{"state":"TASK_STATE_FAILED"}}],"nextPageToken":"","pageSize":2,"totalSize":2}"#,
    );
    match d.payload {
        Payload::TaskList(l) => {
            assert_eq!(l.len(), 2);
            assert_eq!(l[1].status.state, known(TaskState::Failed));
        }
        other => panic!("{other:?}"),
    }
    let d = ok(r#"{"jsonrpc":"2.0","id":3,"result":{"tasks":[]}}"#);
    assert_eq!(d.payload, Payload::TaskList(vec![]));
}

#[test]
fn v0_3_kind_objects() {
    let e = event(
        r#"{"jsonrpc":"2.0","id":1,"result":{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"input-required"},"final":true}}"#,
    );
    match e {
        Event::StatusUpdate(u) => {
            assert_eq!(u.final_flag, Some(true));
            assert_eq!(u.status.state, known(TaskState::InputRequired));
        }
        other => panic!("{other:?}"),
    }
    let e = event(
        r#"{"jsonrpc":"2.0","id":1,"result":{"kind":"artifact-update","taskId":"t","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"x"}]}}}"#,
    );
    match e {
        Event::ArtifactUpdate(a) => assert!(!a.append && !a.last_chunk),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        event(r#"{"kind":"task","id":"t","contextId":"c","status":{"state":"submitted"}}"#),
        Event::Task(_)
    ));
    assert!(matches!(
        event(r#"{"kind":"message","messageId":"m","role":"agent","parts":[]}"#),
        Event::Message(_)
    ));
    assert!(decode(br#"{"kind":"bogus","id":"t"}"#).is_err());
    assert!(
        decode(br#"{"kind":"task","id":"t"}"#).is_err(),
        "task without status"
    );
}

#[test]
fn bare_dump_events_of_the_seed_fixture() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/seeds/codegen-failed-abandoned.v03.sse"
    ))
    .expect("fixture");
    let mut framer = Framer::new(1 << 16);
    let mut data = Vec::new();
    framer.push(&bytes, &mut |f| {
        if let Frame::Event(e) = f {
            data.push(e.data.to_vec());
        }
    });
    let got: Vec<_> = data.iter().map(|d| decode(d).map(|d| d.payload)).collect();
    assert_eq!(got.len(), 4);
    let labels: Vec<_> = got
        .iter()
        .map(|p| match p {
            Ok(Payload::Event(e)) => e.label(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        labels,
        [
            "artifact_update",
            "status_update",
            "artifact_update",
            "status_update"
        ]
    );
    match &got[3] {
        Ok(Payload::Event(Event::StatusUpdate(u))) => {
            assert_eq!(u.status.state, known(TaskState::Failed));
            assert_eq!(u.final_flag, Some(true));
            assert_eq!(u.task_id, "t-9f2");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn jsonrpc_errors() {
    let codes = [
        (-32001, A2aError::TaskNotFound),
        (-32002, A2aError::TaskNotCancelable),
        (-32003, A2aError::PushNotificationNotSupported),
        (-32004, A2aError::UnsupportedOperation),
        (-32005, A2aError::ContentTypeNotSupported),
        (-32006, A2aError::InvalidAgentResponse),
        (-32007, A2aError::ExtendedAgentCardNotConfigured),
        (-32008, A2aError::ExtensionSupportRequired),
        (-32009, A2aError::VersionNotSupported),
        (-32600, A2aError::Other),
        (-32603, A2aError::Other),
        (-32010, A2aError::Other),
    ];
    for (code, want) in codes {
        let s = format!(
            r#"{{"jsonrpc":"2.0","id":5,"error":{{"code":{code},"message":"m","data":{{"x":[1]}}}}}}"#
        );
        let d = ok(&s);
        assert_eq!(d.rpc_id, Some(RpcId::Number("5".into())));
        assert_eq!(d.payload, Payload::Error(ErrorInfo::new(code, want)));
    }
    assert!(decode(br#"{"jsonrpc":"2.0","id":1}"#).is_err());
    assert!(decode(
        br#"{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"m"}},"error":{"code":1}}"#
    )
    .is_err());
}

#[test]
fn rest_errors() {
    let reasons = [
        ("TASK_NOT_FOUND", A2aError::TaskNotFound),
        ("TASK_NOT_CANCELABLE", A2aError::TaskNotCancelable),
        ("UNSUPPORTED_OPERATION", A2aError::UnsupportedOperation),
        (
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
            A2aError::PushNotificationNotSupported,
        ),
        (
            "CONTENT_TYPE_NOT_SUPPORTED",
            A2aError::ContentTypeNotSupported,
        ),
        ("INVALID_AGENT_RESPONSE", A2aError::InvalidAgentResponse),
        (
            "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            A2aError::ExtendedAgentCardNotConfigured,
        ),
        (
            "EXTENSION_SUPPORT_REQUIRED",
            A2aError::ExtensionSupportRequired,
        ),
        ("VERSION_NOT_SUPPORTED", A2aError::VersionNotSupported),
        ("SOMETHING_ELSE", A2aError::Other),
    ];
    for (reason, want) in reasons {
        let s = format!(
            r#"{{"error":{{"code":404,"status":"NOT_FOUND","message":"m","details":[{{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"{reason}","domain":"a2a-protocol.org"}}]}}}}"#
        );
        let d = ok(&s);
        assert_eq!(d.rpc_id, None);
        assert_eq!(d.payload, Payload::Error(ErrorInfo::new(404, want)));
    }
    let e = error(r#"{"error":{"code":500,"status":"INTERNAL","message":"boom"}}"#);
    assert_eq!(e, ErrorInfo::new(500, A2aError::Other));
}

#[test]
fn problem_json_errors() {
    let e = error(
        r#"{"type":"https://a2a-protocol.org/errors/task-not-found","title":"Task not found","status":404,"detail":"no task t"}"#,
    );
    assert_eq!(e, ErrorInfo::new(404, A2aError::TaskNotFound));
    let e = error(r#"{"type":"about:blank","title":"Task Not Cancelable","status":409}"#);
    assert_eq!(e, ErrorInfo::new(409, A2aError::Other));
    let e = error(r#"{"title":"Unsupported operation","status":400}"#);
    assert_eq!(e, ErrorInfo::new(400, A2aError::UnsupportedOperation));
    let e = error(r#"{"type":"urn:a2a:VersionNotSupportedError","status":400}"#);
    assert_eq!(e.error, A2aError::VersionNotSupported);
}

#[test]
fn every_state_spelling() {
    use TaskState::*;
    let table: [(&str, StateValue); 36] = [
        ("\"TASK_STATE_SUBMITTED\"", known(Submitted)),
        ("\"task_state_submitted\"", known(Submitted)),
        ("\"submitted\"", known(Submitted)),
        ("\"TASK_STATE_WORKING\"", known(Working)),
        ("\"task_state_working\"", known(Working)),
        ("\"working\"", known(Working)),
        ("\"TASK_STATE_INPUT_REQUIRED\"", known(InputRequired)),
        ("\"task_state_input_required\"", known(InputRequired)),
        ("\"input-required\"", known(InputRequired)),
        ("\"TASK_STATE_AUTH_REQUIRED\"", known(AuthRequired)),
        ("\"task_state_auth_required\"", known(AuthRequired)),
        ("\"auth-required\"", known(AuthRequired)),
        ("\"TASK_STATE_COMPLETED\"", known(Completed)),
        ("\"task_state_completed\"", known(Completed)),
        ("\"completed\"", known(Completed)),
        ("\"TASK_STATE_FAILED\"", known(Failed)),
        ("\"failed\"", known(Failed)),
        ("\"TASK_STATE_CANCELED\"", known(Canceled)),
        ("\"canceled\"", known(Canceled)),
        ("\"TASK_STATE_CANCELLED\"", known(Canceled)),
        ("\"cancelled\"", known(Canceled)),
        ("\"TASK_STATE_REJECTED\"", known(Rejected)),
        ("\"rejected\"", known(Rejected)),
        (
            "\"TASK_STATE_UNSPECIFIED\"",
            StateValue::Unspecified("TASK_STATE_UNSPECIFIED".into()),
        ),
        ("\"unknown\"", StateValue::Unspecified("unknown".into())),
        (
            "\"TASK_STATE_UNKNOWN\"",
            StateValue::Unspecified("TASK_STATE_UNKNOWN".into()),
        ),
        (
            "\"input_required\"",
            StateValue::Undefined("input_required".into()),
        ),
        ("\"Working\"", StateValue::Undefined("Working".into())),
        ("\"\"", StateValue::Undefined(String::new())),
        ("0", StateValue::Unspecified("0".into())),
        ("1", known(Submitted)),
        ("3", known(Completed)),
        ("6", known(InputRequired)),
        ("8", known(AuthRequired)),
        ("9", StateValue::Undefined("9".into())),
        ("-1", StateValue::Undefined("-1".into())),
    ];
    for (raw, want) in table {
        let s = format!(r#"{{"statusUpdate":{{"taskId":"t","status":{{"state":{raw}}}}}}}"#);
        assert_eq!(state_of(&s), want, "{raw}");
        let s = format!(r#"{{"kind":"task","id":"t","status":{{"state":{raw}}}}}"#);
        assert_eq!(state_of(&s), want, "{raw}");
    }
    // Absent state: the omitted default, UNSPECIFIED.
    let s = r#"{"statusUpdate":{"taskId":"t","status":{}}}"#;
    assert_eq!(state_of(s), StateValue::Unspecified(String::new()));
}

/// Proto3 JSON leaves out what is at its default: an empty ListTasks page
/// is `{}`, or only its paging fields (no `tasks`); in a JSON-RPC result too.
#[test]
fn empty_list_pages_without_tasks() {
    for body in [
        "{}",
        r#"{"pageSize":50}"#,
        r#"{"nextPageToken":"","totalSize":0}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"pageSize":50}}"#,
    ] {
        let d = decode(body.as_bytes()).unwrap_or_else(|e| panic!("{body}: {e:?}"));
        assert_eq!(d.payload, Payload::TaskList(Vec::new()), "{body}");
    }
}

/// Error objects sent bare: 0.3 HTTP+JSON servers answer a JSON-RPC error
/// object (`@a2a-js/sdk` 0.3.x), google.rpc.Status may come unwrapped.
#[test]
fn bare_error_objects() {
    use a2a_tap::a2a::model::{A2aError, ErrorInfo};
    for (body, code, error) in [
        (
            r#"{"code":-32001,"message":"Task not found"}"#,
            -32001,
            A2aError::TaskNotFound,
        ),
        (
            r#"{"code":-32004,"message":"x","data":null}"#,
            -32004,
            A2aError::UnsupportedOperation,
        ),
        (
            r#"{"code":5,"message":"nope","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}"#,
            5,
            A2aError::TaskNotFound,
        ),
        (r#"{"code":9,"message":"other"}"#, 9, A2aError::Other),
    ] {
        let d = decode(body.as_bytes()).unwrap_or_else(|e| panic!("{body}: {e:?}"));
        assert_eq!(
            d.payload,
            Payload::Error(ErrorInfo::new(code, error)),
            "{body}"
        );
    }
    // A bare `message` string alone is no error shape (nor a Message).
    assert!(decode(br#"{"message":"hello"}"#).is_err());
}

#[test]
fn malformed_inputs() {
    let cases: [&[u8]; 16] = [
        b"{\"code\":-32004}",
        b"",
        b"   ",
        b"not json",
        b"{\"task\":",
        b"\xff\xfe{}",
        b"{\"messageId\":\"\xff\"}",
        b"[1,2]",
        b"\"a string\"",
        b"null",
        b"{\"foo\":1}",
        b"{\"task\":{\"id\":\"t\",\"status\":{}},\"message\":{\"messageId\":\"m\"}}",
        b"{\"statusUpdate\":{\"status\":{\"state\":\"working\"}}}",
        b"{\"artifactUpdate\":{\"taskId\":\"t\",\"artifact\":{}}}",
        b"{\"taskId\":5,\"status\":{}}",
        b"{\"id\":7,\"status\":{\"state\":\"working\"}}",
    ];
    for c in cases {
        let r = decode(c);
        assert!(r.is_err(), "{:?} gave {r:?}", String::from_utf8_lossy(c));
    }
    let Err(Malformed(why)) = decode(b"[1]") else {
        panic!()
    };
    assert!(why.contains("not an object"), "{why}");
    let Err(Malformed(why)) = decode(b"{\"a\":") else {
        panic!()
    };
    assert!(why.contains("not valid JSON"), "{why}");
    let Err(Malformed(why)) = decode(b"\xff") else {
        panic!()
    };
    assert!(why.contains("UTF-8"), "{why}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode(&bytes);
    }

    #[test]
    fn never_panics_on_json_like_text(s in r#"[{}\[\]":,a-zA-Z0-9_\- .]{0,120}"#) {
        let _ = decode(s.as_bytes());
    }

    #[test]
    fn never_panics_on_mutated_frames(pos in 0usize..200, byte in any::<u8>(), cut in 0usize..200) {
        let base = br#"{"jsonrpc":"2.0","id":1,"result":{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"append":true,"lastChunk":false}}}"#;
        let mut m = base.to_vec();
        let p = pos % m.len();
        m[p] = byte;
        m.truncate(cut.max(1).min(m.len()));
        let _ = decode(&m);
    }
}

/// The typed details of an error: the first entry without `@type`, or the
/// ErrorInfo naming an A2A error outside `a2a-protocol.org`; JSON-RPC `data`
/// read only when it is an array.
#[test]
fn error_detail_faults() {
    let info = r#"{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}"#;
    let rpc = |data: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32001,"message":"m","data":{data}}}}}"#
        )
    };
    let rest =
        |details: &str| format!(r#"{{"error":{{"code":404,"message":"m","details":{details}}}}}"#);
    for ok in [
        rpc(&format!("[{info}]")),
        rpc("null"),
        rpc(r#"{"taskId":"t"}"#),
        rpc(r#""text""#),
        rest(&format!("[{info}]")),
        rest(r#"[{"@type":"x/google.rpc.ErrorInfo","reason":"QUOTA","domain":"example.com"}]"#),
    ] {
        assert_eq!(error(&ok).fault, None, "{ok}");
    }
    let untyped = |entry| Some(DetailFault::Untyped { entry });
    assert_eq!(error(&rpc(r#"[{"reason":"X"}]"#)).fault, untyped(0));
    assert_eq!(error(&rpc(&format!("[{info},1]"))).fault, untyped(1));
    assert_eq!(error(&rest(&format!("[{info},{{}}]"))).fault, untyped(1));
    let domain = |has_domain| {
        Some(DetailFault::Domain {
            entry: 0,
            reason: A2aError::TaskNotFound,
            has_domain,
        })
    };
    let no_domain =
        r#"[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND"}]"#;
    assert_eq!(error(&rest(no_domain)).fault, domain(false));
    let other = no_domain.replace(
        r#""TASK_NOT_FOUND""#,
        r#""TASK_NOT_FOUND","domain":"x.org""#,
    );
    assert_eq!(error(&rest(&other)).fault, domain(true));
    let bare = r#"{"code":404,"message":"m","details":[{"reason":"TASK_NOT_FOUND"}]}"#;
    assert_eq!(error(bare).fault, untyped(0));
    assert_eq!(error(bare).error, A2aError::TaskNotFound);
}
