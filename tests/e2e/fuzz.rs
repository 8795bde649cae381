//! Property tests over every parser of untrusted or operator input: component manifests,
//! `toolhost.toml`, sizes and durations, tool names and the forms consumers spell them in,
//! JSON Schemas, and component bytes. For every input: no panic, an answer in bounded
//! time, and an error that says where (the file and line, the key, the JSON position, or
//! what is wrong with a name).
//!
//! Most inputs are *near-valid*: documents generated from a model of each format, valid
//! as generated (and checked to be accepted), then given one edit: a wrong value, a value
//! of a random type, an unknown, deleted or renamed key, a broken header. Only the edit
//! can be wrong, so the error must name its line. Real files with random character edits,
//! raw text and raw bytes cover what the models do not.
//!
//! Case counts: each cheap property runs `PROPTEST_CASES` cases (default [`CI_CASES`]),
//! those over the richest inputs twice as many; properties that load components run a
//! fixed fraction (see [`cases`]). The whole file takes seconds in CI. A longer run, about
//! seven minutes on 2 cores: `PROPTEST_CASES=50000 cargo xtask test --test e2e -- fuzz`.
//! A failure is kept as a plain `#[test]` at the end of this file, with its minimized
//! input, not in a regressions file.

use std::collections::BTreeSet;
use std::fmt::{Debug, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use proptest::collection::{btree_map, btree_set, vec};
use proptest::prelude::*;
use proptest::sample::{Index, select, subsequence};
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use toolhost::{
    CacheSetting, CallError, EngineSettings, HostConfig, Layer, Limits, LoadError, LoadErrorKind, Manifest, Schema,
    ToolHost, names, parse_duration, parse_size,
};
use toolhost_tests::ToolsDir;

// ---------------------------------------------------------------------------------------
// Running properties: case counts, the time limit

/// Cases of each cheap property when `PROPTEST_CASES` is not set: a few thousand per
/// parser across its properties, seconds of CI time in all.
const CI_CASES: u32 = 1000;

/// Compiling a component that still validates after a mutation costs up to a second;
/// those properties run this many times fewer cases (40 by default).
const COMPILE_COST: u32 = 25;

/// Loading bytes that fail validation costs about a millisecond.
const LOAD_COST: u32 = 4;

/// Cases of a property whose cases cost `cost` times a parse: `PROPTEST_CASES` (or
/// [`CI_CASES`]) divided by it.
fn cases(cost: u32) -> u32 {
    let base = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(CI_CASES);
    (base / cost).max(1)
}

/// Runs `test` over `cases` values of `strategy`; a failure panics with the minimized
/// input. Failures are kept as plain tests below, so nothing is persisted beside this file.
fn check<S: Strategy>(cases: u32, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) {
    let config = Config { cases, failure_persistence: None, ..Config::default() };
    if let Err(error) = TestRunner::new(config).run(&strategy, test) {
        panic!("{error}");
    }
}

/// How long one parse may take. Every input here parses in well under a millisecond; the
/// margin is for a CI machine busy with other tests.
const PARSE_TIME_LIMIT: Duration = Duration::from_secs(5);

/// How long one component may take from bytes to loaded or refused: a Winch compile and
/// `list-tools` under a one-second limit, with the same margin.
const LOAD_TIME_LIMIT: Duration = Duration::from_secs(60);

/// Inputs being parsed now: by thread, with their deadline and a description.
static IN_FLIGHT: Mutex<Vec<(ThreadId, Instant, String)>> = Mutex::new(Vec::new());

/// Runs `parse` of `input`, and ends the test binary if it takes longer than `limit`. A
/// hang is reported with its input rather than as a CI timeout, and not shrunk: every
/// smaller candidate could hang as well.
fn within<T>(limit: Duration, input: &dyn Debug, parse: impl FnOnce() -> T) -> T {
    struct Done(ThreadId);
    impl Drop for Done {
        fn drop(&mut self) {
            IN_FLIGHT.lock().unwrap_or_else(PoisonError::into_inner).retain(|(thread, ..)| *thread != self.0);
        }
    }
    static WATCHDOG: OnceLock<()> = OnceLock::new();
    WATCHDOG.get_or_init(|| {
        std::thread::spawn(|| {
            loop {
                std::thread::sleep(Duration::from_millis(100));
                let in_flight = IN_FLIGHT.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some((_, _, input)) = in_flight.iter().find(|(_, deadline, _)| *deadline < Instant::now()) {
                    eprintln!("fuzz: no answer within the time limit; the input was:\n{input}");
                    std::process::abort();
                }
            }
        });
    });
    let thread = std::thread::current().id();
    IN_FLIGHT.lock().unwrap_or_else(PoisonError::into_inner).push((
        thread,
        Instant::now() + limit,
        format!("{input:?}"),
    ));
    let _done = Done(thread);
    parse()
}

// ---------------------------------------------------------------------------------------
// Sizes and durations

const SIZE_UNITS: [(&str, u64); 8] = [
    ("", 1),
    ("B", 1),
    ("KB", 1_000),
    ("KiB", 1 << 10),
    ("MB", 1_000_000),
    ("MiB", 1 << 20),
    ("GB", 1_000_000_000),
    ("GiB", 1 << 30),
];

const DURATION_UNITS: [(&str, f64); 4] = [("ms", 0.001), ("s", 1.0), ("m", 60.0), ("min", 60.0)];

/// Text around a unit the way people write it, and units nobody should write.
fn unit_text(units: Vec<&'static str>) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(units).prop_map(str::to_owned),
        1 => "[a-zA-Z/ ]{0,4}",
        1 => any::<String>(),
    ]
}

#[test]
fn sizes_parse_exactly_or_say_what_is_wrong() {
    let units: Vec<&str> = SIZE_UNITS.iter().map(|(unit, _)| *unit).collect();
    let written = ("[0-9]{0,22}", " {0,2}", unit_text(units), "[ \t]{0,2}", " {0,2}");
    check(cases(1), written, |(digits, gap, unit, trailing, leading)| {
        if unit.trim_start().starts_with(|c: char| c.is_ascii_digit()) {
            return Ok(()); // the unit would continue the number
        }
        let text = format!("{leading}{digits}{gap}{unit}{trailing}");
        let parsed = within(PARSE_TIME_LIMIT, &text, || parse_size(&text));
        let multiplier = SIZE_UNITS.iter().find(|(known, _)| *known == unit.trim()).map(|(_, m)| *m);
        let expected = match (digits.parse::<u64>(), multiplier) {
            (Ok(number), Some(multiplier)) => number.checked_mul(multiplier),
            _ => None,
        };
        match (&parsed, expected) {
            (Ok(bytes), Some(expected)) => prop_assert_eq!(*bytes, expected, "{:?}", text),
            (Err(message), None) => prop_assert!(!message.is_empty(), "{:?}", text),
            _ => prop_assert!(false, "{:?} parsed as {:?}, expected {:?}", text, parsed, expected),
        }
        Ok(())
    });
    check(cases(1), any::<String>(), |text| {
        let parsed = within(PARSE_TIME_LIMIT, &text, || parse_size(&text));
        if let Err(message) = parsed {
            prop_assert!(message.contains(text.trim()) || message.contains("unit"), "{:?}: {}", text, message);
        }
        Ok(())
    });
}

#[test]
fn durations_are_positive_and_exact_or_say_what_is_wrong() {
    let units: Vec<&str> = DURATION_UNITS.iter().map(|(unit, _)| *unit).collect();
    let number = prop_oneof!["[0-9]{0,8}", "[0-9]{0,4}\\.[0-9]{0,14}", "0\\.0{0,12}[0-9]{1,3}", "[0-9.]{0,4}"];
    check(cases(1), (number, " {0,2}", unit_text(units)), |(number, gap, unit)| {
        if unit.trim_start().starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return Ok(()); // the unit would continue the number
        }
        let text = format!("{number}{gap}{unit}");
        let parsed = within(PARSE_TIME_LIMIT, &text, || parse_duration(&text));
        let factor = DURATION_UNITS.iter().find(|(known, _)| *known == unit.trim()).map(|(_, f)| *f);
        match (&parsed, number.parse::<f64>(), factor) {
            (Ok(duration), Ok(value), Some(factor)) => {
                prop_assert!(!duration.is_zero(), "{:?} parsed as zero, which every limit refuses", text);
                let seconds = value * factor;
                let error = (duration.as_secs_f64() - seconds).abs();
                prop_assert!(error <= seconds * 1e-9 + 1e-9, "{:?} parsed as {:?}", text, duration);
            }
            (Ok(duration), ..) => prop_assert!(false, "{:?} parsed as {:?}", text, duration),
            (Err(message), ..) => prop_assert!(
                message.contains(text.trim()) || message.contains("unit"),
                "{:?}: the error does not say what: {}",
                text,
                message
            ),
        }
        Ok(())
    });
    check(cases(1), any::<String>(), |text| {
        if let Ok(duration) = within(PARSE_TIME_LIMIT, &text, || parse_duration(&text)) {
            prop_assert!(!duration.is_zero(), "{:?}", text);
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------
// Names and the forms consumers spell them in

/// The name rules, written independently of the host: lowercase ASCII words of letters
/// and digits, the first starting with a letter, joined by single `_` or `-`.
fn follows_the_name_rules(name: &str, max_len: usize) -> bool {
    name.len() <= max_len
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .split(['_', '-'])
            .all(|word| !word.is_empty() && word.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
}

/// Names near the rules (valid ones, with a character replaced, inserted or dropped) and
/// names far from them.
fn name_candidates() -> impl Strategy<Value = String> {
    let valid = "[a-z][a-z0-9]{0,8}([_-][a-z0-9]{1,6}){0,5}";
    let edited = (valid, any::<Index>(), any::<char>(), 0..3u8).prop_map(|(name, at, c, how)| {
        let mut chars: Vec<char> = name.chars().collect();
        let at = at.index(chars.len() + 1);
        match how {
            0 => chars.insert(at, c),
            1 if at < chars.len() => chars[at] = c,
            _ if at < chars.len() => drop(chars.remove(at)),
            _ => chars.push(c),
        }
        chars.into_iter().collect()
    });
    prop_oneof![
        2 => valid.prop_map(String::from),
        3 => edited,
        2 => "[a-z0-9_./A-Z-]{0,45}",
        1 => "[a-zé]{15,45}",
        1 => any::<String>(),
    ]
}

/// Checks what a refusal of `name` says against the name itself.
fn refusal_is_true(kind: &str, name: &str, max_len: usize, message: &str) -> Result<(), TestCaseError> {
    prop_assert!(message.starts_with(&format!("{kind} name `{name}` ")), "{:?}: {}", name, message);
    let reason = &message[format!("{kind} name `{name}` ").len()..];
    let separator = |c: char| c == '_' || c == '-';
    if reason == "is empty" {
        prop_assert!(name.is_empty());
    } else if let Some(rest) = reason.strip_prefix("is ") {
        let length: usize =
            rest.split(' ').next().unwrap_or("").parse().map_err(|_| TestCaseError::fail(reason.to_owned()))?;
        prop_assert_eq!(length, name.chars().count(), "the length told of {:?}: {}", name, message);
        prop_assert!(length > max_len, "{}", message);
    } else if reason.starts_with("must start with") {
        prop_assert!(!name.starts_with(|c: char| c.is_ascii_lowercase()), "{}", message);
    } else if let Some(rest) = reason.strip_prefix("contains `") {
        let shown = rest.chars().next().unwrap_or(' ');
        prop_assert!(rest[shown.len_utf8()..].starts_with('`') && name.contains(shown), "{}", message);
        prop_assert!(!(shown.is_ascii_lowercase() || shown.is_ascii_digit() || separator(shown)), "{}", message);
    } else if reason.starts_with("must not end") {
        prop_assert!(name.ends_with(separator), "{}", message);
    } else if reason.contains("two separators") {
        prop_assert!(name.contains("__") || name.contains("_-") || name.contains("-_") || name.contains("--"));
    } else {
        prop_assert!(false, "an unknown reason for {:?}: {}", name, message);
    }
    Ok(())
}

#[test]
fn names_follow_the_rules_and_refusals_say_what_is_wrong() {
    check(cases(1) * 2, name_candidates(), |name| {
        for (kind, max_len, result) in [
            ("tool", names::MAX_TOOL_LEN, names::validate_tool(&name)),
            ("namespace", names::MAX_NAMESPACE_LEN, names::validate_namespace(&name)),
        ] {
            match result {
                Ok(()) => prop_assert!(follows_the_name_rules(&name, max_len), "{} name {:?} accepted", kind, name),
                Err(message) => {
                    prop_assert!(!follows_the_name_rules(&name, max_len), "{} name {:?}: {}", kind, name, message);
                    refusal_is_true(kind, &name, max_len, &message)?;
                }
            }
        }
        Ok(())
    });
}

fn valid_name(max_len: usize) -> impl Strategy<Value = String> {
    "[a-z][a-z0-9]{0,7}([_-][a-z0-9]{1,5}){0,3}".prop_filter("within the length limit", move |n| n.len() <= max_len)
}

#[test]
fn every_valid_full_name_maps_to_consumer_forms_and_back() {
    let full_names = (valid_name(names::MAX_NAMESPACE_LEN), valid_name(names::MAX_TOOL_LEN));
    check(cases(1), full_names, |(namespace, tool)| {
        let full = names::full_name(&namespace, &tool);
        prop_assert_eq!(names::split(&full), Some((namespace.as_str(), tool.as_str())));
        let function = names::function_name(&full);
        prop_assert!(
            (1..=64).contains(&function.len())
                && function.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "OpenAI and Anthropic refuse the function name {:?}",
            function
        );
        let mcp = names::mcp_name(&full);
        prop_assert!(
            (1..=128).contains(&mcp.len())
                && mcp.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'),
            "MCP refuses the tool name {:?}",
            mcp
        );
        prop_assert_eq!(names::unmap(&function), Some(full.clone()));
        prop_assert_eq!(names::unmap(&mcp), Some(full));
        Ok(())
    });
    check(cases(1), prop_oneof![name_candidates(), "[a-z_.]{0,12}"], |name| {
        if let Some(full) = names::unmap(&name) {
            prop_assert!(
                names::function_name(&full) == name || names::mcp_name(&full) == name,
                "{:?} unmaps to {:?}, which maps to neither form of it",
                name,
                full
            );
        }
        Ok(())
    });
}

/// The example tools, `math` in a project layer and `text` and `json` in a stdlib layer
/// (whose tools are also called by bare name).
async fn example_host() -> (ToolsDir, ToolsDir, ToolHost) {
    let (project, stdlib) = (ToolsDir::new(), ToolsDir::new());
    project.install("math", "math", "math");
    stdlib.install("text", "text", "text");
    stdlib.install("json", "json", "json");
    let host = ToolHost::builder()
        .layer(Layer::directory("project", project.path()))
        .layer(Layer::stdlib(stdlib.path().to_owned()))
        .build()
        .await
        .expect("host builds");
    assert_eq!(host.load_errors(), vec![]);
    (project, stdlib, host)
}

/// Every name form a caller can send (full, bare, OpenAI's, MCP's) and edits of them
/// resolve to the tool they name or to "not found" with served suggestions.
#[test]
fn lookups_by_any_name_form_find_the_tool_or_say_not_found() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (_project, _stdlib, host) = runtime.block_on(example_host());
    let snapshot = host.snapshot();
    let mut spelled: Vec<String> = Vec::new();
    for full in snapshot.tools.keys() {
        for form in [full.clone(), names::function_name(full), names::mcp_name(full)] {
            let (entry, _) = snapshot.find(&form).unwrap_or_else(|| panic!("{form} is not found"));
            assert_eq!(&entry.full_name, full, "{form}");
            spelled.push(form);
        }
    }
    spelled.extend(snapshot.bare_names.keys().cloned());
    assert!(!snapshot.bare_names.is_empty(), "the stdlib tools have bare names");
    let edited = (select(spelled), any::<Index>(), "[a-zA-Z_./-]{0,2}", 0..3u8).prop_map(|(name, at, text, how)| {
        let at = (0..=name.len()).filter(|i| name.is_char_boundary(*i)).nth(at.index(name.len() + 1)).unwrap_or(0);
        match how {
            0 => format!("{}{text}{}", &name[..at], &name[at..]),
            1 => name.to_uppercase(),
            _ => name[..at].to_owned(),
        }
    });
    check(cases(1), prop_oneof![edited, name_candidates()], |name| {
        let found = within(PARSE_TIME_LIMIT, &name, || snapshot.find(&name));
        match found {
            Some((entry, names::NameForm::Full)) => prop_assert_eq!(&entry.full_name, &name),
            Some((entry, names::NameForm::Bare)) => {
                prop_assert_eq!(snapshot.bare_names.get(&name), Some(&entry.full_name))
            }
            Some((entry, names::NameForm::Exported)) => {
                prop_assert_eq!(names::unmap(&name), Some(entry.full_name.clone()))
            }
            None => {
                let (asked, suggestions) = match runtime.block_on(host.call(&name, json!({}))) {
                    Err(CallError::NotFound { name, suggestions }) => (name, suggestions),
                    other => {
                        return Err(TestCaseError::fail(format!(
                            "{name:?} is not found, yet a call answered {other:?}"
                        )));
                    }
                };
                prop_assert_eq!(&asked, &name);
                prop_assert!(suggestions.len() <= 3, "{:?}", suggestions);
                prop_assert!(suggestions.iter().all(|s| snapshot.tools.contains_key(s)), "{:?}", suggestions);
                let _ = snapshot.load_error_in_namespace_of(&name);
            }
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------
// TOML documents: a model of near-valid files, one edit away from valid

/// A key a table may hold: values it accepts, and values it surely refuses.
#[derive(Clone, Copy, Debug)]
struct Key {
    name: &'static str,
    required: bool,
    good: fn() -> BoxedStrategy<String>,
    bad: &'static [&'static str],
}

/// A table as written: an optional comment line, its header (none for the top level),
/// then one `key = value` line per entry.
#[derive(Clone, Debug)]
struct Table {
    comment: Option<String>,
    header: Option<String>,
    keys: &'static [Key],
    entries: Vec<(String, String)>,
}

/// The 1-based lines of a table's header (line 1 for the top level) and its entries.
struct TableLines {
    header: usize,
    entries: Vec<usize>,
}

fn render(tables: &[Table]) -> (String, Vec<TableLines>) {
    let mut text = String::new();
    let mut lines = Vec::new();
    let mut line = 1;
    for table in tables {
        if let Some(comment) = &table.comment {
            writeln!(text, "# {comment}").unwrap();
            line += 1;
        }
        let header = match &table.header {
            Some(header) => {
                writeln!(text, "{header}").unwrap();
                line += 1;
                line - 1
            }
            None => 1,
        };
        let mut entries = Vec::new();
        for (key, value) in &table.entries {
            writeln!(text, "{key} = {value}").unwrap();
            entries.push(line);
            line += 1;
        }
        lines.push(TableLines { header, entries });
    }
    (text, lines)
}

/// One edit of a valid document.
#[derive(Clone, Debug)]
enum Edit {
    /// An entry's value replaced.
    Value {
        table: usize,
        entry: usize,
        value: String,
    },
    /// An entry added at the end of a table.
    Insert {
        table: usize,
        key: String,
        value: String,
    },
    Delete {
        table: usize,
        entry: usize,
    },
    Rename {
        table: usize,
        entry: usize,
        key: String,
    },
    Header {
        table: usize,
        header: String,
    },
}

/// A document with one edit, and what the edit means for an error.
#[derive(Clone, Debug)]
struct Edited {
    text: String,
    edit: Edit,
    /// The edit breaks a rule: the file must be refused.
    surely_wrong: bool,
    /// Lines an error may name: the edited line, or lines the edit conflicts with.
    lines: Vec<usize>,
    /// The header line of the edited table: an error about the table as a whole (a
    /// missing key, a rule over several keys) names it, with one of `keys`.
    header: usize,
    keys: Vec<String>,
    /// The edit wrote text that may not be TOML: an unclosed array, inline table or
    /// string goes on over the next lines, and the parser stops somewhere after it.
    open_ended: bool,
}

impl Edited {
    /// The error at `line` saying `message` is where this edit is.
    fn locates(&self, line: usize, message: &str) -> bool {
        self.lines.contains(&line)
            || (line == self.header && self.keys.iter().any(|key| message.contains(key)))
            || (self.open_ended && self.lines.first().is_some_and(|first| line >= *first))
    }
}

/// `edit` applied to `tables`.
fn apply(mut tables: Vec<Table>, edit: Edit, surely_wrong: bool, open_ended: bool) -> Edited {
    let mut keys = Vec::new();
    let mut whole_table = None;
    let mut edited_entry = None;
    let mut same_key = None;
    match &edit {
        Edit::Value { table, entry, value } => {
            keys.push(tables[*table].entries[*entry].0.clone());
            tables[*table].entries[*entry].1 = value.clone();
            edited_entry = Some((*table, *entry));
        }
        Edit::Insert { table, key, value } => {
            keys.push(key.clone());
            tables[*table].entries.push((key.clone(), value.clone()));
            edited_entry = Some((*table, tables[*table].entries.len() - 1));
            same_key = Some((*table, key.clone()));
        }
        Edit::Delete { table, entry } => {
            keys.push(tables[*table].entries.remove(*entry).0);
        }
        Edit::Rename { table, entry, key } => {
            keys.push(std::mem::replace(&mut tables[*table].entries[*entry].0, key.clone()));
            keys.push(key.clone());
            edited_entry = Some((*table, *entry));
            same_key = Some((*table, key.clone()));
        }
        Edit::Header { table, header } => {
            tables[*table].header = Some(header.clone());
            whole_table = Some(*table);
        }
    }
    let (text, layout) = render(&tables);
    let table = match &edit {
        Edit::Value { table, .. }
        | Edit::Insert { table, .. }
        | Edit::Delete { table, .. }
        | Edit::Rename { table, .. }
        | Edit::Header { table, .. } => *table,
    };
    let mut lines = Vec::new();
    if let Some((table, entry)) = edited_entry {
        lines.push(layout[table].entries[entry]);
    }
    if let Some(table) = whole_table
        && tables[table].header.is_some()
    {
        lines.push(layout[table].header);
        lines.extend(&layout[table].entries);
    }
    // TOML names the later of two equal keys.
    if let Some((table, key)) = same_key {
        let equal = tables[table].entries.iter().zip(&layout[table].entries).filter(|((k, _), _)| *k == key);
        lines.extend(equal.map(|(_, line)| *line));
    }
    // A smaller ceiling refuses a default over it, on the default's line.
    if keys.iter().any(|key| key == "max_memory") {
        for (other, other_lines) in tables.iter().zip(&layout) {
            if other.header.as_deref() == Some("[defaults]") {
                let memory = other.entries.iter().zip(&other_lines.entries).filter(|((k, _), _)| k == "memory");
                lines.extend(memory.map(|(_, line)| *line));
            }
        }
    }
    Edited { text, edit, surely_wrong, lines, header: layout[table].header, keys, open_ended }
}

/// One edit of `tables`, chosen from what the keys accept and refuse; `bad_headers` are
/// headers no document may have.
fn edits(tables: Vec<Table>, bad_headers: &'static [&'static str]) -> BoxedStrategy<Edited> {
    let choices = (0..7u8, any::<Index>(), any::<Index>(), any::<Index>(), toml_value(), "[a-z][a-z_]{0,8}");
    choices
        .prop_map(move |(kind, table_at, entry_at, pick, random_value, unknown)| {
            let table = table_at.index(tables.len());
            let keys = tables[table].keys;
            let entries = &tables[table].entries;
            let unknown = if keys.iter().any(|key| key.name == unknown) { format!("{unknown}x") } else { unknown };
            let insert_unknown = Edit::Insert { table, key: unknown.clone(), value: random_value.clone() };
            let random = |edit: &Edit| match edit {
                Edit::Value { value, .. } | Edit::Insert { value, .. } => *value == random_value,
                _ => false,
            };
            let (edit, surely_wrong) = match kind {
                0 if !entries.is_empty() => {
                    let entry = entry_at.index(entries.len());
                    match keys.iter().find(|key| key.name == entries[entry].0) {
                        Some(key) if !key.bad.is_empty() => {
                            (Edit::Value { table, entry, value: pick.get(key.bad).to_string() }, true)
                        }
                        _ => (insert_unknown, true),
                    }
                }
                1 if !entries.is_empty() => {
                    (Edit::Value { table, entry: entry_at.index(entries.len()), value: random_value.clone() }, false)
                }
                2 if !keys.is_empty() => {
                    let key = keys[entry_at.index(keys.len())];
                    match key.bad {
                        [] => (insert_unknown, true),
                        bad => {
                            (Edit::Insert { table, key: key.name.to_owned(), value: pick.get(bad).to_string() }, true)
                        }
                    }
                }
                3 if !entries.is_empty() => {
                    let entry = entry_at.index(entries.len());
                    let required = keys.iter().any(|key| key.name == entries[entry].0 && key.required);
                    (Edit::Delete { table, entry }, required)
                }
                4 if !entries.is_empty() => {
                    let entry = entry_at.index(entries.len());
                    match keys.get(pick.index(keys.len() * 2 + 1)) {
                        Some(other) => (Edit::Rename { table, entry, key: other.name.to_owned() }, false),
                        None => (Edit::Rename { table, entry, key: unknown }, true),
                    }
                }
                5 if tables[table].header.is_some() => {
                    (Edit::Header { table, header: pick.get(bad_headers).to_string() }, true)
                }
                _ => (insert_unknown, true),
            };
            let open_ended = random(&edit);
            apply(tables.clone(), edit, surely_wrong, open_ended)
        })
        .boxed()
}

/// A table with `header` holding its required keys and some of its optional ones, each
/// with a value it accepts.
fn table(header: Option<&str>, keys: &'static [Key]) -> BoxedStrategy<Table> {
    let header = header.map(str::to_owned);
    let optional: Vec<usize> = (0..keys.len()).filter(|i| !keys[*i].required).collect();
    let count = optional.len();
    subsequence(optional, 0..=count)
        .prop_shuffle()
        .prop_flat_map(move |chosen| {
            let required = (0..keys.len()).filter(|i| keys[*i].required);
            let entries: Vec<BoxedStrategy<(String, String)>> = required
                .chain(chosen)
                .map(|i| (keys[i].good)().prop_map(move |value| (keys[i].name.to_owned(), value)).boxed())
                .collect();
            entries
        })
        .prop_map(move |entries| Table { comment: None, header: header.clone(), keys, entries })
        .boxed()
}

/// The top-level groups of tables in a random order, each table after an optional comment
/// (which may mention what the file grants: errors must not point at comments).
fn document(top: Table, groups: Vec<BoxedStrategy<Vec<Table>>>) -> BoxedStrategy<Vec<Table>> {
    let comment = prop_oneof![
        "[ -~]{0,30}",
        select(vec!["granted /data", "/d and /cache", "data", "api.example.com:443"]).prop_map(str::to_owned),
    ];
    (groups.prop_shuffle(), vec(proptest::option::of(comment), 16))
        .prop_map(move |(groups, comments)| {
            let mut tables = vec![top.clone()];
            tables.extend(groups.into_iter().flatten());
            for (table, comment) in tables.iter_mut().zip(comments) {
                table.comment = comment;
            }
            tables
        })
        .boxed()
}

/// A TOML basic string holding `text`.
fn toml_string(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            c if c.is_control() => write!(quoted, "\\u{:04X}", u32::from(c)).unwrap(),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

fn toml_array(items: Vec<String>) -> String {
    format!("[{}]", items.join(", "))
}

/// A TOML value of any type, often one a key does not take, sometimes not TOML at all.
fn toml_value() -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<String>().prop_map(|s| toml_string(&s)),
        ("[0-9]{1,6}", " ?", "[a-zA-Z]{0,3}").prop_map(|(n, gap, unit)| format!("\"{n}{gap}{unit}\"")),
        Just("1979-05-27T07:32:00Z".to_owned()),
        "[ -~]{0,6}",
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(toml_array),
            btree_map("[a-z]{1,3}", inner, 0..3).prop_map(|map| {
                let pairs: Vec<String> = map.into_iter().map(|(k, v)| format!("{k} = {v}")).collect();
                format!("{{ {} }}", pairs.join(", "))
            }),
        ]
    })
    .boxed()
}

fn positive_integers() -> BoxedStrategy<String> {
    prop_oneof![(1..=i64::MAX).prop_map(|n| n.to_string()), (1u32..10_000).prop_map(|n| format!("{n}_000"))].boxed()
}

/// A positive size of at most `max` bytes, as a number of bytes or as text with a unit.
fn size_up_to(max: u64) -> BoxedStrategy<String> {
    let units: Vec<(&str, u64)> = SIZE_UNITS.iter().copied().filter(|(_, m)| *m <= max).collect();
    let text = (select(units), any::<bool>()).prop_flat_map(move |((unit, multiplier), spaced)| {
        (1..=max / multiplier).prop_map(move |n| format!("\"{n}{}{unit}\"", if spaced { " " } else { "" }))
    });
    prop_oneof![(1..=max.min(i64::MAX as u64)).prop_map(|n| n.to_string()), text].boxed()
}

fn manifest_memory() -> BoxedStrategy<String> {
    size_up_to(1 << 30)
}

fn default_memory() -> BoxedStrategy<String> {
    size_up_to(64 << 20)
}

fn sizes() -> BoxedStrategy<String> {
    size_up_to(u64::MAX)
}

/// A positive duration of at most `max_secs`.
fn duration_up_to(max_secs: u64) -> BoxedStrategy<String> {
    prop_oneof![
        (1..=max_secs * 1000).prop_map(|n| format!("\"{n}ms\"")),
        (1..=max_secs).prop_map(|n| format!("\"{n}s\"")),
        (1..=max_secs / 60).prop_map(|n| format!("\"{n}m\"")),
        (1..=max_secs / 60).prop_map(|n| format!("\"{n} min\"")),
        (0..max_secs, 1..10u8).prop_map(|(s, tenth)| format!("\"{s}.{tenth}s\"")),
    ]
    .boxed()
}

fn timeouts() -> BoxedStrategy<String> {
    duration_up_to(600)
}

fn idle_times() -> BoxedStrategy<String> {
    duration_up_to(86_400)
}

fn booleans() -> BoxedStrategy<String> {
    any::<bool>().prop_map(|b| b.to_string()).boxed()
}

fn risks() -> BoxedStrategy<String> {
    select(vec!["\"low\"", "\"medium\"", "\"high\"", "\"critical\""]).prop_map(str::to_owned).boxed()
}

fn strings() -> BoxedStrategy<String> {
    any::<String>().prop_map(|s| toml_string(&s)).boxed()
}

fn paths() -> BoxedStrategy<String> {
    prop_oneof![
        select(vec!["tools", "/srv/toolhost", "../shared", "audit.jsonl", "./x"]).prop_map(str::to_owned),
        "[a-zA-Z0-9_./-]{1,20}",
    ]
    .prop_map(|p| toml_string(&p))
    .boxed()
}

fn host_patterns() -> BoxedStrategy<String> {
    let name = "[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?){0,3}";
    let host = prop_oneof![
        name.prop_map(String::from),
        name.prop_map(|n| format!("*.{n}")),
        any::<std::net::Ipv4Addr>().prop_map(|a| a.to_string()),
        any::<std::net::Ipv6Addr>().prop_map(|a| format!("[{a}]")),
    ];
    let pattern = (host, proptest::option::of(1..=u16::MAX)).prop_map(|(host, port)| match port {
        Some(port) => format!("{host}:{port}"),
        None => host,
    });
    vec(pattern.prop_map(|p| toml_string(&p)), 0..4).prop_map(toml_array).boxed()
}

fn env_names() -> BoxedStrategy<String> {
    vec("[A-Z_][A-Z0-9_]{0,12}".prop_map(|n| toml_string(&n)), 0..4).prop_map(toml_array).boxed()
}

fn config_values() -> BoxedStrategy<String> {
    let value = prop_oneof![
        select(vec!["/data", "/d", "metric", "data"]).prop_map(toml_string),
        any::<String>().prop_map(|s| toml_string(&s)),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| format!("{f:?}")),
        any::<bool>().prop_map(|b| b.to_string()),
    ];
    btree_map("[a-z_]{1,8}", value, 0..4)
        .prop_map(|map| {
            let pairs: Vec<String> = map.into_iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!("{{ {} }}", pairs.join(", "))
        })
        .boxed()
}

/// Directories granted relative to the manifest: [`manifest_dir`] creates them.
fn file_grants() -> BoxedStrategy<String> {
    subsequence(vec!["/data", "/cache", "/srv/in", "/d"], 0..=4)
        .prop_flat_map(|guests| {
            let n = guests.len();
            (Just(guests), vec(select(vec!["data", "other", ".", "./data", "data/"]), n), vec(any::<bool>(), n))
        })
        .prop_map(|(guests, hosts, writable)| {
            let grants = guests.iter().zip(hosts).zip(writable).map(|((guest, host), writable)| {
                let mode = if writable { "rw" } else { "ro" };
                format!("{{ host = \"{host}\", guest = \"{guest}\", mode = \"{mode}\" }}")
            });
            toml_array(grants.collect())
        })
        .boxed()
}

const BOOL_BAD: &[&str] = &["\"yes\"", "1", "[]", "\"true\""];
const RISK_BAD: &[&str] = &["\"severe\"", "\"Low\"", "1", "\"\""];
const STRING_BAD: &[&str] = &["1", "true", "[\"x\"]", "{}"];
const FUEL_BAD: &[&str] = &["0", "-1", "\"5\"", "1.5", "true", "18446744073709551616", "[]", "{}", "\"\""];
const SIZE_BAD: &[&str] = &[
    "0",
    "-5",
    "\"0\"",
    "\"0 KiB\"",
    "\"12 parsecs\"",
    "\"64 mib\"",
    "\"99999999999 GiB\"",
    "\"GiB\"",
    "\"\"",
    "1.5",
    "true",
    "\"-1 KiB\"",
    "\"1 KiB extra\"",
    "[64]",
];
const MEMORY_BAD: &[&str] = &["\"2 GiB\"", "1073741825", "\"1025 MiB\"", "0", "\"12 parsecs\"", "\"64 mib\"", "-5"];
/// Durations no limit takes; the last two are under a nanosecond, so zero.
const TIMEOUT_BAD: &[&str] = &[
    "\"5\"",
    "\"0s\"",
    "\"-1s\"",
    "\"5 parsecs\"",
    "5",
    "\"601s\"",
    "\"11m\"",
    "\"1e3s\"",
    "\"\"",
    "\"s\"",
    "\"inf s\"",
    "\"0.0000000001s\"",
    "\"0.0000001ms\"",
];
const IDLE_BAD: &[&str] = &[
    "\"5\"",
    "\"0s\"",
    "\"-1s\"",
    "\"5 parsecs\"",
    "5",
    "\"\"",
    "\"99999999999999999999999s\"",
    "\"0.0000000001s\"",
    "\"0.0000001ms\"",
];

const LIMIT_KEYS: &[Key] = &[
    Key { name: "fuel", required: false, good: positive_integers, bad: FUEL_BAD },
    Key { name: "memory", required: false, good: manifest_memory, bad: MEMORY_BAD },
    Key { name: "timeout", required: false, good: timeouts, bad: TIMEOUT_BAD },
    Key { name: "max_output", required: false, good: sizes, bad: SIZE_BAD },
    Key { name: "max_log", required: false, good: sizes, bad: SIZE_BAD },
];

const POLICY_KEYS: &[Key] = &[
    Key { name: "requires_approval", required: false, good: booleans, bad: BOOL_BAD },
    Key { name: "risk", required: false, good: risks, bad: RISK_BAD },
    Key { name: "read_only", required: false, good: booleans, bad: BOOL_BAD },
    Key { name: "destructive", required: false, good: booleans, bad: BOOL_BAD },
    Key { name: "idempotent", required: false, good: booleans, bad: BOOL_BAD },
    Key { name: "open_world", required: false, good: booleans, bad: BOOL_BAD },
];

const GRANT_KEYS: &[Key] = &[
    Key {
        name: "files",
        required: false,
        good: file_grants,
        bad: &[
            "[{ host = \"missing\", guest = \"/d\", mode = \"ro\" }]",
            "[{ host = \"file.txt\", guest = \"/d\", mode = \"ro\" }]",
            "[{ host = \"data\", guest = \"rel\", mode = \"ro\" }]",
            "[{ host = \"data\", guest = \"/d\", mode = \"rwx\" }]",
            "[{ host = \"data\", guest = \"/a/../b\", mode = \"ro\" }]",
            "[{ host = \"data\", guest = \"/./d\", mode = \"ro\" }]",
            "[{ host = \"data\", guest = \"/d\" }]",
            "[{ host = \"data\", guest = \"/d\", mode = \"ro\", extra = 1 }]",
            "[{ host = \"data\", guest = \"/d\", mode = \"ro\" }, { host = \"other\", guest = \"/d\", mode = \"rw\" }]",
            "[{ host = \"data\", guest = \"/d\", mode = \"ro\" }, { host = \"other\", guest = \"/d/\", mode = \"rw\" }]",
            "\"data\"",
            "[\"data\"]",
        ],
    },
    Key {
        name: "network",
        required: false,
        good: host_patterns,
        bad: &[
            "[\"bad host:99999\"]",
            "[\"http://x.com\"]",
            "[\"::1\"]",
            "[\"[::1\"]",
            "[\"*.\"]",
            "[\"a..b\"]",
            "[\"\"]",
            "[1]",
            "[\"x.com:0\"]",
            "\"x.com\"",
            "[\"[::1]x\"]",
            "[\"exa mple.com\"]",
            "[\"*\"]",
            "[\"x.com:\"]",
            "[\"-x.com\"]",
        ],
    },
    Key {
        name: "env",
        required: false,
        good: env_names,
        bad: &["[\"1BAD\"]", "[\"A-B\"]", "[\"\"]", "[true]", "\"PATH\"", "[\"A B\"]", "[\"É\"]"],
    },
    Key {
        name: "config",
        required: false,
        good: config_values,
        bad: &["{ k = [1] }", "{ k = { a = 1 } }", "{ k = 1979-05-27 }", "[1]", "\"x\""],
    },
];

const TOOL_KEYS: &[Key] = &[Key { name: "description", required: false, good: strings, bad: STRING_BAD }];

const MANIFEST_BAD_HEADERS: &[&str] = &[
    "[sandbox]",
    "[limitz]",
    "[tools.Bad-Name]",
    "[tools.\"a b\"]",
    "[tools.a__b]",
    "[tools.\"\"]",
    "[tools.x-]",
    "[tools.a-tool-name-much-longer-than-thirty-eight]",
];

/// A valid manifest: some of `[limits]`, `[grants]`, `[policy]`, and up to three tools
/// with their own tables.
fn manifest_document() -> BoxedStrategy<Vec<Table>> {
    let tools = btree_set(valid_name(names::MAX_TOOL_LEN), 0..3).prop_flat_map(|tool_names| {
        let tools: Vec<BoxedStrategy<Vec<Table>>> = tool_names
            .into_iter()
            .map(|name| {
                (
                    table(Some(&format!("[tools.{name}]")), TOOL_KEYS),
                    proptest::option::of(table(Some(&format!("[tools.{name}.limits]")), LIMIT_KEYS)),
                    proptest::option::of(table(Some(&format!("[tools.{name}.policy]")), POLICY_KEYS)),
                )
                    .prop_map(|(tool, limits, policy)| [Some(tool), limits, policy].into_iter().flatten().collect())
                    .boxed()
            })
            .collect();
        tools
    });
    let groups = (
        proptest::option::of(table(Some("[limits]"), LIMIT_KEYS)),
        proptest::option::of(table(Some("[grants]"), GRANT_KEYS)),
        proptest::option::of(table(Some("[policy]"), POLICY_KEYS)),
        tools,
    );
    groups
        .prop_flat_map(|(limits, grants, policy, tools)| {
            let mut groups: Vec<BoxedStrategy<Vec<Table>>> =
                [limits, grants, policy].into_iter().flatten().map(|t| Just(vec![t]).boxed()).collect();
            groups.extend(tools.into_iter().map(|t| Just(t).boxed()));
            let top = Table { comment: None, header: None, keys: &[], entries: Vec::new() };
            document(top, groups)
        })
        .boxed()
}

/// The tools a manifest document gives settings for.
fn tool_names_of(tables: &[Table]) -> BTreeSet<String> {
    let names = tables.iter().filter_map(|t| t.header.as_deref()?.strip_prefix("[tools.")?.split(['.', ']']).next());
    names.map(str::to_owned).collect()
}

/// A namespace directory with what manifests grant: `data/` and `other/` directories, and
/// a file that is not one.
fn manifest_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let namespace = dir.path().join("ns");
    for sub in ["data", "other"] {
        std::fs::create_dir_all(namespace.join(sub)).unwrap();
    }
    std::fs::write(namespace.join("file.txt"), "not a directory").unwrap();
    let path = namespace.join("tool.toml");
    (dir, path)
}

fn load_manifest(path: &Path, text: &str) -> Result<Manifest, LoadError> {
    std::fs::write(path, text).unwrap();
    within(PARSE_TIME_LIMIT, &text, || Manifest::load(path, Limits::default(), EngineSettings::default().ceilings()))
}

/// The line and problem of a manifest error, which must name the file.
fn manifest_problem(error: &LoadError, path: &Path, text: &str) -> Result<(usize, String), TestCaseError> {
    prop_assert_eq!(&error.path, path);
    let shown = error.to_string();
    prop_assert!(shown.starts_with(&format!("{}, line ", path.display())), "{}", shown);
    let LoadErrorKind::Manifest { line, problem } = &error.kind else {
        return Err(TestCaseError::fail(format!("not a manifest error: {error:?}")));
    };
    prop_assert!(*line >= 1 && *line <= text.lines().count() + 1, "line {} of {:?}: {}", line, text, problem);
    prop_assert!(!problem.is_empty());
    Ok((*line, problem.clone()))
}

#[test]
fn valid_manifests_are_accepted() {
    let (_dir, path) = manifest_dir();
    check(cases(1), manifest_document(), |tables| {
        let (text, _) = render(&tables);
        match load_manifest(&path, &text) {
            Ok(manifest) => {
                let tools: BTreeSet<String> = manifest.tools.keys().cloned().collect();
                prop_assert_eq!(tools, tool_names_of(&tables), "{}", text);
            }
            Err(error) => prop_assert!(false, "a valid manifest is refused: {}\n{}", error, text),
        }
        Ok(())
    });
}

#[test]
fn manifest_errors_name_the_edited_line() {
    let (_dir, path) = manifest_dir();
    let edited = manifest_document().prop_flat_map(|tables| edits(tables, MANIFEST_BAD_HEADERS));
    check(cases(1) * 2, edited, |edited| {
        match load_manifest(&path, &edited.text) {
            Ok(_) => prop_assert!(!edited.surely_wrong, "accepted:\n{}", edited.text),
            Err(error) => {
                let (line, problem) = manifest_problem(&error, &path, &edited.text)?;
                prop_assert!(
                    edited.locates(line, &problem),
                    "line {}: {} — but the edit {:?} is at lines {:?}:\n{}",
                    line,
                    problem,
                    edited.edit,
                    edited.lines,
                    edited.text
                );
            }
        }
        Ok(())
    });
}

/// Random edits of characters and lines.
#[derive(Clone, Debug)]
enum TextEdit {
    Delete { at: Index, len: usize },
    Insert { at: Index, text: String },
    DuplicateLine(Index),
    SwapLines(Index, Index),
}

fn text_edits() -> impl Strategy<Value = Vec<TextEdit>> {
    let insert = prop_oneof!["[\\[\\]{}=\"'.,#\\\\a-z0-9 \n_:*/-]{1,6}", any::<char>().prop_map(String::from)];
    let edit = prop_oneof![
        (any::<Index>(), 1..8usize).prop_map(|(at, len)| TextEdit::Delete { at, len }),
        (any::<Index>(), insert).prop_map(|(at, text)| TextEdit::Insert { at, text }),
        any::<Index>().prop_map(TextEdit::DuplicateLine),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| TextEdit::SwapLines(a, b)),
    ];
    vec(edit, 1..4)
}

fn edit_text(text: &str, edits: &[TextEdit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for edit in edits {
        match edit {
            TextEdit::Delete { at, len } => {
                let at = at.index(chars.len() + 1);
                chars.drain(at..(at + len).min(chars.len()));
            }
            TextEdit::Insert { at, text } => {
                let at = at.index(chars.len() + 1);
                chars.splice(at..at, text.chars());
            }
            TextEdit::DuplicateLine(line) | TextEdit::SwapLines(line, _) => {
                let text: String = chars.iter().collect();
                let mut lines: Vec<&str> = text.lines().collect();
                if lines.is_empty() {
                    continue;
                }
                let a = line.index(lines.len());
                match edit {
                    TextEdit::SwapLines(_, other) => {
                        let b = other.index(lines.len());
                        lines.swap(a, b);
                    }
                    _ => lines.insert(a, lines[a]),
                }
                chars = lines.join("\n").chars().collect();
            }
        }
    }
    chars.into_iter().collect()
}

/// The `.toml` files of `tests/ui/KIND`, and `extra`.
fn real_files(kind: &str, extra: &[&str]) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui").join(kind);
    let mut texts: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    texts.sort();
    texts.extend(extra.iter().map(|text| text.to_string()));
    texts
}

/// The manifest of the manifest module's documentation, with every table.
const FULL_MANIFEST: &str = r#"[limits]                 # per call; absent keys keep the host defaults
fuel = 500_000_000
memory = "64 MiB"
timeout = "5s"
max_output = "1 MiB"
max_log = "64 KiB"

[grants]                 # nothing is granted unless listed here
files   = [{ host = "data", guest = "/data", mode = "ro" }]
network = ["api.example.com:443", "*.example.org"]
env     = ["API_TOKEN"]
config  = { units = "metric" }

[policy]
requires_approval = false
risk = "low"
read_only = true
open_world = false

[tools.get-weather]
description = "Current weather for a city, in metric units."
[tools.get-weather.limits]
timeout = "10s"
[tools.get-weather.policy]
open_world = true
"#;

/// Text far from TOML, and text made of TOML's punctuation.
fn raw_text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[\\[\\]{}=\"'.,#a-z0-9 \n_-]{0,200}"]
}

#[test]
fn edited_real_manifests_and_raw_text_are_refused_at_a_line_of_the_file() {
    let (_dir, path) = manifest_dir();
    let texts = real_files("manifest", &[FULL_MANIFEST]);
    let edited = (select(texts), text_edits()).prop_map(|(text, edits)| edit_text(&text, &edits));
    check(cases(1) * 2, prop_oneof![3 => edited, 1 => raw_text()], |text| {
        if let Err(error) = load_manifest(&path, &text) {
            manifest_problem(&error, &path, &text)?;
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------
// toolhost.toml

fn layer_names() -> BoxedStrategy<String> {
    select(vec!["project", "org", "team", "stdlib"]).prop_map(toml_string).boxed()
}

fn max_memories() -> BoxedStrategy<String> {
    prop_oneof![
        select(vec!["\"64 MiB\"", "\"1 GiB\"", "\"4 GiB\"", "\"128MiB\""]).prop_map(str::to_owned),
        (64u64..=8192).prop_map(|n| format!("\"{n} MiB\"")),
    ]
    .boxed()
}

fn instance_counts() -> BoxedStrategy<String> {
    (1..=4096u32).prop_map(|n| n.to_string()).boxed()
}

fn tierings() -> BoxedStrategy<String> {
    select(vec!["\"tiered\"", "\"optimized\"", "\"baseline\""]).prop_map(str::to_owned).boxed()
}

fn globs() -> BoxedStrategy<String> {
    prop_oneof![select(vec!["*", "planner", "planner-*", "math/*", "*/read"]).prop_map(str::to_owned), "[a-z*/-]{1,10}"]
        .prop_map(|g| toml_string(&g))
        .boxed()
}

fn glob_lists() -> BoxedStrategy<String> {
    vec(globs(), 0..4).prop_map(toml_array).boxed()
}

fn agents() -> BoxedStrategy<String> {
    "[a-z][a-z0-9-]{0,8}".prop_map(|a| toml_string(&a)).boxed()
}

fn digests() -> BoxedStrategy<String> {
    "[0-9a-fA-F]{64}".prop_map(|d| toml_string(&d)).boxed()
}

fn token_files() -> BoxedStrategy<String> {
    select(vec!["\"ci.token\"", "\"./ci.token\""]).prop_map(str::to_owned).boxed()
}

fn token_variables() -> BoxedStrategy<String> {
    Just("\"PATH\"".to_owned()).boxed()
}

const LAYER_KEYS: &[Key] = &[
    Key { name: "name", required: true, good: layer_names, bad: &["1", "true", "[]"] },
    Key { name: "root", required: true, good: paths, bad: &["1", "[]"] },
    Key { name: "stdlib", required: false, good: booleans, bad: BOOL_BAD },
];

const DEFAULT_KEYS: &[Key] = &[
    Key { name: "fuel", required: false, good: positive_integers, bad: FUEL_BAD },
    Key { name: "memory", required: false, good: default_memory, bad: SIZE_BAD },
    Key { name: "timeout", required: false, good: timeouts, bad: TIMEOUT_BAD },
    Key { name: "max_output", required: false, good: sizes, bad: SIZE_BAD },
    Key { name: "max_log", required: false, good: sizes, bad: SIZE_BAD },
];

const ENGINE_KEYS: &[Key] = &[
    Key {
        name: "max_memory",
        required: false,
        good: max_memories,
        bad: &["\"lots\"", "\"1 parsec\"", "\"99999999999 GiB\"", "\"\"", "true"],
    },
    Key {
        name: "max_instances",
        required: false,
        good: instance_counts,
        bad: &["0", "4097", "-1", "\"8\"", "4294967296", "1.5"],
    },
    Key { name: "tiering", required: false, good: tierings, bad: &["\"fast\"", "1", "\"Tiered\"", "\"\""] },
    Key { name: "drop_idle_code_after", required: false, good: idle_times, bad: IDLE_BAD },
];

const CACHE_KEYS: &[Key] = &[
    Key { name: "dir", required: false, good: paths, bad: &["1", "true"] },
    Key { name: "enabled", required: false, good: booleans, bad: &["\"no\"", "0"] },
];

const AUDIT_KEYS: &[Key] = &[Key { name: "jsonl", required: false, good: paths, bad: &["1", "[]"] }];

const RULE_KEYS: &[Key] = &[
    Key { name: "agent", required: true, good: globs, bad: &["1", "[]"] },
    Key { name: "session", required: false, good: globs, bad: &["1"] },
    Key { name: "allow", required: false, good: glob_lists, bad: &["\"math/*\"", "[1]"] },
    Key { name: "deny", required: false, good: glob_lists, bad: &["\"math/*\"", "[1]"] },
    Key { name: "max_risk", required: false, good: risks, bad: RISK_BAD },
    Key { name: "approve_above", required: false, good: risks, bad: RISK_BAD },
];

const TOKEN_KEYS: &[Key] = &[
    Key { name: "agent", required: true, good: agents, bad: &["\"\"", "\"  \"", "1"] },
    Key {
        name: "sha256",
        required: false,
        good: digests,
        bad: &["\"abc\"", "\"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\"", "1", "\"\""],
    },
    Key {
        name: "file",
        required: false,
        good: token_files,
        bad: &["\"missing.token\"", "\"empty.token\"", "\".\"", "1"],
    },
    Key { name: "env", required: false, good: token_variables, bad: &["\"TOOLHOST_FUZZ_SURELY_UNSET\"", "1", "\"\""] },
];

const CONFIG_BAD_HEADERS: &[&str] = &["[layers]", "[engin]", "[[tokens]]", "[server]", "[[audit_log]]"];

/// `[[token]]` with its agent and exactly one source.
fn token_table() -> BoxedStrategy<Table> {
    (agents(), 1..4usize)
        .prop_flat_map(|(agent, source)| {
            let key = TOKEN_KEYS[source];
            (key.good)().prop_map(move |value| {
                let entries = vec![("agent".to_owned(), agent.clone()), (key.name.to_owned(), value)];
                Table { comment: None, header: Some("[[token]]".to_owned()), keys: TOKEN_KEYS, entries }
            })
        })
        .boxed()
}

/// A valid `toolhost.toml`: layers with distinct names, some of the other tables, policy
/// rules and tokens.
fn config_document() -> BoxedStrategy<Vec<Table>> {
    let layers = subsequence(vec!["project", "org", "team", "stdlib"], 0..=3).prop_flat_map(|layer_names| {
        let layers: Vec<BoxedStrategy<Table>> = layer_names
            .into_iter()
            .map(|name| {
                table(Some("[[layer]]"), LAYER_KEYS)
                    .prop_map(move |mut layer| {
                        layer.entries.iter_mut().filter(|(key, _)| key == "name").for_each(|e| e.1 = toml_string(name));
                        layer
                    })
                    .boxed()
            })
            .collect();
        layers
    });
    let groups = (
        layers,
        proptest::option::of(table(Some("[defaults]"), DEFAULT_KEYS)),
        proptest::option::of(table(Some("[engine]"), ENGINE_KEYS)),
        proptest::option::of(table(Some("[cache]"), CACHE_KEYS)),
        proptest::option::of(table(Some("[audit]"), AUDIT_KEYS)),
        vec(table(Some("[[policy]]"), RULE_KEYS), 0..3),
        vec(token_table(), 0..3),
    );
    groups
        .prop_flat_map(|(layers, defaults, engine, cache, audit, rules, tokens)| {
            // Arrays of tables keep their order: each is one group.
            let mut groups: Vec<BoxedStrategy<Vec<Table>>> =
                [defaults, engine, cache, audit].into_iter().flatten().map(|t| Just(vec![t]).boxed()).collect();
            groups.extend([layers, rules, tokens].into_iter().map(|tables| Just(tables).boxed()));
            let top = Table { comment: None, header: None, keys: &[], entries: Vec::new() };
            document(top, groups)
        })
        .boxed()
}

/// A directory for `toolhost.toml` with the token files configurations name.
fn config_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ci.token"), "a-token-from-a-file\n").unwrap();
    std::fs::write(dir.path().join("empty.token"), "  \n").unwrap();
    let path = dir.path().join("toolhost.toml");
    (dir, path)
}

fn parse_config(path: &Path, text: &str) -> Result<HostConfig, toolhost::ConfigError> {
    within(PARSE_TIME_LIMIT, &text, || HostConfig::parse(path, text))
}

/// The error names the file, and a line of it.
fn config_error_is_located(error: &toolhost::ConfigError, path: &Path, text: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(&error.path, path);
    prop_assert!(error.to_string().starts_with(&format!("{}, line {}: ", path.display(), error.line)), "{}", error);
    prop_assert!(error.line >= 1 && error.line <= text.lines().count() + 1, "{} in {:?}", error, text);
    prop_assert!(!error.problem.is_empty());
    Ok(())
}

#[test]
fn valid_host_configurations_are_accepted() {
    let (_dir, path) = config_dir();
    check(cases(1), config_document(), |tables| {
        let (text, _) = render(&tables);
        match parse_config(&path, &text) {
            Ok(config) => {
                let layers: Vec<String> = config.layers.iter().map(|layer| toml_string(&layer.name)).collect();
                let written: Vec<String> = tables
                    .iter()
                    .filter(|t| t.header.as_deref() == Some("[[layer]]"))
                    .filter_map(|t| t.entries.iter().find(|(key, _)| key == "name").map(|(_, value)| value.clone()))
                    .collect();
                prop_assert_eq!(layers, written, "{}", text);
            }
            Err(error) => prop_assert!(false, "a valid configuration is refused: {}\n{}", error, text),
        }
        Ok(())
    });
}

#[test]
fn host_configuration_errors_name_the_edited_line() {
    let (_dir, path) = config_dir();
    let edited = config_document().prop_flat_map(|tables| edits(tables, CONFIG_BAD_HEADERS));
    check(cases(1) * 2, edited, |edited| {
        match parse_config(&path, &edited.text) {
            Ok(_) => prop_assert!(!edited.surely_wrong, "accepted:\n{}", edited.text),
            Err(error) => {
                config_error_is_located(&error, &path, &edited.text)?;
                prop_assert!(
                    edited.locates(error.line, &error.problem),
                    "{} — but the edit {:?} is at lines {:?}:\n{}",
                    error,
                    edited.edit,
                    edited.lines,
                    edited.text
                );
            }
        }
        Ok(())
    });
}

/// The configuration of the README.
const FULL_CONFIG: &str = r#"[[layer]]
name = "project"
root = "tools"
[[layer]]
name = "stdlib"
root = "/usr/share/toolhost/stdlib"
stdlib = true                     # its tools are also callable by bare name

[defaults]
timeout = "5s"

[engine]
max_memory = "1 GiB"
max_instances = 256
tiering = "tiered"
drop_idle_code_after = "60s"

[cache]
dir = "/var/cache/toolhost"

[audit]
jsonl = "audit.jsonl"

[[policy]]
agent = "planner"
allow = ["math/*", "text/*"]
deny = ["math/divide"]
max_risk = "high"                 # tools above are hidden from this agent
approve_above = "medium"          # calls above need the approval hook

[[token]]
agent = "planner"
sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
"#;

#[test]
fn edited_real_configurations_and_raw_text_are_refused_at_a_line_of_the_file() {
    let (_dir, path) = config_dir();
    let texts = real_files("config", &[FULL_CONFIG]);
    let edited = (select(texts), text_edits()).prop_map(|(text, edits)| edit_text(&text, &edits));
    check(cases(1) * 2, prop_oneof![3 => edited, 1 => raw_text()], |text| {
        if let Err(error) = parse_config(&path, &text) {
            config_error_is_located(&error, &path, &text)?;
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------
// JSON Schemas

fn json_leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-3i64..20).prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Value::Number)),
        select(vec![0.5, 1e-9, 1e308, -0.0, 0.1]).prop_map(Value::from),
        "[a-z]{0,3}".prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ]
    .boxed()
}

fn json_value() -> BoxedStrategy<Value> {
    json_leaf()
        .prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                vec(inner.clone(), 0..4).prop_map(Value::Array),
                btree_map(prop_oneof!["[ab]", "[a-z$]{0,4}"], inner, 0..4)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
        .boxed()
}

fn object(key: &str, value: Value) -> Value {
    Value::Object([(key.to_owned(), value)].into_iter().collect())
}

/// Regular expressions, valid or not, some costly for a backtracking engine or huge once
/// compiled.
fn patterns() -> BoxedStrategy<String> {
    prop_oneof![
        "[a-z()\\[\\]{}*+?|^$.\\\\dws0-9,-]{0,16}",
        select(vec![
            "^(a+)+$",
            "(a)\\1",
            "(?=a)",
            "\\p{L}+",
            "[",
            "a{1000}{1000}",
            "(a{100}){100}",
            "^[a-z]+$",
            "\\",
            "(?i)Ab",
            "\\u00e9",
        ])
        .prop_map(str::to_owned),
    ]
    .boxed()
}

/// JSON Schemas near the valid: keywords of draft 2020-12 (and older ones), most with
/// values of the right type, some with any value; references that resolve and that do
/// not, recursion, patterns.
fn schemas() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({})),
        prop_oneof![
            select(vec!["object", "string", "integer", "number", "array", "boolean", "null", "any"])
                .prop_map(Value::from),
            subsequence(vec!["object", "string", "null", "integer"], 0..=4).prop_map(|t| json!(t)),
        ]
        .prop_map(|t| object("type", t)),
        vec(json_leaf(), 0..4).prop_map(|v| object("enum", Value::Array(v))),
        json_value().prop_map(|v| object("const", v)),
        patterns().prop_map(|p| object("pattern", Value::from(p))),
        (select(vec!["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]), json_leaf())
            .prop_map(|(k, n)| object(k, n)),
        (
            select(vec![
                "minLength",
                "maxLength",
                "minItems",
                "maxItems",
                "minProperties",
                "maxProperties",
                "minContains",
                "maxContains"
            ]),
            prop_oneof![(0u64..5).prop_map(Value::from), json_leaf()]
        )
            .prop_map(|(k, n)| object(k, n)),
        select(vec!["email", "uri", "date-time", "regex", "ipv4", "uuid", "duration", "no-such-format"])
            .prop_map(|f| object("format", Value::from(f))),
        select(vec![
            "#",
            "#/$defs/a",
            "#/$defs/b",
            "#/$defs/missing",
            "#/definitions/a",
            "#/properties/a",
            "#/items",
            "#a",
            "#/$defs/a/properties/a",
            "http://example.com/schema",
            "https://json-schema.org/draft/2020-12/schema",
            "http://json-schema.org/draft-07/schema#",
            "other.json",
            "urn:uuid:deadbeef",
            "#/%24defs/a",
            "",
            "#/",
            "file:///etc/passwd",
            "#/$defs/a~1b",
        ])
        .prop_map(|r| object("$ref", Value::from(r))),
        select(vec!["$anchor", "$dynamicAnchor", "$dynamicRef", "$id", "$schema", "$recursiveRef"]).prop_flat_map(
            |k| select(vec![
                "a",
                "#a",
                "http://example.com/root",
                "https://json-schema.org/draft/2020-12/schema",
                "http://json-schema.org/draft-04/schema#",
                "http://json-schema.org/draft-07/schema#",
                "https://json-schema.org/draft/2019-09/schema",
                "http://example.com/unknown-dialect",
                "urn:x",
                "",
            ])
            .prop_map(move |v| object(k, Value::from(v)))
        ),
        vec(prop_oneof!["[ab]", "[a-z]{0,3}"], 0..4).prop_map(|r| object("required", json!(r))),
        (
            select(vec![
                "type",
                "properties",
                "items",
                "required",
                "enum",
                "$defs",
                "allOf",
                "not",
                "additionalProperties",
                "pattern",
                "uniqueItems",
                "dependentRequired",
                "$ref",
                "contentEncoding",
                "contentMediaType",
                "title",
            ]),
            json_value()
        )
            .prop_map(|(k, v)| object(k, v)),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            btree_map(prop_oneof!["[ab]", "[a-z]{0,3}"], inner.clone(), 0..4)
                .prop_map(|p| object("properties", Value::Object(p.into_iter().collect()))),
            vec(inner.clone(), 0..4).prop_map(|v| object("prefixItems", Value::Array(v))),
            (select(vec!["anyOf", "oneOf", "allOf"]), vec(inner.clone(), 0..4))
                .prop_map(|(k, v)| object(k, Value::Array(v))),
            (
                select(vec![
                    "not",
                    "items",
                    "additionalProperties",
                    "unevaluatedProperties",
                    "unevaluatedItems",
                    "contains",
                    "propertyNames",
                    "if",
                    "then",
                    "else",
                    "additionalItems",
                ]),
                inner.clone()
            )
                .prop_map(|(k, s)| object(k, s)),
            btree_map(prop_oneof!["[ab]", Just("a~1b".to_owned())], inner.clone(), 1..3)
                .prop_map(|d| object("$defs", Value::Object(d.into_iter().collect()))),
            btree_map(patterns(), inner.clone(), 1..3)
                .prop_map(|p| object("patternProperties", Value::Object(p.into_iter().collect()))),
            btree_map("[ab]", inner.clone(), 1..3)
                .prop_map(|d| object("dependentSchemas", Value::Object(d.into_iter().collect()))),
            vec(inner, 2..4).prop_map(|parts| {
                let mut merged = serde_json::Map::new();
                for part in parts {
                    if let Value::Object(map) = part {
                        merged.extend(map);
                    }
                }
                Value::Object(merged)
            }),
        ]
    })
    .boxed()
}

/// A violation's pointer leads into the value checked.
fn violations_point_into(value: &Value, violations: &[toolhost::Violation]) -> Result<(), TestCaseError> {
    prop_assert!(!violations.is_empty() && violations.len() <= 16, "{:?}", violations);
    for violation in violations {
        prop_assert!(value.pointer(&violation.pointer).is_some(), "{:?} is not in {}", violation, value);
        prop_assert!(!violation.reason.is_empty());
    }
    Ok(())
}

/// Where a refused schema is wrong: a JSON pointer into it, or the reference that does
/// not resolve.
fn schema_error_is_located(schema: &Value, message: &str) -> Result<(), TestCaseError> {
    prop_assert!(message.starts_with("invalid JSON Schema"), "{}", message);
    let at_pointer = message
        .split("at `")
        .skip(1)
        .filter_map(|rest| rest.split('`').next())
        .any(|pointer| schema.pointer(pointer).is_some());
    let names_a_reference = {
        let mut references = Vec::new();
        collect_references(schema, &mut references);
        let references = references.iter().map(|r| r.trim_start_matches('#').trim_end_matches('#'));
        references
            .filter(|r| !r.is_empty())
            .any(|r| message.contains(&format!("{r}'")) || message.contains(r) && r.len() > 1)
    };
    prop_assert!(at_pointer || names_a_reference, "no location in {:?} for {}", message, schema);
    Ok(())
}

fn collect_references(schema: &Value, references: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match value {
                    Value::String(text)
                        if ["$ref", "$dynamicRef", "$recursiveRef", "$schema"].contains(&key.as_str()) =>
                    {
                        references.push(text.clone())
                    }
                    other => collect_references(other, references),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_references(item, references)),
        _ => {}
    }
}

#[test]
fn schemas_compile_or_say_where_they_are_wrong_and_violations_point_into_the_value() {
    let instances = vec(json_value(), 1..4);
    check(cases(1) * 2, (schemas(), instances), |(schema, instances)| {
        let text = schema.to_string();
        let compiled = within(PARSE_TIME_LIMIT, &text, || Schema::compile(&text));
        match compiled {
            Ok(compiled) => {
                let _ = compiled.argument_shape();
                for instance in instances {
                    let checked = within(PARSE_TIME_LIMIT, &(&text, &instance), || compiled.check(&instance));
                    if let Err(violations) = checked {
                        violations_point_into(&instance, &violations)?;
                    }
                }
            }
            Err(message) => schema_error_is_located(&schema, &message)?,
        }
        Ok(())
    });
}

#[test]
fn schema_text_that_is_not_json_is_refused_with_line_and_column() {
    let near_json = json_value().prop_flat_map(|value| {
        let text = value.to_string();
        (Just(text), text_edits()).prop_map(|(text, edits)| edit_text(&text, &edits))
    });
    check(cases(1), prop_oneof![near_json, any::<String>(), "[\\[\\]{}:,\" a-z0-9]{0,40}"], |text| {
        let compiled = within(PARSE_TIME_LIMIT, &text, || Schema::compile(&text));
        if let Err(message) = compiled {
            match serde_json::from_str::<Value>(&text) {
                Err(_) => prop_assert!(
                    message.contains("not JSON") && message.contains(" line ") && message.contains(" column "),
                    "{}",
                    message
                ),
                Ok(Value::Object(_) | Value::Bool(_)) => {
                    schema_error_is_located(&serde_json::from_str(&text).unwrap(), &message)?
                }
                Ok(_) => prop_assert!(message.contains("object or boolean"), "{}", message),
            }
        }
        Ok(())
    });
}

/// Schemas and values nested as deep as a tool can send them (serde_json parses 128
/// levels), on a 2 MiB stack like the runtime's threads where schemas compile and check.
#[test]
fn deeply_nested_schemas_and_values_do_not_exhaust_the_stack() {
    let nesting = (1..=126usize, select(vec!["not", "items", "properties", "allOf", "anyOf", "$defs-ref"]));
    let thread = std::thread::Builder::new().stack_size(2 << 20).spawn(move || {
        check(cases(10), nesting, |(depth, keyword)| {
            let mut schema = json!({ "type": ["object", "array", "integer"] });
            let mut value = json!(1);
            for _ in 0..depth {
                schema = match keyword {
                    "not" => json!({ "not": { "not": schema } }),
                    "items" => json!({ "items": schema }),
                    "properties" => json!({ "properties": { "a": schema } }),
                    "allOf" => json!({ "allOf": [schema] }),
                    "anyOf" => json!({ "anyOf": [false, schema] }),
                    _ => json!({ "$defs": { "a": schema }, "$ref": "#/$defs/a" }),
                };
                value = if keyword == "items" { json!([value]) } else { json!({ "a": value }) };
            }
            let text = schema.to_string();
            if serde_json::from_str::<Value>(&text).is_err() {
                return Ok(()); // deeper than a tool can send
            }
            let compiled = within(PARSE_TIME_LIMIT, &depth, || Schema::compile(&text));
            if let Ok(compiled) = compiled {
                let _ = within(PARSE_TIME_LIMIT, &depth, || compiled.check(&value));
            }
            Ok(())
        });
    });
    thread.unwrap().join().unwrap();
}

// ---------------------------------------------------------------------------------------
// Component bytes

/// The magic number and version of a component.
const COMPONENT_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

/// Real components to cut and mutate: a small toolbox (which runs `list-tools` at load)
/// and a small plain component with a `package-docs` section.
const REAL_COMPONENTS: [&str; 2] = ["first_contract.wasm", "plain_types_documented.wasm"];

fn real_component(file: &str) -> Vec<u8> {
    std::fs::read(toolhost_tests::guest_dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// A host that loads one file at a time, and compiles with Winch (a mutated component
/// that still validates is compiled, and must not fill the compile cache).
struct Loader {
    // Dropped before the runtime it was built on.
    host: ToolHost,
    runtime: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
}

impl Loader {
    fn new() -> Loader {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits { fuel: 100_000_000, timeout: Duration::from_secs(1), ..Limits::default() };
        let engine = EngineSettings { max_instances: 8, ..EngineSettings::default() };
        let host = runtime.block_on(
            ToolHost::builder()
                .root(dir.path().join("root"))
                .compile_cache(CacheSetting::Disabled)
                .default_limits(limits)
                .engine_settings(engine)
                .build(),
        );
        Loader { host: host.expect("host builds"), runtime, dir }
    }

    /// Loads `bytes` as a component file: refused with an error naming the file, or
    /// loaded with tools whose names follow the rules.
    fn load(&self, bytes: &[u8], describe: &dyn Debug) -> Result<(), TestCaseError> {
        let path = self.dir.path().join("fuzzed.wasm");
        std::fs::write(&path, bytes).unwrap();
        let loaded = within(LOAD_TIME_LIMIT, describe, || self.runtime.block_on(self.host.inspect_file(&path)));
        match loaded {
            Ok(component) => {
                for tool in &component.tools {
                    prop_assert!(names::validate_tool(tool.name()).is_ok(), "{:?}", tool.name());
                }
            }
            Err(error) => {
                prop_assert_eq!(&error.path, &path);
                let shown = error.to_string();
                prop_assert!(shown.starts_with(&path.display().to_string()), "{}", shown);
                prop_assert!(shown.len() < 64 << 10, "an error of {} bytes", shown.len());
                if let LoadErrorKind::Invalid(message) = &error.kind {
                    let located = message.contains(" offset ") || message.contains("section range");
                    prop_assert!(located, "no byte offset in {:?}", message);
                }
            }
        }
        Ok(())
    }
}

/// Random bytes, alone or behind a real preamble, and sequences of random sections.
fn random_binaries() -> impl Strategy<Value = Vec<u8>> {
    let section = (0u8..16, vec(any::<u8>(), 0..64), any::<bool>()).prop_map(|(id, payload, honest)| {
        let mut bytes = vec![id];
        let length = if honest { payload.len() } else { payload.len() * 3 + 1 };
        let mut rest = length;
        loop {
            let byte = (rest & 0x7f) as u8;
            rest >>= 7;
            bytes.push(if rest == 0 { byte } else { byte | 0x80 });
            if rest == 0 {
                break;
            }
        }
        bytes.extend(payload);
        bytes
    });
    let preamble = prop_oneof![
        Just(COMPONENT_PREAMBLE.to_vec()),
        Just(b"\0asm\x01\0\0\0".to_vec()),
        vec(any::<u8>(), 4).prop_map(|version| [b"\0asm".as_slice(), &version].concat()),
    ];
    prop_oneof![
        vec(any::<u8>(), 0..256),
        (preamble.clone(), vec(any::<u8>(), 0..2048)).prop_map(|(head, tail)| [head, tail].concat()),
        (preamble, vec(section, 0..8)).prop_map(|(head, sections)| [head, sections.concat()].concat()),
    ]
}

#[test]
fn random_bytes_are_refused_with_the_file_named() {
    let loader = Loader::new();
    check(cases(LOAD_COST), random_binaries(), |bytes| loader.load(&bytes, &bytes));
}

#[test]
fn truncated_components_are_refused_with_the_file_named() {
    let loader = Loader::new();
    let components: Vec<(&str, Vec<u8>)> = REAL_COMPONENTS.iter().map(|file| (*file, real_component(file))).collect();
    check(cases(LOAD_COST), (select(components), any::<Index>()), |((file, bytes), cut)| {
        let length = cut.index(bytes.len());
        loader.load(&bytes[..length], &format!("{file} cut to {length} bytes"))
    });
}

/// A change to component bytes.
#[derive(Clone, Debug)]
enum Mutation {
    FlipBit {
        at: usize,
        bit: u8,
    },
    SetByte {
        at: usize,
        byte: u8,
    },
    /// Bytes copied from elsewhere in the file over `at`.
    Splice {
        from: usize,
        at: usize,
        len: usize,
    },
    Delete {
        at: usize,
        len: usize,
    },
    Insert {
        at: usize,
        bytes: Vec<u8>,
    },
}

impl Mutation {
    fn apply(&self, bytes: &mut Vec<u8>) {
        let clamp = |at: usize, bytes: &Vec<u8>| at.min(bytes.len().saturating_sub(1));
        match self {
            Mutation::FlipBit { at, bit } if !bytes.is_empty() => {
                let at = clamp(*at, bytes);
                bytes[at] ^= 1u8 << *bit;
            }
            Mutation::SetByte { at, byte } if !bytes.is_empty() => {
                let at = clamp(*at, bytes);
                bytes[at] = *byte;
            }
            Mutation::Splice { from, at, len } if !bytes.is_empty() => {
                let (from, at) = (clamp(*from, bytes), clamp(*at, bytes));
                let len = (*len).min(bytes.len() - from).min(bytes.len() - at);
                let chunk = bytes[from..from + len].to_vec();
                bytes[at..at + len].copy_from_slice(&chunk);
            }
            Mutation::Delete { at, len } => {
                let at = (*at).min(bytes.len());
                bytes.drain(at..(at + len).min(bytes.len()));
            }
            Mutation::Insert { at, bytes: inserted } => {
                let at = (*at).min(bytes.len());
                bytes.splice(at..at, inserted.iter().copied());
            }
            _ => {}
        }
    }
}

/// Offsets worth mutating in `bytes`: where tool names, schema keywords, the docs
/// section and the component-level sections (at the end) are, and anywhere.
fn interesting_offsets(bytes: &[u8]) -> Vec<usize> {
    let needles: [&[u8]; 8] =
        [b"package-docs", b"greet", b"echo", b"\"type\"", b"properties", b"description", b"name", b"toolbox"];
    let mut offsets: Vec<usize> = needles
        .iter()
        .flat_map(|needle| bytes.windows(needle.len()).enumerate().filter(move |(_, w)| w == needle).map(|(i, _)| i))
        .collect();
    offsets.extend((bytes.len().saturating_sub(4096)..bytes.len()).step_by(16));
    offsets.extend(0..64);
    offsets
}

fn mutations(bytes: &[u8]) -> impl Strategy<Value = Vec<Mutation>> {
    let length = bytes.len();
    let near = select(interesting_offsets(bytes));
    let at = prop_oneof![near.clone(), 0..length, near.prop_flat_map(|at| at..at + 64)];
    let mutation = prop_oneof![
        4 => (at.clone(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        3 => (at.clone(), prop_oneof![any::<u8>(), select(vec![0u8, 0x7f, 0x80, 0xff, b'"', b'{'])])
            .prop_map(|(at, byte)| Mutation::SetByte { at, byte }),
        1 => (0..length, at.clone(), 1..64usize).prop_map(|(from, at, len)| Mutation::Splice { from, at, len }),
        1 => (at.clone(), 1..16usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (at, vec(any::<u8>(), 1..8)).prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
    ];
    vec(mutation, 1..4)
}

/// Mutated components mostly fail validation at once; those that still validate are
/// compiled and (toolboxes) run `list-tools`, up to a second each, hence few cases.
#[test]
fn mutated_components_load_or_are_refused_with_the_file_named() {
    let loader = Loader::new();
    for file in REAL_COMPONENTS {
        let original = real_component(file);
        let strategy = mutations(&original);
        check(cases(COMPILE_COST).div_ceil(2), strategy, |mutations| {
            let mut bytes = original.clone();
            for mutation in &mutations {
                mutation.apply(&mut bytes);
            }
            loader.load(&bytes, &(file, &mutations))
        });
    }
}

// ---------------------------------------------------------------------------------------
// Findings, minimized

fn manifest_error(text: &str) -> (usize, String) {
    let (_dir, path) = manifest_dir();
    match load_manifest(&path, text).map_err(|error| error.kind) {
        Err(LoadErrorKind::Manifest { line, problem }) => (line, problem),
        other => panic!("{text:?}: {other:?}"),
    }
}

/// A positive duration under a nanosecond became a zero limit.
#[test]
fn a_duration_under_a_nanosecond_is_refused() {
    let error = parse_duration("0.000000000001ms").unwrap_err();
    assert!(error.contains("shorter than a nanosecond"), "{error}");
    assert_eq!(parse_duration("0.000000001s"), Ok(Duration::from_nanos(1)));
    let (line, problem) = manifest_error("[limits]\ntimeout = \"0.0000000001s\"\n");
    assert_eq!(line, 2);
    assert!(problem.contains("`timeout`: `0.0000000001s` is shorter than a nanosecond"), "{problem}");
}

/// A name over the limit in bytes but not in characters was said to be as many
/// characters long as it has bytes.
#[test]
fn name_lengths_are_counted_in_characters() {
    let error = names::validate_namespace("aaééaéééaaaéaaaaaé").unwrap_err();
    assert!(error.ends_with("contains `é`; only a-z, 0-9, `_` and `-` are allowed"), "{error}");
    let error = names::validate_namespace(&"é".repeat(25)).unwrap_err();
    assert!(error.ends_with("is 25 characters long; the limit is 24"), "{error}");
}

/// A schema refused by the meta-schema, or whose pattern does not compile, did not say
/// where in it the problem is.
#[test]
fn schema_errors_name_where_in_the_schema() {
    let error = Schema::compile(r#"{"prefixItems":[{"patternProperties":{"":{"minimum":null}}}]}"#).unwrap_err();
    assert!(error.starts_with("invalid JSON Schema at `/prefixItems/0/patternProperties//minimum`: "), "{error}");
    let error = Schema::compile(r#"{"properties":{"a~b/c":{"type":"string","pattern":"(a)\\1"}}}"#).unwrap_err();
    assert!(error.starts_with("invalid JSON Schema at `/properties/a~0b~1c/pattern`: "), "{error}");
    let error = Schema::compile(r##"{"properties":{"a":{"$ref":"#a"}}}"##).unwrap_err();
    assert!(error.contains("'a'"), "an unresolvable reference names itself: {error}");
}

/// `Path::components` drops a `.` inside a path, so `/./d` passed the rule against `.`,
/// and `/d` and `/d/` were two grants of one guest directory.
#[test]
fn guest_paths_are_checked_as_written_and_compared_as_directories() {
    let (line, problem) = manifest_error("[grants]\nfiles = [{ host = \"data\", guest = \"/./d\", mode = \"ro\" }]\n");
    assert_eq!((line, problem.as_str()), (2, "guest path `/./d` must be absolute, without `.` or `..`"));
    let (line, problem) = manifest_error(
        "[grants]\nfiles = [\n  { host = \"data\", guest = \"/d\", mode = \"ro\" },\n  \
         { host = \"other\", guest = \"/d/\", mode = \"rw\" },\n]\n",
    );
    assert_eq!((line, problem.as_str()), (3, "guest path `/d/` is granted twice"));
}

/// A guest path granted twice was located at the first occurrence of its text anywhere
/// in the file: here a comment.
#[test]
fn a_guest_path_granted_twice_is_located_at_its_grant() {
    let text = "# /d and /cache\n[grants]\nfiles = [{ host = \"data\", guest = \"/d\", mode = \"ro\" }, \
                { host = \"other\", guest = \"/d\", mode = \"rw\" }]\n";
    let (line, problem) = manifest_error(text);
    assert_eq!((line, problem.as_str()), (3, "guest path `/d` is granted twice"));
}
