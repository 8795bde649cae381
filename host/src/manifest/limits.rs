//! A tool's time and size limits, decided here for every source: the `[limits]` table and the keys that set one limit.
//!
//! A manifest's `[limits]`, `toolhost.toml`'s `[defaults]`, an `.http.toml` file's
//! `timeout` and `max_response`, an `[[upstream]]` server's, and a native tool's own
//! time limit are all checked here, with the same words.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::tool::{Ceilings, Limits};

use crate::units::{Problem, Size, format_size, parse_duration};

/// The keys of a `[limits]` table as written, with their spans for errors.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLimits {
    fuel: Option<Spanned<u64>>,
    memory: Option<Spanned<Size>>,
    timeout: Option<Spanned<String>>,
    max_output: Option<Spanned<Size>>,
    max_log: Option<Spanned<Size>>,
}

impl RawLimits {
    /// These limits over `defaults`: absent keys keep the default, none may be zero or
    /// exceed the host's `ceilings`.
    pub fn resolve(self, defaults: Limits, ceilings: Ceilings) -> Result<Limits, Problem> {
        let mut limits = defaults;
        if let Some(fuel) = self.fuel {
            if *fuel.get_ref() == 0 {
                return Err(Problem::at(fuel.span(), "`fuel` must be greater than 0"));
            }
            limits.fuel = fuel.into_inner();
        }
        if let Some(memory) = self.memory {
            let span = memory.span();
            limits.memory = size_key(memory, "memory")?;
            check_memory(limits.memory, ceilings).map_err(|message| Problem::at(span, message))?;
        }
        if let Some(max_output) = self.max_output {
            limits.max_output = size_key(max_output, "max_output")?;
        }
        if let Some(max_log) = self.max_log {
            limits.max_log = size_key(max_log, "max_log")?;
        }
        if let Some(value) = self.timeout {
            limits.timeout = timeout_key(value, ceilings)?;
        }
        Ok(limits)
    }
}

/// A `timeout` key: a duration within the host's ceiling.
pub(crate) fn timeout_key(value: Spanned<String>, ceilings: Ceilings) -> Result<Duration, Problem> {
    duration_key(value, "timeout", ceilings)
}

/// A time limit under the key `key`, within the host's ceiling.
pub(crate) fn duration_key(value: Spanned<String>, key: &str, ceilings: Ceilings) -> Result<Duration, Problem> {
    let span = value.span();
    let timeout = parse_duration(value.get_ref()).map_err(|e| Problem::at(span.clone(), format!("`{key}`: {e}")))?;
    if timeout.is_zero() {
        return Err(Problem::at(span, format!("`{key}` must be greater than 0")));
    }
    check_time_limit(key, timeout, ceilings).map_err(|message| Problem::at(span, message))?;
    Ok(timeout)
}

/// A size key that may not be zero (`max_output`, `max_response`, …).
pub(crate) fn size_key(value: Spanned<Size>, key: &str) -> Result<u64, Problem> {
    let span = value.span();
    let bytes = value.into_inner().bytes().map_err(|e| Problem::at(span.clone(), format!("`{key}`: {e}")))?;
    if bytes == 0 {
        return Err(Problem::at(span, format!("`{key}` must be greater than 0")));
    }
    Ok(bytes)
}

/// Whether a tool's time limit, however it was set, is within the host's ceiling.
pub fn check_timeout(timeout: Duration, ceilings: Ceilings) -> Result<(), String> {
    check_time_limit("timeout", timeout, ceilings)
}

/// Whether the time limit under the key `key` is within the host's ceiling.
fn check_time_limit(key: &str, time: Duration, ceilings: Ceilings) -> Result<(), String> {
    if time > ceilings.timeout {
        return Err(format!("`{key}` is {time:?}, over the host's ceiling of {:?}", ceilings.timeout));
    }
    Ok(())
}

fn check_memory(memory: u64, ceilings: Ceilings) -> Result<(), String> {
    if memory > ceilings.memory {
        let (memory, ceiling) = (format_size(memory), format_size(ceilings.memory));
        return Err(format!("`memory` is {memory}, over the host's ceiling of {ceiling}"));
    }
    Ok(())
}
