//! Several analysis threads, each judging whole routes. Routes share no
//! judging state (a task id on two routes is two tasks: each route has
//! its own registry, last card and policy), so a thread that owns a set
//! of routes, with its own queue and causal clock, judges them exactly as
//! one thread judging every route would. A route is given a thread when
//! it is first seen (the first route the first thread, the next ones in
//! turn) and keeps it for the process's life, so a reload never moves a
//! route's state.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::msg::Msg;
use super::queue::Sender;

/// The analysis threads' queues, and which routes each judges.
pub(crate) struct Shards {
    senders: Vec<Sender<Msg>>,
    assigned: Mutex<Assigned>,
}

struct Assigned {
    by_name: HashMap<Arc<str>, usize>,
    /// The thread the next new route gets.
    next: usize,
}

impl Shards {
    /// The threads of `senders` (at least one), the first judging the
    /// route labelled `first`.
    pub(crate) fn new(senders: Vec<Sender<Msg>>, first: &str) -> Shards {
        assert!(!senders.is_empty(), "at least one analysis thread");
        let mut by_name = HashMap::new();
        by_name.insert(Arc::from(first), 0);
        let next = 1 % senders.len();
        Shards {
            senders,
            assigned: Mutex::new(Assigned { by_name, next }),
        }
    }

    /// The queue of the first route (and the one upstream).
    pub(crate) fn first(&self) -> &Sender<Msg> {
        &self.senders[0]
    }

    /// Every thread's queue.
    pub(crate) fn all(&self) -> &[Sender<Msg>] {
        &self.senders
    }

    /// The queue of route `name`, which is given a thread now if it has
    /// none yet (in turn, so routes spread evenly).
    pub(crate) fn assign(&self, name: &Arc<str>) -> &Sender<Msg> {
        if self.senders.len() == 1 {
            return self.first();
        }
        let mut a = self.assigned.lock().unwrap_or_else(PoisonError::into_inner);
        let i = match a.by_name.get(name) {
            Some(i) => *i,
            None => {
                let i = a.next;
                a.next = (i + 1) % self.senders.len();
                a.by_name.insert(name.clone(), i);
                i
            }
        };
        &self.senders[i]
    }

    /// The queue of the route named `name` (`None`: the first route); a
    /// name no route has goes to the first thread, which ignores it.
    pub(crate) fn of(&self, name: Option<&str>) -> &Sender<Msg> {
        &self.senders[self.index_of(name)]
    }

    /// The thread judging the route named `name` (as [`Shards::of`]).
    pub(crate) fn index_of(&self, name: Option<&str>) -> usize {
        match name {
            Some(name) if self.senders.len() > 1 => self
                .assigned
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .by_name
                .get(name)
                .copied()
                .unwrap_or(0),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::queue::queue;

    fn shards(n: usize) -> Shards {
        let senders = (0..n).map(|_| queue::<Msg>(1024).0).collect();
        Shards::new(senders, "first")
    }

    fn index(s: &Shards, tx: &Sender<Msg>) -> usize {
        s.all()
            .iter()
            .position(|t| std::ptr::eq(t, tx))
            .expect("one of the shards")
    }

    #[test]
    fn the_first_route_is_the_first_threads_and_the_others_go_in_turn_for_good() {
        let s = shards(3);
        let names: Vec<Arc<str>> = ["first", "b", "c", "d", "e"]
            .into_iter()
            .map(Arc::from)
            .collect();
        let given: Vec<usize> = names.iter().map(|n| index(&s, s.assign(n))).collect();
        assert_eq!(given, [0, 1, 2, 0, 1]);
        // Asked again (a reload), each keeps its thread.
        let again: Vec<usize> = names.iter().rev().map(|n| index(&s, s.assign(n))).collect();
        assert_eq!(again, [1, 0, 2, 1, 0]);
        assert_eq!(s.index_of(Some("c")), 2);
        assert_eq!(s.index_of(None), 0);
        assert_eq!(s.index_of(Some("no such route")), 0);
    }

    #[test]
    fn one_thread_judges_every_route() {
        let s = shards(1);
        for name in ["first", "b", "c"] {
            assert_eq!(index(&s, s.assign(&Arc::from(name))), 0);
        }
        assert_eq!(s.index_of(Some("b")), 0);
    }

    #[test]
    fn analysis_threads_by_default_follow_the_serving_threads_and_the_routes() {
        let route = |i: usize| {
            format!(
                "[[route]]\nname = \"r{i}\"\nupstream = \"http://127.0.0.1:9999\"\npath_prefix = \"/r{i}\"\n"
            )
        };
        let threads = |serving: usize, routes: usize, analysis: usize| {
            let mut text = format!(
                "listen = \"127.0.0.1:8080\"\n[proxy]\nthreads = {serving}\n[analysis]\nthreads = {analysis}\n"
            );
            if routes == 0 {
                text.insert_str(0, "upstream = \"http://127.0.0.1:9999\"\n");
            }
            for i in 0..routes {
                text.push_str(&route(i));
            }
            let config: crate::config::Config = text.parse().expect("config");
            crate::analysis::analysis_threads(&config)
        };
        // One upstream: one thread, whatever the serving threads.
        assert_eq!(threads(16, 0, 0), 1);
        // One per four serving threads, no more than the routes.
        assert_eq!(threads(16, 10, 0), 4);
        assert_eq!(threads(16, 2, 0), 2);
        assert_eq!(threads(4, 10, 0), 1);
        assert_eq!(threads(5, 10, 0), 2);
        // Asked for: as asked.
        assert_eq!(threads(2, 1, 3), 3);
    }
}
