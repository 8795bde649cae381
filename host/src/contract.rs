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
    imports: {
        "toolhost:tool/host.elicit": async,
        "toolhost:tool/host.sample": async,
    },
    exports: { default: async },
});

/// The export, of type `func()`, that a pre-initializer (`toolhost preinit`,
/// wasmtime-wizer) calls once before it snapshots a component, unless told another: the
/// name the guest SDK's `preinit!` exports. A host never calls it, and it is no tool.
pub const PREINIT_EXPORT: &str = "wizer-initialize";

use self::toolhost::tool::host as guest;
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

impl From<LogLevel> for crate::client::LogLevel {
    fn from(level: LogLevel) -> Self {
        match level {
            LogLevel::Trace => crate::client::LogLevel::Trace,
            LogLevel::Debug => crate::client::LogLevel::Debug,
            LogLevel::Info => crate::client::LogLevel::Info,
            LogLevel::Warn => crate::client::LogLevel::Warn,
            LogLevel::Error => crate::client::LogLevel::Error,
        }
    }
}

impl From<guest::Content> for crate::content::Content {
    fn from(block: guest::Content) -> Self {
        use crate::content::{Content, ResourceContents};
        match block {
            guest::Content::Text(text) => Content::Text(text),
            guest::Content::Image(media) => Content::Image { data: media.data, mime_type: media.mime_type },
            guest::Content::Audio(media) => Content::Audio { data: media.data, mime_type: media.mime_type },
            guest::Content::ResourceLink(link) => Content::ResourceLink {
                uri: link.uri,
                name: link.name,
                description: link.description,
                mime_type: link.mime_type,
            },
            guest::Content::Resource(resource) => Content::Resource {
                uri: resource.uri,
                mime_type: resource.mime_type,
                contents: match resource.contents {
                    guest::ResourceContents::Text(text) => ResourceContents::Text(text),
                    guest::ResourceContents::Blob(data) => ResourceContents::Blob(data),
                },
            },
        }
    }
}

impl From<crate::client::ClientError> for guest::ClientError {
    fn from(error: crate::client::ClientError) -> Self {
        use crate::client::ClientError;
        match error {
            ClientError::NotGranted(reason) => guest::ClientError::NotGranted(reason),
            ClientError::Unsupported(reason) => guest::ClientError::Unsupported(reason),
            ClientError::Failed(reason) => guest::ClientError::Failed(reason),
        }
    }
}

impl From<crate::client::ElicitAnswer> for guest::ElicitAnswer {
    fn from(answer: crate::client::ElicitAnswer) -> Self {
        use crate::client::ElicitAnswer;
        match answer {
            ElicitAnswer::Accept(values) => guest::ElicitAnswer::Accept(values.to_string()),
            ElicitAnswer::Decline => guest::ElicitAnswer::Decline,
            ElicitAnswer::Cancel => guest::ElicitAnswer::Cancel,
        }
    }
}

impl From<guest::SamplingRequest> for crate::client::SamplingRequest {
    fn from(request: guest::SamplingRequest) -> Self {
        use crate::client::Role;
        let role = |role: guest::Role| match role {
            guest::Role::User => Role::User,
            guest::Role::Assistant => Role::Assistant,
        };
        crate::client::SamplingRequest {
            messages: request.messages.into_iter().map(|m| (role(m.role), m.text)).collect(),
            system_prompt: request.system_prompt,
            max_tokens: request.max_tokens,
        }
    }
}

impl From<crate::client::SamplingReply> for guest::SamplingReply {
    fn from(reply: crate::client::SamplingReply) -> Self {
        guest::SamplingReply { text: reply.text, model: reply.model, stop_reason: reply.stop_reason }
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
