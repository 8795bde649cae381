//! Buckets as the database names them: whose they are, which agent's contents, and the names guests may open.

/// A bucket as the database knows it: `namespace/file@agent:name` for a component's
/// private bucket as one agent sees it, `namespace/file:name` for one every agent sees
/// alike, and `shared@agent:name` and `shared:name` for shared buckets. A component
/// identity always holds a `/`, and an agent is written with `%`-escapes for anything
/// but `[A-Za-z0-9._-]`, so no two kinds collide.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BucketId {
    /// Whose quota its contents count against: the component identity (with the agent,
    /// when the bucket is the agent's own), or the shared bucket's id.
    pub owner: String,
    /// The stored name.
    pub id: String,
}

impl BucketId {
    /// A component's private bucket: one agent's contents, or with `agent` `None` the
    /// contents every agent sees (and what every bucket was before buckets were kept
    /// per agent).
    pub fn private(owner: &str, agent: Option<&str>, name: &str) -> BucketId {
        let owner = match agent {
            Some(agent) => format!("{owner}@{}", agent_key(agent)),
            None => owner.to_owned(),
        };
        BucketId { id: format!("{owner}:{name}"), owner }
    }

    /// A shared bucket: one agent's contents, or with `agent` `None` those every agent
    /// sees.
    pub fn shared(agent: Option<&str>, name: &str) -> BucketId {
        let id = match agent {
            Some(agent) => format!("shared@{}:{name}", agent_key(agent)),
            None => format!("shared:{name}"),
        };
        BucketId { owner: id.clone(), id }
    }

    /// The bucket a stored id names.
    pub fn parse(id: &str) -> Option<BucketId> {
        let (owner, name) = id.rsplit_once(':')?;
        if !is_bucket_name(name) {
            return None;
        }
        let (owner, agent) = match owner.split_once('@') {
            Some((owner, key)) => (owner, Some(agent_from_key(key)?)),
            None => (owner, None),
        };
        if owner == "shared" {
            Some(BucketId::shared(agent.as_deref(), name))
        } else if crate::names::validate_namespace(owner.split('/').next()?).is_ok() && owner.contains('/') {
            Some(BucketId::private(owner, agent.as_deref(), name))
        } else {
            None
        }
    }
}

/// An agent id as a bucket id spells it: `[A-Za-z0-9._-]` as is, every other byte as
/// `%XX`, so that no agent id can forge another's bucket or another kind of bucket.
fn agent_key(agent: &str) -> String {
    let mut key = String::with_capacity(agent.len());
    for byte in agent.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-') {
            key.push(char::from(byte));
        } else {
            key.push_str(&format!("%{byte:02X}"));
        }
    }
    key
}

/// The agent id a bucket id's key spells, if it is one [`agent_key`] writes.
fn agent_from_key(key: &str) -> Option<String> {
    let agent = String::from_utf8(crate::text::percent_decoded(key)?).ok()?;
    (!agent.is_empty() && agent_key(&agent) == key).then_some(agent)
}

/// A bucket name: `[a-z0-9]` then up to 63 of `[a-z0-9_.-]`.
pub fn is_bucket_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name.len() <= 64
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_bucket_reads_back_as_itself() {
        for bucket in [
            BucketId::private("task/task", Some("alice"), "tasks"),
            BucketId::private("task/task", None, "tasks"),
            BucketId::shared(Some("alice"), "team"),
            BucketId::shared(None, "team"),
            BucketId::private("task/task", Some("a:b@c%d/e f"), "tasks"),
            BucketId::shared(Some("ünï"), "team"),
        ] {
            assert_eq!(BucketId::parse(&bucket.id), Some(bucket.clone()), "{}", bucket.id);
        }
        assert_eq!(BucketId::private("task/task", Some("alice"), "tasks").id, "task/task@alice:tasks");
        assert_eq!(BucketId::private("task/task", Some("alice"), "tasks").owner, "task/task@alice");
        assert_eq!(BucketId::shared(Some("alice"), "team").owner, "shared@alice:team");
    }

    #[test]
    fn no_agent_id_spells_another_agents_bucket_or_another_kind() {
        let alice = BucketId::private("app/kv", Some("alice"), "default");
        for forger in ["alice:default", "alice@x", "%61lice", "ALICE", "alice ", ""] {
            let forged = BucketId::private("app/kv", Some(forger), "default");
            assert_ne!(forged, alice, "{forger:?}");
            assert_ne!(forged.owner, BucketId::private("app/kv", None, "default").owner, "{forger:?}");
        }
        assert_eq!(agent_key("a:b"), "a%3Ab");
        // Only the spelling `agent_key` writes is read: no second spelling of one agent.
        assert_eq!(BucketId::parse("app/kv@%61lice:default"), None);
        assert_eq!(BucketId::parse("app/kv@%3a:default"), None, "lower-case hex is not written");
        assert_eq!(BucketId::parse("app/kv@:default"), None, "no empty agent");
        assert_eq!(BucketId::parse("app/kv@a%4:default"), None);
    }

    #[test]
    fn a_grant_scopes_its_buckets_to_the_calling_agent_unless_for_all_agents() {
        let grant = crate::storage::StorageGrant {
            owner: "app/kv".into(),
            buckets: vec!["default".into(), "board".into()],
            shared: vec!["team".into()],
            all_agents: vec!["board".into()],
            quota: crate::storage::Quota::default(),
        };
        assert_eq!(grant.bucket("default", "bob").unwrap().id, "app/kv@bob:default");
        assert_eq!(grant.bucket("board", "bob").unwrap().id, "app/kv:board");
        assert_eq!(grant.bucket("team", "bob").unwrap().id, "shared@bob:team");
        assert_eq!(grant.bucket("other", "bob"), None);
        let owners: Vec<String> = grant.quotas("bob").into_iter().map(|(owner, _)| owner).collect();
        assert_eq!(owners, ["app/kv@bob", "app/kv", "shared@bob:team"]);
    }
}
