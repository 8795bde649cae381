//! `wasi:config/store` for guests: the configuration values their manifest grants, deny by default.
//!
//! wassette, Spin and wasmCloud hand a component its configuration and secrets through
//! this interface. toolhost serves it from the same `[grants] config` table as
//! `toolhost:tool/host.config`, so a component written for those hosts runs unchanged
//! and sees exactly the keys its manifest grants: none unless granted.

use std::collections::BTreeMap;

use wasmtime::component::{ComponentType, Lift, Linker, Lower};

/// The drafts in use, each served: the first (wassette's and wasmCloud's components
/// import it), Spin 3's, and the release candidate. All three have one shape.
pub(crate) const VERSIONS: [&str; 3] = ["0.2.0-draft", "0.2.0-draft-2024-09-27", "0.2.0-rc.1"];

/// The interface's `error` variant. toolhost's values are in memory, read when the
/// manifest was: no read can fail, but the type must be the interface's to link.
#[derive(ComponentType, Lift, Lower)]
#[component(variant)]
#[allow(dead_code)]
enum ConfigError {
    #[component(name = "upstream")]
    Upstream(String),
    #[component(name = "io")]
    Io(String),
}

/// Links every version of `wasi:config/store`, answering from the values `config`
/// finds in a store's data.
pub(crate) fn add_to_linker<T: 'static>(
    linker: &mut Linker<T>,
    config: fn(&T) -> &BTreeMap<String, String>,
) -> wasmtime::Result<()> {
    for version in VERSIONS {
        let mut store = linker.instance(&format!("wasi:config/store@{version}"))?;
        store.func_wrap("get", move |cx, (key,): (String,)| {
            Ok((Ok::<_, ConfigError>(config(cx.data()).get(&key).cloned()),))
        })?;
        store.func_wrap("get-all", move |cx, (): ()| {
            let all: Vec<(String, String)> = config(cx.data()).iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            Ok((Ok::<_, ConfigError>(all),))
        })?;
    }
    Ok(())
}
