//! OAuth 2.1 at the HTTP server's door: the server as a resource server, its access tokens checked against the issuer's keys.
//!
//! As the MCP authorization specification describes: the server publishes Protected
//! Resource Metadata (RFC 9728) naming its authorization server; a request without a
//! valid token is answered `401` with a `WWW-Authenticate` challenge pointing there
//! (`resource_metadata`), so a client finds the authorization server, obtains a token
//! for this server (`resource`, RFC 8707) and comes back with it.
//!
//! An access token is a JWT (RFC 9068) and is accepted when all of this holds: it is
//! signed, with an asymmetric algorithm, by a key the issuer publishes (its JWKS, read
//! again when a token names a key not seen yet, so the issuer may rotate keys); its
//! `iss` is the configured issuer; its `aud` names this server (the configured
//! `resource`); it has not expired and is not for later (`exp`, `nbf`, within the
//! configured clock skew); and it carries every required scope (else `403` with
//! `insufficient_scope`). The agent it acts as is the first configured scope agent
//! whose scope it carries, else the value of its agent claim (`sub` by default); policy,
//! quotas and storage then treat it as any agent. No refusal repeats the token or
//! anything it claims.

mod claims;
mod keys;
mod verified;

pub(crate) use keys::check_address;

use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;
use jsonwebtoken::errors::ErrorKind;
use serde_json::{Map, Value, json};

/// The path of the Protected Resource Metadata (RFC 9728), before the resource's path.
pub(crate) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// What the operator says about access tokens (`[oauth]` in `toolhost.toml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthSettings {
    /// The authorization server's issuer identifier: the `iss` every token carries, and
    /// where its metadata (naming its keys) is found.
    pub issuer: String,
    /// This server as its clients reach it (`https://tools.example.com/mcp`): the
    /// audience every token must name, and the `resource` its metadata announces.
    pub resource: String,
    /// Where the issuer publishes its keys; `None`: as the issuer's metadata says.
    pub jwks_uri: Option<String>,
    /// Scopes every token must carry, all of them; announced in the metadata.
    pub scopes: Vec<String>,
    /// The claim whose value names the agent when no scope agent applies.
    pub agent_claim: String,
    /// Scopes that name an agent: a token acts as the agent of the first scope listed
    /// here that it carries.
    pub scope_agents: Vec<(String, String)>,
    /// How far the issuer's clock may be off: how long past `exp` (and before `nbf`) a
    /// token is still accepted.
    pub clock_skew: Duration,
}

impl OAuthSettings {
    /// Settings for tokens of `issuer` bound to `resource`, with the defaults: keys as
    /// the issuer's metadata says, no required scope, the agent named by `sub`, 60
    /// seconds of clock skew.
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>) -> OAuthSettings {
        OAuthSettings {
            issuer: issuer.into(),
            resource: resource.into(),
            jwks_uri: None,
            scopes: Vec::new(),
            agent_claim: "sub".into(),
            scope_agents: Vec::new(),
            clock_skew: Duration::from_secs(60),
        }
    }
}

/// Access tokens of one authorization server, checked against its keys. Cheap to
/// clone: clones share the keys read so far.
#[derive(Clone)]
pub struct OAuth {
    settings: Arc<OAuthSettings>,
    keys: Arc<keys::IssuerKeys>,
    /// Tokens verified under these settings.
    verified: Arc<verified::Verified>,
}

impl PartialEq for OAuth {
    fn eq(&self, other: &OAuth) -> bool {
        self.settings == other.settings
    }
}

impl Eq for OAuth {}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("issuer", &self.settings.issuer)
            .field("resource", &self.settings.resource)
            .finish()
    }
}

/// Why an access token is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not a valid token for this server (`401`, `invalid_token`), and why, in words
    /// of the server's own.
    Invalid(&'static str),
    /// Valid, but without every required scope (`403`, `insufficient_scope`).
    InsufficientScope,
    /// The issuer's keys could not be read and none are known (`503`): the token may
    /// be good, so the client is not told to get another.
    KeysUnavailable,
}

impl OAuth {
    /// Tokens as `settings` say; errors when no HTTP client can be built.
    pub fn new(settings: OAuthSettings) -> Result<OAuth, String> {
        let keys = keys::IssuerKeys::new(&settings)?;
        Ok(OAuth { settings: Arc::new(settings), keys: Arc::new(keys), verified: Arc::default() })
    }

    /// What these tokens are checked against.
    pub fn settings(&self) -> &OAuthSettings {
        &self.settings
    }

    /// These settings, with the keys `earlier` has read when they are of the same issuer
    /// and address (a reload that changed something else keeps them).
    pub(crate) fn keeping_keys_of(self, earlier: &OAuth) -> OAuth {
        let same_keys = |settings: &OAuthSettings| (settings.issuer.clone(), settings.jwks_uri.clone());
        match same_keys(&self.settings) == same_keys(&earlier.settings) {
            true => OAuth { keys: earlier.keys.clone(), ..self },
            false => self,
        }
    }

    /// The agent `token` (whose SHA-256 is `digest`) acts as, or why it is refused. An
    /// agent named by a claim must not be `taken` (named by another credential: a token
    /// of the server's own, or a scope agent), so that no issuer's user can act as it.
    pub(crate) async fn agent_for(
        &self,
        token: &str,
        digest: [u8; 32],
        taken: impl Fn(&str) -> bool,
    ) -> Result<String, Refusal> {
        let generation = self.keys.generation();
        if let Some(agent) = self.verified.agent(&digest, generation) {
            return Ok(agent);
        }
        let header =
            jsonwebtoken::decode_header(token).map_err(|_| Refusal::Invalid("the token is not a signed JWT"))?;
        let key = self.keys.key_for(&header).await?;
        let mut validation = jsonwebtoken::Validation::new(header.alg);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&[&self.settings.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = self.settings.clock_skew.as_secs();
        validation.validate_nbf = true;
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key.decoding, &validation)
            .map_err(|e| Refusal::Invalid(why(e.kind())))?;
        let agent = claims::agent(&self.settings, &data.claims, taken)?;
        // The keys the token was checked with may be of a read newer than `generation`:
        // remembered under the older one, it is only verified once more.
        let expires = data.claims.get("exp").and_then(Value::as_u64).unwrap_or(0);
        self.verified.remember(digest, &agent, expires.saturating_add(self.settings.clock_skew.as_secs()), generation);
        Ok(agent)
    }

    /// The Protected Resource Metadata document.
    pub(crate) fn metadata(&self) -> Value {
        json!({
            "resource": self.settings.resource,
            "authorization_servers": [self.settings.issuer],
            "scopes_supported": self.settings.scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": "toolhost",
        })
    }

    /// Where the metadata is published: the resource's origin, [`METADATA_PATH`], then
    /// the resource's path (RFC 9728, section 3.1).
    pub(crate) fn metadata_url(&self) -> String {
        match url::Url::parse(&self.settings.resource) {
            Ok(resource) => {
                let path = resource.path().trim_end_matches('/');
                format!("{}{METADATA_PATH}{path}", resource.origin().ascii_serialization())
            }
            Err(_) => format!("{}{METADATA_PATH}", self.settings.resource),
        }
    }

    /// The `WWW-Authenticate` challenge of a refusal (`None`: no token was presented).
    pub(crate) fn challenge(&self, refusal: Option<Refusal>) -> HeaderValue {
        let mut challenge = format!(r#"Bearer realm="toolhost", resource_metadata="{}""#, self.metadata_url());
        if !self.settings.scopes.is_empty() {
            challenge.push_str(&format!(r#", scope="{}""#, self.settings.scopes.join(" ")));
        }
        match refusal {
            Some(Refusal::Invalid(why)) => {
                challenge.push_str(&format!(r#", error="invalid_token", error_description="{why}""#))
            }
            Some(Refusal::InsufficientScope) => challenge.push_str(r#", error="insufficient_scope""#),
            Some(Refusal::KeysUnavailable) | None => {}
        }
        // The settings were checked to be printable ASCII without quotes when read.
        HeaderValue::from_str(&challenge).unwrap_or_else(|_| HeaderValue::from_static(r#"Bearer realm="toolhost""#))
    }
}

/// Why a token failed its check, in words that name no part of it.
fn why(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet",
        ErrorKind::InvalidAudience => "the token is for another resource",
        ErrorKind::InvalidIssuer => "the token is from another issuer",
        ErrorKind::MissingRequiredClaim(_) => "the token lacks `exp`, `iss` or `aud`",
        ErrorKind::InvalidSignature | ErrorKind::InvalidAlgorithm | ErrorKind::Crypto(_) => {
            "the token's signature does not verify"
        }
        _ => "the token is malformed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oauth(resource: &str) -> OAuth {
        let mut settings = OAuthSettings::new("https://auth.example.com", resource);
        settings.scopes = vec!["mcp:tools".into()];
        OAuth::new(settings).unwrap()
    }

    #[test]
    fn the_metadata_sits_at_the_well_known_path_before_the_resource_path() {
        assert_eq!(
            oauth("https://tools.example.com/mcp").metadata_url(),
            "https://tools.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            oauth("http://127.0.0.1:8080/").metadata_url(),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
        let metadata = oauth("https://tools.example.com/mcp").metadata();
        assert_eq!(metadata["resource"], "https://tools.example.com/mcp");
        assert_eq!(metadata["authorization_servers"], json!(["https://auth.example.com"]));
        assert_eq!(metadata["scopes_supported"], json!(["mcp:tools"]));
    }

    #[test]
    fn challenges_point_to_the_metadata_and_say_what_failed() {
        let oauth = oauth("https://tools.example.com/mcp");
        let bare = oauth.challenge(None);
        assert_eq!(
            bare,
            r#"Bearer realm="toolhost", resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools""#
        );
        let expired = oauth.challenge(Some(Refusal::Invalid("the token has expired")));
        assert!(
            expired.to_str().unwrap().ends_with(r#"error="invalid_token", error_description="the token has expired""#)
        );
        let scope = oauth.challenge(Some(Refusal::InsufficientScope));
        assert!(scope.to_str().unwrap().ends_with(r#"error="insufficient_scope""#));
    }

    #[test]
    fn reloaded_settings_keep_the_keys_of_the_same_issuer_only() {
        let first = oauth("https://tools.example.com/mcp");
        let same = oauth("https://tools.example.com/mcp").keeping_keys_of(&first);
        assert!(Arc::ptr_eq(&same.keys, &first.keys));
        let mut rescoped = OAuthSettings::new("https://auth.example.com", "https://tools.example.com/mcp");
        rescoped.scopes = vec!["other".into()];
        let rescoped = OAuth::new(rescoped).unwrap().keeping_keys_of(&first);
        assert!(Arc::ptr_eq(&rescoped.keys, &first.keys), "the same issuer's keys serve on");
        assert_eq!(rescoped.settings().scopes, ["other"]);
        let other = OAuthSettings::new("https://other-auth.example.com", "https://tools.example.com/mcp");
        let other = OAuth::new(other).unwrap().keeping_keys_of(&first);
        assert!(!Arc::ptr_eq(&other.keys, &first.keys), "another issuer's keys are its own");
    }
}
