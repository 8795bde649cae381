//! Plain components: a component's exported functions served one tool each, typed by their WIT signatures.
//!
//! Plain components: a component that does not export the `toolhost:tool` contract but
//! exports functions (at its top level or in exported interfaces) is served function by
//! function. Each function whose types have a JSON form becomes the tool
//! `<namespace>/<function>`; when two exports share a function name, both are named
//! `<interface>-<function>`. Functions that cannot be tools are reported by name, with
//! why, and the others are still served. Interfaces of the `wasi:` namespace (entry
//! points such as `wasi:cli/run`) are not tools.
//!
//! The input of a tool is an object with one property per parameter, all required, no
//! others. Values travel as JSON like this, exactly ([`schema`] and [`value`]):
//!
//! | WIT | JSON Schema | JSON value |
//! |---|---|---|
//! | `bool` | `boolean` | `true` |
//! | `s8` … `u64` | `integer` with the type's exact `minimum` and `maximum` | a number written exactly: 64-bit values beyond ±2^53 keep every digit (the host reads and writes them as 64-bit integers, never through a double); a reader that parses JSON numbers as doubles, as JavaScript does, rounds them |
//! | `f32`, `f64` | `anyOf` a `number` (for `f32` within its range) or one of `"NaN"`, `"Infinity"`, `"-Infinity"` | a number, or one of those strings; an `f32` is written as the shortest decimal that reads back as itself |
//! | `char` | `string` of exactly one character (Unicode scalar value) | `"é"` |
//! | `string` | `string` | `"text"` |
//! | `list<u8>` | `string`, `contentEncoding: base64`, standard alphabet with padding | `"AAEC"` |
//! | `list<T>` | `array` of `T` | `[…]` |
//! | `list<T, N>` | `array` of `T` with exactly `N` items | `[…]` |
//! | `map<string, V>` | `object` of `V` | `{"k": …}` |
//! | `map<K, V>` (other keys) | `array` of `[K, V]` pairs | `[[k, v]]` |
//! | `option<T>` | `anyOf` `T` or `null` (`option<option<T>>`: `null` or `{"some": …}`) | the value, or `null`; an `option` field of a record may be left out, and is left out when `none` |
//! | `record` | `object`: every field a property, required unless an `option`, no others | `{"field-name": …}` |
//! | `tuple<A, B>` | `array` with `prefixItems`, exactly that many items | `[a, b]` |
//! | `variant` | `oneOf` objects with one key, the case, whose value is its payload (`null` for none) | `{"circle": {"radius": 1.0}}` |
//! | `enum` | `string` with `enum` | `"red"` |
//! | `flags` | `array` of unique flag names (value and schema alike) | `["read", "write"]` |
//! | `result<T, E>` as a function's result | the output is `T` (`null` without one); `err` is a tool failure carrying `E` as JSON | `…` |
//! | `result<T, E>` elsewhere | `oneOf` `{"ok": T}` and `{"err": E}` | `{"ok": 1}` |
//! | resources, `future`, `stream`, `error-context` | none: the function is not a tool | |
//!
//! A function without a result has the output `null`. Descriptions come from the
//! component's WIT documentation (its `package-docs` custom section) where present, else
//! from the signature (its first KiB); a manifest's `[tools.NAME] description` overrides
//! either.

mod docs;
mod media;
mod schema;
mod signature;
mod value;

use serde_json::{Value, json};
use wasmtime::Engine;
use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, ComponentExportIndex, Type, Val};

use crate::content::Content;
use crate::error::{CallError, SkippedExport, Violation};
use crate::tool::{DeclaredOutput, ToolDef};
pub(crate) use docs::Docs;

/// An exported function served as a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainFunction {
    /// The interface it is exported in (its export name), or none at the top level.
    pub interface: Option<String>,
    /// The function's name in WIT.
    pub function: String,
    /// Its WIT signature.
    pub signature: String,
}

/// How to call an exported function of one compiled component: where it is and its
/// types, which belong to that compilation.
#[derive(Debug)]
pub(crate) struct PlainCall {
    pub(crate) export: ComponentExportIndex,
    params: Vec<(String, Type)>,
    result: Option<Type>,
    /// Whether what it returns is media, shown as a content block ([`media`]).
    media: bool,
}

/// A plain component's tool: its definition, its function, and how to call it.
pub(crate) struct PlainTool {
    pub def: ToolDef,
    pub function: PlainFunction,
    pub call: PlainCall,
}

/// What a plain component offers.
pub(crate) struct Reflected {
    pub tools: Vec<PlainTool>,
    pub skipped: Vec<SkippedExport>,
}

/// An exported function before it is judged.
struct Candidate {
    interface: Option<String>,
    function: String,
    ty: ComponentFunc,
    export: Option<ComponentExportIndex>,
}

impl Candidate {
    fn export_name(&self) -> String {
        match &self.interface {
            Some(interface) => format!("{interface}#{}", self.function),
            None => self.function.clone(),
        }
    }
}

/// Every exported function of `component` that can be a tool, and every one that
/// cannot, with the reason.
pub(crate) fn reflect(engine: &Engine, component: &Component, docs: &Docs) -> Reflected {
    let mut skipped = Vec::new();
    let candidates = candidates(engine, component, &mut skipped);
    let colliding = |function: &str| candidates.iter().filter(|c| c.function == function).count() > 1;
    let mut tools: Vec<PlainTool> = Vec::new();
    for candidate in &candidates {
        let name = match (&candidate.interface, colliding(&candidate.function)) {
            (Some(interface), true) => format!("{}-{}", docs::short_interface_name(interface), candidate.function),
            _ => candidate.function.clone(),
        };
        let skip = |reason: String| SkippedExport { export: candidate.export_name(), reason };
        match tool(candidate, &name, docs) {
            Ok(tool) if tools.iter().any(|served| served.def.name() == name) => {
                skipped.push(skip(format!("another export is served as `{}` already", tool.def.name())))
            }
            Ok(tool) => tools.push(tool),
            Err(reason) => skipped.push(skip(reason)),
        }
    }
    Reflected { tools, skipped }
}

/// The exported functions, top level and in exported interfaces.
fn candidates(engine: &Engine, component: &Component, skipped: &mut Vec<SkippedExport>) -> Vec<Candidate> {
    let mut found = Vec::new();
    for (name, export) in component.component_type().exports(engine) {
        match export.ty {
            ComponentItem::ComponentFunc(ty) => found.push(Candidate {
                interface: None,
                function: name.to_owned(),
                export: component.get_export_index(None, name),
                ty,
            }),
            ComponentItem::ComponentInstance(_) if name.starts_with("wasi:") => skipped.push(SkippedExport {
                export: name.to_owned(),
                reason: "a WASI interface is an entry point for another kind of host, not a tool".into(),
            }),
            ComponentItem::ComponentInstance(instance) => {
                let parent = component.get_export_index(None, name);
                for (function, export) in instance.exports(engine) {
                    if let ComponentItem::ComponentFunc(ty) = export.ty {
                        found.push(Candidate {
                            interface: Some(name.to_owned()),
                            function: function.to_owned(),
                            export: parent
                                .as_ref()
                                .and_then(|parent| component.get_export_index(Some(parent), function)),
                            ty,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// Exports toolchains add for their own use, `(interface, function)`, a world-level
/// function having no interface: never tools.
const TOOLCHAIN_EXPORTS: &[(Option<&str>, &str, &str)] = &[
    (Some("exports"), "init", "componentize-py's pre-initialisation hook, called when the component is built"),
    (
        None,
        crate::contract::PREINIT_EXPORT,
        "the pre-initialisation hook `toolhost preinit` (wasmtime-wizer) runs when the component is built",
    ),
];

/// The tool of one candidate, or why there is none.
fn tool(candidate: &Candidate, name: &str, docs: &Docs) -> Result<PlainTool, String> {
    let internal = TOOLCHAIN_EXPORTS.iter().find(|(interface, function, _)| {
        candidate.interface.as_deref() == *interface && candidate.function == *function
    });
    if let Some((_, _, why)) = internal {
        return Err(format!("{why}, not a tool"));
    }
    if candidate.function.starts_with('[') {
        return Err("a resource's constructor or method, which needs a resource handle".into());
    }
    if candidate.ty.async_() {
        return Err("an async function (component-model async is not served)".into());
    }
    let export = candidate.export.ok_or("its export cannot be found by name")?;
    let params: Vec<(String, Type)> = candidate.ty.params().map(|(name, ty)| (name.to_owned(), ty)).collect();
    let mut results = candidate.ty.results();
    let result = results.next();
    if results.next().is_some() {
        return Err("it has more than one result".into());
    }
    let mut properties = serde_json::Map::new();
    for (param, ty) in &params {
        properties.insert(param.clone(), schema::of(ty).map_err(|e| format!("parameter `{param}`: {}", e.0))?);
    }
    let required: Vec<&String> = params.iter().map(|(param, _)| param).collect();
    let input =
        json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false });
    let returned = match &result {
        Some(Type::Result(result)) => result.ok(),
        other => other.clone(),
    };
    let media = returned.as_ref().is_some_and(media::is_media);
    let output = match &result {
        None => Ok(json!({ "type": "null" })),
        _ if media => Ok(json!({ "type": "null" })),
        Some(Type::Result(result)) => result.ok().map_or(Ok(json!({ "type": "null" })), |ok| schema::of(&ok)),
        Some(ty) => schema::of(ty),
    }
    .map_err(|e| format!("its result: {}", e.0))?;
    let signature = signature::function(&candidate.function, &params, result.as_ref());
    let description = match docs.function(candidate.interface.as_deref(), &candidate.function) {
        Some(text) => text.to_owned(),
        None => generated_description(candidate, &signature),
    };
    let output = output.to_string();
    let def = ToolDef::new(name, &description, &input.to_string(), DeclaredOutput::Json(&output))
        .map_err(|refused| refused.to_string())?;
    let function =
        PlainFunction { interface: candidate.interface.clone(), function: candidate.function.clone(), signature };
    Ok(PlainTool { def, function, call: PlainCall { export, params, result, media } })
}

/// How much of a signature (and of an interface's name) a generated description quotes:
/// the host writes it, so it never breaks the description rule, and a type written out
/// (a record, an enum's cases) can be long.
const SIGNATURE_DESCRIBED: usize = 1024;

fn generated_description(candidate: &Candidate, signature: &str) -> String {
    let quoted = |text: &str| {
        let mut shown = text.to_owned();
        match crate::text::truncate(&mut shown, SIGNATURE_DESCRIBED) {
            0 => format!("`{shown}`"),
            dropped => format!("`{shown}…` ({dropped} more bytes)"),
        }
    };
    match &candidate.interface {
        Some(interface) => format!("Calls {} of the interface {}.", quoted(signature), quoted(interface)),
        None => format!("Calls {}.", quoted(signature)),
    }
}

impl PlainCall {
    /// The arguments of a call, in parameter order, from an input that passed the
    /// tool's schema.
    pub(crate) fn params(&self, tool: &str, input: &Value) -> Result<Vec<Val>, CallError> {
        let invalid =
            |violation: Violation| CallError::InputInvalid { tool: tool.to_owned(), violations: vec![violation] };
        let object = input.as_object().ok_or_else(|| {
            invalid(Violation { pointer: String::new(), reason: "the input is an object of the parameters".into() })
        })?;
        self.params
            .iter()
            .map(|(name, ty)| {
                let value = object.get(name).ok_or_else(|| {
                    invalid(Violation { pointer: String::new(), reason: format!("the parameter `{name}` is missing") })
                })?;
                value::to_val(ty, value, &format!("/{name}")).map_err(invalid)
            })
            .collect()
    }

    /// How many values a call returns.
    pub(crate) fn result_count(&self) -> usize {
        usize::from(self.result.is_some())
    }

    /// The output of a call and the media it shows, or the tool's failure: a function
    /// whose result is a `result` fails with the `err` payload as JSON (a string payload
    /// as itself).
    pub(crate) fn output(&self, tool: &str, results: &[Val]) -> Result<(Value, Option<Content>), CallError> {
        let (Some(ty), Some(val)) = (&self.result, results.first()) else { return Ok((Value::Null, None)) };
        let returned = match val {
            Val::Result(Ok(Some(payload))) => Some(payload.as_ref()),
            Val::Result(_) => None,
            other => Some(other),
        };
        if let Some(media) = returned.filter(|_| self.media).and_then(|val| media::content(tool, val)) {
            return Ok((Value::Null, Some(media)));
        }
        self.json_output(tool, ty, val).map(|output| (output, None))
    }

    fn json_output(&self, tool: &str, ty: &Type, val: &Val) -> Result<Value, CallError> {
        match (ty, val) {
            (Type::Result(result), Val::Result(outcome)) => match outcome {
                Ok(payload) => Ok(payload_json(result.ok().as_ref(), payload.as_deref())),
                Err(payload) => {
                    let message = match payload_json(result.err().as_ref(), payload.as_deref()) {
                        Value::String(text) => text,
                        Value::Null => "the function returned an error".to_owned(),
                        other => other.to_string(),
                    };
                    Err(CallError::Failed { tool: tool.to_owned(), message })
                }
            },
            (ty, val) => Ok(value::from_val(ty, val)),
        }
    }
}

fn payload_json(ty: Option<&Type>, payload: Option<&Val>) -> Value {
    match (ty, payload) {
        (Some(ty), Some(payload)) => value::from_val(ty, payload),
        _ => Value::Null,
    }
}
