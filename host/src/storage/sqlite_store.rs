//! The embedded store: one SQLite file in WAL mode, durable when a commit returns.
//!
//! The embedded store: one SQLite file in WAL mode. Readers never wait for the writer;
//! one writer at a time, across every process that opens the file (`toolhost storage`
//! beside a running server included). A commit is durable when it returns
//! (`synchronous = FULL`): neither a `kill -9` nor a power cut loses it.
//!
//! Leases are rows of their own table, written through a connection that does not wait
//! for the disk: a lease only matters while its holder runs, and expires by itself when
//! the holder dies.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use super::StorageError;
use super::operations::{BucketSummary, Commit, CommitError, StagedWrite, Usage, Write, now_ms};

/// How long a statement waits for another process's write lock before it fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections kept open for reuse.
const POOL: usize = 8;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS entries (
    bucket TEXT NOT NULL,
    key    TEXT NOT NULL,
    value  BLOB NOT NULL,
    PRIMARY KEY (bucket, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage (
    owner TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL,
    keys  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS leases (
    bucket  TEXT NOT NULL,
    key     TEXT NOT NULL,
    holder  TEXT NOT NULL,
    expires INTEGER NOT NULL,
    PRIMARY KEY (bucket, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS leases_by_holder ON leases (holder);
";

pub(crate) struct SqliteStore {
    path: PathBuf,
    /// Connections that wait for the disk at every commit.
    durable: Mutex<Vec<Connection>>,
    /// The connection leases are written through.
    leases: Mutex<Connection>,
}

impl SqliteStore {
    pub fn open(path: &Path) -> Result<SqliteStore, StorageError> {
        let failed = |message: String| StorageError::Open { path: path.to_owned(), message };
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| failed(format!("cannot create {}: {e}", dir.display())))?;
        }
        let first = connect(path, true).map_err(|e| failed(e.to_string()))?;
        first.execute_batch(SCHEMA).map_err(|e| failed(format!("creating its tables: {e}")))?;
        let leases = connect(path, false).map_err(|e| failed(e.to_string()))?;
        Ok(SqliteStore { path: path.to_owned(), durable: Mutex::new(vec![first]), leases: Mutex::new(leases) })
    }

    /// Runs `operation` on a pooled durable connection.
    fn with<T>(&self, operation: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T, StorageError> {
        let pooled = self.durable.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut connection = match pooled {
            Some(connection) => connection,
            None => connect(&self.path, true).map_err(failed)?,
        };
        let result = operation(&mut connection).map_err(failed);
        let mut pool = self.durable.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < POOL {
            pool.push(connection);
        }
        result
    }

    pub fn get(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.with(|c| {
            c.prepare_cached("SELECT value FROM entries WHERE bucket = ?1 AND key = ?2")?
                .query_row(params![bucket, key], |row| row.get(0))
                .optional()
        })
    }

    /// The stored size of each key's value, in the order asked; `None` where it has none.
    pub fn value_sizes(&self, bucket: &str, keys: &[&str]) -> Result<Vec<Option<u64>>, StorageError> {
        self.with(|c| {
            let mut statement = c.prepare_cached("SELECT length(value) FROM entries WHERE bucket = ?1 AND key = ?2")?;
            keys.iter()
                .map(|key| statement.query_row(params![bucket, key], |row| row.get::<_, i64>(0)).optional())
                .map(|size| size.map(|size| size.map(|size| size.max(0) as u64)))
                .collect()
        })
    }

    pub fn keys_after(&self, bucket: &str, after: Option<&str>, limit: usize) -> Result<Vec<String>, StorageError> {
        self.with(|c| {
            let mut statement =
                c.prepare_cached("SELECT key FROM entries WHERE bucket = ?1 AND key > ?2 ORDER BY key LIMIT ?3")?;
            let rows = statement.query_map(params![bucket, after.unwrap_or(""), limit as i64], |row| row.get(0))?;
            rows.collect()
        })
    }

    pub fn usage(&self, owner: &str) -> Result<Usage, StorageError> {
        self.with(|c| usage_of(c, owner))
    }

    pub fn lease(&self, bucket: &str, key: &str, holder: &str, ttl_ms: u64) -> Result<bool, StorageError> {
        let now = now_ms() as i64;
        let connection = self.leases.lock().unwrap_or_else(|e| e.into_inner());
        let changed = connection
            .prepare_cached(
                "INSERT INTO leases (bucket, key, holder, expires) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (bucket, key) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
                 WHERE leases.holder = excluded.holder OR leases.expires < ?5",
            )
            .and_then(|mut s| s.execute(params![bucket, key, holder, now + ttl_ms as i64, now]))
            .map_err(failed)?;
        Ok(changed == 1)
    }

    pub fn release(&self, holder: &str) -> Result<(), StorageError> {
        let connection = self.leases.lock().unwrap_or_else(|e| e.into_inner());
        connection
            .prepare_cached("DELETE FROM leases WHERE holder = ?1")
            .and_then(|mut s| s.execute(params![holder]))
            .map_err(failed)?;
        Ok(())
    }

    pub fn commit(&self, commit: &Commit) -> Result<(), CommitError> {
        let mut outcome = Ok(());
        self.with(|c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            outcome = apply(&tx, commit)?;
            if outcome.is_ok() {
                tx.execute("DELETE FROM leases WHERE holder = ?1", params![commit.holder])?;
                tx.commit()?;
            }
            Ok(())
        })?;
        outcome
    }

    pub fn buckets(&self) -> Result<Vec<BucketSummary>, StorageError> {
        self.with(|c| {
            let mut statement = c.prepare(
                "SELECT bucket, count(*), sum(length(CAST(key AS BLOB)) + length(value)) FROM entries GROUP BY bucket ORDER BY bucket",
            )?;
            let rows = statement.query_map([], |row| {
                Ok(BucketSummary { bucket: row.get(0)?, keys: row.get::<_, i64>(1)? as u64, bytes: row.get::<_, i64>(2)? as u64 })
            })?;
            rows.collect()
        })
    }

    pub fn entries(&self, bucket: &str) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        self.with(|c| {
            let mut statement = c.prepare("SELECT key, value FROM entries WHERE bucket = ?1 ORDER BY key")?;
            let rows = statement.query_map(params![bucket], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect()
        })
    }
}

/// The writes inside the open transaction; `Ok(Err(..))` when they must not be committed.
fn apply(tx: &rusqlite::Transaction<'_>, commit: &Commit) -> rusqlite::Result<Result<(), CommitError>> {
    let now = now_ms() as i64;
    let mut deltas: Vec<(String, i64, i64)> = Vec::new();
    for staged in &commit.writes {
        let leased_by_other: Option<String> = tx
            .prepare_cached(
                "SELECT holder FROM leases WHERE bucket = ?1 AND key = ?2 AND holder <> ?3 AND expires >= ?4",
            )?
            .query_row(params![staged.bucket, staged.key, commit.holder, now], |row| row.get(0))
            .optional()?;
        if leased_by_other.is_some() {
            return Ok(Err(CommitError::Leased { bucket: staged.bucket.clone(), key: staged.key.clone() }));
        }
        let (bytes, keys) = write(tx, staged)?;
        match deltas.iter_mut().find(|(owner, _, _)| *owner == staged.owner) {
            Some(delta) => {
                delta.1 += bytes;
                delta.2 += keys;
            }
            None => deltas.push((staged.owner.clone(), bytes, keys)),
        }
    }
    for (owner, bytes, keys) in deltas {
        let before = usage_of(tx, &owner)?;
        let after = Usage {
            bytes: (before.bytes as i64 + bytes).max(0) as u64,
            keys: (before.keys as i64 + keys).max(0) as u64,
        };
        let grows = bytes > 0 || keys > 0;
        if let Some((_, quota)) = commit.quotas.iter().find(|(o, _)| *o == owner)
            && grows
            && let Some(problem) = after.over(quota)
        {
            return Ok(Err(CommitError::Quota { owner, problem }));
        }
        tx.prepare_cached(
            "INSERT INTO usage (owner, bytes, keys) VALUES (?1, ?2, ?3)
             ON CONFLICT (owner) DO UPDATE SET bytes = excluded.bytes, keys = excluded.keys",
        )?
        .execute(params![owner, after.bytes as i64, after.keys as i64])?;
    }
    Ok(Ok(()))
}

/// Writes one key's change, and returns how it changes its owner's bytes and keys.
fn write(tx: &rusqlite::Transaction<'_>, staged: &StagedWrite) -> rusqlite::Result<(i64, i64)> {
    let old: Option<i64> = tx
        .prepare_cached("SELECT length(value) FROM entries WHERE bucket = ?1 AND key = ?2")?
        .query_row(params![staged.bucket, staged.key], |row| row.get(0))
        .optional()?;
    let key_bytes = staged.key.len() as i64;
    let change = match (&staged.write, old) {
        (Write::Set(value), Some(old)) => (value.len() as i64 - old, 0),
        (Write::Set(value), None) => (key_bytes + value.len() as i64, 1),
        (Write::Delete, Some(old)) => (-(key_bytes + old), -1),
        (Write::Delete, None) => (0, 0),
    };
    match &staged.write {
        Write::Set(value) => tx
            .prepare_cached(
                "INSERT INTO entries (bucket, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (bucket, key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![staged.bucket, staged.key, value])?,
        Write::Delete => tx
            .prepare_cached("DELETE FROM entries WHERE bucket = ?1 AND key = ?2")?
            .execute(params![staged.bucket, staged.key])?,
    };
    Ok(change)
}

fn usage_of(c: &Connection, owner: &str) -> rusqlite::Result<Usage> {
    c.prepare_cached("SELECT bytes, keys FROM usage WHERE owner = ?1")?
        .query_row(params![owner], |row| {
            Ok(Usage { bytes: row.get::<_, i64>(0)? as u64, keys: row.get::<_, i64>(1)? as u64 })
        })
        .optional()
        .map(Option::unwrap_or_default)
}

fn connect(path: &Path, durable: bool) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = Connection::open_with_flags(path, flags)?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection.pragma_update(None, "journal_mode", "WAL")?;
    connection.pragma_update(None, "synchronous", if durable { "FULL" } else { "OFF" })?;
    Ok(connection)
}

fn failed(e: rusqlite::Error) -> StorageError {
    StorageError::Backend(e.to_string())
}
