//! What the workers call, with what input, and what each answer must be.
//!
//! Tools of the `math`, `hostile` and `slow` namespaces exist throughout: each of their
//! calls has exactly one right answer (a value, or the one error kind its misbehaviour
//! earns), and anything else is a failure. The `churn` namespace's tool comes and goes
//! with the writer: it may be not found, and when it answers it must name a version the
//! writer wrote.

use serde_json::{Value, json};

use crate::churn::Versions;

/// One kind of call in the mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `math/add` of a few numbers: the answer is their sum.
    Add,
    /// `math/add` of a string where numbers belong: refused by its schema.
    BadInput,
    /// A name no component offers.
    UnknownTool,
    /// `hostile/fail`: the tool reports a failure.
    Fail,
    /// `hostile/spin` under a small fuel budget.
    SpinOutOfFuel,
    /// `slow/spin` with fuel to burn, stopped by the clock.
    SpinTimeout,
    /// `hostile/memory_bomb` under a 16 MiB memory limit.
    MemoryBomb,
    /// `hostile/huge_output` past a 4 KiB output limit.
    HugeOutput,
    /// `hostile/log_flood` past an 8 KiB log budget: truncated, and the call succeeds.
    LogFlood,
    /// `churn/config` of the `version` the writer's manifest grants.
    ChurnedVersion,
    /// `web/echo`: an HTTP tool calling a loopback service.
    HttpEcho,
    /// `up/add` of the upstream MCP server: the sum, or, while the server is down
    /// after a crash, an error naming it.
    UpstreamAdd,
    /// `up/crash`: the upstream server's process ends; the host starts it again.
    UpstreamCrash,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Add => "add",
            Kind::BadInput => "bad_input",
            Kind::UnknownTool => "unknown_tool",
            Kind::Fail => "fail",
            Kind::SpinOutOfFuel => "spin_out_of_fuel",
            Kind::SpinTimeout => "spin_timeout",
            Kind::MemoryBomb => "memory_bomb",
            Kind::HugeOutput => "huge_output",
            Kind::LogFlood => "log_flood",
            Kind::ChurnedVersion => "churned_version",
            Kind::HttpEcho => "http_echo",
            Kind::UpstreamAdd => "upstream_add",
            Kind::UpstreamCrash => "upstream_crash",
        }
    }

    /// The tool's full name (`namespace/tool`).
    pub fn tool(self) -> &'static str {
        match self {
            Kind::Add | Kind::BadInput => "math/add",
            Kind::UnknownTool => "math/no_such_tool",
            Kind::Fail => "hostile/fail",
            Kind::SpinOutOfFuel => "hostile/spin",
            Kind::SpinTimeout => "slow/spin",
            Kind::MemoryBomb => "hostile/memory_bomb",
            Kind::HugeOutput => "hostile/huge_output",
            Kind::LogFlood => "hostile/log_flood",
            Kind::ChurnedVersion => "churn/config",
            Kind::HttpEcho => "web/echo",
            Kind::UpstreamAdd => "up/add",
            Kind::UpstreamCrash => "up/crash",
        }
    }

    /// Whether the tool comes and goes during the run (the churned component, the
    /// upstream server that crashes).
    pub fn is_churned(self) -> bool {
        matches!(self, Kind::ChurnedVersion | Kind::UpstreamAdd | Kind::UpstreamCrash)
    }

    /// The input of the `serial`-th call of this kind (numbers vary so that a stale or
    /// mixed-up answer cannot pass for the right one).
    pub fn input(self, serial: u64) -> Value {
        match self {
            Kind::Add => json!({ "numbers": [serial % 1000, serial % 7, 3] }),
            Kind::BadInput => json!({ "numbers": "three" }),
            Kind::UnknownTool | Kind::SpinOutOfFuel | Kind::SpinTimeout | Kind::MemoryBomb => json!({}),
            Kind::Fail => json!({ "message": format!("refusal {serial}") }),
            Kind::HugeOutput => json!({ "bytes": 100_000 }),
            Kind::LogFlood => json!({ "bytes": 200_000 }),
            Kind::ChurnedVersion => json!({ "name": "version" }),
            Kind::HttpEcho => json!({ "n": serial }),
            Kind::UpstreamAdd => json!({ "a": serial % 1000, "b": 7 }),
            Kind::UpstreamCrash => json!({}),
        }
    }
}

/// One round of a worker: each misbehaving or churned call followed by good calls, so
/// that most calls are good ones and every kind comes around in every round.
pub fn round() -> Vec<Kind> {
    const GOOD_CALLS_BETWEEN: usize = 12;
    let others = [
        Kind::ChurnedVersion,
        Kind::BadInput,
        Kind::Fail,
        Kind::ChurnedVersion,
        Kind::SpinOutOfFuel,
        Kind::MemoryBomb,
        Kind::ChurnedVersion,
        Kind::HugeOutput,
        Kind::LogFlood,
        Kind::ChurnedVersion,
        Kind::UnknownTool,
        Kind::SpinTimeout,
        Kind::HttpEcho,
        Kind::UpstreamAdd,
        Kind::HttpEcho,
        Kind::UpstreamAdd,
        Kind::UpstreamCrash,
        Kind::UpstreamAdd,
    ];
    others.iter().flat_map(|&other| std::iter::once(other).chain([Kind::Add; GOOD_CALLS_BETWEEN])).collect()
}

/// What one call came to, the same way for both front ends.
#[derive(Debug)]
pub struct Answer {
    /// `ok`, an error kind (`out_of_fuel`, `not_found`, …), or what went wrong on the
    /// way (`transport`, `http_<status>`, `rpc_error`, `unanswered`).
    pub outcome: String,
    /// The tool's output, when `ok`.
    pub output: Option<Value>,
    /// The error's text, for the report.
    pub message: String,
}

impl Answer {
    pub fn ok(output: Value) -> Answer {
        Answer { outcome: "ok".into(), output: Some(output), message: String::new() }
    }

    pub fn error(outcome: impl Into<String>, message: impl Into<String>) -> Answer {
        Answer { outcome: outcome.into(), output: None, message: message.into() }
    }
}

/// Why an answer is wrong, or `None` when it is right. A right answer of the churned
/// tool also yields the version it named.
pub fn judge(kind: Kind, input: &Value, answer: &Answer, versions: &Versions) -> Result<Option<u64>, String> {
    let expected_error = match kind {
        Kind::Add => {
            let sum: f64 = input["numbers"].as_array().into_iter().flatten().filter_map(Value::as_f64).sum();
            let value = answer.output.as_ref().and_then(|output| output["value"].as_f64());
            return if answer.outcome == "ok" && value == Some(sum) {
                Ok(None)
            } else {
                Err(format!("expected {{\"value\": {sum}}}, got {}", describe(answer)))
            };
        }
        Kind::LogFlood => {
            return if answer.outcome == "ok" && answer.output == Some(json!({})) {
                Ok(None)
            } else {
                Err(format!("expected {{}} with the log truncated, got {}", describe(answer)))
            };
        }
        Kind::ChurnedVersion => return judge_churned(answer, versions),
        Kind::HttpEcho => {
            return if answer.outcome == "ok" && answer.output.as_ref() == Some(input) {
                Ok(None)
            } else {
                Err(format!("expected {input}, got {}", describe(answer)))
            };
        }
        Kind::UpstreamAdd => return judge_upstream_add(input, answer),
        Kind::UpstreamCrash => {
            // The process ends mid-call (`failed`), or was already down (`host`).
            return match answer.outcome.as_str() {
                "failed" | "host" => Ok(None),
                _ => Err(format!("expected the call to end with the process, got {}", describe(answer))),
            };
        }
        Kind::BadInput => "input_invalid",
        Kind::UnknownTool => "not_found",
        Kind::Fail => "failed",
        Kind::SpinOutOfFuel => "out_of_fuel",
        Kind::SpinTimeout => "timeout",
        Kind::MemoryBomb => "memory_limit",
        Kind::HugeOutput => "output_too_large",
    };
    if answer.outcome == expected_error {
        Ok(None)
    } else {
        Err(format!("expected {expected_error}, got {}", describe(answer)))
    }
}

/// The churned tool may be absent (between a removal and the re-add that follows), but
/// when it answers, the version it names must be one the writer wrote. A load error
/// never reaches a caller: the last good version keeps serving, or the tool is absent.
fn judge_churned(answer: &Answer, versions: &Versions) -> Result<Option<u64>, String> {
    match answer.outcome.as_str() {
        "not_found" => Ok(None),
        "ok" => {
            let named = answer.output.as_ref().and_then(|output| output["value"].as_str());
            match named.and_then(|version| version.parse::<u64>().ok()) {
                Some(version) if versions.was_written(version) => Ok(Some(version)),
                Some(version) => Err(format!(
                    "answered version {version}, which was never written (last written {})",
                    versions.last()
                )),
                None => Err(format!("answered without a version the writer grants: {}", describe(answer))),
            }
        }
        _ => Err(format!("expected a written version or not_found, got {}", describe(answer))),
    }
}

/// The sum; or, while the server is down (between a crash and its restart), `host`
/// naming the server, or `failed` for a call the crash cut off.
fn judge_upstream_add(input: &Value, answer: &Answer) -> Result<Option<u64>, String> {
    let sum = input["a"].as_u64().unwrap_or(0) + input["b"].as_u64().unwrap_or(0);
    match answer.outcome.as_str() {
        "ok" if answer.output == Some(json!({ "result": sum })) => Ok(None),
        "host" if answer.message.contains("upstream MCP server `up`") => Ok(None),
        "failed" if answer.message.contains("`up`") => Ok(None),
        _ => Err(format!("expected {{\"result\": {sum}}} or an error naming the server, got {}", describe(answer))),
    }
}

fn describe(answer: &Answer) -> String {
    match &answer.output {
        Some(output) => format!("{} {output}", answer.outcome),
        None => format!("{}: {}", answer.outcome, answer.message),
    }
}
