//! Unit tests of the registry: causal terminal rule, stamps, stall watch,
//! bounds, counts.

use super::*;
use TaskState::*;

mod stalls;

fn reg(max_tasks: usize) -> Registry {
    Registry::new(RegistryConfig {
        max_tasks,
        ..RegistryConfig::default()
    })
}

fn obs<'a>(task: &'a str, state: TaskState, ts: Option<&'a str>, seq: Seq) -> Observation<'a> {
    Observation {
        task_id: task,
        context_id: Some("c"),
        state,
        timestamp: ts,
        seq,
    }
}

#[test]
fn entry_is_small() {
    let entry = std::mem::size_of::<Entry>();
    let id = std::mem::size_of::<super::ShortStr>();
    // Per task: entry + slot (id in place, hash 8, links 8) + index (slot
    // number 4, control byte 1); ids over 46 bytes extra. Documented on
    // `Entry`.
    println!("size_of::<Entry>() = {entry}");
    assert!(entry <= 112, "Entry is {entry} bytes");
    let per_task = entry + id + 8 + 8 + 4 + 1;
    assert!(per_task <= 181, "a task costs {per_task} bytes");
}

#[test]
fn state_index_matches_all() {
    for (i, s) in TaskState::ALL.iter().enumerate() {
        assert_eq!(idx(*s), i);
    }
}

#[test]
fn terminal_exit_needs_a_later_exchange() {
    let mut r = reg(10);
    let early = r.open_exchange();
    let s1 = r.open_exchange();
    assert_eq!(
        r.observe(&obs("t", Working, None, s1), 0),
        Verdict::Recorded
    );
    assert_eq!(
        r.observe(&obs("t", Completed, None, s1), 1),
        Verdict::Recorded
    );
    // A stream opened before completion was seen may lag.
    assert_eq!(
        r.observe(&obs("t", Working, None, early), 2),
        Verdict::Ignored
    );
    assert_eq!(r.state_of("t"), Some(Completed));
    assert_eq!(r.terminal_before("t", s1), None);
    let later = r.open_exchange();
    assert_eq!(r.terminal_before("t", later), Some(Completed));
    assert_eq!(
        r.observe(&obs("t", Completed, None, later), 3),
        Verdict::Recorded
    );
    assert_eq!(
        r.observe(&obs("t", Working, None, later), 4),
        Verdict::TerminalExit {
            was: Completed,
            from: Source::HERE
        }
    );
    assert_eq!(r.state_of("t"), Some(Working));
}

#[test]
fn stamps_by_message_order_the_terminal_rule_alike() {
    // A driver counting messages: the terminal state comes with message 3.
    let mut r = reg(10);
    let (before, with, after) = (
        Seq::after_messages(3),
        Seq::after_messages(4),
        Seq::after_messages(9),
    );
    r.at_message(2);
    r.observe(&obs("t", Working, None, Seq::after_messages(0)), 0);
    r.at_message(3);
    r.observe(&obs("t", Completed, None, Seq::after_messages(0)), 1);
    r.at_message(7);
    // An exchange that began once messages 0..=2 were sent may lag; one
    // that began after message 3 was sent may not.
    assert_eq!(r.terminal_before("t", before), None);
    assert_eq!(r.terminal_before("t", with), Some(Completed));
    assert_eq!(
        r.observe(&obs("t", Working, None, before), 2),
        Verdict::Ignored
    );
    assert_eq!(
        r.observe(&obs("t", Working, None, after), 3),
        Verdict::TerminalExit {
            was: Completed,
            from: Source::HERE
        }
    );
    // Two terminal states with one message are both before the next.
    let mut r = reg(10);
    r.at_message(5);
    r.observe(&obs("a", Canceled, None, Seq::after_messages(0)), 0);
    r.observe(&obs("b", Failed, None, Seq::after_messages(0)), 0);
    for task in ["a", "b"] {
        assert!(r.terminal_before(task, Seq::after_messages(6)).is_some());
        assert!(r.terminal_before(task, Seq::after_messages(5)).is_none());
    }
}

#[test]
fn an_observation_notes_the_context_it_changed() {
    let mut r = reg(10);
    let s = r.open_exchange();
    let at = |task, ctx| Observation {
        context_id: ctx,
        ..obs(task, Working, None, s)
    };
    let mut was = None;
    r.observe_noting_context(&at("t", None), 0, &mut was);
    r.observe_noting_context(&at("t", Some("c1")), 1, &mut was);
    assert_eq!(was, None, "no context known before");
    r.observe_noting_context(&at("t", Some("c1")), 2, &mut was);
    assert_eq!(was, None, "the same context");
    r.observe_noting_context(&at("t", None), 3, &mut was);
    assert_eq!(was, None, "none sent");
    assert_eq!(r.context_other_than("t", "c2"), Some("c1"));
    r.observe_noting_context(&at("t", Some("c2")), 4, &mut was);
    assert_eq!(was.as_ref().map(ShortStr::as_str), Some("c1"));
    assert_eq!(r.context_of("t"), Some("c2"));
}

#[test]
fn older_timestamps_are_stale() {
    let mut r = reg(10);
    let s = r.open_exchange();
    r.observe(&obs("t", Completed, Some("2025-01-01T10:00:05Z"), s), 0);
    let later = r.open_exchange();
    let stale = obs("t", Working, Some("2025-01-01T11:00:00+02:00"), later);
    assert_eq!(r.observe(&stale, 1), Verdict::Ignored);
    let fresh = obs("t", Working, Some("2025-01-01T10:00:06Z"), later);
    assert_eq!(
        r.observe(&fresh, 2),
        Verdict::TerminalExit {
            was: Completed,
            from: Source::HERE
        }
    );
    // Non-terminal tasks ignore older stamps too.
    let old = obs("t", Submitted, Some("2025-01-01T10:00:01Z"), later);
    assert_eq!(r.observe(&old, 3), Verdict::Ignored);
    assert_eq!(r.state_of("t"), Some(Working));
}

#[test]
fn lru_eviction_at_max_tasks_is_counted() {
    let mut r = reg(2);
    let s = r.open_exchange();
    r.observe(&obs("a", Working, None, s), 0);
    r.observe(&obs("b", Working, None, s), 1);
    r.observe(&obs("a", Working, None, s), 2);
    r.observe(&obs("c", Completed, None, s), 3);
    assert_eq!(r.len(), 2);
    assert_eq!(r.evicted_total(), 1);
    assert_eq!(r.state_of("b"), None, "b was least recently observed");
    assert_eq!(r.state_of("a"), Some(Working));
    assert_eq!(r.tracked_by_state(), [0, 1, 0, 0, 1, 0, 0, 0]);
    let mut none = reg(0);
    none.observe(&obs("a", Working, None, s), 0);
    assert!(none.is_empty());
}

#[test]
fn ttl_expires_unobserved_tasks() {
    let mut r = reg(10);
    let s = r.open_exchange();
    r.observe(&obs("old", Completed, None, s), 0);
    r.observe(&obs("new", Completed, None, s), 3_000_000);
    let mut out = Vec::new();
    r.tick(3_599_999, &mut out);
    assert_eq!(r.len(), 2);
    r.tick(3_600_000, &mut out);
    assert_eq!(r.state_of("old"), None);
    assert_eq!(r.state_of("new"), Some(Completed));
    assert_eq!(r.tracked_by_state().iter().sum::<usize>(), 1);
    assert_eq!(r.evicted_total(), 0, "expiry is not eviction");
    assert!(out.is_empty());
}

#[test]
fn transitions_are_counted_and_drained() {
    let mut r = reg(10);
    let s = r.open_exchange();
    for st in [
        Submitted,
        Working,
        Working,
        InputRequired,
        Working,
        Completed,
    ] {
        r.observe(&obs("t", st, None, s), 0);
    }
    r.observe(&obs("u", Working, None, s), 0);
    let mut got = Vec::new();
    r.take_transitions(&mut |from, to, n| got.push((from, to, n)));
    got.sort();
    assert_eq!(
        got,
        vec![
            (None, Submitted, 1),
            (None, Working, 1),
            (Some(Submitted), Working, 1),
            (Some(Working), InputRequired, 1),
            (Some(Working), Completed, 1),
            (Some(InputRequired), Working, 1),
        ]
    );
    let mut again = 0;
    r.take_transitions(&mut |_, _, _| again += 1);
    assert_eq!(again, 0);
}

#[test]
fn context_follows_the_latest_observation() {
    let mut r = reg(10);
    let s = r.open_exchange();
    r.observe(&obs("t", Working, None, s), 0);
    assert_eq!(r.context_of("t"), Some("c"));
    let mut o = obs("t", Working, None, s);
    o.context_id = Some("d");
    r.observe(&o, 1);
    assert_eq!(r.context_of("t"), Some("d"));
}

fn fact(task: &str, state: TaskState, ts: Option<&str>) -> Fact {
    Fact {
        task_id: task.into(),
        context_id: Some("c".into()),
        state,
        timestamp: ts.map(Into::into),
    }
}

/// Shared: what is recorded becomes a fact (a new task, a new state, a new
/// context), a repeat does not; what is learned from another replica makes
/// no fact and no transition.
#[test]
fn shared_registry_facts() {
    let mut r = reg(10);
    assert!(r.take_facts().is_empty());
    r.observe(&obs("t", Working, None, Seq(2)), 0);
    assert!(r.take_facts().is_empty(), "not shared: no facts");
    r.share();
    r.observe(&obs("t", Working, None, Seq(2)), 0);
    r.observe(&obs("u", Working, None, Seq(2)), 0);
    r.observe(
        &obs("t", Completed, Some("2026-01-01T00:00:01Z"), Seq(2)),
        0,
    );
    let mut moved = obs("u", Working, None, Seq(2));
    moved.context_id = Some("d");
    r.observe(&moved, 0);
    let facts = r.take_facts();
    let seen: Vec<(&str, TaskState)> = facts.iter().map(|f| (&*f.task_id, f.state)).collect();
    assert_eq!(seen, [("u", Working), ("t", Completed), ("u", Working)]);
    assert_eq!(facts[1].timestamp.as_deref(), Some("2026-01-01T00:00:01Z"));
    assert_eq!(facts[2].context_id.as_deref(), Some("d"));
    let mut counted = 0;
    r.take_transitions(&mut |_, _, n| counted += n);
    r.learn(&fact("v", Completed, None), "r2", 0);
    r.learn(&fact("u", Failed, None), "r2", 0);
    assert!(
        r.take_facts().is_empty(),
        "learned facts are not published again"
    );
    let mut learned = 0;
    r.take_transitions(&mut |_, _, n| learned += n);
    assert_eq!((counted > 0, learned), (true, 0));
    assert_eq!(r.state_of("v"), Some(Completed));
    assert_eq!(r.state_of("u"), Some(Failed));
}

/// A learned terminal state counts for exchanges opened after it arrived,
/// never for one opened before; hearsay never leaves a terminal state, and
/// a fact older than the known status (by the agent's timestamp) is ignored.
#[test]
fn learned_facts_keep_the_causal_rule() {
    let mut r = reg(10);
    r.share();
    r.at_message(3);
    let before = Seq::after_messages(3);
    r.learn(&fact("t", Completed, None), "r2", 0);
    let after = Seq::after_messages(4);
    assert_eq!(r.terminal_before("t", before), None);
    assert_eq!(r.terminal_before("t", after), Some(Completed));
    assert_eq!(
        r.observe(&obs("t", Working, None, before), 0),
        Verdict::Ignored
    );
    assert_eq!(r.status_heard_from("t"), Some("r2"));
    let Verdict::TerminalExit { was, from } = r.observe(&obs("t", Working, None, after), 0) else {
        panic!("an exit of a heard terminal state");
    };
    assert_eq!((was, r.heard_from(from)), (Completed, Some("r2")));
    assert_eq!(r.status_heard_from("t"), None, "seen here now");
    r.observe(&obs("d", Canceled, None, after), 0);
    r.learn(&fact("d", Working, None), "r2", 0);
    assert_eq!(r.state_of("d"), Some(Canceled));
    r.observe(&obs("s", Working, Some("2026-01-01T00:00:05Z"), after), 0);
    r.learn(
        &fact("s", InputRequired, Some("2026-01-01T00:00:01Z")),
        "r2",
        0,
    );
    assert_eq!(r.state_of("s"), Some(Working), "an older fact is ignored");
    r.learn(
        &fact("s", InputRequired, Some("2026-01-01T00:00:09Z")),
        "r2",
        0,
    );
    assert_eq!(r.state_of("s"), Some(InputRequired));
}

/// Heard facts name their replica by a number in the task's entry; names
/// are kept for the newest replicas only, and a number is never reused.
#[test]
fn sources_are_named_and_bounded() {
    let mut r = reg(4000);
    for i in 0..1100 {
        r.learn(
            &fact(&format!("t{i}"), Working, None),
            &format!("replica-{i}"),
            0,
        );
    }
    assert_eq!(r.status_heard_from("t1099"), Some("replica-1099"));
    assert_eq!(r.status_heard_from("t0"), Some("another replica"));
    r.learn(&fact("again", Working, None), "replica-0", 0);
    assert_eq!(r.status_heard_from("again"), Some("replica-0"));
    assert_eq!(r.status_heard_from("t0"), Some("another replica"));
    assert_eq!(r.heard_from(Source::HERE), None);
}
