//! The credentials the HTTP server takes: its own bearer tokens, each standing for an agent, OAuth, and sessions' owners.
//!
//! The credentials the HTTP server takes: bearer tokens of its own, each standing for
//! an agent, and, when configured, access tokens of an OAuth authorization server
//! ([`OAuth`]); and the MCP sessions bound to the agent that opened them.
//!
//! Tokens are kept only as SHA-256 digests (a configuration may hold the digest itself,
//! so no secret need sit in `toolhost.toml`); a presented token is hashed and compared
//! with every digest in constant time. Token text is never logged or shown in errors.
//!
//! A session belongs to the agent whose token opened it: a request that names another
//! agent's session gets the answer of a session that does not exist.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::serve::http::oauth::OAuth;
use subtle::ConstantTimeEq;

/// The SHA-256 digest of a token.
pub type TokenDigest = [u8; 32];

/// Bearer tokens and the agents they stand for, and the OAuth access tokens taken.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Tokens {
    entries: Vec<(TokenDigest, String)>,
    oauth: Option<OAuth>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let agents: Vec<&str> = self.entries.iter().map(|(_, agent)| agent.as_str()).collect();
        f.debug_struct("Tokens").field("agents", &agents).field("oauth", &self.oauth).finish_non_exhaustive()
    }
}

impl Tokens {
    /// No tokens: the server asks for none.
    pub fn none() -> Tokens {
        Tokens::default()
    }

    /// Adds a token, given in full, for `agent`.
    pub fn with_token(self, agent: impl Into<String>, token: &str) -> Tokens {
        self.with_digest(agent, digest(token))
    }

    /// Adds a token, given by its SHA-256 digest, for `agent`.
    pub fn with_digest(mut self, agent: impl Into<String>, digest: TokenDigest) -> Tokens {
        self.entries.push((digest, agent.into()));
        self
    }

    /// Takes access tokens as `oauth` says, beside the tokens of the server's own.
    pub fn with_oauth(mut self, oauth: OAuth) -> Tokens {
        self.oauth = Some(oauth);
        self
    }

    /// How access tokens are checked, when they are taken.
    pub fn oauth(&self) -> Option<&OAuth> {
        self.oauth.as_ref()
    }

    /// Whether no credential is configured: no token and no OAuth.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.oauth.is_none()
    }

    /// Whether a token of the server's own stands for `agent`.
    pub(crate) fn stands_for(&self, agent: &str) -> bool {
        self.entries.iter().any(|(_, owner)| owner == agent)
    }

    /// Owners of `self` and of `other` given one same token, if any: a token must never
    /// stand for both an agent and an operator.
    pub(crate) fn shared_with<'a>(&'a self, other: &'a Tokens) -> Option<(&'a str, &'a str)> {
        self.entries.iter().find_map(|(digest, owner)| {
            other
                .entries
                .iter()
                .find(|(theirs, _)| theirs == digest)
                .map(|(_, their_owner)| (owner.as_str(), their_owner.as_str()))
        })
    }

    /// The digests of the tokens standing for `owner`.
    pub(crate) fn digests_of<'a>(&'a self, owner: &'a str) -> impl Iterator<Item = &'a TokenDigest> + 'a {
        self.entries.iter().filter(move |(_, entry)| entry == owner).map(|(digest, _)| digest)
    }

    /// Every owner of a token, once each, in the order given.
    pub(crate) fn owners(&self) -> Vec<&str> {
        let mut owners: Vec<&str> = Vec::new();
        for (_, owner) in &self.entries {
            if !owners.contains(&owner.as_str()) {
                owners.push(owner);
            }
        }
        owners
    }

    /// The agent `presented` stands for. Every digest is compared, each in constant
    /// time, so the answer's timing says nothing about how close a guess came.
    pub fn agent_for(&self, presented: &str) -> Option<&str> {
        self.agent_for_digest(&digest(presented))
    }

    /// The agent a token with the digest `presented` stands for (see [`Tokens::agent_for`]).
    pub(crate) fn agent_for_digest(&self, presented: &TokenDigest) -> Option<&str> {
        let mut agent = None;
        for (digest, owner) in &self.entries {
            if bool::from(digest.ct_eq(presented)) {
                agent = Some(owner.as_str());
            }
        }
        agent
    }
}

/// The tokens a running server accepts, replaceable while it serves (an edit of
/// `toolhost.toml`): each request is checked against the tokens of its moment, so a
/// token taken out is refused from its next request on. Cheap to clone: clones share.
#[derive(Clone, Default)]
pub struct LiveTokens(std::sync::Arc<arc_swap::ArcSwap<Tokens>>);

impl LiveTokens {
    /// Serving `tokens` until replaced.
    pub fn new(tokens: Tokens) -> LiveTokens {
        LiveTokens(std::sync::Arc::new(arc_swap::ArcSwap::from_pointee(tokens)))
    }

    /// The tokens accepted now.
    pub fn current(&self) -> std::sync::Arc<Tokens> {
        self.0.load_full()
    }

    /// Accepts `tokens` from the next request on; the issuer keys read so far are kept
    /// when the OAuth settings did not change.
    pub fn replace(&self, mut tokens: Tokens) {
        if let (Some(next), Some(current)) = (tokens.oauth.take(), self.current().oauth.as_ref()) {
            tokens.oauth = Some(next.keeping_keys_of(current));
        }
        self.0.store(std::sync::Arc::new(tokens));
    }
}

impl std::fmt::Debug for LiveTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.current().fmt(f)
    }
}

impl From<Tokens> for LiveTokens {
    fn from(tokens: Tokens) -> LiveTokens {
        LiveTokens::new(tokens)
    }
}

/// SHA-256 of a token's text.
pub fn digest(token: &str) -> TokenDigest {
    Sha256::digest(token.as_bytes()).into()
}

/// Parses a digest written as 64 hex digits.
pub fn parse_digest(hex: &str) -> Result<TokenDigest, String> {
    crate::trust::decode_hex32(hex).ok_or_else(|| {
        format!("`sha256` must be 64 hex digits (the SHA-256 of the token), not {} characters", hex.len())
    })
}

/// A new random token (256 bits, URL-safe base64) and its digest in hex, for
/// `toolhost token new`.
pub fn new_token() -> Result<(String, String), getrandom::Error> {
    use base64::Engine;
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret)?;
    let token = format!("th_{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret));
    let hex: String = digest(&token).iter().map(|b| format!("{b:02x}")).collect();
    Ok((token, hex))
}

/// Which agent opened which MCP session.
#[derive(Default)]
pub(crate) struct SessionOwners {
    owners: Mutex<HashMap<String, String>>,
}

/// How many bindings are kept before those of ended sessions are swept.
const SWEEP_ABOVE: usize = 4096;

impl SessionOwners {
    /// Whether `agent` may use `session`: its own, or one nobody opened here (the
    /// session layer answers that one as unknown).
    pub(crate) fn may_use(&self, session: &str, agent: &str) -> bool {
        self.lock().get(session).is_none_or(|owner| owner == agent)
    }

    /// Records that `agent` opened `session`.
    pub(crate) fn bind(&self, session: &str, agent: &str) {
        self.lock().insert(session.to_owned(), agent.to_owned());
    }

    /// Whether so many sessions are recorded that those which ended should be swept.
    pub(crate) fn needs_sweep(&self) -> bool {
        self.lock().len() >= SWEEP_ABOVE
    }

    /// Forgets every session but those `live` (ended by idle expiry or by the client
    /// going away without a DELETE).
    pub(crate) fn keep_only(&self, live: &std::collections::HashSet<String>) {
        self.lock().retain(|session, _| live.contains(session));
    }

    /// Forgets `session` (it was closed).
    pub(crate) fn forget(&self, session: &str) {
        self.lock().remove(session);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.owners.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_stands_for_its_agent_only() {
        let tokens = Tokens::none().with_token("planner", "secret-1").with_digest("coder", digest("secret-2"));
        assert_eq!(tokens.agent_for("secret-1"), Some("planner"));
        assert_eq!(tokens.agent_for("secret-2"), Some("coder"));
        assert_eq!(tokens.agent_for("secret-"), None);
        assert_eq!(tokens.agent_for(""), None);
        assert!(!format!("{tokens:?}").contains("secret"), "Debug shows agents, never tokens or digests");
    }

    #[test]
    fn digests_parse_from_hex() {
        let hex: String = digest("t").iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(parse_digest(&hex), Ok(digest("t")));
        assert!(parse_digest("abc").unwrap_err().contains("64 hex digits"));
        assert!(parse_digest(&"zz".repeat(32)).is_err());
    }

    #[test]
    fn new_tokens_are_random_and_match_their_digest() {
        let (a, a_hex) = new_token().unwrap();
        let (b, _) = new_token().unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with("th_") && a.len() > 40);
        assert_eq!(Tokens::none().with_digest("x", parse_digest(&a_hex).unwrap()).agent_for(&a), Some("x"));
    }

    #[test]
    fn sessions_belong_to_the_agent_that_opened_them() {
        let owners = SessionOwners::default();
        owners.bind("s-1", "planner");
        assert!(owners.may_use("s-1", "planner"));
        assert!(!owners.may_use("s-1", "coder"));
        assert!(owners.may_use("unknown", "coder"), "an unknown session is the session layer's to refuse");
        owners.bind("s-2", "coder");
        owners.keep_only(&["s-2".to_owned()].into());
        assert!(owners.may_use("s-1", "coder"), "an ended session is forgotten");
        owners.forget("s-2");
        assert!(owners.may_use("s-2", "planner"));
    }
}
