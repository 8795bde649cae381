//! Plain components: components written for any host (bare wit-bindgen, no toolhost
//! contract) whose exported functions are served as tools, with exact JSON forms of
//! every WIT type. `tests/guests/plain-types` exports an echo function per type; the
//! properties below run generated values of every type, nested, through the host and
//! the guest and back.

use base64::Engine as _;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};
use toolhost::{CallError, Caller, Contract, ExportFormat, SourceKind, ToolHost};
use toolhost_tests::ToolsDir;

async fn plain_host(file: &str) -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::new();
    tools.write("plain", "types.wasm", &std::fs::read(toolhost_tests::guest_dir().join(file)).unwrap());
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![], "the plain component loads");
    (tools, host)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[tokio::test]
async fn every_representable_function_is_a_tool_and_the_rest_are_reported() {
    let (_tools, host) = plain_host("plain_types.wasm").await;
    let snapshot = host.snapshot();
    let names: Vec<&str> = snapshot.tools.keys().map(String::as_str).collect();
    for expected in
        ["plain/echo-u64", "plain/echo-everything", "plain/add", "plain/greet", "plain/fail", "plain/nothing"]
    {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    // Two exports named `get` are told apart by their interfaces.
    assert!(names.contains(&"plain/misc-get") && names.contains(&"plain/other-get"), "{names:?}");
    assert!(!names.iter().any(|name| name.ends_with("/get")), "{names:?}");
    let entry = &snapshot.tools["plain/add"];
    assert_eq!(entry.source.kind(), SourceKind::PlainComponent);
    let component = entry.source.component().unwrap();
    let Contract::Plain { skipped } = &component.contract else { panic!("a plain contract") };
    let peek = skipped.iter().find(|s| s.export.ends_with("#peek")).expect("peek is reported");
    assert!(peek.reason.contains("parameter `c`: a resource handle"), "{peek:?}");
    assert!(skipped.iter().any(|s| s.export.contains("[constructor]counter")), "{skipped:?}");
    assert_eq!(host.call("plain/misc-get", json!({})).await, Ok(json!("misc")));
    assert_eq!(host.call("plain/other-get", json!({})).await, Ok(json!("other")));
}

#[tokio::test]
async fn schemas_are_exact() {
    let (_tools, host) = plain_host("plain_types.wasm").await;
    let input = |tool: &str| host.describe(&Caller::local(), tool).unwrap().input_schema["properties"]["v"].clone();
    assert_eq!(input("plain/echo-u64"), json!({ "type": "integer", "minimum": 0, "maximum": 18446744073709551615u64 }));
    assert_eq!(input("plain/echo-s64"), json!({ "type": "integer", "minimum": i64::MIN, "maximum": i64::MAX }));
    assert_eq!(input("plain/echo-u8"), json!({ "type": "integer", "minimum": 0, "maximum": 255 }));
    assert_eq!(input("plain/echo-char"), json!({ "type": "string", "minLength": 1, "maxLength": 1 }));
    assert_eq!(input("plain/echo-enum"), json!({ "type": "string", "enum": ["red", "green", "blue"] }));
    assert_eq!(input("plain/echo-bytes")["contentEncoding"], "base64");
    let add = host.describe(&Caller::local(), "plain/add").unwrap();
    assert_eq!(add.input_schema["required"], json!(["a", "b"]));
    assert_eq!(add.input_schema["additionalProperties"], false);
    assert_eq!(add.output_schema["type"], "integer");
    let record =
        host.describe(&Caller::local(), "plain/echo-everything").unwrap().input_schema["properties"]["v"].clone();
    let required: Vec<&str> = record["required"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    assert!(!required.contains(&"maybe") && required.contains(&"ulong"), "options may be omitted: {required:?}");
    assert_eq!(host.describe(&Caller::local(), "plain/nothing").unwrap().output_schema, json!({ "type": "null" }));
}

#[tokio::test]
async fn results_errors_and_several_parameters() {
    let (_tools, host) = plain_host("plain_types.wasm").await;
    assert_eq!(host.call("plain/greet", json!({ "name": "Ada" })).await, Ok(json!("Hello, Ada!")));
    assert_eq!(host.call("plain/add", json!({ "a": i64::MAX, "b": -1 })).await, Ok(json!(i64::MAX - 1)));
    assert_eq!(host.call("plain/nothing", json!({})).await, Ok(Value::Null));
    let failed = host.call("plain/fail", json!({ "message": "out of paper" })).await.unwrap_err();
    assert_eq!(failed, CallError::Failed { tool: "plain/fail".into(), message: "out of paper".into() });
    let structured = host.call("plain/fail-with", json!({ "code": 7 })).await.unwrap_err();
    assert_eq!(
        structured,
        CallError::Failed { tool: "plain/fail-with".into(), message: r#"[7,"failed with code 7"]"#.into() }
    );
    let wrapped = host.call("plain.echo-result", json!({ "v": { "err": 3 } })).await;
    assert_eq!(wrapped, Ok(json!({ "err": 3 })), "a nested result is a tagged object");
    for (tool, bad) in [
        ("plain/echo-u8", json!({ "v": 256 })),
        ("plain/echo-char", json!({ "v": "ab" })),
        ("plain/echo-bytes", json!({ "v": "not base64!" })),
        ("plain/echo-flags", json!({ "v": ["read", "read"] })),
        ("plain/echo-f32", json!({ "v": 1e39 })),
        ("plain/add", json!({ "a": 1 })),
    ] {
        let error = host.call(tool, bad.clone()).await.unwrap_err();
        assert!(matches!(error, CallError::InputInvalid { .. }), "{tool} {bad}: {error:?}");
    }
}

#[tokio::test]
async fn descriptions_come_from_wit_docs_the_signature_or_the_manifest() {
    let (_tools, documented) = plain_host("plain_types_documented.wasm").await;
    let description = |host: &ToolHost, tool: &str| host.describe(&Caller::local(), tool).unwrap().description;
    assert_eq!(description(&documented, "plain/greet"), "Says hello to someone, by name.");
    assert_eq!(description(&documented, "plain/add"), "Adds two numbers, to show several parameters.");
    let (tools, undocumented) = plain_host("plain_types.wasm").await;
    assert_eq!(description(&undocumented, "plain/greet"), "Calls `greet: func(name: string) -> string`.");
    assert_eq!(
        description(&undocumented, "plain/add"),
        "Calls `add: func(a: s64, b: s64) -> s64` of the interface `test:plain/echo@0.1.0`."
    );
    tools.manifest("plain", "types", "[tools.greet]\ndescription = \"Greets a person warmly.\"\n");
    undocumented.reload().await;
    assert_eq!(description(&undocumented, "plain/greet"), "Greets a person warmly.");
    tools.manifest("plain", "types", "[tools.no-such-tool]\ndescription = \"x\"\n");
    undocumented.reload().await;
    let errors = undocumented.load_errors();
    assert!(errors[0].to_string().contains("offers no such tool"), "{errors:?}");
}

#[tokio::test]
async fn plain_tools_have_the_same_limits_and_definitions_as_any_tool() {
    let (tools, host) = plain_host("plain_types.wasm").await;
    tools.manifest("plain", "types", "[limits]\nfuel = 1\n");
    host.reload().await;
    let starved = host.call("plain/echo-string", json!({ "v": "x" })).await;
    assert!(matches!(starved, Err(CallError::OutOfFuel { limit: 1, .. })), "{starved:?}");
    tools.manifest("plain", "types", "[limits]\nmax_output = 64\n");
    host.reload().await;
    let too_large = host.call("plain/echo-string", json!({ "v": "y".repeat(100) })).await;
    assert!(matches!(too_large, Err(CallError::OutputTooLarge { size: 102, limit: 64, .. })), "{too_large:?}");
    let mcp = host.export(ExportFormat::Mcp, &Caller::local());
    let echo = mcp["tools"].as_array().unwrap().iter().find(|t| t["name"] == "plain.echo-string").unwrap();
    assert_eq!(echo["inputSchema"]["properties"]["v"], json!({ "type": "string" }));
}

/// Runs `cases` generated inputs through `tool` and expects each back as `expected`.
fn round_trips(host: &ToolHost, tool: &str, cases: u32, strategy: impl Strategy<Value = (Value, Value)>) {
    let runtime = runtime();
    let mut runner = TestRunner::new(Config { cases, ..Config::default() });
    runner
        .run(&strategy, |(input, expected)| {
            let output = runtime.block_on(host.call(tool, json!({ "v": input })));
            prop_assert_eq!(output, Ok(expected), "{} of {}", tool, input);
            Ok(())
        })
        .unwrap();
}

/// An input that is also its own expected output.
fn same<S: Strategy<Value = Value>>(strategy: S) -> impl Strategy<Value = (Value, Value)> {
    strategy.prop_map(|v| (v.clone(), v))
}

fn f32_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => any::<f32>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f.to_string().parse::<f64>().unwrap())),
        1 => prop_oneof![Just(json!("NaN")), Just(json!("Infinity")), Just(json!("-Infinity"))],
    ]
}

fn f64_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        1 => prop_oneof![Just(json!("NaN")), Just(json!("Infinity")), Just(json!("-Infinity"))],
    ]
}

fn bytes_json() -> impl Strategy<Value = Value> {
    proptest::collection::vec(any::<u8>(), 0..48)
        .prop_map(|b| json!(base64::engine::general_purpose::STANDARD.encode(b)))
}

fn point() -> impl Strategy<Value = Value> {
    (any::<i32>(), any::<i32>()).prop_map(|(x, y)| json!({ "x": x, "y": y }))
}

fn shape() -> impl Strategy<Value = Value> {
    prop_oneof![
        f64_json().prop_map(|r| json!({ "circle": r })),
        point().prop_map(|p| json!({ "rect": p })),
        Just(json!({ "empty": null })),
    ]
}

/// A set of flags, as given (any order) and as answered (declaration order).
fn flags() -> impl Strategy<Value = (Value, Value)> {
    let names = ["read", "write", "execute"];
    proptest::sample::subsequence(names.to_vec(), 0..=3).prop_shuffle().prop_map(move |chosen| {
        let ordered: Vec<&str> = names.iter().copied().filter(|n| chosen.contains(n)).collect();
        (json!(chosen), json!(ordered))
    })
}

/// `option<option<T>>`: `null`, `{"some": null}` or `{"some": value}`.
fn nested_option<S: Strategy<Value = Value>>(inner: S) -> impl Strategy<Value = Value> {
    prop_oneof![Just(Value::Null), Just(json!({ "some": null })), inner.prop_map(|v| json!({ "some": v }))]
}

#[test]
fn every_scalar_type_round_trips_exactly() {
    let runtime = runtime();
    let (_tools, host) = runtime.block_on(plain_host("plain_types.wasm"));
    round_trips(&host, "plain/echo-bool", 8, same(any::<bool>().prop_map(|b| json!(b))));
    round_trips(&host, "plain/echo-s8", 64, same(any::<i8>().prop_map(|n| json!(n))));
    round_trips(&host, "plain/echo-u8", 64, same(any::<u8>().prop_map(|n| json!(n))));
    round_trips(&host, "plain/echo-s16", 64, same(any::<i16>().prop_map(|n| json!(n))));
    round_trips(&host, "plain/echo-u16", 64, same(any::<u16>().prop_map(|n| json!(n))));
    round_trips(&host, "plain/echo-s32", 64, same(any::<i32>().prop_map(|n| json!(n))));
    round_trips(&host, "plain/echo-u32", 64, same(any::<u32>().prop_map(|n| json!(n))));
    round_trips(&host, "plain/echo-s64", 128, same(any::<i64>().prop_map(|n| json!(n))));
    round_trips(&host, "plain/echo-u64", 128, same(any::<u64>().prop_map(|n| json!(n))));
    round_trips(&host, "plain/echo-f32", 128, same(f32_json()));
    round_trips(&host, "plain/echo-f64", 128, same(f64_json()));
    round_trips(&host, "plain/echo-char", 128, same(any::<char>().prop_map(|c| json!(c.to_string()))));
    round_trips(&host, "plain/echo-string", 128, same(any::<String>().prop_map(|s| json!(s))));
    round_trips(&host, "plain/echo-bytes", 64, same(bytes_json()));
}

#[test]
fn every_composite_type_round_trips_exactly() {
    let runtime = runtime();
    let (_tools, host) = runtime.block_on(plain_host("plain_types.wasm"));
    let strings = proptest::collection::vec(any::<String>(), 0..4);
    round_trips(&host, "plain/echo-lists", 64, same(proptest::collection::vec(strings, 0..4).prop_map(|l| json!(l))));
    round_trips(&host, "plain/echo-option", 64, same(proptest::option::of(any::<String>()).prop_map(|o| json!(o))));
    round_trips(&host, "plain/echo-nested-option", 32, same(nested_option(any::<u8>().prop_map(|n| json!(n)))));
    let tuple = (any::<bool>(), any::<i32>(), any::<String>()).prop_map(|(b, n, s)| json!([b, n, s]));
    round_trips(&host, "plain/echo-tuple", 64, same(tuple));
    round_trips(
        &host,
        "plain/echo-enum",
        16,
        same(prop_oneof![Just(json!("red")), Just(json!("green")), Just(json!("blue"))]),
    );
    round_trips(&host, "plain/echo-flags", 32, flags());
    round_trips(&host, "plain/echo-variant", 64, same(shape()));
    round_trips(&host, "plain/echo-record", 64, same(point()));
    let result =
        prop_oneof![any::<String>().prop_map(|s| json!({ "ok": s })), any::<u32>().prop_map(|n| json!({ "err": n }))];
    round_trips(&host, "plain/echo-result", 64, same(result));
    round_trips(&host, "plain/echo-everything", 128, everything());
}

/// The record of every type. A `none` option may be given as `null` or left out, and is
/// answered left out.
fn everything() -> impl Strategy<Value = (Value, Value)> {
    let numbers = (
        any::<bool>(),
        any::<i8>(),
        any::<u8>(),
        any::<i16>(),
        any::<u16>(),
        any::<i32>(),
        any::<u32>(),
        any::<i64>(),
        any::<u64>(),
    );
    let others = (
        f32_json(),
        f64_json(),
        any::<char>(),
        any::<String>(),
        bytes_json(),
        proptest::collection::vec(any::<String>(), 0..3),
    );
    let tail = (
        proptest::option::of(any::<u32>()),
        any::<bool>(),
        nested_option(any::<String>().prop_map(|s| json!(s))),
        (any::<String>(), any::<u64>()),
        prop_oneof![Just("red"), Just("green"), Just("blue")],
        shape(),
        flags(),
        prop_oneof![any::<u32>().prop_map(|n| json!({ "ok": n })), any::<String>().prop_map(|s| json!({ "err": s }))],
        proptest::collection::vec(point(), 0..3),
    );
    (numbers, others, tail).prop_map(|(n, o, t)| {
        let (maybe, maybe_as_null, nested, pair, color, shape, (flags_in, flags_out), outcome, points) = t;
        let mut input = json!({
            "flag": n.0, "small": n.1, "byte": n.2, "short": n.3, "ushort": n.4, "int": n.5, "uint": n.6,
            "long": n.7, "ulong": n.8, "single": o.0, "double": o.1, "letter": o.2.to_string(), "text": o.3,
            "bytes": o.4, "names": o.5, "pair": [pair.0, pair.1], "color": color, "shape": shape,
            "permissions": flags_in, "outcome": outcome, "points": points,
        });
        let mut expected = input.clone();
        expected["permissions"] = flags_out;
        match maybe {
            Some(m) => {
                input["maybe"] = json!(m);
                expected["maybe"] = json!(m);
            }
            None if maybe_as_null => input["maybe"] = Value::Null,
            None => {}
        }
        if !nested.is_null() {
            input["nested-maybe"] = nested.clone();
            expected["nested-maybe"] = nested;
        }
        (input, expected)
    })
}

/// Any JSON at all: what the schema accepts converts and round-trips; what it refuses
/// is invalid input. Never a trap, a host error or an invalid output.
#[test]
fn any_json_is_either_accepted_and_answered_or_refused_as_input() {
    let runtime = runtime();
    let (_tools, host) = runtime.block_on(plain_host("plain_types.wasm"));
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        prop_oneof![Just("red"), Just("read"), Just("x"), Just("NaN"), Just("AAEC")].prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    let keys = prop_oneof![Just("x"), Just("y"), Just("ok"), Just("err"), Just("circle"), Just("some"), Just("rect")];
    let json = leaf.prop_recursive(3, 16, 4, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map(keys.clone().prop_map(str::to_owned), inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    let tools = [
        "echo-u16",
        "echo-s64",
        "echo-f32",
        "echo-char",
        "echo-bytes",
        "echo-option",
        "echo-nested-option",
        "echo-tuple",
        "echo-enum",
        "echo-flags",
        "echo-variant",
        "echo-record",
        "echo-result",
        "echo-lists",
    ];
    let mut runner = TestRunner::new(Config { cases: 512, ..Config::default() });
    runner
        .run(&(proptest::sample::select(tools.to_vec()), json), |(tool, value)| {
            let name = format!("plain/{tool}");
            let schema = host.describe(&Caller::local(), &name).unwrap().input_schema;
            let input = json!({ "v": value });
            let accepted = jsonschema::is_valid(&schema, &input);
            match runtime.block_on(host.call(&name, input.clone())) {
                Ok(_) => prop_assert!(accepted, "{} answered input its schema refuses: {}", name, input),
                Err(CallError::InputInvalid { .. }) => {
                    prop_assert!(!accepted, "{} refused valid input {}", name, input)
                }
                Err(other) => prop_assert!(false, "{} with {}: {:?}", name, input, other),
            }
            Ok(())
        })
        .unwrap();
}

/// A plain function returning a record shaped `{ data: list<u8>, mime-type: string }`
/// shows it as a content block (an image, audio, or the bytes as an embedded resource);
/// its output is `null`, as its output schema says, and a `result`'s error still fails.
#[tokio::test]
async fn a_record_of_bytes_and_a_media_type_is_a_content_block() {
    let (_tools, host) = plain_host("plain_media.wasm").await;
    let pixel = host.describe(&Caller::local(), "plain/pixel").unwrap();
    assert_eq!(pixel.output_schema, json!({ "type": "null" }));

    let report = host.call_detailed("plain/pixel", json!({ "level": 7 })).await;
    assert_eq!(report.outcome.clone().unwrap(), Value::Null);
    assert_eq!(report.content, vec![toolhost::Content::image(b"\x89PNG\r\n\x1a\n\x07".to_vec(), "image/png")]);
    let silence = host.call_detailed("plain/silence", json!({ "samples": 4 })).await;
    assert_eq!(silence.content[0].kind(), "audio");
    assert_eq!(silence.content[0].to_mcp()["data"], "UklGRgAAAABXQVZFAAAAAA==", "RIFF, WAVE and four samples");
    let refused = host.call("plain/silence", json!({ "samples": 2_000_000 })).await.unwrap_err();
    assert!(
        matches!(&refused, CallError::Failed { message, .. } if message == "2000000 samples is too long"),
        "{refused}"
    );
    let document = host.call_detailed("plain/document", json!({})).await;
    assert_eq!(
        document.content[0].to_mcp(),
        json!({ "type": "resource", "resource": { "uri": "toolhost:plain/document/output", "mimeType": "application/pdf", "blob": "JVBERi0xLjc=" } })
    );
}
