//! Tasks in the component's private bucket `tasks`: each task as JSON at `task:<id>`,
//! and the last id handed out at `next-id`.
//!
//! Every call's writes commit together when the call succeeds and not at all when it
//! fails, so a tool may stage writes and still refuse: nothing half-done is left.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_guest::ToolError;
use toolhost_guest::storage::{Storage, StorageError};

const BUCKET: &str = "tasks";
const COUNTER: &str = "next-id";
const PREFIX: &str = "task:";

/// Whether a task is still to be done.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    #[default]
    Open,
    Done,
}

/// A task as stored and as every tool returns it.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default)]
pub struct Task {
    /// Its number, never reused, even after the task is deleted.
    pub id: u64,
    /// What is to be done.
    pub title: String,
    /// Details, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When it is due (`YYYY-MM-DD`), if it has a due date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<String>,
    /// Its labels.
    #[serde(default)]
    pub tags: Vec<String>,
    /// `open` or `done`.
    #[serde(default)]
    pub status: Status,
    /// When it was created: an RFC 3339 UTC timestamp.
    pub created: String,
    /// When it was completed (RFC 3339 UTC), while it is done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<String>,
}

/// The bucket of tasks, open for one call.
pub struct Tasks {
    storage: Storage,
}

impl Tasks {
    /// Opens the bucket; without the manifest's grant, says which grant is missing.
    pub fn open() -> Result<Tasks, ToolError> {
        match Storage::open(BUCKET) {
            Ok(storage) => Ok(Tasks { storage }),
            Err(StorageError::AccessDenied(_) | StorageError::NoSuchStore(_)) => Err(ToolError::failed(format!(
                "task/* keeps its tasks in the storage bucket `{BUCKET}`, which this component's manifest does not \
                 grant; the operator adds `[grants] storage = [\"{BUCKET}\"]` to it"
            ))),
            Err(other) => Err(other.into()),
        }
    }

    /// A fresh id. The counter's key stays leased until this call ends, so concurrent
    /// calls never get the same id; a failed call commits neither the count nor a task.
    pub fn next_id(&self) -> Result<u64, ToolError> {
        let id = self.storage.increment(COUNTER, 1)?;
        u64::try_from(id).map_err(|_| ToolError::failed(format!("the id counter `{COUNTER}` holds {id}, not an id")))
    }

    /// The task `id`, or the caller's mistake.
    pub fn get(&self, id: u64) -> Result<Task, ToolError> {
        self.storage.get::<Task>(&key(id))?.ok_or_else(|| no_task(id))
    }

    /// Stores `task` under its id, over any task stored there.
    pub fn put(&self, task: &Task) -> Result<(), ToolError> {
        self.storage
            .set(&key(task.id), task)
            .map_err(|e| ToolError::failed(format!("task {} was not saved: {e}", task.id)))
    }

    /// Applies `change` to task `id` as one atomic step (compare-and-swap): two calls
    /// changing the same task at once both take effect, neither undoes the other.
    pub fn modify(&self, id: u64, change: impl FnOnce(&mut Task)) -> Result<Task, ToolError> {
        let changed = self.storage.update::<Task>(&key(id), |current| {
            current.map(|mut task| {
                change(&mut task);
                task
            })
        })?;
        changed.ok_or_else(|| no_task(id))
    }

    /// Removes task `id` and returns it.
    pub fn remove(&self, id: u64) -> Result<Task, ToolError> {
        let task = self.get(id)?;
        self.storage.delete(&key(id))?;
        Ok(task)
    }

    /// Every task, in no particular order.
    pub fn all(&self) -> Result<Vec<Task>, ToolError> {
        let keys = self.storage.keys()?;
        let task_keys = keys.iter().filter(|key| key.starts_with(PREFIX));
        let mut tasks = Vec::new();
        for key in task_keys {
            // Deleted between listing and reading by a call that committed meanwhile.
            if let Some(task) = self.storage.get::<Task>(key)? {
                tasks.push(task);
            }
        }
        Ok(tasks)
    }
}

fn key(id: u64) -> String {
    format!("{PREFIX}{id}")
}

fn no_task(id: u64) -> ToolError {
    ToolError::invalid_input(format!("no task {id}"))
}
