//! `cargo xtask layers [--write]`: checks the host crate's floor plan against its code.
//!
//! The floor table in `docs/architecture.md` puts every top-level file and folder of
//! `host/src` on a floor. The check reads every path a file names into the crate (`use`
//! trees, paths in code, `crate::…` in macro calls, with `pub use` re-exports followed to
//! the file that defines the item) and fails on:
//!
//! - an import that goes up a floor;
//! - an import that names another folder's private file (`folder::file::Item` from
//!   outside `folder/`: a folder's `mod.rs` is its face);
//! - an import cycle between files (test modules and re-exports are not dependencies);
//! - a file over 400 lines, a function over 60, the binary's `main.rs` over 150;
//! - a file without a first `//!` line, or a map in `docs/architecture.md` that differs
//!   from the one those lines make (`--write` rewrites it).

mod graph;
mod read;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use read::FileFacts;

const MAX_FILE_LINES: usize = 400;
const MAX_FUNCTION_LINES: usize = 60;
const MAX_MAIN_LINES: usize = 150;
const MAP_BEGIN: &str = "<!-- map: written by `cargo xtask layers --write` from each file's first `//!` line -->";
const MAP_END: &str = "<!-- end of the map -->";

/// One source file of the host crate.
pub struct Source {
    /// Relative to `host/src`.
    pub rel: PathBuf,
    /// Its module path (`["registry", "snapshot"]`; `mod.rs` is its folder's).
    pub module: Vec<String>,
    pub lines: usize,
    pub facts: FileFacts,
}

/// A floor of the table: its number, its name, and the entries on it.
struct Floor {
    number: usize,
    name: String,
    entries: Vec<String>,
}

pub fn layers(args: &[String], root: &Path) -> Result<(), String> {
    let write = match args {
        [] => false,
        [flag] if flag == "--write" => true,
        _ => return Err("usage: cargo xtask layers [--write]".into()),
    };
    let checked = check(root, write)?;
    report(&checked.sources, checked.imports);
    if checked.problems.is_empty() {
        println!("layers: clean");
        Ok(())
    } else {
        for problem in &checked.problems {
            println!("{problem}");
        }
        Err(format!("layers: {} problems", checked.problems.len()))
    }
}

/// What a check read, and what it found wrong.
struct Checked {
    sources: Vec<Source>,
    /// Paths into the crate checked.
    imports: usize,
    problems: Vec<String>,
}

/// Checks `root`'s `host/src` against its `docs/architecture.md`; with `write`, a map
/// that differs is rewritten rather than reported.
fn check(root: &Path, write: bool) -> Result<Checked, String> {
    let doc_path = root.join("docs/architecture.md");
    let doc = std::fs::read_to_string(&doc_path).map_err(|e| format!("{}: {e}", doc_path.display()))?;
    let floors = floor_table(&doc)?;
    let src = root.join("host/src");
    let sources = read_sources(&src)?;
    let mut problems = Vec::new();
    let floor_of = entry_floors(&floors, &sources, &mut problems);
    let lib: Vec<&Source> = sources.iter().filter(|s| !s.rel.starts_with("bin")).collect();
    let imports = graph::check_imports(&src, &lib, &floor_of, &mut problems);
    check_sizes(&sources, &mut problems);
    let map = render_map(&floors, &sources, &floor_of, &mut problems);
    if section(&doc) != Some(map.as_str()) {
        if write {
            let new_doc = with_map(&doc, &map)?;
            std::fs::write(&doc_path, new_doc).map_err(|e| format!("{}: {e}", doc_path.display()))?;
            println!("wrote the map of {} files into {}", sources.len(), doc_path.display());
        } else {
            problems.push(
                "docs/architecture.md: the map differs from the files' first `//!` lines (run `cargo xtask layers --write`)"
                    .to_owned(),
            );
        }
    }
    Ok(Checked { sources, imports, problems })
}

/// The rows `| N | name | `entry` `entry` … |` of the table under "## The floors" (the
/// section ends at the next heading or the map).
fn floor_table(doc: &str) -> Result<Vec<Floor>, String> {
    let mut floors = Vec::new();
    let section = doc.lines().skip_while(|line| line.trim() != "## The floors").skip(1);
    for line in section.take_while(|line| !line.starts_with('#') && !line.starts_with("<!-- map")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, number, name, entries, ..] = cells.as_slice() else { continue };
        let Ok(number) = number.parse::<usize>() else { continue };
        let entries = entries.split('`').skip(1).step_by(2).map(str::to_owned).collect();
        floors.push(Floor { number, name: name.to_string(), entries });
    }
    if floors.is_empty() {
        return Err(
            "docs/architecture.md has no floor table under \"## The floors\" (`| 1 | vocabulary | `error.rs` … |`)"
                .into(),
        );
    }
    Ok(floors)
}

fn read_sources(src: &Path) -> Result<Vec<Source>, String> {
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    files.sort();
    let mut sources = Vec::new();
    for path in files {
        let rel = path.strip_prefix(src).map_err(|e| e.to_string())?.to_owned();
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let module = module_of(&rel);
        let is_face = matches!(rel.file_name().and_then(|n| n.to_str()), Some("mod.rs" | "lib.rs" | "main.rs"));
        let facts = read::read(&text, &module, is_face).map_err(|e| format!("host/src/{}: {e}", rel.display()))?;
        sources.push(Source { rel, module, lines: text.lines().count(), facts });
    }
    Ok(sources)
}

fn collect_rs(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// `registry/snapshot.rs` → `["registry", "snapshot"]`; `registry/mod.rs` → `["registry"]`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut module: Vec<String> = rel.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    let last = module.pop().unwrap_or_default();
    let stem = last.strip_suffix(".rs").unwrap_or(&last).to_owned();
    if !matches!(stem.as_str(), "mod" | "lib" | "main") {
        module.push(stem);
    }
    module
}

/// The top-level entry a file belongs to: `registry/` for `registry/snapshot.rs`.
fn entry_of(rel: &Path) -> String {
    let first = rel.iter().next().map(|part| part.to_string_lossy().into_owned()).unwrap_or_default();
    if rel.iter().count() > 1 { format!("{first}/") } else { first }
}

/// Each top-level entry's floor; an entry on no floor, or on two, is a problem.
fn entry_floors(floors: &[Floor], sources: &[Source], problems: &mut Vec<String>) -> BTreeMap<String, usize> {
    let mut floor_of = BTreeMap::new();
    for floor in floors {
        for entry in &floor.entries {
            if floor_of.insert(entry.clone(), floor.number).is_some() {
                problems.push(format!("docs/architecture.md: `{entry}` is on two floors"));
            }
        }
    }
    for source in sources {
        let entry = entry_of(&source.rel);
        if entry != "lib.rs" && !floor_of.contains_key(&entry) {
            problems
                .push(format!("host/src/{}: `{entry}` is on no floor of docs/architecture.md", source.rel.display()));
            floor_of.insert(entry, usize::MAX);
        }
    }
    floor_of
}

fn check_sizes(sources: &[Source], problems: &mut Vec<String>) {
    for source in sources {
        let limit = if source.rel.ends_with("bin/toolhost/main.rs") { MAX_MAIN_LINES } else { MAX_FILE_LINES };
        if source.lines > limit {
            problems.push(format!("host/src/{}: {} lines, over {limit}", source.rel.display(), source.lines));
        }
        for (name, line, lines) in &source.facts.functions {
            if *lines > MAX_FUNCTION_LINES {
                problems.push(format!(
                    "host/src/{}:{line}: fn {name} is {lines} lines, over {MAX_FUNCTION_LINES}",
                    source.rel.display()
                ));
            }
        }
    }
}

/// The map: per floor, every file with its first `//!` line.
fn render_map(
    floors: &[Floor],
    sources: &[Source],
    floor_of: &BTreeMap<String, usize>,
    problems: &mut Vec<String>,
) -> String {
    let mut map = String::new();
    let mut floor_rows: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for source in sources {
        let summary = source.facts.summary.clone().unwrap_or_default();
        if summary.is_empty() || !summary.ends_with(['.', ':']) {
            problems.push(format!(
                "host/src/{}: its first `//!` line is the map's line for it: one whole sentence",
                source.rel.display()
            ));
        }
        let entry = entry_of(&source.rel);
        let floor = floor_of.get(&entry).copied().unwrap_or(0);
        floor_rows.entry(floor).or_default().push(format!("| `{}` | {} |", source.rel.display(), summary));
    }
    let names: BTreeMap<usize, &str> = floors.iter().map(|f| (f.number, f.name.as_str())).collect();
    for (floor, rows) in floor_rows {
        let title = match (floor, names.get(&floor)) {
            (0, _) => "The crate root".to_owned(),
            (_, Some(name)) => format!("Floor {floor}: {name}"),
            _ => "On no floor".to_owned(),
        };
        map.push_str(&format!("\n**{title}**\n\n| file | what it is |\n|---|---|\n"));
        for row in rows {
            map.push_str(&row);
            map.push('\n');
        }
    }
    map
}

/// The map as the document holds it, between its markers.
fn section(doc: &str) -> Option<&str> {
    let start = doc.find(MAP_BEGIN)? + MAP_BEGIN.len();
    let end = doc[start..].find(MAP_END)? + start;
    Some(&doc[start..end])
}

fn with_map(doc: &str, map: &str) -> Result<String, String> {
    let Some(start) = doc.find(MAP_BEGIN).map(|at| at + MAP_BEGIN.len()) else {
        return Err(format!("docs/architecture.md has no `{MAP_BEGIN}` line for the map"));
    };
    let end = doc[start..].find(MAP_END).map(|at| at + start).ok_or(format!("no `{MAP_END}` after the map's start"))?;
    Ok(format!("{}{map}{}", &doc[..start], &doc[end..]))
}

/// What was checked, and the largest files and functions.
fn report(sources: &[Source], imports: usize) {
    println!("layers: {} files, {imports} paths into the crate checked", sources.len());
    let mut files: Vec<(usize, String)> = sources.iter().map(|s| (s.lines, s.rel.display().to_string())).collect();
    files.sort_by(|a, b| b.cmp(a));
    let largest: Vec<String> = files.iter().take(5).map(|(lines, file)| format!("{file} {lines}")).collect();
    println!("largest files: {}", largest.join(", "));
    let mut functions: Vec<(usize, String)> = sources
        .iter()
        .flat_map(|s| {
            s.facts.functions.iter().map(move |(name, _, lines)| (*lines, format!("{}::{name}", s.rel.display())))
        })
        .collect();
    functions.sort_by(|a, b| b.cmp(a));
    let largest: Vec<String> = functions.iter().take(5).map(|(lines, f)| format!("{f} {lines}")).collect();
    println!("largest functions: {}", largest.join(", "));
}
