//! The names an upstream server's tools are served by.
//!
//! MCP lets a tool be named with capitals, dots and up to 128 characters (`printEnv`,
//! `get.weather`); toolhost's names are lowercase words of at most 38 characters,
//! because they must map reversibly to every consumer's form. A tool keeps its own
//! name upstream (calls send it) and is served by:
//!
//! 1. the operator's name for it, `[[upstream]] rename = { printEnv = "env" }`;
//! 2. else its own name, when that is a valid toolhost name;
//! 3. else [`served_name`]: words split at case changes, lowercased, every run of other
//!    characters one `_`, `t_` before a leading digit (`printEnv` → `print_env`,
//!    `get.weather` → `get_weather`, `123go` → `t_123go`);
//! 4. and when a name of rule 3 is longer than 38 characters, or is also the served
//!    name of another of the server's tools, it is cut to 31 characters and ends with
//!    `_` and 6 hex digits of the BLAKE3 of its upstream name — the same suffix for the
//!    same name, whatever else the server lists.

use std::collections::{BTreeMap, HashMap};

use crate::names::{MAX_TOOL_LEN, validate_tool};

/// The name rule 3 of the module's rule gives `remote`, before any collision or length
/// is settled (which needs the server's other tools: [`served_names`]).
pub fn served_name(remote: &str) -> String {
    let mut name = String::with_capacity(remote.len());
    let mut previous: Option<char> = None;
    for c in remote.chars() {
        let word_break =
            c.is_ascii_uppercase() && previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit());
        if c.is_ascii_alphanumeric() {
            if word_break {
                push_separator(&mut name, '_');
            }
            name.push(c.to_ascii_lowercase());
        } else if c == '-' {
            push_separator(&mut name, '-');
        } else {
            push_separator(&mut name, '_');
        }
        previous = Some(c);
    }
    let name = name.trim_matches(['_', '-']);
    match name.chars().next() {
        None => "tool".to_owned(),
        Some(first) if !first.is_ascii_lowercase() => format!("t_{name}"),
        Some(_) => name.to_owned(),
    }
}

/// A separator, unless the name is empty or already ends with one.
fn push_separator(name: &mut String, separator: char) {
    if !name.is_empty() && !name.ends_with(['_', '-']) {
        name.push(separator);
    }
}

/// The name each of `remotes` (a server's tool names, in its order) is served by:
/// the module's rules 1 to 4.
pub(super) fn served_names(remotes: &[&str], rename: &BTreeMap<String, String>) -> Vec<String> {
    let settled =
        |remote: &str| rename.get(remote).cloned().or_else(|| validate_tool(remote).ok().map(|()| remote.to_owned()));
    let first: Vec<(String, bool)> = remotes
        .iter()
        .map(|remote| match settled(remote) {
            Some(name) => (name, true),
            None => (served_name(remote), false),
        })
        .collect();
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for (name, _) in &first {
        *uses.entry(name.as_str()).or_default() += 1;
    }
    remotes
        .iter()
        .zip(&first)
        .map(|(remote, (name, settled))| {
            let clashes = uses.get(name.as_str()).is_some_and(|count| *count > 1);
            if *settled || (!clashes && name.len() <= MAX_TOOL_LEN) {
                return name.clone();
            }
            let hash = blake3::hash(remote.as_bytes()).to_hex();
            let stem = name.get(..MAX_TOOL_LEN - 7).unwrap_or(name).trim_end_matches(['_', '-']);
            format!("{stem}_{}", &hash[..6])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_names_map_to_valid_names() {
        for (remote, served) in [
            ("printEnv", "print_env"),
            ("getTinyImage", "get_tiny_image"),
            ("get.weather", "get_weather"),
            ("Get-Weather", "get-weather"),
            ("UPPER", "upper"),
            ("123start", "t_123start"),
            ("a..b__c", "a_b_c"),
            ("--", "tool"),
            ("naïve tool", "na_ve_tool"),
        ] {
            assert_eq!(served_name(remote), served, "{remote}");
            assert_eq!(validate_tool(served), Ok(()), "{remote} → {served}");
        }
    }

    #[test]
    fn collisions_and_long_names_get_a_suffix_of_their_own_name() {
        let long = "a_very_long_tool_name_that_goes_well_past_the_limit_of_toolhost";
        let remotes = ["get_weather", "get.weather", "getWeather", long, "printEnv"];
        let rename = BTreeMap::from([("printEnv".to_owned(), "env".to_owned())]);
        let served = served_names(&remotes, &rename);
        assert_eq!(served[0], "get_weather", "a valid name is kept");
        assert_eq!(served[4], "env", "the operator's name wins");
        for (i, name) in served.iter().enumerate() {
            assert_eq!(validate_tool(name), Ok(()), "{name}");
            assert_eq!(served.iter().filter(|other| *other == name).count(), 1, "{name} once");
            assert!(i == 0 || i == 4 || name.len() == MAX_TOOL_LEN || name.starts_with("get_weather_"), "{name}");
        }
        // The suffix depends on the name alone, not on what else is listed.
        let alone = served_names(&["get.weather", "get_weather"], &BTreeMap::new());
        assert_eq!(alone[0], served[1]);
    }
}
