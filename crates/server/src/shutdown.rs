//! Graceful shutdown: the signals that end `adamviz serve` and `adamviz worker`.

/// Registers SIGINT and SIGTERM handlers now (so a signal that arrives before the server is
/// polled is not lost to the default action) and returns a future that completes at the first.
pub fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => tracing::info!("SIGINT received, shutting down"),
            _ = terminate.recv() => tracing::info!("SIGTERM received, shutting down"),
        }
    })
}
