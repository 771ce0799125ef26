//! The sandbox an R process runs in, applied between fork and exec: resource limits, a private
//! network namespace, a Landlock ruleset that confines writes to the working directory and
//! denies TCP, and (when the server runs as root) a throw-away uid per run so that the process
//! count limit is per run and every process the run leaves behind can be killed.
//!
//! Everything done in the child after fork is a plain system call (async-signal-safe); the
//! Landlock ruleset is built in the parent before the fork.

use std::{
    ffi::CString,
    os::{fd::RawFd, unix::ffi::OsStrExt},
    path::Path,
    sync::{
        atomic::{AtomicU32, Ordering},
        OnceLock,
    },
};

use serde::{Deserialize, Serialize};

/// Limits on one R process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceLimits {
    /// Wall-clock limit in milliseconds; the whole process group is killed when it passes.
    pub wall_clock_ms: u64,
    /// CPU seconds (RLIMIT_CPU).
    pub cpu_seconds: u64,
    /// Address space in bytes (RLIMIT_AS): allocations beyond it fail.
    pub address_space_bytes: u64,
    /// Largest file the process may write (RLIMIT_FSIZE).
    pub file_size_bytes: u64,
    /// Processes the run's uid may have (RLIMIT_NPROC).
    pub processes: u64,
    /// Bytes of stdout and of stderr kept in the result.
    pub diagnostics_bytes: usize,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        Self {
            wall_clock_ms: 60_000,
            cpu_seconds: 60,
            address_space_bytes: 4 << 30,
            file_size_bytes: 256 << 20,
            processes: 64,
            diagnostics_bytes: 64 << 10,
        }
    }
}

/// What a run does when a layer of isolation cannot be applied on this machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum IsolationPolicy {
    /// Every layer (user, network and pid namespaces; Landlock) or no run: the default.
    #[default]
    Require,
    /// Run with the layers the machine allows; the missing ones are recorded in the result
    /// (and so in the evidence) and shown as a warning. An explicit opt-in.
    BestEffort,
}

/// What isolation a run actually got; recorded in every result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IsolationReport {
    /// The policy the run was started under.
    pub policy: IsolationPolicy,
    /// A new, empty network namespace (no interfaces but a down loopback).
    pub network_namespace: bool,
    /// A new pid namespace whose init ends every process of the run when R ends.
    pub pid_namespace: bool,
    /// Landlock ABI version applied, if any: reads only of the system's files and the working
    /// directory, writes only in the working directory, and (ABI 4 and later) no TCP connect or
    /// bind.
    pub landlock_abi: Option<u32>,
    /// `PR_SET_NO_NEW_PRIVS` was set (always, whatever the policy).
    pub no_new_privs: bool,
    /// The uid the process ran as, when the runner dropped privileges to a per-run uid.
    pub run_uid: Option<u32>,
    /// The layers this machine could not apply (only ever non-empty under `best_effort`).
    pub missing_layers: Vec<String>,
}

impl IsolationReport {
    /// The report of a run that never started.
    pub fn not_started(policy: IsolationPolicy) -> Self {
        Self {
            policy,
            network_namespace: false,
            pid_namespace: false,
            landlock_abi: None,
            no_new_privs: false,
            run_uid: None,
            missing_layers: Vec::new(),
        }
    }
}

/// What the sandbox will do, probed once per process.
#[derive(Debug, Clone, Copy)]
pub struct SandboxSupport {
    /// `unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID)` works here.
    pub namespaces: bool,
    /// The kernel's Landlock ABI version (0: none).
    pub landlock_abi: u32,
    /// The runner is root and can give each run its own uid.
    pub per_run_uid: bool,
}

impl SandboxSupport {
    /// The layers this machine cannot apply, by name.
    pub fn missing_layers(&self) -> Vec<String> {
        let mut missing = Vec::new();
        if !self.namespaces {
            missing.push("user, network and pid namespaces".to_owned());
        }
        if self.landlock_abi == 0 {
            missing.push("Landlock".to_owned());
        }
        missing
    }
}

/// Probes the kernel once (a short-lived child tries the namespaces).
pub fn support() -> SandboxSupport {
    static SUPPORT: OnceLock<SandboxSupport> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        // SAFETY: plain syscalls without pointers.
        let landlock_abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        let per_run_uid = unsafe { libc::geteuid() } == 0;
        let mut probe = std::process::Command::new("/bin/true");
        if per_run_uid {
            use std::os::unix::process::CommandExt;
            probe.uid(RUN_UID_BASE).gid(RUN_UID_BASE);
        }
        // SAFETY: unshare is async-signal-safe.
        unsafe {
            use std::os::unix::process::CommandExt;
            probe.pre_exec(|| {
                if libc::unshare(NAMESPACE_FLAGS) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let namespaces = probe.status().is_ok_and(|s| s.success());
        SandboxSupport {
            namespaces,
            landlock_abi: u32::try_from(landlock_abi).unwrap_or(0),
            per_run_uid,
        }
    })
}

/// The namespaces every run gets: its own user (so that an unprivileged server may create the
/// others, and so that the process count is per run), network and pid namespaces.
const NAMESPACE_FLAGS: libc::c_int = libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::CLONE_NEWPID;

/// First uid handed to runs when the runner is root; runs take uids from a range above it that
/// no account uses.
pub const RUN_UID_BASE: u32 = 2_000_000;
const RUN_UID_RANGE: u32 = 1 << 16;

/// A uid for one run. The sequence starts at an offset derived from the process id, so that
/// two adamviz processes on one machine do not hand out the same uids at the same time.
pub fn next_run_uid() -> u32 {
    static NEXT: OnceLock<AtomicU32> = OnceLock::new();
    let next = NEXT.get_or_init(|| AtomicU32::new(std::process::id().wrapping_mul(257)));
    RUN_UID_BASE + 1 + next.fetch_add(1, Ordering::Relaxed) % RUN_UID_RANGE
}

/// Kills every process running as `uid` (what a run left behind: its own children, a fork
/// bomb's survivors), again while any is left: a process forked while `kill(-1)` walked the
/// process list can miss the signal. Bounded (a machine that cannot kill them is not waited on
/// for ever); normally one round does it.
pub fn kill_all_of_uid(uid: u32) {
    for _ in 0..20 {
        signal_all_of_uid(uid);
        if !uid_has_live_processes(uid) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Whether a process that is not a zombie runs with real uid `uid` (from `/proc`).
fn uid_has_live_processes(uid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let is_pid = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
        if !is_pid {
            return false;
        }
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            return false;
        };
        let real_uid = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|u| u.parse::<u32>().ok());
        let zombie = status
            .lines()
            .find_map(|l| l.strip_prefix("State:"))
            .is_some_and(|state| state.trim_start().starts_with('Z'));
        real_uid == Some(uid) && !zombie
    })
}

/// A short-lived helper takes the uid and signals all its processes.
fn signal_all_of_uid(uid: u32) {
    use std::os::unix::process::CommandExt;
    let mut helper = std::process::Command::new("/bin/true");
    helper.uid(uid).gid(uid);
    // SAFETY: kill is async-signal-safe. kill(-1) reaches every process the caller may signal
    // except itself: with this uid, exactly the run's processes.
    unsafe {
        helper.pre_exec(|| {
            libc::kill(-1, libc::SIGKILL);
            Ok(())
        });
    }
    let _ = helper.status();
}

mod landlock;

use landlock::LANDLOCK_CREATE_RULESET_VERSION;
pub use landlock::{landlock_ruleset, LandlockRuleset, READABLE_SYSTEM_PATHS};

/// What the child applies to itself between fork and exec.
#[derive(Debug, Clone, Copy)]
pub struct ChildSandbox {
    /// The limits.
    pub limits: ResourceLimits,
    /// Enter new user, network and pid namespaces.
    pub namespaces: bool,
    /// The Landlock ruleset to restrict R to, if any.
    pub landlock_fd: Option<RawFd>,
    /// The server's pid: a child that finds another parent (the server died before the
    /// parent-death signal was armed) ends at once.
    pub server_pid: libc::pid_t,
}

/// Exit status of the run's supervisor when its own set-up failed after the fork.
pub const SUPERVISOR_SETUP_FAILED: i32 = 125;

/// In the child of the server: sandboxes itself and splits into three processes, so that
/// nothing R starts can outlive the run:
///
/// 1. the *supervisor* (the server's child) arms `PR_SET_PDEATHSIG`, sets
///    `PR_SET_NO_NEW_PRIVS`, enters new user, network and pid namespaces, sets the resource
///    limits (after the user namespace, so that `RLIMIT_NPROC` counts this run's processes,
///    not every process of the server's user), and forks
/// 2. the run's *init*, pid 1 of the new pid namespace (a child subreaper when there is none),
///    which forks
/// 3. R, which applies Landlock and returns to exec `Rscript`.
///
/// When R ends, init reaps it, kills every other process of the namespace (one that called
/// `setsid` included: it is still in the namespace) or, without a pid namespace, every
/// descendant it inherited as subreaper, and passes R's wait status to the supervisor, which
/// ends the same way (same exit code, or same signal). The server sees one child that behaves
/// like R. Each of the three dies with its parent, so a killed server takes the run with it,
/// and when init dies the kernel kills the whole pid namespace.
///
/// # Safety
/// Call only between fork and exec (from `pre_exec`): it makes only async-signal-safe calls.
/// The parent-death signal fires when the *thread* that spawned the child ends, so spawn from
/// a thread that lives as long as the run (a runtime worker, not a blocking-pool thread).
pub unsafe fn enter_sandbox_in_child(sandbox: &ChildSandbox) -> std::io::Result<()> {
    let os_error = std::io::Error::last_os_error;
    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
        return Err(os_error());
    }
    if libc::getppid() != sandbox.server_pid {
        libc::_exit(SUPERVISOR_SETUP_FAILED);
    }
    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
        return Err(os_error());
    }
    if sandbox.namespaces && libc::unshare(NAMESPACE_FLAGS) != 0 {
        return Err(os_error());
    }
    set_limits(&sandbox.limits)?;
    let mut status_pipe = [0 as libc::c_int; 2];
    if libc::pipe2(status_pipe.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
        return Err(os_error());
    }
    let [status_read, status_write] = status_pipe;
    let init = libc::fork();
    if init < 0 {
        return Err(os_error());
    }
    if init == 0 {
        libc::close(status_read);
        run_init(sandbox, status_write)?;
        // Only R returns here (to exec Rscript).
        return Ok(());
    }
    // The supervisor: hold nothing of the server's (in particular not the pipe on which the
    // server learns that exec succeeded), wait for init and end as R ended.
    close_all_descriptors_except(status_read);
    let mut ignored = 0;
    while libc::waitpid(init, &mut ignored, 0) < 0 && *libc::__errno_location() == libc::EINTR {}
    let mut status = [0u8; 4];
    let read = libc::read(status_read, status.as_mut_ptr().cast(), 4);
    if read != 4 {
        libc::_exit(SUPERVISOR_SETUP_FAILED);
    }
    end_as(libc::c_int::from_ne_bytes(status))
}

/// The run's init: forks R, reaps, ends every other process of the run, reports R's status.
unsafe fn run_init(sandbox: &ChildSandbox, status_write: libc::c_int) -> std::io::Result<()> {
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
    // Without a pid namespace, orphans of the run are re-parented here instead of to the
    // system's init, so that they can be found and ended.
    libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    let r = libc::fork();
    if r < 0 {
        libc::_exit(SUPERVISOR_SETUP_FAILED);
    }
    if r == 0 {
        libc::close(status_write);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if let Some(fd) = sandbox.landlock_fd {
            if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        return Ok(());
    }
    close_all_descriptors_except(status_write);
    let mut r_status = 0;
    loop {
        let mut status = 0;
        let pid = libc::waitpid(-1, &mut status, 0);
        if pid == r {
            r_status = status;
            break;
        }
        if pid < 0 && *libc::__errno_location() != libc::EINTR {
            break;
        }
    }
    if sandbox.namespaces {
        // pid 1 of the namespace: kill(-1) reaches every other process in it, and only those.
        libc::kill(-1, libc::SIGKILL);
    } else {
        kill_inherited_descendants();
    }
    let mut status = 0;
    while libc::waitpid(-1, &mut status, 0) > 0 || *libc::__errno_location() == libc::EINTR {}
    let bytes = r_status.to_ne_bytes();
    libc::write(status_write, bytes.as_ptr().cast(), 4);
    libc::_exit(0);
}

/// Without a pid namespace: kills this subreaper's children until none is left; each killed
/// child's own children are re-parented here and killed in the next round.
unsafe fn kill_inherited_descendants() {
    let mut path = *b"/proc/self/task/0000000000/children\0";
    let tid = libc::syscall(libc::SYS_gettid) as u64;
    // Write the tid right-aligned into the ten digits, then shift it left over the zeros.
    let mut digits = [0u8; 10];
    let mut n = tid;
    let mut len = 0;
    loop {
        digits[9 - len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 || len == 10 {
            break;
        }
    }
    let prefix = b"/proc/self/task/".len();
    let mut out = prefix;
    for &digit in &digits[10 - len..] {
        path[out] = digit;
        out += 1;
    }
    for &byte in b"/children\0" {
        path[out] = byte;
        out += 1;
    }
    for _round in 0..10_000 {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return;
        }
        let mut buffer = [0u8; 4096];
        let read = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
        libc::close(fd);
        if read <= 0 {
            return;
        }
        let mut pid: libc::pid_t = 0;
        for &byte in &buffer[..read as usize] {
            if byte.is_ascii_digit() {
                pid = pid * 10 + libc::pid_t::from(byte - b'0');
            } else if pid > 0 {
                libc::kill(pid, libc::SIGKILL);
                pid = 0;
            }
        }
        let mut status = 0;
        libc::waitpid(-1, &mut status, 0);
    }
}

/// Ends this process with `status` as a child of ours would have: the same exit code, or the
/// same signal.
unsafe fn end_as(status: libc::c_int) -> ! {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal);
    }
    libc::_exit(if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        SUPERVISOR_SETUP_FAILED
    })
}

/// Closes every descriptor but 0, 1, 2 and `keep`.
unsafe fn close_all_descriptors_except(keep: libc::c_int) {
    if keep > 3 {
        libc::syscall(libc::SYS_close_range, 3u32, (keep - 1) as u32, 0u32);
    }
    libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
}

unsafe fn set_limits(limits: &ResourceLimits) -> std::io::Result<()> {
    let set = |resource: libc::__rlimit_resource_t, value: u64| -> std::io::Result<()> {
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        if libc::setrlimit(resource, &limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    set(libc::RLIMIT_CPU, limits.cpu_seconds)?;
    set(libc::RLIMIT_AS, limits.address_space_bytes)?;
    set(libc::RLIMIT_FSIZE, limits.file_size_bytes)?;
    set(libc::RLIMIT_NPROC, limits.processes)?;
    set(libc::RLIMIT_CORE, 0)?;
    Ok(())
}
