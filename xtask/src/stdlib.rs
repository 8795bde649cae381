//! `cargo xtask stdlib [--dir DIR]`: builds the standard library (`stdlib/`, its own
//! workspace) for `wasm32-wasip2` in release mode and installs every tool component with
//! its manifest where the host serves its stdlib layer.
//!
//! A crate of the stdlib says where it goes in its `Cargo.toml`:
//!
//! ```toml
//! [package.metadata.toolhost]
//! namespace = "file"     # installed as <DIR>/file/file.wasm
//! file = "file"          # with the crate's manifest.toml as <DIR>/file/file.toml
//! preinit = "wizer-initialize"  # optional: snapshotted after this export ran once
//! ```
//!
//! A crate that names a `preinit` export (the guest SDK's `preinit!` makes one) is
//! installed as `toolhost preinit` writes it: run once, its initialization done, so
//! that no call pays it again.
//!
//! Manifests are the operator's to edit (grants are operator decisions), so an installed
//! manifest is treated like a package manager treats a configuration file: each install
//! also writes the shipped defaults beside it as `<file>.toml.shipped`, and the next
//! install replaces `<file>.toml` only when it is still exactly what was shipped. An
//! edited one is kept and the install says so.
//!
//! Then `toolhost compile` compiles the installed components into the host's compile
//! cache (`toolhost paths`' `cache`), so a host that serves the stdlib compiles nothing
//! at start.
//!
//! Without `--dir`, the directory is the host's own default, as `toolhost paths` prints
//! it (`$TOOLHOST_STDLIB_DIR`, else `$XDG_DATA_HOME/toolhost/stdlib`, else
//! `~/.local/share/toolhost/stdlib`): asking the host keeps one rule in one place.

use std::path::{Path, PathBuf};

use crate::guests;
use crate::stdlib_crates::{StdlibCrate, stdlib_crates};

const USAGE: &str = "usage: cargo xtask stdlib [--dir DIR]";

pub fn stdlib(args: &[String], root: &Path, target_dir: &Path) -> Result<(), String> {
    let dir = match args {
        [] => default_dir(root)?,
        [flag, dir] if flag == "--dir" => PathBuf::from(dir),
        [flag] if flag.starts_with("--dir=") => PathBuf::from(&flag["--dir=".len()..]),
        _ => return Err(USAGE.into()),
    };
    let crates = stdlib_crates(&root.join("stdlib"))?;
    guests::ensure_wasm_target()?;
    let built = guests::build_workspace(&root.join("stdlib/Cargo.toml"), &target_dir.join("guests"))?;
    for stdlib_crate in &crates {
        let component = match &stdlib_crate.preinit {
            Some(export) => preinitialize(root, stdlib_crate, &built, export)?,
            None => built.join(format!("{}.wasm", stdlib_crate.package.replace('-', "_"))),
        };
        install(stdlib_crate, &component, &dir)?;
    }
    precompile(root, &dir)?;
    println!(
        "{} stdlib components in {}; `toolhost list` serves them (bare names work too). \
         Grants are the operator's: see docs/stdlib.md",
        crates.len(),
        dir.display()
    );
    Ok(())
}

/// The host's default stdlib directory: the `stdlib` line of `toolhost paths`.
fn default_dir(root: &Path) -> Result<PathBuf, String> {
    host_path(root, "stdlib").map_err(|e| format!("{e}; pass --dir DIR"))
}

/// The `name` line of `toolhost paths`: where the host keeps that by default.
fn host_path(root: &Path, name: &str) -> Result<PathBuf, String> {
    let output = toolhost(root)
        .arg("paths")
        .output()
        .map_err(|e| format!("cannot run cargo to ask toolhost for its {name} directory: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`toolhost paths` failed ({}), so the default {name} directory is unknown\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(|line| line.strip_prefix(name).filter(|rest| rest.starts_with([' ', '\t'])))
        .map(|rest| PathBuf::from(rest.trim()))
        .ok_or_else(|| format!("`toolhost paths` printed no `{name} DIR` line\n{stdout}"))
}

/// The `toolhost` command, built as the release binary.
fn toolhost(root: &Path) -> std::process::Command {
    let mut command = crate::nested_cargo::cargo();
    command.current_dir(root).args(["run", "--release", "--quiet", "-p", "toolhost", "--bin", "toolhost", "--"]);
    command
}

/// Runs `toolhost preinit` on a built component: the snapshot beside it, whose path is
/// returned.
fn preinitialize(root: &Path, stdlib_crate: &StdlibCrate, built: &Path, export: &str) -> Result<PathBuf, String> {
    let name = stdlib_crate.package.replace('-', "_");
    let (component, snapshot) = (built.join(format!("{name}.wasm")), built.join(format!("{name}.preinit.wasm")));
    println!("pre-initializing {} (its `{export}` runs once, here)", component.display());
    let mut preinit = toolhost(root);
    preinit.args(["preinit", "--init", export]).arg(&component).arg("--output").arg(&snapshot);
    preinit.stdout(std::process::Stdio::null());
    crate::run(preinit)?;
    Ok(snapshot)
}

/// Compiles the installed stdlib with `toolhost compile` (Cranelift) into the host's
/// compile cache, so that a host serving it maps optimized code at start and compiles
/// nothing. Only the stdlib layer is served: an empty root, and no configuration file.
fn precompile(root: &Path, dir: &Path) -> Result<(), String> {
    let cache = host_path(root, "cache")?;
    let empty = std::env::temp_dir().join(format!("toolhost-stdlib-precompile-{}", std::process::id()));
    std::fs::create_dir_all(&empty).map_err(|e| format!("{}: {e}", empty.display()))?;
    let mut compile = toolhost(root);
    compile.args(["--config", "/dev/null", "--stdlib"]).arg(dir).args(["compile", "--into"]).arg(&cache).arg(&empty);
    compile.stdout(std::process::Stdio::null());
    println!("compiling the stdlib into {} (the host maps it at start)", cache.display());
    let compiled = crate::run(compile);
    let _ = std::fs::remove_dir(&empty);
    compiled
}

/// Installs one component and its manifest under `dir`.
fn install(stdlib_crate: &StdlibCrate, component: &Path, dir: &Path) -> Result<(), String> {
    let shipped_manifest = stdlib_crate.dir.join("manifest.toml");
    let shipped = std::fs::read_to_string(&shipped_manifest)
        .map_err(|e| format!("{}: {e} (every stdlib tool ships its manifest defaults)", shipped_manifest.display()))?;
    let namespace_dir = dir.join(&stdlib_crate.namespace);
    std::fs::create_dir_all(&namespace_dir).map_err(|e| format!("cannot create {}: {e}", namespace_dir.display()))?;
    let wasm = namespace_dir.join(format!("{}.wasm", stdlib_crate.file));
    let manifest = namespace_dir.join(format!("{}.toml", stdlib_crate.file));
    let previous_defaults = namespace_dir.join(format!("{}.toml.shipped", stdlib_crate.file));

    let installed = std::fs::read_to_string(&manifest).ok();
    let last_shipped = std::fs::read_to_string(&previous_defaults).ok();
    let untouched = match &installed {
        None => true,
        Some(text) => *text == shipped || Some(text) == last_shipped.as_ref(),
    };
    // The manifest goes first: a watching host that sees the new component then reads
    // the limits meant for it.
    if untouched {
        write_atomically(&manifest, shipped.as_bytes())?;
    } else {
        println!(
            "kept {}: it differs from the shipped defaults (an operator's edit); the new defaults are in {}",
            manifest.display(),
            previous_defaults.display()
        );
    }
    write_atomically(&previous_defaults, shipped.as_bytes())?;
    let bytes = std::fs::read(component).map_err(|e| {
        format!("{}: {e} (is `{}` a member of stdlib/Cargo.toml?)", component.display(), stdlib_crate.package)
    })?;
    write_atomically(&wasm, &bytes)?;
    println!("installed {} ({} KiB)", wasm.display(), bytes.len().div_ceil(1024));
    Ok(())
}

/// Writes through a temporary file renamed over `path`, so a host watching the directory
/// never loads half a file.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.partial", std::process::id()));
    std::fs::write(&temporary, bytes).map_err(|e| format!("cannot write {}: {e}", temporary.display()))?;
    std::fs::rename(&temporary, path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        format!("cannot move {} to {}: {e}", temporary.display(), path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edited_manifest_survives_a_reinstall() {
        let work = std::env::temp_dir().join(format!("xtask-stdlib-test-{}", std::process::id()));
        let (crate_dir, built, dir) = (work.join("crate"), work.join("built"), work.join("stdlib"));
        for d in [&crate_dir, &built] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(built.join("stdlib_demo.wasm"), b"\0asm").unwrap();
        let demo = StdlibCrate {
            dir: crate_dir.clone(),
            package: "stdlib-demo".into(),
            namespace: "demo".into(),
            file: "demo".into(),
            preinit: None,
        };
        let installed = dir.join("demo/demo.toml");

        std::fs::write(crate_dir.join("manifest.toml"), "[limits]\ntimeout = \"1s\"\n").unwrap();
        install(&demo, &built.join("stdlib_demo.wasm"), &dir).unwrap();
        assert_eq!(std::fs::read_to_string(&installed).unwrap(), "[limits]\ntimeout = \"1s\"\n");
        assert_eq!(std::fs::read(dir.join("demo/demo.wasm")).unwrap(), b"\0asm");

        // New defaults replace an untouched manifest ...
        std::fs::write(crate_dir.join("manifest.toml"), "[limits]\ntimeout = \"2s\"\n").unwrap();
        install(&demo, &built.join("stdlib_demo.wasm"), &dir).unwrap();
        assert_eq!(std::fs::read_to_string(&installed).unwrap(), "[limits]\ntimeout = \"2s\"\n");

        // ... but never an operator's edit.
        std::fs::write(&installed, "[grants]\nnetwork = [\"example.com\"]\n").unwrap();
        std::fs::write(crate_dir.join("manifest.toml"), "[limits]\ntimeout = \"3s\"\n").unwrap();
        install(&demo, &built.join("stdlib_demo.wasm"), &dir).unwrap();
        assert_eq!(std::fs::read_to_string(&installed).unwrap(), "[grants]\nnetwork = [\"example.com\"]\n");
        assert_eq!(
            std::fs::read_to_string(dir.join("demo/demo.toml.shipped")).unwrap(),
            "[limits]\ntimeout = \"3s\"\n"
        );
        std::fs::remove_dir_all(&work).unwrap();
    }
}
