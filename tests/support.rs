//! Shared helpers of the end-to-end tests: where the freshly built components are, and
//! throwaway tools directories laid out the way operators lay them out.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use tempfile::TempDir;

#[path = "support/wire.rs"]
pub mod wire;

#[path = "../xtask/src/test_programs.rs"]
pub mod test_programs;

// The tests and benchmarks run on the allocator the `toolhost` binary runs on.
toolhost::use_host_allocator!();

/// Directory holding every component built for this test run.
pub fn guest_dir() -> PathBuf {
    PathBuf::from(env!("TOOLHOST_GUEST_DIR"))
}

/// Path of a built component by crate name (`math`, `hostile`, `future-contract`): for
/// a stdlib crate that is installed pre-initialized, its snapshot, as `cargo xtask stdlib`
/// installs it.
pub fn component(crate_name: &str) -> PathBuf {
    let path = built_component(crate_name);
    match preinit_export(crate_name) {
        Some(export) => preinitialized(&path, export),
        None => path,
    }
}

/// The manifest a stdlib crate ships (`stdlib/<dir>/manifest.toml`).
pub fn shipped_manifest(crate_dir: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../stdlib").join(crate_dir).join("manifest.toml");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Path of a component as its crate built it, never pre-initialized.
pub fn built_component(crate_name: &str) -> PathBuf {
    let path = guest_dir().join(format!("{}.wasm", crate_name.replace('-', "_")));
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// The export a stdlib crate is pre-initialized with, as its `Cargo.toml` says.
pub fn preinit_export(crate_name: &str) -> Option<&'static str> {
    let pairs = env!("TOOLHOST_PREINIT_CRATES").split(',').filter_map(|pair| pair.split_once('='));
    pairs.into_iter().find(|(name, _)| *name == crate_name).map(|(_, export)| export)
}

/// `component` snapshotted after `export` ran (`toolhost::preinitialize`, as `toolhost
/// preinit` does), kept beside the built components by content hash so a test run
/// pre-initializes each build once.
pub fn preinitialized(component: &Path, export: &str) -> PathBuf {
    static MAKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let bytes = std::fs::read(component).unwrap_or_else(|e| panic!("{}: {e}", component.display()));
    let hash = blake3::hash(&bytes).to_hex();
    let dir = guest_dir().join("preinit");
    let stem = component.file_stem().unwrap_or_default().to_string_lossy();
    let snapshot = dir.join(format!("{stem}-{export}-{}.wasm", &hash[..16]));
    let _making = MAKING.lock().unwrap_or_else(|e| e.into_inner());
    if snapshot.is_file() {
        return snapshot;
    }
    let preinit = toolhost::Preinit { init_export: export.to_owned(), ..toolhost::Preinit::default() };
    // On a thread of its own: a test calling this may be inside a runtime already.
    let made = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
                runtime.block_on(toolhost::preinitialize(&bytes, &preinit))
            })
            .join()
            .expect("pre-initialization thread")
    });
    let made = made.unwrap_or_else(|e| panic!("{} {e}", component.display()));
    toolhost::oci::write_atomically(&snapshot, &made).expect("write a pre-initialized component");
    // Earlier builds' snapshots of the same crate (tens of MB each for Python) go.
    let earlier = format!("{stem}-{export}-");
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&earlier) && entry.path() != snapshot {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    snapshot
}

/// Directory holding the example tools written in JavaScript, Python, C and Go, built for
/// this test run (`js_units.wasm`, `js_units_starlingmonkey.wasm`, `py_dates.wasm`,
/// `c_checksum.wasm`, `go_cron.wasm`).
pub fn polyglot_dir() -> PathBuf {
    PathBuf::from(env!("TOOLHOST_POLYGLOT_DIR"))
}

/// Path of a built JavaScript, Python, C or Go example tool by name (`js_units`, …).
pub fn polyglot_component(name: &str) -> PathBuf {
    let path = polyglot_dir().join(format!("{name}.wasm"));
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// A temporary tools root.
pub struct ToolsDir {
    dir: TempDir,
}

impl ToolsDir {
    pub fn new() -> Self {
        ToolsDir { dir: tempfile::Builder::new().prefix("toolhost-tools-").tempdir().expect("temp dir") }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copies a built component to `<namespace>/<file_stem>.wasm`.
    pub fn install(&self, crate_name: &str, namespace: &str, file_stem: &str) -> PathBuf {
        self.write(
            namespace,
            &format!("{file_stem}.wasm"),
            &std::fs::read(component(crate_name)).expect("read component"),
        )
    }

    /// Copies a built JavaScript, Python, C or Go example tool to `<namespace>/<name>.wasm`.
    pub fn install_polyglot(&self, name: &str, namespace: &str) -> PathBuf {
        self.write(
            namespace,
            &format!("{name}.wasm"),
            &std::fs::read(polyglot_component(name)).expect("read component"),
        )
    }

    /// Writes arbitrary bytes to `<namespace>/<file>`.
    pub fn write(&self, namespace: &str, file: &str, bytes: &[u8]) -> PathBuf {
        let dir = self.path().join(namespace);
        std::fs::create_dir_all(&dir).expect("create namespace dir");
        let path = dir.join(file);
        std::fs::write(&path, bytes).expect("write file");
        path
    }

    /// Writes the manifest `<namespace>/<file_stem>.toml`.
    pub fn manifest(&self, namespace: &str, file_stem: &str, toml: &str) -> PathBuf {
        self.write(namespace, &format!("{file_stem}.toml"), toml.as_bytes())
    }

    /// The conformance example toolbox (the MCP conformance suite's fixtures) under
    /// `conformance/`, with the files its shipped manifest reads and `manifest`, or else
    /// the shipped manifest (which grants the client's powers and declares prompts and
    /// resources). Returns the manifest's path.
    pub fn install_conformance(&self, manifest: Option<&str>) -> PathBuf {
        self.install("conformance", "conformance", "conformance");
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../example-tools/conformance");
        let image = std::fs::read(example.join("test-image.png")).expect("the conformance image");
        self.write("conformance", "test-image.png", &image);
        let shipped = std::fs::read_to_string(example.join("manifest.toml")).expect("the conformance manifest");
        self.manifest("conformance", "conformance", manifest.unwrap_or(&shipped))
    }

    /// The three example toolboxes under their own namespaces.
    pub fn with_examples() -> Self {
        let tools = ToolsDir::new();
        for name in ["math", "text", "json"] {
            tools.install(name, name, name);
        }
        tools
    }
}

impl Default for ToolsDir {
    fn default() -> Self {
        Self::new()
    }
}

/// The `toolhost` binary of the same profile as this test, built (or found up to date)
/// by cargo once per test run: `cargo test` builds only the libraries a test links, and
/// a stale binary would test yesterday's code. It is built with the whole workspace's
/// targets selected, as `cargo xtask test`, `soak` and `bench` select them, so that
/// cargo resolves the same features and reuses every dependency they built (selecting
/// only `-p toolhost` resolves other features and compiles TLS, HTTP and MCP again).
pub fn toolhost_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| cargo_build(&["--bins"]).join(format!("toolhost{}", std::env::consts::EXE_SUFFIX))).clone()
}

/// Builds `targets` of the workspace in this test's profile and target directory and
/// returns the profile's directory (`<target>/release`). The workspace and the e2e test
/// stay selected, as `cargo xtask test` selects them, so that cargo resolves the same
/// features and reuses what the suite built; the package variables of this test
/// process are kept from the nested cargo ([`nested_cargo`]) for the same reason.
pub fn cargo_build(targets: &[&str]) -> PathBuf {
    let exe = std::env::current_exe().expect("test exe path");
    // <target>/<profile>/deps/e2e-<hash>
    let profile_dir = exe.parent().and_then(Path::parent).expect("profile dir");
    let target_dir = profile_dir.parent().expect("target dir");
    let mut cargo = nested_cargo::cargo();
    cargo.args(["build", "--quiet", "--workspace", "--test", "e2e"]).args(targets).arg("--target-dir").arg(target_dir);
    if profile_dir.file_name().is_some_and(|name| name == "release") {
        cargo.arg("--release");
    }
    let status = cargo.status().expect("run cargo");
    assert!(status.success(), "cargo build {targets:?} failed");
    profile_dir.to_owned()
}

#[path = "../xtask/src/nested_cargo.rs"]
mod nested_cargo;

/// A real HTTP/1.1 server on 127.0.0.1 for outgoing-request tests. It answers every
/// request with `200`, an `x-served-by: toolhost-tests` header and a body naming the
/// method and path, and counts the requests it saw. Stops when dropped.
pub struct HttpServer {
    pub addr: std::net::SocketAddr,
    pub requests: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl HttpServer {
    pub async fn start() -> HttpServer {
        use std::sync::atomic::Ordering;

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let requests = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = requests.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let counter = counter.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                        counter.fetch_add(1, Ordering::SeqCst);
                        let body = format!("{} {}", request.method(), request.uri().path());
                        async move {
                            hyper::Response::builder()
                                .header("x-served-by", "toolhost-tests")
                                .body(http_body_util::Full::new(bytes::Bytes::from(body)))
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        HttpServer { addr, requests, task }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn request_count(&self) -> usize {
        self.requests.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A TLS server on 127.0.0.1 with a self-signed certificate for `127.0.0.1` (which no
/// client trusting only public roots accepts). Counts connections, handshakes that
/// completed, and HTTP requests served after one.
pub struct SelfSignedTlsServer {
    pub addr: std::net::SocketAddr,
    pub connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    pub handshakes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl SelfSignedTlsServer {
    pub async fn start() -> SelfSignedTlsServer {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};

        let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).expect("certificate");
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(certified.signing_key.serialize_der().into());
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(vec![certified.cert.der().clone()], key)
            .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let connections = Arc::new(AtomicUsize::new(0));
        let handshakes = Arc::new(AtomicUsize::new(0));
        let (connection_count, handshake_count) = (connections.clone(), handshakes.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                connection_count.fetch_add(1, Ordering::SeqCst);
                let acceptor = acceptor.clone();
                let handshake_count = handshake_count.clone();
                tokio::spawn(async move {
                    if let Ok(tls) = acceptor.accept(stream).await {
                        handshake_count.fetch_add(1, Ordering::SeqCst);
                        let service =
                            hyper::service::service_fn(|_request: hyper::Request<hyper::body::Incoming>| async {
                                hyper::Response::builder().body(http_body_util::Full::new(bytes::Bytes::from("secret")))
                            });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                            .await;
                    }
                });
            }
        });
        SelfSignedTlsServer { addr, connections, handshakes, task }
    }
}

impl Drop for SelfSignedTlsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A copy of component bytes that differs only by a trailing custom section: a distinct
/// file (and content hash) that behaves the same.
pub fn with_custom_section(bytes: &[u8], name: &str, payload: &[u8]) -> Vec<u8> {
    fn leb128(mut value: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (value & 0x7f) as u8;
            value >>= 7;
            if value == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let mut content = Vec::new();
    leb128(name.len(), &mut content);
    content.extend_from_slice(name.as_bytes());
    content.extend_from_slice(payload);
    let mut out = bytes.to_vec();
    out.push(0);
    leb128(content.len(), &mut out);
    out.extend_from_slice(&content);
    out
}

/// Waits for the next registry change, failing the test after `seconds`.
pub async fn next_change(
    changes: &mut tokio::sync::broadcast::Receiver<toolhost::RegistryChange>,
    seconds: u64,
) -> toolhost::RegistryChange {
    tokio::time::timeout(std::time::Duration::from_secs(seconds), changes.recv())
        .await
        .expect("a registry change within the time limit")
        .expect("change channel open")
}

/// The compilers whose code every limit and grant is tested on: Winch's baseline code
/// and Cranelift's optimized code.
pub const TIERS: [toolhost::Tiering; 2] = [toolhost::Tiering::BaselineOnly, toolhost::Tiering::OptimizedOnly];

/// A host builder whose components run on the code of one compiler, compiling without
/// a cache (a cached component would bring Cranelift's code whatever the tiering).
pub fn builder_on(tiering: toolhost::Tiering) -> toolhost::ToolHostBuilder {
    toolhost::ToolHost::builder()
        .engine_settings(toolhost::EngineSettings { tiering, ..toolhost::EngineSettings::default() })
        .compile_cache(toolhost::CacheSetting::Disabled)
}

/// Waits until the background compile replaced every component's baseline code, failing
/// the test after a minute.
pub async fn wait_until_optimized(host: &toolhost::ToolHost) {
    let started = std::time::Instant::now();
    while host.optimizations_pending() > 0 {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the optimizing compiles did not finish");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Writes a file atomically: a temporary file in the same directory, then a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) {
    let temporary = path.with_extension("partial-write");
    std::fs::write(&temporary, bytes).expect("write temporary file");
    std::fs::rename(&temporary, path).expect("rename into place");
}

/// `<target>/toolchains`, where the test suite installs the clients it drives.
fn toolchains_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test exe path");
    // <target>/<profile>/deps/e2e-<hash>
    let target_dir = exe.parent().and_then(Path::parent).and_then(Path::parent).expect("target dir");
    let toolchains = target_dir.join("toolchains");
    std::fs::create_dir_all(&toolchains).expect("create the toolchains dir");
    toolchains
}

/// `<target>/toolchains/<package.dir>` with `package` (and its dependencies) under
/// `node_modules`, installed from the npm registry on first use and reused afterwards
/// (`xtask/src/test_programs.rs`; `cargo xtask test` installs them all before the
/// suite runs).
pub fn npm_package(package: &test_programs::NpmPackage) -> PathBuf {
    test_programs::npm_package(&toolchains_dir(), package).unwrap_or_else(|e| panic!("{e}"))
}

/// A directory holding the official MCP TypeScript SDK (`@modelcontextprotocol/sdk`
/// 1.x) under `node_modules`, with `tests/mcp/client.mjs` copied beside it so that Node
/// resolves the SDK from there: `<target>/toolchains/ts-mcp` (see [`npm_package`]).
pub fn mcp_typescript_client() -> PathBuf {
    static CLIENT: OnceLock<PathBuf> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let dir = npm_package(&test_programs::MCP_TYPESCRIPT_SDK);
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/client.mjs");
            std::fs::copy(&script, dir.join("client.mjs")).expect("copy client.mjs");
            dir
        })
        .clone()
}

/// Lists the tools of `toolhost serve TOOLS` over stdio and makes `calls` (`{"name",
/// "arguments"}` objects) with the official TypeScript SDK client; returns
/// `{"tools": [names], "results": [{"is_error", "structured", "text"}]}`.
pub fn mcp_calls(tools: &Path, calls: &serde_json::Value) -> serde_json::Value {
    let client = mcp_typescript_client();
    let output = Command::new("node")
        .arg(client.join("client.mjs"))
        .arg("stdio")
        .arg(toolhost_bin())
        .arg(tools)
        .env("TOOLHOST_CALLS", calls.to_string())
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client.mjs failed ({}):\n{}\n{stdout}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("client.mjs printed no JSON ({e}): {stdout}"))
}

/// Runs `toolhost call TOOLS NAME --input INPUT` and returns its exit code and stdout
/// as JSON (null when it printed none).
pub fn cli_call(tools: &Path, name: &str, input: &serde_json::Value) -> (i32, serde_json::Value) {
    let output = Command::new(toolhost_bin())
        .arg("call")
        .arg(tools)
        .arg(name)
        .arg("--input")
        .arg(input.to_string())
        .output()
        .expect("run toolhost call");
    let stdout = serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null);
    (output.status.code().unwrap_or(-1), stdout)
}

/// An upstream MCP server the test declares in code (as an embedder would): `script`
/// (a file of `tests/mcp/`) run by [`mcp_python`] with `args`, on stdio, under `name`,
/// in the default upstream layer, with `HOME` and nothing else of the environment.
pub fn python_upstream(
    name: &str,
    script: &str,
    args: &[String],
    writes: &[&Path],
) -> toolhost::upstream::UpstreamServer {
    use toolhost::upstream::{ChildSandbox, DEFAULT_LAYER, UpstreamServer, UpstreamTransport};
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp").join(script).display().to_string();
    let sandbox = ChildSandbox {
        read: python_reads(),
        write: writes.iter().map(|path| path.to_path_buf()).collect(),
        ..ChildSandbox::default()
    };
    UpstreamServer {
        name: name.into(),
        layer: DEFAULT_LAYER.into(),
        transport: UpstreamTransport::Command {
            program: mcp_python().display().to_string(),
            args: std::iter::once(script).chain(args.iter().cloned()).collect(),
            env: vec![("HOME".into(), "HOME".into())],
            cwd: None,
            sandbox: Some(sandbox),
        },
        timeout: None,
        max_response: None,
        connect_timeout: None,
        rename: Default::default(),
    }
}

/// What a stdio server run by [`mcp_python`] reads beside the system's files: the
/// virtual environment, the installation of its base interpreter (`home` in its
/// `pyvenv.cfg`, which may be outside `/usr`, e.g. pyenv's) and the test servers.
pub fn python_reads() -> Vec<PathBuf> {
    let venv = mcp_python().parent().and_then(Path::parent).expect("the venv").to_path_buf();
    let config = std::fs::read_to_string(venv.join("pyvenv.cfg")).expect("the venv's pyvenv.cfg");
    let home = config.lines().find_map(|line| line.strip_prefix("home = ")).expect("`home` in pyvenv.cfg");
    let installation = Path::new(home.trim()).parent().expect("the base interpreter's installation").to_path_buf();
    vec![venv, installation, Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp")]
}

/// The `sandbox` line of an `[[upstream]]` table running [`mcp_python`]: what it reads
/// ([`python_reads`]) and where it may write (`writes`: its events' directory).
pub fn python_sandbox(writes: &[&Path]) -> String {
    let list = |paths: Vec<String>| paths.iter().map(|path| format!("{path:?}")).collect::<Vec<_>>().join(", ");
    let reads = list(python_reads().iter().map(|path| path.display().to_string()).collect());
    let writes = list(writes.iter().map(|path| path.display().to_string()).collect());
    format!("sandbox = {{ read = [{reads}], write = [{writes}] }}\n")
}

/// The Python interpreter of a virtual environment holding the official MCP Python SDK
/// (`mcp` 2.x) and the tests' other Python packages, at `<target>/toolchains/mcp-venv`:
/// made on first use and reused afterwards (`xtask/src/test_programs.rs`).
pub fn mcp_python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| test_programs::mcp_python(&toolchains_dir()).unwrap_or_else(|e| panic!("{e}"))).clone()
}

/// Starts `command` (a `toolhost … serve --http …`) with stderr piped and waits for the
/// line naming its address; returns the child and `host:port`, or, when the process
/// ends first, its exit status and everything it printed. Stderr keeps being drained so
/// the server never blocks on a full pipe.
pub fn spawn_http_server(mut command: Command) -> Result<(std::process::Child, String), String> {
    use std::io::BufRead;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolhost serve --http");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("piped stderr"));
    let mut seen = String::new();
    let addr = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).expect("read the server's stderr") == 0 {
            let status = child.wait().expect("wait for the server");
            return Err(format!("{status}: {seen}"));
        }
        if let Some(addr) =
            line.trim().strip_prefix("serving MCP on http://").and_then(|rest| rest.strip_suffix("/mcp"))
        {
            break addr.to_owned();
        }
        seen.push_str(&line);
    };
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Ok((child, addr))
}

/// Compiles the components of `tools` into the compile cache `cache` with the optimizing
/// compiler (a one-shot command does), so that servers started next map their code from
/// it, as a restarted server does.
pub fn fill_compile_cache(toolhost: &Path, tools: &Path, cache: &Path) {
    let filled = Command::new(toolhost)
        .arg("--cache-dir")
        .arg(cache)
        .arg("list")
        .arg(tools)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("toolhost list");
    assert!(filled.success());
}

/// The content hashes of the compiled components in a compile cache
/// (`<dir>/<engine key>/<hash>.cwasm`); none when it does not exist.
pub fn compiled_hashes(cache: &Path) -> Vec<String> {
    let Ok(engines) = std::fs::read_dir(cache) else { return Vec::new() };
    engines
        .flatten()
        .filter(|engine| engine.path().is_dir())
        .flat_map(|engine| std::fs::read_dir(engine.path()).into_iter().flatten().flatten())
        .filter_map(|entry| entry.file_name().to_str()?.strip_suffix(".cwasm").map(str::to_owned))
        .collect()
}

/// A child process killed (and reaped) when dropped, whether the test passed or not.
pub struct KilledOnDrop(pub std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loopback port the OS picks, free now, for a server that must be told its port.
pub fn free_loopback_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port()
}

/// Waits until something listens on loopback `port`, failing the test after `within`.
fn wait_until_listening(port: u16, server: &str, within: std::time::Duration) {
    let deadline = std::time::Instant::now() + within;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "{server} did not listen on port {port} within {within:?}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// `sha256:<hex>` of a file, from coreutils' `sha256sum`: not the host's own code.
pub fn sha256sum(path: &Path) -> String {
    let output = Command::new("sha256sum").arg(path).output().expect("run sha256sum");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("sha256sum prints text");
    format!("sha256:{}", text.split_whitespace().next().expect("a digest"))
}

/// A `redis-server` of its own on a free loopback port, without persistence; stopped
/// when dropped.
pub struct RedisServer {
    child: std::process::Child,
    /// `redis://127.0.0.1:PORT/0`
    pub url: String,
    _dir: tempfile::TempDir,
}

impl RedisServer {
    pub fn start() -> RedisServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_loopback_port();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("redis-server runs (the test setup installs the Debian package)");
        wait_until_listening(port, "redis-server", std::time::Duration::from_secs(10));
        RedisServer { child, url: format!("redis://127.0.0.1:{port}/0"), _dir: dir }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A CNCF distribution registry (`docker-registry`, the Debian package) of its own on a
/// free loopback port, storing in a temporary directory; with a user and password
/// (htpasswd, bcrypt) when asked. Stopped when dropped.
pub struct OciRegistry {
    child: std::process::Child,
    /// `127.0.0.1:PORT`
    pub addr: String,
    dir: tempfile::TempDir,
}

impl OciRegistry {
    /// Anyone may pull and push.
    pub fn start() -> OciRegistry {
        OciRegistry::start_with(None)
    }

    /// Only `user` with `password` may pull and push.
    pub fn start_with_password(user: &str, password: &str) -> OciRegistry {
        OciRegistry::start_with(Some((user, password)))
    }

    fn start_with(login: Option<(&str, &str)>) -> OciRegistry {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_loopback_port();
        let addr = format!("127.0.0.1:{port}");
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n  secret: toolhost-tests\n",
            dir.path().join("data").display()
        );
        if let Some((user, password)) = login {
            let hash = Command::new(mcp_python())
                .args([
                    "-c",
                    "import bcrypt, sys; print(bcrypt.hashpw(sys.argv[1].encode(), bcrypt.gensalt()).decode())",
                ])
                .arg(password)
                .output()
                .expect("run python for bcrypt");
            assert!(hash.status.success(), "{}", String::from_utf8_lossy(&hash.stderr));
            let htpasswd = dir.path().join("htpasswd");
            std::fs::write(&htpasswd, format!("{user}:{}", String::from_utf8_lossy(&hash.stdout).trim())).unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: toolhost-tests\n    path: {}\n",
                htpasswd.display()
            ));
        }
        let config_path = dir.path().join("config.yml");
        std::fs::write(&config_path, config).expect("write the registry's configuration");
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config_path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("docker-registry runs (the test setup installs the Debian package)");
        wait_until_listening(port, "docker-registry", std::time::Duration::from_secs(20));
        OciRegistry { child, addr, dir }
    }

    /// Where it keeps blobs: `<data>/docker/registry/v2/blobs/sha256/<2 hex>/<hex>/data`.
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
        self.dir.path().join("data/docker/registry/v2/blobs/sha256").join(&hex[..2]).join(hex).join("data")
    }
}

impl Drop for OciRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A key pair as `cosign generate-key-pair` makes one (`<dir>/<name>/cosign.pub`, and
/// `cosign.key` unencrypted), made by `tests/trust/cosign_keys.py` with Python's
/// `cryptography`: an implementation independent of the host's.
pub fn cosign_keygen(dir: &Path, name: &str) -> PathBuf {
    let keys = dir.join(name);
    std::fs::create_dir_all(&keys).expect("create the key directory");
    run_cosign_keys(&[Path::new("keygen"), &keys]);
    keys
}

/// Writes `signature`: the signature of `blob`'s bytes by `keys/cosign.key`, as
/// `cosign sign-blob --key cosign.key --output-signature SIGNATURE BLOB` writes it.
pub fn cosign_sign(keys: &Path, blob: &Path, signature: &Path) {
    run_cosign_keys(&[Path::new("sign"), &keys.join("cosign.key"), blob, signature]);
}

/// Runs `tests/trust/cosign_registry.py` (cosign's image signatures in a registry, by
/// an implementation independent of the host's): `sign` or `verify`, with `args`.
pub fn cosign_registry(args: &[&str]) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("trust/cosign_registry.py");
    Command::new(mcp_python()).arg(script).args(args).output().expect("run cosign_registry.py")
}

fn run_cosign_keys(args: &[&Path]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("trust/cosign_keys.py");
    let output = Command::new(mcp_python()).arg(script).args(args).output().expect("run cosign_keys.py");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}
