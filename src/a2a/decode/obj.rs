//! The union shape: every member the decoder reads, of any object it may
//! meet, in one struct filled in one pass.

use crate::a2a::json::JStr;
use crate::a2a::model::{ErrorInfo, Event, Malformed, Payload, RpcId, Status, TaskSnapshot, Text};

/// Any object the decoder may meet at the top, in `result`, or inside a
/// StreamResponse wrapper. Which members are present decides its shape. A
/// member sent as `null` counts as absent.
#[derive(Default)]
pub(crate) struct Obj<'a> {
    pub jsonrpc: bool,
    pub id: Option<RpcId<'a>>,
    /// `result`, read by the shape rules.
    pub result: Option<std::result::Result<Payload<'a>, Malformed>>,
    /// The dialect `result` is written in, when it says.
    pub result_dialect: Option<crate::a2a::model::Version>,
    pub error: Option<ErrorInfo>,
    pub kind: Option<JStr<'a>>,
    /// The 1.0 StreamResponse wrapper (`task`, `message`, `statusUpdate`,
    /// `artifactUpdate`), converted; `wrappers` counts how many were sent.
    pub wrapper: Option<std::result::Result<Event<'a>, Malformed>>,
    pub wrappers: u8,
    pub tasks: Option<std::result::Result<Vec<TaskSnapshot<'a>>, Malformed>>,
    pub status: Option<StatusField<'a>>,
    pub task_id: Option<JStr<'a>>,
    pub context_id: Option<JStr<'a>>,
    pub message_id: Option<JStr<'a>>,
    pub role: bool,
    pub parts: bool,
    /// `artifact` (present), with its `artifactId` if it has one.
    pub artifact: Option<Option<JStr<'a>>>,
    /// The `artifactId`s of `artifacts`.
    pub artifact_ids: Option<Vec<Text<'a>>>,
    pub append: Option<bool>,
    pub last_chunk: Option<bool>,
    /// Where the `append` and `lastChunk` literals lie.
    pub flags: Flags,
    /// Set when an artifact update is built from this object.
    pub built_update: bool,
    /// The artifact updates built from the objects inside this one.
    pub updates: Updates,
    pub final_flag: Option<bool>,
    /// RFC 9457 problem members (`status` is in `StatusField::Code`).
    pub problem_type: Option<JStr<'a>>,
    pub title: Option<JStr<'a>>,
    /// A top-level `code` (an error object sent bare: google.rpc.Status,
    /// or a JSON-RPC error object as 0.3 REST servers answer).
    pub code: Option<i64>,
    /// `message` sent as a string (an error's text, not a Message).
    pub message_text: bool,
    /// What a top-level `details[]` says (its A2A error, its fault).
    pub details: Option<crate::a2a::errors::Details>,
    /// A ListTasks result's `nextPageToken`, `pageSize` or `totalSize`
    /// (proto3 JSON omits `tasks` when the page is empty).
    pub page: bool,
    /// How many members the object has, read or skipped (`null` ones not
    /// counted: they are absent).
    pub members: u32,
    /// Which of the member names the decoder reads were sent (bit i:
    /// `MEMBERS[i]`), to say what a malformed object held.
    pub names: u32,
}

impl Obj<'_> {
    /// Whether the object is a 1.0 StreamResponse wrapper: its members are
    /// wrapper keys and nothing else (proto3 JSON of a `oneof`: exactly one
    /// is set; two or more is a malformed wrapper). A wrapper key beside
    /// other members is a member of another shape (an older draft's Task
    /// with a `message`), not a wrapper.
    pub(crate) fn is_wrapper(&self) -> bool {
        self.wrappers > 0 && self.members == u32::from(self.wrappers)
    }
}

/// Where the `true`/`false` literals of an artifact update's `append` and
/// `lastChunk` lie (the offset of their first byte; `None` when the member
/// was absent or `null`). When the decoding built exactly one artifact
/// update, the other literal in place of one of these changes that flag of
/// the update and nothing else the decoder reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    pub append: Option<u32>,
    pub last_chunk: Option<u32>,
}

/// The artifact updates a decoding built: how many, and where the flags
/// of the last one lie. Only when there was exactly one can `last_frame`
/// swap a flag literal and know what changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Updates {
    built: u32,
    flags: Flags,
}

impl Updates {
    /// Adds the updates built from `o` and inside it.
    pub(crate) fn absorb(&mut self, o: &Obj<'_>) {
        if o.updates.built > 0 {
            self.flags = o.updates.flags;
        }
        self.built += o.updates.built;
        if o.built_update {
            self.flags = o.flags;
            self.built += 1;
        }
    }

    /// The flags of the one update built (none if several, or none, were).
    pub(crate) fn only(&self) -> Flags {
        if self.built == 1 {
            self.flags
        } else {
            Flags::default()
        }
    }
}

/// `status`: a task status object, or a problem body's HTTP status number
/// (or, in odd bodies, a status string, kept only to not fail).
pub(crate) enum StatusField<'a> {
    Status(Status<'a>),
    Code(i64),
    Text,
}

/// The members of `Obj`, in the order of the bits that catch duplicates
/// (and of `Obj::names`).
pub(super) const MEMBERS: [&str; 28] = [
    "jsonrpc",
    "id",
    "result",
    "error",
    "kind",
    "task",
    "message",
    "statusUpdate",
    "artifactUpdate",
    "tasks",
    "status",
    "taskId",
    "contextId",
    "messageId",
    "role",
    "parts",
    "artifact",
    "artifacts",
    "append",
    "lastChunk",
    "final",
    "type",
    "title",
    "code",
    "details",
    "nextPageToken",
    "pageSize",
    "totalSize",
];
