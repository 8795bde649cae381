//! `toolhost new NAME --lang rust|js|python|c|go`: each scaffolded project builds with the
//! one command it documents, installs into a tools directory, and its example tool
//! answers, refuses nonsense and is held to its schema like any other tool.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use toolhost::{CallError, ToolHost};
use toolhost_tests::{ToolsDir, toolhost_bin};

/// Scaffolds `greeter` in `lang` with the CLI and returns the project directory and what
/// `toolhost new` printed.
fn scaffold(lang: &str, parent: &Path) -> (PathBuf, Value) {
    let dir = parent.join(format!("greeter-{lang}"));
    let output = Command::new(toolhost_bin())
        .args(["new", "greeter", "--lang", lang, "--dir"])
        .arg(&dir)
        .output()
        .expect("run toolhost new");
    assert!(output.status.success(), "toolhost new --lang {lang}: {}", String::from_utf8_lossy(&output.stderr));
    let printed: Value = serde_json::from_slice(&output.stdout).expect("toolhost new prints JSON");
    assert_eq!(printed["lang"], lang);
    assert!(printed["files"].as_array().is_some_and(|files| !files.is_empty()), "{printed}");
    (dir, printed)
}

/// Runs the project's documented build command (as `toolhost new` printed it) in its
/// directory, with the settings of the outer cargo build removed so that they do not
/// leak into the project's build.
fn build(dir: &Path, printed: &Value, extra_env: &[(&str, &Path)]) {
    let command = printed["build"].as_str().expect("the build command");
    let mut shell = Command::new("sh");
    shell.arg("-c").arg(command).current_dir(dir);
    for var in ["CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET", "RUSTC_WRAPPER"] {
        shell.env_remove(var);
    }
    for (key, value) in extra_env {
        shell.env(key, value);
    }
    let output = shell.output().unwrap_or_else(|e| panic!("cannot run `{command}`: {e}"));
    assert!(
        output.status.success(),
        "`{command}` in {} failed ({}):\n{}\n{}",
        dir.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Installs the built component as `greeter/greeter.wasm` and checks the example tool.
async fn assert_greeter_works(component: &Path) {
    assert!(component.is_file(), "the build left {}", component.display());
    let tools = ToolsDir::new();
    tools.write("greeter", "greeter.wasm", &std::fs::read(component).unwrap());
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![], "{} loads", component.display());

    assert_eq!(host.call("greeter/greet", json!({ "name": " Ada " })).await, Ok(json!({ "greeting": "Hello, Ada!" })));
    match host.call("greeter/greet", json!({ "name": "   " })).await {
        Err(CallError::InputInvalid { violations, .. }) => {
            assert!(violations[0].reason.contains("`name` is blank"), "{violations:?}")
        }
        other => panic!("a blank name is refused by the tool: {other:?}"),
    }
    for bad in [json!({}), json!({ "name": 7 }), json!({ "name": "Ada", "extra": true })] {
        let error = host.call("greeter/greet", bad.clone()).await.unwrap_err();
        assert!(matches!(error, CallError::InputInvalid { .. }), "{bad}: {error:?}");
    }
}

/// `<target>/<name>`, from the test executable's path (`<target>/<profile>/deps/e2e-…`).
fn target_subdir(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test exe path");
    exe.ancestors().nth(3).expect("target dir").join(name)
}

#[tokio::test]
async fn a_new_rust_tool_builds_and_answers() {
    let temp = tempfile::tempdir().unwrap();
    let (dir, printed) = scaffold("rust", temp.path());
    // The project's own `target/` is a link to a directory shared between test runs, so
    // the SDK's dependencies compile once; the printed build command and component path
    // are used as printed.
    let shared = target_subdir("scaffold-rust");
    std::fs::create_dir_all(&shared).unwrap();
    std::os::unix::fs::symlink(&shared, dir.join("target")).unwrap();
    build(&dir, &printed, &[]);
    assert_greeter_works(Path::new(printed["component"].as_str().unwrap())).await;
}

#[tokio::test]
async fn a_new_javascript_tool_builds_and_answers() {
    let temp = tempfile::tempdir().unwrap();
    let (dir, printed) = scaffold("js", temp.path());
    build(&dir, &printed, &[]);
    assert_greeter_works(Path::new(printed["component"].as_str().unwrap())).await;
}

#[tokio::test]
async fn a_new_python_tool_builds_and_answers() {
    let temp = tempfile::tempdir().unwrap();
    let (dir, printed) = scaffold("python", temp.path());
    build(&dir, &printed, &[]);
    assert_greeter_works(Path::new(printed["component"].as_str().unwrap())).await;
}

#[tokio::test]
async fn a_new_c_tool_builds_and_answers() {
    let temp = tempfile::tempdir().unwrap();
    let (dir, printed) = scaffold("c", temp.path());
    build(&dir, &printed, &[]);
    assert_greeter_works(Path::new(printed["component"].as_str().unwrap())).await;
}

#[tokio::test]
async fn a_new_go_tool_builds_and_answers() {
    let temp = tempfile::tempdir().unwrap();
    let (dir, printed) = scaffold("go", temp.path());
    build(&dir, &printed, &[]);
    assert_greeter_works(Path::new(printed["component"].as_str().unwrap())).await;
}

#[test]
fn new_refuses_a_bad_name_an_unknown_language_and_a_used_directory() {
    let temp = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| Command::new(toolhost_bin()).args(args).current_dir(temp.path()).output().unwrap();

    let bad_name = run(&["new", "My Tool", "--lang", "rust"]);
    assert_eq!(bad_name.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad_name.stderr).contains("My Tool"), "the error names the bad name");

    let bad_lang = run(&["new", "greeter", "--lang", "cobol"]);
    assert_eq!(bad_lang.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&bad_lang.stderr).contains("use rust, js, python, c or go"));

    std::fs::create_dir(temp.path().join("greeter")).unwrap();
    std::fs::write(temp.path().join("greeter/notes.txt"), "mine").unwrap();
    let used = run(&["new", "greeter"]);
    assert_eq!(used.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&used.stderr).contains("already exists and is not empty"));
    assert_eq!(std::fs::read_to_string(temp.path().join("greeter/notes.txt")).unwrap(), "mine", "nothing overwritten");
}
