//! The kinds of call errors, without their details, and the `toolhost` command's exit code of each.

use std::fmt;

/// The kinds of [`CallError`], without their details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)] // Each is the CallError variant of the same name.
pub enum ErrorKind {
    NotFound,
    PermissionDenied,
    InputInvalid,
    OutputInvalid,
    Failed,
    Trap,
    OutOfFuel,
    Timeout,
    MemoryLimit,
    OutputTooLarge,
    Host,
    Cancelled,
    QuotaExceeded,
}

impl ErrorKind {
    /// Every kind, in the order of their exit codes.
    pub const ALL: [ErrorKind; 13] = [
        ErrorKind::NotFound,
        ErrorKind::PermissionDenied,
        ErrorKind::InputInvalid,
        ErrorKind::OutputInvalid,
        ErrorKind::Failed,
        ErrorKind::Trap,
        ErrorKind::OutOfFuel,
        ErrorKind::Timeout,
        ErrorKind::MemoryLimit,
        ErrorKind::OutputTooLarge,
        ErrorKind::Host,
        ErrorKind::Cancelled,
        ErrorKind::QuotaExceeded,
    ];

    /// The stable name of the kind, as in audit records, `error[KIND]` lines and MCP
    /// error texts.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::InputInvalid => "input_invalid",
            ErrorKind::OutputInvalid => "output_invalid",
            ErrorKind::Failed => "failed",
            ErrorKind::Trap => "trap",
            ErrorKind::OutOfFuel => "out_of_fuel",
            ErrorKind::Timeout => "timeout",
            ErrorKind::MemoryLimit => "memory_limit",
            ErrorKind::OutputTooLarge => "output_too_large",
            ErrorKind::Host => "host",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::QuotaExceeded => "quota_exceeded",
        }
    }
}

/// The process exit codes of the `toolhost` command, one table for the code and the
/// help text: `0` success, [`exit::HOST`], [`exit::USAGE`], one code per [`ErrorKind`]
/// from 3, and [`exit::LOAD`].
pub mod exit {
    use super::ErrorKind;

    /// The host could not do its job: configuration, I/O, a build failure.
    pub const HOST: u8 = 1;
    /// The command line was wrong (the argument parser's own code).
    pub const USAGE: u8 = 2;
    /// A component failed to load: `inspect`, or a call of a tool missing because its
    /// namespace's component did not load.
    pub const LOAD: u8 = 14;
    /// The call was cancelled (interrupted from the terminal). After [`LOAD`], which
    /// was numbered before cancellation existed.
    pub const CANCELLED: u8 = 15;
    /// The agent is over its quota; retrying later may succeed.
    pub const QUOTA_EXCEEDED: u8 = 16;

    /// The exit code of a failed call.
    pub fn of(kind: ErrorKind) -> u8 {
        match kind {
            ErrorKind::Cancelled => return CANCELLED,
            ErrorKind::QuotaExceeded => return QUOTA_EXCEEDED,
            _ => {}
        }
        let position = ErrorKind::ALL.iter().position(|k| *k == kind).unwrap_or(0);
        3 + position as u8
    }

    /// Every exit code with what it means, in order.
    pub fn table() -> Vec<(u8, &'static str)> {
        let mut table = vec![(0, "ok"), (HOST, "host error (configuration, I/O)"), (USAGE, "usage error")];
        table.extend(ErrorKind::ALL.iter().map(|kind| (of(*kind), kind.meaning())));
        table.push((LOAD, "component failed to load"));
        table.sort_by_key(|(code, _)| *code);
        table
    }
}

impl ErrorKind {
    /// What the kind means, in a few words, for help texts.
    pub fn meaning(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not found",
            ErrorKind::PermissionDenied => "permission denied",
            ErrorKind::InputInvalid => "invalid input",
            ErrorKind::OutputInvalid => "invalid output",
            ErrorKind::Failed => "tool failed",
            ErrorKind::Trap => "trap",
            ErrorKind::OutOfFuel => "out of fuel",
            ErrorKind::Timeout => "timeout",
            ErrorKind::MemoryLimit => "memory limit",
            ErrorKind::OutputTooLarge => "output too large",
            ErrorKind::Host => "the host could not run the call",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::QuotaExceeded => "over the agent's quota",
        }
    }

    /// The `toolhost` exit code of a call that failed with this kind.
    pub fn exit_code(self) -> u8 {
        exit::of(self)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_exit_code_and_cancelled_follows_load_errors() {
        let codes: Vec<u8> = ErrorKind::ALL.iter().map(|kind| kind.exit_code()).collect();
        assert_eq!(codes, (3..=13).chain([15, 16]).collect::<Vec<u8>>());
        assert_eq!(ErrorKind::InputInvalid.exit_code(), 5);
        let table = exit::table();
        assert_eq!(table.first(), Some(&(0, "ok")));
        assert_eq!(table[table.len() - 2], (exit::CANCELLED, "cancelled"));
        assert_eq!(table.last(), Some(&(exit::QUOTA_EXCEEDED, "over the agent's quota")));
        let mut sorted: Vec<u8> = table.iter().map(|(code, _)| *code).collect();
        sorted.dedup();
        assert_eq!(sorted, (0..=16).collect::<Vec<u8>>(), "one row per code, in order");
    }
}
