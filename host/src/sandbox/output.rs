//! What a guest writes besides its result: stdout, stderr and `host.log` lines.
//!
//! All three share one byte budget per call. Past it, writes still succeed for the guest
//! (a tool must not fail because it logs too much) but are dropped and counted, and the
//! record of the call says how much was lost.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

use crate::contract::LogLevel;

/// Captured output of one call.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CapturedOutput {
    /// What the guest wrote to stdout (within the budget).
    pub stdout: String,
    /// What the guest wrote to stderr (within the budget).
    pub stderr: String,
    /// Lines the guest sent to `host.log`.
    pub log: Vec<LogLine>,
    /// Bytes the guest wrote past the budget and that were dropped.
    pub dropped_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
/// One `host.log` line.
pub struct LogLine {
    /// `trace`, `debug`, `info`, `warn` or `error`.
    pub level: &'static str,
    /// The line as the guest wrote it.
    pub message: String,
}

pub(crate) fn level_name(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Trace => "trace",
        LogLevel::Debug => "debug",
        LogLevel::Info => "info",
        LogLevel::Warn => "warn",
        LogLevel::Error => "error",
    }
}

#[derive(Default)]
struct Buffers {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    log: Vec<LogLine>,
    used: u64,
    budget: u64,
    dropped: u64,
}

impl Buffers {
    /// How many of `wanted` bytes still fit; counts the rest as dropped.
    fn admit(&mut self, wanted: usize) -> usize {
        let room = usize::try_from(self.budget.saturating_sub(self.used)).unwrap_or(usize::MAX);
        let taken = wanted.min(room);
        self.used += taken as u64;
        self.dropped += (wanted - taken) as u64;
        taken
    }
}

/// The shared sink of one call's output.
#[derive(Clone)]
pub(crate) struct OutputSink(Arc<Mutex<Buffers>>);

impl OutputSink {
    pub fn new(budget: u64) -> Self {
        OutputSink(Arc::new(Mutex::new(Buffers { budget, ..Buffers::default() })))
    }

    fn lock(&self) -> MutexGuard<'_, Buffers> {
        // A poisoned lock only means another writer panicked mid-append; the bytes
        // are still a valid prefix.
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn stdout(&self) -> CaptureStream {
        CaptureStream { sink: self.clone(), stream: Stream::Stdout }
    }

    pub fn stderr(&self) -> CaptureStream {
        CaptureStream { sink: self.clone(), stream: Stream::Stderr }
    }

    /// Records a log line, or as much of it as the budget holds, cut at a character
    /// boundary; returns how many bytes were kept, `None` when none were. Kept and
    /// dropped bytes always add up to the line's length.
    pub fn log(&self, level: LogLevel, message: &str) -> Option<usize> {
        let mut buffers = self.lock();
        let mut taken = buffers.admit(message.len());
        while !message.is_char_boundary(taken) {
            taken -= 1;
            buffers.used -= 1;
            buffers.dropped += 1;
        }
        if taken == 0 {
            return None;
        }
        buffers.log.push(LogLine { level: level_name(level), message: message[..taken].to_owned() });
        Some(taken)
    }

    /// The captured output. Bytes that are not UTF-8 show as U+FFFD, except a character
    /// the budget cut in two: its first bytes count as dropped, so kept and dropped bytes
    /// add up to what the guest wrote.
    pub fn take(&self) -> CapturedOutput {
        let mut buffers = self.lock();
        let cut = buffers.dropped > 0;
        let mut stdout = std::mem::take(&mut buffers.stdout);
        let mut stderr = std::mem::take(&mut buffers.stderr);
        if cut {
            buffers.dropped += drop_split_character(&mut stdout) + drop_split_character(&mut stderr);
        }
        CapturedOutput {
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            log: std::mem::take(&mut buffers.log),
            dropped_bytes: buffers.dropped,
        }
    }

    /// The last `max` bytes of stderr, e.g. a Rust guest's panic message.
    pub fn stderr_tail(&self, max: usize) -> String {
        let buffers = self.lock();
        let start = buffers.stderr.len().saturating_sub(max);
        String::from_utf8_lossy(&buffers.stderr[start..]).trim().to_owned()
    }

    fn write(&self, stream: Stream, bytes: &[u8]) {
        let mut buffers = self.lock();
        let taken = buffers.admit(bytes.len());
        let target = match stream {
            Stream::Stdout => &mut buffers.stdout,
            Stream::Stderr => &mut buffers.stderr,
        };
        target.extend_from_slice(&bytes[..taken]);
    }
}

/// Removes the first bytes of a character that ends past the buffer; returns how many.
fn drop_split_character(bytes: &mut Vec<u8>) -> u64 {
    let is_continuation = |byte: u8| byte & 0b1100_0000 == 0b1000_0000;
    let last_start = (bytes.len().saturating_sub(4)..bytes.len()).rev().find(|&i| !is_continuation(bytes[i]));
    let Some(start) = last_start else { return 0 };
    match std::str::from_utf8(&bytes[start..]) {
        // `error_len() == None`: the bytes are a valid beginning that ends too early.
        Err(error) if error.valid_up_to() == 0 && error.error_len().is_none() => {
            let split = bytes.len() - start;
            bytes.truncate(start);
            split as u64
        }
        _ => 0,
    }
}

#[derive(Clone, Copy)]
enum Stream {
    Stdout,
    Stderr,
}

/// A guest's stdout or stderr.
#[derive(Clone)]
pub(crate) struct CaptureStream {
    sink: OutputSink,
    stream: Stream,
}

impl IsTerminal for CaptureStream {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CaptureStream {
    // A direct stream rather than the default adapter, which would spawn a task per
    // stream per call.
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CaptureStream {
    async fn ready(&mut self) {}
}

impl OutputStream for CaptureStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.sink.write(self.stream, &bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(64 << 10)
    }
}

impl AsyncWrite for CaptureStream {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        self.sink.write(self.stream, buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_past_the_budget_are_dropped_and_counted() {
        let sink = OutputSink::new(10);
        sink.write(Stream::Stdout, b"hello ");
        sink.write(Stream::Stderr, b"world!");
        assert_eq!(sink.log(LogLevel::Info, "too late"), None);
        let out = sink.take();
        assert_eq!(out.stdout, "hello ");
        assert_eq!(out.stderr, "worl");
        assert!(out.log.is_empty());
        assert_eq!(out.dropped_bytes, 2 + 8);
    }

    #[test]
    fn a_log_line_past_the_budget_keeps_what_fits_on_a_character_boundary() {
        let sink = OutputSink::new(10);
        sink.write(Stream::Stdout, b"1234");
        // "é" is two bytes: the budget ends inside the second one.
        assert_eq!(sink.log(LogLevel::Warn, "abcééé"), Some("abcé".len()));
        // The byte left over is the next line's.
        assert_eq!(sink.log(LogLevel::Info, "more"), Some(1));
        assert_eq!(sink.log(LogLevel::Info, "none"), None);
        let out = sink.take();
        let kept: Vec<&str> = out.log.iter().map(|line| line.message.as_str()).collect();
        assert_eq!(kept, ["abcé", "m"]);
        let kept = out.stdout.len() + out.log.iter().map(|line| line.message.len()).sum::<usize>();
        assert_eq!(kept as u64 + out.dropped_bytes, 4 + "abcééé".len() as u64 + 4 + 4);
    }

    #[test]
    fn a_character_the_budget_cuts_in_stdout_counts_as_dropped() {
        let sink = OutputSink::new(4);
        sink.write(Stream::Stdout, "ab€".as_bytes()); // "€" is three bytes; one is past the budget.
        let out = sink.take();
        assert_eq!(out.stdout, "ab");
        assert_eq!(out.dropped_bytes, 3);
        // Not cut by the budget: an unfinished character is the guest's and stays (as U+FFFD).
        let sink = OutputSink::new(100);
        sink.write(Stream::Stderr, &"€".as_bytes()[..2]);
        assert_eq!(sink.take().stderr, "\u{fffd}");
    }
}
