//! What one call of a tool may consume, and the ceilings no setting may exceed.

use std::time::Duration;

/// The longest call a manifest may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);

/// Upper bounds a manifest (or the host's default limits) may not exceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ceilings {
    /// Bytes of linear memory: the engine's `max_memory`, the size of a pool slot.
    pub memory: u64,
    /// Wall-clock time of one call.
    pub timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
/// Per-call limits of a component.
pub struct Limits {
    /// Units of wasm fuel (roughly one per instruction).
    pub fuel: u64,
    /// Bytes of linear memory, summed over the component's memories.
    pub memory: u64,
    /// Wall-clock time for the whole call, instantiation included.
    #[serde(with = "duration_ms")]
    pub timeout: Duration,
    /// Bytes of JSON the tool may return.
    pub max_output: u64,
    /// Bytes of log lines, stdout and stderr kept per call; the rest is dropped with a
    /// note.
    pub max_log: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 1_000_000_000,
            memory: 64 << 20,
            timeout: Duration::from_secs(5),
            max_output: 1 << 20,
            max_log: 64 << 10,
        }
    }
}

mod duration_ms {
    pub fn serialize<S: serde::Serializer>(d: &std::time::Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}
