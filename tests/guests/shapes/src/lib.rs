//! Tools whose schemas are valid JSON Schema yet not what function-calling consumers take
//! as is: an input that is not an object, boolean sub-schemas, a root `anyOf`, and one
//! that satisfies OpenAI's strict mode. The suite checks the definitions the host builds
//! for them against each consumer's published rules, and calls them by every name form.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_guest::{ToolError, toolbox};

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Anything {
    // Undocumented on purpose: a described field's schema is `{"description": …}`, a
    // bare one's is the boolean `true`.
    value: Value,
}

/// One of two ways to name a thing: a root `anyOf`, which Anthropic refuses at the top
/// level of an input schema.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
enum Lookup {
    ById { id: u32 },
    ByName { name: String },
}

#[derive(Serialize, JsonSchema)]
struct Found {
    key: String,
}

/// Every property required, every object closed, only formats strict mode knows.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Meeting {
    title: String,
    /// When it starts (RFC 3339).
    #[schemars(extend("format" = "date-time"))]
    starts: String,
    attendees: Vec<String>,
}

/// Two integers: the same work as the plain component `plain-types`'s `add`, for the
/// benchmark that compares a toolbox call with a plain one.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Pair {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Booked {
    summary: String,
}

toolbox! {
    /// Upper-cases a string: its input and output are strings, not objects.
    fn shout(input: String) -> Result<String, ToolError> {
        Ok(input.to_uppercase())
    }

    /// Returns the value it was given, whatever it is.
    fn keep(input: Anything) -> Result<Anything, ToolError> {
        Ok(input)
    }

    /// Finds a thing by id or by name.
    fn lookup(input: Lookup) -> Result<Found, ToolError> {
        Ok(Found { key: match input { Lookup::ById { id } => format!("id:{id}"), Lookup::ByName { name } => format!("name:{name}") } })
    }

    /// Counts the strings it was given: its input is an array.
    fn count(input: Vec<String>) -> Result<usize, ToolError> {
        Ok(input.len())
    }

    /// Adds two integers (wrapping on overflow).
    fn add(input: Pair) -> Result<i64, ToolError> {
        Ok(input.a.wrapping_add(input.b))
    }

    /// Books a meeting (prints what it would book).
    fn book(input: Meeting) -> Result<Booked, ToolError> {
        Ok(Booked { summary: format!("{} at {} with {}", input.title, input.starts, input.attendees.join(", ")) })
    }
}
