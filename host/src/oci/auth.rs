//! Registry credentials from the Docker configuration file, as `docker login` writes it:
//! `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. For a registry, a
//! credential helper (`credHelpers` for it, else `credsStore`) is asked through
//! `docker-credential-<helper> get`; else its `auths` entry (`auth`, base64 of
//! `user:password`, or `username` and `password`); else the registry is used anonymously.
//! Errors name the file and the registry, never a secret.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use base64::Engine as _;
use oci_client::secrets::RegistryAuth;
use serde::Deserialize;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
    #[serde(default)]
    cred_helpers: BTreeMap<String, String>,
    creds_store: Option<String>,
}

#[derive(Deserialize, Default)]
struct AuthEntry {
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
    identitytoken: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct HelperAnswer {
    username: String,
    secret: String,
}

/// The Docker configuration file read: `$DOCKER_CONFIG/config.json`, else
/// `~/.docker/config.json`.
pub fn docker_config_path() -> Option<PathBuf> {
    match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => Some(PathBuf::from(dir).join("config.json")),
        None => std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".docker").join("config.json")),
    }
}

/// `registry:port` as configuration keys may write it (`https://registry:port/v1/`),
/// with Docker Hub's names made one.
fn normalize(key: &str) -> String {
    let host = key.split_once("://").map_or(key, |(_, rest)| rest);
    let host = host.split('/').next().unwrap_or(host).to_ascii_lowercase();
    match host.as_str() {
        "docker.io" | "registry-1.docker.io" | "index.docker.io" => "index.docker.io".to_owned(),
        _ => host,
    }
}

/// The credentials for `registry` (as `oci_client::Reference::resolve_registry` names
/// it).
pub fn credentials(registry: &str) -> Result<RegistryAuth, String> {
    let Some(path) = docker_config_path() else { return Ok(RegistryAuth::Anonymous) };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RegistryAuth::Anonymous),
        Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
    };
    let config: DockerConfig =
        serde_json::from_str(&text).map_err(|e| format!("{}: not a Docker configuration file: {e}", path.display()))?;
    let wanted = normalize(registry);
    let helper = config
        .cred_helpers
        .iter()
        .find(|(key, _)| normalize(key) == wanted)
        .map(|(key, helper)| (key.clone(), helper.clone()));
    let entry = config.auths.iter().find(|(key, _)| normalize(key) == wanted);
    if let Some((server, helper)) = helper.or_else(|| {
        config.creds_store.clone().map(|store| (entry.map_or(registry.to_owned(), |(key, _)| key.clone()), store))
    }) {
        return ask_helper(&helper, &server, registry);
    }
    let Some((_, entry)) = entry else { return Ok(RegistryAuth::Anonymous) };
    let shown = || format!("{}: the entry for {registry}", path.display());
    if entry.identitytoken.is_some() {
        return Err(format!("{}: an identity token (OAuth refresh) is not supported; log in with a password", shown()));
    }
    if let (Some(user), Some(password)) = (&entry.username, &entry.password) {
        return Ok(RegistryAuth::Basic(user.clone(), password.clone()));
    }
    let Some(auth) = &entry.auth else { return Ok(RegistryAuth::Anonymous) };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(auth.trim())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| format!("{}: `auth` is not base64 of `user:password`", shown()))?;
    let (user, password) =
        decoded.split_once(':').ok_or_else(|| format!("{}: `auth` is not base64 of `user:password`", shown()))?;
    Ok(RegistryAuth::Basic(user.to_owned(), password.to_owned()))
}

/// `docker-credential-<helper> get`, the server on stdin, `{"Username","Secret"}` back.
fn ask_helper(helper: &str, server: &str, registry: &str) -> Result<RegistryAuth, String> {
    let program = format!("docker-credential-{helper}");
    let failed = |why: String| format!("credential helper `{program}` for {registry}: {why}");
    let mut child = Command::new(&program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| failed(format!("cannot run it: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(server.as_bytes()).map_err(|e| failed(e.to_string()))?;
    }
    let output = child.wait_with_output().map_err(|e| failed(e.to_string()))?;
    if !output.status.success() {
        // Helpers say "credentials not found in native keychain" for a registry they
        // hold nothing for: anonymous, as docker does.
        return Ok(RegistryAuth::Anonymous);
    }
    let answer: HelperAnswer = serde_json::from_slice(&output.stdout)
        .map_err(|_| failed("its answer is not the helper protocol's JSON".into()))?;
    if answer.username == "<token>" {
        return Err(failed("it holds an identity token (OAuth refresh), which is not supported".into()));
    }
    Ok(RegistryAuth::Basic(answer.username, answer.secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_keys_name_registries_in_several_ways() {
        assert_eq!(normalize("https://127.0.0.1:5000/v1/"), "127.0.0.1:5000");
        assert_eq!(normalize("Registry.Example.com"), "registry.example.com");
        assert_eq!(normalize("https://index.docker.io/v1/"), normalize("docker.io"));
    }
}
