//! A future polled again only when its own waker fired: a connection's
//! watchers (the drain, its deadline) share the connection's task, which
//! wakes several times an exchange for its I/O; each of those polls would
//! otherwise poll every watcher again (a timer and a watch channel, each
//! re-registering its waker) for nothing.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use pin_project_lite::pin_project;

pin_project! {
    /// Polls `inner` on its first poll, then only after `inner` woke it
    /// (or when the task polling it changed).
    pub(super) struct Woken<F> {
        #[pin]
        inner: F,
        flag: Arc<Flag>,
        // `flag` as a waker, given to `inner`.
        waker: Waker,
        // The task's waker `flag` wakes (`None` before the first poll).
        task: Option<Waker>,
    }
}

/// Set by `inner`'s wakes; passes each on to the task.
struct Flag {
    woken: AtomicBool,
    task: Mutex<Option<Waker>>,
}

// === impl Woken ===

impl<F: Future> Woken<F> {
    pub(super) fn new(inner: F) -> Self {
        let flag = Arc::new(Flag {
            woken: AtomicBool::new(false),
            task: Mutex::new(None),
        });
        Woken {
            inner,
            waker: Waker::from(flag.clone()),
            flag,
            task: None,
        }
    }
}

impl<F: Future> Future for Woken<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let same_task = this.task.as_ref().is_some_and(|t| t.will_wake(cx.waker()));
        if !same_task {
            *this.task = Some(cx.waker().clone());
            *this
                .flag
                .task
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(cx.waker().clone());
        }
        // Cleared before `inner` is polled: a wake during or after that
        // poll is seen at the next one.
        let woken = this.flag.woken.swap(false, Ordering::AcqRel);
        if same_task && !woken {
            return Poll::Pending;
        }
        this.inner.poll(&mut Context::from_waker(this.waker))
    }
}

// === impl Flag ===

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        let task = self.task.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(task) = task.as_ref() {
            task.wake_by_ref();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// A future that counts its polls and keeps the last waker it got.
    fn counted(
        polls: Arc<AtomicUsize>,
        waker: Arc<Mutex<Option<Waker>>>,
        ready_at: usize,
    ) -> impl Future<Output = ()> {
        poll_fn(move |cx| {
            let n = polls.fetch_add(1, Ordering::Relaxed) + 1;
            *waker.lock().unwrap() = Some(cx.waker().clone());
            if n >= ready_at {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }

    #[test]
    fn polled_first_then_only_when_woken_and_its_wake_reaches_the_task() {
        let polls = Arc::new(AtomicUsize::new(0));
        let inner_waker = Arc::new(Mutex::new(None));
        let mut woken = Box::pin(Woken::new(counted(polls.clone(), inner_waker.clone(), 2)));

        struct Count(AtomicUsize);
        impl Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let task = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(task.clone());
        let mut cx = Context::from_waker(&waker);

        assert!(woken.as_mut().poll(&mut cx).is_pending());
        assert_eq!(
            polls.load(Ordering::Relaxed),
            1,
            "the first poll reaches it"
        );
        for _ in 0..3 {
            assert!(woken.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(polls.load(Ordering::Relaxed), 1, "not polled unwoken");

        inner_waker.lock().unwrap().take().unwrap().wake();
        assert_eq!(task.0.load(Ordering::Relaxed), 1, "its wake wakes the task");
        assert!(woken.as_mut().poll(&mut cx).is_ready());
        assert_eq!(polls.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn a_new_task_polls_it_again() {
        let polls = Arc::new(AtomicUsize::new(0));
        let mut woken = Box::pin(Woken::new(counted(
            polls.clone(),
            Arc::new(Mutex::new(None)),
            usize::MAX,
        )));
        struct Nothing;
        impl Wake for Nothing {
            fn wake(self: Arc<Self>) {}
        }
        for _ in 0..2 {
            // A waker of its own each time: another task, as far as it knows.
            let waker = Waker::from(Arc::new(Nothing));
            assert!(woken
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending());
        }
        assert_eq!(polls.load(Ordering::Relaxed), 2);
    }
}
