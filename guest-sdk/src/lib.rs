//! Write toolhost tools as ordinary Rust functions.
//!
//! A tool is a function from one deserializable input type to a `Result` of one
//! serializable output type. The [`toolbox!`] macro turns a group of such functions into
//! a WebAssembly component that exports the `toolhost:tool` contract; the JSON Schemas of
//! every input and output are derived from the Rust types with [`schemars`], never
//! written by hand.
//!
//! ```
//! use toolhost_guest::{Deserialize, JsonSchema, Serialize, ToolError, toolbox};
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct Pair { a: f64, b: f64 }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Quotient { value: f64 }
//!
//! toolbox! {
//!     /// Divides `a` by `b`.
//!     fn divide(input: Pair) -> Result<Quotient, ToolError> {
//!         if input.b == 0.0 {
//!             return Err(ToolError::InvalidInput("division by zero".into()));
//!         }
//!         Ok(Quotient { value: input.a / input.b })
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! Build it with `cargo build --target wasm32-wasip2 --release` (crate type `cdylib`);
//! the `.wasm` in `target/wasm32-wasip2/release/` is the component. The doc comment of
//! each function becomes the tool's description.
//!
//! The host validates every input against the derived schema before the call, and the
//! SDK deserializes it again, so input that does not fit the type never reaches the
//! function: the caller gets `invalid-input` with serde's message instead.

// Lets the generated export macro name this crate by its own name from any crate.
extern crate self as toolhost_guest;

#[doc(hidden)]
pub use wit_bindgen as __wit_bindgen;

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "sdk",
        generate_all,
        pub_export_macro: true,
        export_macro_name: "__export_toolbox",
        default_bindings_module: "::toolhost_guest::bindings",
        runtime_path: "::toolhost_guest::__wit_bindgen::rt",
    });
}

pub use schemars::{self, JsonSchema};
pub use serde::{self, Deserialize, Serialize};
pub use serde_json;

pub mod client;
pub mod storage;

pub use client::{Content, add_content};

/// How a tool call fails; see the contract's `tool-error` variant.
///
/// `InvalidInput` says the caller's input made no sense to the tool (the host reports
/// it like a schema violation); `Failed` says the tool tried and could not do it.
pub use bindings::exports::toolhost::tool::toolbox::ToolError;

#[doc(hidden)]
pub use bindings::exports::toolhost::tool::toolbox::{Guest as __Guest, ToolInfo as __ToolInfo};

use bindings::toolhost::tool::host;

/// Reads a configuration value the operator granted this component in its manifest.
pub fn config(key: &str) -> Option<String> {
    host::config(key)
}

/// Reports how far the running call has come: `done` units of `total` (`None` when
/// unknown), with an optional short message. Reports whose `done` is not above the last
/// one are ignored; the host passes them on at a bounded rate, so call it as often as
/// is natural (needs a host that speaks `toolhost:tool@0.1.1`).
///
/// ```no_run
/// # let files = vec!["a", "b"];
/// for (i, file) in files.iter().enumerate() {
///     toolhost_guest::progress(i as u64 + 1, Some(files.len() as u64), Some(&format!("read {file}")));
/// }
/// ```
pub fn progress(done: u64, total: Option<u64>, message: Option<&str>) {
    host::progress(done, total, message)
}

/// Who is calling: the agent, and the session it acts in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The agent's id, as the operator names it.
    pub agent: String,
    /// The session (conversation, thread), when the agent acts in one.
    pub session: Option<String>,
}

/// Who is calling, when the operator granted this component to know it (its manifest's
/// `[grants] caller = true`); `None` otherwise. Storage needs no help from it: every
/// bucket already holds one set of contents per agent. Needs a host that speaks
/// `toolhost:tool@0.1.2`; a component that never calls it loads in older hosts too.
pub fn caller() -> Option<Caller> {
    host::caller().map(|info| Caller { agent: info.agent, session: info.session })
}

/// Writes to the host's log; each line is tagged with the tool being called.
pub mod log {
    use super::host::{self, LogLevel};

    pub fn trace(message: &str) {
        host::log(LogLevel::Trace, message)
    }
    pub fn debug(message: &str) {
        host::log(LogLevel::Debug, message)
    }
    pub fn info(message: &str) {
        host::log(LogLevel::Info, message)
    }
    pub fn warn(message: &str) {
        host::log(LogLevel::Warn, message)
    }
    pub fn error(message: &str) {
        host::log(LogLevel::Error, message)
    }
}

/// What a tool function may return: `Result<Output, E>` where `E` converts into a
/// [`ToolError`]. Lets authors use `?` with their own error types.
pub trait ToolReturn {
    type Output: Serialize + JsonSchema;
    fn into_result(self) -> Result<Self::Output, ToolError>;
}

impl<T: Serialize + JsonSchema, E: Into<ToolError>> ToolReturn for Result<T, E> {
    type Output = T;
    fn into_result(self) -> Result<T, ToolError> {
        self.map_err(Into::into)
    }
}

impl ToolError {
    /// A `Failed` error from anything printable.
    pub fn failed(message: impl std::fmt::Display) -> Self {
        ToolError::Failed(message.to_string())
    }

    /// An `InvalidInput` error from anything printable.
    pub fn invalid_input(message: impl std::fmt::Display) -> Self {
        ToolError::InvalidInput(message.to_string())
    }
}

/// Describes one tool; used by [`toolbox!`].
#[doc(hidden)]
pub fn __describe<I: JsonSchema, O: JsonSchema>(name: &str, doc: &str) -> __ToolInfo {
    __ToolInfo {
        name: name.to_owned(),
        description: description_from_doc(doc),
        input_schema: schemars::schema_for!(I).as_value().to_string(),
        output_schema: schemars::schema_for!(O).as_value().to_string(),
    }
}

/// Runs one tool on JSON text; used by [`toolbox!`].
#[doc(hidden)]
pub fn __run<I, R>(input: &str, tool: fn(I) -> R) -> Result<String, ToolError>
where
    I: serde::de::DeserializeOwned,
    R: ToolReturn,
{
    let input: I = serde_json::from_str(input).map_err(|e| ToolError::InvalidInput(e.to_string()))?;
    let output = tool(input).into_result()?;
    serde_json::to_string(&output).map_err(|e| ToolError::Failed(format!("output is not JSON: {e}")))
}

/// Joins `///` lines the way rustdoc does: one leading space dropped per line, and the
/// whole trimmed.
fn description_from_doc(doc: &str) -> String {
    doc.lines().map(|line| line.strip_prefix(' ').unwrap_or(line)).collect::<Vec<_>>().join("\n").trim().to_owned()
}

/// Declares the tools of this component and exports them.
///
/// Each item is a function with one input parameter; its `///` doc comment is the
/// tool's description and its name is the tool's name. Use it once per crate.
#[macro_export]
macro_rules! toolbox {
    ($(
        $(#[doc = $doc:literal])*
        fn $name:ident ($input:ident : $input_ty:ty) -> $ret:ty $body:block
    )*) => {
        $(
            $(#[doc = $doc])*
            fn $name($input: $input_ty) -> $ret $body
        )*

        struct __ToolboxExport;

        impl $crate::__Guest for __ToolboxExport {
            fn list_tools() -> ::std::vec::Vec<$crate::__ToolInfo> {
                ::std::vec![$(
                    $crate::__describe::<$input_ty, <$ret as $crate::ToolReturn>::Output>(
                        stringify!($name),
                        concat!($($doc, "\n",)* ""),
                    )
                ),*]
            }

            fn call(
                tool: ::std::string::String,
                input: ::std::string::String,
            ) -> ::std::result::Result<::std::string::String, $crate::ToolError> {
                match tool.as_str() {
                    $(stringify!($name) => $crate::__run(&input, $name),)*
                    other => ::std::result::Result::Err($crate::ToolError::InvalidInput(
                        ::std::format!("this toolbox has no tool named `{other}`"),
                    )),
                }
            }
        }

        $crate::bindings::__export_toolbox!(__ToolboxExport);
    };
}

/// Lets a build step snapshot this component after running `init` once, so that every
/// call starts from what `init` built instead of building it again.
///
/// The component gets one more export, the component-level function
/// `wizer-initialize: func()`, which calls `init`. A pre-initializer (`toolhost preinit`,
/// run by `cargo xtask stdlib` for crates whose `[package.metadata.toolhost]` says
/// `preinit = "wizer-initialize"`) instantiates the component, calls that export once and
/// writes the instance's linear memory and globals back as the component's initial
/// state. The host never calls it: a component that was not snapshotted still works,
/// so the tool must not depend on `init` having run (build what is missing on first
/// use, as below).
///
/// `init` runs with an empty WASI context and must follow these rules:
///
/// * **Print nothing, open no files, streams or sockets, keep no WASI resource.** A
///   snapshot holds memory, not handles: a handle kept across `init` would dangle in
///   every instance, so the pre-initializer refuses the snapshot when one is still
///   alive. Printing counts, since the standard library keeps its stdout and stderr
///   streams open once used. No environment, arguments or directories are granted.
/// * **What it leaves in linear memory is what every call starts from**, in every
///   instance, for every caller. Leave nothing there that one call could change for the
///   next: each instance is discarded after its call, so a call may use up (take) what
///   `init` left, but must never assume that a previous call did not.
/// * **Values it got from the host are frozen into the snapshot**: random numbers and
///   seeds, clock readings, hash keys. Every instance sees the same ones; re-seed per
///   call what must differ between calls (a random generator), or do not draw it in
///   `init` at all.
///
/// Use it at most once per crate, beside [`toolbox!`]:
///
/// ```no_run
/// use std::cell::RefCell;
///
/// thread_local! {
///     static READY: RefCell<Option<Vec<u64>>> = const { RefCell::new(None) };
/// }
///
/// fn primes() -> Vec<u64> {
///     (2..10_000u64).filter(|n| (2..*n).take_while(|d| d * d <= *n).all(|d| n % d != 0)).collect()
/// }
///
/// // Built once at snapshot time; a build that was not snapshotted builds it per call.
/// fn init() {
///     READY.set(Some(primes()));
/// }
///
/// toolhost_guest::preinit!(init);
///
/// fn ready() -> Vec<u64> {
///     READY.take().unwrap_or_else(primes)
/// }
/// # fn main() { let _ = ready(); }
/// ```
#[macro_export]
macro_rules! preinit {
    ($init:path) => {
        // Named outside the bindings module, so that `$init` resolves where the macro
        // was called.
        #[doc(hidden)]
        fn __toolhost_preinit_call() {
            $init()
        }

        #[doc(hidden)]
        mod __toolhost_preinit {
            $crate::__wit_bindgen::generate!({
                inline: "
                    package toolhost:preinit;

                    world preinit {
                        /// Called once by a pre-initializer before it snapshots the instance.
                        export wizer-initialize: func();
                    }
                ",
                runtime_path: "::toolhost_guest::__wit_bindgen::rt",
            });

            struct Init;

            impl Guest for Init {
                fn wizer_initialize() {
                    super::__toolhost_preinit_call()
                }
            }

            export!(Init);
        }
    };
}

#[cfg(test)]
mod tests {
    use super::description_from_doc;

    #[test]
    fn doc_lines_lose_one_leading_space_and_the_whole_is_trimmed() {
        assert_eq!(
            description_from_doc(" Adds two numbers.\n\n   Indented detail.\n"),
            "Adds two numbers.\n\n  Indented detail."
        );
    }
}
