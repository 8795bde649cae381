//! `toolhost push`: a component published to a registry in the CNCF Wasm OCI layout.

use std::path::Path;
use std::time::SystemTime;

use super::{OciError, OciReference, OciSettings, artifact, auth, signature};
use crate::trust::{PrivateKey, Sha256};

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
    /// The cosign signature's tag beside it, when signed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// Publishes the component at `file` to `reference` in the CNCF Wasm OCI layout, and
/// with `key`, its cosign signature beside it.
pub async fn push(
    file: &Path,
    reference: &OciReference,
    settings: &OciSettings,
    key: Option<&PrivateKey>,
) -> Result<Pushed, OciError> {
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
    let signature = match key {
        Some(key) => {
            signature::push_signature(&client, &target, &auth, &manifest, key).await.map_err(&registry_error)?;
            Some(signature::signature_tag(&manifest))
        }
        None => None,
    };
    Ok(Pushed { reference: reference.to_string(), manifest, sha256, size, signature })
}
