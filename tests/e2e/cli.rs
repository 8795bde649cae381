//! The `toolhost` command line: JSON on stdout, one line on stderr and a distinct exit
//! code per error kind.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use toolhost_tests::{ToolsDir, component, toolhost_bin};

fn toolhost(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(toolhost_bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run toolhost");
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        pipe.write_all(text.as_bytes()).unwrap();
    }
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&output.stdout)))
}

fn stderr_line(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line on stderr: {stderr}");
    stderr.trim_end().to_owned()
}

#[test]
fn list_shows_every_tool_with_its_origin() {
    let tools = ToolsDir::with_examples();
    let output = toolhost(&["list", tools.path().to_str().unwrap()], None);
    assert!(output.status.success());
    let listing = stdout_json(&output);
    let names: Vec<&str> = listing["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "json/get",
            "json/merge",
            "json/patch",
            "math/add",
            "math/count_primes",
            "math/divide",
            "math/evaluate",
            "text/regex_find",
            "text/slugify",
            "text/word_count"
        ]
    );
    let add = &listing["tools"][3];
    assert_eq!(add["description"], "Adds a list of numbers and returns their sum.");
    assert!(add["file"].as_str().unwrap().ends_with("math/math.wasm"));
    assert!(add["hash"].as_str().unwrap().strip_prefix("blake3:").is_some_and(|hex| hex.len() == 64), "{add}");
    assert_eq!(listing["errors"], json!([]));
}

#[test]
fn a_reader_that_goes_away_ends_no_command_with_a_panic() {
    let tools = ToolsDir::with_examples();
    for args in [vec!["list", tools.path().to_str().unwrap()], vec!["paths"]] {
        let mut child = Command::new(toolhost_bin())
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run toolhost");
        // Closed before anything is written, as `| head -0` would.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{args:?}: {:?}, stderr: {stderr}", output.status);
        assert!(!stderr.contains("panicked") && !stderr.contains("error"), "{args:?}: {stderr}");
    }
}

#[test]
fn inspect_shows_tools_schemas_and_imports() {
    let output = toolhost(&["inspect", component("math").to_str().unwrap()], None);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let inspection = stdout_json(&output);
    assert_eq!(inspection["contract"], "toolhost:tool@0.1.3");
    let imports: Vec<&str> = inspection["imports"].as_array().unwrap().iter().map(|i| i.as_str().unwrap()).collect();
    assert!(imports.iter().any(|i| i.starts_with("toolhost:tool/types@0.1.3")), "{imports:?}");
    assert!(imports.iter().any(|i| i.starts_with("wasi:cli/")), "{imports:?}");
    let evaluate = inspection["tools"].as_array().unwrap().iter().find(|t| t["name"] == "evaluate").unwrap();
    assert_eq!(evaluate["input_schema"]["required"], json!(["expression"]));
    assert_eq!(evaluate["input_schema"]["additionalProperties"], json!(false));
    assert!(inspection["size_bytes"].as_u64().unwrap() > 1000);
}

#[test]
fn call_prints_the_output_as_json() {
    let tools = ToolsDir::with_examples();
    let dir = tools.path().to_str().unwrap();
    let output = toolhost(&["call", dir, "math/add", "--input", r#"{"numbers":[0.5,0.25]}"#], None);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout_json(&output), json!({ "value": 0.75 }));

    let from_stdin = toolhost(&["call", dir, "text/slugify"], Some(r#"{"text":"Hello, World"}"#));
    assert_eq!(stdout_json(&from_stdin), json!({ "slug": "hello-world" }));
}

#[test]
fn each_error_kind_has_its_own_exit_code_and_one_line() {
    let tools = ToolsDir::with_examples();
    tools.install("hostile", "hostile", "hostile");
    let dir = tools.path().to_str().unwrap();
    let cases: [(&[&str], Option<&str>, i32, &str); 7] = [
        (
            &["call", dir, "math/add", "--input", "{not json"],
            None,
            5,
            "error[input_invalid]: invalid input for `math/add`: at (root): input is not JSON",
        ),
        (&["call", dir, "math/add", "--input", r#"{"numbers":"x"}"#], None, 5, "error[input_invalid]"),
        (&["call", dir, "math/ad", "--input", "{}"], None, 3, "did you mean `math/add`"),
        (&["call", dir, "hostile/bad_output", "--input", "{}"], None, 6, "error[output_invalid]"),
        (
            &["call", dir, "hostile/fail", "--input", r#"{"message":"no"}"#],
            None,
            7,
            "error[failed]: `hostile/fail` failed: no",
        ),
        (&["call", dir, "hostile/panic", "--input", r#"{"message":"boom"}"#], None, 8, "error[trap]"),
        (&["inspect", dir], None, 14, "error[load]"),
    ];
    for (args, stdin, code, expected) in cases {
        let output = toolhost(args, stdin);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        let line = stderr_line(&output);
        assert!(line.contains(expected), "{args:?}: {line}");
        assert!(output.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

/// A tool that is missing because its component failed to load says so (exit 14), while
/// one missing from a healthy namespace stays "not found" (exit 3).
#[test]
fn a_tool_of_a_component_that_failed_to_load_is_a_load_error() {
    let tools = ToolsDir::with_examples();
    tools.write("units", "convert.wasm", b"\0asm\x0d\0\x01\0truncated");
    let dir = tools.path().to_str().unwrap();
    let output = toolhost(&["call", dir, "units/convert", "--input", "{}"], None);
    assert_eq!(output.status.code(), Some(14), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr.trim_end().lines().last().unwrap();
    assert!(last.starts_with("error[load]: no tool named `units/convert` is served;"), "{last}");
    assert!(last.contains("units/convert.wasm"), "{last}");
    let output = toolhost(&["call", dir, "math/nothing", "--input", "{}"], None);
    assert_eq!(output.status.code(), Some(3));
}

/// `--report` prints the report whatever happens, and its error kind is the one of the
/// `error[KIND]` line and of the exit code — also where the CLI, not the call, decides
/// the failure (input that is not JSON, a tool missing because its file did not load).
#[test]
fn the_report_names_the_same_error_kind_as_the_exit_code_and_the_error_line() {
    let tools = ToolsDir::with_examples();
    tools.install("hostile", "hostile", "hostile");
    tools.write("units", "convert.wasm", b"\0asm\x0d\0\x01\0truncated");
    let dir = tools.path().to_str().unwrap();
    let nested = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    let (deep, deeper) = (nested(toolhost::MAX_INPUT_DEPTH + 1), nested(200));
    let cases: [(&str, &str, Option<&str>); 9] = [
        ("math/add", r#"{"numbers":[1,2]}"#, None),
        ("math/add", "{not json", Some("input_invalid")),
        ("json/get", &deep, Some("input_invalid")),
        ("json/get", &deeper, Some("input_invalid")),
        ("math/ad", "{}", Some("not_found")),
        ("units/convert", "{}", Some("load")),
        ("hostile/fail", r#"{"message":"no"}"#, Some("failed")),
        ("hostile/panic", r#"{"message":"boom"}"#, Some("trap")),
        ("hostile/bad_output", "{}", Some("output_invalid")),
    ];
    for (tool, input, kind) in cases {
        let output = toolhost(&["call", dir, tool, "--report", "--input", input], None);
        let report = stdout_json(&output);
        let code = output.status.code();
        let Some(kind) = kind else {
            assert_eq!((code, &report["error"]), (Some(0), &Value::Null), "{tool}: {report}");
            assert_eq!(report["output"], json!({ "value": 3.0 }));
            continue;
        };
        assert_eq!(report["error"]["kind"], kind, "{tool} {input:.40}: {report}");
        let expected_code = match kind {
            "load" => toolhost::exit::LOAD,
            kind => toolhost::ErrorKind::ALL.iter().find(|k| k.as_str() == kind).unwrap().exit_code(),
        };
        assert_eq!(code, Some(i32::from(expected_code)), "{tool}: {}", String::from_utf8_lossy(&output.stderr));
        let stderr = String::from_utf8_lossy(&output.stderr);
        let line = stderr.lines().last().unwrap_or_default();
        assert!(line.starts_with(&format!("error[{kind}]: ")), "{tool}: {line}");
        let message = report["error"]["message"].as_str().unwrap();
        assert!(line.ends_with(&*toolhost::text::for_terminal(message)), "{tool}: {line} vs {report}");
        if tool == "json/get" {
            assert!(line.contains("nested deeper than 64 levels"), "{line}");
        }
    }
}

/// Each limit, and the caller policy, has its own exit code and one line on stderr.
#[test]
fn limits_and_policy_have_their_own_exit_codes() {
    let cases: [(&str, &str, &str, i32, &str); 4] = [
        ("fuel = 5_000_000", "hostile/spin", "{}", 9, "error[out_of_fuel]"),
        ("fuel = 1_000_000_000_000\ntimeout = \"200ms\"", "hostile/spin", "{}", 10, "error[timeout]"),
        ("memory = \"8 MiB\"", "hostile/memory_bomb", "{}", 11, "error[memory_limit]"),
        ("max_output = \"1 KiB\"", "hostile/huge_output", r#"{"bytes": 4096}"#, 12, "error[output_too_large]"),
    ];
    for (limits, tool, input, code, expected) in cases {
        let tools = ToolsDir::new();
        tools.install("hostile", "hostile", "hostile");
        tools.manifest("hostile", "hostile", &format!("[limits]\n{limits}\n"));
        let output = toolhost(&["call", tools.path().to_str().unwrap(), tool, "--input", input], None);
        assert_eq!(output.status.code(), Some(code), "{limits}: {}", String::from_utf8_lossy(&output.stderr));
        assert!(stderr_line(&output).starts_with(expected), "{limits}");
        assert!(output.stdout.is_empty(), "{limits}: nothing on stdout");
    }

    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    tools.install("hostile", "hostile", "hostile");
    let config = tools.path().join("toolhost.toml");
    std::fs::write(&config, "[[policy]]\nagent = \"planner\"\nallow = [\"math/*\"]\n").unwrap();
    let (dir, config) = (tools.path().to_str().unwrap(), config.to_str().unwrap());
    let as_planner = |tool: &str, input: &str| {
        toolhost(&["--config", config, "--agent", "planner", "call", dir, tool, "--input", input], None)
    };
    let allowed = as_planner("math/add", r#"{"numbers":[1]}"#);
    assert!(allowed.status.success(), "{}", String::from_utf8_lossy(&allowed.stderr));
    // A tool the agent may not see is not found, as for the agent; the operator at the
    // terminal is told why, on the error's one line.
    let denied = as_planner("hostile/fail", r#"{"message":"x"}"#);
    assert_eq!(denied.status.code(), Some(3), "{}", String::from_utf8_lossy(&denied.stderr));
    let stderr = String::from_utf8_lossy(&denied.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error[not_found]"), "{stderr}");
    assert!(stderr.contains("hidden from planner: not in the allow list"), "{stderr}");
}

/// `toolhost policy explain` says which rule decided, for one tool or every served tool,
/// in the cases users trip on: no rule covering the agent, a rule with only `deny`, a
/// `*` rule above a specific one.
#[test]
fn policy_explain_names_the_rule_that_decided() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let config = tools.path().join("toolhost.toml");
    std::fs::write(
        &config,
        "[[policy]]\nagent = \"cautious\"\ndeny = [\"math/divide\"]\n\n\
         [[policy]]\nagent = \"*\"\nallow = [\"math/add\"]\napprove_above = \"low\"\n\n\
         [[policy]]\nagent = \"planner\"\nallow = [\"math/*\"]\n",
    )
    .unwrap();
    let (dir, config) = (tools.path().to_str().unwrap(), config.to_str().unwrap());
    let explain = |args: &[&str]| {
        let output = toolhost(&[&["--config", config, "policy", "explain"], args, &["--dir", dir]].concat(), None);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        stdout_json(&output)
    };
    let deny_only = explain(&["cautious", "math/add"]);
    assert_eq!(deny_only[0]["decision"], "refused", "{deny_only}");
    assert_eq!(deny_only[0]["rule"]["number"], 1);
    assert!(deny_only[0]["reason"].as_str().unwrap().contains("allows nothing"), "{deny_only}");
    // `*` covers the planner first: its own rule, further down, is never reached.
    let planner = explain(&["planner"]);
    let decisions: Vec<(&str, &str, u64)> = planner
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["tool"].as_str().unwrap(), t["decision"].as_str().unwrap(), t["rule"]["number"].as_u64().unwrap()))
        .collect();
    assert!(decisions.contains(&("math/add", "approval", 2)), "{decisions:?}");
    assert!(decisions.contains(&("math/divide", "refused", 2)), "{decisions:?}");
    assert!(decisions.iter().all(|(_, _, rule)| *rule == 2), "{decisions:?}");
    let unknown = toolhost(&["--config", config, "policy", "explain", "planner", "math/ad", "--dir", dir], None);
    assert_eq!(unknown.status.code(), Some(3), "an unknown tool is not found");
    // Without rules, everyone may call everything, and it says so.
    let open = toolhost(&["policy", "explain", "anyone", "math/add", "--dir", dir], None);
    let open = stdout_json(&open);
    assert_eq!(open[0]["decision"], "allowed");
    assert!(open[0]["reason"].as_str().unwrap().contains("no rules"), "{open}");
}

#[test]
fn help_lists_the_commands_and_exit_codes() {
    let output = toolhost(&["--help"], None);
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    let codes = [
        "0 ok",
        "1 host error (configuration, I/O)",
        "2 usage error",
        "3 not found",
        "4 permission denied",
        "5 invalid input",
        "6 invalid output",
        "7 tool failed",
        "8 trap",
        "9 out of fuel",
        "10 timeout",
        "11 memory limit",
        "12 output too large",
        "13 the host could not run the call",
        "14 component failed to load",
        "15 cancelled",
        "16 over the agent's quota",
    ];
    let table = format!("Exit codes: {}.", codes.join(", "));
    for expected in ["list", "inspect", "export", "call", "serve", "new", table.as_str()] {
        assert!(help.contains(expected), "missing {expected:?} in:\n{help}");
    }
}

#[test]
fn inspect_shows_what_a_component_could_ask_for_and_what_it_is_granted() {
    let tools = ToolsDir::new();
    let wasm = tools.install("http", "http", "http");
    tools.manifest(
        "http",
        "http",
        "[limits]\ntimeout = \"2s\"\n[grants]\nnetwork = [\"api.example.com:443\"]\nconfig = { token = \"s3cr3t\" }\n",
    );
    let output = toolhost(&["inspect", wasm.to_str().unwrap()], None);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let inspection = stdout_json(&output);
    let capabilities = &inspection["capabilities"];
    assert_eq!(capabilities["http"], json!({ "imported": true, "granted": ["api.example.com:443"] }));
    assert_eq!(capabilities["filesystem"]["granted"], json!([]));
    assert_eq!(capabilities["config"]["granted"], json!(["token"]));
    assert_eq!(inspection["limits"]["timeout"], 2000);
    assert!(!String::from_utf8_lossy(&output.stdout).contains("s3cr3t"), "config values are never shown");
}

/// The agent-loop example, run twice on one data directory: its to-do list (`task/*` of
/// the stdlib, on the default SQLite storage) survives each host restart and the next
/// run, while the native tool's notes, in the process's memory, do not.
#[test]
fn the_agent_loop_example_keeps_its_tasks_across_host_restarts() {
    let profile_dir = toolhost_tests::cargo_build(&["--example", "agent_loop"]);
    let tools = ToolsDir::with_examples();
    let stdlib = ToolsDir::new();
    stdlib.install("stdlib-task", "task", "task");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../stdlib/task/manifest.toml");
    stdlib.manifest("task", "task", &std::fs::read_to_string(shipped).unwrap());
    let data = tempfile::tempdir().unwrap();
    let run = || {
        let output = Command::new(profile_dir.join("examples/agent_loop"))
            .arg(tools.path())
            .arg(stdlib.path())
            .env("TOOLHOST_DATA_DIR", data.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "no load errors");
        String::from_utf8(output.stdout).unwrap()
    };

    let first = run();
    assert!(first.contains("exported 17 tools"), "the examples, task/* and the native tool: {first}");
    assert!(first.contains(r#"tool call_0 (task__list): {"count":0,"tasks":[]}"#), "{first}");
    assert!(first.contains(r#"tool call_1 (math__evaluate): {"value":1200.0}"#), "{first}");
    assert!(first.contains(r#"tool call_5 (agent__remember): {"notes":1}"#), "{first}");
    assert!(first.contains(r#"notes kept by the native tool: ["the report slug is for Q3"]"#), "{first}");
    assert!(first.contains(r#"tool call_3 (math__add): {"error":"input_invalid""#), "{first}");
    assert!(first.contains(r#"tool call_4 (math__add): {"value":6.0}"#), "{first}");
    assert!(first.contains(r#"tool call_6 (task__create): {"#), "{first}");
    let (_, restarted) = first.split_once("== the host stops; a new one starts").expect("a restart");
    assert!(restarted.contains(r#"tool call_7 (task__list): {"count":1,"#), "the task survived: {restarted}");
    assert!(restarted.contains(r#""title":"Publish the Q3 report""#), "{restarted}");
    assert!(restarted.contains("notes kept by the native tool: []"), "memory does not survive: {restarted}");

    let second = run();
    let (before_restart, restarted) = second.split_once("== the host stops").expect("a restart");
    assert!(before_restart.contains(r#"tool call_0 (task__list): {"count":1,"#), "the last run's task: {second}");
    assert!(restarted.contains(r#"tool call_7 (task__list): {"count":2,"#), "{restarted}");
    assert!(restarted.contains(r#""id":2"#), "ids go on where the last run stopped: {restarted}");
}

#[test]
fn export_prints_each_format() {
    let tools = ToolsDir::with_examples();
    let dir = tools.path().to_str().unwrap();
    let openai = stdout_json(&toolhost(&["export", "--format", "openai", dir], None));
    assert_eq!(openai[0]["function"]["name"], "json__get");
    let mcp = stdout_json(&toolhost(&["export", "--format", "mcp", dir], None));
    assert_eq!(mcp["tools"][0]["name"], "json.get");
    let bad = toolhost(&["export", "--format", "xml", dir], None);
    assert_eq!(bad.status.code(), Some(2), "a usage error");
}

/// A call that needs approval asks the person at the terminal (stdin a TTY, here the
/// pseudo-terminal of `script`), runs on a yes, and is denied on anything else; with
/// stdin not a terminal nobody is asked and it is denied.
#[test]
fn a_call_that_needs_approval_asks_at_the_terminal_and_only_there() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    tools.manifest("math", "math", "[tools.divide.policy]\nrequires_approval = true\n");
    let dir = tools.path().to_str().unwrap();
    let input = r#"{"dividend":6,"divisor":3}"#;
    let denied_kind = toolhost::ErrorKind::PermissionDenied.exit_code();

    let piped = toolhost(&["call", dir, "math/divide", "--input", input], Some("y\n"));
    assert_eq!(piped.status.code(), Some(i32::from(denied_kind)), "{piped:?}");
    assert!(stderr_line(&piped).contains("nobody could be asked: stdin is not a terminal"), "{piped:?}");

    let at_terminal = |answer: &str| {
        let command = format!("{} call {dir} math/divide --input '{input}'", toolhost_bin().display());
        let mut child = Command::new("script")
            .args(["--quiet", "--return", "--command", &command, "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run script (util-linux)");
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(answer.as_bytes()).unwrap();
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stdout).replace('\r', ""))
    };
    let (code, screen) = at_terminal("y\n");
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains("local asks to run math/divide (risk: medium): the tool requires approval"), "{screen}");
    assert!(screen.contains("Run it? [y/N]") && screen.contains(r#""value": 2.0"#), "{screen}");
    let (code, screen) = at_terminal("n\n");
    assert_eq!(code, Some(i32::from(denied_kind)), "{screen}");
    assert!(screen.contains("not approved at the terminal"), "{screen}");
}

/// What a guest chooses (its failure message, log line, stderr) reaches the operator's
/// terminal escaped: no ESC, CR, NUL or other control character, no forged line.
#[test]
fn guest_text_reaches_the_terminal_escaped() {
    let tools = ToolsDir::new();
    tools.install("hostile", "hostile", "hostile");
    let dir = tools.path().to_str().unwrap();
    let hostile = "\u{1b}[2J\u{1b}[31mowned\r\nerror[forged]: trust me\u{0}\u{7}\u{202e}";
    let input = json!({ "message": hostile }).to_string();
    let output = toolhost(&["--log", "toolhost=debug", "call", dir, "hostile/fail", "--input", &input], None);
    assert_eq!(output.status.code(), Some(i32::from(toolhost::ErrorKind::Failed.exit_code())));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for raw in ['\u{1b}', '\r', '\0', '\u{7}', '\u{202e}'] {
        assert!(!stderr.contains(raw), "raw {raw:?} on stderr: {stderr:?}");
    }
    assert!(!stderr.lines().any(|line| line.starts_with("error[forged]")), "a forged line: {stderr}");
    let error_line = stderr.lines().find(|line| line.starts_with("error[failed]")).expect("the error line");
    assert!(error_line.contains(r"\u{1b}[31mowned\r\nerror[forged]: trust me\0\u{7}\u{202e}"), "{error_line}");
    // The guest's log line and its stderr went to the debug log, escaped too.
    let escaped_lines = stderr.lines().filter(|line| line.contains(r"owned\r\nerror[forged]")).count();
    assert!(escaped_lines >= 3, "error, log and stderr lines: {stderr}");
}

/// `toolhost call` loads only the namespace the name names: a broken component in
/// another namespace is not even read (no warning), while a typo in the namespace still
/// gets the close matches among every tool.
#[test]
fn a_call_loads_only_the_namespace_it_names() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    tools.write("broken", "half.wasm", b"\0asm\x0d\0\x01\0 truncated");
    let dir = tools.path().to_str().unwrap();
    let output = toolhost(&["call", dir, "math.add", "--input", r#"{"numbers":[1,2]}"#], None);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(stdout_json(&output), json!({ "value": 3.0 }));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "", "the broken namespace was not loaded");

    let typo = toolhost(&["call", dir, "mth/add", "--input", "{}"], None);
    assert_eq!(typo.status.code(), Some(i32::from(toolhost::ErrorKind::NotFound.exit_code())));
    let stderr = String::from_utf8_lossy(&typo.stderr);
    assert!(stderr.trim_end().lines().last().unwrap().contains("did you mean `math/add`"), "{stderr}");

    let listed = toolhost(&["list", dir], None);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("half.wasm"), "list still loads everything");
}
