//! Shared state in Redis (or Valkey), for hosts that run as replicas.
//!
//! Shared state in Redis (or Valkey), for hosts that run as replicas. Same semantics as
//! the embedded store: a call's writes and the end of its leases are one Lua script,
//! which Redis runs atomically; leases are keys with an expiry.
//!
//! Layout, all under `toolhost:`: `v:<bucket>` a hash of key → value, `k:<bucket>` a
//! sorted set of its keys (for pages in key order), `buckets` the set of buckets holding
//! data, `u:<owner>` a hash of `bytes` and `keys`, and `l:<bucket>\n<key>` a lease
//! holding its holder's id. Durability is the server's: `appendonly yes` with
//! `appendfsync always` loses no commit that returned.

use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};

use super::StorageError;
use super::operations::{BucketSummary, Commit, CommitError, Usage, Write};

const COMMIT: &str = r#"
local holder = ARGV[1]
local n = tonumber(ARGV[2])
local deltas, order = {}, {}
local i = 3
for w = 1, n do
  local bucket, owner, key, op, value = ARGV[i], ARGV[i+1], ARGV[i+2], ARGV[i+3], ARGV[i+4]
  i = i + 5
  local lease = redis.call('GET', 'toolhost:l:' .. bucket .. '\n' .. key)
  if lease and lease ~= holder then return {'leased', bucket, key} end
  local values = 'toolhost:v:' .. bucket
  local exists = redis.call('HEXISTS', values, key) == 1
  local old = redis.call('HSTRLEN', values, key)
  local bytes, keys = 0, 0
  if op == 's' then
    if exists then bytes = #value - old else bytes = #key + #value; keys = 1 end
  elseif exists then
    bytes = -(#key + old); keys = -1
  end
  if not deltas[owner] then deltas[owner] = {0, 0}; table.insert(order, owner) end
  deltas[owner][1] = deltas[owner][1] + bytes
  deltas[owner][2] = deltas[owner][2] + keys
end
local m = tonumber(ARGV[i]); i = i + 1
local quotas = {}
for q = 1, m do quotas[ARGV[i]] = {tonumber(ARGV[i+1]), tonumber(ARGV[i+2])}; i = i + 3 end
for _, owner in ipairs(order) do
  local d, q = deltas[owner], quotas[owner]
  if q and (d[1] > 0 or d[2] > 0) then
    local usage = 'toolhost:u:' .. owner
    local keys = tonumber(redis.call('HGET', usage, 'keys') or '0') + d[2]
    local bytes = tonumber(redis.call('HGET', usage, 'bytes') or '0') + d[1]
    if keys > q[2] then return {'quota', owner, string.format('%d keys, over the limit of %d', keys, q[2])} end
    if bytes > q[1] then return {'quota', owner, string.format('%d bytes, over the limit of %d', bytes, q[1])} end
  end
end
i = 3
for w = 1, n do
  local bucket, key, op, value = ARGV[i], ARGV[i+2], ARGV[i+3], ARGV[i+4]
  i = i + 5
  local values, keys = 'toolhost:v:' .. bucket, 'toolhost:k:' .. bucket
  if op == 's' then
    redis.call('HSET', values, key, value)
    redis.call('ZADD', keys, 0, key)
    redis.call('SADD', 'toolhost:buckets', bucket)
  else
    redis.call('HDEL', values, key)
    redis.call('ZREM', keys, key)
    if redis.call('HLEN', values) == 0 then redis.call('SREM', 'toolhost:buckets', bucket) end
  end
end
for _, owner in ipairs(order) do
  redis.call('HINCRBY', 'toolhost:u:' .. owner, 'bytes', deltas[owner][1])
  redis.call('HINCRBY', 'toolhost:u:' .. owner, 'keys', deltas[owner][2])
end
i = i + 1 + 3 * m
local k = tonumber(ARGV[i]); i = i + 1
for l = 1, k do
  local lease = 'toolhost:l:' .. ARGV[i] .. '\n' .. ARGV[i+1]
  i = i + 2
  if redis.call('GET', lease) == holder then redis.call('DEL', lease) end
end
return {'ok'}
"#;

/// The size of each field's value, -1 for a field not there: one round trip for a whole
/// batch (`HSTRLEN` alone cannot tell a missing field from an empty value).
const VALUE_SIZES: &str = r#"
local sizes = {}
for f = 1, #ARGV do
  if redis.call('HEXISTS', KEYS[1], ARGV[f]) == 1 then
    sizes[f] = redis.call('HSTRLEN', KEYS[1], ARGV[f])
  else
    sizes[f] = -1
  end
end
return sizes
"#;

const RELEASE: &str = r#"
for l = 1, #KEYS do
  if redis.call('GET', KEYS[l]) == ARGV[1] then redis.call('DEL', KEYS[l]) end
end
return 0
"#;

pub(crate) struct RedisStore {
    url: String,
    connection: ConnectionManager,
    commit: Script,
    release: Script,
    value_sizes: Script,
}

impl RedisStore {
    pub async fn connect(url: &str) -> Result<RedisStore, StorageError> {
        let failed = |e: redis::RedisError| StorageError::Redis { url: redacted(url), message: e.to_string() };
        let client = redis::Client::open(url).map_err(failed)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(std::time::Duration::from_secs(5)))
            .set_response_timeout(Some(std::time::Duration::from_secs(10)))
            .set_number_of_retries(2);
        let connection = client.get_connection_manager_with_config(config).await.map_err(failed)?;
        Ok(RedisStore {
            url: redacted(url),
            connection,
            commit: Script::new(COMMIT),
            release: Script::new(RELEASE),
            value_sizes: Script::new(VALUE_SIZES),
        })
    }

    fn failed(&self, e: redis::RedisError) -> StorageError {
        StorageError::Redis { url: self.url.clone(), message: e.to_string() }
    }

    pub async fn get(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        let mut c = self.connection.clone();
        c.hget(values(bucket), key).await.map_err(|e| self.failed(e))
    }

    pub async fn value_sizes(&self, bucket: &str, keys: &[&str]) -> Result<Vec<Option<u64>>, StorageError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = self.connection.clone();
        let mut invocation = self.value_sizes.prepare_invoke();
        invocation.key(values(bucket));
        for key in keys {
            invocation.arg(*key);
        }
        let sizes: Vec<i64> = invocation.invoke_async(&mut c).await.map_err(|e| self.failed(e))?;
        Ok(sizes.into_iter().map(|size| u64::try_from(size).ok()).collect())
    }

    pub async fn get_many(&self, bucket: &str, keys: &[&str]) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut c = self.connection.clone();
        redis::cmd("HMGET").arg(values(bucket)).arg(keys).query_async(&mut c).await.map_err(|e| self.failed(e))
    }

    pub async fn keys_after(
        &self,
        bucket: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, StorageError> {
        let mut c = self.connection.clone();
        let start = after.map_or_else(|| "-".to_owned(), |key| format!("({key}"));
        redis::cmd("ZRANGEBYLEX")
            .arg(keys(bucket))
            .arg(start)
            .arg("+")
            .arg("LIMIT")
            .arg(0)
            .arg(limit)
            .query_async(&mut c)
            .await
            .map_err(|e| self.failed(e))
    }

    pub async fn usage(&self, owner: &str) -> Result<Usage, StorageError> {
        let mut c = self.connection.clone();
        let (bytes, keys): (Option<i64>, Option<i64>) = redis::cmd("HMGET")
            .arg(usage(owner))
            .arg("bytes")
            .arg("keys")
            .query_async(&mut c)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(Usage { bytes: bytes.unwrap_or(0).max(0) as u64, keys: keys.unwrap_or(0).max(0) as u64 })
    }

    /// Adds `by` (negative: subtracts) to the counter `key`, expiring `ttl` after it was
    /// made; the new count (0 below zero).
    pub async fn count(&self, key: &str, by: i64, ttl: std::time::Duration) -> Result<u64, StorageError> {
        let mut c = self.connection.clone();
        let name = format!("toolhost:count:{key}");
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let (count,): (i64,) = redis::pipe()
            .atomic()
            .incr(&name, by)
            .cmd("PEXPIRE")
            .arg(&name)
            .arg(ttl_ms)
            .arg("NX")
            .ignore()
            .query_async(&mut c)
            .await
            .map_err(|e| self.failed(e))?;
        Ok(count.max(0) as u64)
    }

    /// The counter `key` (0 when it was never counted or expired).
    pub async fn peek(&self, key: &str) -> Result<u64, StorageError> {
        let mut c = self.connection.clone();
        let count: Option<i64> = c.get(format!("toolhost:count:{key}")).await.map_err(|e| self.failed(e))?;
        Ok(count.unwrap_or(0).max(0) as u64)
    }

    pub async fn lease(&self, bucket: &str, key: &str, holder: &str, ttl_ms: u64) -> Result<bool, StorageError> {
        let mut c = self.connection.clone();
        let name = lease(bucket, key);
        let taken: Option<String> = redis::cmd("SET")
            .arg(&name)
            .arg(holder)
            .arg("NX")
            .arg("PX")
            .arg(ttl_ms.max(1))
            .query_async(&mut c)
            .await
            .map_err(|e| self.failed(e))?;
        if taken.is_some() {
            return Ok(true);
        }
        let current: Option<String> = c.get(&name).await.map_err(|e| self.failed(e))?;
        Ok(current.as_deref() == Some(holder))
    }

    pub async fn release(&self, holder: &str, leased: &[(String, String)]) -> Result<(), StorageError> {
        if leased.is_empty() {
            return Ok(());
        }
        let mut c = self.connection.clone();
        let mut invocation = self.release.prepare_invoke();
        for (bucket, key) in leased {
            invocation.key(lease(bucket, key));
        }
        invocation.arg(holder).invoke_async::<i64>(&mut c).await.map_err(|e| self.failed(e))?;
        Ok(())
    }

    pub async fn commit(&self, commit: &Commit) -> Result<(), CommitError> {
        let mut c = self.connection.clone();
        let mut invocation = self.commit.prepare_invoke();
        invocation.arg(&commit.holder).arg(commit.writes.len());
        for staged in &commit.writes {
            let (op, value): (&str, &[u8]) = match &staged.write {
                Write::Set(value) => ("s", value),
                Write::Delete => ("d", b""),
            };
            invocation.arg(&staged.bucket).arg(&staged.owner).arg(&staged.key).arg(op).arg(value);
        }
        invocation.arg(commit.quotas.len());
        for (owner, quota) in &commit.quotas {
            invocation.arg(owner).arg(quota.max_bytes).arg(quota.max_keys);
        }
        invocation.arg(commit.leased.len());
        for (bucket, key) in &commit.leased {
            invocation.arg(bucket).arg(key);
        }
        let answer: Vec<String> = invocation.invoke_async(&mut c).await.map_err(|e| self.failed(e))?;
        match answer.as_slice() {
            [ok] if ok == "ok" => Ok(()),
            [kind, bucket, key] if kind == "leased" => {
                Err(CommitError::Leased { bucket: bucket.clone(), key: key.clone() })
            }
            [kind, owner, problem] if kind == "quota" => {
                Err(CommitError::Quota { owner: owner.clone(), problem: problem.clone() })
            }
            other => Err(StorageError::Backend(format!("unexpected answer from the commit script: {other:?}")).into()),
        }
    }

    pub async fn buckets(&self) -> Result<Vec<BucketSummary>, StorageError> {
        let mut c = self.connection.clone();
        let mut names: Vec<String> = c.smembers("toolhost:buckets").await.map_err(|e| self.failed(e))?;
        names.sort();
        let mut summaries = Vec::with_capacity(names.len());
        for bucket in names {
            let entries = self.entries(&bucket).await?;
            let bytes = entries.iter().map(|(key, value)| (key.len() + value.len()) as u64).sum();
            summaries.push(BucketSummary { bucket, keys: entries.len() as u64, bytes });
        }
        Ok(summaries)
    }

    pub async fn entries(&self, bucket: &str) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        let mut c = self.connection.clone();
        let mut entries: Vec<(String, Vec<u8>)> = c.hgetall(values(bucket)).await.map_err(|e| self.failed(e))?;
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(entries)
    }
}

fn values(bucket: &str) -> String {
    format!("toolhost:v:{bucket}")
}

fn keys(bucket: &str) -> String {
    format!("toolhost:k:{bucket}")
}

fn usage(owner: &str) -> String {
    format!("toolhost:u:{owner}")
}

fn lease(bucket: &str, key: &str) -> String {
    format!("toolhost:l:{bucket}\n{key}")
}

/// `url` without its password, for messages and logs.
pub(crate) fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(parsed) => parsed.to_string(),
        Err(_) => "(an unparsable redis URL)".to_owned(),
    }
}
