//! A component as an OCI artefact, in the CNCF Wasm OCI artifact layout.
//!
//! A component as an OCI artefact, in the CNCF Wasm OCI artifact layout (the one `wkg`,
//! wassette and `oci-wasm` use): an image manifest whose config has the media type
//! `application/vnd.wasm.config.v0+json` and whose one layer, `application/wasm`, is the
//! component's bytes.

use std::time::{SystemTime, UNIX_EPOCH};

use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use serde::{Deserialize, Serialize};

use crate::trust::Sha256;

/// The manifest's media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The config's media type.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";

/// The config blob: what the component is, for registries and tools that show it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    /// When it was pushed (RFC 3339, UTC).
    pub created: String,
    /// Who made it, when known.
    pub author: Option<String>,
    /// Always `wasm`.
    pub architecture: String,
    /// `wasip2` for a component.
    pub os: String,
    /// The digest of each layer (one: the component).
    pub layer_digests: Vec<String>,
    /// What the component imports and exports.
    pub component: Option<ComponentInfo>,
}

/// The interfaces a component imports and exports (its top-level names).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentInfo {
    /// Its exports (`toolhost:tool/toolbox@0.1.0`, …).
    pub exports: Vec<String>,
    /// Its imports (`wasi:cli/environment@0.2.0`, …).
    pub imports: Vec<String>,
    /// The WIT world it targets, when declared.
    pub target: Option<String>,
}

/// The layer and config of a component to push.
pub fn package(bytes: Vec<u8>, created: SystemTime) -> (ImageLayer, Config) {
    let component = ComponentInfo { exports: names(&bytes, false), imports: names(&bytes, true), target: None };
    let config = WasmConfig {
        created: rfc3339(created),
        author: None,
        architecture: "wasm".into(),
        os: "wasip2".into(),
        layer_digests: vec![Sha256::of(&bytes).to_string()],
        component: Some(component),
    };
    let config = Config {
        data: serde_json::to_vec(&config).expect("a config serializes").into(),
        media_type: CONFIG_MEDIA_TYPE.into(),
        annotations: None,
    };
    (ImageLayer { data: bytes.into(), media_type: LAYER_MEDIA_TYPE.into(), annotations: None }, config)
}

/// The component layer of a manifest pulled: its digest and size, or what makes the
/// manifest not a component artefact.
pub fn component_layer(manifest: &OciImageManifest) -> Result<(Sha256, u64), String> {
    if manifest.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(format!(
            "its config is `{}`, not a Wasm component's `{CONFIG_MEDIA_TYPE}`",
            crate::text::bounded(manifest.config.media_type.clone(), 100)
        ));
    }
    let layers: Vec<_> = manifest.layers.iter().filter(|layer| layer.media_type == LAYER_MEDIA_TYPE).collect();
    let [layer] = layers.as_slice() else {
        return Err(format!("it has {} `{LAYER_MEDIA_TYPE}` layers; a component artefact has one", layers.len()));
    };
    let digest = Sha256::parse(&layer.digest).map_err(|e| format!("its layer digest: {e}"))?;
    let size = u64::try_from(layer.size).map_err(|_| format!("its layer size {} is negative", layer.size))?;
    Ok((digest, size))
}

/// The top-level import (or export) names of a component; empty when it cannot be read
/// (the host refuses such bytes anyway, with a better message).
fn names(bytes: &[u8], imports: bool) -> Vec<String> {
    let mut found = Vec::new();
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        let Ok(payload) = payload else { return Vec::new() };
        match payload {
            wasmparser::Payload::Version { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::ComponentImportSection(reader) if imports && depth == 1 => {
                found.extend(reader.into_iter().flatten().map(|import| import.name.name.to_owned()));
            }
            wasmparser::Payload::ComponentExportSection(reader) if !imports && depth == 1 => {
                found.extend(reader.into_iter().flatten().map(|export| export.name.name.to_owned()));
            }
            _ => {}
        }
    }
    found
}

/// `2026-11-25T05:40:00Z`.
fn rfc3339(time: SystemTime) -> String {
    let seconds = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Howard Hinnant's days-to-civil, for the proleptic Gregorian calendar.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_rfc3339_in_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(1_795_671_599)), "2026-11-26T05:39:59Z");
    }
}
