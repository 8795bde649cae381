//! `toolhost storage`: the operator's view of the buckets components keep, and their backup.
//!
//! Works beside a running server on the same store (SQLite serializes writers across
//! processes; Redis is shared anyway).

use std::io::{Read, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use base64::Engine as _;
use clap::Subcommand;
use serde_json::{Map, Value, json};
use toolhost::storage::{BucketId, Storage, Write};
use toolhost::text::Escaped;

use crate::output::print_line;

/// The format tag of an export, checked on import.
const EXPORT_FORMAT: &str = "toolhost-storage/1";

#[derive(Subcommand)]
pub enum StorageCommand {
    /// List buckets holding data (of one component, `namespace/file`, of one agent of
    /// it, `namespace/file@agent`, or `shared`), with their keys and bytes.
    List {
        /// `namespace/file`, `namespace/file@agent`, or `shared` for the shared buckets.
        owner: Option<String>,
    },
    /// List the keys of BUCKET (`namespace/file@agent:name` for one agent's contents,
    /// `namespace/file:name` for a bucket every agent sees, `shared@agent:name`,
    /// `shared:name`).
    Keys { bucket: String },
    /// Print a value to stdout: as stored into a pipe or a file, with its control
    /// characters escaped onto a terminal (a value is a guest's data, not commands).
    Get { bucket: String, key: String },
    /// Set a value: VALUE, or stdin without it.
    Set { bucket: String, key: String, value: Option<String> },
    /// Delete a key.
    Delete { bucket: String, key: String },
    /// Print a component's (or the shared buckets') data as JSON, for a backup.
    Export {
        /// `namespace/file`, or `shared`.
        owner: String,
    },
    /// Write the data of an export (FILE, or stdin with `-`) back; keys it holds are
    /// replaced, other keys are left as they are.
    Import { file: PathBuf },
    /// Move every key of bucket FROM into bucket TO (replacing the keys TO holds), then
    /// delete them from FROM: how data kept before buckets were per agent
    /// (`task/task:tasks`) becomes one agent's (`task/task@local:tasks`).
    Move { from: String, to: String },
}

pub async fn run(options: &super::HostOptions, command: StorageCommand) -> anyhow::Result<ExitCode> {
    let storage = Storage::new(options.config()?.storage);
    match command {
        StorageCommand::List { owner } => list(&storage, owner.as_deref()).await?,
        StorageCommand::Keys { bucket } => {
            for (key, _) in storage.entries(&bucket_id(&bucket)?).await? {
                print_line(&Escaped(&key).to_string());
            }
        }
        StorageCommand::Get { bucket, key } => match storage.get(&bucket_id(&bucket)?, &key).await? {
            Some(value) => write_value(&value)?,
            None => bail!("no key `{}` in {}", Escaped(&key), Escaped(&bucket)),
        },
        StorageCommand::Set { bucket, key, value } => {
            let value = match value {
                Some(value) => value.into_bytes(),
                None => {
                    let mut bytes = Vec::new();
                    std::io::stdin().read_to_end(&mut bytes)?;
                    bytes
                }
            };
            storage.write(&bucket_id(&bucket)?, vec![(key, Write::Set(value))]).await?;
        }
        StorageCommand::Delete { bucket, key } => {
            storage.write(&bucket_id(&bucket)?, vec![(key, Write::Delete)]).await?;
        }
        StorageCommand::Export { owner } => export(&storage, &owner).await?,
        StorageCommand::Import { file } => import(&storage, &file).await?,
        StorageCommand::Move { from, to } => move_bucket(&storage, &bucket_id(&from)?, &bucket_id(&to)?).await?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The buckets holding data, of `owner` when given.
async fn list(storage: &Storage, owner: Option<&str>) -> anyhow::Result<()> {
    for bucket in storage.buckets().await? {
        let Some(id) = BucketId::parse(&bucket.bucket) else { continue };
        if owner.is_none_or(|owner| owns(owner, &id)) {
            print_line(&format!("{}\t{} keys\t{} bytes", Escaped(&bucket.bucket), bucket.keys, bucket.bytes));
        }
    }
    Ok(())
}

/// The data of `owner`'s buckets as one JSON document.
async fn export(storage: &Storage, owner: &str) -> anyhow::Result<()> {
    let mut buckets = Map::new();
    for bucket in storage.buckets().await? {
        let Some(id) = BucketId::parse(&bucket.bucket) else { continue };
        if !owns(owner, &id) {
            continue;
        }
        let entries: Map<String, Value> =
            storage.entries(&id).await?.into_iter().map(|(key, value)| (key, exported(value))).collect();
        buckets.insert(id.id.clone(), Value::Object(entries));
    }
    let export = json!({ "format": EXPORT_FORMAT, "owner": owner, "buckets": buckets });
    print_line(&serde_json::to_string_pretty(&export)?);
    Ok(())
}

/// Writes the data of an export (`-`: stdin) back.
async fn import(storage: &Storage, file: &std::path::Path) -> anyhow::Result<()> {
    let text = if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    } else {
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?
    };
    let export: Value = serde_json::from_str(&text).context("the export is not JSON")?;
    if export["format"] != EXPORT_FORMAT {
        bail!("not a toolhost storage export (its `format` is not \"{EXPORT_FORMAT}\")");
    }
    let Some(buckets) = export["buckets"].as_object() else { bail!("the export has no `buckets` object") };
    for (bucket, entries) in buckets {
        let id = bucket_id(bucket)?;
        let Some(entries) = entries.as_object() else { bail!("bucket `{}` is not an object", Escaped(bucket)) };
        let writes = entries
            .iter()
            .map(|(key, value)| {
                let value = imported(value).with_context(|| format!("key `{}`", Escaped(key)))?;
                Ok((key.clone(), Write::Set(value)))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let count = writes.len();
        storage.write(&id, writes).await?;
        eprintln!("{}: {count} keys", Escaped(bucket));
    }
    Ok(())
}

/// Moves `from`'s keys into `to`: written there first, then deleted here, so that a
/// move cut short leaves every key in at least one of the two (run it again to finish).
async fn move_bucket(storage: &Storage, from: &BucketId, to: &BucketId) -> anyhow::Result<()> {
    if from == to {
        bail!("`{}` is both where to move from and where to", Escaped(&from.id));
    }
    let entries = storage.entries(from).await?;
    let keys: Vec<String> = entries.iter().map(|(key, _)| key.clone()).collect();
    let count = keys.len();
    storage.write(to, entries.into_iter().map(|(key, value)| (key, Write::Set(value))).collect()).await?;
    storage.write(from, keys.into_iter().map(|key| (key, Write::Delete)).collect()).await?;
    eprintln!("{} -> {}: {count} keys", Escaped(&from.id), Escaped(&to.id));
    Ok(())
}

fn bucket_id(bucket: &str) -> anyhow::Result<BucketId> {
    BucketId::parse(bucket).with_context(|| {
        format!(
            "`{}` is not a bucket: write `namespace/file@agent:name`, `namespace/file:name`, `shared@agent:name` or `shared:name`",
            Escaped(bucket)
        )
    })
}

/// Whether `bucket` is one of `owner`'s: a component identity owns its buckets of every
/// agent, `namespace/file@agent` those of one agent, `shared` every shared bucket.
fn owns(owner: &str, bucket: &BucketId) -> bool {
    let component = bucket.owner.split_once('@').map_or(bucket.owner.as_str(), |(component, _)| component);
    match owner {
        "shared" => bucket.id.starts_with("shared:") || bucket.id.starts_with("shared@"),
        owner => bucket.owner == owner || component == owner,
    }
}

/// A value as JSON: `{"text": …}` when it is UTF-8, else `{"base64": …}`.
fn exported(value: Vec<u8>) -> Value {
    match String::from_utf8(value) {
        Ok(text) => json!({ "text": text }),
        Err(e) => json!({ "base64": base64::engine::general_purpose::STANDARD.encode(e.into_bytes()) }),
    }
}

fn imported(value: &Value) -> anyhow::Result<Vec<u8>> {
    if let Some(text) = value["text"].as_str() {
        return Ok(text.as_bytes().to_vec());
    }
    if let Some(encoded) = value["base64"].as_str() {
        return base64::engine::general_purpose::STANDARD.decode(encoded).context("its `base64` does not decode");
    }
    bail!("a value is {{\"text\": …}} or {{\"base64\": …}}")
}

/// A stored value onto stdout: its bytes as they are for a pipe or a file; for a
/// terminal, as text with every control character escaped, and a newline.
fn write_value(value: &[u8]) -> std::io::Result<()> {
    use std::io::IsTerminal;
    let mut stdout = std::io::stdout().lock();
    if stdout.is_terminal() {
        writeln!(stdout, "{}", Escaped(&String::from_utf8_lossy(value)))
    } else {
        stdout.write_all(value)
    }
}
