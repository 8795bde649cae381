//! `code/python`: runs Python written by a model in a fresh interpreter (RustPython,
//! compiled into this component) and returns the value of its last expression as JSON
//! together with what it printed.
//!
//! The sandbox is the component's: every call is a new instance with the fuel, memory
//! and time limits of its manifest and no grants. The interpreter is built without
//! RustPython's host environment (no `os` module of its own, no sockets, no files
//! through the standard library) and without the real standard streams: `print` writes
//! into a bounded buffer. Only the modules compiled into the interpreter can be
//! imported: RustPython's native ones and the curated pure-Python Lib frozen from
//! `pylib/` ([`MODULES`] lists what the tool promises).
//!
//! Building the interpreter and importing those modules is the bulk of a call's cost,
//! so `cargo xtask stdlib` snapshots the component after [`preinit`] has done it once:
//! each call then takes that interpreter and only re-seeds `random`. A build that was
//! not snapshotted builds a bare interpreter per call, whose program imports modules as
//! it asks for them (importing them all would cost ~0.4 s and ~2.2 G fuel a call).

use stdlib_shared::printed;
mod traceback;
mod values;

use std::cell::Cell;

use rustpython_vm::builtins::{PyBytesRef, PyDict, PyStrRef};
use rustpython_vm::compiler::Mode;
use rustpython_vm::compiler::ast::Stmt;
use rustpython_vm::scope::Scope;
use rustpython_vm::{Interpreter, PyObjectRef, PyResult, Settings, VirtualMachine};
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

/// The standard modules the tool's description promises, native (`math`, `sys`, ...)
/// or frozen from `pylib/` (the import closure of these, copied from RustPython's Lib).
/// [`preinit`] imports every one, so that a snapshot's calls do not pay for
/// them (a call that imports `traceback`, `tomllib` or `html.parser` itself spends 20-50
/// ms on it). The unit tests check that the description names every one.
const MODULES: &[&str] = &[
    // Numbers and data.
    "math",
    "cmath",
    "statistics",
    "random",
    "decimal",
    "fractions",
    "numbers",
    // Text.
    "re",
    "string",
    "textwrap",
    "difflib",
    "unicodedata",
    "json",
    "csv",
    "html",
    "html.parser",
    "tomllib",
    "pprint",
    "shlex",
    "fnmatch",
    // Time.
    "datetime",
    "time",
    "calendar",
    // Containers and algorithms.
    "collections",
    "collections.abc",
    "itertools",
    "functools",
    "operator",
    "heapq",
    "bisect",
    "graphlib",
    "array",
    "copy",
    // Bytes, hashes and identifiers.
    "struct",
    "base64",
    "binascii",
    "hashlib",
    "hmac",
    "secrets",
    "zlib",
    "gzip",
    "uuid",
    "ipaddress",
    "urllib.parse",
    "colorsys",
    // The language.
    "typing",
    "dataclasses",
    "enum",
    "abc",
    "types",
    "contextlib",
    "weakref",
    "warnings",
    "traceback",
    "inspect",
    "ast",
    "keyword",
    "io",
    "sys",
    "gc",
    "timeit",
    "__future__",
    // The shim: `os.path`, `os.urandom` and an empty `os.environ` (see [`BOOTSTRAP`]).
    "os",
    "os.path",
];

/// The curated pure-Python standard library, compiled to bytecode at build time.
const PYLIB: &rustpython_vm::frozen::FrozenLib = rustpython_vm::py_freeze!(dir = "../pylib");

/// Run once per interpreter, before anything else is imported, in a scope holding the
/// native `_write` (into the call's printed text) and `_urandom` (WASI's random source).
///
/// Without RustPython's host environment there is no `os` module; `_dummy_os` registers
/// itself as `os` (and `os.path`, `posix`) with the pure path functions. It gets the
/// few attributes the standard modules read, `urandom`, an empty `environ`, and an
/// attribute error that says why for everything else (files, processes, ...).
///
/// Then `print` (and anything else writing to `sys.stdout` or `sys.stderr`) is made to
/// write into the call's bounded buffer.
const BOOTSTRAP: &str = r#"
import sys
# The codec search function (latin-1, utf-16, cp1252, ...; `re` needs latin-1).
import encodings
import _dummy_os as os
import _io

class FileIO(_io._RawIOBase):
    """No files here: `io` imports the name, nothing can make one."""
    def __init__(self, *args, **kwargs):
        raise _io.UnsupportedOperation('this sandbox has no files')

# Only RustPython's host environment has the real one.
if not hasattr(_io, 'FileIO'):
    FileIO.__module__ = '_io'
    _io.FileIO = FileIO
del FileIO

os.urandom = _urandom
os.name = 'posix'
os.curdir, os.pardir, os.extsep, os.altsep = '.', '..', '.', None
os.pathsep, os.linesep, os.devnull = ':', '\n', '/dev/null'
os.environ = {}

def getenv(key, default=None):
    return default

def _unavailable(name):
    if name in {'_path_normpath', '__path__'}:
        raise AttributeError(name)
    raise AttributeError(
        f"module 'os' has no attribute {name!r}: this sandbox has no files, "
        'directories, processes, environment or network'
    )

os.getenv = getenv
os.__getattr__ = _unavailable
getenv.__module__ = _unavailable.__module__ = 'os'
del getenv, _unavailable

class _Printed:
    def write(self, text):
        return _write(text)
    def flush(self):
        pass
    def isatty(self):
        return False
    def writable(self):
        return True

sys.stdout = sys.stderr = _Printed()

# importlib's external bootstrap binds `posix` once, when importlib is first imported.
import importlib
"#;

/// Run once per interpreter after the [`MODULES`] are imported: nothing else may import
/// `posix` (the `os` shim), and what init built moves to the collector's permanent
/// generation, where later collections do not walk (and so do not dirty) it.
const SETTLE: &str = "
import sys, gc
del sys.modules['posix']
gc.collect()
gc.freeze()
";

thread_local! {
    /// The interpreter [`preinit`] built, taken by the first call: in a snapshot, every
    /// instance (one per call) starts with it here.
    static READY: Cell<Option<Interpreter>> = const { Cell::new(None) };
}

toolhost_guest::preinit!(crate::preinit);

/// Builds the interpreter a call will take. Runs once, before the snapshot: it must
/// print nothing and keep no WASI resource (see `toolhost_guest::preinit!`). The
/// interpreter's hash secret and `random`'s state are drawn here and so frozen into the
/// snapshot; each call re-seeds `random` ([`reseed`]).
fn preinit() {
    READY.set(Some(build_interpreter(Preload::Modules)));
}

/// Which of the [`MODULES`] an interpreter imports before its first program.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Preload {
    /// Every one: done once, for a snapshot.
    Modules,
    /// None: the program imports what it uses, as in any Python.
    Nothing,
}

/// A new interpreter with the standard library and [`BOOTSTRAP`] run, and what
/// `preload` says imported.
fn build_interpreter(preload: Preload) -> Interpreter {
    let mut settings = Settings::default();
    // No module search path: only native and frozen modules can be imported.
    settings.allow_external_library = false;
    settings.import_site = false;
    let builder = Interpreter::builder(settings);
    let native = rustpython_stdlib::stdlib_module_defs(&builder.ctx);
    let interpreter = builder.add_native_modules(&native).add_frozen_modules(PYLIB).build();
    interpreter.enter(|vm| {
        if let Err(exception) = bootstrap(vm, preload) {
            panic!("the interpreter's bootstrap failed: {}", traceback::describe(vm, &exception));
        }
    });
    interpreter
}

fn bootstrap(vm: &VirtualMachine, preload: Preload) -> PyResult<()> {
    let scope = vm.new_scope_with_builtins();
    let write = vm.new_function("_write", |text: PyStrRef| -> usize {
        printed::print(&text.as_wtf8().to_string_lossy());
        text.char_len()
    });
    let urandom = vm.new_function("urandom", |size: isize, vm: &VirtualMachine| -> PyResult<PyBytesRef> {
        let size = usize::try_from(size).map_err(|_| vm.new_value_error("negative argument not allowed"))?;
        let mut bytes = vec![0; size];
        getrandom::fill(&mut bytes).map_err(|e| vm.new_os_error(format!("no random source: {e}")))?;
        Ok(vm.ctx.new_bytes(bytes))
    });
    scope.globals.set_item("_write", write.into(), vm)?;
    scope.globals.set_item("_urandom", urandom.into(), vm)?;
    run_source(vm, BOOTSTRAP, "<bootstrap>", scope)?;
    if preload == Preload::Modules {
        for module in MODULES {
            vm.import(*module, 0)?;
        }
    }
    run_source(vm, SETTLE, "<settle>", vm.new_scope_with_builtins())
}

fn run_source(vm: &VirtualMachine, source: &str, name: &str, scope: Scope) -> PyResult<()> {
    let code = vm
        .compile(source, Mode::Exec, name.to_owned())
        .map_err(|e| vm.new_runtime_error(format!("{name} does not compile: {e}")))?;
    vm.run_code_obj(code, scope).map(drop)
}

/// Draws `random`'s module-level generator afresh from WASI's random source, when it was
/// imported before the call: the state [`preinit`] left would otherwise be the same in
/// every instance of a snapshot. (Imported by the program, it seeds itself.)
fn reseed(vm: &VirtualMachine) -> PyResult<()> {
    let modules = vm.sys_module.get_attr("modules", vm)?;
    let modules = modules.downcast::<PyDict>().map_err(|_| vm.new_runtime_error("sys.modules is not a dict"))?;
    match modules.get_item_opt("random", vm)? {
        Some(random) => random.get_attr("seed", vm)?.call((), vm).map(drop),
        None => Ok(()),
    }
}

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
    /// Besides the built-ins, these standard modules can be imported: `math`, `cmath`,
    /// `statistics`, `random`, `decimal`, `fractions`, `numbers`, `re`, `string`,
    /// `textwrap`, `difflib`, `unicodedata`, `json`, `csv`, `html`, `html.parser`,
    /// `tomllib`, `pprint`, `shlex`, `fnmatch`, `datetime` (time zones: UTC and fixed
    /// offsets only), `time`, `calendar`, `collections`,
    /// `collections.abc`, `itertools`, `functools`, `operator`, `heapq`, `bisect`,
    /// `graphlib`, `array`, `copy`, `struct`, `base64`, `binascii`, `hashlib`, `hmac`,
    /// `secrets`, `zlib`, `gzip`, `uuid`, `ipaddress`, `urllib.parse`, `colorsys`,
    /// `typing`, `dataclasses`, `enum`, `abc`, `types`, `contextlib`, `weakref`,
    /// `warnings`, `traceback`, `inspect`, `ast`, `keyword`, `io` (in-memory streams),
    /// `sys`, `gc`, `timeit` and `__future__`. `os` has only `os.path`, `os.urandom` and
    /// an empty `os.environ`: there are no files, no network, no subprocesses, no
    /// threads and no other modules (no `numpy`, `pandas`, `requests`, `socket`,
    /// `subprocess`). Nothing survives between calls. Pass data in through `input` (a
    /// JSON value, the global `input`).
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
    // Taken, never shared: a second call in one instance (only the native tests make
    // one) builds its own interpreter.
    let interpreter = READY.take().unwrap_or_else(|| build_interpreter(Preload::Nothing));
    let outcome = interpreter.enter(|vm| execute(vm, code, input));
    // The instance is discarded after its call: freeing the interpreter's objects one
    // by one would only cost time.
    #[cfg(target_family = "wasm")]
    std::mem::forget(interpreter);
    outcome
}

fn execute(vm: &VirtualMachine, code: &str, input: Option<&Value>) -> Result<Outcome, ToolError> {
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

/// A fresh `random` state and the program's globals (`input`, `__name__`).
fn prepare(vm: &VirtualMachine, scope: &Scope, input: Option<&Value>) -> PyResult<()> {
    reseed(vm)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Runs `test` on a thread with a large stack: unoptimized, the interpreter's frames
    /// are large enough that a few nested imports reach RustPython's native stack guard
    /// on a test thread's 2 MiB.
    fn on_a_large_stack(test: impl FnOnce() + Send + 'static) {
        let thread = std::thread::Builder::new().stack_size(256 << 20).spawn(test).expect("spawns");
        if let Err(panic) = thread.join() {
            std::panic::resume_unwind(panic);
        }
    }

    fn ok(code: &str, input: Option<Value>) -> Outcome {
        run(code, input.as_ref()).unwrap_or_else(|e| panic!("{code}: {e:?}"))
    }

    fn result(code: &str) -> Value {
        ok(code, None).result
    }

    fn failed(code: &str) -> String {
        match run(code, None) {
            Err(ToolError::Failed(message)) => message,
            Err(other) => panic!("{code}: expected a failure, got {other:?}"),
            Ok(outcome) => panic!("{code}: expected a failure, got {}", outcome.result),
        }
    }

    /// Every promised module is imported before the program of a pre-initialized
    /// interpreter runs; on a bare one, every promised module and every module frozen
    /// into the component (what the promised ones import, at once or when called)
    /// imports on demand.
    #[test]
    fn every_promised_module_is_imported_and_every_frozen_one_imports() {
        on_a_large_stack(|| {
            let frozen: Vec<&str> = PYLIB.decode().map(|(name, _)| name).collect();
            assert!(frozen.contains(&"json.decoder") && frozen.contains(&"_strptime"), "{frozen:?}");
            preinit();
            let missing = "import sys\n[name for name in input if name not in sys.modules]";
            assert_eq!(ok(missing, Some(json!(MODULES))).result, json!([]));

            assert_eq!(ok(missing, Some(json!(["json", "statistics"]))).result, json!(["json", "statistics"]));
            let code = "import importlib\nfor name in input:\n    importlib.import_module(name)";
            let all: Vec<&str> = MODULES.iter().copied().chain(frozen).collect();
            let imported = ok(code, Some(json!(all)));
            assert_eq!(imported.stdout, "", "importing printed (a warning?)");
        })
    }

    #[test]
    fn the_description_names_every_promised_module() {
        on_a_large_stack(|| {
            let tools = <super::__ToolboxExport as toolhost_guest::__Guest>::list_tools();
            let description = &tools[0].description;
            for module in MODULES {
                assert!(description.contains(&format!("`{module}`")), "the description does not name `{module}`");
            }
        })
    }

    #[test]
    fn a_call_takes_the_preinitialized_interpreter_and_the_next_builds_its_own() {
        on_a_large_stack(|| {
            preinit();
            assert_eq!(result("x = 1\nimport sys\nsys.leftover = 1\nx"), json!(1));
            assert!(READY.take().is_none(), "the call took the interpreter");
            assert_eq!(result("'x' in globals()"), json!(false));
            assert_eq!(result("import sys\nhasattr(sys, 'leftover')"), json!(false));
        })
    }

    /// A snapshot gives every instance the same `random` state: each call re-seeds it.
    #[test]
    fn random_differs_between_calls_that_start_from_the_same_state() {
        on_a_large_stack(|| {
            let draw = || {
                let interpreter = build_interpreter(Preload::Modules);
                interpreter
                    .enter(|vm| run_source(vm, "import random\nrandom.seed(7)", "<test>", vm.new_scope_with_builtins()))
                    .expect("seeds");
                READY.set(Some(interpreter));
                result("import random\n[random.random(), random.randrange(10**12)]")
            };
            let (first, second) = (draw(), draw());
            assert_ne!(first, second);
            assert_ne!(result("import os\nos.urandom(16)"), result("import os\nos.urandom(16)"));
        })
    }

    #[test]
    fn standard_modules_compute_the_right_values() {
        on_a_large_stack(|| {
            let code = r#"
import json, math, re, datetime, statistics, collections, decimal, fractions, dataclasses, typing, hashlib, base64

@dataclasses.dataclass
class Point:
    x: int
    y: typing.Optional[int] = None

{
    "json": json.loads(json.dumps({"a": [1, 2.5, None]})),
    "sqrt": math.sqrt(2),
    "gcd": math.gcd(84, 36),
    "words": re.findall(r"\w+", "to be, or not"),
    "days": (datetime.date(2024, 3, 1) - datetime.date(2024, 2, 1)).days,
    "iso": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc).isoformat(),
    "mean": statistics.mean([1, 2, 3, 4]),
    "median": statistics.median([3, 1, 2]),
    "stdev": round(statistics.stdev([2, 4, 4, 4, 5, 5, 7, 9]), 6),
    "common": collections.Counter("abracadabra").most_common(1),
    "decimal": str(decimal.Decimal("0.1") + decimal.Decimal("0.2")),
    "fraction": str(fractions.Fraction(1, 3) + fractions.Fraction(1, 6)),
    "point": repr(Point(1)),
    "sha256": hashlib.sha256(b"abc").hexdigest()[:16],
    "b64": base64.b64encode(b"hi").decode(),
}
"#;
            assert_eq!(
                result(code),
                json!({
                    "json": {"a": [1, 2.5, null]},
                    "sqrt": std::f64::consts::SQRT_2,
                    "gcd": 12,
                    "words": ["to", "be", "or", "not"],
                    "days": 29,
                    "iso": "2024-01-02T03:04:05+00:00",
                    "mean": 2.5,
                    "median": 2,
                    "stdev": 2.13809,
                    "common": [["a", 5]],
                    "decimal": "0.3",
                    "fraction": "1/2",
                    "point": "Point(x=1, y=None)",
                    "sha256": "ba7816bf8f01cfea",
                    "b64": "aGk=",
                })
            );
        })
    }

    #[test]
    fn printing_is_per_call_also_through_streams_made_at_init() {
        on_a_large_stack(|| {
            preinit();
            let first = ok("print('one')\nimport sys\nsys.stderr.write('two\\n')\n1", None);
            assert_eq!((first.stdout.as_str(), first.truncated), ("one\ntwo\n", false));
            let second = ok("print('three')", None);
            assert_eq!(second.stdout, "three\n");
            let warned = ok("import warnings\nwarnings.warn('careful')", None);
            assert!(warned.stdout.contains("UserWarning: careful"), "{}", warned.stdout);
        })
    }

    #[test]
    fn os_is_a_shim_without_files_processes_or_environment() {
        on_a_large_stack(|| {
            assert_eq!(
                result(
                    "import os\n[os.path.join('a', 'b'), os.sep, os.environ, os.getenv('HOME'), len(os.urandom(8))]"
                ),
                json!(["a/b", "/", {}, null, 8])
            );
            for code in [
                "import os\nos.listdir('/')",
                "import os\nos.system('ls')",
                "import os\nos.popen('ls')",
                "import os\nos.open('/etc/passwd', 0)",
                "import os\nos.getcwd()",
                "import os\nos.path.abspath('x')",
            ] {
                let message = failed(code);
                assert!(
                    message.contains("AttributeError") && message.contains("this sandbox has no files"),
                    "{code}: {message}"
                );
            }
            for module in
                ["posix", "socket", "subprocess", "urllib.request", "ctypes", "shutil", "tempfile", "threading"]
            {
                let message = failed(&format!("import {module}"));
                assert!(message.contains("ModuleNotFoundError"), "{module}: {message}");
            }
            let opened = failed("open('/etc/passwd').read()");
            assert!(opened.contains("UnsupportedOperation"), "{opened}");
            assert_eq!(result("import random\nhasattr(random._os, 'fork')"), json!(false));
        })
    }

    /// What a model reaches for beyond the common modules, including what they import
    /// only when called (`_strptime`, `_ast_unparse`, the codecs of `encodings`).
    #[test]
    fn less_common_modules_and_their_lazy_imports_work() {
        on_a_large_stack(|| {
            let code = r#"
import ast, calendar, csv, datetime, difflib, graphlib, gzip, hashlib, hmac, html, html.parser, inspect, io
import ipaddress, secrets, shlex, string, textwrap, time, tomllib, traceback, unicodedata, urllib.parse, uuid, zlib

class Tags(html.parser.HTMLParser):
    seen = []
    def handle_starttag(self, tag, attrs):
        self.seen.append(tag)

def signature(a, b=2, *, c):
    pass

try:
    1 / 0
except ZeroDivisionError:
    last_line = traceback.format_exc().splitlines()[-1]

Tags().feed("<p><b>x</b></p>")
{
    "codecs": ["é".encode("latin-1").hex(), "x".encode("utf-16-le").hex(), b"a\\nb".decode("unicode_escape"),
               b"\x80".decode("cp1252")],
    "strptime": str(datetime.datetime.strptime("2024-01-02", "%Y-%m-%d")),
    "time.strptime": time.strptime("2024", "%Y").tm_year,
    "strftime": datetime.date(2024, 1, 2).strftime("%A %d %B %Y"),
    "calendar": [calendar.monthrange(2024, 2)[1], calendar.isleap(2024)],
    "csv": list(csv.reader(io.StringIO('a,b\n1,"2,3"\n'))),
    "uuid": [len(str(uuid.uuid4())), uuid.uuid4().version],
    "secrets": len(secrets.token_hex(8)),
    "gzip": gzip.decompress(gzip.compress(b"hello")).decode(),
    "zlib": zlib.crc32(b"abc"),
    "hmac": hmac.new(b"k", b"m", "sha256").hexdigest()[:8],
    "md5": hashlib.md5(b"").hexdigest()[:8],
    "html": html.unescape("&amp;&lt;") + html.escape("<a>"),
    "tags": Tags.seen,
    "url": [urllib.parse.urlparse("https://a.b/c?d=1").query, urllib.parse.quote("a b")],
    "ip": str(ipaddress.ip_network("10.0.0.0/30").broadcast_address),
    "toml": tomllib.loads('a = 1\n[b]\nc = "d"'),
    "diff": list(difflib.unified_diff(["a"], ["b"], lineterm=""))[2:],
    "wrap": textwrap.wrap("a b c d e f", 5),
    "order": list(graphlib.TopologicalSorter({"b": {"a"}}).static_order()),
    "shlex": shlex.split('a "b c"'),
    "template": string.Template("$a!").substitute(a=1),
    "signature": str(inspect.signature(signature)),
    "literal": ast.literal_eval("[1, {'a': (2, 3)}]"),
    "unparse": ast.unparse(ast.parse("x  =  ( 1 )")),
    "traceback": last_line,
    "unicodedata": unicodedata.name("é"),
}
"#;
            assert_eq!(
                result(code),
                json!({
                    "codecs": ["e9", "7800", "a\nb", "€"],
                    "strptime": "2024-01-02 00:00:00",
                    "time.strptime": 2024,
                    "strftime": "Tuesday 02 January 2024",
                    "calendar": [29, true],
                    "csv": [["a", "b"], ["1", "2,3"]],
                    "uuid": [36, 4],
                    "secrets": 16,
                    "gzip": "hello",
                    "zlib": 891568578,
                    "hmac": "b60090e3",
                    "md5": "d41d8cd9",
                    "html": "&<&lt;a&gt;",
                    "tags": ["p", "b"],
                    "url": ["d=1", "a%20b"],
                    "ip": "10.0.0.3",
                    "toml": {"a": 1, "b": {"c": "d"}},
                    "diff": ["@@ -1 +1 @@", "-a", "+b"],
                    "wrap": ["a b c", "d e f"],
                    "order": ["a", "b"],
                    "shlex": ["a", "b c"],
                    "template": "1!",
                    "signature": "(a, b=2, *, c)",
                    "literal": [1, {"a": [2, 3]}],
                    "unparse": "x = 1",
                    "traceback": "ZeroDivisionError: division by zero",
                    "unicodedata": "LATIN SMALL LETTER E WITH ACUTE",
                })
            );
        })
    }
}
