//! The Landlock ruleset of a run, built in the parent before the fork: reads beneath the
//! system's paths and the run's directory, writes beneath the run's directory only, TCP denied.

use super::*;

pub(super) const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
const LANDLOCK_RULE_PATH_BENEATH: u32 = 1;

// Filesystem access rights (linux/landlock.h).
const ACCESS_FS_EXECUTE: u64 = 1 << 0;
const ACCESS_FS_WRITE_FILE: u64 = 1 << 1;
const ACCESS_FS_READ_FILE: u64 = 1 << 2;
const ACCESS_FS_READ_DIR: u64 = 1 << 3;
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

const READ_ACCESS: u64 = ACCESS_FS_EXECUTE | ACCESS_FS_READ_FILE | ACCESS_FS_READ_DIR;

/// What R may read (and execute) besides its working directory: the system's programs and
/// libraries (R's own library under /usr/lib/R and /usr/local/lib/R), configuration (/etc,
/// fontconfig), fonts (/usr/share/fonts) and devices such as /dev/urandom. Not /proc: as the
/// same user it would show the server's environment and memory maps. Not /tmp, /home, /root,
/// /srv, /var/lib or wherever the data directory lives.
pub const READABLE_SYSTEM_PATHS: [&str; 9] = [
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc",
    "/dev",
    "/var/cache/fontconfig",
];

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

/// A Landlock ruleset built in the parent, applied in the child by [`enter_sandbox_in_child`].
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

    /// The ruleset's descriptor, for [`enter_sandbox_in_child`] in the child.
    pub fn fd(&self) -> RawFd {
        self.fd
    }
}

/// Reads only beneath [`READABLE_SYSTEM_PATHS`], `extra_readable` (the directory of a
/// configured Rscript) and `run_dir`; writes only beneath `run_dir` (and to `/dev/null`); TCP
/// connect and bind denied from ABI 4 on.
pub fn landlock_ruleset(
    abi: u32,
    run_dir: &Path,
    extra_readable: &[&Path],
) -> std::io::Result<LandlockRuleset> {
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
        handled_access_fs: write_access | READ_ACCESS,
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
    let file_write = ACCESS_FS_WRITE_FILE | if abi >= 3 { ACCESS_FS_TRUNCATE } else { 0 };
    ruleset.allow_beneath(run_dir, write_access | READ_ACCESS)?;
    ruleset.allow_beneath(Path::new("/dev/null"), file_write | ACCESS_FS_READ_FILE)?;
    for path in READABLE_SYSTEM_PATHS
        .iter()
        .map(Path::new)
        .chain(extra_readable.iter().copied())
    {
        match ruleset.allow_beneath(path, READ_ACCESS) {
            Ok(()) => {}
            // A system without /lib32 (say) simply has nothing there to read.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
    }
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
        // Rights that only make sense on directories are refused on a file.
        let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
        let access = if is_dir {
            access
        } else {
            access
                & (ACCESS_FS_EXECUTE
                    | ACCESS_FS_WRITE_FILE
                    | ACCESS_FS_READ_FILE
                    | ACCESS_FS_TRUNCATE)
        };
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
