//! `toolhost pull`: the components `toolhost.toml` names by reference, fetched, checked against their digests and pinned.

use std::path::Path;
use std::time::Instant;

use oci_client::manifest::OciImageManifest;
use oci_client::{Client, Reference};

use super::fetch::{Bounded, manifest_bytes};
use super::lock::{Lock, Locked};
use super::store::{self, BlobStore};
use super::{MAX_COMPONENT_SIZE, OciComponent, OciError, OciSettings, artifact, auth, signature};
use crate::registry::Layer;
use crate::trust::{Sha256, SigningKeys};

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
/// the store. When `keys` are required, each manifest must carry a cosign signature by
/// one of them beside it in the registry.
pub async fn pull(
    components: &[OciComponent],
    layers: &[Layer],
    settings: &OciSettings,
    lock_path: &Path,
    (mode, keys): (PullMode, &SigningKeys),
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
        let (locked, bytes, downloaded) =
            fetch((&client, &settings.plain_http, keys), &store, component, pinned).await?;
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

/// How a fetch of one component fails: the registry, or a digest that does not match.
struct Fetching<'a> {
    component: &'a OciComponent,
    name: String,
}

impl Fetching<'_> {
    fn registry(&self, problem: String) -> OciError {
        OciError::Registry {
            name: self.name.clone(),
            reference: self.component.reference.to_string(),
            problem: crate::text::bounded(problem, crate::text::MAX_MESSAGE),
        }
    }

    fn digest(&self, what: &'static str, expected: String, actual: String) -> OciError {
        let reference = self.component.reference.to_string();
        OciError::Digest { name: self.name.clone(), reference, what, expected, actual }
    }
}

/// One component's manifest and bytes, checked: from the registry, or from the blob
/// store when it holds the layer already.
async fn fetch(
    (client, plain_http, keys): (&Client, &[String], &SigningKeys),
    store: &BlobStore,
    component: &OciComponent,
    pinned: Option<&Locked>,
) -> Result<(Locked, Vec<u8>, bool), OciError> {
    let fetching = Fetching { component, name: component.full_name() };
    let reference = component.reference.reference();
    let target = match pinned {
        Some(locked) => reference.clone_with_digest(locked.manifest.to_string()),
        None => reference.clone(),
    };
    let auth = auth::credentials(target.resolve_registry()).map_err(|e| fetching.registry(e))?;
    let (manifest_digest, manifest) = fetch_manifest((client, plain_http), &target, &auth, &fetching).await?;
    let signed_by = if keys.required() {
        let signed = signature::verify((client, plain_http), &target, &auth, &manifest_digest, keys).await;
        Some(signed.map_err(|e| fetching.registry(e))?)
    } else {
        None
    };
    let (layer_digest, size) =
        artifact::component_layer(&manifest).map_err(|e| fetching.registry(format!("not a Wasm component: {e}")))?;
    if size > MAX_COMPONENT_SIZE {
        let problem = format!("its component is {size} bytes; at most {MAX_COMPONENT_SIZE} are pulled");
        return Err(fetching.registry(problem));
    }
    let (bytes, downloaded) = match store.get(&layer_digest) {
        Some(bytes) => (bytes, false),
        None => (fetch_blob(client, store, &target, (layer_digest, size), &fetching).await?, true),
    };
    let locked = Locked {
        layer: component.layer.clone(),
        name: fetching.name,
        reference: component.reference.to_string(),
        manifest: manifest_digest,
        sha256: layer_digest,
        size,
        signed_by,
    };
    Ok((locked, bytes, downloaded))
}

/// The manifest `target` names, and its digest, checked against the digest asked for
/// (a pin, or `@sha256:` in the reference), else the one the registry named.
async fn fetch_manifest(
    (client, plain_http): (&Client, &[String]),
    target: &Reference,
    auth: &oci_client::secrets::RegistryAuth,
    fetching: &Fetching<'_>,
) -> Result<(Sha256, OciImageManifest), OciError> {
    let (manifest_bytes, said) = manifest_bytes(client, plain_http, target, auth)
        .await
        .map_err(|e| fetching.registry(format!("cannot fetch the manifest: {e}")))?;
    let manifest_digest = Sha256::of(&manifest_bytes);
    let expected = match target.digest() {
        Some(digest) => Some(digest.to_owned()),
        None => (!said.is_empty()).then_some(said),
    };
    if let Some(expected) = expected
        && Sha256::parse(&expected).ok() != Some(manifest_digest)
    {
        return Err(fetching.digest("the manifest", expected, manifest_digest.to_string()));
    }
    let manifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| fetching.registry(format!("the manifest is not an OCI image manifest: {e}")))?;
    Ok((manifest_digest, manifest))
}

/// The component's bytes from the registry, within the size its manifest gives, checked
/// against its digest and kept in the blob store.
async fn fetch_blob(
    client: &Client,
    store: &BlobStore,
    target: &Reference,
    (digest, size): (Sha256, u64),
    fetching: &Fetching<'_>,
) -> Result<Vec<u8>, OciError> {
    let mut blob = Bounded { bytes: Vec::with_capacity(size.min(64 << 20) as usize), limit: size };
    client
        .pull_blob(target, digest.to_string().as_str(), &mut blob)
        .await
        .map_err(|e| fetching.registry(format!("cannot fetch the component: {e}")))?;
    let bytes = blob.bytes;
    let actual = Sha256::of(&bytes);
    if actual != digest {
        return Err(fetching.digest("the component", digest.to_string(), actual.to_string()));
    }
    if bytes.len() as u64 != size {
        return Err(fetching.registry(format!("its manifest says {size} bytes, {} came", bytes.len())));
    }
    store.put(&digest, &bytes).map_err(|e| OciError::Io { path: store.dir().to_owned(), problem: e.to_string() })?;
    Ok(bytes)
}
