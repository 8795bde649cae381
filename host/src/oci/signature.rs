//! Cosign signatures beside a component in its registry: `toolhost push --sign-key` writes one, `toolhost pull` checks it.
//!
//! The layout is cosign's, so `cosign sign --key` and `cosign verify --key` read and
//! write the same: beside the manifest `sha256:<hex>` of a component, the tag
//! `sha256-<hex>.sig` of the same repository holds an image manifest whose layers are
//! "simple signing" payloads (`application/vnd.dev.cosign.simplesigning.v1+json`), each
//! a JSON document naming the signed manifest's digest, with the ECDSA P-256 signature
//! of the payload (DER, base64) in the layer's annotation
//! `dev.cosignproject.cosign/signature`. The manifest names the component's bytes by
//! their digest, so a valid signature of it vouches for them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use serde_json::{Value, json};

use super::fetch::{Bounded, manifest_bytes};
use crate::trust::{PrivateKey, Sha256, SigningKeys};

/// The media type of a signed payload.
const PAYLOAD_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The annotation holding a payload's signature.
const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// What a payload says it is.
const PAYLOAD_TYPE: &str = "cosign container image signature";
/// The largest payload read: cosign's are a few hundred bytes.
const MAX_PAYLOAD: u64 = 64 << 10;
/// The most signatures of one manifest tried.
const MAX_SIGNATURES: usize = 16;

/// `sha256-<hex>.sig`: the tag of the signatures of `manifest`.
pub(super) fn signature_tag(manifest: &Sha256) -> String {
    format!("{}.sig", manifest.to_string().replace(':', "-"))
}

/// `registry/repository:sha256-<hex>.sig`: where the signatures of `manifest` are.
fn signature_reference(target: &Reference, manifest: &Sha256) -> Reference {
    Reference::with_tag(target.registry().to_owned(), target.repository().to_owned(), signature_tag(manifest))
}

/// Signs the manifest `manifest` of `target` with `key`, beside it in the registry.
/// Replaces signatures already there (cosign adds to them).
pub(super) async fn push_signature(
    client: &Client,
    target: &Reference,
    auth: &RegistryAuth,
    manifest: &Sha256,
    key: &PrivateKey,
) -> Result<(), String> {
    let identity = format!("{}/{}", target.registry(), target.repository());
    let payload = serde_json::to_vec(&json!({
        "critical": {
            "identity": { "docker-reference": identity },
            "image": { "docker-manifest-digest": manifest.to_string() },
            "type": PAYLOAD_TYPE,
        },
        "optional": null,
    }))
    .map_err(|e| e.to_string())?;
    let signature = key.sign(&payload)?;
    let annotations = BTreeMap::from([(SIGNATURE_ANNOTATION.to_owned(), signature)]);
    let rootfs = json!({ "type": "layers", "diff_ids": [Sha256::of(&payload).to_string()] });
    let config = json!({ "architecture": "", "os": "", "config": {}, "rootfs": rootfs });
    let config = Config::new(
        serde_json::to_vec(&config).map_err(|e| e.to_string())?,
        "application/vnd.oci.image.config.v1+json".into(),
        None,
    );
    let layer = ImageLayer::new(payload, PAYLOAD_MEDIA_TYPE.into(), Some(annotations));
    let at = signature_reference(target, manifest);
    client.push(&at, &[layer], config, auth, None).await.map_err(|e| format!("pushing its signature to {at}: {e}"))?;
    Ok(())
}

/// The configured key whose signature of the manifest `manifest` the registry holds
/// beside it; an error says what was found instead.
pub(super) async fn verify(
    (client, plain_http): (&Client, &[String]),
    target: &Reference,
    auth: &RegistryAuth,
    manifest: &Sha256,
    keys: &SigningKeys,
) -> Result<PathBuf, String> {
    let at = signature_reference(target, manifest);
    let bytes = match manifest_bytes(client, plain_http, &at, auth).await {
        Ok((bytes, _)) => bytes,
        Err(e) if e.contains("HTTP 404") => {
            return Err(format!("unsigned: `[signatures]` requires a signature, and the registry holds none at {at}"));
        }
        Err(e) => return Err(format!("cannot fetch its signatures at {at}: {e}")),
    };
    let signatures: OciImageManifest =
        serde_json::from_slice(&bytes).map_err(|e| format!("{at} is not a signature manifest: {e}"))?;
    let payloads = signatures.layers.iter().filter(|layer| layer.media_type == PAYLOAD_MEDIA_TYPE);
    for layer in payloads.take(MAX_SIGNATURES) {
        let Some(signature) = layer.annotations.as_ref().and_then(|a| a.get(SIGNATURE_ANNOTATION)) else { continue };
        let (Ok(digest), Ok(size)) = (Sha256::parse(&layer.digest), u64::try_from(layer.size)) else { continue };
        if size > MAX_PAYLOAD {
            continue;
        }
        let mut blob = Bounded { bytes: Vec::new(), limit: size };
        if client.pull_blob(&at, layer.digest.as_str(), &mut blob).await.is_err() || Sha256::of(&blob.bytes) != digest {
            continue;
        }
        if let Some(key) = keys.payload_signer(&blob.bytes, signature)
            && names(&blob.bytes, manifest)
        {
            return Ok(key.to_owned());
        }
    }
    let keys: Vec<String> = keys.paths().map(|path| path.display().to_string()).collect();
    Err(format!("no signature at {at} of manifest {manifest} is by a configured key ({})", keys.join(", ")))
}

/// Whether a signed payload is cosign's, for exactly `manifest`.
fn names(payload: &[u8], manifest: &Sha256) -> bool {
    let Ok(payload) = serde_json::from_slice::<Value>(payload) else { return false };
    let critical = &payload["critical"];
    critical["type"] == PAYLOAD_TYPE
        && critical["image"]["docker-manifest-digest"].as_str().and_then(|d| Sha256::parse(d).ok()) == Some(*manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_counts_for_its_own_manifest_only() {
        let manifest = Sha256::of(b"manifest");
        let payload = |digest: &str, kind: &str| {
            serde_json::to_vec(&json!({ "critical": { "image": { "docker-manifest-digest": digest }, "type": kind } }))
                .unwrap()
        };
        assert!(names(&payload(&manifest.to_string(), PAYLOAD_TYPE), &manifest));
        assert!(!names(&payload(&Sha256::of(b"other").to_string(), PAYLOAD_TYPE), &manifest));
        assert!(!names(&payload(&manifest.to_string(), "something else"), &manifest));
        assert!(!names(b"not json", &manifest));
    }

    #[test]
    fn signatures_sit_at_cosign_tag() {
        let target = Reference::with_tag("localhost:5000".into(), "tools/calc".into(), "1.0".into());
        let manifest = Sha256::of(b"m");
        let at = signature_reference(&target, &manifest);
        assert_eq!(at.tag(), Some(format!("sha256-{}.sig", &manifest.to_string()[7..]).as_str()));
        assert_eq!(at.repository(), "tools/calc");
    }
}
