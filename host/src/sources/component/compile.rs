//! Native code for component bytes: mapped from a cache, or compiled by the tier the host's tiering picks.
//!
//! Native code comes from the compile cache when it holds the component; otherwise the
//! host's [`Tiering`] decides: Winch compiles it for the first calls and the background
//! [`Optimizer`](super::optimize::Optimizer) compiles it again with Cranelift, or
//! Cranelift compiles it at once. Only Cranelift's code goes into the cache, and code
//! mapped from the cache can be dropped while idle ([`super::code`]).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::Component;

use super::code::Code;
use super::plain::Docs;
use super::{Components, LoadedComponent};
use crate::error::{LoadError, LoadErrorKind};
use crate::runtime::Tier;

/// Native code of a component, and where it came from.
pub(crate) struct Compiled {
    pub component: Component,
    pub tier: Tier,
    pub hash: String,
    pub size: u64,
    pub time: Duration,
    pub from_cache: bool,
    /// The compile cache holds this code (optimized code, once written).
    pub cached: bool,
    /// The bytes, kept for the background compile that replaces baseline code.
    pub bytes: Option<Arc<[u8]>>,
    /// The WIT documentation the bytes carry.
    pub docs: Docs,
}

impl Compiled {
    /// The resident code of `previous` when `bytes` are what it was compiled from: a
    /// changed manifest must not cost a compile (nor, for baseline code, a second
    /// background compile; the one under way stores its code in the cache for the next).
    pub fn reused(previous: &LoadedComponent, bytes: &[u8]) -> Option<Compiled> {
        let code = previous.resident.current()?;
        let hash = content_hash(bytes);
        if hash != previous.hash {
            return None;
        }
        let baseline = code.tier == Tier::Baseline;
        Some(Compiled {
            component: code.component().clone(),
            tier: code.tier,
            hash,
            size: previous.size,
            time: previous.compile_time,
            from_cache: previous.from_cache,
            cached: previous.resident.restorable(),
            bytes: baseline.then(|| bytes.into()),
            docs: Docs::read(bytes),
        })
    }
}

/// The magic number and version of a component binary (a core module has `01 00 00 00`).
const COMPONENT_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

/// Refuses bytes that cannot be a component, with a message that says what they are.
pub fn check_preamble(bytes: &[u8]) -> Result<(), LoadErrorKind> {
    if bytes.len() < 8 || bytes[..4] != COMPONENT_PREAMBLE[..4] {
        return Err(LoadErrorKind::NotAComponent("the file is not WebAssembly (no `\\0asm` magic number)".into()));
    }
    if bytes[4..8] == [0x01, 0x00, 0x00, 0x00] {
        return Err(LoadErrorKind::NotAComponent(
            "this is a core WebAssembly module, not a component; build for `wasm32-wasip2` \
             or wrap it with `wasm-tools component new`"
                .into(),
        ));
    }
    if bytes[4..8] != COMPONENT_PREAMBLE[4..] {
        return Err(LoadErrorKind::NotAComponent(format!(
            "unsupported WebAssembly binary version/layer {:02x?}",
            &bytes[4..8]
        )));
    }
    Ok(())
}

/// BLAKE3 of a file's bytes, labelled (`blake3:<hex>`) as `toolhost.lock`'s SHA-256
/// pins are: which version of a component (or definition) answered, and its compile
/// cache entry.
pub fn content_hash(bytes: &[u8]) -> String {
    format!("blake3:{}", blake3::hash(bytes).to_hex())
}

impl Components {
    /// Native code for component bytes: from the compile cache, else compiled by the
    /// tier the host's tiering picks (Cranelift when Winch cannot compile them).
    pub(crate) async fn compile(&self, path: &Path, bytes: Vec<u8>) -> Result<Compiled, LoadError> {
        check_preamble(&bytes).map_err(|kind| LoadError::new(path, kind))?;
        let hash = content_hash(&bytes);
        let size = bytes.len() as u64;
        let docs = Docs::read(&bytes);
        let started = Instant::now();
        let compiled = |component, tier, time, from_cache, cached, bytes| Compiled {
            component,
            tier,
            hash: hash.clone(),
            size,
            time,
            from_cache,
            cached,
            bytes,
            docs,
        };
        if let Some(component) = self.runtime.cached_code(&hash) {
            return Ok(compiled(component, Tier::Optimized, started.elapsed(), true, true, None));
        }
        let bytes: Arc<[u8]> = bytes.into();
        if let Some(baseline) = self.runtime.baseline() {
            match self.runtime.compile(baseline, bytes.clone()).await {
                Ok(component) => {
                    return Ok(compiled(component, Tier::Baseline, started.elapsed(), false, false, Some(bytes)));
                }
                Err(reason) => {
                    tracing::debug!(file = %path.display(), "Winch cannot compile it, Cranelift will: {reason}")
                }
            }
        }
        let component = self
            .runtime
            .compile(&self.runtime.optimized, bytes)
            .await
            .map_err(|reason| LoadError::new(path, LoadErrorKind::Invalid(reason)))?;
        let time = started.elapsed();
        let (component, cached) = self.store(&hash, component).await;
        Ok(compiled(component, Tier::Optimized, time, false, cached, None))
    }

    /// Writes optimized code to the compile cache, off the executor: serializing is
    /// cheap next to compiling, but it is file I/O.
    async fn store(&self, hash: &str, component: Component) -> (Component, bool) {
        if self.runtime.cache.is_none() {
            return (component, false);
        }
        let (runtime, hash, compiled) = (self.runtime.clone(), hash.to_owned(), component.clone());
        crate::runtime::blocking(move || runtime.store(&hash, compiled)).await.unwrap_or((component, false))
    }

    /// The optimized code of a loaded component again, for a call after its resident
    /// code was dropped: mapped from the compile cache, or compiled from its file when
    /// the entry is gone and the file still holds the same bytes.
    pub(crate) async fn restore(&self, component: &LoadedComponent) -> Result<Code, String> {
        let optimized = &self.runtime.optimized;
        let (runtime, hash) = (self.runtime.clone(), component.hash.clone());
        let cached = crate::runtime::blocking(move || runtime.cached_code(&hash)).await.ok().flatten();
        let compiled = match cached {
            Some(compiled) => compiled,
            None => {
                let bytes = tokio::fs::read(&component.path)
                    .await
                    .map_err(|e| format!("its code is gone from the compile cache and {e}"))?;
                if content_hash(&bytes) != component.hash {
                    return Err("its file changed on disk; the new version is served once it is reloaded".into());
                }
                let compiled = self.runtime.compile(optimized, bytes.into()).await?;
                self.store(&component.hash, compiled).await.0
            }
        };
        Code::link(optimized, &compiled, &component.contract, &component.tools)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preamble_tells_modules_components_and_junk_apart() {
        assert_eq!(check_preamble(&[0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0, 0]), Ok(()));
        let module = check_preamble(&[0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]).unwrap_err();
        assert!(matches!(module, LoadErrorKind::NotAComponent(m) if m.contains("core WebAssembly module")));
        let junk = check_preamble(b"#!/bin/sh\necho hi").unwrap_err();
        assert!(matches!(junk, LoadErrorKind::NotAComponent(m) if m.contains("not WebAssembly")));
        assert!(check_preamble(&[0, 0x61]).is_err());
    }
}
