//! Builds every guest the tests use from source, for `wasm32-wasip2`: the example tools,
//! the test guests and the standard library (`stdlib/`). The components land in
//! `<target>/guests/` and their directory reaches the tests as `TOOLHOST_GUEST_DIR`.
//!
//! Then the example tools in JavaScript, Python, C and Go, with their own toolchains
//! (installed under `<target>/toolchains/` on first use), into `<target>/guests/polyglot/`,
//! which reaches the tests as `TOOLHOST_POLYGLOT_DIR`. The same code as
//! `cargo xtask build-polyglot`.

use std::path::{Path, PathBuf};

#[path = "../xtask/src/c_guest.rs"]
mod c_guest;
#[path = "../xtask/src/go_guest.rs"]
mod go_guest;
#[path = "../xtask/src/guests.rs"]
mod guests;
#[path = "../xtask/src/nested_cargo.rs"]
mod nested_cargo;
#[path = "../xtask/src/polyglot.rs"]
mod polyglot;
#[path = "../xtask/src/stdlib_crates.rs"]
mod stdlib_crates;

fn main() {
    // Read at run time, not baked in with env!(): the same compiled build script may run
    // for another checkout of the workspace sharing the target directory.
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest_dir.parent().expect("tests/ sits in the workspace root").to_owned();
    for watched in [
        "example-tools",
        "tests/guests",
        "guest-sdk",
        "wit",
        "xtask/src/guests.rs",
        "xtask/src/polyglot.rs",
        "xtask/src/c_guest.rs",
        "xtask/src/go_guest.rs",
        "xtask/go-pkg",
    ] {
        // Relative to this package, so cargo checks the files of the checkout it builds.
        println!("cargo:rerun-if-changed=../{watched}");
    }
    // The stdlib's crates one by one: its `target/` (where a build inside stdlib/ goes)
    // must not make every such build rerun this script.
    println!("cargo:rerun-if-changed=../stdlib/Cargo.toml");
    println!("cargo:rerun-if-changed=../stdlib/Cargo.lock");
    for entry in std::fs::read_dir(root.join("stdlib")).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() && name != "target" && !name.starts_with('.') {
            println!("cargo:rerun-if-changed=../stdlib/{name}");
        }
    }
    let target_dir = guest_target_dir();
    let fail = |message: String| -> ! {
        for line in message.lines() {
            println!("cargo:warning={line}");
        }
        std::process::exit(1)
    };
    guests::ensure_wasm_target().unwrap_or_else(|e| fail(e));
    let mut built = PathBuf::new();
    for workspace in ["example-tools/Cargo.toml", "tests/guests/Cargo.toml", "stdlib/Cargo.toml"] {
        built = guests::build_workspace(&root.join(workspace), &target_dir).unwrap_or_else(|e| fail(e));
    }
    println!("cargo:rustc-env=TOOLHOST_GUEST_DIR={}", built.display());
    // The stdlib's crates that are installed pre-initialized, as `crate=export` pairs:
    // the tests run them as `cargo xtask stdlib` installs them (`toolhost_tests::component`).
    let crates = stdlib_crates::stdlib_crates(&root.join("stdlib")).unwrap_or_else(|e| fail(e));
    let preinit: Vec<String> = crates
        .iter()
        .filter_map(|stdlib_crate| Some(format!("{}={}", stdlib_crate.package, stdlib_crate.preinit.as_ref()?)))
        .collect();
    println!("cargo:rustc-env=TOOLHOST_PREINIT_CRATES={}", preinit.join(","));
    document(
        &built.join("plain_types.wasm"),
        &root.join("tests/guests/plain-types/wit"),
        &built.join("plain_types_documented.wasm"),
    )
    .unwrap_or_else(|e| fail(e));

    let polyglot_dir = target_dir.join("polyglot");
    let target = target_dir.parent().unwrap_or(&target_dir);
    polyglot::build_all(&root, target, &polyglot_dir, &mut |line| eprintln!("{line}")).unwrap_or_else(|e| {
        fail(format!("building the JavaScript, Python, C and Go example tools failed (`cargo xtask build-polyglot` does the same): {e}"))
    });
    println!("cargo:rustc-env=TOOLHOST_POLYGLOT_DIR={}", polyglot_dir.display());
}

/// Writes `component` with its WIT's documentation appended as the `package-docs`
/// custom section, encoded by wit-parser exactly as wit-component encodes it for a WIT
/// package. (wit-bindgen's Rust guests do not carry their docs; toolchains that keep
/// them write this section.)
fn document(component: &Path, wit: &Path, output: &Path) -> Result<(), String> {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve.push_path(wit).map_err(|e| format!("{}: {e:#}", wit.display()))?;
    let docs = wit_parser::PackageMetadata::extract(&resolve, package).encode().map_err(|e| format!("{e:#}"))?;
    let mut bytes = std::fs::read(component).map_err(|e| format!("{}: {e}", component.display()))?;
    let mut content = Vec::new();
    leb128(wit_parser::PackageMetadata::SECTION_NAME.len(), &mut content);
    content.extend_from_slice(wit_parser::PackageMetadata::SECTION_NAME.as_bytes());
    content.extend_from_slice(&docs);
    bytes.push(0);
    leb128(content.len(), &mut bytes);
    bytes.extend_from_slice(&content);
    std::fs::write(output, bytes).map_err(|e| format!("{}: {e}", output.display()))
}

fn leb128(mut value: usize, out: &mut Vec<u8>) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// `<target>/guests`, found from OUT_DIR (`<target>/<profile>/build/<pkg>/out`), so the
/// guests share the host build's target directory wherever it is.
fn guest_target_dir() -> PathBuf {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let build = out_dir.ancestors().find(|dir| dir.file_name().is_some_and(|name| name == "build"));
    let target = build.and_then(Path::parent).and_then(Path::parent);
    target.map(|t| t.join("guests")).unwrap_or_else(|| out_dir.join("guests"))
}
