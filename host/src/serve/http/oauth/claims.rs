//! What a verified access token says: its scopes, and the agent it acts as.

use serde_json::{Map, Value};

use super::{OAuthSettings, Refusal};

/// The longest agent name a claim may give; longer ones are refused, not cut.
const MAX_AGENT_LEN: usize = 256;

/// The agent a verified token acts as: the first scope agent whose scope it carries,
/// else its agent claim; refused when a required scope is missing, no agent is named,
/// or the claim names an agent `taken` by another credential or a scope agent.
pub(super) fn agent(
    settings: &OAuthSettings,
    claims: &Map<String, Value>,
    taken: impl Fn(&str) -> bool,
) -> Result<String, Refusal> {
    let carried = scopes(claims);
    if !settings.scopes.iter().all(|required| carried.contains(&required.as_str())) {
        return Err(Refusal::InsufficientScope);
    }
    if let Some((_, agent)) = settings.scope_agents.iter().find(|(scope, _)| carried.contains(&scope.as_str())) {
        return Ok(agent.clone());
    }
    match claims.get(&settings.agent_claim).and_then(Value::as_str) {
        Some(agent) if settings.scope_agents.iter().any(|(_, named)| named == agent) || taken(agent) => {
            Err(Refusal::Invalid("the token's agent claim names an agent of another credential"))
        }
        Some(agent) if is_agent_name(agent) => Ok(agent.to_owned()),
        Some(_) => Err(Refusal::Invalid("the token's agent claim is empty, too long or has control characters")),
        None => Err(Refusal::Invalid("the token has no agent claim")),
    }
}

/// The scopes a token carries: `scope`, space-separated (RFC 9068), or `scp`, a list
/// or a string, as some issuers write it.
fn scopes(claims: &Map<String, Value>) -> Vec<&str> {
    match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(scopes)) => scopes.split(' ').filter(|s| !s.is_empty()).collect(),
        Some(Value::Array(scopes)) => scopes.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn is_agent_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_AGENT_LEN && !name.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn agent_of(settings: &OAuthSettings, claims: &Map<String, Value>) -> Result<String, Refusal> {
        agent(settings, claims, |name| name == "carol")
    }

    #[test]
    fn the_agent_is_a_scope_agent_first_then_the_agent_claim() {
        let mut settings = OAuthSettings::new("https://as", "https://rs/mcp");
        settings.scopes = vec!["mcp:tools".into()];
        settings.scope_agents = vec![("tools:ops".into(), "ops".into()), ("tools:ci".into(), "ci".into())];
        let alice = claims(json!({"sub": "alice", "scope": "openid mcp:tools"}));
        assert_eq!(agent_of(&settings, &alice), Ok("alice".into()));
        let ops = claims(json!({"sub": "alice", "scope": "mcp:tools tools:ci tools:ops"}));
        assert_eq!(agent_of(&settings, &ops), Ok("ops".into()), "the first scope agent listed in the settings");
        let listed = claims(json!({"sub": "bob", "scp": ["mcp:tools"]}));
        assert_eq!(agent_of(&settings, &listed), Ok("bob".into()));
        let unscoped = claims(json!({"sub": "alice", "scope": "openid mcp:toolsx"}));
        assert_eq!(agent_of(&settings, &unscoped), Err(Refusal::InsufficientScope));
        let no_scope = claims(json!({"sub": "alice"}));
        assert_eq!(agent_of(&settings, &no_scope), Err(Refusal::InsufficientScope));
    }

    #[test]
    fn the_agent_claim_must_name_someone_printable() {
        let mut settings = OAuthSettings::new("https://as", "https://rs/mcp");
        settings.agent_claim = "client_id".into();
        assert_eq!(agent_of(&settings, &claims(json!({"client_id": "c-1", "sub": "x"}))), Ok("c-1".into()));
        assert!(matches!(agent_of(&settings, &claims(json!({"sub": "x"}))), Err(Refusal::Invalid(_))));
        assert!(matches!(agent_of(&settings, &claims(json!({"client_id": ""}))), Err(Refusal::Invalid(_))));
        assert!(matches!(agent_of(&settings, &claims(json!({"client_id": "a\nb"}))), Err(Refusal::Invalid(_))));
        assert!(matches!(
            agent_of(&settings, &claims(json!({"client_id": "a".repeat(257)}))),
            Err(Refusal::Invalid(_))
        ));
        assert!(matches!(agent_of(&settings, &claims(json!({"client_id": 7}))), Err(Refusal::Invalid(_))));
        assert!(matches!(agent_of(&settings, &claims(json!({"client_id": "carol"}))), Err(Refusal::Invalid(_))));
        settings.scope_agents = vec![("tools:ops".into(), "ops".into())];
        let claims_ops = claims(json!({"client_id": "ops", "scope": "mcp:tools"}));
        assert!(
            matches!(agent_of(&settings, &claims_ops), Err(Refusal::Invalid(_))),
            "a claim cannot name a scope agent"
        );
    }
}
