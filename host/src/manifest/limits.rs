//! The `[limits]` table: a manifest's per-call limits and `toolhost.toml`'s `[defaults]`
//! share its keys and checks.

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
            limits.memory = positive_size(memory, "memory")?;
            if limits.memory > ceilings.memory {
                let message = format!(
                    "`memory` is {}, over the host's ceiling of {}",
                    format_size(limits.memory),
                    format_size(ceilings.memory)
                );
                return Err(Problem::at(span, message));
            }
        }
        if let Some(max_output) = self.max_output {
            limits.max_output = positive_size(max_output, "max_output")?;
        }
        if let Some(max_log) = self.max_log {
            limits.max_log = positive_size(max_log, "max_log")?;
        }
        if let Some(timeout) = self.timeout {
            let span = timeout.span();
            limits.timeout =
                parse_duration(timeout.get_ref()).map_err(|e| Problem::at(span.clone(), format!("`timeout`: {e}")))?;
            if limits.timeout > ceilings.timeout {
                let message =
                    format!("`timeout` is {:?}, over the host's ceiling of {:?}", limits.timeout, ceilings.timeout);
                return Err(Problem::at(span, message));
            }
        }
        Ok(limits)
    }
}

fn positive_size(value: Spanned<Size>, key: &str) -> Result<u64, Problem> {
    let span = value.span();
    let bytes = value.into_inner().bytes().map_err(|e| Problem::at(span.clone(), format!("`{key}`: {e}")))?;
    if bytes == 0 {
        return Err(Problem::at(span, format!("`{key}` must be greater than 0")));
    }
    Ok(bytes)
}
