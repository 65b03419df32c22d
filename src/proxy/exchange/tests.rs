use super::*;
use std::sync::Mutex;
use std::time::Duration;

use crate::report::Metrics;

/// What the observer was handed: the bytes of each run, and the ends.
#[derive(Default)]
struct Runs(Mutex<(Vec<Vec<u8>>, Vec<BodyEnd>)>);

impl ExchangeObserver for Runs {
    fn request_data(&self, _: &Bytes) {}
    fn request_end(&self, _: BodyEnd) {}
    fn response_head(&self, _: &http::response::Parts) {}
    fn response_data(&self, data: &[u8]) {
        self.0.lock().expect("lock").0.push(data.to_vec());
    }
    fn response_end(&self, data: &[u8], end: BodyEnd) {
        let mut runs = self.0.lock().expect("lock");
        runs.0.push(data.to_vec());
        runs.1.push(end);
    }
    fn upstream_failed(&self, _: &ProxyError) {}
}

#[test]
fn response_chunks_reach_the_observer_a_run_at_a_time_and_with_the_end() {
    let runs = Arc::new(Runs::default());
    let metrics = Arc::new(Metrics::new().expect("metrics"));
    let shared = Arc::new(Shared::new(
        metrics,
        "up".into(),
        Duration::from_secs(1),
        None,
    ));
    let observer: Arc<dyn ExchangeObserver> = runs.clone();
    let exchange = Arc::new(InFlight::new(1, Instant::now(), Some(observer), shared));
    let mut tap = ResponseTap::new(exchange, StatusCode::OK);
    let mut sent = Vec::new();
    let mut chunk = |len: usize| {
        let c: Vec<u8> = (0..len).map(|i| (sent.len() + i) as u8).collect();
        sent.extend_from_slice(&c);
        Bytes::from(c)
    };
    let handed = || runs.0.lock().expect("lock").0.clone();

    // A read that brought more than a run: full runs go at once...
    let piece = RUN_BYTES / 4 - 1;
    (0..9).for_each(|_| tap.data(&chunk(piece)));
    assert_eq!(handed().len(), 2);
    assert!(handed().iter().all(|r| r.len() == 4 * piece));
    // ...the rest when the body pauses; a pause with nothing new hands
    // over nothing.
    tap.pause();
    tap.pause();
    assert_eq!(handed().len(), 3);
    assert_eq!(handed()[2].len(), piece);
    // A chunk of a run's length or more comes alone, after what was
    // gathered before it.
    tap.data(&chunk(3));
    tap.data(&chunk(RUN_BYTES));
    assert_eq!(handed().len(), 5);
    assert_eq!(handed()[3].len(), 3);
    assert_eq!(handed()[4].len(), RUN_BYTES);
    // What came after the last pause goes with the end.
    tap.data(&chunk(1));
    tap.end(BodyEnd::Complete);
    let (all, ends) = runs.0.lock().expect("lock").clone();
    assert_eq!(all.len(), 6);
    assert_eq!(all[5].len(), 1);
    assert_eq!(ends, [BodyEnd::Complete]);
    assert_eq!(all.concat(), sent, "every byte once, in order");
}
