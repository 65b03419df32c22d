//! The gRPC binding's pieces: routes, request ids, response messages into
//! the engine's vocabulary, timestamps.

use prost::Message as _;

use super::proto;
use super::read::decode_response;
use super::*;
use crate::a2a::model::{Event, Payload, StateValue, TaskState};

fn framed(msg: &[u8]) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    out.extend_from_slice(msg);
    out
}

#[test]
fn routes_name_the_operation_and_the_version() {
    use Operation::*;
    let cases = [
        (
            "/lf.a2a.v1.A2AService/SendStreamingMessage",
            Some((SendStreamingMessage, Version::V1_0)),
        ),
        (
            "/lf.a2a.v1.A2AService/SubscribeToTask",
            Some((SubscribeToTask, Version::V1_0)),
        ),
        (
            "/lf.a2a.v1.A2AService/ListTasks",
            Some((ListTasks, Version::V1_0)),
        ),
        (
            "/a2a.v1.A2AService/TaskSubscription",
            Some((SubscribeToTask, Version::V0_3)),
        ),
        (
            "/a2a.v1.A2AService/GetAgentCard",
            Some((GetExtendedAgentCard, Version::V0_3)),
        ),
        ("/a2a.v1.A2AService/ListTasks", None),
        ("/lf.a2a.v1.A2AService/TaskSubscription", None),
        ("/other.Service/GetTask", None),
        ("/lf.a2a.v1.A2AService", None),
        ("lf.a2a.v1.A2AService/GetTask", None),
        ("/lf.a2a.v1.A2AServiceX/GetTask", None),
        ("/a2a.v1.A2AServiceGetTask", None),
        ("/lf.a2a.v1.A2AService//GetTask", None),
        ("/lf.a2a.v1.A2AService/GetTask/", None),
        ("//lf.a2a.v1.A2AService/GetTask", None),
    ];
    for (path, want) in cases {
        assert_eq!(route(path), want, "{path}");
    }
    assert!(is_grpc("application/grpc"));
    assert!(is_grpc("application/grpc+proto; charset=x"));
    assert!(!is_grpc("application/grpc-web"));
    assert!(!is_grpc("application/json"));
}

#[test]
fn requests_name_their_task_context_and_blocking() {
    let msg = proto::Message {
        message_id: "m-1".into(),
        context_id: "c-1".into(),
        task_id: "t-1".into(),
    };
    let v1 = proto::SendRequest {
        message: Some(msg.clone()),
        configuration: None,
    };
    let ex = classify(
        "/lf.a2a.v1.A2AService/SendMessage",
        &framed(&v1.encode_to_vec()),
        false,
    )
    .unwrap();
    assert_eq!(ex.binding, Binding::Grpc);
    assert_eq!(
        (
            ex.task_id.as_deref(),
            ex.context_id.as_deref(),
            ex.message_id.as_deref(),
            ex.blocking
        ),
        (Some("t-1"), Some("c-1"), Some("m-1"), true)
    );
    let immediate = proto::SendRequest {
        message: Some(msg.clone()),
        configuration: Some(proto::SendConfig {
            return_immediately: true,
        }),
    };
    let ex = classify(
        "/lf.a2a.v1.A2AService/SendMessage",
        &framed(&immediate.encode_to_vec()),
        false,
    )
    .unwrap();
    assert!(!ex.blocking);
    let v03 = proto::SendRequest03 {
        request: Some(msg),
        configuration: Some(proto::SendConfig03 { blocking: true }),
    };
    let ex = classify(
        "/a2a.v1.A2AService/SendMessage",
        &framed(&v03.encode_to_vec()),
        false,
    )
    .unwrap();
    assert_eq!(
        (ex.version, ex.blocking, ex.task_id.as_deref()),
        (Version::V0_3, true, Some("t-1"))
    );
    let get = proto::IdRequest { id: "t-9".into() };
    let ex = classify(
        "/lf.a2a.v1.A2AService/GetTask",
        &framed(&get.encode_to_vec()),
        false,
    )
    .unwrap();
    assert_eq!(ex.task_id.as_deref(), Some("t-9"));
    let name = proto::NameRequest03 {
        name: "tasks/t-8/pushNotificationConfigs/x".into(),
    };
    let ex = classify(
        "/a2a.v1.A2AService/GetTaskPushNotificationConfig",
        &framed(&name.encode_to_vec()),
        false,
    )
    .unwrap();
    assert_eq!(ex.task_id.as_deref(), Some("t-8"));
    // Unreadable bodies still classify, without ids.
    for body in [
        &b""[..],
        b"\x00\x00\x00\x00\x09abc",
        b"\x01\x00\x00\x00\x01x",
        b"\x00\x00\x00\x00\x02\xff\xff",
    ] {
        let ex = classify("/lf.a2a.v1.A2AService/GetTask", body, false).unwrap();
        assert_eq!(ex.task_id, None, "{body:?}");
    }
    // A gzip request message, when the call says so.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &get.encode_to_vec()).unwrap();
    let gz = gz.finish().unwrap();
    let mut body = vec![1];
    body.extend_from_slice(&(gz.len() as u32).to_be_bytes());
    body.extend_from_slice(&gz);
    let ex = classify("/lf.a2a.v1.A2AService/GetTask", &body, true).unwrap();
    assert_eq!(ex.task_id.as_deref(), Some("t-9"));
}

fn status(state: i32, seconds: i64) -> Option<proto::TaskStatus> {
    Some(proto::TaskStatus {
        state,
        timestamp: Some(proto::Timestamp { seconds, nanos: 0 }),
    })
}

#[test]
fn responses_decode_into_the_engine_vocabulary() {
    let update = proto::StreamResponse {
        payload: Some(proto::Payload::StatusUpdate(proto::StatusUpdate {
            task_id: "t".into(),
            context_id: "c".into(),
            status: status(3, 1_764_583_200),
        })),
    };
    let bytes = update.encode_to_vec();
    let d = decode_response(Version::V1_0, Operation::SendStreamingMessage, &bytes).unwrap();
    let Payload::Event(Event::StatusUpdate(s)) = d.payload else {
        panic!("{d:?}")
    };
    assert_eq!(s.status.state, StateValue::Known(TaskState::Completed));
    assert_eq!(s.status.timestamp.as_deref(), Some("2025-12-01T10:00:00Z"));
    assert_eq!(
        (s.task_id.as_ref(), s.context_id.as_deref(), s.final_flag),
        ("t", Some("c"), None)
    );
    let v03 = proto::StreamResponse03 {
        payload: Some(proto::Payload03::StatusUpdate(proto::StatusUpdate03 {
            task_id: "t".into(),
            context_id: String::new(),
            status: status(6, 0),
            r#final: true,
        })),
    };
    let bytes = v03.encode_to_vec();
    let d = decode_response(Version::V0_3, Operation::SubscribeToTask, &bytes).unwrap();
    let Payload::Event(Event::StatusUpdate(s)) = d.payload else {
        panic!("{d:?}")
    };
    assert_eq!((s.final_flag, s.context_id), (Some(true), None));
    let art = proto::StreamResponse {
        payload: Some(proto::Payload::ArtifactUpdate(proto::ArtifactUpdate {
            task_id: "t".into(),
            context_id: "c".into(),
            artifact: Some(proto::ArtifactId {
                artifact_id: "a".into(),
            }),
            append: true,
            last_chunk: false,
        })),
    };
    let bytes = art.encode_to_vec();
    let d = decode_response(Version::V1_0, Operation::SendStreamingMessage, &bytes).unwrap();
    assert!(
        matches!(d.payload, Payload::Event(Event::ArtifactUpdate(ref a)) if a.append && !a.last_chunk && a.artifact_id == "a")
    );
    let task = proto::Task {
        id: "t".into(),
        context_id: "c".into(),
        status: status(0, 0),
        artifacts: vec![],
    };
    let bytes = task.encode_to_vec();
    let d = decode_response(Version::V1_0, Operation::GetTask, &bytes).unwrap();
    let Payload::Event(Event::Task(t)) = d.payload else {
        panic!()
    };
    assert!(matches!(t.status.state, StateValue::Unspecified(_)));
    let odd = proto::Task {
        status: status(42, 0),
        ..task.clone()
    };
    let bytes = odd.encode_to_vec();
    let d = decode_response(Version::V1_0, Operation::CancelTask, &bytes).unwrap();
    let Payload::Event(Event::Task(t)) = d.payload else {
        panic!()
    };
    assert!(matches!(t.status.state, StateValue::Undefined(_)));
    let list = proto::ListTasksResponse {
        tasks: vec![task.clone(), task],
    };
    let bytes = list.encode_to_vec();
    let d = decode_response(Version::V1_0, Operation::ListTasks, &bytes).unwrap();
    assert!(matches!(d.payload, Payload::TaskList(ref l) if l.len() == 2));
    // Not the message: an empty stream response, a wrong wire type, bad UTF-8.
    assert!(decode_response(Version::V1_0, Operation::SendStreamingMessage, b"").is_err());
    assert!(decode_response(Version::V1_0, Operation::GetTask, b"\x0d\x00\x00\x00\x00").is_err());
    assert!(decode_response(Version::V1_0, Operation::GetTask, b"\x0a\x02\xff\xfe").is_err());
}

#[test]
fn timestamps_are_rfc3339() {
    use super::read::Render;
    let t = |seconds, nanos| {
        let task = proto::Task {
            id: "t".into(),
            context_id: String::new(),
            status: Some(proto::TaskStatus {
                state: 2,
                timestamp: Some(proto::Timestamp { seconds, nanos }),
            }),
            artifacts: vec![],
        };
        let bytes = task.encode_to_vec();
        let d = decode_response(Version::V1_0, Operation::GetTask, &bytes).unwrap();
        let Payload::Event(Event::Task(t)) = &d.payload else {
            panic!()
        };
        (t.status.timestamp.as_deref().map(str::to_owned), d.render())
    };
    assert_eq!(t(0, 0).0.as_deref(), Some("1970-01-01T00:00:00Z"));
    assert_eq!(
        t(951_782_400, 5).0.as_deref(),
        Some("2000-02-29T00:00:00.000000005Z")
    );
    assert_eq!(
        t(-62_135_596_800, 0).0.as_deref(),
        Some("0001-01-01T00:00:00Z")
    );
    assert_eq!(
        t(253_402_300_799, 0).0.as_deref(),
        Some("9999-12-31T23:59:59Z")
    );
    assert_eq!(t(253_402_300_800, 0).0, None);
    assert_eq!(t(0, -1).0, None);
    let (_, evidence) = t(0, 0);
    let v: serde_json::Value = serde_json::from_str(&evidence).unwrap();
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_WORKING");
}
