//! The analysis thread's causal order, driven message by message.

use std::sync::Arc;
use std::time::Instant;

use super::{Msg, Worker};
use crate::a2a::model::{Binding, Exchange, Operation, RpcId, TaskState, Version};
use crate::engine::{EngineConfig, Head};
use crate::findings::Policy;
use crate::lifecycle::{End, Registry, RegistryConfig, Seq};
use crate::report::audit::{AuditLog, AuditWriter, Target};
use crate::report::Metrics;

fn worker() -> (Worker, Arc<Metrics>, AuditFile) {
    worker_with_budget(1 << 20)
}

/// The audit log file of a test's worker, removed once the worker is done.
struct AuditFile {
    writer: AuditWriter,
    path: std::path::PathBuf,
}

impl AuditFile {
    /// Drops `w`, waits for the writer to finish the file, removes it.
    fn remove(self, w: Worker) {
        drop(w);
        self.writer.close();
        let _ = std::fs::remove_file(self.path);
    }
}

fn worker_with_budget(limit: usize) -> (Worker, Arc<Metrics>, AuditFile) {
    let metrics = Arc::new(Metrics::new().expect("metrics"));
    let path = std::env::temp_dir().join(format!(
        "a2a-tap-worker-{}-{:?}.jsonl",
        std::process::id(),
        std::thread::current().id()
    ));
    let (audit, writer) = AuditLog::start(
        Target::File(path.clone()),
        64,
        metrics.audit_records_dropped_total.clone(),
    )
    .expect("audit");
    let w = Worker::new(
        Registry::new(RegistryConfig::default()),
        EngineConfig::default(),
        Policy::default(),
        "up".into(),
        metrics.clone(),
        audit,
        limit,
    );
    (w, metrics, AuditFile { writer, path })
}

/// The stamp of a request beginning now, as the observer takes it: after
/// every message sent so far (all of them handled, in these tests).
fn begun(w: &Worker) -> Seq {
    Seq::after_messages(w.handled)
}

fn exchange(op: Operation, task: Option<&str>) -> Box<Exchange> {
    Box::new(Exchange {
        binding: Binding::JsonRpc,
        version: Version::V1_0,
        operation: op,
        rpc_id: Some(RpcId::Number("1".into())),
        task_id: task.map(str::to_owned),
        context_id: None,
        blocking: false,
        guessed_path: None,
        message_id: None,
    })
}

fn frame(json: &str) -> Vec<u8> {
    format!("data: {json}\n\n").into_bytes()
}

/// Hands `w` a response piece of exchange `id`, as a drain would: the
/// message and the bytes it was taken with.
fn piece(w: &mut Worker, id: u64, data: &[u8], at: Instant) {
    let msg = Msg::Data {
        id,
        piece: 0..data.len(),
        at: Some(at),
    };
    w.handle(msg, data);
}

fn violations(m: &Metrics) -> u64 {
    m.violations_total
        .with("up", "terminal_task_accepted", "error")
        .get()
}

/// A stream ends the task (completed) while a CancelTask is in flight; its
/// answer is the completed task, a success (a cancel of a task already
/// canceled, answered canceled, would be legal: 1.0 §3.3.1).
fn race(w: &mut Worker, cancel_begins_before_terminal: bool) {
    let at = Instant::now();
    let send = |w: &mut Worker, m| w.handle(m, &[]);
    let first = begun(w);
    send(
        w,
        Msg::Open {
            id: 1,
            exchange: exchange(Operation::SendStreamingMessage, None),
            at,
            seq: first,
            caller: None,
            route: None,
        },
    );
    send(
        w,
        Msg::Head {
            id: 1,
            head: Head::read(200, Some("text/event-stream"), None),
        },
    );
    piece(
        w,
        1,
        &frame(
            r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}}"#,
        ),
        at,
    );
    let mut cancel = begun(w);
    piece(
        w,
        1,
        &frame(
            r#"{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}}"#,
        ),
        at,
    );
    send(
        w,
        Msg::End {
            id: 1,
            end: End::Upstream,
            at,
            access: None,
            grpc: None,
        },
    );
    if !cancel_begins_before_terminal {
        cancel = begun(w);
    }
    // The cancel's body completes (and it is classified) only now.
    send(
        w,
        Msg::Open {
            id: 2,
            exchange: exchange(Operation::CancelTask, Some("t")),
            at,
            seq: cancel,
            caller: None,
            route: None,
        },
    );
    send(
        w,
        Msg::Head {
            id: 2,
            head: Head::read(200, Some("application/json"), None),
        },
    );
    piece(
        w,
        2,
        br#"{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}"#,
        at,
    );
    send(
        w,
        Msg::End {
            id: 2,
            end: End::Upstream,
            at,
            access: None,
            grpc: None,
        },
    );
}

#[test]
fn a_request_that_began_before_the_terminal_frame_is_not_judged_after_it() {
    let (mut w, m, file) = worker();
    race(&mut w, true);
    assert_eq!(violations(&m), 0);
    file.remove(w);
}

#[test]
fn a_request_that_began_after_the_terminal_frame_is() {
    let (mut w, m, file) = worker();
    race(&mut w, false);
    assert_eq!(violations(&m), 1);
    file.remove(w);
}

#[test]
fn bodies_held_whole_share_the_analysis_budget() {
    let (mut w, m, file) = worker_with_budget(4096);
    let at = Instant::now();
    // Two JSON answers arriving slowly: together they would hold more than
    // the budget, so the one that crosses it is left unjudged.
    for id in [1, 2] {
        w.handle(
            Msg::Open {
                id,
                exchange: exchange(Operation::GetTask, Some("t")),
                at,
                seq: begun(&w),
                caller: None,
                route: None,
            },
            &[],
        );
        w.handle(
            Msg::Head {
                id,
                head: Head::read(200, Some("application/json"), None),
            },
            &[],
        );
    }
    for _ in 0..2 {
        for id in [1, 2] {
            piece(&mut w, id, &[b' '; 1500], at);
        }
    }
    let overload = m.analysis_skipped_total.with("up", "overload").get();
    assert_eq!(overload, 1, "the second body crossed the bound");
    assert!(w.held <= 4096, "held {}", w.held);
    file.remove(w);
}

#[test]
fn exchanges_answered_out_of_turn_are_each_judged_to_their_end() {
    let (mut w, _m, file) = worker();
    let at = Instant::now();
    let json = || Head::read(200, Some("application/json"), None);
    for id in [1, 2, 3] {
        let seq = begun(&w);
        let exchange = exchange(Operation::GetTask, Some(&format!("t{id}")));
        w.handle(
            Msg::Open {
                id,
                exchange,
                at,
                seq,
                caller: None,
                route: None,
            },
            &[],
        );
        w.handle(Msg::Head { id, head: json() }, &[]);
    }
    // Bodies and ends come in another order than the openings, the last
    // opened exchange's in the middle.
    for id in [2, 3, 1] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"id":"t{id}","contextId":"c","status":{{"state":"TASK_STATE_WORKING"}}}}}}"#
        );
        piece(&mut w, id, body.as_bytes(), at);
    }
    assert_eq!(w.live.len(), 3);
    assert!(w.held > 0, "bodies are held until their ends");
    for id in [3, 1, 2] {
        let end = End::Upstream;
        w.handle(
            Msg::End {
                id,
                end,
                at,
                access: None,
                grpc: None,
            },
            &[],
        );
        assert_eq!(
            w.judge.session.registry().state_of(&format!("t{id}")),
            Some(TaskState::Working)
        );
    }
    assert_eq!(w.live.len(), 0);
    assert_eq!(w.held, 0);
    // An exchange whose messages come together is judged as well.
    let seq = begun(&w);
    let exchange = exchange(Operation::GetTask, Some("t4"));
    w.handle(
        Msg::Open {
            id: 4,
            exchange,
            at,
            seq,
            caller: None,
            route: None,
        },
        &[],
    );
    w.handle(
        Msg::Head {
            id: 4,
            head: json(),
        },
        &[],
    );
    piece(
        &mut w,
        4,
        br#"{"jsonrpc":"2.0","id":1,"result":{"id":"t4","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}"#,
        at,
    );
    let end = End::Upstream;
    w.handle(
        Msg::End {
            id: 4,
            end,
            at,
            access: None,
            grpc: None,
        },
        &[],
    );
    assert_eq!(
        w.judge.session.registry().state_of("t4"),
        Some(TaskState::Completed)
    );
    assert_eq!((w.live.len(), w.held), (0, 0));
    file.remove(w);
}

#[test]
fn a_drain_gives_its_core_away_after_each_slice_only_while_judging_keeps_up() {
    use super::{Courtesy, SLICE};
    let start = Instant::now();
    let mut c = Courtesy::new(start);
    let unasked = || -> bool { panic!("asked only once a slice is over") };
    assert!(!c.due(start + SLICE / 2, unasked), "within the slice");
    assert!(c.due(start + SLICE, || true), "at its end, keeping up");
    assert!(
        !c.due(start + SLICE + SLICE / 2, unasked),
        "the next slice began then"
    );
    // Behind: the slice ends without a yield, and the next one begins.
    assert!(!c.due(start + 2 * SLICE, || false), "behind");
    assert!(
        !c.due(start + 2 * SLICE + SLICE / 2, unasked),
        "a new slice"
    );
    assert!(c.due(start + 3 * SLICE, || true), "caught up, at its end");
}

#[test]
fn judging_keeps_up_while_few_messages_wait_on_an_eighth_of_the_budget() {
    use super::{keeping_up, KEEPING_UP};
    let budget = 64 << 20;
    assert!(keeping_up(0, 0, budget));
    assert!(keeping_up(KEEPING_UP, budget / 8, budget), "at both bounds");
    assert!(!keeping_up(KEEPING_UP + 1, 0, budget), "too many messages");
    assert!(
        !keeping_up(1, budget / 8 + 1, budget),
        "few messages, but big ones: a small budget must not be reached by a yield's wait"
    );
    assert!(!keeping_up(0, 1, 4), "a budget under 8 bytes: never");
}
