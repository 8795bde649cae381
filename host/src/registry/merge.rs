//! Layer precedence: which tool serves each full name, what it shadows, what conflicts, which bare names answer.
//!
//! Layer precedence, the heart of [`Snapshot::build`](super::Snapshot::build): which
//! loaded component serves each full name, what it shadows, which names conflict within
//! a layer, and which stdlib tools answer to their bare names.
//!
//! Pure over names and positions, so its rules are tested without compiling anything.

use std::collections::{BTreeMap, HashMap};

use crate::names;

/// What merging needs to know of one loaded component (in layer order, highest first,
/// then file order).
#[derive(Clone)]
pub(super) struct Offer<'a> {
    pub layer: usize,
    pub namespace: &'a str,
    pub tools: Vec<&'a str>,
}

/// The component (by its index among the offers) and tool that serve a full name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Winner {
    pub offer: usize,
    pub tool: usize,
    /// Offers of lower layers whose tool of the same full name this one shadows.
    pub shadows: Vec<usize>,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Merged {
    pub winners: BTreeMap<String, Winner>,
    /// `(full name, kept offer, ignored offer)`: two offers of one layer with one name.
    pub conflicts: Vec<(String, usize, usize)>,
    /// Bare names of stdlib tools, to full names; a name two stdlib namespaces export is
    /// ambiguous and left out.
    pub bare_names: HashMap<String, String>,
}

/// Merges offers given highest layer first: the first offer of a name wins; a later
/// offer of the same layer is a conflict, of a lower layer a shadowed tool.
pub(super) fn merge(offers: &[Offer<'_>], is_stdlib: impl Fn(usize) -> bool) -> Merged {
    let mut merged = Merged::default();
    for (index, offer) in offers.iter().enumerate() {
        for (tool, name) in offer.tools.iter().enumerate() {
            let full_name = names::full_name(offer.namespace, name);
            match merged.winners.get_mut(&full_name) {
                None => {
                    merged.winners.insert(full_name, Winner { offer: index, tool, shadows: Vec::new() });
                }
                Some(winner) if offers[winner.offer].layer == offer.layer => {
                    merged.conflicts.push((full_name, winner.offer, index));
                }
                Some(winner) => winner.shadows.push(index),
            }
        }
    }
    merged.bare_names = bare_names(offers, is_stdlib);
    merged
}

fn bare_names(offers: &[Offer<'_>], is_stdlib: impl Fn(usize) -> bool) -> HashMap<String, String> {
    let mut bare: HashMap<String, String> = HashMap::new();
    let mut ambiguous: Vec<&str> = Vec::new();
    for offer in offers.iter().filter(|offer| is_stdlib(offer.layer)) {
        for name in &offer.tools {
            let full_name = names::full_name(offer.namespace, name);
            match bare.get(*name) {
                Some(existing) if *existing != full_name => ambiguous.push(name),
                _ => {
                    bare.insert((*name).to_owned(), full_name);
                }
            }
        }
    }
    for name in ambiguous {
        bare.remove(name);
    }
    bare
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer<'a>(layer: usize, namespace: &'a str, tools: &[&'a str]) -> Offer<'a> {
        Offer { layer, namespace, tools: tools.to_vec() }
    }

    fn winner(merged: &Merged, name: &str) -> (usize, usize, Vec<usize>) {
        let winner = &merged.winners[name];
        (winner.offer, winner.tool, winner.shadows.clone())
    }

    #[test]
    fn a_higher_layer_shadows_the_same_full_name_and_says_what() {
        let offers = [offer(0, "math", &["add"]), offer(1, "math", &["add", "divide"]), offer(2, "math", &["add"])];
        let merged = merge(&offers, |_| false);
        assert_eq!(winner(&merged, "math/add"), (0, 0, vec![1, 2]), "project serves, shadowing org and stdlib");
        assert_eq!(winner(&merged, "math/divide"), (1, 1, vec![]), "a name only a lower layer has is served");
        assert_eq!(merged.conflicts, vec![]);
    }

    #[test]
    fn two_components_of_one_layer_conflict_and_the_first_keeps_the_name() {
        let offers = [offer(0, "text", &["slugify"]), offer(0, "text", &["slugify", "upper"])];
        let merged = merge(&offers, |_| false);
        assert_eq!(winner(&merged, "text/slugify"), (0, 0, vec![]));
        assert_eq!(winner(&merged, "text/upper"), (1, 1, vec![]), "the rest of the second is served");
        assert_eq!(merged.conflicts, vec![("text/slugify".to_owned(), 0, 1)]);
    }

    #[test]
    fn namespaces_keep_equal_tool_names_apart() {
        let merged = merge(&[offer(0, "a", &["get"]), offer(0, "b", &["get"])], |_| false);
        assert_eq!(merged.winners.len(), 2);
        assert_eq!(merged.conflicts, vec![]);
    }

    #[test]
    fn bare_names_come_from_stdlib_layers_only_and_never_ambiguously() {
        let offers = [
            offer(0, "math", &["add"]),
            offer(1, "file", &["read", "write"]),
            offer(1, "http", &["fetch", "read"]),
            offer(1, "file", &["stat"]),
        ];
        let merged = merge(&offers, |layer| layer == 1);
        assert_eq!(merged.bare_names.get("write").map(String::as_str), Some("file/write"));
        assert_eq!(merged.bare_names.get("fetch").map(String::as_str), Some("http/fetch"));
        assert_eq!(merged.bare_names.get("stat").map(String::as_str), Some("file/stat"));
        assert_eq!(merged.bare_names.get("read"), None, "two stdlib namespaces export `read`");
        assert_eq!(merged.bare_names.get("add"), None, "not a stdlib layer");
    }

    #[test]
    fn nothing_offered_serves_nothing() {
        assert_eq!(merge(&[], |_| true), Merged::default());
        assert_eq!(merge(&[offer(0, "empty", &[])], |_| true), Merged::default());
    }
}
