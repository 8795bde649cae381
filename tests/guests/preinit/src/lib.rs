//! A toolbox whose initialization (`wizer-initialize`, from the SDK's `preinit!`) leaves
//! state in its memory, so the suite can tell a snapshot's instances start from it; and
//! initializations that a snapshot must refuse, exported beside it for `--init`.

use std::cell::Cell;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_guest::{ToolError, toolbox};

thread_local! {
    /// Set by the initialization: what a snapshot's instances start with.
    static INITIALIZED: Cell<bool> = const { Cell::new(false) };
    /// Counted by every call: a fresh instance per call sees 1.
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

/// Heap the initialization fills, so the snapshot holds more than a flag.
static mut TABLE: Vec<u64> = Vec::new();

fn initialize() {
    INITIALIZED.set(true);
    // SAFETY: wasm32 has one thread, and nothing else touches TABLE during the init.
    unsafe { (*std::ptr::addr_of_mut!(TABLE)).extend((0..100_000u64).map(|i| i * i)) };
}

toolhost_guest::preinit!(crate::initialize);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nothing {}

#[derive(Serialize, JsonSchema)]
struct State {
    /// Whether this instance started initialized.
    initialized: bool,
    /// Calls this instance served, this one included.
    calls: u32,
    /// The sum the initialization's table gives (0 when it did not run).
    table_sum: u64,
}

toolbox! {
    /// What this instance started from.
    fn state(_input: Nothing) -> Result<State, ToolError> {
        CALLS.set(CALLS.get() + 1);
        // SAFETY: as in `initialize`.
        let table_sum = unsafe { (*std::ptr::addr_of!(TABLE)).iter().fold(0u64, |sum, x| sum.wrapping_add(*x)) };
        Ok(State { initialized: INITIALIZED.get(), calls: CALLS.get(), table_sum })
    }
}

/// Initializations a snapshot must refuse, each named for what it does.
mod faults {
    wit_bindgen::generate!({
        inline: "package test:preinit-faults;
                 world faults {
                     export init-keeps-a-stream: func();
                     export init-loops: func();
                     export init-traps: func();
                     export init-grows: func();
                     export init-sleeps: func();
                 }",
    });

    struct Faults;

    impl Guest for Faults {
        /// Keeps a handle to standard output, which would dangle in every instance.
        fn init_keeps_a_stream() {
            std::mem::forget(wasip2::cli::stdout::get_stdout());
        }

        fn init_loops() {
            let mut n = 0u64;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }

        fn init_traps() {
            panic!("the initialization fails");
        }

        /// Waits an hour in a host call, where no epoch deadline reaches it.
        fn init_sleeps() {
            let hour = wasip2::clocks::monotonic_clock::subscribe_duration(3600 * 1_000_000_000);
            hour.block();
        }

        /// Asks for far more memory than any limit allows.
        fn init_grows() {
            let mut kept: Vec<Vec<u8>> = Vec::new();
            loop {
                kept.push(vec![1u8; 16 << 20]);
                std::hint::black_box(&kept);
            }
        }
    }

    export!(Faults);
}
