//! Who holds an active attempt: a process named by its host, pid and start time, so that
//! another process sharing the data directory can tell a live owner from one that is gone
//! (and a reused pid from the process that had it), and a lease for an owner it cannot check
//! (one on another host). Recovery ends only attempts whose owner is gone or whose lease has
//! expired.

use std::sync::OnceLock;

/// A process, as recorded in an attempt's `owner` column: `host/pid/start-ticks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessIdentity {
    /// The host name.
    pub host: String,
    /// The process id.
    pub pid: u32,
    /// When the process started, in clock ticks since boot (`/proc/PID/stat`, field 22).
    pub start_ticks: u64,
}

impl ProcessIdentity {
    /// This process.
    pub fn current() -> &'static ProcessIdentity {
        static CURRENT: OnceLock<ProcessIdentity> = OnceLock::new();
        CURRENT.get_or_init(|| {
            let pid = std::process::id();
            ProcessIdentity {
                host: host_name(),
                pid,
                start_ticks: start_ticks_of(pid).unwrap_or(0),
            }
        })
    }

    /// The `owner` column's text.
    pub fn to_column(&self) -> String {
        format!("{}/{}/{}", self.host, self.pid, self.start_ticks)
    }

    /// Reads an `owner` column (`None` for text adamviz did not write).
    pub fn from_column(text: &str) -> Option<Self> {
        let (rest, start_ticks) = text.rsplit_once('/')?;
        let (host, pid) = rest.rsplit_once('/')?;
        Some(Self {
            host: host.to_owned(),
            pid: pid.parse().ok()?,
            start_ticks: start_ticks.parse().ok()?,
        })
    }

    /// Whether this process is known to be gone: on this host, no process has its pid and
    /// start time. `None` when that cannot be known here (another host).
    pub fn is_gone(&self) -> Option<bool> {
        if self.host != ProcessIdentity::current().host {
            return None;
        }
        Some(start_ticks_of(self.pid) != Some(self.start_ticks))
    }
}

/// Whether a process with `pid` exists on this host (it may be another program that took a
/// reused pid: then what it would own is kept, the safe side).
pub fn process_exists(pid: u32) -> bool {
    pid > 0 && start_ticks_of(pid).is_some()
}

/// Whether an active attempt held by `owner` until `lease_until` (RFC 3339 UTC, which compares
/// as text) may be ended by recovery at `now`: its owner is gone, or it cannot be checked and
/// the lease has expired. An attempt without an owner (written before owners were recorded)
/// is abandoned.
pub fn is_abandoned(owner: Option<&str>, lease_until: Option<&str>, now: &str) -> bool {
    let Some(owner) = owner.and_then(ProcessIdentity::from_column) else {
        return true;
    };
    match owner.is_gone() {
        Some(gone) => gone,
        None => lease_until.is_none_or(|lease| lease < now),
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "localhost".to_owned())
}

/// Field 22 of `/proc/PID/stat` (after the command name, which may hold spaces and ')').
fn start_ticks_of(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_process_that_exited_is_gone() {
        let me = ProcessIdentity::current();
        assert!(me.start_ticks > 0);
        assert_eq!(
            ProcessIdentity::from_column(&me.to_column()).as_ref(),
            Some(me)
        );
        assert_eq!(me.is_gone(), Some(false));
        let mut child = std::process::Command::new("/bin/true").spawn().unwrap();
        let pid = child.id();
        let started = start_ticks_of(pid);
        child.wait().unwrap();
        let gone = ProcessIdentity {
            host: me.host.clone(),
            pid,
            start_ticks: started.unwrap_or(1),
        };
        assert_eq!(gone.is_gone(), Some(true));
        // The same pid with another start time is another process.
        let reused = ProcessIdentity {
            start_ticks: me.start_ticks + 1,
            ..me.clone()
        };
        assert_eq!(reused.is_gone(), Some(true));
    }

    #[test]
    fn an_owner_elsewhere_holds_its_attempt_until_the_lease_expires() {
        let elsewhere = ProcessIdentity {
            host: "another-host".to_owned(),
            pid: 1,
            start_ticks: 1,
        }
        .to_column();
        let now = "2026-12-04T02:00:00Z";
        assert!(!is_abandoned(
            Some(&elsewhere),
            Some("2026-12-04T02:10:00Z"),
            now
        ));
        assert!(is_abandoned(
            Some(&elsewhere),
            Some("2026-12-04T01:50:00Z"),
            now
        ));
        assert!(is_abandoned(None, None, now));
        let me = ProcessIdentity::current().to_column();
        // A live owner on this host keeps its attempt even past the lease (it may be queued).
        assert!(!is_abandoned(Some(&me), Some("2026-12-04T01:50:00Z"), now));
    }
}
