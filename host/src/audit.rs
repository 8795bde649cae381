//! The record of every call attempt (denied, invalid and failed ones included), sent to
//! subscribers and, when configured, appended to a JSONL file.
//!
//! Records carry names, hashes, sizes, fuel and outcomes, never inputs, outputs, config
//! values or environment values.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::io::AsyncWriteExt;
use tokio::sync::{broadcast, mpsc};

use crate::CallReport;
use crate::policy::Caller;
use crate::sandbox::outbound::DeniedRequest;

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
}

impl CallRecord {
    pub(crate) fn from_report(report: &CallReport, started: SystemTime) -> CallRecord {
        let (outcome, error) = match (&report.outcome, &report.hidden_because) {
            (Err(_), Some(reason)) => {
                ("permission_denied".to_owned(), Some(format!("hidden from the caller: {reason}")))
            }
            (Ok(_), _) => ("ok".to_owned(), None),
            (Err(error), None) => (error.kind().to_string(), Some(error.to_string())),
        };
        CallRecord {
            timestamp_ms: started.duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0),
            call_id: report.call_id.clone(),
            caller: report.caller.clone(),
            requested: report.requested.clone(),
            tool: report.tool.clone(),
            component_hash: report.component_hash.clone(),
            duration_us: report.duration.as_micros() as u64,
            fuel_consumed: report.fuel_consumed,
            outcome,
            error,
            input_bytes: report.input_bytes,
            output_bytes: report.output_bytes,
            dropped_log_bytes: report.captured.dropped_bytes,
            denied_requests: report.denied_requests.clone(),
        }
    }
}

/// Fans call records out to subscribers and the optional JSONL file.
pub(crate) struct Audit {
    subscribers: broadcast::Sender<Arc<CallRecord>>,
    file: Option<mpsc::UnboundedSender<String>>,
}

impl Audit {
    pub fn new(jsonl: Option<&Path>) -> std::io::Result<Audit> {
        let (subscribers, _) = broadcast::channel(1024);
        let file = match jsonl {
            Some(path) => Some(start_writer(path.to_owned())?),
            None => None,
        };
        Ok(Audit { subscribers, file })
    }

    /// Whether anyone listens; records are not even built otherwise.
    pub fn is_active(&self) -> bool {
        self.file.is_some() || self.subscribers.receiver_count() > 0
    }

    pub fn record(&self, record: CallRecord) {
        if let Some(file) = &self.file
            && let Ok(line) = serde_json::to_string(&record)
        {
            let _ = file.send(line);
        }
        if self.subscribers.receiver_count() > 0 {
            let _ = self.subscribers.send(Arc::new(record));
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<CallRecord>> {
        self.subscribers.subscribe()
    }
}

/// Opens the file now (so a bad path fails at build time) and appends lines from a
/// background task, so that no call waits on the disk.
fn start_writer(path: PathBuf) -> std::io::Result<mpsc::UnboundedSender<String>> {
    let file = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
    let mut file = tokio::fs::File::from_std(file);
    let (sender, mut receiver) = mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        while let Some(mut line) = receiver.recv().await {
            line.push('\n');
            // Take whatever else is queued, then write once.
            while let Ok(mut more) = receiver.try_recv() {
                more.push('\n');
                line.push_str(&more);
            }
            if let Err(e) = async {
                file.write_all(line.as_bytes()).await?;
                file.flush().await
            }
            .await
            {
                tracing::error!(path = %path.display(), "cannot append to the audit log: {e}");
            }
        }
    });
    Ok(sender)
}
