//! `deploy/`: the Kubernetes manifests pass the Kubernetes schemas (offline, with
//! `kubernetes-validate` from PyPI), and the image, the manifests and the binary agree:
//! the configuration in the ConfigMap loads, the Deployment's command serves, its probes
//! answer, and the Secret's token is the one the server asks for.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use toolhost_tests::wire::{HttpSession, initialize_request};
use toolhost_tests::{RedisServer, mcp_python, spawn_http_server, toolhost_bin};

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy")
}

fn kubernetes_validate(files: &[PathBuf]) -> Output {
    let validator = mcp_python().with_file_name("kubernetes-validate");
    Command::new(validator).arg("--strict").args(files).output().expect("run kubernetes-validate")
}

/// Every manifest's documents and the Dockerfile's instructions, as JSON.
fn facts() -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/facts.py");
    let output = Command::new(mcp_python()).arg(script).arg(deploy_dir()).output().expect("run facts.py");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("JSON")
}

/// The one document of `file`.
fn manifest<'a>(facts: &'a Value, file: &str) -> &'a Value {
    let documents = facts["manifests"][file].as_array().unwrap_or_else(|| panic!("no {file}"));
    assert_eq!(documents.len(), 1, "{file} holds one resource");
    &documents[0]
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| items.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

#[test]
fn the_kubernetes_manifests_pass_the_kubernetes_schemas_offline() {
    let dir = deploy_dir().join("kubernetes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml") && !path.ends_with("kustomization.yaml"))
        .collect();
    files.sort();
    let kinds = ["ConfigMap", "Deployment", "HorizontalPodAutoscaler", "Secret", "Service"];
    let output = kubernetes_validate(&files);
    let said = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{said}");
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy();
        assert!(said.contains(&format!("{name} passed for resource")), "{name} was validated: {said}");
    }
    let facts = facts();
    let found: BTreeSet<&str> = facts["manifests"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|docs| docs.as_array().unwrap())
        .filter_map(|d| d["kind"].as_str())
        .collect();
    for kind in kinds {
        assert!(found.contains(kind), "{kind} in deploy/kubernetes: {found:?}");
    }
    // `kubectl apply -k` applies every resource but the Secret, which holds placeholders.
    let listed: BTreeSet<String> = strings(&manifest(&facts, "kustomization.yaml")["resources"]).into_iter().collect();
    let expected: BTreeSet<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|name| name != "secret.yaml")
        .collect();
    assert_eq!(listed, expected);

    // The validator refuses what the schemas refuse: it is no formality.
    let broken = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(dir.join("deployment.yaml")).unwrap();
    let mutated = text.replace("containerPort: 8080", "containerPort: \"eighty\"");
    assert_ne!(mutated, text);
    std::fs::write(broken.path().join("deployment.yaml"), mutated).unwrap();
    let output = kubernetes_validate(&[broken.path().join("deployment.yaml")]);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("containerPort: 'eighty' is not of type 'integer'"),
        "{output:?}"
    );
}

#[test]
fn the_image_and_the_manifests_agree_with_what_the_binary_serves() {
    let facts = facts();
    let dockerfile = facts["dockerfile"].as_array().unwrap();
    let values = |instruction: &str| -> Vec<&str> {
        dockerfile.iter().filter(|i| i["instruction"] == instruction).map(|i| i["value"].as_str().unwrap()).collect()
    };
    // Multi-stage: a build stage, then a small runtime image with the binary and the stdlib.
    let stages = values("FROM");
    assert_eq!(stages.len(), 2, "{stages:?}");
    assert!(stages[0].starts_with("rust:1.95") && stages[1].starts_with("debian:bookworm-slim"), "{stages:?}");
    assert!(values("COPY").iter().filter(|c| c.starts_with("--from=build")).count() >= 2);
    let user = *values("USER").last().expect("USER");
    assert_eq!(user, "10001:10001", "the image runs as an unprivileged user");
    assert_eq!(values("EXPOSE"), ["8080"]);
    assert_eq!(values("ENTRYPOINT"), [r#"["/usr/local/bin/toolhost"]"#]);
    let image_cmd: Vec<String> = serde_json::from_str(values("CMD")[0]).unwrap();
    let image_env = values("ENV").join(" ");

    let deployment = manifest(&facts, "deployment.yaml");
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["runAsUser"], 10001);
    let container = &pod["containers"][0];
    let args = strings(&container["args"]);
    assert_eq!(args[..image_cmd.len()], image_cmd[..], "the Deployment runs the image's command, then names its hosts");
    assert_eq!(container["ports"][0]["containerPort"], 8080);
    assert_eq!(container["ports"][0]["name"], "http");
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/ready");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/health");
    assert_eq!(container["readinessProbe"]["httpGet"]["port"], "http");
    let init = strings(&pod["initContainers"][0]["args"]);
    assert!(init.ends_with(&["pull".to_owned(), "--locked".to_owned()]), "{init:?}");

    let service = manifest(&facts, "service.yaml");
    assert_eq!(service["spec"]["selector"], deployment["spec"]["template"]["metadata"]["labels"]);
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "http");
    let hpa = manifest(&facts, "hpa.yaml");
    assert_eq!(hpa["spec"]["scaleTargetRef"]["name"], deployment["metadata"]["name"]);
    assert!(container["resources"]["requests"]["cpu"].is_string(), "the autoscaler needs a CPU request");

    // The Secret holds exactly the variables the configuration reads.
    let secret = manifest(&facts, "secret.yaml");
    assert_eq!(container["envFrom"][0]["secretRef"]["name"], secret["metadata"]["name"]);
    let secret_keys: BTreeSet<&str> = secret["stringData"].as_object().unwrap().keys().map(String::as_str).collect();
    let config_text = manifest(&facts, "configmap.yaml")["data"]["toolhost.toml"].as_str().unwrap().to_owned();
    let lock_text = manifest(&facts, "lock-configmap.yaml")["data"]["toolhost.lock"].as_str().unwrap().to_owned();
    let read: BTreeSet<&str> =
        config_text.split("env = \"").skip(1).filter_map(|rest| rest.split('"').next()).collect();
    assert_eq!(secret_keys, read);
    let projected: Vec<&str> = pod["volumes"][0]["projected"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|source| source["configMap"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(projected, ["toolhost", "toolhost-lock"]);

    // The binary as the Deployment runs it, on this machine's paths: the image's
    // directories, the mounted configuration, the Secret's variables, a real Redis.
    let root = tempfile::tempdir().unwrap();
    let redis = RedisServer::start();
    let etc = root.path().join("etc/toolhost");
    std::fs::create_dir_all(&etc).unwrap();
    let mut config = config_text.clone();
    for (from, to) in [
        ("/var/lib/toolhost/tools", root.path().join("tools").display().to_string()),
        ("/usr/share/toolhost/stdlib", root.path().join("stdlib").display().to_string()),
    ] {
        assert!(config.contains(from), "the ConfigMap names {from}");
        config = config.replace(from, &to);
    }
    std::fs::write(etc.join("toolhost.toml"), config).unwrap();
    std::fs::write(etc.join("toolhost.lock"), lock_text).unwrap();
    let token = "a-token-of-the-test-0123456789abcdef";
    // A container's environment: the image's, and the Secret's variables only when
    // its spec takes them from the Secret.
    let environment = |command: &mut Command, container: &Value| {
        command.env_clear().env("PATH", std::env::var_os("PATH").unwrap_or_default());
        for (variable, dir) in
            [("TOOLHOST_DATA_DIR", "data"), ("TOOLHOST_CACHE_DIR", "cache"), ("TOOLHOST_STDLIB_DIR", "stdlib")]
        {
            assert!(image_env.contains(variable), "the image sets {variable}");
            command.env(variable, root.path().join(dir));
        }
        if container["envFrom"][0]["secretRef"]["name"] == secret["metadata"]["name"] {
            command
                .env("TOOLHOST_TOKEN_PLANNER", token)
                .env("TOOLHOST_APPROVAL_KEY", "k".repeat(40))
                .env("TOOLHOST_REDIS_URL", &redis.url);
        }
    };
    let on_this_machine = |args: &[String]| -> Vec<String> {
        args.iter()
            .map(|arg| match arg.as_str() {
                "/etc/toolhost/toolhost.toml" => etc.join("toolhost.toml").display().to_string(),
                "0.0.0.0:8080" => "127.0.0.1:0".to_owned(),
                other => other.to_owned(),
            })
            .collect()
    };

    // The init container refuses what the example lock does not pin, writing nothing.
    let mut pull = Command::new(toolhost_bin());
    pull.args(on_this_machine(&init));
    environment(&mut pull, &pod["initContainers"][0]);
    let pulled = pull.output().unwrap();
    assert_eq!(pulled.status.code(), Some(14), "{pulled:?}");
    assert!(
        String::from_utf8_lossy(&pulled.stderr)
            .contains("weather/forecast (oci://registry.example.com/tools/forecast:1.2) is not pinned")
    );
    assert!(!root.path().join("tools").exists());

    // The Secret as shipped holds no credential anyone could use: a replica given it as
    // it is refuses to start, naming the variable.
    let mut shipped = Command::new(toolhost_bin());
    shipped.args(on_this_machine(&args)).stdout(Stdio::null()).stderr(Stdio::piped());
    environment(&mut shipped, container);
    for (variable, value) in secret["stringData"].as_object().unwrap() {
        assert_eq!(value, "", "{variable} is a placeholder no replica takes");
        shipped.env(variable, "");
    }
    let mut shipped = shipped.spawn().unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = shipped.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = shipped.kill();
            panic!("a replica given the placeholder Secret serves");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut shipped.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success() && stderr.contains("is empty"), "{status}: {stderr}");

    let mut serve = Command::new(toolhost_bin());
    serve.args(on_this_machine(&args));
    environment(&mut serve, container);
    let (mut child, addr) = spawn_http_server(serve).expect("the Deployment's command serves");
    let get = |path: &str| HttpSession::connect(&addr, path).request("GET", None, &[]).status;
    HttpSession::wait_until_ready(&addr, None, Duration::from_secs(60));
    assert_eq!(get("/health"), 200);
    let mut anonymous = HttpSession::connect(&addr, "/mcp");
    assert_eq!(anonymous.post(&initialize_request()).status, 401, "the server wants the Secret's token");
    let session = HttpSession::start(&addr, "/mcp", Some(&format!("Bearer {token}")));
    assert!(session.session.is_some());
    let _ = child.kill();
    let _ = child.wait();

    // The storage is the Redis the Secret's URL names: a value set through the
    // configuration as the Deployment has it is there, and not in another Redis.
    let storage = |args: &[&str], redis_url: &str| {
        let mut command = Command::new(toolhost_bin());
        command.arg("--config").arg(etc.join("toolhost.toml")).arg("storage").args(args);
        environment(&mut command, container);
        command.env("TOOLHOST_REDIS_URL", redis_url).output().unwrap()
    };
    let bucket = "weather/forecast:default";
    let set = storage(&["set", bucket, "city", "Lyon"], &redis.url);
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    let got = storage(&["get", bucket, "city"], &redis.url);
    assert_eq!(String::from_utf8_lossy(&got.stdout), "Lyon", "{}", String::from_utf8_lossy(&got.stderr));
    let other = RedisServer::start();
    let elsewhere = storage(&["keys", bucket], &other.url);
    assert!(elsewhere.status.success(), "{}", String::from_utf8_lossy(&elsewhere.stderr));
    assert_eq!(String::from_utf8_lossy(&elsewhere.stdout).trim(), "", "another Redis holds nothing");
    assert!(!root.path().join("data").join("storage.sqlite3").exists(), "no SQLite file beside it");
}
