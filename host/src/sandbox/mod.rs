//! One fresh sandbox per guest call: a new store with the call's limits and exactly the component's grants.
//!
//! One fresh sandbox per guest call: a new `Store` with the call's limits, a WASI context
//! holding exactly the component's grants, and an instance from the cached `InstancePre`.
//!
//! Everything a call can consume is bounded here: fuel (instructions), linear memory and
//! tables (through [`limits::CallLimiter`]), wall-clock time (epoch deadline plus an async
//! timeout for time spent blocked in host calls), and captured output.

mod config;
mod grants;
mod keyvalue;
mod limits;
mod outbound;
mod output;
mod state;
mod store;

pub use grants::{Capabilities, Capability, FileGrant, Grants};
pub use limits::TABLE_ELEMENTS_LIMIT;
pub use outbound::{DeniedRequest, HostPattern, Resolve, SystemResolver};
pub(crate) use outbound::{checked_address, send_pinned};
pub use output::{CapturedOutput, LogLine};
pub(crate) use state::{SandboxState, new_linker, provided_interfaces};
pub(crate) use store::{KeptStore, Run, Sandbox, Services};
