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
mod lock;
mod store;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant, SystemTime};

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::manifest::OciImageManifest;
use oci_client::{Client, Reference};

use crate::registry::Layer;
use crate::trust::Sha256;
use lock::Locked;
use store::BlobStore;

pub use auth::docker_config_path;
pub use lock::{LOCK_FILE, Lock};

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

/// What a pull did for one component.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pulled {
    /// `<namespace>/<name>`.
    pub name: String,
    /// Its layer.
    pub layer: String,
    /// The reference pulled.
    pub reference: String,
    /// The manifest's digest.
    pub manifest: Sha256,
    /// The component's digest.
    pub sha256: Sha256,
    /// Its size in bytes.
    pub size: u64,
    /// The component was downloaded (else the blob store had it).
    pub downloaded: bool,
    /// Its file in the layer's root was written (else it already held these bytes).
    pub written: bool,
    /// The pin in the lock moved (a new component, or `--update` found a new digest).
    pub pin_changed: bool,
    /// Time to resolve, download and check it, in milliseconds.
    pub ms: f64,
}

/// How a pull treats the pins of `toolhost.lock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PullMode {
    /// Fetch pinned components by their pins; resolve the others and pin them.
    Pin,
    /// Resolve every reference again and move the pins to what the tags name now.
    Update,
    /// Fetch exactly what the lock pins and never write it: a component without a pin
    /// is an error. What a replica runs before it serves (`toolhost pull --locked`).
    Locked,
}

/// Pulls every component in `components` (placed by `layers`) and writes the lock at
/// `lock_path` (unless `mode` is [`PullMode::Locked`]). A component already in the
/// lock is fetched by its pinned manifest digest, whatever its tag names now, unless
/// [`PullMode::Update`] asks to resolve tags again. Nothing is written (no file, no
/// lock) unless every component was fetched and checked; blobs already checked stay in
/// the store.
pub async fn pull(
    components: &[OciComponent],
    layers: &[Layer],
    settings: &OciSettings,
    lock_path: &Path,
    mode: PullMode,
) -> Result<Vec<Pulled>, OciError> {
    let io = |path: &Path, e: String| OciError::Io { path: path.to_owned(), problem: e };
    let previous = Lock::read(lock_path).map_err(|e| io(lock_path, e.problem))?;
    if mode == PullMode::Locked {
        require_pins(components, &previous, lock_path)?;
    }
    let store = settings.blob_store()?;
    let client = settings.client();
    let mut fetched = Vec::with_capacity(components.len());
    for component in components {
        let root = layers
            .iter()
            .find(|layer| layer.name == component.layer)
            .and_then(|layer| layer.root.clone())
            .ok_or_else(|| OciError::NoRoot { name: component.full_name(), layer: component.layer.clone() })?;
        let pinned = previous
            .get(&component.layer, &component.full_name())
            .filter(|locked| mode != PullMode::Update && locked.reference == component.reference.as_str());
        let started = Instant::now();
        let (locked, bytes, downloaded) = fetch(&client, &store, component, pinned).await?;
        fetched.push((component.path(&root), locked, bytes, downloaded, started.elapsed()));
    }
    let mut pulled = Vec::with_capacity(fetched.len());
    let mut lock = Lock::default();
    for (path, locked, bytes, downloaded, took) in fetched {
        let current = std::fs::read(&path).ok().map(|bytes| Sha256::of(&bytes));
        let written = current != Some(locked.sha256);
        if written {
            store::write_atomically(&path, &bytes).map_err(|e| io(&path, e.to_string()))?;
        }
        let pin_changed = previous.get(&locked.layer, &locked.name) != Some(&locked);
        pulled.push(Pulled {
            name: locked.name.clone(),
            layer: locked.layer.clone(),
            reference: locked.reference.clone(),
            manifest: locked.manifest,
            sha256: locked.sha256,
            size: locked.size,
            downloaded,
            written,
            pin_changed,
            ms: took.as_secs_f64() * 1000.0,
        });
        lock.components.push(locked);
    }
    if mode != PullMode::Locked && (lock.to_text() != previous.to_text() || !lock_path.exists()) {
        lock.write(lock_path).map_err(|e| io(lock_path, e.to_string()))?;
    }
    Ok(pulled)
}

/// Every component pinned by `lock` for the reference `toolhost.toml` gives it, checked
/// before anything is fetched.
fn require_pins(components: &[OciComponent], lock: &Lock, lock_path: &Path) -> Result<(), OciError> {
    for component in components {
        let pinned = lock.get(&component.layer, &component.full_name());
        if pinned.is_none_or(|locked| locked.reference != component.reference.as_str()) {
            return Err(OciError::NotLocked {
                name: component.full_name(),
                reference: component.reference.to_string(),
                pinned_for: pinned.map(|locked| locked.reference.clone()),
                lock: lock_path.to_owned(),
            });
        }
    }
    Ok(())
}

/// One component's manifest and bytes, checked: from the registry, or from the blob
/// store when it holds the layer already.
async fn fetch(
    client: &Client,
    store: &BlobStore,
    component: &OciComponent,
    pinned: Option<&Locked>,
) -> Result<(Locked, Vec<u8>, bool), OciError> {
    let name = component.full_name();
    let reference = component.reference.reference();
    let target = match pinned {
        Some(locked) => reference.clone_with_digest(locked.manifest.to_string()),
        None => reference.clone(),
    };
    let registry_error = |problem: String| OciError::Registry {
        name: name.clone(),
        reference: component.reference.to_string(),
        problem: crate::text::bounded(problem, crate::text::MAX_MESSAGE),
    };
    let digest_error = |what, expected: String, actual: String| OciError::Digest {
        name: name.clone(),
        reference: component.reference.to_string(),
        what,
        expected,
        actual,
    };
    let auth = auth::credentials(target.resolve_registry()).map_err(&registry_error)?;
    let (manifest_bytes, said) = client
        .pull_manifest_raw(&target, &auth, &[artifact::MANIFEST_MEDIA_TYPE])
        .await
        .map_err(|e| registry_error(format!("cannot fetch the manifest: {e}")))?;
    let manifest_digest = Sha256::of(&manifest_bytes);
    // The digest asked for (a pin, or `@sha256:` in the reference), else the one the
    // registry named: the bytes must have it.
    let expected = match target.digest() {
        Some(digest) => Some(digest.to_owned()),
        None => (!said.is_empty()).then_some(said),
    };
    if let Some(expected) = expected
        && Sha256::parse(&expected).ok() != Some(manifest_digest)
    {
        return Err(digest_error("the manifest", expected, manifest_digest.to_string()));
    }
    let manifest: OciImageManifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| registry_error(format!("the manifest is not an OCI image manifest: {e}")))?;
    let (layer_digest, size) =
        artifact::component_layer(&manifest).map_err(|e| registry_error(format!("not a Wasm component: {e}")))?;
    if size > MAX_COMPONENT_SIZE {
        return Err(registry_error(format!("its component is {size} bytes; at most {MAX_COMPONENT_SIZE} are pulled")));
    }
    let (bytes, downloaded) = match store.get(&layer_digest) {
        Some(bytes) => (bytes, false),
        None => {
            let mut blob = Bounded { bytes: Vec::with_capacity(size.min(64 << 20) as usize), limit: size };
            client
                .pull_blob(&target, layer_digest.to_string().as_str(), &mut blob)
                .await
                .map_err(|e| registry_error(format!("cannot fetch the component: {e}")))?;
            let bytes = blob.bytes;
            let actual = Sha256::of(&bytes);
            if actual != layer_digest {
                return Err(digest_error("the component", layer_digest.to_string(), actual.to_string()));
            }
            if bytes.len() as u64 != size {
                return Err(registry_error(format!("its manifest says {size} bytes, {} came", bytes.len())));
            }
            store
                .put(&layer_digest, &bytes)
                .map_err(|e| OciError::Io { path: store.dir().to_owned(), problem: e.to_string() })?;
            (bytes, true)
        }
    };
    let locked = Locked {
        layer: component.layer.clone(),
        name,
        reference: component.reference.to_string(),
        manifest: manifest_digest,
        sha256: layer_digest,
        size,
    };
    Ok((locked, bytes, downloaded))
}

/// A blob as it downloads, refused past the size its manifest gives: a registry cannot
/// make a pull hold more than it announced (and at most [`MAX_COMPONENT_SIZE`]).
struct Bounded {
    bytes: Vec<u8>,
    limit: u64,
}

impl tokio::io::AsyncWrite for Bounded {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if this.bytes.len() as u64 + buf.len() as u64 > this.limit {
            let problem = format!("more than the {} bytes its manifest gives", this.limit);
            return std::task::Poll::Ready(Err(std::io::Error::other(problem)));
        }
        this.bytes.extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// What a push published.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pushed {
    /// Where.
    pub reference: String,
    /// The manifest's digest: `reference@manifest` names exactly this push.
    pub manifest: Sha256,
    /// The component's digest.
    pub sha256: Sha256,
    /// Its size in bytes.
    pub size: u64,
}

/// Publishes the component at `file` to `reference` in the CNCF Wasm OCI layout.
pub async fn push(file: &Path, reference: &OciReference, settings: &OciSettings) -> Result<Pushed, OciError> {
    let name = file.display().to_string();
    let bytes = std::fs::read(file).map_err(|e| OciError::Io { path: file.to_owned(), problem: e.to_string() })?;
    crate::sources::check_preamble(&bytes)
        .map_err(|e| OciError::Io { path: file.to_owned(), problem: e.to_string() })?;
    let registry_error = |problem: String| OciError::Registry {
        name: name.clone(),
        reference: reference.to_string(),
        problem: crate::text::bounded(problem, crate::text::MAX_MESSAGE),
    };
    let (sha256, size) = (Sha256::of(&bytes), bytes.len() as u64);
    let target = reference.reference();
    let auth = auth::credentials(target.resolve_registry()).map_err(&registry_error)?;
    let (layer, config) = artifact::package(bytes, SystemTime::now());
    let client = settings.client();
    client.push(&target, &[layer], config, &auth, None).await.map_err(|e| registry_error(format!("{e}")))?;
    let said = client
        .fetch_manifest_digest(&target, &auth)
        .await
        .map_err(|e| registry_error(format!("pushed, but its digest cannot be read back: {e}")))?;
    let manifest = Sha256::parse(&said).map_err(|e| registry_error(format!("the registry's digest: {e}")))?;
    Ok(Pushed { reference: reference.to_string(), manifest, sha256, size })
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
