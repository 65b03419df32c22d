//! Messages prost encodes from random structs of `proto.rs`.

use proptest::prelude::*;
use prost::Message as _;

use super::super::proto;
use crate::a2a::model::{Operation, Version};

fn string() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["", "t", "t-1", "ctx", "a-1", "é"]).prop_map(str::to_owned)
}

fn status() -> impl Strategy<Value = Option<proto::TaskStatus>> {
    let ts = (any::<i64>(), any::<i32>(), 0i64..2_000_000_000, 0i32..3);
    let ts = prop_oneof![
        ts.clone().prop_map(|(s, n, _, _)| proto::Timestamp {
            seconds: s,
            nanos: n
        }),
        ts.prop_map(|(_, _, s, n)| proto::Timestamp {
            seconds: s,
            nanos: n
        }),
    ];
    prop::option::of(
        (-2i32..12, prop::option::of(ts))
            .prop_map(|(state, timestamp)| proto::TaskStatus { state, timestamp }),
    )
}

fn task() -> impl Strategy<Value = proto::Task> {
    let artifact = string().prop_map(|artifact_id| proto::ArtifactId { artifact_id });
    (
        string(),
        string(),
        status(),
        prop::collection::vec(artifact, 0..3),
    )
        .prop_map(|(id, context_id, status, artifacts)| proto::Task {
            id,
            context_id,
            status,
            artifacts,
        })
}

/// A message of `op`'s answer encoded by prost from a random struct.
pub(super) fn by_prost(version: Version, op: Operation) -> BoxedStrategy<Vec<u8>> {
    match (op, version) {
        (Operation::GetTask | Operation::CancelTask, _) => {
            task().prop_map(|t| t.encode_to_vec()).boxed()
        }
        (Operation::ListTasks, _) => prop::collection::vec(task(), 0..3)
            .prop_map(|tasks| proto::ListTasksResponse { tasks }.encode_to_vec())
            .boxed(),
        (_, Version::V1_0) => prop::option::of(payload())
            .prop_map(|payload| proto::StreamResponse { payload }.encode_to_vec())
            .boxed(),
        (_, Version::V0_3) => prop::option::of(payload03())
            .prop_map(|payload| proto::StreamResponse03 { payload }.encode_to_vec())
            .boxed(),
    }
}

fn message_ids() -> impl Strategy<Value = proto::Message> {
    (string(), string(), string()).prop_map(|(message_id, context_id, task_id)| proto::Message {
        message_id,
        context_id,
        task_id,
    })
}

fn artifact_update() -> impl Strategy<Value = proto::ArtifactUpdate> {
    let artifact =
        prop::option::of(string().prop_map(|artifact_id| proto::ArtifactId { artifact_id }));
    (string(), string(), artifact, any::<bool>(), any::<bool>()).prop_map(
        |(task_id, context_id, artifact, append, last_chunk)| proto::ArtifactUpdate {
            task_id,
            context_id,
            artifact,
            append,
            last_chunk,
        },
    )
}

fn payload() -> impl Strategy<Value = proto::Payload> {
    let update = (string(), string(), status()).prop_map(|(task_id, context_id, status)| {
        proto::StatusUpdate {
            task_id,
            context_id,
            status,
        }
    });
    prop_oneof![
        task().prop_map(proto::Payload::Task),
        message_ids().prop_map(proto::Payload::Message),
        update.prop_map(proto::Payload::StatusUpdate),
        artifact_update().prop_map(proto::Payload::ArtifactUpdate),
    ]
}

fn payload03() -> impl Strategy<Value = proto::Payload03> {
    let update = (string(), string(), status(), any::<bool>()).prop_map(
        |(task_id, context_id, status, r#final)| proto::StatusUpdate03 {
            task_id,
            context_id,
            status,
            r#final,
        },
    );
    prop_oneof![
        task().prop_map(proto::Payload03::Task),
        message_ids().prop_map(proto::Payload03::Message),
        update.prop_map(proto::Payload03::StatusUpdate),
        artifact_update().prop_map(proto::Payload03::ArtifactUpdate),
    ]
}
