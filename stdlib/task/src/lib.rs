//! `task/*`: a to-do list for agents that outlives the conversation. The tasks live in
//! the host's storage (the component's private `wasi:keyvalue` bucket `tasks`, granted
//! by its manifest), so another call, another session or a restarted host sees them.

mod dates;
mod store;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use toolhost_guest::{ToolError, toolbox};

use crate::dates::{DATE_PATTERN, check_date};
use crate::store::{Status, Task, Tasks};

const MAX_TITLE_CHARS: u32 = 200;
const MAX_DESCRIPTION_CHARS: u32 = 4000;
const MAX_TAGS: u32 = 20;
const MAX_TAG_CHARS: u32 = 40;
const MAX_LIST: u32 = 200;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NewTask {
    /// What is to be done, in one short line.
    #[schemars(length(min = 1, max = MAX_TITLE_CHARS))]
    title: String,
    /// Details, notes or context, if any.
    #[serde(default)]
    #[schemars(length(max = MAX_DESCRIPTION_CHARS))]
    description: Option<String>,
    /// The date it is due, as `YYYY-MM-DD` (such as `2025-03-31`).
    #[serde(default)]
    #[schemars(pattern(DATE_PATTERN))]
    due: Option<String>,
    /// Labels to group and find tasks by, such as `work` or `errands`.
    #[serde(default)]
    #[schemars(length(max = MAX_TAGS), inner(length(min = 1, max = MAX_TAG_CHARS)))]
    tags: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaskId {
    /// The task's id, as `create` or `list` returned it.
    #[schemars(range(min = 1))]
    id: u64,
}

/// Which tasks `list` returns by status.
#[derive(Deserialize, JsonSchema, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum StatusFilter {
    #[default]
    Open,
    Done,
    Any,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Filter {
    /// `open` (the default) for tasks still to do, `done` for completed ones, `any` for both.
    #[serde(default)]
    status: StatusFilter,
    /// Only tasks due strictly before this date (`YYYY-MM-DD`); tasks without a due date
    /// are left out.
    #[serde(default)]
    #[schemars(pattern(DATE_PATTERN))]
    due_before: Option<String>,
    /// Only tasks due strictly after this date (`YYYY-MM-DD`); tasks without a due date
    /// are left out.
    #[serde(default)]
    #[schemars(pattern(DATE_PATTERN))]
    due_after: Option<String>,
    /// Only tasks whose title or description contains this text, ignoring case.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_TITLE_CHARS))]
    text: Option<String>,
    /// Only tasks with this tag, ignoring case.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_TAG_CHARS))]
    tag: Option<String>,
    /// Return at most this many tasks (`count` still counts every match).
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = MAX_LIST))]
    limit: u32,
}

fn default_limit() -> u32 {
    50
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Changes {
    /// The task's id, as `create` or `list` returned it.
    #[schemars(range(min = 1))]
    id: u64,
    /// A new title.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_TITLE_CHARS))]
    title: Option<String>,
    /// A new description; `null` removes it.
    #[serde(default, deserialize_with = "present")]
    #[schemars(length(max = MAX_DESCRIPTION_CHARS))]
    description: Option<Option<String>>,
    /// A new due date (`YYYY-MM-DD`); `null` removes it.
    #[serde(default, deserialize_with = "present")]
    #[schemars(pattern(DATE_PATTERN))]
    due: Option<Option<String>>,
    /// The new tags, replacing all of them; `[]` removes them.
    #[serde(default)]
    #[schemars(length(max = MAX_TAGS), inner(length(min = 1, max = MAX_TAG_CHARS)))]
    tags: Option<Vec<String>>,
    /// `done` completes the task, `open` reopens it.
    #[serde(default)]
    status: Option<Status>,
}

/// A field given, even as `null` (`Some(None)`), as opposed to left out (`None`): how
/// `update` tells "remove the due date" from "leave it".
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

#[derive(Serialize, JsonSchema)]
struct Listing {
    /// How many tasks match the filters (`tasks` holds at most `limit` of them).
    count: usize,
    /// The matching tasks by due date (soonest first, those without one last), then id.
    tasks: Vec<Task>,
}

#[derive(Serialize, JsonSchema)]
struct Deleted {
    /// Always true: an unknown id is an error instead.
    deleted: bool,
    /// The task as it was.
    task: Task,
}

toolbox! {
    /// Adds a task to the to-do list kept for you across conversations, and returns it
    /// with its new `id` (ids are never reused) and status `open`. Give a short title;
    /// optionally a description, a due date `YYYY-MM-DD` and tags.
    fn create(input: NewTask) -> Result<Task, ToolError> {
        let title = title(input.title)?;
        let description = description(input.description);
        let due = due(input.due)?;
        let tags = tags(input.tags);
        let tasks = Tasks::open()?;
        let task = Task {
            id: tasks.next_id()?,
            title,
            description,
            due,
            tags,
            status: Status::Open,
            created: dates::now(),
            completed: None,
        };
        tasks.put(&task)?;
        Ok(task)
    }

    /// Returns one task of the to-do list by its id: title, description, due date, tags,
    /// status and when it was created and completed.
    fn get(input: TaskId) -> Result<Task, ToolError> {
        Tasks::open()?.get(input.id)
    }

    /// Lists tasks, soonest due first (tasks without a due date last), then by id. By
    /// default only open tasks; filter by status, due date, text in the title or
    /// description, and tag. Returns how many match and the first `limit` of them.
    fn list(input: Filter) -> Result<Listing, ToolError> {
        for date in [&input.due_before, &input.due_after].into_iter().flatten() {
            check_date(date).map_err(ToolError::invalid_input)?;
        }
        let mut tasks: Vec<Task> = Tasks::open()?.all()?.into_iter().filter(|task| matches(&input, task)).collect();
        // `None` sorts before `Some`: sort on "has no due date" first to put those last.
        tasks.sort_by(|a, b| (a.due.is_none(), &a.due, a.id).cmp(&(b.due.is_none(), &b.due, b.id)));
        let count = tasks.len();
        tasks.truncate(input.limit as usize);
        Ok(Listing { count, tasks })
    }

    /// Changes a task: any of its title, description, due date, tags and status (`done`
    /// completes it, `open` reopens it). Fields left out stay as they are; `null` removes
    /// the description or the due date. Returns the updated task.
    fn update(input: Changes) -> Result<Task, ToolError> {
        let changes = Changes {
            id: input.id,
            title: input.title.map(title).transpose()?,
            description: input.description.map(description),
            due: input.due.map(due).transpose()?,
            tags: input.tags.map(tags),
            status: input.status,
        };
        if changes.title.is_none()
            && changes.description.is_none()
            && changes.due.is_none()
            && changes.tags.is_none()
            && changes.status.is_none()
        {
            return Err(ToolError::invalid_input(
                "nothing to change: give at least one of title, description, due, tags and status",
            ));
        }
        Tasks::open()?.modify(changes.id, |task| apply(changes, task))
    }

    /// Marks a task done and records when; it stays on record, listed under status
    /// `done`. Completing a task that is already done changes nothing.
    fn complete(input: TaskId) -> Result<Task, ToolError> {
        Tasks::open()?.modify(input.id, |task| set_status(task, Status::Done))
    }

    /// Deletes a task for good and returns it as it was. Its id is not reused. To keep
    /// a finished task on record, `complete` it instead.
    fn delete(input: TaskId) -> Result<Deleted, ToolError> {
        let task = Tasks::open()?.remove(input.id)?;
        Ok(Deleted { deleted: true, task })
    }
}

/// A title without the surrounding blanks a model tends to leave; blank is refused.
fn title(title: String) -> Result<String, ToolError> {
    let title = title.trim();
    if title.is_empty() {
        return Err(ToolError::invalid_input("the title is blank"));
    }
    Ok(title.to_owned())
}

/// A trimmed description; an empty one is no description.
fn description(description: Option<String>) -> Option<String> {
    description.map(|text| text.trim().to_owned()).filter(|text| !text.is_empty())
}

/// A due date, if given, checked against the calendar (the schema checks only its shape).
fn due(due: Option<String>) -> Result<Option<String>, ToolError> {
    if let Some(date) = &due {
        check_date(date).map_err(ToolError::invalid_input)?;
    }
    Ok(due)
}

/// Tags trimmed, without blanks and without repeats (ignoring case), in their order.
fn tags(tags: Vec<String>) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    for tag in tags {
        let tag = tag.trim();
        if !tag.is_empty() && !kept.iter().any(|seen| seen.to_lowercase() == tag.to_lowercase()) {
            kept.push(tag.to_owned());
        }
    }
    kept
}

fn apply(changes: Changes, task: &mut Task) {
    if let Some(title) = changes.title {
        task.title = title;
    }
    if let Some(description) = changes.description {
        task.description = description;
    }
    if let Some(due) = changes.due {
        task.due = due;
    }
    if let Some(tags) = changes.tags {
        task.tags = tags;
    }
    if let Some(status) = changes.status {
        set_status(task, status);
    }
}

/// Keeps `completed` true to the status: set when a task is first done, kept while it
/// stays done (so repeating a completion changes nothing), cleared when it reopens.
fn set_status(task: &mut Task, status: Status) {
    match status {
        Status::Done if task.status != Status::Done => task.completed = Some(dates::now()),
        Status::Done => {}
        Status::Open => task.completed = None,
    }
    task.status = status;
}

fn matches(filter: &Filter, task: &Task) -> bool {
    let status = match filter.status {
        StatusFilter::Open => task.status == Status::Open,
        StatusFilter::Done => task.status == Status::Done,
        StatusFilter::Any => true,
    };
    // Dates of the checked shape compare as text.
    let due = task.due.as_deref();
    let before = filter.due_before.as_deref().is_none_or(|limit| due.is_some_and(|due| due < limit));
    let after = filter.due_after.as_deref().is_none_or(|limit| due.is_some_and(|due| due > limit));
    let text = filter.text.as_deref().is_none_or(|text| {
        let text = text.to_lowercase();
        let found = |field: &str| field.to_lowercase().contains(&text);
        found(&task.title) || task.description.as_deref().is_some_and(found)
    });
    let tag = filter.tag.as_deref().is_none_or(|tag| task.tags.iter().any(|t| t.to_lowercase() == tag.to_lowercase()));
    status && before && after && text && tag
}
