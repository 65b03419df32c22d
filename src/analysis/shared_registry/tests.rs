use super::*;
use crate::a2a::model::TaskState;

fn facts(from: usize, n: usize) -> Vec<Fact> {
    (from..from + n)
        .map(|i| Fact {
            task_id: format!("t-{i}").into(),
            context_id: None,
            state: TaskState::Working,
            timestamp: None,
        })
        .collect()
}

/// The analysis thread adds to the backlog whatever the publisher is
/// doing; only the bound drops, the oldest first, counted.
#[test]
fn only_the_backlogs_bound_drops_the_oldest_first() {
    let waiting = Arc::new(Waiting {
        state: Mutex::new(Backlog::default()),
        added: Condvar::new(),
    });
    let dropped = IntCounter::new("d", "d").unwrap();
    let p = Publisher {
        waiting: waiting.clone(),
        dropped: dropped.clone(),
        name_routes: false,
    };
    for batch in 0..MAX_WAITING / 100 {
        p.offer("r", facts(batch * 100, 100));
    }
    assert_eq!(dropped.get(), 0);
    p.offer("r", facts(MAX_WAITING, 1_000));
    let kept = waiting.lock().facts.len();
    assert_eq!(kept, MAX_WAITING);
    assert_eq!(
        dropped.get() as usize,
        MAX_WAITING / 100 * 100 + 1_000 - kept
    );
    let first = waiting.lock().facts.front().map(|f| f.1.task_id.clone());
    assert_eq!(
        first.as_deref(),
        Some(&*format!("t-{}", MAX_WAITING / 100 * 100 + 1_000 - kept))
    );
    p.offer("r", facts(0, MAX_WAITING + 5));
    assert_eq!(waiting.lock().facts.len(), MAX_WAITING);
    let first = waiting.lock().facts.front().map(|f| f.1.task_id.clone());
    assert_eq!(
        first.as_deref(),
        Some("t-5"),
        "a burst over the bound keeps its newest"
    );
}

/// With `[[route]]` tables each fact waits with its route's name; without,
/// with none (entries as before routes).
#[test]
fn facts_wait_with_their_route_only_when_routes_are_named() {
    let waiting = || {
        Arc::new(Waiting {
            state: Mutex::new(Backlog::default()),
            added: Condvar::new(),
        })
    };
    for name_routes in [true, false] {
        let w = waiting();
        let p = Publisher {
            waiting: w.clone(),
            dropped: IntCounter::new("d", "d").unwrap(),
            name_routes,
        };
        p.offer("billing", facts(0, 2));
        let routes: Vec<Option<String>> = w
            .lock()
            .facts
            .iter()
            .map(|(r, _)| r.as_deref().map(str::to_owned))
            .collect();
        let want = name_routes.then(|| "billing".to_string());
        assert_eq!(routes, [want.clone(), want]);
    }
}
