//! What a host drops while it is not used: the code and compiled schemas of idle components.

use std::sync::Weak;
use std::time::Duration;

use arc_swap::ArcSwap;

use super::ToolHost;
use crate::registry::Snapshot;
use crate::sources::return_freed_memory;

impl ToolHost {
    /// How long what can be rebuilt cheaply stays in memory without use
    /// ([`EngineSettings::drop_idle_code_after`](crate::EngineSettings::drop_idle_code_after)).
    pub(crate) fn idle_after(&self) -> Duration {
        self.loaders.components.runtime.settings().drop_idle_code_after
    }
}

/// Runs `sweep` over what `owner` holds for as long as it lives, every twelfth of
/// `idle` (so what idles leaves at most that late; a look is a few atomic loads per
/// item, cheap even every few seconds). When a sweep drops anything (`sweep` returns how
/// many), the heap it freed goes back to the OS.
pub(crate) fn sweep_idle<T: Send + Sync + 'static>(
    owner: Weak<T>,
    idle: Duration,
    what: &'static str,
    sweep: impl Fn(&T) -> usize + Send + 'static,
) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval((idle / 12).max(Duration::from_millis(250)));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(owner) = owner.upgrade() else { return };
            let dropped = sweep(&owner);
            if dropped > 0 {
                return_freed_memory();
                tracing::debug!(dropped, what, "idle memory dropped");
            }
        }
    });
}

/// Drops the native code and compiled schemas of the served components that no call
/// used for `idle`, for as long as the host lives.
pub(super) fn drop_idle_code(snapshot: Weak<ArcSwap<Snapshot>>, idle: Duration) {
    sweep_idle(snapshot, idle, "code and compiled schemas of idle components", move |snapshot| {
        let snapshot = snapshot.load();
        let components = snapshot.components.iter().filter_map(|slot| slot.loaded.as_ref());
        components.filter(|component| component.drop_if_idle(idle)).count()
    });
}
