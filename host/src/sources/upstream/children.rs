//! Stopping a stdio server for good: its process group, a grace period, then SIGKILL.
//!
//! A server's child may ignore the end of its input, ignore SIGTERM, or start children
//! of its own; rmcp kills only the process it started. So each child leads a process
//! group of its own ([`lead_own_group`]), and when its connection ends (the server is no
//! longer declared, the host is dropped, the call of a one-shot command is done) the
//! [`ChildGroup`] is sent SIGTERM at once and SIGKILL after [`GRACE`]. The child also
//! dies with the host's thread that started it (`PR_SET_PDEATHSIG`), so a host killed
//! outright takes its servers along; [`stop_all`] lets a process that is about to exit
//! wait out the grace period first.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::sandbox::PidsGroup;

/// How long a server has to exit after SIGTERM.
pub const GRACE: Duration = Duration::from_secs(2);

/// A child's process group, ended when this is dropped.
pub(super) struct ChildGroup {
    pgid: libc::pid_t,
    /// The server's `pids` cgroup, when it is confined: also holds the processes that
    /// left the group, and is removed once they are all gone.
    pids: Option<PidsGroup>,
}

/// Makes the child `command` starts lead a process group of its own and die with the
/// thread that starts it.
// The thread is a runtime worker of the supervisor's task, which lives as long as the
// runtime; an embedder that retires a worker thread early (`block_in_place`, whose
// thread may later leave the blocking pool) would end the children started on it, and
// the supervisor would start them again as after a crash.
pub(super) fn lead_own_group(command: &mut tokio::process::Command) {
    command.process_group(0);
    // SAFETY: only async-signal-safe calls (prctl, getppid, kill) run between fork and
    // exec, and nothing is allocated.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have gone between fork and prctl: nobody is left to end us.
            if libc::getppid() == 1 {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            Ok(())
        });
    }
}

impl ChildGroup {
    /// The group `pid` leads (a child started after [`lead_own_group`]), with the server's
    /// cgroup if it has one.
    pub(super) fn led_by(pid: Option<u32>, pids: Option<PidsGroup>) -> Option<ChildGroup> {
        let pgid = pid.and_then(|pid| libc::pid_t::try_from(pid).ok()).filter(|pid| *pid > 1);
        match pgid {
            Some(pgid) => Some(ChildGroup { pgid, pids }),
            None => {
                // The child is gone already; its cgroup goes once empty.
                if let Some(pids) = pids {
                    Ending { pgid: None, pids: Some(pids), deadline: Instant::now() }.begin(libc::SIGKILL);
                }
                None
            }
        }
    }
}

impl Drop for ChildGroup {
    fn drop(&mut self) {
        Ending { pgid: Some(self.pgid), pids: self.pids.take(), deadline: Instant::now() + GRACE }.begin(libc::SIGTERM);
    }
}

/// A server's processes after SIGTERM: its process group and its cgroup.
struct Ending {
    pgid: Option<libc::pid_t>,
    pids: Option<PidsGroup>,
    /// When they get SIGKILL.
    deadline: Instant,
}

impl Ending {
    /// Sends its processes `signal` and hands them to the reaper.
    fn begin(self, signal: libc::c_int) {
        self.signal(signal);
        ending().lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(self);
        reaper();
    }

    /// Whether any of its processes is left.
    fn alive(&self) -> bool {
        if let Some(leader) = self.pgid {
            // The leader is the host's own child: reaped here, or, once it exits while
            // the runtime that would reap it shuts down, it stays a zombie that keeps
            // its group looking alive and its cgroup from being removed.
            // SAFETY: waitpid with WNOHANG and no status pointer touches no memory; for
            // a pid that is not the host's child it fails with ECHILD.
            unsafe { libc::waitpid(leader, std::ptr::null_mut(), libc::WNOHANG) };
        }
        // SAFETY: signal 0 only checks that the group exists.
        let group = self.pgid.is_some_and(|pgid| unsafe { libc::kill(-pgid, 0) } == 0);
        group || self.pids.as_ref().is_some_and(PidsGroup::occupied)
    }

    fn signal(&self, signal: libc::c_int) {
        if let Some(pgid) = self.pgid {
            // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
            unsafe { libc::kill(-pgid, signal) };
        }
        if let Some(pids) = &self.pids {
            pids.signal(signal);
        }
    }

    /// Removes the cgroup of a server that has ended; false while it cannot yet.
    fn cleared(&self) -> bool {
        self.pids.as_ref().is_none_or(PidsGroup::remove)
    }
}

/// Servers sent SIGTERM, not yet gone.
fn ending() -> &'static Mutex<Vec<Ending>> {
    static ENDING: OnceLock<Mutex<Vec<Ending>>> = OnceLock::new();
    ENDING.get_or_init(Mutex::default)
}

/// Starts, once, the thread that sends SIGKILL to each ending group whose grace period
/// has passed (a thread, not a task: it must work while a runtime shuts down).
fn reaper() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        let started = std::thread::Builder::new().name("toolhost-reaper".into()).spawn(|| {
            loop {
                std::thread::sleep(Duration::from_millis(100));
                sweep();
            }
        });
        if let Err(e) = started {
            tracing::error!("cannot start the thread that ends upstream servers: {e}");
        }
    });
}

/// Forgets the ending groups that have exited and sends SIGKILL to those whose grace
/// period has passed; returns whether any is still in its grace period.
fn sweep() -> bool {
    let now = Instant::now();
    let mut ending = ending().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    ending.retain(|server| {
        // A cgroup that cannot be removed a grace period after SIGKILL is left to the
        // next host's clean-up, so that no one waits for it for ever.
        let given_up = now >= server.deadline + GRACE;
        if !server.alive() {
            return !server.cleared() && !given_up;
        }
        if now >= server.deadline {
            server.signal(libc::SIGKILL);
            // Its cgroup is removed at a later sweep, once the kernel took them out.
            return server.pids.is_some() && !given_up;
        }
        true
    });
    !ending.is_empty()
}

/// Waits until every server being stopped has exited, sending SIGKILL to any still
/// there when its grace period ends: for a process about to exit, whose reaper thread
/// would not outlive it.
pub fn stop_all() {
    while sweep() {
        std::thread::sleep(Duration::from_millis(20));
    }
}
