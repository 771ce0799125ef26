//! The server's login limits in memory: a right password waits its turn, a wrong one costs its
//! address.
//!
//! A team logs in together, often from one address (a NAT, a reverse proxy), so logins in
//! progress are never a reason to refuse: each waits in a bounded queue, with a deadline, for a
//! place among the passwords its address may have checked at once and among those the server
//! checks at once (so Argon2 cannot eat the machine). What refuses at once is failure: each
//! client address (an IPv6 address counts by its /64, [`client_key`]) has a small budget of
//! failures that refills slowly, and a right password costs nothing. An address that has
//! failed recently may hold only part of the server's places, so a flood of wrong passwords
//! from many addresses leaves room for the next right one.
//!
//! The lockout per name and address, and the security log's counts, are the database's part:
//! [`super::login_limits`].

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use tokio::{
    sync::{OwnedSemaphorePermit, Semaphore},
    time::Instant,
};

/// How many logins, and how fast, the server checks.
#[derive(Debug, Clone, Copy)]
pub struct LoginLimits {
    /// Failures one client address may make in a burst.
    pub burst: u32,
    /// Then one more failure per this long.
    pub refill: Duration,
    /// Passwords of one client address checked at once (the others of it wait): this bounds
    /// how far parallel guesses can overrun the failure budget.
    pub per_client_checking: usize,
    /// Passwords the whole server checks at once.
    pub checking: usize,
    /// Of those, how many may come from addresses with failures in their budget.
    pub checking_after_failures: usize,
    /// Logins one client address may have waiting.
    pub per_client_waiting: usize,
    /// Logins the whole server lets wait.
    pub waiting: usize,
    /// How long a login waits for its turn at most.
    pub deadline: Duration,
}

impl Default for LoginLimits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let checking = (2 * cores).max(4);
        Self {
            burst: 10,
            refill: Duration::from_secs(6),
            per_client_checking: 2,
            checking,
            // Half the places: addresses without failures always find the other half.
            checking_after_failures: checking / 2,
            per_client_waiting: 100,
            waiting: 2_000,
            deadline: Duration::from_secs(5),
        }
    }
}

/// Why a login was refused before its password was looked at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoginRefused {
    /// The client address has used its failure budget.
    #[error("too many failed logins from your address: try again in {retry_after_seconds} s")]
    TooManyFailures {
        /// When the next attempt is allowed.
        retry_after_seconds: u64,
    },
    /// The queue of logins is full, or this one waited out its deadline.
    #[error("the server is too busy checking logins: try again in a moment")]
    Busy,
}

impl LoginRefused {
    /// The `Retry-After` of the refusal, in seconds.
    pub fn retry_after_seconds(&self) -> u64 {
        match self {
            LoginRefused::TooManyFailures {
                retry_after_seconds,
            } => *retry_after_seconds,
            LoginRefused::Busy => 2,
        }
    }
}

#[derive(Debug)]
struct Client {
    /// Failures left in the budget (fractions refill over time).
    tokens: f64,
    refilled: Instant,
    /// The address's places for password checks.
    checking: Arc<Semaphore>,
    waiting: usize,
}

#[derive(Debug, Default)]
struct State {
    clients: HashMap<String, Client>,
    waiting: usize,
}

/// The server's login limits in memory ([`LoginLimits`]): one per router.
#[derive(Debug)]
pub struct LoginLimiter {
    limits: LoginLimits,
    state: Mutex<State>,
    checking: Arc<Semaphore>,
    checking_after_failures: Arc<Semaphore>,
}

/// Clients kept before idle ones (nothing waiting or checked, budget full) are forgotten.
const CLIENTS_KEPT: usize = 4096;

impl LoginLimiter {
    /// A limiter with `limits`.
    pub fn new(limits: LoginLimits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            state: Mutex::new(State::default()),
            checking: Arc::new(Semaphore::new(limits.checking.max(1))),
            checking_after_failures: Arc::new(Semaphore::new(
                limits
                    .checking_after_failures
                    .clamp(1, limits.checking.max(1)),
            )),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits until a login of `client` ([`client_key`]) may have its password checked, or
    /// refuses it: at once when the address has used its failure budget or the queue is full,
    /// after [`LoginLimits::deadline`] when its turn has not come. The ticket holds its places
    /// until dropped (after the password check, wherever it runs); a ticket dropped without
    /// [`LoginTicket::succeeded`] counts as a failure of the address.
    pub async fn admit(self: &Arc<Self>, client: &str) -> Result<LoginTicket, LoginRefused> {
        let deadline = Instant::now() + self.limits.deadline;
        let client_places = {
            let mut state = self.state();
            let now = Instant::now();
            self.forget_idle(&mut state, now);
            if state.waiting >= self.limits.waiting {
                return Err(LoginRefused::Busy);
            }
            let entry = self.client(&mut state, client, now);
            budget_left(entry, &self.limits)?;
            if entry.waiting >= self.limits.per_client_waiting {
                return Err(LoginRefused::Busy);
            }
            entry.waiting += 1;
            let places = Arc::clone(&entry.checking);
            state.waiting += 1;
            places
        };
        let waiting = Waiting {
            limiter: self,
            client,
        };
        let for_client = wait_for(&client_places, deadline).await?;
        // Failures of this address while it waited count now.
        let failed_recently = {
            let mut state = self.state();
            let entry = self.client(&mut state, client, Instant::now());
            budget_left(entry, &self.limits)?;
            entry.tokens < f64::from(self.limits.burst)
        };
        let after_failures = if failed_recently {
            Some(wait_for(&self.checking_after_failures, deadline).await?)
        } else {
            None
        };
        let in_server = wait_for(&self.checking, deadline).await?;
        drop(waiting);
        Ok(LoginTicket {
            limiter: Arc::clone(self),
            client: client.to_owned(),
            succeeded: std::sync::atomic::AtomicBool::new(false),
            _places: (for_client, after_failures, in_server),
        })
    }

    /// The entry of `client`, its budget refilled to `now`.
    fn client<'s>(&self, state: &'s mut State, client: &str, now: Instant) -> &'s mut Client {
        let limits = self.limits;
        let entry = state
            .clients
            .entry(client.to_owned())
            .or_insert_with(|| Client {
                tokens: f64::from(limits.burst),
                refilled: now,
                checking: Arc::new(Semaphore::new(limits.per_client_checking.max(1))),
                waiting: 0,
            });
        let gained = now.duration_since(entry.refilled).as_secs_f64() / limits.refill.as_secs_f64();
        entry.tokens = (entry.tokens + gained).min(f64::from(limits.burst));
        entry.refilled = now;
        entry
    }

    /// Forgets clients with nothing going on and a full budget, once there are many.
    fn forget_idle(&self, state: &mut State, now: Instant) {
        if state.clients.len() <= CLIENTS_KEPT {
            return;
        }
        let (burst, refill) = (f64::from(self.limits.burst), self.limits.refill);
        state.clients.retain(|_, c| {
            c.waiting > 0
                || Arc::strong_count(&c.checking) > 1
                || c.tokens + now.duration_since(c.refilled).as_secs_f64() / refill.as_secs_f64()
                    < burst
        });
    }
}

/// Refuses when `client` has no failure left in its budget.
fn budget_left(client: &Client, limits: &LoginLimits) -> Result<(), LoginRefused> {
    if client.tokens >= 1.0 {
        return Ok(());
    }
    let wait = (1.0 - client.tokens) * limits.refill.as_secs_f64();
    Err(LoginRefused::TooManyFailures {
        retry_after_seconds: wait.ceil().max(1.0) as u64,
    })
}

/// A place of `places`, or [`LoginRefused::Busy`] at `deadline`.
async fn wait_for(
    places: &Arc<Semaphore>,
    deadline: Instant,
) -> Result<OwnedSemaphorePermit, LoginRefused> {
    match tokio::time::timeout_at(deadline, Arc::clone(places).acquire_owned()).await {
        Ok(Ok(permit)) => Ok(permit),
        // A semaphore is closed never; time out is the other way.
        Ok(Err(_)) | Err(_) => Err(LoginRefused::Busy),
    }
}

/// A login counted as waiting until dropped (however `admit` ends).
struct Waiting<'a> {
    limiter: &'a LoginLimiter,
    client: &'a str,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut state = self.limiter.state();
        state.waiting = state.waiting.saturating_sub(1);
        if let Some(client) = state.clients.get_mut(self.client) {
            client.waiting = client.waiting.saturating_sub(1);
        }
    }
}

/// A login let through by [`LoginLimiter::admit`]; dropping it frees its places, and counts a
/// failure of its address unless it [`succeeded`](LoginTicket::succeeded).
#[derive(Debug)]
pub struct LoginTicket {
    limiter: Arc<LoginLimiter>,
    client: String,
    succeeded: std::sync::atomic::AtomicBool,
    _places: (
        OwnedSemaphorePermit,
        Option<OwnedSemaphorePermit>,
        OwnedSemaphorePermit,
    ),
}

impl LoginTicket {
    /// The password was right: the login costs the address nothing.
    pub fn succeeded(&self) {
        self.succeeded
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for LoginTicket {
    fn drop(&mut self) {
        if self.succeeded.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let mut state = self.limiter.state();
        let entry = self
            .limiter
            .client(&mut state, &self.client, Instant::now());
        entry.tokens = (entry.tokens - 1.0).max(0.0);
    }
}

/// The key a client address is limited and locked out by: the address itself, an IPv6
/// address by its /64 (one machine often holds a whole /64), `""` when unknown.
pub fn client_key(remote_addr: Option<&str>) -> String {
    match remote_addr.map(|a| a.parse::<IpAddr>()) {
        Some(Ok(IpAddr::V6(v6))) if v6.to_ipv4_mapped().is_none() => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
        Some(Ok(IpAddr::V6(v6))) => v6
            .to_ipv4_mapped()
            .map(|v4| v4.to_string())
            .unwrap_or_default(),
        Some(Ok(IpAddr::V4(v4))) => v4.to_string(),
        // Not an address (a test's label, say): itself, bounded.
        Some(Err(_)) => remote_addr.unwrap_or_default().chars().take(64).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::{client_key, LoginLimiter, LoginLimits, LoginRefused};
    use std::{sync::Arc, time::Duration};

    fn limiter() -> Arc<LoginLimiter> {
        LoginLimiter::new(LoginLimits {
            burst: 3,
            refill: Duration::from_secs(10),
            per_client_checking: 1,
            checking: 2,
            checking_after_failures: 1,
            per_client_waiting: 3,
            waiting: 100,
            deadline: Duration::from_secs(2),
        })
    }

    #[tokio::test(start_paused = true)]
    async fn logins_in_progress_wait_their_turn_and_failures_refuse_at_once() {
        let limiter = limiter();
        // A second login of the same address waits for the first, then goes ahead.
        let first = limiter.admit("10.0.0.2").await.unwrap();
        let second = {
            let limiter = Arc::clone(&limiter);
            tokio::spawn(async move { limiter.admit("10.0.0.2").await })
        };
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!second.is_finished(), "the second waits for its turn");
        first.succeeded();
        drop(first);
        let second = second.await.unwrap().unwrap();
        second.succeeded();
        drop(second);
        // Three failures use the budget; the fourth is refused at once, until it refills.
        for _ in 0..3 {
            drop(limiter.admit("10.0.0.2").await.unwrap());
        }
        assert_eq!(
            limiter.admit("10.0.0.2").await.unwrap_err(),
            LoginRefused::TooManyFailures {
                retry_after_seconds: 10
            }
        );
        // Another address is not affected.
        drop(limiter.admit("10.0.0.3").await.unwrap());
        tokio::time::advance(Duration::from_secs(10)).await;
        let again = limiter.admit("10.0.0.2").await.unwrap();
        again.succeeded();
    }

    #[tokio::test(start_paused = true)]
    async fn a_turn_that_does_not_come_before_the_deadline_is_refused() {
        let limiter = limiter();
        let holding = limiter.admit("10.0.0.2").await.unwrap();
        let started = tokio::time::Instant::now();
        assert_eq!(
            limiter.admit("10.0.0.2").await.unwrap_err(),
            LoginRefused::Busy
        );
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        drop(holding);
    }

    #[tokio::test(start_paused = true)]
    async fn addresses_that_failed_hold_only_part_of_the_servers_places() {
        let limiter = limiter();
        for address in ["10.0.0.5", "10.0.0.6"] {
            drop(limiter.admit(address).await.unwrap());
        }
        // Both have failed: only one of them is checked at a time…
        let failing = limiter.admit("10.0.0.5").await.unwrap();
        let other_failing = {
            let limiter = Arc::clone(&limiter);
            tokio::spawn(async move { limiter.admit("10.0.0.6").await.map(drop) })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!other_failing.is_finished());
        // …while an address without failures takes the other place at once.
        let clean = limiter.admit("10.0.0.7").await.unwrap();
        clean.succeeded();
        drop((failing, clean));
        other_failing.await.unwrap().unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn the_queue_of_one_address_is_bounded() {
        let limiter = limiter();
        let holding = limiter.admit("10.0.0.2").await.unwrap();
        holding.succeeded();
        let waiting: Vec<_> = (0..3)
            .map(|_| {
                let limiter = Arc::clone(&limiter);
                tokio::spawn(async move { limiter.admit("10.0.0.2").await.map(|t| t.succeeded()) })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(
            limiter.admit("10.0.0.2").await.unwrap_err(),
            LoginRefused::Busy
        );
        drop(holding);
        for task in waiting {
            task.await.unwrap().unwrap();
        }
    }

    #[test]
    fn client_keys_are_addresses_and_ipv6_counts_by_its_64() {
        assert_eq!(client_key(Some("127.0.0.2")), "127.0.0.2");
        assert_eq!(
            client_key(Some("2001:db8:1:2:aaaa::1")),
            client_key(Some("2001:db8:1:2:bbbb::2"))
        );
        assert_eq!(client_key(Some("::ffff:10.0.0.1")), "10.0.0.1");
        assert_eq!(client_key(None), "");
    }
}
