//! The two steps of a C guest that need WebAssembly tooling, done with the libraries
//! behind `wit-bindgen c` and `wasm-tools component new` (installing those CLIs takes
//! 10-20 minutes here; the libraries build with the workspace):
//!
//! 1. [`generate_bindings`]: C bindings of a WIT world (`<world>.h`, `<world>.c`, and
//!    `<world>_component_type.o`, which carries the world's type into the core module).
//! 2. [`componentize`]: a core module compiled with `-mexec-model=reactor` plus the WASI
//!    preview1 reactor adapter → a WASI 0.2 component.
//!
//! Go guests use step 2 too (`go_guest.rs`). Shared by `cargo xtask` and the test suite's
//! build script (which includes this file by path).

use std::path::{Path, PathBuf};

use wasi_preview1_component_adapter_provider::{
    WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
};

/// Writes the C bindings of `world` in the WIT package at `wit` (a file or a folder) into
/// `out_dir` and returns the files written.
pub fn generate_bindings(wit: &Path, world: &str, out_dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) =
        resolve.push_path(wit).map_err(|e| format!("cannot read the WIT at {}: {e:#}", wit.display()))?;
    let world_id = resolve
        .select_world(&[package], Some(world))
        .map_err(|e| format!("no world `{world}` in {}: {e:#}", wit.display()))?;
    let mut files = wit_bindgen_core::Files::default();
    wit_bindgen_c::Opts::default()
        .build()
        .generate(&mut resolve, world_id, &mut files)
        .map_err(|e| format!("generating C bindings for `{world}` failed: {e:#}"))?;
    std::fs::create_dir_all(out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let mut written = Vec::new();
    for (name, contents) in files.iter() {
        let path = out_dir.join(name);
        std::fs::write(&path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Turns the core module at `core` (wasm32-wasi, reactor) into a component at `output`,
/// adapting its WASI preview1 imports to WASI 0.2.
pub fn componentize(core: &Path, output: &Path) -> Result<(), String> {
    let module = std::fs::read(core).map_err(|e| format!("cannot read {}: {e}", core.display()))?;
    componentize_module(&module, core, output)
}

/// [`componentize`] of a core module already in memory; `core` names it in errors.
pub fn componentize_module(module: &[u8], core: &Path, output: &Path) -> Result<(), String> {
    let component = wit_component::ComponentEncoder::default()
        .validate(true)
        .module(module)
        .and_then(|encoder| {
            encoder.adapter(WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER)
        })
        .and_then(|encoder| encoder.encode())
        .map_err(|e| format!("cannot turn {} into a component: {e:#}", core.display()))?;
    if let Some(parent) = output.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(output, component).map_err(|e| format!("cannot write {}: {e}", output.display()))
}
