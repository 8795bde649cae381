//! A script of storage operations in one call, and how the call ends: the suite's way to
//! check every operation, read-your-writes inside a call, and what a failed call leaves.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolhost_guest::bindings::wasi::keyvalue::{atomics, batch, store};
use toolhost_guest::storage::Storage;
use toolhost_guest::{ToolError, toolbox};

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Op {
    Open {
        bucket: String,
    },
    Get {
        bucket: String,
        key: String,
    },
    Set {
        bucket: String,
        key: String,
        value: Value,
    },
    Delete {
        bucket: String,
        key: String,
    },
    Exists {
        bucket: String,
        key: String,
    },
    Keys {
        bucket: String,
    },
    Increment {
        bucket: String,
        key: String,
        delta: i64,
    },
    /// Appends to a JSON string through compare-and-swap.
    Append {
        bucket: String,
        key: String,
        text: String,
    },
    /// `count` values of `size` bytes at `prefix0`, `prefix1`, …; in one `set-many` when
    /// `batch`.
    Fill {
        bucket: String,
        prefix: String,
        count: u32,
        size: u32,
        #[serde(default)]
        batch: bool,
    },
    /// `wasi:keyvalue/batch.get-many`: `[key, value or null]` pairs.
    GetMany {
        bucket: String,
        keys: Vec<String>,
    },
    /// `wasi:keyvalue/batch.set-many`, in the order given.
    SetMany {
        bucket: String,
        values: Vec<(String, Value)>,
    },
    /// `wasi:keyvalue/batch.delete-many`.
    DeleteMany {
        bucket: String,
        keys: Vec<String>,
    },
    Sleep {
        ms: u64,
    },
    /// `host.caller`: `{agent, session}`, or null without the grant.
    Caller {},
    /// `atomics::cas::new`, a plain `set` of the key by this same call, then `swap`:
    /// `"cas-failed"` is what it answers when the call changed the key itself.
    SwapAfterOwnWrite {
        bucket: String,
        key: String,
    },
    /// `atomics::cas::new`, a sleep, then `swap` with `value`: the value it read, or
    /// `"cas-failed"`.
    SlowSwap {
        bucket: String,
        key: String,
        value: Value,
        ms: u64,
    },
    /// Allocates and touches `bytes` of memory (past the memory limit: the sandbox stops
    /// the call).
    Allocate {
        bytes: u64,
    },
}

#[derive(Deserialize, JsonSchema, Default, PartialEq)]
#[serde(rename_all = "snake_case")]
enum End {
    #[default]
    Return,
    Trap,
    Spin,
    Fail,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Script {
    ops: Vec<Op>,
    #[serde(default)]
    then: End,
}

#[derive(Serialize, JsonSchema)]
struct Results {
    /// One per operation: `{"ok": …}` or `{"error": "…"}`.
    results: Vec<Value>,
}

fn wit_error(error: &store::Error) -> String {
    match error {
        store::Error::Other(message) => format!("storage: {message}"),
        other => format!("{other:?}"),
    }
}

fn step(op: Op) -> Result<Value, String> {
    let open = |bucket: &str| Storage::open(bucket).map_err(|e| e.to_string());
    Ok(match op {
        Op::Open { bucket } => {
            open(&bucket)?;
            Value::Null
        }
        Op::Get { bucket, key } => open(&bucket)?.get::<Value>(&key).map_err(|e| e.to_string())?.unwrap_or(Value::Null),
        Op::Set { bucket, key, value } => {
            open(&bucket)?.set(&key, &value).map_err(|e| e.to_string())?;
            Value::Null
        }
        Op::Delete { bucket, key } => {
            open(&bucket)?.delete(&key).map_err(|e| e.to_string())?;
            Value::Null
        }
        Op::Exists { bucket, key } => json!(open(&bucket)?.exists(&key).map_err(|e| e.to_string())?),
        Op::Keys { bucket } => json!(open(&bucket)?.keys().map_err(|e| e.to_string())?),
        Op::Increment { bucket, key, delta } => {
            json!(open(&bucket)?.increment(&key, delta).map_err(|e| e.to_string())?)
        }
        Op::Append { bucket, key, text } => {
            let appended = open(&bucket)?
                .update::<String>(&key, |current| Some(current.unwrap_or_default() + &text))
                .map_err(|e| e.to_string())?;
            json!(appended)
        }
        Op::Fill { bucket, prefix, count, size, batch: false } => {
            let storage = open(&bucket)?;
            let value = vec![b'x'; size as usize];
            for i in 0..count {
                storage.set_bytes(&format!("{prefix}{i}"), &value).map_err(|e| e.to_string())?;
            }
            Value::Null
        }
        Op::Fill { bucket, prefix, count, size, batch: true } => {
            let storage = open(&bucket)?;
            let values = (0..count).map(|i| (format!("{prefix}{i}"), vec![b'x'; size as usize])).collect::<Vec<_>>();
            batch::set_many(storage.raw(), &values).map_err(|e| wit_error(&e))?;
            Value::Null
        }
        Op::GetMany { bucket, keys } => {
            let storage = open(&bucket)?;
            let pairs = batch::get_many(storage.raw(), &keys).map_err(|e| wit_error(&e))?;
            let pairs: Vec<Value> = pairs
                .into_iter()
                .map(|(key, value)| {
                    let value =
                        value.map_or(Value::Null, |bytes| serde_json::from_slice(&bytes).unwrap_or(Value::Null));
                    json!([key, value])
                })
                .collect();
            json!(pairs)
        }
        Op::SetMany { bucket, values } => {
            let storage = open(&bucket)?;
            let values: Vec<(String, Vec<u8>)> =
                values.into_iter().map(|(key, value)| (key, value.to_string().into_bytes())).collect();
            batch::set_many(storage.raw(), &values).map_err(|e| wit_error(&e))?;
            Value::Null
        }
        Op::DeleteMany { bucket, keys } => {
            batch::delete_many(open(&bucket)?.raw(), &keys).map_err(|e| wit_error(&e))?;
            Value::Null
        }
        Op::Sleep { ms } => {
            std::thread::sleep(std::time::Duration::from_millis(ms));
            Value::Null
        }
        Op::Caller {} => match toolhost_guest::caller() {
            Some(caller) => json!({ "agent": caller.agent, "session": caller.session }),
            None => Value::Null,
        },
        Op::SwapAfterOwnWrite { bucket, key } => {
            let storage = open(&bucket)?;
            let cas = atomics::Cas::new(storage.raw(), &key).map_err(|e| wit_error(&e))?;
            storage.set(&key, &"written by the call itself").map_err(|e| e.to_string())?;
            swap(cas, &json!("swapped"))?
        }
        Op::SlowSwap { bucket, key, value, ms } => {
            let storage = open(&bucket)?;
            let cas = atomics::Cas::new(storage.raw(), &key).map_err(|e| wit_error(&e))?;
            let read = cas.current().map_err(|e| wit_error(&e))?;
            std::thread::sleep(std::time::Duration::from_millis(ms));
            match swap(cas, &value)? {
                Value::Null => read.map_or(Value::Null, |bytes| serde_json::from_slice(&bytes).unwrap_or(Value::Null)),
                failed => failed,
            }
        }
        Op::Allocate { bytes } => {
            let memory = vec![1u8; usize::try_from(bytes).map_err(|e| e.to_string())?];
            json!(std::hint::black_box(memory).len())
        }
    })
}

/// `atomics::swap`: `null` when it swapped, `"cas-failed"` when the key changed.
fn swap(cas: atomics::Cas, value: &Value) -> Result<Value, String> {
    match atomics::swap(cas, value.to_string().as_bytes()) {
        Ok(()) => Ok(Value::Null),
        Err(atomics::CasError::CasFailed(_)) => Ok(json!("cas-failed")),
        Err(atomics::CasError::StoreError(e)) => Err(wit_error(&e)),
    }
}

toolbox! {
    /// Runs storage operations in order, then ends as `then` says.
    fn run(script: Script) -> Result<Results, ToolError> {
        let results = script
            .ops
            .into_iter()
            .map(|op| match step(op) {
                Ok(value) => json!({ "ok": value }),
                Err(error) => json!({ "error": error }),
            })
            .collect();
        match script.then {
            End::Return => Ok(Results { results }),
            End::Fail => Err(ToolError::Failed("the script asked to fail".into())),
            End::Trap => panic!("the script asked to trap"),
            End::Spin => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
        }
    }
}
