//! The operator's configuration files: `toolhost.toml` and the manifest beside each
//! component.

pub mod host_config;
mod limits;
pub mod manifest;
pub mod units;
