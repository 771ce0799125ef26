//! A pool of R processes started ahead of time: each runs the harness in `wait` mode (R
//! started, ggplot2, patchwork and jsonlite loaded, no script yet) in its own sandbox and
//! working directory. A run takes one, hands it the inputs and says go; the process is used for
//! exactly that run and then discarded, and a replacement starts in the background.

use std::{collections::VecDeque, sync::Arc};

use tokio::sync::{Mutex, Notify};

use super::{PreparedProcess, RunFailure, RunnerConfig};

/// Processes kept ready.
pub struct RProcessPool {
    config: RunnerConfig,
    ready: Arc<Mutex<VecDeque<PreparedProcess>>>,
    changed: Arc<Notify>,
}

impl RProcessPool {
    /// Starts `config.pool_size` processes in the background.
    pub fn start(config: RunnerConfig) -> Self {
        let pool = Self {
            config,
            ready: Arc::new(Mutex::new(VecDeque::new())),
            changed: Arc::new(Notify::new()),
        };
        for _ in 0..pool.config.pool_size {
            pool.refill();
        }
        pool
    }

    fn refill(&self) {
        let config = self.config.clone();
        let ready = Arc::clone(&self.ready);
        let changed = Arc::clone(&self.changed);
        tokio::spawn(async move {
            if let Ok(process) = PreparedProcess::spawn_waiting(&config).await {
                ready.lock().await.push_back(process);
                changed.notify_waiters();
            }
        });
    }

    /// Waits until `count` processes are ready.
    pub async fn wait_until_ready(&self, count: usize) {
        loop {
            let notified = self.changed.notified();
            if self.ready.lock().await.len() >= count.min(self.config.pool_size) {
                return;
            }
            notified.await;
        }
    }

    /// A ready process (one that died while waiting is discarded), or a fresh one when none is
    /// ready; a replacement is started either way.
    pub(crate) async fn take(&self) -> Result<PreparedProcess, RunFailure> {
        self.refill();
        loop {
            let next = self.ready.lock().await.pop_front();
            match next {
                Some(mut process) => {
                    if process.is_alive() {
                        return Ok(process);
                    }
                    process.discard().await;
                }
                None => return PreparedProcess::spawn_waiting(&self.config).await,
            }
        }
    }
}
