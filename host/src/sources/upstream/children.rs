//! Stopping a stdio server for good: its process group, a grace period, then SIGKILL.
//!
//! A server's child may ignore the end of its input, ignore SIGTERM, or start children
//! of its own; rmcp kills only the process it started. So each child leads a process
//! group of its own ([`confine`]), and when its connection ends (the server is no
//! longer declared, the host is dropped, the call of a one-shot command is done) the
//! [`ChildGroup`] is sent SIGTERM at once and SIGKILL after [`GRACE`]. The child also
//! dies with the host's thread that started it (`PR_SET_PDEATHSIG`), so a host killed
//! outright takes its servers along; [`stop_all`] lets a process that is about to exit
//! wait out the grace period first.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a server has to exit after SIGTERM.
pub const GRACE: Duration = Duration::from_secs(2);

/// A child's process group, ended when this is dropped.
pub(super) struct ChildGroup {
    pgid: libc::pid_t,
}

/// Makes the child `command` starts lead a process group of its own and die with the
/// thread that starts it.
// The thread is a runtime worker of the supervisor's task, which lives as long as the
// runtime; an embedder that retires a worker thread early (`block_in_place`, whose
// thread may later leave the blocking pool) would end the children started on it, and
// the supervisor would start them again as after a crash.
pub(super) fn confine(command: &mut tokio::process::Command) {
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
    /// The group `pid` leads (a child started after [`confine`]).
    pub(super) fn led_by(pid: u32) -> Option<ChildGroup> {
        libc::pid_t::try_from(pid).ok().filter(|pid| *pid > 1).map(|pgid| ChildGroup { pgid })
    }
}

impl Drop for ChildGroup {
    fn drop(&mut self) {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
        unsafe { libc::kill(-self.pgid, libc::SIGTERM) };
        ending().lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((self.pgid, Instant::now() + GRACE));
        reaper();
    }
}

/// Groups sent SIGTERM, with when they get SIGKILL.
fn ending() -> &'static Mutex<Vec<(libc::pid_t, Instant)>> {
    static ENDING: OnceLock<Mutex<Vec<(libc::pid_t, Instant)>>> = OnceLock::new();
    ENDING.get_or_init(Mutex::default)
}

/// Whether any process of the group `pgid` is left.
fn alive(pgid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

fn kill(pgid: libc::pid_t) {
    // SAFETY: as above.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
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
    ending.retain(|(pgid, deadline)| {
        if !alive(*pgid) {
            return false;
        }
        if now >= *deadline {
            kill(*pgid);
            return false;
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
