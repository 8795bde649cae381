//! A `pids` cgroup per stdio server: how many processes and threads it may run at once.
//!
//! Resource limits cannot do this: `RLIMIT_NPROC` counts every process of a user and
//! is not enforced for root at all. The cgroup is made beside or below the host's own
//! (cgroup v1 below it; v2 below it where it delegates `pids`, else beside it, since
//! v2 lets no cgroup hold processes and children with controllers at once), joined by
//! the child before it runs the server, and removed once every process in it ended.
//! It also lets the host end processes that left the server's process group.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A server's own `pids` cgroup, removed (when empty) by [`PidsGroup::remove`].
pub(in crate::sources::upstream) struct PidsGroup {
    dir: PathBuf,
    /// Its `cgroup.procs`, open for the child to write itself into.
    procs: OwnedFd,
}

impl PidsGroup {
    /// A new cgroup for a server of `server`, bounded to `most` tasks.
    pub(super) fn new(server: &str, most: u32) -> Result<PidsGroup, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let parent = parent_dir()?;
        remove_abandoned(&parent);
        let dir =
            parent.join(format!("toolhost-{}-{server}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot make the cgroup {}: {e}", dir.display()))?;
        let made = std::fs::write(dir.join("pids.max"), most.to_string())
            .map_err(|e| format!("cannot write {}: {e}", dir.join("pids.max").display()))
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(dir.join("cgroup.procs"))
                    .map_err(|e| format!("cannot open {}: {e}", dir.join("cgroup.procs").display()))
            });
        match made {
            Ok(procs) => Ok(PidsGroup { dir, procs: procs.into() }),
            Err(problem) => {
                let _ = std::fs::remove_dir(&dir);
                Err(problem)
            }
        }
    }

    pub(super) fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// The processes in it now.
    fn members(&self) -> Vec<libc::pid_t> {
        let listed = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        listed.lines().filter_map(|line| line.trim().parse().ok()).collect()
    }

    /// Whether any process is left in it.
    pub(in crate::sources::upstream) fn occupied(&self) -> bool {
        !self.members().is_empty()
    }

    /// Sends `signal` to every process in it, wherever its process group.
    pub(in crate::sources::upstream) fn signal(&self, signal: libc::c_int) {
        for pid in self.members() {
            // SAFETY: kill(2) touches no memory.
            unsafe { libc::kill(pid, signal) };
        }
    }

    /// Removes it; false while a process is left in it.
    pub(in crate::sources::upstream) fn remove(&self) -> bool {
        std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists()
    }
}

/// Where a server's cgroup is made: the host's own `pids` cgroup (v1, or v2 when it
/// enables `pids` for its children), else its parent (v2).
fn parent_dir() -> Result<PathBuf, String> {
    let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| format!("/proc/self/cgroup: {e}"))?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
    for line in own.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        if controllers.split(',').any(|controller| controller == "pids")
            && let Some(dir) = mounted(&mounts, "cgroup", path)
            && dir.join("cgroup.procs").exists()
        {
            return Ok(dir);
        }
        if controllers.is_empty()
            && let Some(dir) = mounted(&mounts, "cgroup2", path)
        {
            let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
            if enabled.split_whitespace().any(|controller| controller == "pids") {
                return Ok(dir);
            }
            if dir.join("pids.max").exists()
                && let Some(parent) = dir.parent()
            {
                return Ok(parent.to_owned());
            }
        }
    }
    Err("no `pids` cgroup controller is mounted for this process".to_owned())
}

/// The directory of the cgroup `path` in the hierarchy mounted as `kind` (`cgroup`
/// with the `pids` controller, or `cgroup2`), per `/proc/self/mountinfo`.
fn mounted(mountinfo: &str, kind: &str, path: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (mount, fs) = line.split_once(" - ")?;
        let mut fs = fs.split_whitespace();
        let (fs_type, _source, options) = (fs.next()?, fs.next()?, fs.next().unwrap_or_default());
        let has_pids = options.split(',').any(|option| option == "pids");
        if fs_type != kind || (kind == "cgroup" && !has_pids) {
            return None;
        }
        let mut fields = mount.split_whitespace();
        let (root, point) = (fields.nth(3)?, fields.next()?);
        let below = path.strip_prefix(root).unwrap_or(path).trim_start_matches('/');
        Some(Path::new(point).join(below))
    })
}

/// Removes the empty cgroups of hosts that are gone (a host killed outright leaves its
/// servers' cgroups behind).
fn remove_abandoned(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|name| name.strip_prefix("toolhost-")?.split('-').next()) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}
