//! The stdlib's code-execution tools, `code/javascript` (Boa) and `code/python`
//! (RustPython), installed with the manifests they ship with: normal use, the code they
//! refuse or fail, and the limits that stop runaway code while the host keeps serving.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::{CacheSetting, CallError, EngineSettings, MemoryResource, Risk, Tiering, ToolHost};
use toolhost_tests::{ToolsDir, shipped_manifest};

const JS: &str = "code/javascript";
const PY: &str = "code/python";

/// One compile cache for every test here: both interpreters are megabytes of code, so
/// each is compiled once per test run instead of once per test. Compiled by Cranelift
/// in the foreground (`OptimizedOnly`), never in the background: a background compile
/// of megabytes outlives its test, and holds its host's engine (and the engine's
/// terabytes of reserved address space) until it ends; a few tests' worth of them
/// exhausted the test process's address space.
fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stdlib-code-cache")
}

/// A host serving both tools as `cargo xtask stdlib` installs them: the components
/// with their shipped manifests, or with `javascript`/`python` as the manifest instead.
async fn code_host(javascript: Option<&str>, python: Option<&str>) -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::new();
    tools.install("code-javascript", "code", "javascript");
    tools.install("code-python", "code", "python");
    tools.manifest("code", "javascript", javascript.unwrap_or(&shipped_manifest("code-javascript")));
    tools.manifest("code", "python", python.unwrap_or(&shipped_manifest("code-python")));
    let host = ToolHost::builder()
        .engine_settings(EngineSettings { tiering: Tiering::OptimizedOnly, ..EngineSettings::default() })
        .root(tools.path())
        .compile_cache(CacheSetting::Dir(cache_dir()))
        .build()
        .await
        .expect("host builds");
    assert_eq!(host.load_errors(), vec![]);
    (tools, host)
}

async fn run(host: &ToolHost, tool: &str, input: Value) -> Value {
    host.call(tool, input.clone()).await.unwrap_or_else(|e| panic!("{tool} {input}: {e}"))
}

fn failure_message(error: CallError) -> String {
    match error {
        CallError::Failed { message, .. } => message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn invalid_input_reason(error: CallError) -> String {
    match error {
        CallError::InputInvalid { violations, .. } => {
            violations.iter().map(|v| v.reason.clone()).collect::<Vec<_>>().join("; ")
        }
        other => panic!("expected invalid input, got {other:?}"),
    }
}

/// Both tools still answer after a call that was stopped.
async fn assert_still_serving(host: &ToolHost) {
    assert_eq!(run(host, JS, json!({ "code": "6 * 7" })).await["result"], json!(42));
    assert_eq!(run(host, PY, json!({ "code": "6 * 7" })).await["result"], json!(42));
}

#[tokio::test]
async fn the_shipped_manifests_make_both_tools_high_risk_and_closed_world_with_limits() {
    let (_tools, host) = code_host(None, None).await;
    let snapshot = host.snapshot();
    for tool in [JS, PY] {
        let definition = snapshot.tools[tool].def();
        assert_eq!(definition.policy.risk, Risk::High, "{tool}");
        assert_eq!(definition.policy.hints.read_only, Some(true), "{tool}");
        assert_eq!(definition.policy.hints.open_world, Some(false), "{tool}");
        assert_eq!(definition.limits.fuel, 20_000_000_000, "{tool}");
        assert_eq!(definition.limits.memory, 256 << 20, "{tool}");
        assert_eq!(definition.limits.timeout, Duration::from_secs(10), "{tool}");
    }
}

#[tokio::test]
async fn javascript_returns_its_last_value_as_json_and_what_it_printed() {
    let (_tools, host) = code_host(None, None).await;
    assert_eq!(
        run(&host, JS, json!({ "code": "1 + 2 * 3" })).await,
        json!({ "result": 7, "result_type": "number", "stdout": "", "truncated": false })
    );
    let doubled = run(
        &host,
        JS,
        json!({ "code": "const xs = input.map(x => x * 2);\nconsole.log('n =', xs.length);\nxs", "input": [1, 2, 3] }),
    )
    .await;
    assert_eq!(
        doubled,
        json!({ "result": [2, 4, 6], "result_type": "array", "stdout": "n = 3\n", "truncated": false })
    );

    let object =
        run(&host, JS, json!({ "code": "({ name: 'ada', langs: ['en'], nested: { ok: true, none: null } })" })).await;
    assert_eq!(object["result"], json!({ "name": "ada", "langs": ["en"], "nested": { "ok": true, "none": null } }));
    assert_eq!(object["result_type"], "object");

    // Values JSON has no form for, by the rules the description gives.
    let undefined = run(&host, JS, json!({ "code": "let x = 1;" })).await;
    assert_eq!((&undefined["result"], &undefined["result_type"]), (&json!(null), &json!("undefined")));
    let bigint = run(&host, JS, json!({ "code": "2n ** 70n" })).await;
    assert_eq!((&bigint["result"], &bigint["result_type"]), (&json!("1180591620717411303424"), &json!("bigint")));
    assert_eq!(run(&host, JS, json!({ "code": "new Date(0)" })).await["result"], json!("1970-01-01T00:00:00.000Z"));
    assert_eq!(run(&host, JS, json!({ "code": "[NaN, () => 1]" })).await["result"], json!([null, null]));

    // A promise is awaited once the script's jobs have run.
    let awaited = run(&host, JS, json!({ "code": "(async () => (await Promise.resolve(20)) + 1)()" })).await;
    assert_eq!(awaited["result"], json!(21));
}

#[tokio::test]
async fn javascript_refuses_bad_syntax_and_fails_on_an_uncaught_exception_with_its_line() {
    let (_tools, host) = code_host(None, None).await;
    let syntax = invalid_input_reason(host.call(JS, json!({ "code": "let x = ;" })).await.unwrap_err());
    assert!(syntax.contains("SyntaxError") && syntax.contains("line 1"), "{syntax}");
    let unclosed = invalid_input_reason(host.call(JS, json!({ "code": "[1, 2" })).await.unwrap_err());
    assert!(unclosed.contains("unexpected end of the script"), "{unclosed}");

    let thrown = host
        .call(
            JS,
            json!({ "code": "console.log('before');\nfunction check() { throw new RangeError('too big') }\ncheck()" }),
        )
        .await
        .unwrap_err();
    let message = failure_message(thrown);
    assert!(message.starts_with("Uncaught RangeError: too big\n    at check (script.js:2:"), "{message}");
    assert!(message.contains("at <main> (script.js:3:"), "{message}");
    assert!(message.ends_with("printed before the error (its end):\nbefore\n"), "{message}");

    let type_error = failure_message(host.call(JS, json!({ "code": "null.field" })).await.unwrap_err());
    assert!(type_error.starts_with("Uncaught TypeError"), "{type_error}");
    let plain = failure_message(host.call(JS, json!({ "code": "throw 'just a string'" })).await.unwrap_err());
    assert_eq!(plain, "Uncaught just a string");
    // The schema bounds the program before the tool sees it.
    let empty = host.call(JS, json!({ "code": "" })).await.unwrap_err();
    assert!(matches!(empty, CallError::InputInvalid { .. }), "{empty:?}");
}

#[tokio::test]
async fn javascript_has_no_modules_files_network_or_timers() {
    let (_tools, host) = code_host(None, None).await;
    let globals = run(
        &host,
        JS,
        json!({ "code": "[typeof require, typeof process, typeof fetch, typeof XMLHttpRequest, typeof setTimeout, typeof Deno]" }),
    )
    .await;
    assert_eq!(globals["result"], Value::from(vec!["undefined"; 6]));
    let dynamic_import = failure_message(host.call(JS, json!({ "code": "import('fs')" })).await.unwrap_err());
    assert!(dynamic_import.contains("module resolution is disabled"), "{dynamic_import}");
    let static_import = host.call(JS, json!({ "code": "import fs from 'fs'" })).await.unwrap_err();
    assert!(matches!(static_import, CallError::InputInvalid { .. }), "{static_import:?}");
    let fetch = failure_message(host.call(JS, json!({ "code": "fetch('http://example.com')" })).await.unwrap_err());
    assert!(fetch.contains("ReferenceError"), "{fetch}");
    // Nothing survives a call: a global set by one call is gone in the next.
    run(&host, JS, json!({ "code": "globalThis.leftover = 1" })).await;
    assert_eq!(run(&host, JS, json!({ "code": "typeof leftover" })).await["result"], json!("undefined"));
}

#[tokio::test]
async fn python_returns_its_last_expression_or_result_as_json_and_what_it_printed() {
    let (_tools, host) = code_host(None, None).await;
    assert_eq!(
        run(&host, PY, json!({ "code": "2 ** 10 - 1" })).await,
        json!({ "result": 1023, "result_type": "int", "stdout": "", "truncated": false })
    );
    let summed = run(
        &host,
        PY,
        json!({ "code": "total = sum(input)\nprint('total', total)\n{'total': total, 'n': len(input)}", "input": [1, 2, 3] }),
    )
    .await;
    assert_eq!(
        summed,
        json!({ "result": { "total": 6, "n": 3 }, "result_type": "dict", "stdout": "total 6\n", "truncated": false })
    );
    // Without a final expression (or when it is None), the global `result`.
    let named = run(&host, PY, json!({ "code": "result = [x * x for x in range(4)]\nprint('done')" })).await;
    assert_eq!((&named["result"], &named["stdout"]), (&json!([0, 1, 4, 9]), &json!("done\n")));
    let nothing = run(&host, PY, json!({ "code": "x = 1" })).await;
    assert_eq!((&nothing["result"], &nothing["result_type"]), (&json!(null), &json!("NoneType")));
    // The last expression after loops and branches is the last line's value.
    let after_loop =
        run(&host, PY, json!({ "code": "n = 0\nfor i in range(5):\n    n += i\nif n:\n    y = 1\nn" })).await;
    assert_eq!(after_loop["result"], json!(10));

    // Values JSON has no form for, by the rules the description gives.
    let mixed = run(&host, PY, json!({ "code": "(2 ** 70, float('nan'), {1: {3}}, None, True, 'é')" })).await;
    assert_eq!(mixed["result"], json!(["1180591620717411303424", null, { "1": "{3}" }, null, true, "é"]));
    assert_eq!(mixed["result_type"], "tuple");
    let cycle = run(&host, PY, json!({ "code": "a = [1]\na.append(a)\na" })).await;
    assert_eq!(cycle["result"], json!([1, "[1, [...]]"]));
    let input_types = run(
        &host,
        PY,
        json!({ "code": "[type(v).__name__ for v in input]", "input": [1, 1.5, "s", null, true, [], {}] }),
    )
    .await;
    assert_eq!(input_types["result"], json!(["int", "float", "str", "NoneType", "bool", "list", "dict"]));
}

#[tokio::test]
async fn python_refuses_bad_syntax_and_fails_on_an_uncaught_exception_with_its_traceback() {
    let (_tools, host) = code_host(None, None).await;
    let syntax = invalid_input_reason(host.call(PY, json!({ "code": "x = 1\ndef f(:\n    pass" })).await.unwrap_err());
    assert!(syntax.starts_with("SyntaxError") && syntax.contains("line 2"), "{syntax}");
    assert!(syntax.contains("def f(:"), "quotes the line: {syntax}");

    let raised = host
        .call(PY, json!({ "code": "print('before')\ndef check(n):\n    raise ValueError(f'bad {n}')\n\ncheck(7)" }))
        .await
        .unwrap_err();
    let message = failure_message(raised);
    assert!(message.starts_with("Traceback (most recent call last):"), "{message}");
    assert!(message.contains("line 5, in <module>") && message.contains("line 3, in check"), "{message}");
    assert!(message.contains("ValueError: bad 7"), "{message}");
    assert!(message.ends_with("printed before the error (its end):\nbefore\n"), "{message}");

    // A runaway recursion is Python's RecursionError, its frames folded.
    let recursion = failure_message(
        host.call(PY, json!({ "code": "def down(n):\n    return down(n + 1)\ndown(0)" })).await.unwrap_err(),
    );
    assert!(recursion.contains("RecursionError") && recursion.contains("[the line above repeated"), "{recursion}");
    assert!(recursion.len() < 4096, "{} bytes", recursion.len());
}

#[tokio::test]
async fn python_cannot_import_os_open_files_or_reach_the_network() {
    let (_tools, host) = code_host(None, None).await;
    for module in ["posix", "socket", "subprocess", "urllib.request", "ctypes"] {
        let message = failure_message(host.call(PY, json!({ "code": format!("import {module}") })).await.unwrap_err());
        assert!(message.contains("ModuleNotFoundError"), "{module}: {message}");
    }
    // `os` is a shim: its path functions, `urandom` and an empty environment, and for
    // anything else an error that says why.
    for code in ["import os\nos.listdir('/')", "import os\nos.system('ls')", "import os\nos.open('/etc/passwd', 0)"] {
        let message = failure_message(host.call(PY, json!({ "code": code })).await.unwrap_err());
        assert!(message.contains("AttributeError") && message.contains("this sandbox has no files"), "{message}");
    }
    let shim =
        run(&host, PY, json!({ "code": "import os\n[os.environ, os.getenv('HOME'), os.path.join('a', 'b')]" })).await;
    assert_eq!(shim["result"], json!([{}, null, "a/b"]));
    let opened = failure_message(host.call(PY, json!({ "code": "open('/etc/passwd').read()" })).await.unwrap_err());
    assert!(opened.contains("UnsupportedOperation") || opened.contains("Error"), "{opened}");
    // `input` is the caller's value, not the function reading stdin.
    assert_eq!(run(&host, PY, json!({ "code": "input" })).await["result"], json!(null));
    // Nothing survives a call.
    run(&host, PY, json!({ "code": "import sys\nsys.leftover = 1" })).await;
    assert_eq!(run(&host, PY, json!({ "code": "import sys\nhasattr(sys, 'leftover')" })).await["result"], json!(false));
}

/// The installed component is a snapshot taken after its interpreter was built and the
/// standard modules a model reaches for were imported (`toolhost preinit`): a call pays
/// for neither. Fuel, which counts the guest's instructions, shows it: building the
/// interpreter alone took 73 M fuel before, importing every module 2.2 G.
#[tokio::test]
async fn python_has_the_standard_modules_a_model_reaches_for_already_imported() {
    let (_tools, host) = code_host(None, None).await;
    let code = "import math, json, re, datetime, itertools, collections, statistics, random, decimal, fractions
json.dumps({
    'sqrt2': round(math.sqrt(2) * 1000),
    'words': re.findall(r'[a-z]+', 'to be, or not'),
    'day': (datetime.date(2026, 12, 6) + datetime.timedelta(days=30)).isoformat(),
    'pairs': list(itertools.combinations('abc', 2)),
    'common': collections.Counter('mississippi').most_common(2),
    'mean': statistics.mean([1, 2, 3, 4]),
    'median': statistics.median([5, 1, 3]),
    'money': str(decimal.Decimal('0.1') + decimal.Decimal('0.2')),
    'third': str(fractions.Fraction(1, 3) * 3),
    'die': 1 <= random.randint(1, 6) <= 6,
}, sort_keys=True)";
    let report = host.call_detailed(PY, json!({ "code": code })).await;
    let output = report.outcome.unwrap_or_else(|e| panic!("{e}"));
    let computed: Value = serde_json::from_str(output["result"].as_str().unwrap()).unwrap();
    assert_eq!(
        computed,
        json!({
            "sqrt2": 1414, "words": ["to", "be", "or", "not"], "day": "2027-01-05",
            "pairs": [["a", "b"], ["a", "c"], ["b", "c"]], "common": [["i", 4], ["s", 4]],
            "mean": 2.5, "median": 3, "money": "0.3", "third": "1", "die": true,
        })
    );
    assert!(report.fuel_consumed < 20_000_000, "importing the modules cost {} fuel", report.fuel_consumed);
    let trivial = host.call_detailed(PY, json!({ "code": "1 + 1" })).await;
    assert_eq!(trivial.outcome.unwrap()["result"], json!(2));
    assert!(trivial.fuel_consumed < 5_000_000, "a trivial call cost {} fuel", trivial.fuel_consumed);
    let javascript = host.call_detailed(JS, json!({ "code": "1 + 1" })).await;
    assert_eq!(javascript.outcome.unwrap()["result"], json!(2));
    assert!(javascript.fuel_consumed < 1_000_000, "a trivial JavaScript call cost {} fuel", javascript.fuel_consumed);
}

/// Every instance of a snapshot starts from the same memory: what must differ between
/// calls is drawn per call.
#[tokio::test]
async fn random_numbers_differ_between_calls_of_a_snapshot() {
    let (_tools, host) = code_host(None, None).await;
    for (tool, code) in [
        (PY, "import random\n[random.random() for _ in range(4)]"),
        (PY, "import os\nlist(os.urandom(16))"),
        (PY, "import uuid\nstr(uuid.uuid4())"),
        (JS, "[Math.random(), Math.random()]"),
    ] {
        let first = run(&host, tool, json!({ "code": code })).await["result"].clone();
        let second = run(&host, tool, json!({ "code": code })).await["result"].clone();
        assert_ne!(first, second, "{tool}: {code}");
    }
}

/// Limits: each stopped call gets its typed error and both tools answer right after.
/// Smaller budgets than the shipped ones keep the test quick; the shipped limits are
/// checked above.
#[tokio::test]
async fn endless_loops_end_out_of_fuel_or_at_the_timeout() {
    let fuel = "[limits]\nfuel = 2_000_000_000\ntimeout = \"60s\"\n";
    let (_tools, host) = code_host(Some(fuel), Some(fuel)).await;
    for (tool, code) in [(JS, "while (true) {}"), (PY, "while True:\n    pass")] {
        let error = host.call(tool, json!({ "code": code })).await.unwrap_err();
        assert_eq!(error, CallError::OutOfFuel { tool: tool.into(), limit: 2_000_000_000 });
    }
    assert_still_serving(&host).await;

    let clock = "[limits]\nfuel = 1_000_000_000_000_000\ntimeout = \"500ms\"\n";
    let (_tools, host) = code_host(Some(clock), Some(clock)).await;
    for (tool, code) in [(JS, "for (;;) {}"), (PY, "while True:\n    pass")] {
        let error = host.call(tool, json!({ "code": code })).await.unwrap_err();
        assert_eq!(error, CallError::Timeout { tool: tool.into(), limit: Duration::from_millis(500) });
    }
    assert_still_serving(&host).await;
}

#[tokio::test]
async fn a_giant_allocation_hits_the_memory_limit() {
    let memory = "[limits]\nfuel = 20_000_000_000\ntimeout = \"10s\"\nmemory = \"48 MiB\"\n";
    let (_tools, host) = code_host(Some(memory), Some(memory)).await;
    let cases = [
        (JS, "'x'.repeat(2 ** 26).length"),
        (JS, "const kept = [];\nfor (;;) kept.push('x'.repeat(1_000_000) + kept.length);"),
        (PY, "x = 'x' * (2 ** 27)\nlen(x)"),
        (PY, "kept = []\nwhile True:\n    kept.append('x' * 1_000_000 + str(len(kept)))"),
    ];
    for (tool, code) in cases {
        let error = host.call(tool, json!({ "code": code })).await.unwrap_err();
        assert_eq!(
            error,
            CallError::MemoryLimit { tool: tool.into(), resource: MemoryResource::LinearMemory, limit: 48 << 20 },
            "{tool}: {code}"
        );
    }
    assert_still_serving(&host).await;
}

#[tokio::test]
async fn printing_megabytes_keeps_64_kib_and_says_it_was_cut() {
    let (_tools, host) = code_host(None, None).await;
    let cases = [
        (JS, "const line = 'x'.repeat(999);\nfor (let i = 0; i < 2000; i++) console.log(line);\n'done'"),
        (PY, "line = 'x' * 999\nfor i in range(2000):\n    print(line)\n'done'"),
    ];
    for (tool, code) in cases {
        let report = host.call_detailed(tool, json!({ "code": code })).await;
        let output = report.outcome.unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert_eq!(output["result"], json!("done"), "{tool}");
        assert_eq!(output["truncated"], json!(true), "{tool}");
        let stdout = output["stdout"].as_str().unwrap();
        assert_eq!(stdout.len(), 64 * 1024, "{tool}");
        assert!(stdout.starts_with(&format!("{}\n", "x".repeat(999))), "{tool}");
        // Nothing reached the host's capture: the interpreter's streams are the tool's.
        assert!(report.captured.stdout.is_empty() && report.captured.stderr.is_empty(), "{tool}");
    }
    let fits = run(&host, PY, json!({ "code": "print('short')" })).await;
    assert_eq!((&fits["stdout"], &fits["truncated"]), (&json!("short\n"), &json!(false)));
}
