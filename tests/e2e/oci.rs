//! Components from an OCI registry: `toolhost push` in the CNCF Wasm OCI layout,
//! `toolhost pull` into the blob store, the layer's root and `toolhost.lock`, pins that
//! hold when a tag moves, hosts that reload when the lock changes and refuse bytes the
//! lock does not pin, digests checked on every pull, and credentials from the Docker
//! configuration file. Against a real registry (the CNCF distribution registry,
//! `docker-registry`) on loopback.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::HostConfig;
use toolhost_tests::{
    OciRegistry, component, cosign_keygen, cosign_registry, mcp_python, next_change, sha256sum, toolhost_bin,
    write_atomically,
};

/// Runs the CLI with `config`, with Docker credentials read from `docker_config` only.
fn toolhost(config: &Path, docker_config: &Path, args: &[&str]) -> Output {
    Command::new(toolhost_bin())
        .arg("--config")
        .arg(config)
        .args(args)
        .env("DOCKER_CONFIG", docker_config)
        .env("TOOLHOST_CACHE_DIR", config.parent().unwrap().join("cache"))
        .output()
        .expect("run toolhost")
}

fn success(output: &Output) -> Value {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

/// The manifest as the registry serves it, read with Python's urllib (not the host's
/// client): its digest and its JSON.
fn manifest_of(registry: &str, repository: &str, tag: &str) -> (String, Value) {
    let script = "import hashlib, json, sys, urllib.request\n\
        request = urllib.request.Request(sys.argv[1], headers={'Accept': 'application/vnd.oci.image.manifest.v1+json'})\n\
        body = urllib.request.urlopen(request).read()\n\
        print(json.dumps({'digest': 'sha256:' + hashlib.sha256(body).hexdigest(), 'manifest': json.loads(body)}))\n";
    let url = format!("http://{registry}/v2/{repository}/manifests/{tag}");
    let output = Command::new(mcp_python()).args(["-c", script, &url]).output().expect("run python");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    (answer["digest"].as_str().unwrap().to_owned(), answer["manifest"].clone())
}

fn write_config(dir: &Path, registry: &str, reference: &str) -> PathBuf {
    let config = dir.join("toolhost.toml");
    let text = format!(
        "[[layer]]\nname = \"org\"\nroot = \"org\"\n\n[layer.oci.calc]\nmath = \"{reference}\"\n\n\
         [oci]\nplain_http = [\"{registry}\"]\nstore = \"store\"\n"
    );
    std::fs::write(&config, text).unwrap();
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn components_pushed_to_a_registry_are_pulled_pinned_and_served() {
    let registry = OciRegistry::start();
    let dir = tempfile::tempdir().unwrap();
    let no_credentials = dir.path().join("docker");
    let reference = format!("oci://{}/tools/calc:1.0", registry.addr);
    let config = write_config(dir.path(), &registry.addr, &reference);
    let (math, text) = (component("math"), component("text"));

    // Push: the CNCF Wasm OCI layout, as another client reads it.
    let pushed = success(&toolhost(&config, &no_credentials, &["push", math.to_str().unwrap(), &reference]));
    assert_eq!(pushed["sha256"], json!(sha256sum(&math)));
    let (manifest_digest, manifest) = manifest_of(&registry.addr, "tools/calc", "1.0");
    assert_eq!(pushed["manifest"], json!(manifest_digest));
    assert_eq!(manifest["config"]["mediaType"], json!("application/vnd.wasm.config.v0+json"));
    assert_eq!(manifest["layers"].as_array().unwrap().len(), 1, "{manifest}");
    assert_eq!(manifest["layers"][0]["mediaType"], json!("application/wasm"));
    assert_eq!(manifest["layers"][0]["digest"], json!(sha256sum(&math)));

    // Pull: into the store, the layer's root and the lock.
    let pulled = success(&toolhost(&config, &no_credentials, &["pull"]));
    let first = &pulled["components"][0];
    assert_eq!(first["name"], json!("calc/math"));
    assert_eq!(first["manifest"], json!(manifest_digest));
    assert_eq!(
        (&first["downloaded"], &first["written"], &first["pin_changed"]),
        (&json!(true), &json!(true), &json!(true))
    );
    let served_file = dir.path().join("org/calc/math.wasm");
    assert_eq!(sha256sum(&served_file), sha256sum(&math));
    let stored = dir.path().join("store/blobs/sha256").join(&sha256sum(&math)["sha256:".len()..]);
    assert_eq!(sha256sum(&stored), sha256sum(&math), "the blob store holds it by digest");
    let lock_path = dir.path().join("toolhost.lock");
    let lock = std::fs::read_to_string(&lock_path).unwrap();
    for expected in [reference.as_str(), manifest_digest.as_str(), &sha256sum(&math), "name = \"calc/math\""] {
        assert!(lock.contains(expected), "{expected} missing from\n{lock}");
    }
    let called = success(&toolhost(&config, &no_credentials, &["call", "calc/add", "--input", r#"{"numbers":[1,2]}"#]));
    assert_eq!(called, json!({ "value": 3.0 }));
    let again = success(&toolhost(&config, &no_credentials, &["pull"]));
    let again = &again["components"][0];
    assert_eq!(
        (&again["downloaded"], &again["written"], &again["pin_changed"]),
        (&json!(false), &json!(false), &json!(false))
    );
    assert_eq!(std::fs::read_to_string(&lock_path).unwrap(), lock, "an unchanged toolset writes the same lock");

    // A host serving the configuration, watching its files and its lock.
    let host_config = HostConfig::load(&config).unwrap();
    let host = host_config.builder().build().await.unwrap();
    let mut changes = host.subscribe();
    let _files = host.watch(Duration::from_millis(50)).unwrap();
    let _config = host_config.watch(&host, &config, Duration::from_millis(50), None).unwrap();
    assert_eq!(host.call("calc/add", json!({ "numbers": [2, 2] })).await.unwrap(), json!({ "value": 4.0 }));
    let shown = serde_json::to_value(host.inspect_file(&served_file).await.unwrap()).unwrap();
    assert_eq!(shown["verified"]["pinned_by"], json!([lock_path]));

    // The tag moves: the pin holds until --update moves it, then the host serves it.
    success(&toolhost(&config, &no_credentials, &["push", text.to_str().unwrap(), &reference]));
    let pinned = success(&toolhost(&config, &no_credentials, &["pull"]));
    assert_eq!(pinned["components"][0]["sha256"], json!(sha256sum(&math)), "pulled by the pinned digest");
    assert_eq!(sha256sum(&served_file), sha256sum(&math));
    let updated = success(&toolhost(&config, &no_credentials, &["pull", "--update"]));
    assert_eq!(updated["components"][0]["sha256"], json!(sha256sum(&text)));
    assert_eq!(updated["components"][0]["pin_changed"], json!(true));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while host.call("calc/slugify", json!({ "text": "A b" })).await.is_err() {
        assert!(std::time::Instant::now() < deadline, "the new version was not served: {:?}", host.load_errors());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());

    // Bytes the lock does not pin: refused, naming both digests; the pinned version stays.
    while changes.try_recv().is_ok() {}
    write_atomically(&served_file, &std::fs::read(&math).unwrap());
    let change = next_change(&mut changes, 20).await;
    assert_eq!(change.errors.len(), 1, "{change:?}");
    let message = change.errors[0].to_string();
    assert!(message.contains(&format!("its bytes are {}", sha256sum(&math))), "{message}");
    assert!(message.contains(&format!("{} pins {}", lock_path.display(), sha256sum(&text))), "{message}");
    assert_eq!(host.call("calc/slugify", json!({ "text": "A b" })).await.unwrap(), json!({ "slug": "a-b" }));

    // A pull puts the pinned bytes back.
    let repaired = success(&toolhost(&config, &no_credentials, &["pull"]));
    assert_eq!(repaired["components"][0]["written"], json!(true));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !host.load_errors().is_empty() {
        assert!(std::time::Instant::now() < deadline, "still refused: {:?}", host.load_errors());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Bytes the registry serves that are not what the manifest names: refused, and
    // nothing is written. (Another directory, with an empty store.)
    let other = tempfile::tempdir().unwrap();
    let by_digest = format!("oci://{}/tools/calc@{manifest_digest}", registry.addr);
    let other_config = write_config(other.path(), &registry.addr, &by_digest);
    let blob = registry.blob_path(&sha256sum(&math));
    let mut damaged = std::fs::read(&blob).unwrap();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0xff;
    std::fs::write(&blob, &damaged).unwrap();
    let refused = toolhost(&other_config, &no_credentials, &["pull"]);
    assert_eq!(refused.status.code(), Some(14), "{}", String::from_utf8_lossy(&refused.stderr));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("error[oci]: calc/math") && stderr.to_lowercase().contains("digest"), "{stderr}");
    assert!(!other.path().join("org").exists() && !other.path().join("toolhost.lock").exists());
}

#[test]
fn registry_credentials_come_from_the_docker_configuration_file() {
    let registry = OciRegistry::start_with_password("alice", "s3cret-pw");
    let dir = tempfile::tempdir().unwrap();
    let reference = format!("oci://{}/tools/calc:1.0", registry.addr);
    let config = write_config(dir.path(), &registry.addr, &reference);
    let math = component("math");
    let docker = |name: &str, auth: Option<&str>| {
        let docker = dir.path().join(name);
        std::fs::create_dir_all(&docker).unwrap();
        if let Some(auth) = auth {
            use base64::Engine as _;
            let auth = base64::engine::general_purpose::STANDARD.encode(auth);
            let file = json!({ "auths": { registry.addr.clone(): { "auth": auth } } });
            std::fs::write(docker.join("config.json"), file.to_string()).unwrap();
        }
        docker
    };

    for (who, auth) in [("nobody", None), ("wrong", Some("alice:not-it"))] {
        let refused = toolhost(&config, &docker(who, auth), &["push", math.to_str().unwrap(), &reference]);
        assert_eq!(refused.status.code(), Some(14), "{who}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("error[oci]") && !stderr.contains("not-it"), "{who}: {stderr}");
    }
    let alice = docker("alice", Some("alice:s3cret-pw"));
    let pushed = success(&toolhost(&config, &alice, &["push", math.to_str().unwrap(), &reference]));
    assert_eq!(pushed["sha256"], json!(sha256sum(&math)));
    let refused = toolhost(&config, &docker("nobody", None), &["pull"]);
    assert_eq!(refused.status.code(), Some(14));
    let pulled = success(&toolhost(&config, &alice, &["pull"]));
    assert_eq!(pulled["components"][0]["sha256"], json!(sha256sum(&math)));
}

/// A registry that answers every manifest request with 64 MiB, announcing its length
/// (`Content-Length`) or not (the body ends when the connection closes); the bytes it
/// got to send before the client hung up are counted.
struct HugeManifestRegistry {
    addr: String,
    sent: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl HugeManifestRegistry {
    fn start(announce_length: bool) -> HugeManifestRegistry {
        use std::io::{BufRead, BufReader, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counted = sent.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut request_line = String::new();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let _ = reader.read_line(&mut request_line);
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                }
                if !request_line.contains("/manifests/") {
                    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
                    continue;
                }
                let length = if announce_length { "Content-Length: 67108864\r\n" } else { "" };
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\n{length}Connection: close\r\n\r\n"
                );
                let _ = stream.write_all(head.as_bytes());
                let chunk = vec![b' '; 64 << 10];
                for _ in 0..1024 {
                    if stream.write_all(&chunk).is_err() {
                        break;
                    }
                    counted.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                }
            }
        });
        HugeManifestRegistry { addr, sent }
    }
}

#[test]
fn a_registry_serving_a_huge_manifest_is_refused_at_the_bound() {
    for announce_length in [true, false] {
        let registry = HugeManifestRegistry::start(announce_length);
        let dir = tempfile::tempdir().unwrap();
        let config = write_config(dir.path(), &registry.addr, &format!("oci://{}/tools/calc:1.0", registry.addr));
        let output = toolhost(&config, &dir.path().join("docker"), &["pull"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{stderr}");
        assert!(
            stderr.contains("the registry's manifest is over 4 MiB"),
            "length announced: {announce_length}: {stderr}"
        );
        // The client stopped reading at the bound: the rest was never sent (the socket
        // buffers hold a few MiB more at most).
        let sent = registry.sent.load(std::sync::atomic::Ordering::Relaxed);
        assert!(sent < 16 << 20, "length announced: {announce_length}: {sent} bytes were sent");
    }
}

/// `toolhost pull` with `[signatures]` in the configuration, failing: its exit code and
/// error, and nothing written into the layer.
fn refused_pull(config: &Path, docker: &Path) -> String {
    let output = toolhost(config, docker, &["pull"]);
    assert_eq!(output.status.code(), Some(toolhost::exit::LOAD as i32), "{}", String::from_utf8_lossy(&output.stdout));
    assert!(!config.parent().unwrap().join("org/calc/math.wasm").exists(), "nothing is written");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn signatures_travel_beside_the_component_in_the_registry() {
    let registry = OciRegistry::start();
    let dir = tempfile::tempdir().unwrap();
    let docker = dir.path().join("docker");
    let reference = format!("oci://{}/tools/calc:1.0", registry.addr);
    let config = write_config(dir.path(), &registry.addr, &reference);
    let (ours, theirs) = (cosign_keygen(dir.path(), "ours"), cosign_keygen(dir.path(), "theirs"));
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}\n[signatures]\nkeys = [\"ours/cosign.pub\"]\n")).unwrap();
    let math = component("math");
    let push = |key: Option<&Path>| {
        let mut args = vec!["push", math.to_str().unwrap(), reference.as_str()];
        if let Some(key) = key {
            args.extend(["--sign-key", key.to_str().unwrap()]);
        }
        success(&toolhost(&config, &docker, &args))
    };

    // Unsigned, or signed by a key not configured: refused, nothing written.
    let unsigned = push(None);
    assert_eq!(unsigned.get("signature"), None);
    let error = refused_pull(&config, &docker);
    assert!(error.contains("unsigned") && error.contains(".sig"), "{error}");
    push(Some(&theirs.join("cosign.key")));
    let error = refused_pull(&config, &docker);
    assert!(error.contains("is by a configured key") && error.contains("ours/cosign.pub"), "{error}");

    // Signed by ours: cosign's layout, which another implementation verifies.
    let pushed = push(Some(&ours.join("cosign.key")));
    let manifest = pushed["manifest"].as_str().unwrap();
    assert_eq!(pushed["signature"], json!(format!("{}.sig", manifest.replace(':', "-"))));
    let (_, signatures) = manifest_of(&registry.addr, "tools/calc", pushed["signature"].as_str().unwrap());
    assert_eq!(signatures["layers"][0]["mediaType"], json!("application/vnd.dev.cosign.simplesigning.v1+json"));
    let ours_pub = ours.join("cosign.pub");
    let checked = cosign_registry(&["verify", &registry.addr, "tools/calc", manifest, ours_pub.to_str().unwrap()]);
    assert_eq!(String::from_utf8_lossy(&checked.stdout).trim(), "verified", "{checked:?}");
    let theirs_pub = theirs.join("cosign.pub");
    let checked = cosign_registry(&["verify", &registry.addr, "tools/calc", manifest, theirs_pub.to_str().unwrap()]);
    assert!(!checked.status.success(), "their key did not sign this");

    // The pull checks it and records who signed; the host serves it with no `.sig` file.
    let pulled = success(&toolhost(&config, &docker, &["pull"]));
    assert_eq!(pulled["components"][0]["manifest"], json!(manifest));
    let lock = std::fs::read_to_string(dir.path().join("toolhost.lock")).unwrap();
    assert!(lock.contains("signed_by = ") && lock.contains("cosign.pub"), "{lock}");
    let called = success(&toolhost(&config, &docker, &["call", "calc/add", "--input", r#"{"numbers":[1,2]}"#]));
    assert_eq!(called, json!({ "value": 3.0 }));
    let served = dir.path().join("org/calc/math.wasm");
    let shown = success(&toolhost(&config, &docker, &["inspect", served.to_str().unwrap()]));
    assert!(shown["verified"]["signed_by"].as_str().unwrap().ends_with("ours/cosign.pub"), "{shown}");
    assert!(!tools_sig(&served).exists());

    // A signature written by another implementation, in cosign's layout, is accepted.
    let unsigned = push(None);
    let manifest = unsigned["manifest"].as_str().unwrap();
    let key = ours.join("cosign.key");
    let signed = cosign_registry(&["sign", &registry.addr, "tools/calc", manifest, key.to_str().unwrap()]);
    assert!(signed.status.success(), "{}", String::from_utf8_lossy(&signed.stderr));
    let updated = success(&toolhost(&config, &docker, &["pull", "--update"]));
    assert_eq!(updated["components"][0]["manifest"], json!(manifest));

    // A key cosign encrypted with a password is refused by name, never used.
    let encrypted = dir.path().join("encrypted.key");
    std::fs::write(
        &encrypted,
        "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n",
    )
    .unwrap();
    let refused = toolhost(
        &config,
        &docker,
        &["push", math.to_str().unwrap(), &reference, "--sign-key", encrypted.to_str().unwrap()],
    );
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("password-encrypted"));
}

fn tools_sig(component: &Path) -> PathBuf {
    toolhost::trust::signature_path(component)
}
