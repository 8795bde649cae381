//! The `toolhost:tool` WIT contract: host bindings and the version check at load.
//!
//! The host speaks every 0.1.x of the package. When a breaking 0.2.0 arrives, its WIT is
//! frozen beside this one, bound in a module of its own, and converted into the latest
//! types here; older components keep loading.

use wasmtime::Engine;
use wasmtime::component::Component;

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
    exports: { default: async },
});

pub use self::toolhost::tool::host::{CallerInfo, LogLevel};
pub use exports::toolhost::tool::toolbox::{ToolError as GuestToolError, ToolInfo as GuestToolInfo};

impl From<GuestToolError> for crate::tool::ToolError {
    fn from(failure: GuestToolError) -> Self {
        match failure {
            GuestToolError::InvalidInput(reason) => crate::tool::ToolError::InvalidInput(reason),
            GuestToolError::Failed(message) => crate::tool::ToolError::Failed(message),
        }
    }
}

/// The contract's package name.
pub const PACKAGE: &str = "toolhost:tool";
/// The interface a tool component must export.
pub const TOOLBOX_INTERFACE: &str = "toolhost:tool/toolbox";
/// Semver-compatible series of the contract this host accepts, newest first.
pub const SUPPORTED_SERIES: &[&str] = &["0.1"];

/// Which contract version a component was built against, read from its exports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContractCheck {
    Supported { version: String },
    Unsupported { version: String },
    Missing,
}

pub fn check(engine: &Engine, component: &Component) -> ContractCheck {
    let ty = component.component_type();
    let exported_version = ty.exports(engine).find_map(|(name, _)| toolbox_version(name).map(str::to_owned));
    match exported_version {
        Some(version) if is_supported(&version) => ContractCheck::Supported { version },
        Some(version) => ContractCheck::Unsupported { version },
        None => ContractCheck::Missing,
    }
}

/// The version of a `toolhost:tool/toolbox[@version]` export name; `None` for any other
/// export, including look-alikes such as `toolhost:tool/toolbox-extra`.
fn toolbox_version(export_name: &str) -> Option<&str> {
    match export_name.strip_prefix(TOOLBOX_INTERFACE)? {
        "" => Some(""),
        rest => rest.strip_prefix('@'),
    }
}

fn is_supported(version: &str) -> bool {
    SUPPORTED_SERIES.iter().any(|series| {
        version
            .strip_prefix(series)
            .is_some_and(|rest| rest.strip_prefix('.').is_some_and(|patch| patch.bytes().all(|b| b.is_ascii_digit())))
    })
}

/// `toolhost:tool@0.1.x` for every supported series, for error messages.
pub fn supported_versions() -> Vec<String> {
    SUPPORTED_SERIES.iter().map(|series| format!("{PACKAGE}@{series}.x")).collect()
}

#[cfg(test)]
mod tests {
    use super::{is_supported, toolbox_version};

    #[test]
    fn only_the_toolbox_interface_itself_is_read_as_the_contract() {
        assert_eq!(toolbox_version("toolhost:tool/toolbox@0.1.0"), Some("0.1.0"));
        assert_eq!(toolbox_version("toolhost:tool/toolbox"), Some(""));
        assert_eq!(toolbox_version("toolhost:tool/toolbox-extra@0.1.0"), None);
        assert_eq!(toolbox_version("toolhost:tool/toolboxes"), None);
        assert_eq!(toolbox_version("other:tool/toolbox@0.1.0"), None);
    }

    #[test]
    fn only_patch_releases_of_a_supported_series_pass() {
        assert!(is_supported("0.1.0"));
        assert!(is_supported("0.1.7"));
        assert!(!is_supported("0.2.0"));
        assert!(!is_supported("0.10.0"));
        assert!(!is_supported("0.1"));
        assert!(!is_supported("0.1.0-rc1"));
        assert!(!is_supported(""));
    }
}
