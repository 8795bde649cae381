//! The operator's configuration files: `toolhost.toml` and the manifest beside each
//! component.

mod host_config;
mod limits;
pub(crate) mod manifest;
mod tokens;
pub(crate) mod units;

pub use host_config::{ConfigError, DEFAULT_CONFIG, HostConfig};
pub use manifest::{Manifest, ToolManifest, load as load_manifest};
pub use units::{parse_duration, parse_size};
