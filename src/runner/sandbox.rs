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

/// What isolation a run actually got; recorded in every result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IsolationReport {
    /// A new, empty network namespace (no interfaces but a down loopback).
    pub network_namespace: bool,
    /// Landlock ABI version applied, if any: writes only under the working directory, and
    /// (ABI 4 and later) no TCP connect or bind.
    pub landlock_abi: Option<u32>,
    /// The uid the process ran as, when the runner dropped privileges to a per-run uid.
    pub run_uid: Option<u32>,
}

/// What the sandbox will do, probed once per process.
#[derive(Debug, Clone, Copy)]
pub struct SandboxSupport {
    /// `unshare(CLONE_NEWUSER | CLONE_NEWNET)` works here.
    pub network_namespace: bool,
    /// The kernel's Landlock ABI version (0: none).
    pub landlock_abi: u32,
    /// The runner is root and can give each run its own uid.
    pub per_run_uid: bool,
}

/// Probes the kernel once (a short-lived child tries the namespace).
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
                if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let network_namespace = probe.status().is_ok_and(|s| s.success());
        SandboxSupport {
            network_namespace,
            landlock_abi: u32::try_from(landlock_abi).unwrap_or(0),
            per_run_uid,
        }
    })
}

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
/// bomb's survivors). A short-lived helper takes the uid and signals all its processes.
pub fn kill_all_of_uid(uid: u32) {
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

const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
const LANDLOCK_RULE_PATH_BENEATH: u32 = 1;

// Filesystem access rights (linux/landlock.h).
const ACCESS_FS_WRITE_FILE: u64 = 1 << 1;
const ACCESS_FS_REMOVE_DIR: u64 = 1 << 4;
const ACCESS_FS_REMOVE_FILE: u64 = 1 << 5;
const ACCESS_FS_MAKE_CHAR: u64 = 1 << 6;
const ACCESS_FS_MAKE_DIR: u64 = 1 << 7;
const ACCESS_FS_MAKE_REG: u64 = 1 << 8;
const ACCESS_FS_MAKE_SOCK: u64 = 1 << 9;
const ACCESS_FS_MAKE_FIFO: u64 = 1 << 10;
const ACCESS_FS_MAKE_BLOCK: u64 = 1 << 11;
const ACCESS_FS_MAKE_SYM: u64 = 1 << 12;
const ACCESS_FS_REFER: u64 = 1 << 13;
const ACCESS_FS_TRUNCATE: u64 = 1 << 14;
const ACCESS_NET_BIND_TCP: u64 = 1 << 0;
const ACCESS_NET_CONNECT_TCP: u64 = 1 << 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// A Landlock ruleset built in the parent, applied in the child by [`restrict_self`].
pub struct LandlockRuleset {
    fd: RawFd,
    abi: u32,
}

impl Drop for LandlockRuleset {
    fn drop(&mut self) {
        // SAFETY: the fd is owned by this value.
        unsafe { libc::close(self.fd) };
    }
}

impl LandlockRuleset {
    /// The ABI version the ruleset uses.
    pub fn abi(&self) -> u32 {
        self.abi
    }

    /// The ruleset's descriptor, for [`restrict_self`] in the child.
    pub fn fd(&self) -> RawFd {
        self.fd
    }
}

/// Writes allowed only beneath `writable_dir` (and to `/dev/null`); TCP connect and bind denied
/// from ABI 4 on. Reads are not restricted: R needs its library, fonts and /proc.
pub fn landlock_ruleset(abi: u32, writable_dir: &Path) -> std::io::Result<LandlockRuleset> {
    let mut write_access = ACCESS_FS_WRITE_FILE
        | ACCESS_FS_REMOVE_DIR
        | ACCESS_FS_REMOVE_FILE
        | ACCESS_FS_MAKE_CHAR
        | ACCESS_FS_MAKE_DIR
        | ACCESS_FS_MAKE_REG
        | ACCESS_FS_MAKE_SOCK
        | ACCESS_FS_MAKE_FIFO
        | ACCESS_FS_MAKE_BLOCK
        | ACCESS_FS_MAKE_SYM;
    if abi >= 2 {
        write_access |= ACCESS_FS_REFER;
    }
    if abi >= 3 {
        write_access |= ACCESS_FS_TRUNCATE;
    }
    let attr = RulesetAttr {
        handled_access_fs: write_access,
        handled_access_net: if abi >= 4 {
            ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP
        } else {
            0
        },
        scoped: 0,
    };
    let size = if abi >= 4 { 16 } else { 8 };
    // SAFETY: attr outlives the call; size covers only the fields this ABI knows.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            size as libc::size_t,
            0u32,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let ruleset = LandlockRuleset {
        fd: fd as RawFd,
        abi,
    };
    let file_access = ACCESS_FS_WRITE_FILE | if abi >= 3 { ACCESS_FS_TRUNCATE } else { 0 };
    ruleset.allow_beneath(writable_dir, write_access)?;
    ruleset.allow_beneath(Path::new("/dev/null"), file_access)?;
    Ok(ruleset)
}

impl LandlockRuleset {
    fn allow_beneath(&self, path: &Path, access: u64) -> std::io::Result<()> {
        let c_path = CString::new(path.as_os_str().as_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        // SAFETY: a valid C string; O_PATH opens without reading.
        let parent_fd = unsafe { libc::open(c_path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if parent_fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let rule = PathBeneathAttr {
            allowed_access: access,
            parent_fd,
        };
        // SAFETY: rule outlives the call; fds are valid.
        let result = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                self.fd,
                LANDLOCK_RULE_PATH_BENEATH,
                &rule as *const PathBeneathAttr,
                0u32,
            )
        };
        let error = std::io::Error::last_os_error();
        // SAFETY: our own descriptor.
        unsafe { libc::close(parent_fd) };
        if result != 0 {
            return Err(error);
        }
        Ok(())
    }
}

/// In the child: applies the limits, the network namespace and the Landlock ruleset.
///
/// # Safety
/// Call only between fork and exec (from `pre_exec`); it makes only async-signal-safe calls.
pub unsafe fn apply_in_child(
    limits: &ResourceLimits,
    network_namespace: bool,
    landlock_fd: Option<RawFd>,
) -> std::io::Result<()> {
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
    if network_namespace && libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if let Some(fd) = landlock_fd {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
