//! Confining a stdio server: the files it may touch, no network unless granted, and bounds on its memory, processes and open files.
//!
//! A stdio server is a native program with whatever privileges its process has, so
//! what it may do is what the kernel lets it: a Landlock ruleset for the files (the
//! system's programs and libraries read-only, and what `[upstream.sandbox]` grants),
//! a network namespace of its own (no interface but a loopback that is down) with
//! Landlock's TCP rules besides, a `pids` cgroup for its processes and threads, and
//! resource limits for memory and open files. All of it is prepared in the host
//! ([`prepare`]); between fork and exec the child only makes system calls that
//! neither allocate nor take a lock ([`Prepared::apply`]). Where the kernel lacks a
//! feature a bound needs, the server does not start and its problem says which.

mod cgroup;

use std::ffi::CStr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
    path_beneath_rules,
};

pub(super) use cgroup::PidsGroup;

/// What an operator grants a stdio server (`[upstream.sandbox]`). The default grants
/// the system's programs and libraries read-only and nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildSandbox {
    /// Paths it may read and run programs from, beside the system's.
    pub read: Vec<PathBuf>,
    /// Paths it may read, write, create and remove files in.
    pub write: Vec<PathBuf>,
    /// Whether it keeps the host's network.
    pub network: bool,
    /// Bytes of private writable memory each of its processes may take.
    pub memory: u64,
    /// How many processes and threads it may run at once; 0 sets no bound of its own
    /// (where the host runs under one already, a container's).
    pub processes: u32,
    /// How many files each of its processes may hold open.
    pub open_files: u64,
}

impl Default for ChildSandbox {
    fn default() -> ChildSandbox {
        ChildSandbox {
            read: Vec::new(),
            write: Vec::new(),
            network: false,
            memory: 1 << 30,
            processes: 64,
            open_files: 1024,
        }
    }
}

/// The system's programs and libraries, read and run by any server.
const SYSTEM_READ: [&str; 8] = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"];
/// What programs read in `/etc` to start (the loader's cache, time zone, certificates,
/// names); not `/etc` itself, which holds the host's secrets (`shadow`, keys).
const SYSTEM_ETC: [&str; 21] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/ssl/openssl.cnf.d",
    "/etc/ca-certificates",
    "/etc/pki/tls/certs",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/alternatives",
    "/etc/mime.types",
    "/etc/os-release",
    "/etc/debian_version",
];
/// Devices any program may read and write.
const SYSTEM_DEVICES: [&str; 5] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];

/// A sandbox made ready in the host, applied in the child by [`Prepared::apply`].
pub(super) struct Prepared {
    ruleset: OwnedFd,
    pids: Option<PidsGroup>,
    network: bool,
    /// Whether Landlock denies TCP besides (ABI 4 and later).
    tcp_denied: bool,
    limits: [(libc::__rlimit_resource_t, libc::rlim_t); 2],
    maps: IdMaps,
}

/// What a process that is not root writes to map its own ids into a user namespace
/// of its own, which it needs for a network namespace: `"UID UID 1"`, `"GID GID 1"`.
struct IdMaps {
    uid: [u8; 32],
    gid: [u8; 32],
}

/// Makes `sandbox` ready for a server `server` runs: its ruleset, its cgroup and its
/// limits. The error names the bound the kernel cannot give and what to grant instead.
pub(super) fn prepare(server: &str, sandbox: &ChildSandbox) -> Result<Prepared, String> {
    for path in sandbox.read.iter().chain(&sandbox.write) {
        if !path.exists() {
            return Err(format!("the sandbox grants {}, which does not exist", path.display()));
        }
    }
    let (ruleset, tcp_denied) = ruleset(sandbox).map_err(|e| {
        format!("cannot confine the server's files with Landlock ({e}); the kernel needs Landlock (Linux 5.13 or later, with `landlock` among its security modules), or the server `unconfined = true`")
    })?;
    let pids = match sandbox.processes {
        0 => None,
        most => Some(PidsGroup::new(server, most).map_err(|e| {
            format!(
                "cannot bound the server's processes: {e}; set `processes = 0` in its `sandbox` to leave them unbounded"
            )
        })?),
    };
    let memory = libc::rlim_t::try_from(sandbox.memory).unwrap_or(libc::RLIM_INFINITY);
    let open_files = libc::rlim_t::try_from(sandbox.open_files).unwrap_or(libc::RLIM_INFINITY);
    Ok(Prepared {
        ruleset,
        pids,
        network: sandbox.network,
        tcp_denied,
        limits: [(libc::RLIMIT_DATA, memory), (libc::RLIMIT_NOFILE, open_files)],
        maps: IdMaps::own(),
    })
}

/// The Landlock ruleset for `sandbox` at the kernel's own ABI, and whether it denies
/// TCP (when the network is not granted and the kernel can).
fn ruleset(sandbox: &ChildSandbox) -> Result<(OwnedFd, bool), String> {
    // SAFETY: the version query takes no attributes and touches no memory.
    let version = unsafe {
        libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32 /* VERSION */)
    };
    let abi = ABI::from(i32::try_from(version).unwrap_or(0));
    if abi == ABI::Unsupported {
        return Err("the kernel has no Landlock".to_owned());
    }
    let deny_tcp = !sandbox.network && abi >= ABI::V4;
    let mut rules = Ruleset::default().set_compatibility(CompatLevel::HardRequirement);
    rules = rules.handle_access(AccessFs::from_all(abi)).map_err(|e| e.to_string())?;
    if deny_tcp {
        rules = rules.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp).map_err(|e| e.to_string())?;
    }
    if abi >= ABI::V6 {
        // Nor may it signal the host or reach its abstract sockets.
        rules = rules.scope(Scope::from_all(abi)).map_err(|e| e.to_string())?;
    }
    let read_only =
        SYSTEM_READ.iter().chain(&SYSTEM_ETC).map(Path::new).chain(sandbox.read.iter().map(PathBuf::as_path));
    let read_write = SYSTEM_DEVICES.iter().map(Path::new).chain(sandbox.write.iter().map(PathBuf::as_path));
    let created = rules
        .create()
        .and_then(|created| created.add_rules(path_beneath_rules(read_only, AccessFs::from_read(abi))))
        .and_then(|created| created.add_rules(path_beneath_rules(read_write, AccessFs::from_all(abi))))
        .map_err(|e| e.to_string())?;
    let fd: Option<OwnedFd> = created.into();
    fd.map(|fd| (fd, deny_tcp)).ok_or_else(|| "the kernel enforces no Landlock ruleset".to_owned())
}

impl IdMaps {
    fn own() -> IdMaps {
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let line = |id: u32| {
            let mut buffer = [0u8; 32];
            let text = format!("{id} {id} 1");
            buffer[..text.len()].copy_from_slice(text.as_bytes());
            buffer
        };
        IdMaps { uid: line(uid), gid: line(gid) }
    }
}

impl Prepared {
    /// Makes the child that `command` starts run inside the sandbox, which lives on
    /// in the returned cgroup (if any), to be removed once the server has ended.
    pub(super) fn apply(self, command: &mut tokio::process::Command) -> Option<PidsGroup> {
        let Prepared { ruleset, pids, network, tcp_denied, limits, maps } = self;
        let procs = pids.as_ref().map(PidsGroup::procs_fd);
        // SAFETY: between fork and exec only system calls run (write, setrlimit,
        // unshare, open, close, prctl, landlock_restrict_self) on memory made before
        // the fork; nothing is allocated and no lock is taken. `ruleset` and the
        // cgroup's file are kept open by the closure until the command is dropped.
        unsafe {
            command.pre_exec(move || {
                if let Some(procs) = procs {
                    check(libc::write(procs, c"0".as_ptr().cast(), 1) as libc::c_int)?;
                }
                for (resource, most) in limits {
                    check(libc::setrlimit(resource, &libc::rlimit { rlim_cur: most, rlim_max: most }))?;
                }
                if !network {
                    leave_network(&maps, tcp_denied)?;
                }
                check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
                let restricted = libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32);
                check(restricted as libc::c_int)
            });
        }
        pids
    }
}

/// Puts the calling (forked) process in a network namespace of its own: directly
/// where it may (root), inside a user namespace of its own where it may not. Where
/// neither is allowed (a container without `CAP_SYS_ADMIN`), Landlock's denial of
/// TCP is what is left, and without it the server does not start.
///
/// # Safety
/// Only between fork and exec: no allocation, async-signal-safe calls only.
unsafe fn leave_network(maps: &IdMaps, tcp_denied: bool) -> std::io::Result<()> {
    // SAFETY: unshare and the writes below touch only the process's own namespaces.
    unsafe {
        if libc::unshare(libc::CLONE_NEWNET) == 0 {
            return Ok(());
        }
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0 {
            write_file(c"/proc/self/uid_map", &maps.uid)?;
            write_file(c"/proc/self/setgroups", b"deny")?;
            return write_file(c"/proc/self/gid_map", &maps.gid);
        }
    }
    if tcp_denied { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// Writes `bytes` (up to their first NUL) to the file `path`.
///
/// # Safety
/// As [`leave_network`].
unsafe fn write_file(path: &CStr, bytes: &[u8]) -> std::io::Result<()> {
    let length = bytes.iter().position(|byte| *byte == 0).unwrap_or(bytes.len());
    // SAFETY: `path` is NUL-terminated and `bytes` lives across the calls.
    unsafe {
        let fd: RawFd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        check(fd)?;
        let written = libc::write(fd, bytes.as_ptr().cast(), length);
        libc::close(fd);
        check(written as libc::c_int)
    }
}

fn check(result: libc::c_int) -> std::io::Result<()> {
    if result < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
}
