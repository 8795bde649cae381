//! The operator's configuration files: `toolhost.toml` and the manifest beside each
//! component.

mod host_config;
mod tokens;
mod watch;

pub use host_config::{ConfigError, DEFAULT_CONFIG, HostConfig};
