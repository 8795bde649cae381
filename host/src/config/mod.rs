//! The operator's configuration files: `toolhost.toml` and the manifest beside each
//! component.

mod host_config;
mod tokens;

pub use crate::manifest::{Manifest, ToolManifest, load as load_manifest};
pub use crate::units::{parse_duration, parse_size};
pub use host_config::{ConfigError, DEFAULT_CONFIG, HostConfig};
