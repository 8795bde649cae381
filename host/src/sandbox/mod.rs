//! One fresh sandbox per guest call: a new `Store` with the call's limits, a WASI context
//! holding exactly the component's grants, and an instance from the cached `InstancePre`.
//!
//! Everything a call can consume is bounded here: fuel (instructions), linear memory and
//! tables (through [`limits::CallLimiter`]), wall-clock time (epoch deadline plus an async
//! timeout for time spent blocked in host calls), and captured output.

pub(crate) mod engine;
pub mod grants;
pub mod limits;
pub mod outbound;
pub mod output;
mod state;
mod store;

pub(crate) use state::{SandboxState, new_linker};
pub(crate) use store::{Operation, Returned, run};
