//! A call's memory and tables held to its limit as the guest grows them.
//!
//! The limits themselves, and the ceilings no setting exceeds, are the tool's
//! (`crate::tool::Limits`, `crate::tool::Ceilings`); a call's store enforces its memory
//! limit here, and every table at most [`TABLE_ELEMENTS_LIMIT`] elements.

use wasmtime::ResourceLimiter;

use crate::error::MemoryResource;

/// Elements one table may hold; the same bound as the pool's table slots.
pub const TABLE_ELEMENTS_LIMIT: usize = 1 << 16;

/// Memory and table growth bounded per call. Remembers a refusal, because a guest
/// whose allocation fails usually aborts with a generic trap, and the caller deserves to
/// hear "memory limit", not "unreachable".
pub(crate) struct CallLimiter {
    memory_limit: u64,
    memory_in_use: u64,
    pub refused: Option<(MemoryResource, u64)>,
}

impl CallLimiter {
    pub(super) fn new(memory_limit: u64) -> Self {
        CallLimiter { memory_limit, memory_in_use: 0, refused: None }
    }
}

impl ResourceLimiter for CallLimiter {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let growth = desired.saturating_sub(current) as u64;
        match self.memory_in_use.checked_add(growth) {
            Some(total) if total <= self.memory_limit => {
                self.memory_in_use = total;
                Ok(true)
            }
            _ => {
                self.refused = Some((MemoryResource::LinearMemory, self.memory_limit));
                Ok(false)
            }
        }
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired <= TABLE_ELEMENTS_LIMIT {
            return Ok(true);
        }
        self.refused = Some((MemoryResource::TableElements, TABLE_ELEMENTS_LIMIT as u64));
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limiter_refuses_growth_past_its_limits_and_remembers_which() {
        let mut limiter = CallLimiter::new(1 << 20);
        assert!(limiter.memory_growing(0, 1 << 20, None).unwrap());
        assert_eq!(limiter.refused, None);
        assert!(!limiter.memory_growing(1 << 20, (1 << 20) + 65536, None).unwrap());
        assert_eq!(limiter.refused, Some((MemoryResource::LinearMemory, 1 << 20)));

        let mut limiter = CallLimiter::new(1 << 20);
        assert!(limiter.table_growing(0, TABLE_ELEMENTS_LIMIT, None).unwrap());
        assert!(!limiter.table_growing(TABLE_ELEMENTS_LIMIT, TABLE_ELEMENTS_LIMIT + 1, None).unwrap());
        assert_eq!(limiter.refused, Some((MemoryResource::TableElements, TABLE_ELEMENTS_LIMIT as u64)));
    }

    #[test]
    fn growth_that_would_overflow_is_refused_not_wrapped() {
        let mut limiter = CallLimiter::new(u64::MAX);
        assert!(limiter.memory_growing(0, usize::MAX, None).unwrap());
        assert!(!limiter.memory_growing(0, usize::MAX, None).unwrap());
    }
}
