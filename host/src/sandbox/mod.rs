//! One fresh sandbox per guest call: a new `Store` with the call's limits, a WASI context
//! holding exactly the component's grants, and an instance from the cached `InstancePre`.
//!
//! Everything a call can consume is bounded here: fuel (instructions), linear memory and
//! tables (through [`limits::CallLimiter`]), wall-clock time (epoch deadline plus an async
//! timeout for time spent blocked in host calls), and captured output.

pub mod grants;
pub(crate) mod keyvalue;
pub mod limits;
pub mod outbound;
pub mod output;
mod state;
mod store;

pub(crate) use state::{SandboxState, new_linker};
pub(crate) use store::{Operation, Returned, Services, run};

use wasmtime::Engine;
use wasmtime::component::Linker;

use crate::error::BuildError;
use crate::runtime::engine::{EngineSettings, Tier};

/// An engine of one tier, and everything a guest may import linked for it.
pub(crate) struct TierEngine {
    pub tier: Tier,
    pub engine: Engine,
    pub linker: Linker<SandboxState>,
}

impl TierEngine {
    pub fn new(settings: &EngineSettings, tier: Tier) -> Result<TierEngine, BuildError> {
        let engine = crate::runtime::engine::new_engine(settings, tier)?;
        let linker = new_linker(&engine)?;
        Ok(TierEngine { tier, engine, linker })
    }
}
