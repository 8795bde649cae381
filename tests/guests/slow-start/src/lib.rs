//! A toolbox whose instantiation takes 1.5 s: its `_initialize`, which the component runs
//! as it is instantiated, waits on the clock. Loading it instantiates it to list its
//! tools; the spare instance a listing makes must give up long before.

wit_bindgen::generate!({ path: "../../../wit", world: "plugin" });

use std::time::{Duration, Instant};

use exports::toolhost::tool::toolbox::{Guest, ToolError, ToolInfo};

/// How long an instantiation takes.
const START: Duration = Duration::from_millis(1500);

#[unsafe(export_name = "_initialize")]
pub extern "C" fn initialize() {
    let started = Instant::now();
    while started.elapsed() < START {
        std::hint::spin_loop();
    }
}

struct SlowStart;

impl Guest for SlowStart {
    fn list_tools() -> Vec<ToolInfo> {
        vec![ToolInfo {
            name: "ping".into(),
            description: "Answers pong.".into(),
            input_schema: r#"{"type":"object","additionalProperties":false}"#.into(),
            output_schema: r#"{"type":"string"}"#.into(),
        }]
    }

    fn call(_tool: String, _input: String) -> Result<String, ToolError> {
        Ok(r#""pong""#.into())
    }
}

export!(SlowStart);
