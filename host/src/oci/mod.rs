//! Components from OCI registries: references, settings and errors, and the pull and push that move components.
//!
//! Components from OCI registries. `toolhost.toml` names them by reference, per layer
//! and namespace; `toolhost pull` fetches each into a local content-addressed store,
//! checking the manifest's and the layer's digests, writes it where its layer serves
//! files (`<root>/<namespace>/<name>.wasm`) and pins its digest in `toolhost.lock`;
//! hosts refuse a file whose bytes are not the ones pinned. `toolhost push` publishes a
//! component the same way. Artefacts follow the CNCF Wasm OCI layout ([`artifact`]);
//! credentials come from the Docker configuration file ([`auth`]).
//!
//! ```toml
//! [[layer]]
//! name = "org"
//! root = "org-tools"               # pulled components are written here
//! [layer.oci.weather]              # namespace `weather`
//! forecast = "oci://registry.example.com/tools/forecast:1.2"   # served as weather/forecast
//!
//! [oci]
//! plain_http = ["127.0.0.1:5000"]  # registries spoken to without TLS (default: none)
//! store = "/var/lib/toolhost/oci"  # the blob store (default: <data dir>/oci)
//! ```

mod artifact;
mod auth;
mod fetch;
mod lock;
mod pull;
mod push;
mod signature;
mod store;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::{Client, Reference};

use store::BlobStore;

pub use auth::docker_config_path;
pub use lock::{LOCK_FILE, Lock, LockError, Locked};
pub use pull::{PullMode, Pulled, pull};
pub use push::{Pushed, push};
pub use store::write_atomically;

/// The largest component layer pulled: a bound on what a registry can make a pull write.
pub const MAX_COMPONENT_SIZE: u64 = 1 << 30;

/// `oci://registry[:port]/repository[:tag | @sha256:…]`, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciReference {
    text: String,
}

impl OciReference {
    /// Reads `oci://…`; a reference without a tag or digest means `:latest`, as with
    /// every OCI tool.
    pub fn parse(text: &str) -> Result<OciReference, String> {
        let rest = text.strip_prefix("oci://").ok_or_else(|| format!("`{text}` does not start with `oci://`"))?;
        if !rest
            .split('/')
            .next()
            .is_some_and(|registry| registry.contains('.') || registry.contains(':') || registry == "localhost")
        {
            return Err(format!(
                "`{text}` names no registry host (`oci://registry.example.com/repository:tag`, or `host:port`)"
            ));
        }
        Reference::from_str(rest).map_err(|e| format!("`{text}` is not an OCI reference: {e}"))?;
        Ok(OciReference { text: text.to_owned() })
    }

    /// As written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    fn reference(&self) -> Reference {
        Reference::from_str(&self.text["oci://".len()..]).expect("checked when parsed")
    }
}

impl std::fmt::Display for OciReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// A component `toolhost.toml` names by OCI reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciComponent {
    /// The layer that serves it.
    pub layer: String,
    /// Its namespace.
    pub namespace: String,
    /// Its file name, without `.wasm`.
    pub name: String,
    /// Where it is published.
    pub reference: OciReference,
}

impl OciComponent {
    /// `<namespace>/<name>`, as the lock names it.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// The file it is served from, in its layer's root.
    pub fn path(&self, root: &Path) -> PathBuf {
        root.join(&self.namespace).join(format!("{}.wasm", self.name))
    }
}

/// `[oci]`: how registries are reached and where blobs are kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OciSettings {
    /// Registries (`host:port`) spoken to over plain HTTP; every other one over HTTPS.
    pub plain_http: Vec<String>,
    /// The blob store; `None`: `<data dir>/oci`.
    pub store: Option<PathBuf>,
}

impl OciSettings {
    fn client(&self) -> Client {
        // reqwest's rustls has no provider of its own here; ring is the process's.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Client::new(ClientConfig {
            protocol: ClientProtocol::HttpsExcept(self.plain_http.clone()),
            connect_timeout: Some(Duration::from_secs(10)),
            read_timeout: Some(Duration::from_secs(60)),
            ..ClientConfig::default()
        })
    }

    fn blob_store(&self) -> Result<BlobStore, OciError> {
        match &self.store {
            Some(dir) => Ok(BlobStore::new(dir)),
            None => crate::paths::data_dir().map(|dir| BlobStore::new(dir.join("oci"))).ok_or(OciError::NoStore),
        }
    }
}

/// Why a pull or push failed. Messages name the component and reference.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// No data directory to keep blobs in, and `[oci] store` is not set.
    #[error("no directory for the blob store: set `[oci] store` in toolhost.toml or TOOLHOST_DATA_DIR")]
    NoStore,
    /// A component's layer has no root to write the component to.
    #[error("{name}: layer `{layer}` has no `root` to write pulled components to")]
    NoRoot {
        /// The component.
        name: String,
        /// Its layer.
        layer: String,
    },
    /// The registry could not be reached, refused, or answered something else than
    /// the component.
    #[error("{name} ({reference}): {problem}")]
    Registry {
        /// The component.
        name: String,
        /// Where it was looked for.
        reference: String,
        /// What went wrong.
        problem: String,
    },
    /// Bytes that are not what their digest says.
    #[error("{name} ({reference}): {what} has digest {actual}, but {expected} was asked for; nothing was written")]
    Digest {
        /// The component.
        name: String,
        /// Where it came from.
        reference: String,
        /// The manifest or the component layer.
        what: &'static str,
        /// The digest asked for.
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// `pull --locked` met a component the lock does not pin (or pins for another
    /// reference): nothing was fetched or written.
    #[error(
        "{name} ({reference}) is not pinned in {}{}; run `toolhost pull` where the toolset is decided and \
         ship its lock; nothing was written",
        .lock.display(),
        .pinned_for.as_ref().map(|other| format!(" (it pins {other})")).unwrap_or_default()
    )]
    NotLocked {
        /// The component.
        name: String,
        /// Its reference in toolhost.toml.
        reference: String,
        /// The reference the lock pins under this name, when it pins another one.
        pinned_for: Option<String>,
        /// The lock file.
        lock: PathBuf,
    },
    /// A local file could not be read or written.
    #[error("{}: {problem}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        problem: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_name_a_registry_and_say_what_is_wrong() {
        assert!(OciReference::parse("oci://127.0.0.1:5000/tools/math:1.0").is_ok());
        assert!(
            OciReference::parse(
                "oci://ghcr.io/acme/forecast@sha256:0123456789012345678901234567890123456789012345678901234567890123"
            )
            .is_ok()
        );
        assert!(OciReference::parse("ghcr.io/acme/x:1").unwrap_err().contains("oci://"));
        assert!(OciReference::parse("oci://acme/x:1").unwrap_err().contains("no registry host"));
        assert!(OciReference::parse("oci://ghcr.io/Bad Name:1").unwrap_err().contains("not an OCI reference"));
    }
}
