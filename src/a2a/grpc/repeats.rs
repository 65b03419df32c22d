//! How many elements a response message's repeated fields hold, counted on
//! the wire: a Task of a million empty artifacts is a few bytes each on
//! the wire but a decoded element each, so judging reads only messages
//! whose repeated fields are under a bound. Only the fields the decoder
//! keeps are counted (a Task's `artifacts`, a task list's `tasks`); the
//! rest are skipped without allocating. The reader counts the same as it
//! reads (`messages.rs`), so this walk is what decides only for a message
//! the reader refuses: it counts on past the fault.

use crate::a2a::model::Operation;

/// Most elements of the repeated fields judging decodes in one message
/// (the artifacts of a stream are tracked up to 4,096 anyway).
pub const MAX_REPEATED: usize = 10_000;

/// Whether `msg`, an answer to `op`, holds more than `max` elements in the
/// repeated fields the decoder keeps. A message that is not well-formed
/// protobuf is not over: the decoder says what is wrong with it.
pub fn over(op: Operation, msg: &[u8], max: usize) -> bool {
    let mut count = 0usize;
    let counted = match op {
        // StreamResponse / SendMessageResponse: the task is field 1.
        Operation::SendMessage | Operation::SendStreamingMessage | Operation::SubscribeToTask => {
            each(msg, 1, &mut |task| artifacts(task, &mut count, max))
        }
        Operation::GetTask | Operation::CancelTask => artifacts(msg, &mut count, max),
        // ListTasksResponse: tasks are field 1.
        Operation::ListTasks => each(msg, 1, &mut |task| {
            count += 1;
            count <= max && artifacts(task, &mut count, max)
        }),
        _ => true,
    };
    !counted || count > max
}

/// Counts a Task's artifacts (field 4) into `count`; false past `max`.
fn artifacts(task: &[u8], count: &mut usize, max: usize) -> bool {
    each(task, 4, &mut |_| {
        *count += 1;
        *count <= max
    })
}

/// Calls `f` with every length-delimited field `number` of `msg`; stops
/// (false) when `f` does. Malformed wire ends the walk (true: not over).
fn each(msg: &[u8], number: u64, f: &mut dyn FnMut(&[u8]) -> bool) -> bool {
    let mut rest = msg;
    while !rest.is_empty() {
        let Some((key, after)) = varint(rest) else {
            return true;
        };
        rest = after;
        let value_len = match key & 7 {
            0 => match varint(rest) {
                Some((_, after)) => rest.len() - after.len(),
                None => return true,
            },
            1 => 8,
            5 => 4,
            2 => match varint(rest) {
                Some((len, after)) => {
                    rest = after;
                    match usize::try_from(len) {
                        Ok(len) if len <= rest.len() => {
                            if key >> 3 == number && !f(&rest[..len]) {
                                return false;
                            }
                            len
                        }
                        _ => return true,
                    }
                }
                None => return true,
            },
            _ => return true,
        };
        match rest.get(value_len..) {
            Some(after) => rest = after,
            None => return true,
        }
    }
    true
}

/// A base-128 varint and what follows it.
fn varint(b: &[u8]) -> Option<(u64, &[u8])> {
    let mut v = 0u64;
    for (i, byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, &b[i + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::grpc::proto;
    use prost::Message as _;

    fn task(artifacts: usize) -> proto::Task {
        proto::Task {
            id: "t".into(),
            context_id: "c".into(),
            status: Some(proto::TaskStatus {
                state: 3,
                timestamp: None,
            }),
            artifacts: (0..artifacts)
                .map(|i| proto::ArtifactId {
                    artifact_id: if i % 2 == 0 {
                        String::new()
                    } else {
                        format!("a{i}")
                    },
                })
                .collect(),
        }
    }

    #[test]
    fn counts_a_tasks_artifacts_wherever_the_answer_holds_it() {
        let small = task(3).encode_to_vec();
        let big = task(11).encode_to_vec();
        assert!(!over(Operation::GetTask, &small, 10));
        assert!(over(Operation::GetTask, &big, 10));
        let wrap = |t: proto::Task| {
            proto::StreamResponse {
                payload: Some(proto::Payload::Task(t)),
            }
            .encode_to_vec()
        };
        assert!(!over(Operation::SendStreamingMessage, &wrap(task(10)), 10));
        assert!(over(Operation::SubscribeToTask, &wrap(task(11)), 10));
        let list = |n: usize, each: usize| {
            proto::ListTasksResponse {
                tasks: (0..n).map(|_| task(each)).collect(),
            }
            .encode_to_vec()
        };
        assert!(!over(Operation::ListTasks, &list(2, 3), 10));
        assert!(
            over(Operation::ListTasks, &list(3, 3), 10),
            "3 tasks + 9 artifacts"
        );
        assert!(over(Operation::ListTasks, &list(11, 0), 10));
    }

    #[test]
    fn malformed_wire_is_left_to_the_decoder() {
        assert!(!over(Operation::GetTask, &[0x22, 0xff], 10));
        assert!(!over(Operation::GetTask, &[0x0f], 10));
        assert!(!over(Operation::GetTask, &[], 10));
    }
}
