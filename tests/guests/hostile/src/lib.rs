//! Each tool misbehaves in one way; the suite asserts the exact error the host reports
//! and that the host keeps serving afterwards.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_guest::{ToolError, toolbox};

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Size {
    bytes: u64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Lines {
    /// How many short log lines, each also written to stdout and stderr.
    lines: u64,
    /// Bytes of each short line.
    line_bytes: u64,
    /// Bytes of one last log line.
    huge: u64,
}

#[derive(Serialize, JsonSchema)]
struct Sent {
    /// Bytes written to stdout, stderr and the host log together.
    bytes: u64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Message {
    message: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Path {
    path: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Write {
    path: String,
    contents: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Name {
    name: String,
}

#[derive(Serialize, JsonSchema)]
struct Small {
    #[schemars(range(min = 0, max = 10))]
    value: i64,
}

#[derive(Serialize, JsonSchema)]
struct Text {
    text: String,
}

#[derive(Serialize, JsonSchema)]
struct Found {
    value: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct Done {}

#[derive(Serialize, JsonSchema)]
struct Depth {
    depth: u64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Iterations {
    iterations: u64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: u64,
}

#[derive(Serialize, JsonSchema)]
struct Count {
    calls: u64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Address {
    /// `host:port`, e.g. `127.0.0.1:8080` or `localhost:80`.
    address: String,
}

/// What each raw-socket attempt came to: `refused: <error>` or `connected`.
#[derive(Serialize, JsonSchema)]
struct SocketAttempts {
    tcp_connect: String,
    udp_send: String,
    name_lookup: String,
}

/// State that outlives a call only if the instance does.
static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn attempt<T>(result: std::io::Result<T>) -> String {
    match result {
        Ok(_) => "connected".to_owned(),
        Err(error) => format!("refused: {error}"),
    }
}

/// Never returns for a positive `depth`: each frame keeps a 128-byte array alive.
fn deeper(depth: u64, pad: [u64; 16]) -> u64 {
    if depth == 0 {
        return 0;
    }
    let below = deeper(depth + 1, std::hint::black_box(pad));
    std::hint::black_box(below) + pad[(depth % 16) as usize]
}

toolbox! {
    /// Returns its input unchanged: the well-behaved control.
    fn echo(input: Value) -> Result<Value, ToolError> {
        Ok(input)
    }

    /// Declares an output between 0 and 10, then returns 99.
    fn bad_output(_input: Nothing) -> Result<Small, ToolError> {
        Ok(Small { value: 99 })
    }

    /// Panics with the given message.
    fn panic(input: Message) -> Result<Done, ToolError> {
        panic!("{}", input.message)
    }

    /// Fails with the given message, the polite way, after logging it and writing it to
    /// stderr (so that one call puts it everywhere guest text goes).
    fn fail(input: Message) -> Result<Done, ToolError> {
        toolhost_guest::log::warn(&input.message);
        eprintln!("{}", input.message);
        Err(ToolError::Failed(input.message))
    }

    /// Executes an `unreachable` instruction.
    fn trap(_input: Nothing) -> Result<Done, ToolError> {
        std::process::abort()
    }

    /// Adds up the numbers below `iterations` the slow way, then answers: a call that
    /// takes its time and still succeeds.
    fn busy(input: Iterations) -> Result<Sum, ToolError> {
        let mut sum: u64 = 0;
        for i in 0..input.iterations {
            sum = std::hint::black_box(sum.wrapping_add(i));
        }
        Ok(Sum { sum })
    }

    /// Loops forever.
    fn spin(_input: Nothing) -> Result<Done, ToolError> {
        let mut counter: u64 = 0;
        loop {
            counter = std::hint::black_box(counter.wrapping_add(1));
        }
    }

    /// Allocates memory in 1 MiB steps until it can't, keeping all of it.
    fn memory_bomb(_input: Nothing) -> Result<Done, ToolError> {
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            let mut chunk = vec![0u8; 1 << 20];
            chunk[0] = 1;
            hoard.push(std::hint::black_box(chunk));
        }
    }

    /// Recurses without end (the depth input keeps the optimizer from looping instead).
    fn recurse(input: Nothing) -> Result<Depth, ToolError> {
        let _ = input;
        let depth = deeper(std::hint::black_box(1), [0; 16]);
        Ok(Depth { depth })
    }

    /// Returns a string of the requested size.
    fn huge_output(input: Size) -> Result<Text, ToolError> {
        Ok(Text { text: "x".repeat(input.bytes as usize) })
    }

    /// Writes the requested number of bytes to stdout, stderr and the host log.
    fn log_flood(input: Size) -> Result<Done, ToolError> {
        let line = "flood ".repeat(1024);
        let mut written = 0;
        while written < input.bytes {
            println!("{line}");
            eprintln!("{line}");
            toolhost_guest::log::info(&line);
            written += 3 * line.len() as u64;
        }
        Ok(Done {})
    }

    /// Writes many short lines to stdout, stderr and the host log, then one huge log
    /// line, and says how many bytes it wrote in all.
    fn log_lines(input: Lines) -> Result<Sent, ToolError> {
        let line = "é".repeat(input.line_bytes as usize / 2) + &"x".repeat(input.line_bytes as usize % 2);
        for _ in 0..input.lines {
            print!("{line}");
            eprint!("{line}");
            toolhost_guest::log::info(&line);
        }
        // A component's stdout buffer is not flushed when the call returns.
        std::io::Write::flush(&mut std::io::stdout()).map_err(|e| ToolError::Failed(e.to_string()))?;
        toolhost_guest::log::warn(&"€".repeat(input.huge as usize / 3));
        let huge = 3 * (input.huge / 3);
        Ok(Sent { bytes: 3 * input.lines * line.len() as u64 + huge })
    }

    /// Asks the host for this many random bytes (`wasi:random`).
    fn random_bytes(input: Size) -> Result<Sent, ToolError> {
        let bytes = wasip2::random::random::get_random_bytes(input.bytes);
        Ok(Sent { bytes: bytes.len() as u64 })
    }

    /// Reads a file and returns its text.
    fn read_file(input: Path) -> Result<Text, ToolError> {
        std::fs::read_to_string(&input.path).map(|text| Text { text }).map_err(ToolError::failed)
    }

    /// Writes a file.
    fn write_file(input: Write) -> Result<Done, ToolError> {
        std::fs::write(&input.path, input.contents).map(|_| Done {}).map_err(ToolError::failed)
    }

    /// Lists a directory.
    fn list_dir(input: Path) -> Result<Value, ToolError> {
        let entries = std::fs::read_dir(&input.path).map_err(ToolError::failed)?;
        let mut names: Vec<String> = entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        Ok(Value::from(names))
    }

    /// Reads an environment variable.
    fn env_var(input: Name) -> Result<Found, ToolError> {
        Ok(Found { value: std::env::var(&input.name).ok() })
    }

    /// Counts its calls in a global: a fresh instance per call always answers 1.
    fn count_calls(_input: Nothing) -> Result<Count, ToolError> {
        let calls = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        Ok(Count { calls })
    }

    /// Tries raw sockets (`wasi:sockets`): a TCP connection to the address, a UDP
    /// datagram to it, and a name lookup of `localhost` (an address literal needs none).
    fn raw_sockets(input: Address) -> Result<SocketAttempts, ToolError> {
        use std::net::ToSocketAddrs;
        let tcp_connect = attempt(std::net::TcpStream::connect(&input.address));
        let udp_send = attempt(std::net::UdpSocket::bind("0.0.0.0:0").and_then(|socket| socket.send_to(b"x", &input.address)));
        let name_lookup = attempt("localhost:80".to_socket_addrs().map(|addresses| addresses.count()));
        Ok(SocketAttempts { tcp_connect, udp_send, name_lookup })
    }

    /// Reads a configuration value granted by the operator.
    fn config(input: Name) -> Result<Found, ToolError> {
        Ok(Found { value: toolhost_guest::config(&input.name) })
    }
}
