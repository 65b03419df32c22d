//! The routes the analysis thread judges: each its own session (task
//! registry, severity policy, last card), metric series and bypass check,
//! so a task id on two routes is two tasks. The route being judged sits
//! in the worker's `judge`; the others wait in `parked`, swapped in by
//! `enter` (two boxes swapped, no lookup per message beyond the
//! exchange's own).

use std::collections::HashMap;
use std::sync::Arc;

use super::records::BypassCheck;
use super::Worker;
use crate::analysis::msg::Msg;
use crate::analysis::series::AnalysisSeries;
use crate::analysis::RouteJudging;
use crate::judge::{Pipeline, Session};
use crate::lifecycle::registry::Fact;
use crate::report::metrics::Metrics;

/// One route's judging state.
pub(crate) struct RouteJudge {
    pub(crate) session: Session,
    /// Its label (`upstream` in records, metrics, logs).
    pub(crate) upstream: String,
    pub(crate) series: AnalysisSeries,
    pub(crate) bypass: BypassCheck,
    /// The settings it was last given (a reload gives new ones).
    pub(crate) settings: Option<Arc<RouteJudging>>,
}

/// Every route but the one in `Worker::judge`, by index; the slot of the
/// route in `judge` holds a stand-in.
#[derive(Default)]
pub(crate) struct Parked {
    /// Boxed: entering a route swaps two pointers, not two sessions.
    #[allow(
        clippy::vec_box,
        reason = "swapped with `Worker::judge`: a pointer, not a whole session"
    )]
    pub(crate) slots: Vec<Box<RouteJudge>>,
    pub(crate) by_name: HashMap<Arc<str>, usize>,
    /// The index of the route in `Worker::judge`.
    pub(crate) current: usize,
    /// Whether an exchange has named the first route (built with the
    /// worker, under its label).
    pub(crate) first_named: bool,
}

impl RouteJudge {
    pub(crate) fn new(
        session: Session,
        upstream: &str,
        metrics: &Metrics,
        settings: Option<Arc<RouteJudging>>,
    ) -> RouteJudge {
        RouteJudge {
            session,
            upstream: upstream.to_owned(),
            series: AnalysisSeries::new(metrics, upstream),
            bypass: BypassCheck::new(metrics, upstream),
            settings,
        }
    }
}

impl Worker {
    /// Makes route `index` the one judged.
    pub(super) fn enter(&mut self, index: usize) {
        let parked = &mut self.parked;
        if index == parked.current || index >= parked.slots.len() {
            return;
        }
        std::mem::swap(&mut self.judge, &mut parked.slots[parked.current]);
        std::mem::swap(&mut self.judge, &mut parked.slots[index]);
        parked.current = index;
    }

    /// The index of the route `settings` names, its session made (or,
    /// after a reload, given its new policy); `None`: the first route.
    pub(super) fn route_index(&mut self, settings: Option<&Arc<RouteJudging>>) -> usize {
        let Some(settings) = settings else {
            return 0;
        };
        // The route being judged, with the settings it has: most
        // exchanges come on the route of the one before (no lookup).
        if self
            .judge
            .settings
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, settings))
        {
            return self.parked.current;
        }
        let index = match self.parked.by_name.get(&settings.name) {
            Some(i) => *i,
            None if !self.parked.first_named && *settings.name == *self.first_label() => {
                // The first route, built before any exchange named it.
                self.parked.first_named = true;
                self.parked.by_name.insert(settings.name.clone(), 0);
                0
            }
            None => {
                let mut registry = crate::lifecycle::Registry::new(self.registry_config.clone());
                if self.publisher.is_some() {
                    // Its facts go to the other replicas too.
                    registry.share();
                }
                let session = Session::with_registry(
                    registry,
                    self.engine_config,
                    Pipeline::new(settings.policy.clone(), self.engine_config.max_id_bytes),
                )
                .live(&settings.base_path);
                let mut judge = RouteJudge::new(
                    session,
                    &settings.name,
                    &self.metrics,
                    Some(settings.clone()),
                );
                judge.bypass.on = settings.bypass_check;
                judge.bypass.public = self.judge.bypass.public.clone();
                let i = self.parked.slots.len();
                self.parked.slots.push(Box::new(judge));
                self.parked.by_name.insert(settings.name.clone(), i);
                return i;
            }
        };
        self.enter(index);
        let same = self
            .judge
            .settings
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, settings));
        if !same {
            let pipeline = Pipeline::new(settings.policy.clone(), self.engine_config.max_id_bytes);
            self.judge
                .session
                .set_pipeline(pipeline, &settings.base_path);
            self.judge.bypass.on = settings.bypass_check;
            self.judge.settings = Some(settings.clone());
        }
        index
    }

    /// Judges the route `msg` is about: the one an opening names, else
    /// the one its exchange opened on (the first, for the other replicas'
    /// facts: a shared registry is one route's).
    pub(super) fn enter_route_of(&mut self, msg: &Msg) {
        let route = match msg {
            Msg::Open { route, .. } | Msg::Unjudged { route, .. } => {
                Some(self.route_index(route.as_ref()))
            }
            Msg::Route(route) => Some(self.route_index(Some(route))),
            Msg::Head { id, .. }
            | Msg::Data { id, .. }
            | Msg::Lost { id }
            | Msg::End { id, .. } => self.live.get_mut(*id).map(|l| l.route),
            // The push relay's messages name the route of the config.
            Msg::PushRegistered { route, .. }
            | Msg::PushDeleting { route, .. }
            | Msg::Delivery { route, .. } => self.route_named(route.as_deref()),
            Msg::Facts(_) | Msg::Shutdown => Some(0),
        };
        if let Some(route) = route {
            self.enter(route);
        }
    }

    /// Hands each route's new facts to the publisher (with the shared
    /// registry), under the route's name.
    pub(super) fn publish_facts(&mut self) {
        let Some(p) = &self.publisher else {
            return;
        };
        // The slot of the route being judged holds a stand-in, whose
        // registry records no facts.
        for judge in std::iter::once(&mut self.judge).chain(self.parked.slots.iter_mut()) {
            p.offer(&judge.upstream, judge.session.registry_mut().take_facts());
        }
    }

    /// Judges the facts replica `from` published about route `route`
    /// (`None`: the one upstream, or the first route), heard as message
    /// `message`; facts of a route this replica does not have are about
    /// none of its agents.
    pub(super) fn heard_on(
        &mut self,
        (from, route): (&str, Option<&str>),
        facts: &[Fact],
        message: u64,
    ) {
        let Some(index) = self.route_named(route) else {
            return;
        };
        self.enter(index);
        self.judge.session.registry_mut().at_message(message);
        self.judge.session.heard(from, facts, self.clock_ms);
    }

    /// The index of the route named `route` (`None`: the one upstream, or
    /// the first route); `None` when this replica has no such route.
    pub(super) fn route_named(&self, route: Option<&str>) -> Option<usize> {
        match route {
            None => Some(0),
            Some(name) => self
                .parked
                .by_name
                .get(name)
                .copied()
                .or_else(|| (name == self.first_label()).then_some(0)),
        }
    }

    /// The label of the first route (the worker's own).
    fn first_label(&self) -> &str {
        if self.parked.current == 0 {
            &self.judge.upstream
        } else {
            &self.parked.slots[0].upstream
        }
    }

    /// The number of routes.
    pub(super) fn route_count(&self) -> usize {
        self.parked.slots.len()
    }
}
