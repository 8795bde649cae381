//! `[[layer]]` and `[oci]`: the roots served, in precedence order, and the components they take from OCI registries.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::oci::{OciComponent, OciReference, OciSettings};
use crate::registry::Layer;
use crate::units::Problem;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLayer {
    name: String,
    root: PathBuf,
    #[serde(default)]
    stdlib: bool,
    /// Namespace, then file name, to an `oci://` reference.
    #[serde(default)]
    oci: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOci {
    #[serde(default)]
    plain_http: Vec<String>,
    store: Option<PathBuf>,
}

/// `[[layer]]` tables, highest precedence first, roots relative to the configuration,
/// and the components their `[layer.oci.NAMESPACE]` tables name.
pub(super) fn layers(base: &Path, raw: Vec<Spanned<RawLayer>>) -> Result<(Vec<Layer>, Vec<OciComponent>), Problem> {
    let mut layers: Vec<Layer> = Vec::new();
    let mut oci = Vec::new();
    for layer in raw {
        let span = layer.span();
        let layer = layer.into_inner();
        if layers.iter().any(|l| l.name == layer.name) {
            return Err(Problem::at(span, format!("layer `{}` is defined twice", layer.name)));
        }
        oci.extend(oci_components(&layer.name, layer.oci, &span)?);
        layers.push(Layer { name: layer.name, root: Some(base.join(layer.root)), stdlib: layer.stdlib });
    }
    Ok((layers, oci))
}

/// `[oci]`: how registries are reached and where pulled blobs are kept.
pub(super) fn oci_settings(base: &Path, raw: RawOci) -> OciSettings {
    OciSettings { plain_http: raw.plain_http, store: raw.store.map(|store| base.join(store)) }
}

/// `[layer.oci.NAMESPACE]` tables: a component per file name, by reference.
fn oci_components(
    layer: &str,
    raw: BTreeMap<String, BTreeMap<String, String>>,
    span: &std::ops::Range<usize>,
) -> Result<Vec<OciComponent>, Problem> {
    let mut components = Vec::new();
    for (namespace, entries) in raw {
        let at =
            |problem: String| Problem::at(span.clone(), format!("layer `{layer}`, [layer.oci.{namespace}]: {problem}"));
        crate::names::validate_namespace(&namespace).map_err(&at)?;
        for (name, reference) in entries {
            crate::names::validate_namespace(&name).map_err(|problem| at(format!("`{name}`: {problem}")))?;
            let reference = OciReference::parse(&reference).map_err(|problem| at(format!("`{name}`: {problem}")))?;
            components.push(OciComponent { layer: layer.to_owned(), namespace: namespace.clone(), name, reference });
        }
    }
    Ok(components)
}
