//! The shutdown signals, watched from the moment they are asked for.

/// Watches SIGINT and SIGTERM from the moment it is called (so a signal
/// that comes while the proxy is still starting is not met by the default
/// action, which would kill it undrained); the future resolves when one
/// arrives.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let watch = |kind: SignalKind, name: &str| {
            signal(kind)
                .map_err(|e| tracing::warn!(error = %e, "cannot watch {name}"))
                .ok()
        };
        let mut term = watch(SignalKind::terminate(), "SIGTERM");
        let mut int = watch(SignalKind::interrupt(), "SIGINT");
        async move {
            tokio::select! {
                _ = arrives(term.as_mut()) => {}
                _ = arrives(int.as_mut()) => {}
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// The next `signal`; never, for one that is not watched (its default
/// action applies).
#[cfg(unix)]
async fn arrives(signal: Option<&mut tokio::signal::unix::Signal>) {
    match signal {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}
