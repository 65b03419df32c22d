use super::*;
use crate::a2a::model::{Binding, Exchange, Operation, Version};

fn exchange(version: Version, operation: Operation) -> Exchange {
    Exchange {
        binding: Binding::Grpc,
        version,
        operation,
        rpc_id: None,
        task_id: Some("t-path".into()),
        context_id: None,
        blocking: false,
        guessed_path: None,
        message_id: None,
    }
}

fn field(n: u32, v: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put_len_field(&mut out, n, v);
    out
}

fn cat(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.concat()
}

/// A 1.0 `TaskPushNotificationConfig` to `url`.
fn config_1_0(url: &str) -> Vec<u8> {
    let auth = cat(&[field(1, b"Bearer"), field(2, b"s3")]);
    cat(&[
        field(2, b"cfg-1"),
        field(3, b"t-1"),
        field(4, url.as_bytes()),
        field(5, b"tok"),
        field(6, &auth),
    ])
}

/// What `rewrite` found, and the body with `url` for it.
fn run(ex: &Exchange, body: &[u8], url: Option<&str>) -> (Vec<GrpcConfig>, Option<Vec<u8>>) {
    let mut found = Vec::new();
    let out = rewrite(ex, body, &mut |c| {
        found.push(c.clone());
        url.map(str::to_owned)
    });
    (found, out)
}

#[test]
fn a_1_0_send_config_is_found_and_only_its_url_moves() {
    let message = field(1, b"m-1");
    let configuration = cat(&[
        field(1, b"text/plain"),
        field(2, &config_1_0("http://hook/a")),
        vec![0x20, 0x01], // return_immediately = true
    ]);
    let body = frame(&cat(&[
        field(1, b"tenant"),
        field(2, &message),
        field(3, &configuration),
    ]));
    let ex = exchange(Version::V1_0, Operation::SendMessage);
    let (found, out) = run(&ex, &body, Some("http://relay/TOKEN"));
    assert_eq!(
        found,
        [GrpcConfig {
            webhook: "http://hook/a".into(),
            id: Some("cfg-1".into()),
            task_id: Some("t-1".into()),
            auth: Some(PushAuth {
                schemes: vec!["Bearer".into()],
                credentials: Some("s3".into()),
            }),
        }]
    );
    let configuration = cat(&[
        field(1, b"text/plain"),
        field(2, &config_1_0("http://relay/TOKEN")),
        vec![0x20, 0x01],
    ]);
    let want = frame(&cat(&[
        field(1, b"tenant"),
        field(2, &message),
        field(3, &configuration),
    ]));
    assert_eq!(out.unwrap(), want);
    // Left as it is: nothing to write.
    assert_eq!(run(&ex, &body, None).1, None);
}

#[test]
fn a_0_3_create_config_is_found_with_the_paths_task() {
    let auth = cat(&[field(1, b"Basic"), field(1, b"Bearer"), field(2, b"c")]);
    let push = cat(&[
        field(1, b"id-3"),
        field(2, b"https://hook/0.3"),
        field(4, &auth),
    ]);
    let config = cat(&[
        field(1, b"tasks/t-path/pushNotificationConfigs/id-3"),
        field(2, &push),
    ]);
    let body = frame(&cat(&[
        field(1, b"tasks/t-path"),
        field(2, b"id-3"),
        field(3, &config),
    ]));
    let ex = exchange(Version::V0_3, Operation::CreateTaskPushNotificationConfig);
    let (found, out) = run(&ex, &body, Some("http://r/x"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].webhook, "https://hook/0.3");
    assert_eq!(found[0].task_id.as_deref(), Some("t-path"));
    assert_eq!(found[0].auth.as_ref().unwrap().schemes, ["Basic", "Bearer"]);
    let out = out.unwrap();
    let (again, _) = run(&ex, &out, None);
    assert_eq!(again[0].webhook, "http://r/x");
}

#[test]
fn compressed_broken_or_other_messages_are_left_alone() {
    let ex = exchange(Version::V1_0, Operation::CreateTaskPushNotificationConfig);
    let mut body = frame(&config_1_0("http://hook/a"));
    body[0] = 1;
    assert_eq!(run(&ex, &body, Some("x")), (vec![], None), "compressed");
    let broken = frame(&[0x22, 0x7f, 0x01]);
    assert_eq!(run(&ex, &broken, Some("x")), (vec![], None));
    let get = exchange(Version::V1_0, Operation::GetTask);
    assert_eq!(
        run(&get, &frame(&config_1_0("http://h")), Some("x")).1,
        None
    );
}

#[test]
fn relay_urls_in_answers_are_swapped_at_any_depth() {
    let list = cat(&[
        field(1, &config_1_0("http://relay/T1")),
        field(1, &config_1_0("http://elsewhere/")),
        field(2, b"next"),
    ]);
    let body = cat(&[frame(&list), frame(&config_1_0("http://relay/T1"))]);
    let swap = |v: &[u8]| (v == b"http://relay/T1").then(|| b"http://hook/mine".to_vec());
    let out = restore(&body, &swap).unwrap();
    let want_list = cat(&[
        field(1, &config_1_0("http://hook/mine")),
        field(1, &config_1_0("http://elsewhere/")),
        field(2, b"next"),
    ]);
    assert_eq!(
        out,
        cat(&[frame(&want_list), frame(&config_1_0("http://hook/mine"))])
    );
    assert_eq!(restore(&frame(&list[..3]), &swap), None, "nothing to swap");
}

#[test]
fn deletes_name_their_task_and_config() {
    let ex = exchange(Version::V1_0, Operation::DeleteTaskPushNotificationConfig);
    let body = frame(&cat(&[field(2, b"t-1"), field(3, b"c-1")]));
    assert_eq!(
        deleted_config(&ex, &body),
        Some((Some("t-1".into()), "c-1".into()))
    );
    let ex = exchange(Version::V0_3, Operation::DeleteTaskPushNotificationConfig);
    let body = frame(&field(1, b"tasks/t-2/pushNotificationConfigs/c-2"));
    assert_eq!(
        deleted_config(&ex, &body),
        Some((Some("t-2".into()), "c-2".into()))
    );
    assert_eq!(deleted_config(&ex, &frame(&field(1, b"tasks/t-2"))), None);
}
