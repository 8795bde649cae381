//! An uncaught exception as text a model can act on: the traceback as CPython prints
//! it, with runs of identical frames (a runaway recursion) folded, and bounded.

use rustpython_vm::builtins::PyBaseExceptionRef;
use rustpython_vm::{AsObject, VirtualMachine};
use stdlib_shared::traceback::{bound, fold_repeats};

/// The exception's traceback, folded and bounded.
pub fn describe(vm: &VirtualMachine, exception: &PyBaseExceptionRef) -> String {
    let mut written = String::new();
    if vm.write_exception(&mut written, exception).is_err() || written.trim().is_empty() {
        written = format!("{}", exception.class().name());
    }
    bound(&fold_repeats(written.trim_end()))
}
