//! `code/javascript`: runs JavaScript written by a model in a fresh interpreter (Boa,
//! compiled into this component) and returns the script's completion value as JSON
//! together with what it printed.
//!
//! The sandbox is the component's: every call is a new instance with the fuel, memory
//! and time limits of its manifest and no grants, so the script has no files, network,
//! environment or timers. The interpreter adds nothing that reaches outside it: the only
//! globals beyond the ECMAScript built-ins are `console` (printing into a bounded
//! buffer) and `input`.
//!
//! `cargo xtask stdlib` snapshots the component after [`preinit`] has built the
//! interpreter's context once (the realm's intrinsics, `console`): each call takes that
//! context and only adds `input`. A build that was not snapshotted builds it per call.

use stdlib_shared::printed;

use std::cell::Cell;
use std::path::Path;

use boa_engine::builtins::promise::PromiseState;
use boa_engine::object::builtins::JsPromise;
use boa_engine::property::Attribute;
use boa_engine::value::JsVariant;
use boa_engine::{
    Context, JsError, JsNativeError, JsResult, JsString, JsValue, NativeFunction, Script, Source, js_string,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_guest::{ToolError, toolbox};

/// Longest script accepted, in characters.
const MAX_CODE_CHARS: u32 = 100_000;

/// Frames of an uncaught error's backtrace kept in its message.
const MAX_BACKTRACE_FRAMES: usize = 10;

/// Bytes of printed text quoted in a failure message (the host keeps 4 KiB of it).
const FAILURE_PRINTED_TAIL: usize = 1024;

thread_local! {
    /// The context [`preinit`] built, taken by the first call: in a snapshot, every
    /// instance (one per call) starts with it here.
    static READY: Cell<Option<Context>> = const { Cell::new(None) };
}

toolhost_guest::preinit!(crate::preinit);

/// Builds the context a call will take. Runs once, before the snapshot: it must print
/// nothing and keep no WASI resource (see `toolhost_guest::preinit!`). It draws no
/// random numbers: `Math.random` seeds its generator (`rand`'s thread-local one, from
/// WASI's random source) on first use, so in each instance, never in the snapshot.
/// Frozen, harmlessly: the hash keys of Boa's shape tables and the base of the
/// context's monotonic clock (read only for job timeouts, which nothing here
/// schedules; `Date` reads the wall clock at the call).
fn preinit() {
    READY.set(Some(new_context()));
}

/// A context with what does not depend on the call: the built-ins, `console` and the
/// backtrace limit.
fn new_context() -> Context {
    let mut context = Context::default();
    // A runaway recursion's error would otherwise list 50 identical frames.
    context.runtime_limits_mut().set_backtrace_limit(MAX_BACKTRACE_FRAMES);
    if let Err(error) = install_console(&mut context) {
        panic!("`console` does not install: {}", describe(error, &mut context));
    }
    context
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Program {
    /// The JavaScript to run, as a classic script (no `import`, no top-level `await`).
    /// The value of its last expression statement is the result.
    #[schemars(length(min = 1, max = MAX_CODE_CHARS))]
    code: String,
    /// Any JSON value, given to the script as the global constant `input`; absent,
    /// `input` is `undefined`.
    input: Option<Value>,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Outcome {
    /// The completion value as `JSON.stringify` writes it, parsed: `undefined`,
    /// functions and symbols are `null`, as are `NaN` and `Infinity`; a `Date` is its ISO
    /// string; a `Map` or `Set` is `{}`. A value `JSON.stringify` refuses (a BigInt, a
    /// cyclic object) is its `String(value)` text instead. A promise is awaited.
    result: Value,
    /// What `typeof` says of the completion value, except that `null` is `"null"` and
    /// an array is `"array"`.
    result_type: String,
    /// Everything `console.log`, `info`, `debug`, `warn` and `error` printed, one line
    /// per call, arguments separated by spaces.
    stdout: String,
    /// Whether `stdout` was cut: at most 64 KiB is kept, the rest is dropped.
    truncated: bool,
}

toolbox! {
    /// Runs a JavaScript (ECMAScript 2024) script in a fresh, isolated interpreter and
    /// returns the value of its last expression as JSON, plus what it printed with
    /// `console.log`. Use it to compute, transform data or check an idea precisely.
    ///
    /// The script has no access to files, the network, the clock's timers
    /// (`setTimeout` does not exist), `require`, `import` or `fetch`; nothing survives
    /// between calls. Pass data in through `input` (a JSON value, the global `input`).
    /// Example: `{"code": "const xs = input.map(x => x * 2); console.log(xs.length); xs", "input": [1, 2, 3]}`
    /// returns `{"result": [2, 4, 6], "result_type": "array", "stdout": "3\n", "truncated": false}`.
    ///
    /// A syntax error is refused as invalid input; an uncaught exception fails the call
    /// with its type, message and line, and the last output printed before it. Each call
    /// runs under a fuel, memory and time budget: an endless loop or a huge allocation
    /// is stopped by the host. Printed output past 64 KiB is dropped (`truncated`).
    fn javascript(input: Program) -> Result<Outcome, ToolError> {
        run(&input.code, input.input.as_ref())
    }
}

fn run(code: &str, input: Option<&Value>) -> Result<Outcome, ToolError> {
    printed::reset();
    // Taken, never shared: a second call in one instance (only the native tests make
    // one) builds its own context, so a script's globals never meet another's.
    let mut context = READY.take().unwrap_or_else(new_context);
    let outcome = execute(&mut context, code, input);
    // The instance is discarded after its call: collecting the context's objects one
    // by one would only cost time.
    #[cfg(target_family = "wasm")]
    std::mem::forget(context);
    outcome
}

fn execute(context: &mut Context, code: &str, input: Option<&Value>) -> Result<Outcome, ToolError> {
    install_input(context, input).map_err(|e| ToolError::failed(describe(e, context)))?;

    // Named so that positions read `script.js:LINE:COLUMN`.
    let source = Source::from_bytes(code).with_path(Path::new("script.js"));
    let script = Script::parse(source, None, context).map_err(|e| syntax_error(e, context))?;
    let completion = script.evaluate(context).map_err(|e| failure(e, context))?;
    // Promise reactions queued by the script (`async` functions, `.then`) run now, so a
    // script may end in a promise and have its value returned.
    context.run_jobs().map_err(|e| failure(e, context))?;
    let value = settled(completion).map_err(|e| failure(e, context))?;

    let result_type = type_name(&value).to_owned();
    let result = to_json(&value, context).map_err(|e| failure(e, context))?;
    let (stdout, truncated) = printed::take();
    Ok(Outcome { result, result_type, stdout, truncated })
}

/// `console`: every method prints into the call's bounded buffer.
fn install_console(context: &mut Context) -> JsResult<()> {
    let console = boa_engine::object::ObjectInitializer::new(context)
        .function(NativeFunction::from_fn_ptr(console_print), js_string!("log"), 0)
        .function(NativeFunction::from_fn_ptr(console_print), js_string!("info"), 0)
        .function(NativeFunction::from_fn_ptr(console_print), js_string!("debug"), 0)
        .function(NativeFunction::from_fn_ptr(console_print), js_string!("warn"), 0)
        .function(NativeFunction::from_fn_ptr(console_print), js_string!("error"), 0)
        .build();
    context.register_global_property(js_string!("console"), console, Attribute::all())
}

/// `input`: the caller's value.
fn install_input(context: &mut Context, input: Option<&Value>) -> JsResult<()> {
    let input = match input {
        Some(value) => JsValue::from_json(value, context)?,
        None => JsValue::undefined(),
    };
    // Configurable, so that a script may still declare its own `let input`.
    context.register_global_property(js_string!("input"), input, Attribute::all())?;
    Ok(())
}

/// Every `console` method: its arguments on one line, strings as they are, other values
/// in the interpreter's display form (`{ a: 1 }`, `[ 1, 2 ]`).
fn console_print(_this: &JsValue, arguments: &[JsValue], _context: &mut Context) -> JsResult<JsValue> {
    let mut line = String::new();
    for (i, argument) in arguments.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        match argument.as_string() {
            Some(text) => line.push_str(&text.to_std_string_lossy()),
            None => line.push_str(&argument.display().to_string()),
        }
    }
    line.push('\n');
    printed::print(&line);
    Ok(JsValue::undefined())
}

/// The value a completion stands for: a settled promise's value, or the completion.
fn settled(completion: JsValue) -> JsResult<JsValue> {
    let Some(object) = completion.as_object().filter(|object| object.is::<boa_engine::builtins::promise::Promise>())
    else {
        return Ok(completion);
    };
    match JsPromise::from_object(object.clone())?.state() {
        PromiseState::Fulfilled(value) => Ok(value),
        PromiseState::Rejected(reason) => Err(JsError::from_opaque(reason)),
        PromiseState::Pending => Err(JsNativeError::error()
            .with_message("the script's result is a promise that never settled (nothing here can resolve it later)")
            .into()),
    }
}

/// `typeof`, with `null` and arrays told apart.
fn type_name(value: &JsValue) -> &'static str {
    match value.variant() {
        JsVariant::Null => "null",
        JsVariant::Object(object) if object.is_array() => "array",
        _ => value.type_of(),
    }
}

/// The value as `JSON.stringify` writes it, or its `String()` text when
/// `JSON.stringify` refuses it.
fn to_json(value: &JsValue, context: &mut Context) -> JsResult<Value> {
    let json = context.intrinsics().objects().json();
    let stringify = json.get(js_string!("stringify"), context)?;
    let written = match stringify.as_callable() {
        Some(stringify) => stringify.call(&json.into(), std::slice::from_ref(value), context),
        None => Err(JsNativeError::typ().with_message("JSON.stringify was replaced by a non-function").into()),
    };
    match written {
        Ok(text) => match text.as_string() {
            Some(text) => serde_json::from_str(&text.to_std_string_escaped()).map_err(|e| {
                JsNativeError::error().with_message(format!("JSON.stringify wrote text that is not JSON: {e}")).into()
            }),
            // `undefined`, a function or a symbol.
            None => Ok(Value::Null),
        },
        Err(_) => {
            let text: JsString = value.to_string(context)?;
            Ok(Value::String(text.to_std_string_escaped()))
        }
    }
}

/// A script that does not parse: the parser's message, which names the line and column
/// except at an unexpected end.
fn syntax_error(error: JsError, context: &mut Context) -> ToolError {
    let message = match error.try_native(context) {
        Ok(native) if native.message() == "abrupt end" => {
            "unexpected end of the script (an unclosed bracket, string or comment?)".to_owned()
        }
        Ok(native) => native.message().to_owned(),
        Err(_) => describe(error, context),
    };
    ToolError::invalid_input(format!("SyntaxError: {message}"))
}

/// A runtime failure: the error, then the end of what the script printed before it.
fn failure(error: JsError, context: &mut Context) -> ToolError {
    let mut message = format!("Uncaught {}", describe(error, context));
    let printed = printed::tail(FAILURE_PRINTED_TAIL);
    if !printed.is_empty() {
        message.push_str("\nprinted before the error (its end):\n");
        message.push_str(&printed);
    }
    ToolError::failed(message)
}

/// An error as `Kind: message` and where it was thrown, or the thrown value's text when
/// it is not an error.
fn describe(error: JsError, context: &mut Context) -> String {
    // A thrown error object carries its backtrace in `stack`, which starts where it was
    // thrown; the native form's single position is that of the innermost call site.
    if let Some(object) = error.as_opaque().and_then(JsValue::as_object) {
        let stack = object.get(js_string!("stack"), context).ok();
        let stack = stack.and_then(|stack| stack.as_string().map(|stack| stack.to_std_string_escaped()));
        if let Some(stack) = stack.filter(|stack| !stack.trim().is_empty()) {
            let text = match JsValue::from(object.clone()).to_string(context) {
                Ok(text) => text.to_std_string_escaped(),
                Err(_) => "Error".to_owned(),
            };
            return format!("{text}\n{}", stack.trim_end());
        }
    }
    if let Ok(native) = error.try_native(context) {
        return native.to_string();
    }
    match error.as_opaque() {
        Some(value) => match value.to_string(context) {
            Ok(text) => text.to_std_string_escaped(),
            Err(_) => value.display().to_string(),
        },
        None => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(code: &str) -> Outcome {
        run(code, None).unwrap_or_else(|e| panic!("{code}: {e:?}"))
    }

    #[test]
    fn a_call_takes_the_preinitialized_context_and_the_next_builds_its_own() {
        preinit();
        let first = ok("globalThis.leftover = 1; let x = 2; console.log('one'); typeof console.log");
        assert_eq!((first.result, first.stdout.as_str()), (json!("function"), "one\n"));
        assert!(READY.take().is_none(), "the call took the context");
        // The same top-level `let` again: in a shared context it would be a redeclaration.
        let second = ok("let x = 3; console.log('two'); [typeof leftover, x]");
        assert_eq!((second.result, second.stdout.as_str()), (json!(["undefined", 3]), "two\n"));
    }

    #[test]
    fn input_is_per_call_and_the_backtrace_limit_holds_in_a_preinitialized_context() {
        preinit();
        assert_eq!(run("input.n * 2", Some(&json!({ "n": 21 }))).expect("runs").result, json!(42));
        assert_eq!(ok("typeof input").result, json!("undefined"));
        preinit();
        let message = match run("function down(n) { return down(n + 1) }\ndown(0)", None) {
            Err(ToolError::Failed(message)) => message,
            Err(other) => panic!("expected a failure, got {other:?}"),
            Ok(outcome) => panic!("expected a failure, got {}", outcome.result),
        };
        assert!(message.lines().filter(|line| line.contains("at down")).count() <= MAX_BACKTRACE_FRAMES, "{message}");
    }

    #[test]
    fn math_random_draws_differ() {
        preinit();
        let first = ok("[Math.random(), Math.random()]").result;
        let second = ok("[Math.random(), Math.random()]").result;
        assert_ne!(first, second);
        assert_ne!(first[0], first[1]);
    }
}
