//! The background compile that replaces baseline code with optimized code.
//!
//! A component the compile cache did not hold answers its first calls with Winch's code.
//! Each such component is queued here; one thread, at a lower scheduling priority than
//! the threads serving calls, compiles it with Cranelift (single-threaded, so it takes
//! a spare core, not every core), writes the code to the compile cache, and installs it
//! as the component's code. Calls that started on the baseline code finish on it; the
//! next ones get the optimized code. A failure only leaves the baseline code serving.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Weak};

use wasmtime::component::Component;

use crate::host::Core;
use crate::registry::component::LoadedComponent;
use crate::registry::loader::{Upgrade, store};
use crate::registry::resident::Code;

/// How much less the compiling thread gets scheduled than the threads serving calls
/// (a `nice` increment).
const BACKGROUND_NICENESS: i32 = 10;

/// The queue of components waiting for optimized code, and its worker thread.
pub(crate) struct Optimizer {
    jobs: Sender<Job>,
    pending: Arc<AtomicUsize>,
}

struct Job {
    component: Weak<LoadedComponent>,
    upgrade: Upgrade,
}

impl Optimizer {
    /// Starts the worker; it stops when the optimizer and the host are gone.
    pub fn start(core: Weak<Core>) -> std::io::Result<Optimizer> {
        let (jobs, queue) = channel();
        let pending = Arc::new(AtomicUsize::new(0));
        let counter = pending.clone();
        std::thread::Builder::new().name("toolhost-optimize".into()).spawn(move || work(core, queue, counter))?;
        Ok(Optimizer { jobs, pending })
    }

    /// Queues `component`'s baseline code for replacement.
    pub fn enqueue(&self, component: &Arc<LoadedComponent>, upgrade: Upgrade) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        if self.jobs.send(Job { component: Arc::downgrade(component), upgrade }).is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Components queued or being compiled.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }
}

fn work(core: Weak<Core>, queue: Receiver<Job>, pending: Arc<AtomicUsize>) {
    lower_priority();
    while let Ok(job) = queue.recv() {
        // A component replaced or removed meanwhile needs no better code.
        if let (Some(core), Some(component)) = (core.upgrade(), job.component.upgrade()) {
            optimize(&core, &component, &job.upgrade);
        }
        pending.fetch_sub(1, Ordering::SeqCst);
    }
}

fn optimize(core: &Core, component: &LoadedComponent, upgrade: &Upgrade) {
    let file = component.path.display();
    let compiled = match Component::new(&core.optimized.engine, &upgrade.bytes) {
        Ok(compiled) => compiled,
        Err(e) => {
            tracing::warn!(%file, "the optimizing compile failed; the baseline code keeps serving: {e:#}");
            return;
        }
    };
    let (compiled, cached) = store(core, &component.hash, compiled);
    match Code::link(&core.optimized, &compiled, &component.contract, &component.tools) {
        Ok(code) => {
            component.resident.install(code, cached);
            tracing::debug!(%file, "optimized code installed");
        }
        Err(e) => tracing::warn!(%file, "the optimized code cannot be linked; the baseline code keeps serving: {e}"),
    }
}

/// Makes this thread yield to the threads serving calls (Linux schedules threads, so
/// `setpriority` of thread id 0 is this thread alone).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority has no memory-safety preconditions; failure leaves the
    // priority as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, BACKGROUND_NICENESS);
    }
}
