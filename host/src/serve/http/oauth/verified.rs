//! Access tokens already verified: a token's signature is checked once per read of the issuer's keys, not on every request.
//!
//! Verifying an ES256 signature costs about as much as the rest of a request (measured
//! in the closing note of the change that added this). A token verified once is kept by
//! its SHA-256 digest, with the agent it acts as, until it expires (within the clock
//! skew, as a check would accept it) or the keys are read again, whichever comes first:
//! a retired key stops a remembered token at the same read that stops a new one. Bounded:
//! past [`KEPT`] tokens, the memory starts over.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// A token's SHA-256, as the door computes it once per request (`auth::digest`).
type TokenDigest = [u8; 32];

/// The most tokens remembered.
const KEPT: usize = 4096;

/// One verified token.
struct Entry {
    agent: String,
    /// Unix time in seconds after which it is verified again.
    until: u64,
    /// The read of the keys it was verified with.
    generation: u64,
}

/// Tokens verified, by digest.
#[derive(Default)]
pub(super) struct Verified {
    entries: Mutex<HashMap<TokenDigest, Entry>>,
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |now| now.as_secs())
}

impl Verified {
    /// The agent of the token with `digest`, when it was verified with the keys of
    /// `generation` and has not expired since.
    pub(super) fn agent(&self, digest: &TokenDigest, generation: u64) -> Option<String> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let entry = entries.get(digest)?;
        (entry.generation == generation && now() <= entry.until).then(|| entry.agent.clone())
    }

    /// Remembers that the token with `digest` acts as `agent` until `until` (Unix
    /// seconds), verified with the keys of `generation`.
    pub(super) fn remember(&self, digest: TokenDigest, agent: &str, until: u64, generation: u64) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= KEPT {
            entries.clear();
        }
        entries.insert(digest, Entry { agent: agent.to_owned(), until, generation });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in digest for token `n`.
    fn digest(n: &str) -> TokenDigest {
        let mut digest = [0; 32];
        digest[..n.len().min(32)].copy_from_slice(&n.as_bytes()[..n.len().min(32)]);
        digest
    }

    #[test]
    fn a_token_is_remembered_until_it_expires_or_the_keys_are_read_again() {
        let verified = Verified::default();
        let token = digest("header.claims.signature");
        assert_eq!(verified.agent(&token, 1), None);
        verified.remember(token, "alice", now() + 60, 1);
        assert_eq!(verified.agent(&token, 1).as_deref(), Some("alice"));
        assert_eq!(verified.agent(&token, 2), None, "keys read again: verified again");
        assert_eq!(verified.agent(&digest("header.claims.other"), 1), None);
        verified.remember(token, "alice", now() - 1, 1);
        assert_eq!(verified.agent(&token, 1), None, "expired");
        for n in 0..KEPT + 1 {
            verified.remember(digest(&n.to_string()), "x", now() + 60, 1);
        }
        assert!(verified.entries.lock().unwrap().len() <= KEPT);
    }
}
