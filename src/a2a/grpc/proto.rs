//! The protobuf messages of the gRPC binding that judging reads, written
//! from the specification's `a2a.proto` (1.0: package `lf.a2a.v1`; 0.3:
//! `a2a.v1`), with only the fields judging needs: prost skips the others
//! (as any proto3 reader skips unknown fields), so a message with more of
//! them reads the same. Field numbers are the spec's; where 0.3 differs (a
//! request's fields, `final` in a status update) the message is written
//! twice. Requests, the call's status and its details are decoded with
//! these; response messages are read in place (`messages.rs`, the same
//! fields), and these are what the tests encode answers with and hold
//! that reader to.

/// `google.protobuf.Timestamp`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Timestamp {
    #[prost(int64, tag = "1")]
    pub seconds: i64,
    #[prost(int32, tag = "2")]
    pub nanos: i32,
}

/// `TaskStatus` (`state` 1, `timestamp` 3; the status message unread).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TaskStatus {
    #[prost(int32, tag = "1")]
    pub state: i32,
    #[prost(message, optional, tag = "3")]
    pub timestamp: Option<Timestamp>,
}

/// An `Artifact`, by its id.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ArtifactId {
    #[prost(string, tag = "1")]
    pub artifact_id: String,
}

/// `Task`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Task {
    #[prost(string, tag = "1")]
    pub id: String,
    #[prost(string, tag = "2")]
    pub context_id: String,
    #[prost(message, optional, tag = "3")]
    pub status: Option<TaskStatus>,
    #[prost(message, repeated, tag = "4")]
    pub artifacts: Vec<ArtifactId>,
}

/// `Message`, by its ids.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Message {
    #[prost(string, tag = "1")]
    pub message_id: String,
    #[prost(string, tag = "2")]
    pub context_id: String,
    #[prost(string, tag = "3")]
    pub task_id: String,
}

/// 1.0 `TaskStatusUpdateEvent` (field 4 is metadata).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StatusUpdate {
    #[prost(string, tag = "1")]
    pub task_id: String,
    #[prost(string, tag = "2")]
    pub context_id: String,
    #[prost(message, optional, tag = "3")]
    pub status: Option<TaskStatus>,
}

/// 0.3 `TaskStatusUpdateEvent` (field 4 is `final`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StatusUpdate03 {
    #[prost(string, tag = "1")]
    pub task_id: String,
    #[prost(string, tag = "2")]
    pub context_id: String,
    #[prost(message, optional, tag = "3")]
    pub status: Option<TaskStatus>,
    #[prost(bool, tag = "4")]
    pub r#final: bool,
}

/// `TaskArtifactUpdateEvent` (the same in both versions).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ArtifactUpdate {
    #[prost(string, tag = "1")]
    pub task_id: String,
    #[prost(string, tag = "2")]
    pub context_id: String,
    #[prost(message, optional, tag = "3")]
    pub artifact: Option<ArtifactId>,
    #[prost(bool, tag = "4")]
    pub append: bool,
    #[prost(bool, tag = "5")]
    pub last_chunk: bool,
}

/// 1.0 `StreamResponse` (and `SendMessageResponse`, its fields 1 and 2).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StreamResponse {
    #[prost(oneof = "Payload", tags = "1, 2, 3, 4")]
    pub payload: Option<Payload>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Payload {
    #[prost(message, tag = "1")]
    Task(Task),
    #[prost(message, tag = "2")]
    Message(Message),
    #[prost(message, tag = "3")]
    StatusUpdate(StatusUpdate),
    #[prost(message, tag = "4")]
    ArtifactUpdate(ArtifactUpdate),
}

/// 0.3 `StreamResponse` (and `SendMessageResponse`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StreamResponse03 {
    #[prost(oneof = "Payload03", tags = "1, 2, 3, 4")]
    pub payload: Option<Payload03>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Payload03 {
    #[prost(message, tag = "1")]
    Task(Task),
    #[prost(message, tag = "2")]
    Message(Message),
    #[prost(message, tag = "3")]
    StatusUpdate(StatusUpdate03),
    #[prost(message, tag = "4")]
    ArtifactUpdate(ArtifactUpdate),
}

/// 1.0 `ListTasksResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListTasksResponse {
    #[prost(message, repeated, tag = "1")]
    pub tasks: Vec<Task>,
}

/// `google.rpc.Status`, the `grpc-status-details-bin` trailer.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcStatus {
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(message, repeated, tag = "3")]
    pub details: Vec<Any>,
}

/// `google.protobuf.Any`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Any {
    #[prost(string, tag = "1")]
    pub type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
}

/// `google.rpc.ErrorInfo`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ErrorInfo {
    #[prost(string, tag = "1")]
    pub reason: String,
    #[prost(string, tag = "2")]
    pub domain: String,
}

// --- requests: what the classifier reads ----------------------------------

/// 1.0 `SendMessageRequest` (`message` 2, `configuration` 3).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SendRequest {
    #[prost(message, optional, tag = "2")]
    pub message: Option<Message>,
    #[prost(message, optional, tag = "3")]
    pub configuration: Option<SendConfig>,
}

/// 1.0 `SendMessageConfiguration` (`return_immediately` 4).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SendConfig {
    #[prost(bool, tag = "4")]
    pub return_immediately: bool,
}

/// 0.3 `SendMessageRequest` (`request` 1, `configuration` 2).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SendRequest03 {
    #[prost(message, optional, tag = "1")]
    pub request: Option<Message>,
    #[prost(message, optional, tag = "2")]
    pub configuration: Option<SendConfig03>,
}

/// 0.3 `SendMessageConfiguration` (`blocking` 4).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SendConfig03 {
    #[prost(bool, tag = "4")]
    pub blocking: bool,
}

/// 1.0 `GetTaskRequest`, `CancelTaskRequest`, `SubscribeToTaskRequest`
/// (`id` 2).
#[derive(Clone, PartialEq, prost::Message)]
pub struct IdRequest {
    #[prost(string, tag = "2")]
    pub id: String,
}

/// 1.0 `ListTasksRequest` (`context_id` 2).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListRequest {
    #[prost(string, tag = "2")]
    pub context_id: String,
}

/// 1.0 `TaskPushNotificationConfig` as a create request (`task_id` 3).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PushConfig {
    #[prost(string, tag = "3")]
    pub task_id: String,
}

/// 1.0 Get/Delete push config requests (`task_id` 2).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PushConfigRequest {
    #[prost(string, tag = "2")]
    pub task_id: String,
}

/// 1.0 `ListTaskPushNotificationConfigsRequest` (`task_id` 1).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PushConfigList {
    #[prost(string, tag = "1")]
    pub task_id: String,
}

/// 0.3 requests that name their task as a resource in field 1: `name`
/// (`tasks/{id}`, `tasks/{id}/pushNotificationConfigs/{config}`) or
/// `parent` (`tasks/{id}`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct NameRequest03 {
    #[prost(string, tag = "1")]
    pub name: String,
}
