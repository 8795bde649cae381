//! The engines components run in, and the caches of their compiled code.

pub(crate) mod cache;
pub(crate) mod engine;
