//! Property: any interleaving of exchanges, frames, bodies, ends and ticks
//! never panics, and the registry keeps its bounds and counts.

use crate::world::st;
use a2a_tap::a2a::model::*;
use a2a_tap::lifecycle::{End, Reducer, Registry, RegistryConfig, StallLimits};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Step {
    Open(Operation, Option<&'static str>, bool),
    Head(usize, u16, bool),
    Frame(usize, Option<u64>, Decoded<'static>),
    Malformed(usize, Option<u64>),
    Skip(usize, Option<u64>),
    End(usize, End),
    Tick(u64),
}

const TASKS: &[&str] = &["a", "b", "c"];
const STATES: &[&str] = &[
    "submitted",
    "working",
    "input_required",
    "auth_required",
    "completed",
    "failed",
    "canceled",
    "rejected",
    "unknown",
    "TASK_STATE_PAUSED",
];
const TIMES: &[&str] = &[
    "2026-01-01T00:00:00Z",
    "2026-01-01T00:00:01+00:00",
    "not a time",
];

fn opt<T: Clone + std::fmt::Debug + 'static>(
    s: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<Option<T>> {
    prop_oneof![Just(None), s.prop_map(Some)].boxed()
}

fn status() -> impl Strategy<Value = Status<'static>> {
    (
        prop::sample::select(STATES),
        opt(prop::sample::select(TIMES)),
    )
        .prop_map(|(s, t)| Status {
            state: st(s),
            timestamp: t.map(Into::into),
        })
}

fn snapshot() -> impl Strategy<Value = TaskSnapshot<'static>> {
    (
        prop::sample::select(TASKS),
        opt(prop::sample::select(&["x", "y"][..])),
        status(),
        prop::collection::vec(prop::sample::select(&["p", "q"][..]), 0..3),
    )
        .prop_map(|(id, ctx, status, arts)| TaskSnapshot {
            id: id.into(),
            context_id: ctx.map(Into::into),
            status,
            artifact_ids: arts.into_iter().map(Into::into).collect(),
        })
}

fn event() -> impl Strategy<Value = Event<'static>> {
    let ctx = || opt(prop::sample::select(&["x", "y"][..])).prop_map(|c| c.map(Into::into));
    prop_oneof![
        snapshot().prop_map(Event::Task),
        (opt(prop::sample::select(TASKS)), ctx()).prop_map(|(t, c)| Event::Message(MessageEvent {
            message_id: None,
            task_id: t.map(Into::into),
            context_id: c,
        })),
        (
            prop::sample::select(TASKS),
            ctx(),
            status(),
            opt(any::<bool>())
        )
            .prop_map(|(t, c, s, f)| {
                Event::StatusUpdate(StatusUpdate {
                    task_id: t.into(),
                    context_id: c,
                    status: s,
                    final_flag: f,
                })
            }),
        (
            prop::sample::select(TASKS),
            ctx(),
            prop::sample::select(&["p", "q"][..]),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(t, c, a, append, last_chunk)| Event::ArtifactUpdate(
                ArtifactUpdate {
                    task_id: t.into(),
                    context_id: c,
                    artifact_id: a.into(),
                    append,
                    last_chunk,
                }
            )),
    ]
}

fn decoded() -> impl Strategy<Value = Decoded<'static>> {
    let rpc = prop_oneof![
        Just(None),
        Just(Some(RpcId::Null)),
        Just(Some(RpcId::Number("1".into()))),
        Just(Some(RpcId::String("1".into())))
    ];
    let error = prop::sample::select(
        &[
            A2aError::TaskNotCancelable,
            A2aError::UnsupportedOperation,
            A2aError::Other,
        ][..],
    );
    let payload = prop_oneof![
        6 => event().prop_map(Payload::Event),
        1 => prop::collection::vec(snapshot(), 0..3).prop_map(Payload::TaskList),
        1 => (error, prop_oneof![Just(-32700i64), Just(-32002), Just(-32004)])
            .prop_map(|(error, code)| Payload::Error(ErrorInfo::new(code, error))),
    ];
    (rpc, payload).prop_map(|(rpc_id, payload)| Decoded {
        rpc_id,
        payload,
        dialect: None,
    })
}

fn step() -> impl Strategy<Value = Step> {
    let index = || opt(0u64..6);
    let end = prop::sample::select(&[End::Upstream, End::ClientGone, End::UpstreamError][..]);
    prop_oneof![
        1 => (prop::sample::select(Operation::ALL), opt(prop::sample::select(TASKS)), any::<bool>())
            .prop_map(|(op, t, b)| Step::Open(op, t, b)),
        1 => (any::<usize>(), prop::sample::select(&[200u16, 400, 500][..]), any::<bool>())
            .prop_map(|(r, s, e)| Step::Head(r, s, e)),
        8 => (any::<usize>(), index(), decoded()).prop_map(|(r, i, d)| Step::Frame(r, i, d)),
        1 => (any::<usize>(), index()).prop_map(|(r, i)| Step::Malformed(r, i)),
        1 => (any::<usize>(), index()).prop_map(|(r, i)| Step::Skip(r, i)),
        1 => (any::<usize>(), end).prop_map(|(r, e)| Step::End(r, e)),
        1 => (0u64..200_000).prop_map(Step::Tick),
    ]
}

fn exchange(op: Operation, task: Option<&str>, blocking: bool) -> Exchange {
    Exchange {
        binding: if blocking {
            Binding::JsonRpc
        } else {
            Binding::Rest
        },
        version: Version::V1_0,
        operation: op,
        rpc_id: Some(RpcId::Number("1".into())),
        task_id: task.map(str::to_owned),
        context_id: None,
        blocking,
        guessed_path: None,
        message_id: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_traces_never_panic(steps in prop::collection::vec(step(), 1..60)) {
        let mut reg = Registry::new(RegistryConfig {
            max_tasks: 2,
            ttl: 300_000,
            stall: StallLimits { submitted: Some(1_000), working: Some(5_000), input_required: None, auth_required: Some(0) },
            ..RegistryConfig::default()
        });
        let mut now = 0u64;
        let mut live: Vec<Reducer> = Vec::new();
        let mut out = Vec::new();
        for s in steps {
            now += 7;
            let n = live.len().max(1);
            match s {
                Step::Open(op, t, b) => {
                    let seq = reg.open_exchange();
                    live.push(Reducer::new(exchange(op, t, b), seq));
                }
                Step::Tick(dt) => {
                    now += dt;
                    reg.tick(now, &mut out);
                }
                _ if live.is_empty() => {}
                Step::Head(r, status, sse) => live[r % n].on_response_head(status, sse),
                Step::Frame(r, i, d) => live[r % n].on_decoded(i, &d, &mut reg, now, &mut out),
                Step::Malformed(r, i) => live[r % n].on_malformed(i, &Malformed("x".into()), &mut out),
                Step::Skip(r, i) => live[r % n].on_skipped(i),
                Step::End(r, e) => {
                    let o = live[r % n].on_end(e, &mut reg, now, &mut out);
                    prop_assert!(!o.as_str().is_empty());
                }
            }
            prop_assert!(reg.len() <= 2);
            prop_assert_eq!(reg.tracked_by_state().iter().sum::<usize>(), reg.len());
        }
        for f in &out {
            prop_assert!(!f.detail.is_empty());
            prop_assert!(f.evidence.is_none());
        }
        let mut transitions = 0;
        reg.take_transitions(&mut |_, _, k| transitions += k);
        let mut again = 0;
        reg.take_transitions(&mut |_, _, k| again += k);
        prop_assert_eq!(again, 0);
    }
}
