//! `cargo xtask link-order`: writes `host/link-order.txt`, the functions an idle server
//! ran at start, at load and for its first calls, which the `toolhost` binary is linked
//! with first (`host/build.rs`).
//!
//! Why: the kernel maps a binary's code in 64 KiB windows around each page a process
//! touches, and the code a server runs at start is scattered over the whole binary. An
//! idle server with one component kept 23.6 MB of its 36 MB of code resident, of which
//! it had run about 7 MB; linked with those functions first, it kept 7.5 MB
//! (`docs/performance.md`).
//!
//! How: each way the project builds the binary (the workspace's targets, as the test
//! suite and the benchmarks build it, and `-p toolhost`, as the demo and the container
//! image build it) names its symbols differently, since cargo hashes the features a
//! build resolved into them. For each, this builds the binary, fills a compile cache,
//! then runs a stdio session and an HTTP session (initialize, list, call) under
//! valgrind's callgrind, which records every function that ran. Names LLVM made unique
//! (`.llvm.<hash>`) stay, and leaving them out left 9.6 MB of code resident around them:
//! the hash is of the code unit they came from, which for a dependency changes only with
//! its version. The host crate is built as one code unit (the workspace's `Cargo.toml`),
//! so that its functions carry no such hash: split, an edit of comments in one of its
//! files renamed a tenth of the listed functions, the ones a server runs first among them.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::{cargo, install_examples, root, run, target_dir};

/// The builds whose symbols the file lists, with the cargo arguments that make each.
const BUILDS: [(&str, &[&str]); 2] = [
    ("the workspace's targets (the test suite, the benchmarks)", &["--workspace", "--test", "e2e", "--bins"]),
    ("-p toolhost (the demo, the container image)", &["-p", "toolhost", "--bin", "toolhost"]),
];

pub fn link_order() -> Result<(), String> {
    if Command::new("valgrind").arg("--version").output().is_err() {
        return Err("link-order runs the server under valgrind: install it (apt-get install valgrind)".into());
    }
    let work = target_dir().join("link-order");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let tools = install_examples(&work.join("tools"))?;
    // A small pool: valgrind cannot reserve the address space of the default one. Under
    // valgrind a guest runs tens of times slower: a listing can take longer than the
    // default time limit of a call.
    let config = work.join("toolhost.toml");
    std::fs::write(&config, "[engine]\nmax_instances = 4\nmax_memory = \"64 MiB\"\n[defaults]\ntimeout = \"120s\"\n")
        .map_err(|e| format!("{}: {e}", config.display()))?;

    let mut text = String::from(
        "# The functions the `toolhost` binary is linked with first (host/build.rs): what an\n\
         # idle server ran at start, at load and for its first calls. Written by\n\
         # `cargo xtask link-order` (xtask/src/link_order.rs); a name no build has is skipped.\n",
    );
    let mut listed = BTreeSet::new();
    for (index, (build, args)) in BUILDS.iter().enumerate() {
        let mut command = cargo();
        command.env("CARGO_INCREMENTAL", "0").args(["build", "--release", "--quiet"]).args(*args);
        run(command)?;
        // The next build overwrites the binary: run a copy, whose path callgrind names.
        let binary = work.join(format!("toolhost-{index}"));
        std::fs::copy(target_dir().join("release/toolhost"), &binary).map_err(|e| format!("copy the binary: {e}"))?;
        let binary = binary.canonicalize().map_err(|e| format!("{}: {e}", binary.display()))?;
        let cache = work.join(format!("cache-{index}"));
        let mut list = Command::new(&binary);
        list.arg("--cache-dir").arg(&cache).arg("list").arg(&tools).stdout(Stdio::null());
        run(list)?;
        let server = |profile: &Path| {
            let mut command = Command::new("valgrind");
            command
                .args(["--tool=callgrind", "--dump-instr=no", "--compress-strings=no", "--demangle=no", "-q"])
                .arg(format!("--callgrind-out-file={}", profile.display()))
                .arg(&binary)
                .arg("--config")
                .arg(&config)
                .arg("--cache-dir")
                .arg(&cache)
                .arg("serve")
                .arg(&tools);
            command
        };
        let stdio_profile = work.join(format!("stdio-{index}.callgrind"));
        stdio_session(server(&stdio_profile))?;
        let http_profile = work.join(format!("http-{index}.callgrind"));
        http_session(server(&http_profile))?;
        let ran = functions_of(&binary, &[&stdio_profile, &http_profile])?;
        let new: Vec<&String> = ran.iter().filter(|name| !listed.contains(*name)).collect();
        println!("{build}: {} functions ran, {} not listed yet", ran.len(), new.len());
        text.push_str(&format!("# {build}\n"));
        for name in new {
            text.push_str(name);
            text.push('\n');
        }
        listed.extend(ran);
    }
    let out = root().join("host/link-order.txt");
    std::fs::write(&out, text).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("wrote {} ({} functions)", out.display(), listed.len());
    Ok(())
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"link-order","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
const CALL: &str =
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"math.add","arguments":{"numbers":[1,2]}}}"#;

/// Initializes, lists until the tools have loaded, and calls over the server's stdio,
/// then closes its input.
fn stdio_session(mut command: Command) -> Result<(), String> {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().map_err(|e| e.to_string())?;
    let mut input = child.stdin.take().expect("piped");
    let mut output = BufReader::new(child.stdout.take().expect("piped"));
    let mut send = |message: &str| writeln!(input, "{message}").map_err(|e| format!("stdio: {e}"));
    // The next answer, past the notifications sent meanwhile.
    let mut answer = || -> Result<String, String> {
        loop {
            let mut line = String::new();
            if output.read_line(&mut line).map_err(|e| format!("stdio: {e}"))? == 0 {
                return Err("stdio: the server ended before it answered".into());
            }
            if line.contains("\"id\"") {
                return Ok(line);
            }
        }
    };
    send(INITIALIZE)?;
    answer()?;
    send(INITIALIZED)?;
    for _ in 0..600 {
        send(LIST)?;
        if answer()?.contains("math.add") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    send(CALL)?;
    let called = answer()?;
    if !called.contains("\"result\"") {
        return Err(format!("stdio: the server answered {called:?} to {CALL}"));
    }
    drop(input);
    wait(child)
}

/// Initializes, lists and calls over the server's Streamable HTTP, then stops it.
fn http_session(mut command: Command) -> Result<(), String> {
    command.args(["--http", "127.0.0.1:0"]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|e| e.to_string())?;
    let mut errors = BufReader::new(child.stderr.take().expect("piped"));
    let address = loop {
        let mut line = String::new();
        if errors.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("the HTTP server ended before it served".into());
        }
        if let Some(at) = line.find("serving MCP on http://") {
            let rest = &line[at + "serving MCP on http://".len()..];
            break rest.split('/').next().unwrap_or_default().to_owned();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut errors, &mut std::io::sink()));
    // Every tool loaded: `GET /ready` answers 200.
    for _ in 0..600 {
        if request(&address, "GET /ready", None, "")?.starts_with("HTTP/1.1 200") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (_, session) = post(&address, None, INITIALIZE)?;
    let session = session.ok_or("no mcp-session-id")?;
    for message in [INITIALIZED, LIST, CALL] {
        let (answer, _) = post(&address, Some(&session), message)?;
        if message != INITIALIZED && !answer.contains("\"result\"") {
            return Err(format!("HTTP: the server answered {answer:?} to {message}"));
        }
    }
    run(stop(&child))?;
    wait(child)
}

/// POSTs `message` on a connection of its own: the answer's text and session id.
fn post(address: &str, session: Option<&str>, message: &str) -> Result<(String, Option<String>), String> {
    let answer = request(address, "POST /mcp", session, message)?;
    let session = answer
        .lines()
        .find_map(|line| line.strip_prefix("mcp-session-id: ").or_else(|| line.strip_prefix("Mcp-Session-Id: ")))
        .map(|id| id.trim().to_owned());
    Ok((answer, session))
}

/// One HTTP/1.1 request (`method_path`, e.g. `GET /ready`) on a connection of its own.
fn request(address: &str, method_path: &str, session: Option<&str>, body: &str) -> Result<String, String> {
    let mut stream = TcpStream::connect(address).map_err(|e| format!("{address}: {e}"))?;
    let session = session.map(|id| format!("mcp-session-id: {id}\r\n")).unwrap_or_default();
    write!(
        stream,
        "{method_path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\n{session}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| format!("{address}: {e}"))?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).map_err(|e| format!("{address}: {e}"))?;
    Ok(answer)
}

/// SIGTERM: the server shuts down and callgrind writes its profile.
fn stop(child: &Child) -> Command {
    let mut kill = Command::new("kill");
    kill.args(["-TERM", &child.id().to_string()]);
    kill
}

fn wait(mut child: Child) -> Result<(), String> {
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() { Ok(()) } else { Err(format!("the server under valgrind ended with {status}")) }
}

/// The functions of `binary` that ran in the callgrind `profiles`, by symbol name.
fn functions_of(binary: &Path, profiles: &[&PathBuf]) -> Result<BTreeSet<String>, String> {
    let binary = binary.to_string_lossy();
    let mut names = BTreeSet::new();
    for profile in profiles {
        let text = std::fs::read_to_string(profile).map_err(|e| format!("{}: {e}", profile.display()))?;
        let mut object = "";
        for line in text.lines() {
            if let Some(name) = line.strip_prefix("ob=") {
                object = name;
            } else if let Some(name) = line.strip_prefix("fn=")
                && object == binary
                && !name.starts_with("0x")
                && !name.starts_with('(')
            {
                // Callgrind names a recursive function's deeper calls `name'2`, `name'3`.
                let name = name
                    .rsplit_once('\'')
                    .filter(|(_, depth)| depth.parse::<u32>().is_ok())
                    .map_or(name, |(name, _)| name);
                names.insert(name.to_owned());
            }
        }
    }
    if names.is_empty() {
        return Err(format!("callgrind recorded no function of {binary}"));
    }
    Ok(names)
}
