//! `[grants]` of a manifest: files, outgoing hosts, environment variables, configuration values and storage, each checked.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::client::{ClientPower, ClientPowers};
use crate::sandbox::{FileGrant, Grants, HostPattern};
use crate::secret::{RawSecret, SecretSource, secret};
use crate::storage::{Quota, StorageGrant, is_bucket_name};
use crate::units::{Problem, parse_size};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGrants {
    #[serde(default)]
    files: Vec<Spanned<RawFileGrant>>,
    #[serde(default)]
    network: Vec<Spanned<String>>,
    #[serde(default)]
    env: Vec<Spanned<String>>,
    #[serde(default)]
    config: BTreeMap<String, Spanned<ConfigValue>>,
    storage: Option<Spanned<RawStorage>>,
    #[serde(default)]
    caller: bool,
    #[serde(default)]
    client: Vec<Spanned<String>>,
}

/// `[grants] storage`: a list of private buckets, or the whole table.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawStorage {
    Buckets(Vec<String>),
    Table(RawStorageTable),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawStorageTable {
    #[serde(default)]
    buckets: Vec<String>,
    #[serde(default)]
    shared: Vec<String>,
    #[serde(default)]
    all_agents: Vec<String>,
    max_bytes: Option<String>,
    max_keys: Option<u64>,
    max_value: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFileGrant {
    host: String,
    guest: String,
    mode: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ConfigValue {
    String(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
    /// A secret kept out of the manifest: `{ env = "VAR" }` or `{ file = "path" }`.
    Secret(RawSecret),
}

/// `[grants]`: what the component may reach, each grant checked now.
pub(super) fn grants(path: &Path, base: &Path, raw: RawGrants) -> Result<Grants, Problem> {
    Ok(Grants {
        files: file_grants(base, raw.files)?,
        network: network_grants(raw.network)?.into(),
        env: env_grants(path, raw.env)?,
        config: config_grants(path, base, raw.config)?,
        storage: storage_grant(path, raw.storage)?,
        caller: raw.caller,
        client: client_grants(raw.client)?,
    })
}

/// `[grants] client`: the calling client's powers, by name.
fn client_grants(raw: Vec<Spanned<String>>) -> Result<ClientPowers, Problem> {
    raw.into_iter()
        .map(|name| {
            ClientPower::parse(name.get_ref()).ok_or_else(|| {
                let known: Vec<&str> = ClientPower::ALL.iter().map(|p| p.as_str()).collect();
                let message = format!("`{}` is not a client power (known: {})", name.get_ref(), known.join(", "));
                Problem::at(name.span(), message)
            })
        })
        .collect()
}

fn file_grants(base: &Path, raw: Vec<Spanned<RawFileGrant>>) -> Result<Vec<FileGrant>, Problem> {
    let mut grants: Vec<(FileGrant, Range<usize>)> = Vec::with_capacity(raw.len());
    for grant in raw {
        let span = grant.span();
        let grant = file_grant(base, grant.into_inner()).map_err(|message| Problem::at(span.clone(), message))?;
        // The same directory however written (`/data`, `/data/`, `//data`).
        let same_directory = |(existing, _): &&(FileGrant, Range<usize>)| {
            Path::new(&existing.guest).components().eq(Path::new(&grant.guest).components())
        };
        if let Some((_, first)) = grants.iter().find(same_directory) {
            let message = format!("guest path `{}` is granted twice", grant.guest);
            return Err(Problem::at(first.clone(), message));
        }
        grants.push((grant, span));
    }
    Ok(grants.into_iter().map(|(grant, _)| grant).collect())
}

fn network_grants(raw: Vec<Spanned<String>>) -> Result<Vec<HostPattern>, Problem> {
    raw.into_iter()
        .map(|pattern| HostPattern::parse(pattern.get_ref()).map_err(|message| Problem::at(pattern.span(), message)))
        .collect()
}

/// The granted variables' values, read from the host's environment now. One that is not
/// set is simply absent for the guest.
fn env_grants(path: &Path, raw: Vec<Spanned<String>>) -> Result<Vec<(String, String)>, Problem> {
    let mut env = Vec::new();
    for name in raw {
        let span = name.span();
        let name = name.into_inner();
        if !is_env_name(&name) {
            return Err(Problem::at(span, format!("`{name}` is not an environment variable name")));
        }
        match std::env::var(&name) {
            Ok(value) => env.push((name, value)),
            Err(_) => tracing::info!(
                manifest = %path.display(),
                variable = %name,
                "granted environment variable is not set on the host"
            ),
        }
    }
    Ok(env)
}

/// The granted values; a secret's is read now. A secret in an environment variable
/// that is not set is absent for the guest, as a granted variable is; a secret file
/// that cannot be read is an error naming the file.
fn config_grants(
    path: &Path,
    base: &Path,
    raw: BTreeMap<String, Spanned<ConfigValue>>,
) -> Result<BTreeMap<String, String>, Problem> {
    let mut config = BTreeMap::new();
    for (key, value) in raw {
        let span = value.span();
        let value = match value.into_inner() {
            ConfigValue::String(s) => s,
            ConfigValue::Integer(i) => i.to_string(),
            ConfigValue::Float(f) => f.to_string(),
            ConfigValue::Bool(b) => b.to_string(),
            ConfigValue::Secret(raw) => match raw.source() {
                None => return Err(Problem::at(span, format!("config `{key}` names exactly one of `env` and `file`"))),
                Some(SecretSource::Env(variable)) if std::env::var_os(variable).is_none() => {
                    tracing::info!(manifest = %path.display(), key = %key, variable = %variable, "the environment variable of a granted configuration value is not set on the host");
                    continue;
                }
                Some(source) => {
                    secret(base, source, &format!("`{key}` configuration")).map_err(|e| Problem::at(span, e))?
                }
            },
        };
        config.insert(key, value);
    }
    Ok(config)
}

/// The storage grant; the component's identity (`namespace/file`) comes from where its
/// manifest lies, so that every version of the file keeps the same data.
fn storage_grant(path: &Path, raw: Option<Spanned<RawStorage>>) -> Result<StorageGrant, Problem> {
    let Some(raw) = raw else { return Ok(StorageGrant::default()) };
    let span = raw.span();
    let at = |message: String| Problem::at(span.clone(), message);
    let table = match raw.into_inner() {
        RawStorage::Buckets(buckets) => RawStorageTable { buckets, ..RawStorageTable::default() },
        RawStorage::Table(table) => table,
    };
    let namespace = path.parent().and_then(Path::file_name).and_then(|n| n.to_str());
    let file = path.file_stem().and_then(|n| n.to_str());
    let (Some(namespace), Some(file)) = (namespace, file) else {
        return Err(at(format!("storage needs the manifest in a namespace directory, not at {}", path.display())));
    };
    for name in table.buckets.iter().chain(&table.shared) {
        if !is_bucket_name(name) {
            return Err(at(format!("`{name}` is not a bucket name: [a-z0-9] then up to 63 of [a-z0-9_.-]")));
        }
    }
    if let Some(twice) = table.buckets.iter().find(|name| table.shared.contains(name)) {
        return Err(at(format!("bucket `{twice}` is granted both as private and as shared")));
    }
    if let Some(stray) =
        table.all_agents.iter().find(|name| !table.buckets.contains(name) && !table.shared.contains(name))
    {
        return Err(at(format!(
            "`all_agents` names `{stray}`, which is in neither `buckets` nor `shared`: grant the bucket there too"
        )));
    }
    let mut quota = Quota::default();
    if let Some(size) = &table.max_bytes {
        quota.max_bytes = parse_size(size).map_err(|e| at(format!("`max_bytes`: {e}")))?;
    }
    if let Some(keys) = table.max_keys {
        quota.max_keys = keys;
    }
    if let Some(size) = &table.max_value {
        quota.max_value = parse_size(size).map_err(|e| at(format!("`max_value`: {e}")))?;
    }
    Ok(StorageGrant {
        owner: format!("{namespace}/{file}"),
        buckets: table.buckets,
        shared: table.shared,
        all_agents: table.all_agents,
        quota,
    })
}

fn file_grant(base: &Path, raw: RawFileGrant) -> Result<FileGrant, String> {
    let writable = match raw.mode.as_str() {
        "ro" => false,
        "rw" => true,
        other => return Err(format!("file grant mode `{other}` is neither \"ro\" nor \"rw\"")),
    };
    // Segments as written: `Path::components` drops a `.` inside a path.
    if !Path::new(&raw.guest).is_absolute() || raw.guest.split('/').any(|segment| matches!(segment, "." | "..")) {
        return Err(format!("guest path `{}` must be absolute, without `.` or `..`", raw.guest));
    }
    let host = base.join(&raw.host);
    let host = host
        .canonicalize()
        .map_err(|e| format!("granted directory `{}` ({}) cannot be used: {e}", raw.host, host.display()))?;
    if !host.is_dir() {
        return Err(format!("granted path `{}` ({}) is not a directory", raw.host, host.display()));
    }
    Ok(FileGrant { host, guest: raw.guest, writable })
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use crate::error::{LoadError, LoadErrorKind};
    use crate::manifest::Manifest;
    use crate::sandbox::FileGrant;
    use crate::tool::{Ceilings, Limits};

    const CEILINGS: Ceilings = Ceilings { memory: 1 << 30, timeout: Duration::from_secs(600) };

    fn parse_text(text: &str) -> Result<Manifest, LoadError> {
        Manifest::parse(Path::new("/tools/ns/tool.toml"), text, Limits::default(), CEILINGS)
    }

    #[test]
    fn file_grants_resolve_relative_to_the_manifest_and_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        let manifest_path = dir.path().join("tool.toml");
        let text = "[grants]\nfiles = [{ host = \"data\", guest = \"/data\", mode = \"rw\" }]\n";
        let manifest = Manifest::parse(&manifest_path, text, Limits::default(), CEILINGS).unwrap();
        assert_eq!(
            manifest.grants.files,
            vec![FileGrant {
                host: dir.path().join("data").canonicalize().unwrap(),
                guest: "/data".into(),
                writable: true
            }]
        );

        let missing = "[grants]\n\nfiles = [{ host = \"nope\", guest = \"/data\", mode = \"ro\" }]\n";
        let error = Manifest::parse(&manifest_path, missing, Limits::default(), CEILINGS).unwrap_err();
        assert!(
            matches!(&error.kind, LoadErrorKind::Manifest { line: 3, problem, .. } if problem.contains("granted directory `nope`")),
            "{error}"
        );

        let relative_guest = "[grants]\nfiles = [{ host = \"data\", guest = \"data\", mode = \"ro\" }]\n";
        let error = Manifest::parse(&manifest_path, relative_guest, Limits::default(), CEILINGS).unwrap_err();
        assert!(error.to_string().contains("must be absolute"), "{error}");

        let bad_mode = "[grants]\nfiles = [{ host = \"data\", guest = \"/data\", mode = \"rwx\" }]\n";
        let error = Manifest::parse(&manifest_path, bad_mode, Limits::default(), CEILINGS).unwrap_err();
        assert!(error.to_string().contains("neither \"ro\" nor \"rw\""), "{error}");
    }

    #[test]
    fn config_values_become_strings() {
        let manifest = parse_text("[grants]\nconfig = { units = \"metric\", retries = 3, verbose = true }\n").unwrap();
        assert_eq!(manifest.grants.config.get("units").map(String::as_str), Some("metric"));
        assert_eq!(manifest.grants.config.get("retries").map(String::as_str), Some("3"));
        assert_eq!(manifest.grants.config.get("verbose").map(String::as_str), Some("true"));
    }
}
