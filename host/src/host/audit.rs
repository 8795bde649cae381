//! The record of every call attempt, sent to subscribers and appended to a JSONL file.
//!
//! The record of every call attempt (denied, invalid and failed ones included), sent to
//! subscribers and, when configured, appended to a JSONL file.
//!
//! Records carry names, hashes, sizes, fuel and outcomes, never inputs, outputs, config
//! values or environment values.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use crate::client::ClientRequest;
use crate::policy::{ApprovalRecord, Caller};
use crate::sandbox::DeniedRequest;
use crate::tool::SourceKind;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
/// One call attempt, as subscribers and the JSONL audit log see it.
pub struct CallRecord {
    /// Milliseconds since the Unix epoch when the call started.
    pub timestamp_ms: u64,
    /// The caller's id for this call, within a batch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// Who called.
    pub caller: Caller,
    /// The name the caller used.
    pub requested: String,
    /// The full name of the tool, when one was found.
    pub tool: Option<String>,
    /// BLAKE3 of the component that answered, hex.
    pub component_hash: Option<String>,
    /// What kind of tool answered (`component`, `mcp_server`, `http`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceKind>,
    /// The upstream MCP server (its `[[upstream]]` name) that answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// Wall-clock time of the whole call, in microseconds.
    pub duration_us: u64,
    /// Fuel the guest burned.
    pub fuel_consumed: u64,
    /// `ok`, or the error kind (`input_invalid`, `timeout`, …).
    pub outcome: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The error's message, when the call failed.
    pub error: Option<String>,
    /// Bytes of input JSON handed to the tool.
    pub input_bytes: u64,
    /// Bytes of output JSON the tool returned.
    pub output_bytes: u64,
    /// Bytes of guest output dropped over the log budget.
    pub dropped_log_bytes: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    /// Outgoing requests the allow-list refused.
    pub denied_requests: Vec<DeniedRequest>,
    /// Why the call needed approval, who answered and what, when it needed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRecord>,
    /// How many content blocks the tool showed beside its output.
    #[serde(skip_serializing_if = "is_zero")]
    pub content_blocks: usize,
    /// What the tool asked of the calling client (elicitation, sampling), with the
    /// answers' outcomes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub client_requests: Vec<ClientRequest>,
    /// Requests past the first [`MAX_REQUESTS_PER_CALL`](crate::MAX_REQUESTS_PER_CALL),
    /// refused.
    #[serde(skip_serializing_if = "is_zero")]
    pub client_requests_over: u64,
}

fn is_zero<N: Default + PartialEq>(count: &N) -> bool {
    *count == N::default()
}

/// Fans call records out to subscribers and the optional JSONL file.
pub(crate) struct Audit {
    subscribers: broadcast::Sender<Arc<CallRecord>>,
    file: Option<Mutex<AuditFile>>,
}

impl Audit {
    pub fn new(jsonl: Option<&Path>) -> std::io::Result<Audit> {
        let (subscribers, _) = broadcast::channel(1024);
        let file = match jsonl {
            Some(path) => Some(Mutex::new(AuditFile::open(path)?)),
            None => None,
        };
        Ok(Audit { subscribers, file })
    }

    /// Whether anyone listens; records are not even built otherwise.
    pub fn is_active(&self) -> bool {
        self.file.is_some() || self.subscribers.receiver_count() > 0
    }

    /// Appends the record to the file before returning, so that a call whose answer
    /// went out is on record even if the host is killed the next moment; then tells
    /// subscribers.
    pub fn record(&self, record: CallRecord) {
        if let Some(file) = &self.file
            && let Ok(mut line) = serde_json::to_string(&record)
        {
            line.push('\n');
            // A poisoned lock only means a writer panicked; the file state is intact.
            file.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).append(line.as_bytes());
        }
        if self.subscribers.receiver_count() > 0 {
            let _ = self.subscribers.send(Arc::new(record));
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<CallRecord>> {
        self.subscribers.subscribe()
    }
}

/// The JSONL file: one `write` per record, in append mode. A record the disk refused
/// (full, say) is lost, said once in the host's log with a count when writing works
/// again; a line the disk cut short is ended before the next record, so every later
/// line is whole JSON.
struct AuditFile {
    path: PathBuf,
    file: File,
    /// The file ends inside a line: a write was cut short, or a host died mid-write.
    torn: bool,
    /// Records refused since the last one written.
    lost: u64,
}

impl AuditFile {
    /// Opens the file now, so a bad path fails when the host is built.
    fn open(path: &Path) -> std::io::Result<AuditFile> {
        let mut file = std::fs::OpenOptions::new().create(true).read(true).append(true).open(path)?;
        let torn = ends_inside_a_line(&mut file)?;
        Ok(AuditFile { path: path.to_owned(), file, torn, lost: 0 })
    }

    fn append(&mut self, line: &[u8]) {
        let written = match self.torn {
            true => self.write(b"\n").and_then(|()| self.write(line)),
            false => self.write(line),
        };
        match written {
            Ok(()) if self.lost > 0 => {
                tracing::warn!(path = %self.path.display(), lost = self.lost, "the audit log is written again; records were lost while it could not be");
                self.lost = 0;
            }
            Ok(()) => {}
            Err(e) => {
                if self.lost == 0 {
                    tracing::error!(path = %self.path.display(), "cannot append to the audit log, calls go on unrecorded: {e}");
                }
                self.lost += 1;
            }
        }
    }

    /// Writes all of `bytes`, noting a cut-short line.
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let mut done = 0;
        while done < bytes.len() {
            match self.file.write(&bytes[done..]) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    done += n;
                    self.torn = bytes[done - 1] != b'\n';
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Whether a non-empty file's last byte is not a newline.
fn ends_inside_a_line(file: &mut File) -> std::io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(requested: &str) -> CallRecord {
        CallRecord {
            timestamp_ms: 1,
            call_id: None,
            caller: Caller::local(),
            requested: requested.into(),
            tool: None,
            component_hash: None,
            source: None,
            upstream: None,
            duration_us: 0,
            fuel_consumed: 0,
            outcome: "not_found".into(),
            error: None,
            input_bytes: 0,
            output_bytes: 0,
            dropped_log_bytes: 0,
            denied_requests: Vec::new(),
            approval: None,
            content_blocks: 0,
            client_requests: Vec::new(),
            client_requests_over: 0,
        }
    }

    #[test]
    fn a_line_a_dead_host_left_unfinished_is_ended_before_the_next_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        std::fs::write(&path, "{\"whole\":1}\n{\"cut sh").unwrap();
        let audit = Audit::new(Some(&path)).unwrap();
        audit.record(record("a/b"));
        audit.record(record("c/d"));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[..2], ["{\"whole\":1}", "{\"cut sh"]);
        let parsed: Vec<serde_json::Value> =
            lines[2..].iter().map(|line| serde_json::from_str(line).unwrap()).collect();
        assert_eq!(parsed.iter().map(|r| r["requested"].as_str().unwrap()).collect::<Vec<_>>(), ["a/b", "c/d"]);
        assert!(text.ends_with('\n'));
    }
}
