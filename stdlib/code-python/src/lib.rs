//! `code/python`: runs Python written by a model in a fresh interpreter (RustPython,
//! compiled into this component) and returns the value of its last expression as JSON
//! together with what it printed.
//!
//! The sandbox is the component's: every call is a new instance with the fuel, memory
//! and time limits of its manifest and no grants. The interpreter is built without
//! RustPython's host environment (no `os`, no sockets, no files through the standard
//! library) and without the real standard streams: `print` writes into a bounded
//! buffer. Only the modules compiled into the interpreter can be imported.

use stdlib_shared::printed;
mod traceback;
mod values;

use rustpython_vm::builtins::PyStrRef;
use rustpython_vm::compiler::Mode;
use rustpython_vm::compiler::ast::Stmt;
use rustpython_vm::scope::Scope;
use rustpython_vm::{Interpreter, PyObjectRef, PyResult, VirtualMachine};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_guest::{ToolError, toolbox};

/// Longest program accepted, in characters.
const MAX_CODE_CHARS: u32 = 100_000;

/// Bytes of printed text quoted in a failure message (the host keeps 4 KiB of it).
const FAILURE_PRINTED_TAIL: usize = 1024;

/// The file name tracebacks and syntax errors give the program.
const PROGRAM_NAME: &str = "<code>";

/// Makes `print` (and anything else writing to `sys.stdout` or `sys.stderr`) write into
/// the call's bounded buffer through `_write`, a native function.
const STREAMS: &str = "
class _Printed:
    def write(self, text):
        return _write(text)
    def flush(self):
        pass
    def isatty(self):
        return False
    def writable(self):
        return True

import sys
sys.stdout = sys.stderr = _Printed()
";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Program {
    /// The Python 3 program to run. The value of its last statement, when that is an
    /// expression, is the result; otherwise (or when that value is `None`) the global
    /// `result`, if the program sets one.
    #[schemars(length(min = 1, max = MAX_CODE_CHARS))]
    code: String,
    /// Any JSON value, given to the program as the global `input` (dicts, lists, str,
    /// int, float, bool, None); absent, `input` is `None`.
    input: Option<Value>,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Outcome {
    /// The result as JSON: `None` is `null`; bool, int, float and str as themselves
    /// (an int beyond 64 bits is its decimal string; `nan` and `inf` are `null`); list
    /// and tuple are arrays; a dict is an object (keys that are not strings become
    /// their `str()`). Any other value, and anything nested deeper than 32 levels, is
    /// its `repr()` string.
    result: Value,
    /// The name of the result's Python type (`int`, `dict`, `NoneType`, ...).
    result_type: String,
    /// Everything the program printed (`print`, `sys.stdout`, `sys.stderr`).
    stdout: String,
    /// Whether `stdout` was cut: at most 64 KiB is kept, the rest is dropped.
    truncated: bool,
}

toolbox! {
    /// Runs a Python 3 program in a fresh, isolated interpreter (RustPython) and returns
    /// the value of its last expression as JSON, plus what it printed. Use it to
    /// compute, transform data or check an idea precisely.
    ///
    /// Only the built-ins and the interpreter's core modules (`sys`, `time`, `itertools`,
    /// `_collections`, `_functools`, `_operator`, `_sre`, `_io`, ...) exist: there is no
    /// `os`, no files, no network, no `subprocess`, and pure-Python standard modules
    /// such as `json`, `math`, `re` or `datetime` are not available. Nothing survives
    /// between calls. Pass data in through `input` (a JSON value, the global `input`).
    /// Example: `{"code": "total = sum(input)\nprint(total)\n{'total': total, 'n': len(input)}", "input": [1, 2, 3]}`
    /// returns `{"result": {"n": 3, "total": 6}, "result_type": "dict", "stdout": "6\n", "truncated": false}`.
    ///
    /// A syntax error is refused as invalid input; an uncaught exception fails the call
    /// with its traceback and the last output printed before it. Each call runs under a
    /// fuel, memory and time budget: an endless loop or a huge allocation is stopped by
    /// the host. Printed output past 64 KiB is dropped (`truncated`).
    fn python(input: Program) -> Result<Outcome, ToolError> {
        run(&input.code, input.input.as_ref())
    }
}

fn run(code: &str, input: Option<&Value>) -> Result<Outcome, ToolError> {
    printed::reset();
    let interpreter = Interpreter::without_stdlib(Default::default());
    interpreter.enter(|vm| {
        let scope = vm.new_scope_with_builtins();
        prepare(vm, &scope, input).map_err(|e| ToolError::failed(traceback::describe(vm, &e)))?;

        // The whole program compiles first, so that every syntax error is reported
        // against the program as written.
        let whole = vm.compile(code, Mode::Exec, PROGRAM_NAME.to_owned()).map_err(|e| syntax_error(code, &e))?;
        let last_value = match split_last_expression(code) {
            Some((statements, expression)) => {
                let statements =
                    vm.compile(statements, Mode::Exec, PROGRAM_NAME.to_owned()).map_err(|e| syntax_error(code, &e))?;
                let expression =
                    vm.compile(&expression, Mode::Eval, PROGRAM_NAME.to_owned()).map_err(|e| syntax_error(code, &e))?;
                vm.run_code_obj(statements, scope.clone()).map_err(|e| failure(vm, &e))?;
                vm.run_code_obj(expression, scope.clone()).map_err(|e| failure(vm, &e))?
            }
            None => {
                vm.run_code_obj(whole, scope.clone()).map_err(|e| failure(vm, &e))?;
                vm.ctx.none()
            }
        };
        let value = if vm.is_none(&last_value) {
            scope.globals.get_item_opt("result", vm).map_err(|e| failure(vm, &e))?.unwrap_or(last_value)
        } else {
            last_value
        };

        let result_type = value.class().name().to_string();
        let result = values::to_json(vm, &value).map_err(|e| failure(vm, &e))?;
        let (stdout, truncated) = printed::take();
        Ok(Outcome { result, result_type, stdout, truncated })
    })
}

/// When the program's last top-level statement is an expression: the statements
/// before it, and that expression as an `eval` source on its own lines (preceded by as
/// many empty lines, so a traceback names the line it has in the program).
///
/// Done here rather than with RustPython's `BlockExpr` mode, whose code generation in
/// 0.5 loses the value after a `for` or `while` (a panic) and returns an `if` body's
/// value instead of the last line's.
fn split_last_expression(code: &str) -> Option<(&str, String)> {
    let parsed = rustpython_vm::compiler::parser::parse_module(code).ok()?;
    let Some(Stmt::Expr(last)) = parsed.syntax().body.last() else {
        return None;
    };
    let (start, end) = (last.range.start().to_usize(), last.range.end().to_usize());
    let (statements, expression) = (code.get(..start)?, code.get(start..end)?);
    let lines_before = statements.matches('\n').count();
    Some((statements, format!("{}{expression}", "\n".repeat(lines_before))))
}

/// The program's globals (`input`, `__name__`) and its standard streams.
fn prepare(vm: &VirtualMachine, scope: &Scope, input: Option<&Value>) -> PyResult<()> {
    let streams = vm.new_scope_with_builtins();
    let write = vm.new_function("_write", |text: PyStrRef| -> usize {
        printed::print(&text.as_wtf8().to_string_lossy());
        text.char_len()
    });
    streams.globals.set_item("_write", write.into(), vm)?;
    let bootstrap = vm
        .compile(STREAMS, Mode::Exec, "<streams>".to_owned())
        .map_err(|e| vm.new_runtime_error(format!("the stream bootstrap does not compile: {e}")))?;
    vm.run_code_obj(bootstrap, streams)?;

    let input: PyObjectRef = match input {
        Some(value) => values::to_python(vm, value)?,
        None => vm.ctx.none(),
    };
    scope.globals.set_item("input", input, vm)?;
    scope.globals.set_item("__name__", vm.ctx.new_str("__main__").into(), vm)?;
    Ok(())
}

/// A program that does not compile: the compiler's message, where, and that line.
fn syntax_error(code: &str, error: &rustpython_vm::compiler::CompileError) -> ToolError {
    let (line, column) = error.python_location();
    let mut message = format!("SyntaxError: {error} (line {line}, column {column})");
    if let Some(text) = line.checked_sub(1).and_then(|index| code.lines().nth(index)) {
        // A minified one-line program would otherwise fill the whole message.
        let text: String = text.chars().take(200).collect();
        message.push_str(&format!("\n    {}", text.trim_end()));
    }
    ToolError::invalid_input(message)
}

/// A runtime failure: the traceback, then the end of what the program printed before it.
fn failure(vm: &VirtualMachine, exception: &rustpython_vm::builtins::PyBaseExceptionRef) -> ToolError {
    let mut message = traceback::describe(vm, exception);
    let printed = printed::tail(FAILURE_PRINTED_TAIL);
    if !printed.is_empty() {
        message.push_str("\nprinted before the error (its end):\n");
        message.push_str(&printed);
    }
    ToolError::failed(message)
}
