//! The rules every tool obeys, broken the same way through every kind of source: a
//! toolbox component and a plain component (assembled from WAT here), native tools,
//! `.http.toml` files and an upstream MCP server (the official Python SDK's low-level
//! server, listing what it is told). Each breach is refused with the same words
//! whatever the source (a native tool, which no file places, is quoted by its full
//! name), and the source serves none of the tools it declared.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost::{
    HostConfig, Layer, MAX_DESCRIPTION_BYTES, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, MAX_TOOLS, NativeTool, SchemaRole,
    ToolDefError, ToolHost, ToolProblem,
};
use toolhost_tests::{ToolsDir, mcp_python, python_sandbox, python_upstream, with_custom_section};

/// The namespace every source serves its tools in.
const NAMESPACE: &str = "rules";

/// One tool as its source declares it.
#[derive(Clone)]
struct Declared {
    name: String,
    description: String,
    /// The input schema's JSON text, keys sorted and no spaces: the text every source
    /// hands on unchanged (a plain component's schema is made from its WIT types).
    input_schema: String,
}

/// A rule broken: what is declared, and the refusal it earns.
struct Breach {
    what: &'static str,
    declared: Vec<Declared>,
    /// The tool that breaks it, when one does.
    tool: Option<String>,
    /// The refusal's text; `{size}` stands for a schema's size in bytes, which depends
    /// on how the source writes the schema (only a plain component writes its own).
    refusal: String,
    /// The same breach in a plain component, whose tools are its exported functions.
    plain: PlainExports,
}

fn declared(name: &str, description: &str, input_schema: &str) -> Declared {
    Declared { name: name.into(), description: description.into(), input_schema: input_schema.into() }
}

const OBJECT: &str = r#"{"type":"object"}"#;

/// A name within the WIT rules but over the tool name's length.
fn long_name() -> String {
    "a".repeat(toolhost::names::MAX_TOOL_LEN + 2)
}

/// An object schema whose properties nest `levels` objects deep: 2 levels of JSON each.
fn deep_schema(levels: usize) -> String {
    let inner = format!("{}{{}}{}", r#"{"properties":{"a":"#.repeat(levels), "}}".repeat(levels));
    format!(r#"{{"properties":{{"a":{inner}}},"type":"object"}}"#)
}

fn breaches() -> Vec<Breach> {
    let refusal = |tool: &str, problem| ToolDefError::of(tool, problem).to_string();
    let too_long = MAX_DESCRIPTION_BYTES + 1;
    let big_schema = format!(r#"{{"description":"{}","type":"object"}}"#, "x".repeat(MAX_SCHEMA_BYTES));
    let deep_levels = MAX_SCHEMA_DEPTH / 2 + 1;
    let name = long_name();
    vec![
        Breach {
            what: "one tool more than a source may offer",
            tool: None,
            declared: (0..=MAX_TOOLS).map(|i| declared(&format!("t{i}"), "A tool.", OBJECT)).collect(),
            refusal: ToolDefError::TooMany { count: MAX_TOOLS + 1, limit: MAX_TOOLS }.to_string(),
            plain: PlainExports::many(MAX_TOOLS + 1),
        },
        Breach {
            what: "a description one byte too long",
            tool: Some("long".into()),
            declared: vec![declared("long", &"d".repeat(too_long), OBJECT)],
            refusal: refusal("long", ToolProblem::Description { size: too_long, limit: MAX_DESCRIPTION_BYTES }),
            plain: PlainExports::documented("long", &"d".repeat(too_long)),
        },
        Breach {
            what: "an input schema over the size limit",
            tool: Some("big".into()),
            declared: vec![declared("big", "A tool.", &big_schema)],
            refusal: refusal(
                "big",
                ToolProblem::SchemaSize { role: SchemaRole::Input, size: 0, limit: MAX_SCHEMA_BYTES },
            )
            .replace(" 0 bytes", " {size} bytes"),
            plain: PlainExports::with_enum("big", MAX_SCHEMA_BYTES / 1000 + 10, 1000),
        },
        Breach {
            what: "an input schema nested over the depth limit",
            tool: Some("deep".into()),
            declared: vec![declared("deep", "A tool.", &deep_schema(deep_levels))],
            refusal: refusal("deep", ToolProblem::SchemaDepth { role: SchemaRole::Input, limit: MAX_SCHEMA_DEPTH }),
            plain: PlainExports::with_nested_lists("deep", MAX_SCHEMA_DEPTH + 1),
        },
        Breach {
            what: "a name over the length limit",
            tool: Some(name.clone()),
            declared: vec![declared(&name, "A tool.", OBJECT)],
            refusal: refusal(&name, ToolProblem::Name(toolhost::names::validate_tool(&name).unwrap_err())),
            plain: PlainExports::many_named(&[&name]),
        },
    ]
}

/// Whether `error` holds `refusal`, a `{size}` in it standing for a size over the
/// schema limit.
fn holds(error: &str, refusal: &str) -> bool {
    let Some((before, after)) = refusal.split_once("{size}") else { return error.contains(refusal) };
    error.match_indices(before).any(|(at, _)| {
        let rest = &error[at + before.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        rest[digits..].starts_with(after) && rest[..digits].parse::<usize>().is_ok_and(|size| size > MAX_SCHEMA_BYTES)
    })
}

/// How a source's refusal quotes the tool: by the name it declared, which its file or
/// server places, or by its full name (a native tool, which has neither).
#[derive(Clone, Copy, PartialEq)]
enum Quoted {
    Declared,
    FullName,
}

/// Checks every breach through one source: `refused` declares the breach by that
/// source and returns the host with the errors it reported.
async fn every_breach_refused_alike<F>(source: &str, quoted: Quoted, refused: F)
where
    F: AsyncFn(&Breach) -> (ToolHost, Vec<String>),
{
    every_breach_but_refused_alike(source, quoted, &[], refused).await;
}

/// [`every_breach_refused_alike`], but for the breaches named in `not_breaches`, which
/// the source serves by a rule of its own.
async fn every_breach_but_refused_alike<F>(source: &str, quoted: Quoted, not_breaches: &[&str], refused: F)
where
    F: AsyncFn(&Breach) -> (ToolHost, Vec<String>),
{
    let mut wrong = Vec::new();
    for breach in breaches().into_iter().filter(|breach| !not_breaches.contains(&breach.what)) {
        let (host, errors) = refused(&breach).await;
        let expected = match (&breach.tool, quoted) {
            (Some(tool), Quoted::FullName) => {
                breach.refusal.replacen(&format!("tool `{tool}`"), &format!("tool `{NAMESPACE}/{tool}`"), 1)
            }
            _ => breach.refusal.clone(),
        };
        if !errors.iter().any(|error| holds(error, &expected)) {
            let errors: Vec<String> = errors.iter().map(|error| abbreviated(error)).collect();
            wrong.push(format!("{}: expected `{}` among {errors:#?}", breach.what, abbreviated(&expected)));
        }
        let served: Vec<String> =
            host.snapshot().tools.keys().filter(|name| name.starts_with(&format!("{NAMESPACE}/"))).cloned().collect();
        if !served.is_empty() {
            wrong.push(format!("{}: the source still serves {} tools", breach.what, served.len()));
        }
    }
    assert!(wrong.is_empty(), "{source}:\n{}", wrong.join("\n"));
}

fn abbreviated(text: &str) -> String {
    toolhost::text::bounded(text.to_owned(), 300)
}

fn load_errors(host: &ToolHost) -> Vec<String> {
    host.load_errors().iter().map(ToString::to_string).collect()
}

async fn host_on(tools: &ToolsDir) -> ToolHost {
    ToolHost::builder().root(tools.path()).build().await.expect("the host builds")
}

#[tokio::test]
async fn a_toolbox_component_is_refused_as_every_source_is() {
    every_breach_refused_alike("toolbox component", Quoted::Declared, async |breach: &Breach| {
        let tools = ToolsDir::new();
        tools.write(NAMESPACE, "box.wasm", &toolbox_component(&breach.declared));
        let host = host_on(&tools).await;
        let errors = load_errors(&host);
        (host, errors)
    })
    .await;
}

#[tokio::test]
async fn a_plain_component_is_refused_as_every_source_is() {
    every_breach_refused_alike("plain component", Quoted::Declared, async |breach: &Breach| {
        let tools = ToolsDir::new();
        tools.write(NAMESPACE, "plain.wasm", &breach.plain.component());
        let host = host_on(&tools).await;
        let errors = load_errors(&host);
        (host, errors)
    })
    .await;
}

/// A plain component's undocumented function is described by its signature, which the
/// host writes: a long one (an enum's cases written out) is cut short, so the host never
/// refuses a tool for its own words.
#[tokio::test]
async fn a_long_signature_makes_a_short_description() {
    let tools = ToolsDir::new();
    let cases = 2 * MAX_DESCRIPTION_BYTES / 1000;
    tools.write(NAMESPACE, "plain.wasm", &PlainExports::with_enum("wide", cases, 1000).component());
    let host = host_on(&tools).await;
    assert_eq!(load_errors(&host), Vec::<String>::new());
    let description = host.describe(&toolhost::Caller::local(), "rules/wide").unwrap().description;
    assert!(description.starts_with("Calls `wide: func(p: enum { c0-aaa"), "{description}");
    assert!(description.len() < 2048 && description.contains(" more bytes)"), "{description}");
}

#[tokio::test]
async fn native_tools_are_refused_as_every_source_is() {
    every_breach_refused_alike("native tools", Quoted::FullName, async |breach: &Breach| {
        let mut builder = ToolHost::builder().layer(Layer::native("app"));
        let mut errors = Vec::new();
        for tool in &breach.declared {
            let input_schema: Value = serde_json::from_str(&tool.input_schema).unwrap();
            let full_name = format!("{NAMESPACE}/{}", tool.name);
            let made =
                NativeTool::new(&full_name, &tool.description, input_schema, json!({}), |_| async { Ok(Value::Null) });
            match made {
                Ok(native) => builder = builder.tool("app", native),
                Err(refused) => errors.push(refused.to_string()),
            }
        }
        match builder.build().await {
            Ok(host) => (host, errors),
            Err(refused) => {
                errors.push(refused.to_string());
                (ToolHost::builder().layer(Layer::native("app")).build().await.unwrap(), errors)
            }
        }
    })
    .await;
}

#[tokio::test]
async fn http_tool_files_are_refused_as_every_source_is() {
    every_breach_refused_alike("HTTP tool files", Quoted::Declared, async |breach: &Breach| {
        let tools = ToolsDir::new();
        for tool in &breach.declared {
            tools.write(NAMESPACE, &format!("{}.http.toml", tool.name), http_definition(tool).as_bytes());
        }
        let host = host_on(&tools).await;
        let errors = load_errors(&host);
        (host, errors)
    })
    .await;
}

/// A namespace directory of HTTP tools is one source. Grown past the limit, it keeps
/// serving what it served, beside its error; a `toolhost call` of one of its tools
/// exits with the load error's code.
#[tokio::test]
async fn http_tools_grown_past_the_limit_keep_serving_what_they_served() {
    let tools = ToolsDir::new();
    let write = |i: usize| {
        let tool = declared(&format!("t{i}"), "A tool.", OBJECT);
        tools.write(NAMESPACE, &format!("t{i}.http.toml"), http_definition(&tool).as_bytes())
    };
    let served = |host: &ToolHost| host.snapshot().tools.keys().filter(|name| name.starts_with("rules/")).count();
    (0..MAX_TOOLS).for_each(|i| drop(write(i)));
    let host = host_on(&tools).await;
    assert_eq!((load_errors(&host), served(&host)), (vec![], MAX_TOOLS));

    let newest = write(MAX_TOOLS);
    host.reload().await;
    let refusal = ToolDefError::TooMany { count: MAX_TOOLS + 1, limit: MAX_TOOLS }.to_string();
    let directory = tools.path().join(NAMESPACE);
    assert_eq!(load_errors(&host), vec![format!("{}: {refusal}", directory.display())]);
    assert_eq!(served(&host), MAX_TOOLS, "what it served keeps serving");
    assert!(!host.snapshot().tools.contains_key(&format!("{NAMESPACE}/t{MAX_TOOLS}")));

    // A process that starts on the crowded directory serves none of it, and says why.
    let (code, _) = toolhost_tests::cli_call(tools.path(), &format!("{NAMESPACE}/t0"), &json!({}));
    assert_eq!(code, toolhost::exit::LOAD as i32);

    std::fs::remove_file(newest).unwrap();
    host.reload().await;
    assert_eq!((load_errors(&host), served(&host)), (vec![], MAX_TOOLS));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_servers_tools_are_refused_as_every_source_is() {
    // An MCP tool's name may be what toolhost's is not: it is served by the naming rule
    // (`sources/upstream/naming.rs`, tested in upstream_bounds.rs), not refused.
    let mapped = ["a name over the length limit"];
    every_breach_but_refused_alike("upstream MCP server", Quoted::Declared, &mapped, async |breach: &Breach| {
        let dir = tempfile::tempdir().unwrap();
        let listed: Vec<Value> = breach
            .declared
            .iter()
            .map(|tool| {
                let input_schema: Value = serde_json::from_str(&tool.input_schema).unwrap();
                json!({ "name": tool.name, "description": tool.description, "inputSchema": input_schema })
            })
            .collect();
        let declared = dir.path().join("tools.json");
        std::fs::write(&declared, serde_json::to_vec(&listed).unwrap()).unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/declared_tools_server.py");
        let config = format!(
            "[[upstream]]\nname = {NAMESPACE:?}\ncommand = {:?}\nargs = [{:?}, {:?}]\nenv = [\"HOME\"]\n{}",
            mcp_python().display().to_string(),
            script.display().to_string(),
            declared.display().to_string(),
            python_sandbox(&[dir.path()]),
        );
        let path = dir.path().join("toolhost.toml");
        std::fs::write(&path, config).unwrap();
        let host = HostConfig::load(&path).unwrap().builder().build().await.expect("the host builds");
        // The server is listed once it has started: its errors arrive then.
        let deadline = Instant::now() + Duration::from_secs(30);
        while host.load_errors().is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let errors = load_errors(&host);
        (host, errors)
    })
    .await;
}

/// An embedder's server (not read from `toolhost.toml`) whose name breaks the namespace
/// rule serves nothing: its name would be its tools' namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_server_under_a_bad_name_serves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let declared = dir.path().join("tools.json");
    let listed = json!([{ "name": "add", "description": "Adds.", "inputSchema": { "type": "object" } }]);
    std::fs::write(&declared, listed.to_string()).unwrap();
    let declared = [declared.display().to_string()];
    let server = |name: &str| python_upstream(name, "declared_tools_server.py", &declared, &[dir.path()]);
    let host = ToolHost::builder().upstream(server("Bad Name")).upstream(server("good")).build().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let listed = |host: &ToolHost| !host.load_errors().is_empty() && host.snapshot().tools.contains_key("good/add");
    while !listed(&host) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let errors = load_errors(&host);
    let problem = toolhost::names::validate_namespace("Bad Name").unwrap_err();
    assert_eq!(errors, vec![format!("[[upstream]] Bad Name: {problem}")]);
    let served: Vec<String> = host.snapshot().tools.keys().cloned().collect();
    assert_eq!(served, vec!["good/add"]);
}

/// `<name>.http.toml` declaring `tool`, its schema written as TOML tables (a deep one
/// as one dotted table header).
fn http_definition(tool: &Declared) -> String {
    let schema: Value = serde_json::from_str(&tool.input_schema).unwrap();
    let mut text = format!(
        "description = {:?}\nurl = \"http://127.0.0.1:9/x\"\nnetwork = [\"127.0.0.1:9\"]\n\n[input_schema]\n",
        tool.description
    );
    let (mut path, mut table) = ("input_schema".to_owned(), &schema);
    loop {
        let object = table.as_object().expect("an object schema");
        for (key, value) in object.iter().filter(|(_, value)| !value.is_object()) {
            text.push_str(&format!("{key} = {value}\n"));
        }
        let Some((key, nested)) = object.iter().find(|(_, value)| value.is_object()) else { break };
        path = format!("{path}.{key}");
        text.push_str(&format!("[{path}]\n"));
        table = nested;
    }
    text
}

/// A component of the `toolhost:tool/toolbox` contract whose `list-tools` returns
/// `tools`, laid out in its memory by hand: the list at 0, the records from 64, their
/// strings after them.
fn toolbox_component(tools: &[Declared]) -> Vec<u8> {
    const RECORDS: usize = 64;
    let mut memory = vec![0u8; RECORDS + 32 * tools.len()];
    let put = |memory: &mut Vec<u8>, at: usize, value: usize| {
        memory[at..at + 4].copy_from_slice(&u32::try_from(value).unwrap().to_le_bytes());
    };
    put(&mut memory, 0, RECORDS);
    put(&mut memory, 4, tools.len());
    // `call` answers `ok("{}")`: the result at 16, its string at 40.
    put(&mut memory, 20, 40);
    put(&mut memory, 24, 2);
    memory[40..42].copy_from_slice(b"{}");
    for (index, tool) in tools.iter().enumerate() {
        let fields = [tool.name.as_str(), &tool.description, &tool.input_schema, OBJECT];
        for (field, text) in fields.into_iter().enumerate() {
            let at = memory.len();
            memory.extend_from_slice(text.as_bytes());
            put(&mut memory, RECORDS + 32 * index + 8 * field, at);
            put(&mut memory, RECORDS + 32 * index + 8 * field + 4, text.len());
        }
    }
    let heap = memory.len().next_multiple_of(8);
    let pages = heap / 65536 + 2;
    let wat = format!(
        r#"(component
  (core module $m
    (memory (export "memory") {pages})
    (global $next (mut i32) (i32.const {heap}))
    {REALLOC}
    (func (export "list-tools") (result i32) (i32.const 0))
    (func (export "call") (param i32 i32 i32 i32) (result i32) (i32.const 16))
    (data (i32.const 0) "{data}"))
  (core instance $i (instantiate $m))
  (alias core export $i "memory" (core memory $mem))
  (alias core export $i "cabi_realloc" (core func $realloc))
  (type $tool-info (record (field "name" string) (field "description" string)
    (field "input-schema" string) (field "output-schema" string)))
  (type $tool-error (variant (case "invalid-input" string) (case "failed" string)))
  (type $list-type (func (result (list $tool-info))))
  (type $call-type (func (param "tool" string) (param "input" string) (result (result string (error $tool-error)))))
  (func $list-tools (type $list-type) (canon lift (core func $i "list-tools") (memory $mem) (realloc $realloc)))
  (func $call (type $call-type) (canon lift (core func $i "call") (memory $mem) (realloc $realloc)))
  (instance $toolbox
    (export "tool-info" (type $tool-info))
    (export "tool-error" (type $tool-error))
    (export "list-tools" (func $list-tools))
    (export "call" (func $call)))
  (export "toolhost:tool/toolbox@0.1.1" (instance $toolbox)))"#,
        data = wat_string(&memory),
    );
    wat::parse_str(&wat).unwrap_or_else(|e| panic!("the toolbox WAT: {e}"))
}

/// A bump allocator over the core module's memory, growing it as needed.
const REALLOC: &str = r#"(func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
      (local $ptr i32)
      (local.set $ptr (i32.and (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
                               (i32.xor (i32.sub (local.get 2) (i32.const 1)) (i32.const -1))))
      (global.set $next (i32.add (local.get $ptr) (local.get 3)))
      (if (i32.gt_u (global.get $next) (i32.mul (memory.size) (i32.const 65536)))
        (then (drop (memory.grow (i32.add (i32.div_u (i32.sub (global.get $next)
          (i32.mul (memory.size) (i32.const 65536))) (i32.const 65536)) (i32.const 1))))))
      (local.get $ptr))"#;

/// `bytes` as the body of a WAT string.
fn wat_string(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    for &byte in bytes {
        match byte {
            b'"' | b'\\' => text.push_str(&format!("\\{byte:02x}")),
            0x20..=0x7e => text.push(byte as char),
            _ => text.push_str(&format!("\\{byte:02x}")),
        }
    }
    text
}

/// The exported functions of a plain component (a component for any host, no toolhost
/// contract), all in the interface `acme:rules/tools`.
struct PlainExports {
    functions: Vec<PlainFunction>,
    /// Doc comments, by function: the `package-docs` section WIT toolchains write.
    docs: Vec<(String, String)>,
}

enum PlainFunction {
    /// `name: func()`.
    Bare(String),
    /// `name: func(p: e)`, `e` an enum of `cases` cases of about `length` characters.
    Enum { name: String, cases: usize, length: usize },
    /// `name: func(p: list<list<…<string>>>)`, `depth` lists deep.
    NestedLists { name: String, depth: usize },
}

impl PlainExports {
    fn many(count: usize) -> PlainExports {
        let names: Vec<String> = (0..count).map(|i| format!("t{i}")).collect();
        PlainExports::many_named(&names.iter().map(String::as_str).collect::<Vec<_>>())
    }

    fn many_named(names: &[&str]) -> PlainExports {
        PlainExports { functions: names.iter().map(|name| PlainFunction::Bare((*name).into())).collect(), docs: vec![] }
    }

    fn documented(name: &str, docs: &str) -> PlainExports {
        PlainExports { functions: vec![PlainFunction::Bare(name.into())], docs: vec![(name.into(), docs.into())] }
    }

    fn with_enum(name: &str, cases: usize, length: usize) -> PlainExports {
        PlainExports { functions: vec![PlainFunction::Enum { name: name.into(), cases, length }], docs: vec![] }
    }

    fn with_nested_lists(name: &str, depth: usize) -> PlainExports {
        PlainExports { functions: vec![PlainFunction::NestedLists { name: name.into(), depth }], docs: vec![] }
    }

    fn component(&self) -> Vec<u8> {
        let (mut core, mut types, mut lifted, mut exported) =
            (String::new(), String::new(), String::new(), String::new());
        for (index, function) in self.functions.iter().enumerate() {
            let (name, core_params, param, options) = match function {
                PlainFunction::Bare(name) => (name, "", String::new(), ""),
                PlainFunction::Enum { name, cases, length } => {
                    let cases: Vec<String> =
                        (0..*cases).map(|case| format!("\"c{case}-{}\"", "a".repeat(*length))).collect();
                    types.push_str(&format!("(type $enum{index} (enum {}))\n", cases.join(" ")));
                    exported.push_str(&format!("(export \"e{index}\" (type $enum{index}))\n"));
                    (name, "(param i32)", format!("(param \"p\" $enum{index})"), "")
                }
                PlainFunction::NestedLists { name, depth } => {
                    types.push_str(&format!("(type $list{index}-0 (list string))\n"));
                    for level in 1..*depth {
                        types.push_str(&format!("(type $list{index}-{level} (list $list{index}-{}))\n", level - 1));
                    }
                    let param = format!("(param \"p\" $list{index}-{})", depth - 1);
                    (name, "(param i32 i32)", param, "(memory $mem) (realloc $realloc)")
                }
            };
            core.push_str(&format!("(func (export \"f{index}\") {core_params})\n"));
            types.push_str(&format!("(type $type{index} (func {param}))\n"));
            lifted.push_str(&format!(
                "(func $f{index} (type $type{index}) (canon lift (core func $i \"f{index}\") {options}))\n"
            ));
            exported.push_str(&format!("(export \"{name}\" (func $f{index}))\n"));
        }
        let wat = format!(
            r#"(component
  (core module $m
    (memory (export "memory") 1)
    (global $next (mut i32) (i32.const 1024))
    {REALLOC}
    {core})
  (core instance $i (instantiate $m))
  (alias core export $i "memory" (core memory $mem))
  (alias core export $i "cabi_realloc" (core func $realloc))
  {types}
  {lifted}
  (instance $tools {exported})
  (export "acme:rules/tools@0.1.0" (instance $tools)))"#
        );
        let bytes = wat::parse_str(&wat).unwrap_or_else(|e| panic!("the plain component's WAT: {e}"));
        if self.docs.is_empty() {
            return bytes;
        }
        let funcs: serde_json::Map<String, Value> =
            self.docs.iter().map(|(name, docs)| (name.clone(), json!({ "docs": docs }))).collect();
        let mut section = vec![1u8];
        section.extend(serde_json::to_vec(&json!({ "interfaces": { "tools": { "funcs": funcs } } })).unwrap());
        with_custom_section(&bytes, "package-docs", &section)
    }
}
