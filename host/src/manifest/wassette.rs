//! A wassette `policy.yaml` as a toolhost manifest: the same hosts, paths and environment, and what could not be mapped.
//!
//! wassette keeps a component's permissions in a `policy.yaml` beside it (the
//! policy-mcp format, version 1.0); toolhost keeps them in a manifest. What a policy
//! grants maps like this:
//!
//! | `policy.yaml` | manifest `[grants]` |
//! |---|---|
//! | `network.allow: [{host: api.example.com}]` | `network = ["api.example.com"]` |
//! | `network.allow: [{host: "https://api.example.com/"}]` | `network = ["api.example.com:443"]`: the scheme's port |
//! | `storage.allow: [{uri: "fs://data", access: [read, write]}]` | `files = [{ host = "data", guest = "/data", mode = "rw" }]` |
//! | `environment.allow: [{key: API_KEY}]` | `config = { API_KEY = { env = "API_KEY" } }` |
//!
//! wassette hands an allowed environment variable to its component through
//! `wasi:config/store`, not as an environment variable, and so does the manifest.
//! Everything else is said, never dropped in silence: CIDR ranges, deny lists
//! (toolhost denies whatever it does not grant), paths of URLs, globs inside paths,
//! `resources`, `runtime`, `ipc` and keys the format does not have.

use serde_norway::Value;

use crate::sandbox::HostPattern;

/// Longest policy read: a policy is a few hundred bytes.
pub const MAX_POLICY_BYTES: usize = 1 << 20;

/// A manifest written from a wassette policy.
#[derive(Debug)]
pub struct ImportedPolicy {
    /// The manifest (TOML), to be saved as `<name>.toml` beside the component.
    pub manifest: String,
    /// What the policy says that the manifest grants differently or not at all, one
    /// sentence each. The manifest carries them as comments too.
    pub notes: Vec<String>,
}

/// What the policy grants, as the manifest will.
#[derive(Default)]
struct Granted {
    network: Vec<String>,
    /// `(host, guest, writable)`.
    files: Vec<(String, String, bool)>,
    config: Vec<String>,
    notes: Vec<String>,
}

/// The manifest granting what the wassette policy `text` grants. Errors when `text` is
/// not a policy at all; what cannot be mapped is in the notes.
pub fn import_wassette_policy(text: &str) -> Result<ImportedPolicy, String> {
    if text.len() > MAX_POLICY_BYTES {
        return Err(format!("is longer than {MAX_POLICY_BYTES} bytes: not a policy"));
    }
    let policy: Value = serde_norway::from_str(text).map_err(|e| format!("is not YAML: {e}"))?;
    let Value::Mapping(root) = policy else {
        return Err("is not a wassette policy: its top level is not a mapping".into());
    };
    let mut granted = Granted::default();
    let mut description = None;
    for (key, value) in &root {
        match key.as_str() {
            Some("version") if matches!(value.as_str(), Some("1.0")) || value.as_f64() == Some(1.0) => {}
            Some("version") => granted.note(format!("the policy's version {} is read as 1.0", shown(value))),
            Some("description") => description = value.as_str().map(one_line),
            Some("permissions") => permissions(value, &mut granted)?,
            _ => granted.note(format!("`{}` is not a key of a wassette policy", shown(key))),
        }
    }
    let manifest = granted.manifest(description.as_deref());
    Ok(ImportedPolicy { manifest, notes: granted.notes })
}

fn permissions(value: &Value, granted: &mut Granted) -> Result<(), String> {
    let permissions = match value {
        Value::Null => return Ok(()),
        Value::Mapping(permissions) => permissions,
        _ => return Err("is not a wassette policy: `permissions` is not a mapping".into()),
    };
    for (kind, rules) in permissions {
        let kind = kind.as_str().unwrap_or_default();
        let entry: fn(&Value, &mut Granted) = match kind {
            "network" => network,
            "storage" => storage,
            "environment" => environment,
            "resources" => {
                granted.note("`permissions.resources` is not mapped: set the call's limits in `[limits]`".into());
                continue;
            }
            _ => {
                granted.note(format!("`permissions.{}` has no toolhost grant and is not mapped", one_line(kind)));
                continue;
            }
        };
        let Value::Mapping(rules) = rules else {
            if !rules.is_null() {
                granted.note(format!("`permissions.{kind}` is not a mapping and is not mapped"));
            }
            continue;
        };
        for (list, entries) in rules {
            let entries = entries.as_sequence().map(Vec::as_slice).unwrap_or_default();
            match list.as_str() {
                Some("allow") => entries.iter().for_each(|e| entry(e, granted)),
                Some("deny") if entries.is_empty() => {}
                Some("deny") => granted.note(format!(
                    "`permissions.{kind}.deny` ({} rules) is not mapped: toolhost denies whatever it does not grant, \
                     so check that no grant is wider than meant",
                    entries.len()
                )),
                _ => granted.note(format!("`permissions.{kind}.{}` is not mapped", shown(list))),
            }
        }
    }
    Ok(())
}

/// `- host: api.example.com` (a scheme gives the port; a path is dropped) or `- cidr: …`.
fn network(entry: &Value, granted: &mut Granted) {
    if let Some(cidr) = entry.get("cidr") {
        let cidr = shown(cidr);
        return granted
            .note(format!("network `{cidr}` is not granted: toolhost grants names and addresses, not ranges"));
    }
    let Some(host) = entry.get("host").and_then(Value::as_str) else {
        return granted.note(format!("network rule `{}` names no host and is not mapped", shown(entry)));
    };
    let (port, rest) = match (host.strip_prefix("https://"), host.strip_prefix("http://")) {
        (Some(rest), _) => (Some(443), rest),
        (_, Some(rest)) => (Some(80), rest),
        _ => (None, host),
    };
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(authority, path)| (authority, path));
    if !path.is_empty() {
        granted.note(format!(
            "network `{}`: the path `/{}` is dropped, toolhost grants whole hosts",
            one_line(host),
            one_line(path)
        ));
    }
    let pattern = match port {
        Some(port) if !authority.contains(':') => format!("{authority}:{port}"),
        _ => authority.to_owned(),
    };
    match HostPattern::parse(&pattern) {
        Ok(_) if !granted.network.contains(&pattern) => granted.network.push(pattern),
        Ok(_) => {}
        Err(why) => granted.note(format!("{}; not granted", one_line(&why))),
    }
}

/// `- uri: fs://path, access: [read, write]`: the directory, read-only unless writable.
fn storage(entry: &Value, granted: &mut Granted) {
    let uri = entry.get("uri").and_then(Value::as_str).unwrap_or_default();
    let Some(path) = uri.strip_prefix("fs://") else {
        return granted.note(format!("storage `{}` is not an `fs://` path and is not mapped", one_line(uri)));
    };
    let directory = path.strip_suffix("/**").or_else(|| path.strip_suffix("/*")).unwrap_or(path);
    if directory.contains(['*', '?', '[']) {
        return granted.note(format!("storage `{}` has a glob inside its path and is not mapped", one_line(uri)));
    }
    if directory.len() != path.len() {
        granted.note(format!(
            "storage `{}` is granted as the whole directory `{}`",
            one_line(uri),
            one_line(directory)
        ));
    }
    let access: Vec<&str> =
        entry.get("access").and_then(Value::as_sequence).into_iter().flatten().filter_map(Value::as_str).collect();
    let writable = access.contains(&"write");
    if let Some(other) = access.iter().find(|a| !matches!(**a, "read" | "write")) {
        granted.note(format!("storage `{}`: access `{}` is not mapped", one_line(uri), one_line(other)));
    }
    let host = if directory.is_empty() { "/".to_owned() } else { directory.to_owned() };
    let guest = if host.starts_with('/') { host.clone() } else { format!("/{host}") };
    if guest != host {
        granted
            .note(format!("storage `{}` is mounted at `{guest}`: toolhost's guest paths are absolute", one_line(uri)));
    }
    match granted.files.iter_mut().find(|(_, existing, _)| *existing == guest) {
        Some(existing) => existing.2 |= writable,
        None => granted.files.push((host, guest, writable)),
    }
}

/// `- key: API_KEY`: the host's variable, handed over as configuration as wassette does.
fn environment(entry: &Value, granted: &mut Granted) {
    match entry.get("key").and_then(Value::as_str) {
        Some(key) if !key.is_empty() && !key.contains(['=', '\0']) => {
            if !granted.config.iter().any(|known| known == key) {
                granted.config.push(key.to_owned());
            }
        }
        _ => granted.note(format!("environment rule `{}` names no variable and is not mapped", shown(entry))),
    }
}

impl Granted {
    fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    fn manifest(&self, description: Option<&str>) -> String {
        let mut text = String::from("# Written by `toolhost import-policy` from a wassette policy.\n");
        if let Some(description) = description {
            text.push_str(&format!("# {description}\n"));
        }
        for note in &self.notes {
            text.push_str(&format!("# Note: {note}\n"));
        }
        text.push_str("\n[grants]\n");
        if !self.network.is_empty() {
            let hosts: Vec<String> = self.network.iter().map(|host| quoted(host)).collect();
            text.push_str(&format!("network = [{}]\n", hosts.join(", ")));
        }
        if !self.files.is_empty() {
            text.push_str("files = [\n");
            for (host, guest, writable) in &self.files {
                let mode = if *writable { "rw" } else { "ro" };
                text.push_str(&format!(
                    "  {{ host = {}, guest = {}, mode = \"{mode}\" }},\n",
                    quoted(host),
                    quoted(guest)
                ));
            }
            text.push_str("]\n");
        }
        if !self.config.is_empty() {
            text.push_str("# Each value is read from the host's environment variable of that name.\n[grants.config]\n");
            for key in &self.config {
                text.push_str(&format!("{} = {{ env = {} }}\n", quoted(key), quoted(key)));
            }
        }
        text
    }
}

/// A TOML string: quoted and escaped.
fn quoted(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// Text from the policy, on one line, for a comment or a note.
fn one_line(text: &str) -> String {
    let line: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    crate::text::bounded(line, 200)
}

/// A YAML value as the policy wrote it, on one line.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => one_line(text),
        other => one_line(serde_norway::to_string(other).unwrap_or_default().trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Manifest;
    use crate::tool::{Ceilings, Limits};

    /// The manifest parsed as toolhost will parse it beside a component.
    fn parsed(imported: &ImportedPolicy) -> Manifest {
        let ceilings = Ceilings { memory: 1 << 30, timeout: std::time::Duration::from_secs(600) };
        Manifest::parse(std::path::Path::new("/tools/ns/tool.toml"), &imported.manifest, Limits::default(), ceilings)
            .unwrap_or_else(|e| panic!("{e}\n{}", imported.manifest))
    }

    #[test]
    fn get_weather_js_keeps_its_host_and_its_key() {
        let policy = "version: \"1.0\"\ndescription: \"Permission policy for wassette weather demo\"\npermissions:\n  network:\n    allow:\n      - host: \"api.openweathermap.org\"\n  environment:\n    allow:\n      - key: \"OPENWEATHER_API_KEY\"\n";
        let imported = import_wassette_policy(policy).unwrap();
        assert!(imported.notes.is_empty(), "{:?}", imported.notes);
        assert!(imported.manifest.contains("network = [\"api.openweathermap.org\"]"), "{}", imported.manifest);
        assert!(
            imported.manifest.contains("\"OPENWEATHER_API_KEY\" = { env = \"OPENWEATHER_API_KEY\" }"),
            "{}",
            imported.manifest
        );
        let manifest = parsed(&imported);
        assert_eq!(manifest.grants.network.len(), 1);
    }

    #[test]
    fn a_url_becomes_its_host_and_port() {
        let policy = "version: \"1.0\"\npermissions:\n  network:\n    allow:\n      - host: \"https://rss.nytimes.com/\"\n      - host: \"http://example.org/feed\"\n";
        let imported = import_wassette_policy(policy).unwrap();
        assert!(
            imported.manifest.contains("network = [\"rss.nytimes.com:443\", \"example.org:80\"]"),
            "{}",
            imported.manifest
        );
        assert_eq!(imported.notes.len(), 1, "{:?}", imported.notes);
        assert!(imported.notes[0].contains("the path `/feed` is dropped"));
        parsed(&imported);
    }

    #[test]
    fn what_cannot_be_mapped_is_said() {
        let policy = "version: \"1.0\"\npermissions:\n  storage:\n    allow:\n    - uri: \"fs://workspace/**\"\n      access: [\"read\", \"write\"]\n    - uri: \"fs://a/*/b\"\n      access: [\"read\"]\n    deny:\n    - uri: \"fs://system/**\"\n      access: [\"read\"]\n  network:\n    allow:\n    - cidr: \"10.0.0.0/8\"\n    - host: \"bad\\\"host\\nname\"\n  resources:\n    memory: 1024\n  ipc:\n    allow: []\nextra: 1\n";
        let imported = import_wassette_policy(policy).unwrap();
        let notes = imported.notes.join("\n");
        for expected in [
            "`fs://workspace/**` is granted as the whole directory `workspace`",
            "mounted at `/workspace`",
            "`fs://a/*/b` has a glob inside its path",
            "`permissions.storage.deny` (1 rules) is not mapped",
            "network `10.0.0.0/8` is not granted",
            "`permissions.resources` is not mapped",
            "`permissions.ipc` has no toolhost grant",
            "`extra` is not a key",
        ] {
            assert!(notes.contains(expected), "{expected} in:\n{notes}");
        }
        assert!(
            imported.manifest.contains("{ host = \"workspace\", guest = \"/workspace\", mode = \"rw\" }"),
            "{}",
            imported.manifest
        );
        assert!(!imported.manifest.contains("network ="), "{}", imported.manifest);
        // Every note is one comment line: nothing from the policy breaks out of it.
        assert!(
            imported.manifest.lines().all(|line| !line.contains("name") || line.starts_with("# ")),
            "{}",
            imported.manifest
        );
    }

    #[test]
    fn what_is_not_a_policy_is_refused() {
        assert!(import_wassette_policy("- 1\n- 2\n").unwrap_err().contains("not a mapping"));
        assert!(import_wassette_policy("a: [").unwrap_err().contains("not YAML"));
        let bomb = (0..9).fold("a0: &a0 [x,x,x,x,x,x,x,x,x]\n".to_owned(), |text, i| {
            format!("{text}a{}: &a{} [*a{i},*a{i},*a{i},*a{i},*a{i},*a{i},*a{i},*a{i},*a{i}]\n", i + 1, i + 1)
        });
        assert!(import_wassette_policy(&bomb).is_err());
        let empty = import_wassette_policy("version: \"1.0\"\npermissions: {}\n").unwrap();
        assert_eq!(parsed(&empty).grants.network.len(), 0);
    }
}
