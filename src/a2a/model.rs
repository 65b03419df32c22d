//! The one normalised vocabulary of the engine. 0.3 and 1.0 spellings are
//! mapped to these types at decode time; raw strings survive only where they
//! are evidence (`StateValue::Unspecified`/`Undefined`).

use std::borrow::Cow;
use std::fmt;

mod state;
pub use state::{StateClass, StateValue, TaskState};

/// Text of a decoded body: borrowed from the bytes where it needs no
/// unescaping, so judging a frame allocates nothing for its ids.
pub type Text<'a> = Cow<'a, str>;

/// The HTTP binding of an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binding {
    JsonRpc,
    Rest,
    Grpc,
    /// A push delivery: an agent's POST to a caller's webhook, through the
    /// relay (`[push]`).
    Webhook,
}

impl Binding {
    /// Every binding, in the order label tables index them.
    pub const ALL: [Binding; 4] = [
        Binding::JsonRpc,
        Binding::Rest,
        Binding::Grpc,
        Binding::Webhook,
    ];

    /// The contract spelling (`"jsonrpc"` | `"rest"` | `"grpc"` | `"webhook"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Binding::JsonRpc => "jsonrpc",
            Binding::Rest => "rest",
            Binding::Grpc => "grpc",
            Binding::Webhook => "webhook",
        }
    }
}

/// The protocol version of an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    V0_3,
    V1_0,
}

impl Version {
    /// The contract spelling (`"0.3"` | `"1.0"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V0_3 => "0.3",
            Version::V1_0 => "1.0",
        }
    }
}

/// An A2A operation, named by its 1.0 method name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
    CreateTaskPushNotificationConfig,
    GetTaskPushNotificationConfig,
    ListTaskPushNotificationConfigs,
    DeleteTaskPushNotificationConfig,
    GetExtendedAgentCard,
    /// A push delivery through the relay (no RPC: the agent's POST to the
    /// caller's webhook).
    PushDelivery,
    /// The public agent card (`GET /.well-known/agent-card.json`): no RPC
    /// of any binding, but what the card says decides how the agent's other
    /// answers are read.
    GetAgentCard,
}

impl Operation {
    /// Every operation.
    pub const ALL: &'static [Operation] = &[
        Operation::SendMessage,
        Operation::SendStreamingMessage,
        Operation::GetTask,
        Operation::ListTasks,
        Operation::CancelTask,
        Operation::SubscribeToTask,
        Operation::CreateTaskPushNotificationConfig,
        Operation::GetTaskPushNotificationConfig,
        Operation::ListTaskPushNotificationConfigs,
        Operation::DeleteTaskPushNotificationConfig,
        Operation::GetExtendedAgentCard,
        Operation::GetAgentCard,
        Operation::PushDelivery,
    ];

    /// The 1.0 method name, used in metrics labels and audit records.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::SendMessage => "SendMessage",
            Operation::SendStreamingMessage => "SendStreamingMessage",
            Operation::GetTask => "GetTask",
            Operation::ListTasks => "ListTasks",
            Operation::CancelTask => "CancelTask",
            Operation::SubscribeToTask => "SubscribeToTask",
            Operation::CreateTaskPushNotificationConfig => "CreateTaskPushNotificationConfig",
            Operation::GetTaskPushNotificationConfig => "GetTaskPushNotificationConfig",
            Operation::ListTaskPushNotificationConfigs => "ListTaskPushNotificationConfigs",
            Operation::DeleteTaskPushNotificationConfig => "DeleteTaskPushNotificationConfig",
            Operation::GetExtendedAgentCard => "GetExtendedAgentCard",
            Operation::GetAgentCard => "GetAgentCard",
            Operation::PushDelivery => "PushDelivery",
        }
    }

    /// Whether a successful answer is a Server-Sent-Event stream.
    pub fn streams(self) -> bool {
        matches!(
            self,
            Operation::SendStreamingMessage | Operation::SubscribeToTask
        )
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A JSON-RPC id. Numbers keep their JSON text so `1` and `1.0` differ, as
/// they do on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RpcId<'a> {
    Null,
    Number(Text<'a>),
    String(Text<'a>),
}

impl RpcId<'_> {
    /// The same id, owning its text.
    pub fn into_owned(self) -> RpcId<'static> {
        match self {
            RpcId::Null => RpcId::Null,
            RpcId::Number(n) => RpcId::Number(Cow::Owned(n.into_owned())),
            RpcId::String(s) => RpcId::String(Cow::Owned(s.into_owned())),
        }
    }
}

impl fmt::Display for RpcId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RpcId::Null => f.write_str("null"),
            RpcId::Number(n) => f.write_str(n),
            RpcId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// What the classifier learned from a request: enough to judge its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    pub binding: Binding,
    pub version: Version,
    pub operation: Operation,
    /// The JSON-RPC request id (`None` for REST, or a notification).
    pub rpc_id: Option<RpcId<'static>>,
    /// The task the request names (path `{id}`, `params.id`, or the message's
    /// `taskId`), if any.
    pub task_id: Option<String>,
    /// The message's `contextId`, if the request carries one.
    pub context_id: Option<String>,
    /// For non-streaming sends: the caller asked to wait for a terminal or
    /// interrupted state (1.0: `returnImmediately` false or absent; 0.3:
    /// `blocking: true`). False for every other operation.
    pub blocking: bool,
    /// The request path of an HTTP+JSON exchange that only its path says is
    /// A2A (no `A2A-Version` declared, no agent card seen naming it): then
    /// no finding accuses its answer of not being A2A. `None` otherwise.
    pub guessed_path: Option<String>,
    /// The sent message's `messageId` (sends only), for the exchange's span.
    pub message_id: Option<String>,
}

impl Exchange {
    /// Whether only the request path says this exchange is A2A.
    pub fn guessed(&self) -> bool {
        self.guessed_path.is_some()
    }
}

/// A task's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status<'a> {
    pub state: StateValue,
    /// `status.timestamp` as sent (RFC 3339), if present.
    pub timestamp: Option<Text<'a>>,
}

/// A Task object (snapshot): a stream's first event, a blocking send's
/// result, a GetTask/CancelTask result, a ListTasks entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSnapshot<'a> {
    pub id: Text<'a>,
    pub context_id: Option<Text<'a>>,
    pub status: Status<'a>,
    /// Ids of the artifacts the snapshot holds.
    pub artifact_ids: Vec<Text<'a>>,
}

/// A Message (a direct reply instead of a task).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageEvent<'a> {
    pub message_id: Option<Text<'a>>,
    pub task_id: Option<Text<'a>>,
    pub context_id: Option<Text<'a>>,
}

/// A TaskStatusUpdateEvent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusUpdate<'a> {
    pub task_id: Text<'a>,
    pub context_id: Option<Text<'a>>,
    pub status: Status<'a>,
    /// 0.3 `final`; `None` when absent (always in 1.0).
    pub final_flag: Option<bool>,
}

/// A TaskArtifactUpdateEvent. Absent `append`/`lastChunk` decode as false.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactUpdate<'a> {
    pub task_id: Text<'a>,
    pub context_id: Option<Text<'a>>,
    pub artifact_id: Text<'a>,
    pub append: bool,
    pub last_chunk: bool,
}

/// One StreamResponse, whatever the version or envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    Task(TaskSnapshot<'a>),
    Message(MessageEvent<'a>),
    StatusUpdate(StatusUpdate<'a>),
    ArtifactUpdate(ArtifactUpdate<'a>),
}

impl Event<'_> {
    /// The task the event names, if any.
    pub fn task_id(&self) -> Option<&str> {
        match self {
            Event::Task(t) => Some(&t.id),
            Event::Message(m) => m.task_id.as_deref(),
            Event::StatusUpdate(s) => Some(&s.task_id),
            Event::ArtifactUpdate(a) => Some(&a.task_id),
        }
    }

    /// The context the event names, if any.
    pub fn context_id(&self) -> Option<&str> {
        match self {
            Event::Task(t) => t.context_id.as_deref(),
            Event::Message(m) => m.context_id.as_deref(),
            Event::StatusUpdate(s) => s.context_id.as_deref(),
            Event::ArtifactUpdate(a) => a.context_id.as_deref(),
        }
    }

    /// What kind of event it is.
    pub fn kind(&self) -> EventKind {
        match self {
            Event::Task(_) => EventKind::Task,
            Event::Message(_) => EventKind::Message,
            Event::StatusUpdate(_) => EventKind::StatusUpdate,
            Event::ArtifactUpdate(_) => EventKind::ArtifactUpdate,
        }
    }

    /// The event's kind as `a2a_stream_events_total{event}` and findings'
    /// details name it.
    pub fn label(&self) -> &'static str {
        self.kind().as_str()
    }
}

/// The kinds of stream event: the closed `event` label set of
/// `a2a_stream_events_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    Task,
    Message,
    StatusUpdate,
    ArtifactUpdate,
    /// An error answer on the stream.
    Error,
}

impl EventKind {
    /// Every kind, in the order label tables index them.
    pub const ALL: [EventKind; 5] = [
        EventKind::Task,
        EventKind::Message,
        EventKind::StatusUpdate,
        EventKind::ArtifactUpdate,
        EventKind::Error,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Task => "task",
            EventKind::Message => "message",
            EventKind::StatusUpdate => "status_update",
            EventKind::ArtifactUpdate => "artifact_update",
            EventKind::Error => "error",
        }
    }
}

/// The A2A error an error response names (JSON-RPC code or REST reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum A2aError {
    TaskNotFound,
    TaskNotCancelable,
    PushNotificationNotSupported,
    UnsupportedOperation,
    ContentTypeNotSupported,
    InvalidAgentResponse,
    ExtendedAgentCardNotConfigured,
    ExtensionSupportRequired,
    VersionNotSupported,
    /// Any other error (JSON-RPC standard codes, unknown reasons).
    Other,
}

/// An error answer: a JSON-RPC `error`, a REST google.rpc.Status-like body
/// or an RFC 9457 problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    /// JSON-RPC error code, or the HTTP status a REST body states.
    pub code: i64,
    pub error: A2aError,
    /// The first way the error's typed details (REST `details[]`, JSON-RPC
    /// `data[]`) break the shape A2A 1.0 gives them; `None` when they keep
    /// it or there are none.
    pub fault: Option<DetailFault>,
}

impl ErrorInfo {
    /// An error with no fault in its details.
    pub fn new(code: i64, error: A2aError) -> ErrorInfo {
        ErrorInfo {
            code,
            error,
            fault: None,
        }
    }
}

/// How an entry of an error's typed details breaks the 1.0 shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DetailFault {
    /// Entry `entry` (from 0) names no type: a google.protobuf.Any in JSON
    /// carries `@type`.
    Untyped { entry: u32 },
    /// Entry `entry` is a google.rpc.ErrorInfo naming the A2A error `reason`
    /// outside the domain `a2a-protocol.org` (`domain` absent when
    /// `!has_domain`).
    Domain {
        entry: u32,
        reason: A2aError,
        has_domain: bool,
    },
}

/// What a body or frame says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload<'a> {
    /// A StreamResponse, a send result, or a bare Task (GetTask, CancelTask).
    Event(Event<'a>),
    /// A ListTasks result.
    TaskList(Vec<TaskSnapshot<'a>>),
    /// An error answer.
    Error(ErrorInfo),
}

/// A decoded body or frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded<'a> {
    /// The JSON-RPC envelope's id (`Some(RpcId::Null)` when the envelope has
    /// none); `None` when the body is not a JSON-RPC envelope.
    pub rpc_id: Option<RpcId<'a>>,
    pub payload: Payload<'a>,
    /// The dialect a JSON-RPC `result` (or a top-level object) is written
    /// in, when it says: 0.3's `kind` discriminator, or a 1.0
    /// StreamResponse wrapper (`task`, `message`, `statusUpdate`,
    /// `artifactUpdate`). `None` otherwise.
    pub dialect: Option<Version>,
}

/// Why a body or frame is not a known A2A shape (becomes `malformed_event`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);
