//! `toolhost new NAME --lang LANG`: a ready-to-build tool project with one example tool.
//!
//! LANG is rust, js, python, c or go; the tool is `greet`, beside its build command and a
//! README saying how to build, install and call it.
//!
//! The templates live in `host/templates/<lang>/` and are compiled into the binary, so
//! the command works wherever `toolhost` is installed. JavaScript, Python, C and Go
//! projects get a copy of `wit/tool.wit`; a Rust project gets the contract through the
//! `toolhost-guest` SDK instead, by path to the checkout this binary was built from (the
//! SDK is not published), as do the C and Go build scripts, which use that checkout's
//! `cargo xtask build-c` and `build-go` (and a Go project's `go.mod` its vendored runtime
//! package).

use std::path::{Path, PathBuf};

/// The contract, copied into every project that builds from WIT.
const WIT: &str = include_str!("../../wit/tool.wit");

/// (path in the project, template text, executable)
type Template = (&'static str, &'static str, bool);

/// The contract and the WIT packages it names (its `sdk` world imports `wasi:keyvalue`),
/// so that WIT tooling resolves the project's `wit/` directory on its own.
const CONTRACT: &[Template] = &[
    ("wit/tool.wit", WIT, false),
    ("wit/deps/keyvalue/atomic.wit", include_str!("../../wit/deps/keyvalue/atomic.wit"), false),
    ("wit/deps/keyvalue/batch.wit", include_str!("../../wit/deps/keyvalue/batch.wit"), false),
    ("wit/deps/keyvalue/store.wit", include_str!("../../wit/deps/keyvalue/store.wit"), false),
    ("wit/deps/keyvalue/world.wit", include_str!("../../wit/deps/keyvalue/world.wit"), false),
];

const RUST: &[Template] = &[
    ("Cargo.toml", include_str!("../templates/rust/Cargo.toml"), false),
    ("src/lib.rs", include_str!("../templates/rust/src/lib.rs"), false),
    ("README.md", include_str!("../templates/rust/README.md"), false),
    (".gitignore", "target/\n", false),
];

const JAVASCRIPT: &[Template] = &[
    ("package.json", include_str!("../templates/js/package.json"), false),
    ("tool.js", include_str!("../templates/js/tool.js"), false),
    ("README.md", include_str!("../templates/js/README.md"), false),
    (".gitignore", "node_modules/\n*.wasm\n", false),
];

const PYTHON: &[Template] = &[
    ("app.py", include_str!("../templates/python/app.py"), false),
    ("build.sh", include_str!("../templates/python/build.sh"), true),
    ("README.md", include_str!("../templates/python/README.md"), false),
    (".gitignore", ".venv/\n__pycache__/\nwit_world/\ncomponentize_py_*\n*.wasm\n", false),
];

const C: &[Template] = &[
    ("src/tool.c", include_str!("../templates/c/src/tool.c"), false),
    // The JSON helpers are the ones the C example tool uses: one copy to maintain.
    ("src/json.h", include_str!("../../example-tools/c-checksum/json.h"), false),
    ("src/json.c", include_str!("../../example-tools/c-checksum/json.c"), false),
    ("build.sh", include_str!("../templates/c/build.sh"), true),
    ("README.md", include_str!("../templates/c/README.md"), false),
    (".gitignore", "build/\n*.wasm\n", false),
];

const GO: &[Template] = &[
    ("go.mod", include_str!("../templates/go/go.mod"), false),
    (
        "export_toolhost_tool_toolbox/tool.go",
        include_str!("../templates/go/export_toolhost_tool_toolbox/tool.go"),
        false,
    ),
    // The contract glue is the one the Go example tool uses: one copy to maintain.
    (
        "export_toolhost_tool_toolbox/contract.go",
        include_str!("../../example-tools/go-cron/export_toolhost_tool_toolbox/contract.go"),
        false,
    ),
    ("build.sh", include_str!("../templates/go/build.sh"), true),
    ("README.md", include_str!("../templates/go/README.md"), false),
    // The generated bindings, when written into the project for an editor
    // (`cargo xtask go-bindings wit .`), are rebuilt by every build: not sources.
    (".gitignore", "build/\n*.wasm\n/wit_exports.go\n/toolhost_tool_*/\n", false),
];

/// The language of a new tool project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Rust with the toolhost SDK (`cargo build --target wasm32-wasip2`).
    Rust,
    /// JavaScript through componentize-qjs (`npm run build`).
    JavaScript,
    /// Python through componentize-py (`./build.sh`).
    Python,
    /// C through zig's clang and wit-bindgen (`./build.sh`).
    C,
    /// Go through the stock Go toolchain for wasip1 and wit-bindgen (`./build.sh`).
    Go,
}

impl Lang {
    /// Every language, in the order help texts list them.
    pub const ALL: [Lang; 5] = [Lang::Rust, Lang::JavaScript, Lang::Python, Lang::C, Lang::Go];

    /// The name `--lang` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::JavaScript => "js",
            Lang::Python => "python",
            Lang::C => "c",
            Lang::Go => "go",
        }
    }

    /// The one command, run in the project directory, that builds the component.
    pub fn build_command(self) -> &'static str {
        match self {
            Lang::Rust => "cargo build --target wasm32-wasip2 --release",
            Lang::JavaScript => "npm install && npm run build",
            Lang::Python | Lang::C | Lang::Go => "./build.sh",
        }
    }

    /// Where the build leaves the component, relative to the project directory.
    pub fn component_path(self, name: &str) -> PathBuf {
        match self {
            Lang::Rust => PathBuf::from(format!("target/wasm32-wasip2/release/{}.wasm", name.replace('-', "_"))),
            _ => PathBuf::from(format!("{name}.wasm")),
        }
    }

    /// The project's files: the language's own, after the contract for every language
    /// that builds from WIT.
    fn templates(self) -> impl Iterator<Item = &'static Template> {
        let (contract, own) = match self {
            Lang::Rust => (&[][..], RUST),
            Lang::JavaScript => (CONTRACT, JAVASCRIPT),
            Lang::Python => (CONTRACT, PYTHON),
            Lang::C => (CONTRACT, C),
            Lang::Go => (CONTRACT, GO),
        };
        contract.iter().chain(own)
    }
}

impl std::str::FromStr for Lang {
    type Err = ScaffoldError;

    fn from_str(text: &str) -> Result<Lang, ScaffoldError> {
        match text.to_ascii_lowercase().as_str() {
            "rust" | "rs" => Ok(Lang::Rust),
            "js" | "javascript" => Ok(Lang::JavaScript),
            "python" | "py" => Ok(Lang::Python),
            "c" => Ok(Lang::C),
            "go" | "golang" => Ok(Lang::Go),
            _ => Err(ScaffoldError::UnknownLang(text.to_owned())),
        }
    }
}

impl std::fmt::Display for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
/// Why a project could not be written.
pub enum ScaffoldError {
    /// The name is not a valid namespace name (it becomes the tools' namespace).
    #[error("{0}")]
    InvalidName(String),
    #[error("unknown language `{0}`: use rust, js, python, c or go")]
    /// The language is none of [`Lang::ALL`].
    UnknownLang(String),
    #[error("{} already exists and is not empty", .0.display())]
    /// The project directory exists and is not empty.
    NotEmpty(PathBuf),
    #[error("cannot write {}: {source}", path.display())]
    /// A file could not be written.
    #[allow(missing_docs)]
    Io { path: PathBuf, source: std::io::Error },
}

/// Writes a new `lang` tool project named `name` into `dir` (created when missing; it
/// must be empty) and returns the files written. `name` must be a valid namespace name:
/// it names the package, the component file and the tools' namespace.
pub fn scaffold(name: &str, lang: Lang, dir: &Path) -> Result<Vec<PathBuf>, ScaffoldError> {
    crate::names::validate_namespace(name).map_err(ScaffoldError::InvalidName)?;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| ScaffoldError::Io { path, source }
    };
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir).map_err(io(dir))?;
        if entries.next().is_some() {
            return Err(ScaffoldError::NotEmpty(dir.to_owned()));
        }
    }
    let checkout = toolhost_checkout();
    let values = [
        ("{{name}}", name.to_owned()),
        ("{{crate}}", name.replace('-', "_")),
        ("{{guest_sdk}}", checkout.join("guest-sdk").to_string_lossy().replace('\\', "/")),
        ("{{toolhost_src}}", checkout.to_string_lossy().replace('\\', "/")),
    ];
    let mut written = Vec::new();
    for (relative, template, executable) in lang.templates() {
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let text = values.iter().fold((*template).to_owned(), |text, (key, value)| text.replace(key, value));
        std::fs::write(&path, text).map_err(io(&path))?;
        if *executable {
            make_executable(&path).map_err(io(&path))?;
        }
        written.push(path);
    }
    Ok(written)
}

/// The toolhost checkout this binary was built from (the Rust SDK, the C and Go build
/// helpers and Go's runtime package live there).
fn toolhost_checkout() -> PathBuf {
    let raw = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    raw.canonicalize().unwrap_or(raw)
}

#[cfg(unix)]
fn make_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut permissions = std::fs::metadata(path)?.permissions();
    permissions.set_mode(permissions.mode() | 0o111);
    std::fs::set_permissions(path, permissions)
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relative(dir: &Path, files: &[PathBuf]) -> Vec<String> {
        let mut names: Vec<String> =
            files.iter().map(|f| f.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/")).collect();
        names.sort();
        names
    }

    fn read(dir: &Path, file: &str) -> String {
        std::fs::read_to_string(dir.join(file)).unwrap()
    }

    #[test]
    fn every_language_writes_its_files_with_no_placeholder_left() {
        let expected: [(Lang, &[&str]); 5] = [
            (Lang::Rust, &[".gitignore", "Cargo.toml", "README.md", "src/lib.rs"]),
            (Lang::JavaScript, &[".gitignore", "README.md", "package.json", "tool.js"]),
            (Lang::Python, &[".gitignore", "README.md", "app.py", "build.sh"]),
            (Lang::C, &[".gitignore", "README.md", "build.sh", "src/json.c", "src/json.h", "src/tool.c"]),
            (
                Lang::Go,
                &[
                    ".gitignore",
                    "README.md",
                    "build.sh",
                    "export_toolhost_tool_toolbox/contract.go",
                    "export_toolhost_tool_toolbox/tool.go",
                    "go.mod",
                ],
            ),
        ];
        for (lang, files) in expected {
            let temp = tempfile::tempdir().unwrap();
            let dir = temp.path().join("my-tool");
            let written = scaffold("my-tool", lang, &dir).unwrap();
            let mut expected: Vec<&str> = files.to_vec();
            if lang != Lang::Rust {
                expected.extend(CONTRACT.iter().map(|(path, _, _)| *path));
            }
            expected.sort();
            assert_eq!(relative(&dir, &written), expected, "{lang}");
            for file in &written {
                let text = std::fs::read_to_string(file).unwrap();
                assert!(!text.contains("{{"), "{lang}: a placeholder is left in {}", file.display());
            }
            let readme = read(&dir, "README.md");
            assert!(readme.starts_with("# my-tool\n"), "{lang}");
            assert!(
                readme.contains(lang.build_command().split(" && ").next().unwrap()),
                "{lang}: the README says how to build"
            );
            assert!(readme.contains("toolhost call ~/tools my-tool/greet"), "{lang}: the README says how to call");
        }
    }

    #[test]
    fn projects_built_from_wit_carry_the_contract() {
        for lang in [Lang::JavaScript, Lang::Python, Lang::C, Lang::Go] {
            let temp = tempfile::tempdir().unwrap();
            scaffold("greeter", lang, temp.path()).unwrap();
            assert_eq!(read(temp.path(), "wit/tool.wit"), WIT, "{lang}");
            let keyvalue = read(temp.path(), "wit/deps/keyvalue/world.wit");
            assert!(keyvalue.contains("package wasi:keyvalue@0.2.0-draft2;"), "{lang}");
            assert!(WIT.contains("package toolhost:tool@0.1.3;"));
        }
    }

    #[test]
    fn names_reach_the_package_the_component_and_the_build() {
        let temp = tempfile::tempdir().unwrap();
        scaffold("unit-tools", Lang::Rust, temp.path()).unwrap();
        let manifest = read(temp.path(), "Cargo.toml");
        assert!(manifest.contains("name = \"unit-tools\""), "{manifest}");
        assert!(manifest.contains("crate-type = [\"cdylib\"]"), "{manifest}");
        let sdk = toolhost_checkout().join("guest-sdk").to_string_lossy().replace('\\', "/");
        assert!(manifest.contains(&format!("toolhost-guest = {{ path = \"{sdk}\" }}")), "{manifest}");
        assert!(read(temp.path(), "README.md").contains("target/wasm32-wasip2/release/unit_tools.wasm"));
        assert_eq!(Lang::Rust.component_path("unit-tools"), Path::new("target/wasm32-wasip2/release/unit_tools.wasm"));

        let temp = tempfile::tempdir().unwrap();
        scaffold("unit-tools", Lang::JavaScript, temp.path()).unwrap();
        let package = read(temp.path(), "package.json");
        assert!(package.contains("\"name\": \"unit-tools\""), "{package}");
        assert!(package.contains("--world plugin --sync --output unit-tools.wasm"), "{package}");
        assert_eq!(Lang::JavaScript.component_path("unit-tools"), Path::new("unit-tools.wasm"));

        let temp = tempfile::tempdir().unwrap();
        scaffold("unit-tools", Lang::Python, temp.path()).unwrap();
        assert!(read(temp.path(), "build.sh").contains("componentize app --output unit-tools.wasm"));

        let temp = tempfile::tempdir().unwrap();
        scaffold("unit-tools", Lang::C, temp.path()).unwrap();
        let build = read(temp.path(), "build.sh");
        assert!(build.contains("build-c \"$PWD\" \"$PWD/unit-tools.wasm\""), "{build}");
        assert!(build.contains(&toolhost_checkout().to_string_lossy().replace('\\', "/")), "{build}");

        let temp = tempfile::tempdir().unwrap();
        scaffold("unit-tools", Lang::Go, temp.path()).unwrap();
        let build = read(temp.path(), "build.sh");
        assert!(build.contains("build-go \"$PWD\" \"$PWD/unit-tools.wasm\""), "{build}");
        let checkout = toolhost_checkout().to_string_lossy().replace('\\', "/");
        assert!(build.contains(&checkout), "{build}");
        // The generated bindings import their packages as `wit_component/…`.
        let module = read(temp.path(), "go.mod");
        assert!(module.starts_with("module wit_component\n"), "{module}");
        assert!(
            module.contains(&format!("replace go.bytecodealliance.org/pkg => {checkout}/xtask/go-pkg\n")),
            "{module}"
        );
        assert!(
            read(temp.path(), "export_toolhost_tool_toolbox/tool.go").contains("is unit-tools, a toolhost toolbox")
        );
        assert_eq!(Lang::Go.component_path("unit-tools"), Path::new("unit-tools.wasm"));
    }

    #[cfg(unix)]
    #[test]
    fn build_scripts_are_executable() {
        use std::os::unix::fs::PermissionsExt;
        for lang in [Lang::Python, Lang::C, Lang::Go] {
            let temp = tempfile::tempdir().unwrap();
            scaffold("greeter", lang, temp.path()).unwrap();
            let mode = std::fs::metadata(temp.path().join("build.sh")).unwrap().permissions().mode();
            assert_eq!(mode & 0o111, 0o111, "{lang}");
        }
    }

    #[test]
    fn bad_names_and_occupied_directories_are_refused() {
        let temp = tempfile::tempdir().unwrap();
        for name in ["", "My-Tool", "tool__x", "-tool", "a/b"] {
            let error = scaffold(name, Lang::Rust, &temp.path().join("x")).unwrap_err();
            assert!(matches!(error, ScaffoldError::InvalidName(_)), "{name:?}: {error}");
        }
        assert!(!temp.path().join("x").exists(), "nothing written for a bad name");

        std::fs::write(temp.path().join("keep.txt"), "mine").unwrap();
        let error = scaffold("greeter", Lang::C, temp.path()).unwrap_err();
        assert!(matches!(error, ScaffoldError::NotEmpty(_)), "{error}");
        assert_eq!(std::fs::read_dir(temp.path()).unwrap().count(), 1, "nothing written into a used directory");

        let empty = temp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(scaffold("greeter", Lang::Python, &empty).is_ok(), "an empty directory is fine");
    }

    #[test]
    fn languages_parse_from_their_names() {
        for lang in Lang::ALL {
            assert_eq!(lang.as_str().parse::<Lang>().unwrap(), lang);
        }
        assert_eq!("JavaScript".parse::<Lang>().unwrap(), Lang::JavaScript);
        assert_eq!("py".parse::<Lang>().unwrap(), Lang::Python);
        assert_eq!("golang".parse::<Lang>().unwrap(), Lang::Go);
        assert!(matches!("cobol".parse::<Lang>(), Err(ScaffoldError::UnknownLang(_))));
    }
}
