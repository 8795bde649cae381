//! A component's native code, resident while it is useful.
//!
//! Everything a listing or a policy needs of a component (its tools, schemas, limits,
//! grants) stays loaded as long as it is served; only its schemas' compiled validators
//! leave when it idles (`LoadedComponent::drop_if_idle`). Its native code, and what
//! wasmtime keeps beside it to instantiate it, is the bulk of its memory, and can change
//! under it:
//!
//! - **tiers**: code Winch compiled at load is replaced by Cranelift's as soon as the
//!   background compile finishes ([`Resident::install`]);
//! - **idle code**: code that the compile cache holds and that no call used for a while
//!   is dropped ([`Resident::evict_if_idle`]), and mapped from the cache again by the
//!   next call ([`Resident::code`]), which costs about a millisecond for a small
//!   component.
//!
//! A call takes an `Arc` of the code it starts with, so neither ever harms a call in
//! flight.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use wasmtime::Engine;
use wasmtime::component::{Component, InstancePre};

use super::plain::{self, Docs, PlainCall};
use crate::contract::PluginPre;
use crate::runtime::{Tier, TierEngine, coarse_now_ms};
use crate::sandbox::SandboxState;
use crate::sources::component::Contract;
use crate::tool::ToolDef;

/// Native code of one compilation of a component, linked and ready to instantiate.
pub(crate) struct Code {
    /// The compiler that made it.
    pub tier: Tier,
    /// The engine it belongs to: its stores come from this engine.
    pub engine: Engine,
    pub kind: CodeKind,
}

/// How the tools of the code are reached.
pub(crate) enum CodeKind {
    Toolbox(PluginPre<SandboxState>),
    /// The instance, and how to call the function of each tool (in the order of the
    /// component's tools).
    Plain {
        pre: InstancePre<SandboxState>,
        calls: Vec<PlainCall>,
    },
}

impl Code {
    /// Links a compiled `component` for calls to `tools`, reached as `contract` says.
    pub fn link(
        engine: &TierEngine,
        component: &Component,
        contract: &Contract,
        tools: &[ToolDef],
    ) -> Result<Code, String> {
        let pre = engine.linker.instantiate_pre(component).map_err(|e| format!("{e:#}"))?;
        let kind = match contract {
            Contract::Toolbox { .. } => CodeKind::Toolbox(PluginPre::new(pre).map_err(|e| format!("{e:#}"))?),
            Contract::Plain { .. } => {
                let mut reflected = plain::reflect(&engine.engine, component, &Docs::default()).tools;
                let mut calls = Vec::with_capacity(tools.len());
                for tool in tools {
                    let position = reflected
                        .iter()
                        .position(|served| served.def.name() == tool.name())
                        .ok_or_else(|| format!("this compilation has no function for the tool `{}`", tool.name()))?;
                    calls.push(reflected.swap_remove(position).call);
                }
                CodeKind::Plain { pre, calls }
            }
        };
        Ok(Code { tier: engine.tier, engine: engine.engine.clone(), kind })
    }

    /// The compiled component this code links.
    pub fn component(&self) -> &Component {
        match &self.kind {
            CodeKind::Toolbox(pre) => pre.instance_pre().component(),
            CodeKind::Plain { pre, .. } => pre.component(),
        }
    }
}

/// The code of a component, when resident, and when it was last used.
pub(crate) struct Resident {
    /// Read by every call, written only when code is installed, restored or evicted: no
    /// lock that the cores running calls would all write.
    current: ArcSwapOption<Code>,
    /// The compile cache holds the component's optimized code, so resident code may be
    /// dropped and mapped again later.
    restorable: AtomicBool,
    /// Milliseconds since [`clock_start`] of the last call that took the code.
    last_used: AtomicU64,
    /// One restore at a time; calls that arrive meanwhile wait for it.
    restoring: tokio::sync::Mutex<()>,
}

impl Resident {
    /// Code just loaded (and used for loading, so it counts as used now).
    pub fn new(code: Code, restorable: bool) -> Resident {
        Resident {
            current: ArcSwapOption::from_pointee(code),
            restorable: AtomicBool::new(restorable),
            last_used: AtomicU64::new(coarse_now_ms()),
            restoring: tokio::sync::Mutex::new(()),
        }
    }

    /// The resident code, if any.
    pub fn current(&self) -> Option<Arc<Code>> {
        self.current.load_full()
    }

    /// Whether the compile cache holds the code.
    pub fn restorable(&self) -> bool {
        self.restorable.load(Ordering::Relaxed)
    }

    /// The tier of the resident code, if any.
    pub fn tier(&self) -> Option<Tier> {
        self.current().map(|code| code.tier)
    }

    /// The code for a call: the resident code, or the code `restore` makes (mapped from
    /// the compile cache), which then stays resident.
    pub async fn code<F>(&self, restore: impl FnOnce() -> F) -> Result<Arc<Code>, String>
    where
        F: Future<Output = Result<Code, String>>,
    {
        self.used_now();
        if let Some(code) = self.current() {
            return Ok(code);
        }
        let _one_restore = self.restoring.lock().await;
        if let Some(code) = self.current() {
            return Ok(code);
        }
        let code = Arc::new(restore().await?);
        self.current.store(Some(code.clone()));
        // The restore's end counts as a use too: on a loaded machine mapping can take
        // longer than the idle time, and the code would leave before its call ran.
        self.used_now();
        Ok(code)
    }

    /// Stamps the code as used now. Written only when the coarse clock moved since the
    /// last stamp (every tick, not every call), so that calls on several cores do not
    /// take the stamp's cache line from one another on every call.
    fn used_now(&self) {
        let now = coarse_now_ms();
        if self.last_used.load(Ordering::Relaxed) != now {
            self.last_used.store(now, Ordering::Relaxed);
        }
    }

    /// Makes `code` the code of the next calls (optimized code replacing baseline code).
    pub fn install(&self, code: Code, restorable: bool) {
        let previous = self.current.swap(Some(Arc::new(code)));
        self.restorable.store(restorable, Ordering::Relaxed);
        // Unmapped here, unless a call still holds it.
        drop(previous);
    }

    /// Whether no call took the code for `idle`.
    pub fn idle_for(&self, idle: Duration) -> bool {
        let unused_for = coarse_now_ms().saturating_sub(self.last_used.load(Ordering::Relaxed));
        u128::from(unused_for) >= idle.as_millis()
    }

    /// Drops the resident code if the cache can give it back and no call took it for
    /// `idle`; says whether it did.
    pub fn evict_if_idle(&self, idle: Duration) -> bool {
        if !self.restorable.load(Ordering::Relaxed) || !self.idle_for(idle) {
            return false;
        }
        self.current.swap(None).is_some()
    }
}

/// Gives the memory that loading or dropping code freed back to the operating system
/// now. A load frees megabytes of temporary buffers at once (every component's bytes
/// are read whole): jemalloc (the binary's allocator, `allocator.rs`) would give them
/// back a second later, so a host listed right after its start still held them; glibc,
/// which a program embedding toolhost on its default allocator uses, would keep them in
/// its arenas.
pub(crate) fn return_freed_memory() {
    crate::allocator::purge_arenas();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}
