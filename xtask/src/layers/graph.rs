//! The import rules over the files of the host library: floors, faces and cycles.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::{Source, entry_of};

/// Where a path leads: the file that defines what it names, and every folder whose
/// child module it names on the way (`(folder, child)`).
struct Resolution {
    file: PathBuf,
    crossings: Vec<(Vec<String>, String)>,
}

/// The crate's module tree, as files on disk, and what each face re-exports.
struct Tree<'a> {
    src: &'a Path,
    /// By face module: offered name → the absolute path it stands for.
    offered: HashMap<Vec<String>, HashMap<String, Vec<String>>>,
}

impl Tree<'_> {
    fn dir(&self, module: &[String]) -> PathBuf {
        module.iter().fold(self.src.to_owned(), |dir, part| dir.join(part))
    }

    fn face(&self, module: &[String]) -> PathBuf {
        if module.is_empty() { PathBuf::from("lib.rs") } else { PathBuf::from(module.join("/")).join("mod.rs") }
    }

    fn resolve(&self, path: &[String], depth: usize) -> Resolution {
        let mut module: Vec<String> = Vec::new();
        let mut crossings = Vec::new();
        for segment in path {
            let dir = self.dir(&module);
            if dir.join(segment).join("mod.rs").is_file() {
                crossings.push((module.clone(), segment.clone()));
                module.push(segment.clone());
                continue;
            }
            if dir.join(format!("{segment}.rs")).is_file() {
                crossings.push((module.clone(), segment.clone()));
                module.push(segment.clone());
                return Resolution { file: PathBuf::from(format!("{}.rs", module.join("/"))), crossings };
            }
            let target = self.offered.get(&module).and_then(|names| names.get(segment));
            if let Some(target) = target.filter(|target| depth < 8 && target.as_slice() != path) {
                return Resolution { file: self.resolve(target, depth + 1).file, crossings };
            }
            break;
        }
        Resolution { file: self.face(&module), crossings }
    }
}

/// Checks every path each file names; returns how many were checked.
pub fn check_imports(
    src: &Path,
    sources: &[&Source],
    floor_of: &BTreeMap<String, usize>,
    problems: &mut Vec<String>,
) -> usize {
    let mut offered = HashMap::new();
    for source in sources {
        let names: &mut HashMap<String, Vec<String>> = offered.entry(source.module.clone()).or_default();
        for offer in &source.facts.offered {
            names.insert(offer.name.clone(), offer.path.clone());
        }
    }
    let tree = Tree { src, offered };
    let floor = |file: &Path| {
        let entry = entry_of(file);
        if entry == "lib.rs" { 0 } else { floor_of.get(&entry).copied().unwrap_or(usize::MAX) }
    };
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    let mut checked = 0;
    let mut seen = BTreeSet::new();
    for source in sources {
        let from = &source.rel;
        if from == Path::new("lib.rs") {
            continue;
        }
        edges.entry(from.clone()).or_default();
        for named in &source.facts.named {
            checked += 1;
            let resolved = tree.resolve(&named.path, 0);
            let to = &resolved.file;
            let at = format!("host/src/{}:{}", from.display(), named.line);
            let shown = format!("crate::{}", named.path.join("::"));
            let (up_from, up_to) = (floor(from), floor(to));
            if up_to > up_from && seen.insert((from.clone(), to.clone())) {
                problems.push(format!(
                    "{at}: `{shown}` goes up from floor {up_from} (`{}`) to floor {up_to} (`{}`)",
                    entry_of(from),
                    entry_of(to)
                ));
            }
            for (folder, child) in &resolved.crossings {
                if !folder.is_empty() && !source.module.starts_with(folder) {
                    problems.push(format!(
                        "{at}: `{shown}` names `{}/{child}`, a private file of `{}/` (use the folder's face)",
                        folder.join("/"),
                        folder.join("/")
                    ));
                }
            }
            if !named.in_test && !named.reexport && to != from {
                edges.entry(from.clone()).or_default().insert(to.clone());
            }
        }
    }
    for cycle in cycles(&edges) {
        let files: Vec<String> = cycle.iter().map(|file| file.display().to_string()).collect();
        problems.push(format!("import cycle of {} files: {}", files.len(), files.join(" → ")));
    }
    checked
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct State<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: HashMap<&'a PathBuf, usize>,
        low: HashMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a PathBuf) {
        let next = state.index.len();
        state.index.insert(node, next);
        state.low.insert(node, next);
        state.stack.push(node);
        state.on_stack.insert(node);
        for target in state.edges.get(node).into_iter().flatten() {
            if !state.index.contains_key(target) {
                visit(state, target);
                let low = state.low[node].min(state.low[target]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(target) {
                let low = state.low[node].min(state.index[target]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack.remove(member);
                component.push(member.clone());
                if member == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                state.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in edges.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.found
}
