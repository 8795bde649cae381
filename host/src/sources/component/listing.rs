//! A toolbox's `list-tools` answer, read from the compile cache's listings when its bytes were listed before, else run and kept.

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Components;
use super::compile::content_hash;
use crate::contract::{GuestToolInfo, PluginPre};
use crate::error::LoadErrorKind;
use crate::manifest::Manifest;
use crate::runtime::TierEngine;
use crate::sandbox::{Grants, Sandbox, SandboxState, Services};

/// The version of the listing format; another version is a miss.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Listing {
    format: u32,
    tools: Vec<ListedTool>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListedTool {
    name: String,
    description: String,
    input_schema: String,
    output_schema: String,
}

impl Components {
    /// What the toolbox with these bytes (`hash`) lists: kept from an earlier load of
    /// the same bytes, so that loading runs none of its code, else listed now and kept.
    /// Only a successful listing is kept: a failure is the guest's to repeat.
    pub(super) async fn listed_tools(
        &self,
        path: &Path,
        hash: &str,
        engine: &TierEngine,
        pre: &PluginPre<SandboxState>,
        manifest: &Manifest,
    ) -> Result<Vec<GuestToolInfo>, LoadErrorKind> {
        if let Some(tools) = self.kept_listing(hash).await {
            return Ok(tools);
        }
        let tools = self.list_tools(path, engine, pre, manifest).await?;
        if self.runtime.cache.is_some() {
            let (runtime, hash, listing) = (self.runtime.clone(), hash.to_owned(), encode(&tools));
            let _ = crate::runtime::blocking(move || runtime.remember_listing(&hash, &listing)).await;
        }
        Ok(tools)
    }

    /// Whether the kept listing of the file at `path`, as its bytes are now, shows that
    /// it offers no `tool`: false when the file cannot be read or was never listed.
    pub(crate) async fn listed_without(&self, path: &Path, tool: &str) -> bool {
        let path = path.to_owned();
        let hash = crate::runtime::blocking(move || std::fs::read(path).map(|bytes| content_hash(&bytes))).await;
        let Ok(Ok(hash)) = hash else { return false };
        self.kept_listing(&hash).await.is_some_and(|tools| !tools.iter().any(|listed| listed.name == tool))
    }

    async fn kept_listing(&self, hash: &str) -> Option<Vec<GuestToolInfo>> {
        let (runtime, hash) = (self.runtime.clone(), hash.to_owned());
        crate::runtime::blocking(move || {
            let (bytes, cache) = runtime.listing(&hash)?;
            let decoded = decode(&bytes);
            if decoded.is_none() {
                tracing::warn!(hash = %hash, "a kept listing does not parse; the component lists its tools again");
                cache.forget_listing(&hash);
            }
            decoded
        })
        .await
        .ok()
        .flatten()
    }

    /// A toolbox's tool descriptors. They must not depend on what the operator granted,
    /// and a load is no call (nobody audits it), so listing runs with no grants at all.
    async fn list_tools(
        &self,
        path: &Path,
        engine: &TierEngine,
        pre: &PluginPre<SandboxState>,
        manifest: &Manifest,
    ) -> Result<Vec<GuestToolInfo>, LoadErrorKind> {
        let label: Arc<str> = Arc::from(path.display().to_string());
        let sandbox = Sandbox {
            engine: &engine.engine,
            label,
            limits: &manifest.limits,
            // Listing grants nothing, so nothing is lent either.
            grants: Arc::new(Grants::default()),
            services: Services::none(),
        };
        sandbox.list_tools(pre).await.result.map_err(|e| LoadErrorKind::ListTools(e.to_string()))
    }
}

fn encode(tools: &[GuestToolInfo]) -> Vec<u8> {
    let tools = tools
        .iter()
        .map(|tool| ListedTool {
            name: tool.name.clone(),
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
        })
        .collect();
    serde_json::to_vec(&Listing { format: FORMAT, tools }).expect("strings serialize")
}

fn decode(bytes: &[u8]) -> Option<Vec<GuestToolInfo>> {
    let listing: Listing = serde_json::from_slice(bytes).ok().filter(|listing: &Listing| listing.format == FORMAT)?;
    let tools = listing.tools.into_iter().map(|tool| GuestToolInfo {
        name: tool.name,
        description: tool.description,
        input_schema: tool.input_schema,
        output_schema: tool.output_schema,
    });
    Some(tools.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_reads_back_as_written_and_anything_else_is_a_miss() {
        let tools = vec![GuestToolInfo {
            name: "add".into(),
            description: "Adds \"numbers\".".into(),
            input_schema: r#"{"type":"object"}"#.into(),
            output_schema: "{}".into(),
        }];
        let decoded = decode(&encode(&tools)).expect("decodes");
        assert_eq!(decoded.len(), 1);
        assert_eq!(decoded[0].name, "add");
        assert_eq!(decoded[0].description, "Adds \"numbers\".");
        assert_eq!(decoded[0].input_schema, r#"{"type":"object"}"#);

        assert!(decode(b"").is_none());
        assert!(decode(b"{\"format\":1,\"tools\":[{\"name\":\"x\"}]}").is_none());
        assert!(decode(br#"{"format":2,"tools":[]}"#).is_none());
        let half = encode(&tools);
        assert!(decode(&half[..half.len() / 2]).is_none());
    }
}
