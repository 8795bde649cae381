//! Resources a toolbox offers beside its tools: documents a client reads by URI.
//!
//! A resource is declared in a component's manifest (`[[resources]]`): a fixed one
//! holds a file's bytes or inline text, read when the manifest loads; a template
//! (`uri_template = "weather://forecast/{city}"`) is read by calling one of the
//! component's tools with the URI's variables as its input, so the read runs in the
//! tool's sandbox, under the caller's policy, and is audited like any call.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::text::Escaped;

/// The longest URI (or URI template) a resource has, in bytes.
pub const MAX_URI_BYTES: usize = 2048;

/// The most variables a URI template has.
pub const MAX_VARIABLES: usize = 16;

/// A fixed resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Its URI, unique among what is served.
    pub uri: String,
    /// Its name, for people and lists.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Its media type.
    pub mime_type: String,
    /// What it holds.
    pub body: Body,
}

/// What a resource holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// UTF-8 text.
    Text(Arc<str>),
    /// Bytes (base64 on the wire).
    Blob(Arc<[u8]>),
}

impl Body {
    /// How many bytes it holds.
    pub fn len(&self) -> usize {
        match self {
            Body::Text(text) => text.len(),
            Body::Blob(bytes) => bytes.len(),
        }
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a read of a resource returns: one part of its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceContent {
    /// The URI it is of.
    pub uri: String,
    /// Its media type, when known.
    pub mime_type: Option<String>,
    /// What it holds.
    pub body: Body,
}

/// Resources read through a tool of the component, by URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: UriTemplate,
    /// Its name, for people and lists.
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// The media type of what a read returns, when declared.
    pub mime_type: Option<String>,
    /// The tool (of the same component) that a read calls.
    pub tool: String,
}

/// An RFC 6570 level-1 URI template: literal text and `{name}` variables, each
/// standing for one or more characters other than `/`, `?` and `#`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Variable(String),
}

impl UriTemplate {
    /// Parses `text`: a URI with a scheme and one or more distinct `{name}` variables,
    /// no two of them side by side.
    pub fn parse(text: &str) -> Result<UriTemplate, String> {
        check_uri(text)?;
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find('{') {
            let end = rest[start..].find('}').ok_or("a `{` is not closed")? + start;
            let name = &rest[start + 1..end];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("`{{{}}}` is not a variable (letters, digits, `_`)", Escaped(name)));
            }
            if pieces.iter().filter(|piece| matches!(piece, Piece::Variable(_))).count() == MAX_VARIABLES {
                return Err(format!("a template has at most {MAX_VARIABLES} variables"));
            }
            if pieces.iter().any(|piece| matches!(piece, Piece::Variable(other) if other == name)) {
                return Err(format!("the variable `{name}` appears twice"));
            }
            if start == 0 && matches!(pieces.last(), Some(Piece::Variable(_))) {
                return Err("two variables side by side cannot be told apart".into());
            }
            if start > 0 {
                if rest[..start].contains('}') {
                    return Err("a `}` closes nothing".into());
                }
                pieces.push(Piece::Literal(rest[..start].to_owned()));
            }
            pieces.push(Piece::Variable(name.to_owned()));
            rest = &rest[end + 1..];
        }
        if rest.contains('}') {
            return Err("a `}` closes nothing".into());
        }
        if !rest.is_empty() {
            pieces.push(Piece::Literal(rest.to_owned()));
        }
        if !pieces.iter().any(|piece| matches!(piece, Piece::Variable(_))) {
            return Err("a template has one or more `{variables}`; a fixed URI is a `uri`".into());
        }
        Ok(UriTemplate { text: text.to_owned(), pieces })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|piece| match piece {
            Piece::Variable(name) => Some(name.as_str()),
            Piece::Literal(_) => None,
        })
    }

    /// The variables' values, when `uri` is one of the template's URIs (values
    /// percent-decoded). A variable takes the shortest value that lets the rest match:
    /// `x://{name}.json` matches `x://a.json.json` with `a.json`. Linear in the URI's
    /// length per piece, whatever the URI.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        // Every escape well formed, checked once for the whole URI.
        crate::text::percent_decoded(uri)?;
        let finishes = self.finishes(uri);
        if !finishes[0][0] {
            return None;
        }
        let mut values = BTreeMap::new();
        let mut at = 0;
        for (index, piece) in self.pieces.iter().enumerate() {
            let next = &finishes[index + 1];
            at = match piece {
                Piece::Literal(text) => at + text.len(),
                Piece::Variable(name) => {
                    let value = uri[at..].char_indices().take_while(|(_, c)| !matches!(c, '/' | '?' | '#'));
                    let mut ends = value.map(|(offset, c)| at + offset + c.len_utf8());
                    let end = ends.find(|end| next[*end])?;
                    values.insert(name.clone(), percent_decoded(&uri[at..end])?);
                    end
                }
            };
        }
        Some(values)
    }

    /// `finishes[i][p]`: whether pieces `i..` match `uri[p..]` to its end (only char
    /// boundaries are ever true), computed from the last piece back.
    fn finishes(&self, uri: &str) -> Vec<Vec<bool>> {
        let length = uri.len();
        let mut finishes = vec![vec![false; length + 1]; self.pieces.len() + 1];
        finishes[self.pieces.len()][length] = true;
        for (index, piece) in self.pieces.iter().enumerate().rev() {
            let (head, tail) = finishes.split_at_mut(index + 1);
            let (row, next) = (&mut head[index], &tail[0]);
            match piece {
                Piece::Literal(text) => {
                    for (at, _) in uri.char_indices() {
                        row[at] = uri[at..].starts_with(text.as_str()) && next[at + text.len()];
                    }
                }
                Piece::Variable(_) => {
                    // Scanning back: a value from `at` may end at any later boundary up
                    // to the first `/`, `?` or `#`, and must hold one character or more.
                    let mut reaches_an_end = false;
                    for (at, c) in uri.char_indices().rev() {
                        let after = at + c.len_utf8();
                        reaches_an_end = !matches!(c, '/' | '?' | '#') && (next[after] || reaches_an_end);
                        row[at] = reaches_an_end;
                    }
                }
            }
        }
        finishes
    }
}

/// `text` decoded, when it decodes to UTF-8 without control characters.
fn percent_decoded(text: &str) -> Option<String> {
    let text = String::from_utf8(crate::text::percent_decoded(text)?).ok()?;
    (!text.chars().any(char::is_control)).then_some(text)
}

/// Why `uri` cannot be a resource's URI: no scheme, too long, or holding spaces or
/// control characters.
pub fn check_uri(uri: &str) -> Result<(), String> {
    if uri.len() > MAX_URI_BYTES {
        return Err(format!("a URI is at most {MAX_URI_BYTES} bytes"));
    }
    if uri.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("a URI holds no spaces or control characters".into());
    }
    let scheme = uri.split_once(':').map(|(scheme, _)| scheme).unwrap_or_default();
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err(format!("`{}` has no scheme (`docs://…`, `file:///…`)", Escaped(uri)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_matches_its_uris_and_only_them() {
        let template = UriTemplate::parse("weather://forecast/{city}/days/{days}").unwrap();
        assert_eq!(template.variables().collect::<Vec<_>>(), ["city", "days"]);
        let values = template.matches("weather://forecast/New%20York/days/3").unwrap();
        assert_eq!(values["city"], "New York");
        assert_eq!(values["days"], "3");
        for other in [
            "weather://forecast/Lyon/days/",
            "weather://forecast/a/b/days/3",
            "weather://forecast/Lyon/days/3/more",
            "weather://forecast/Lyon/days/3?x",
            "weather://other/Lyon/days/3",
        ] {
            assert_eq!(template.matches(other), None, "{other}");
        }
        let tail = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(tail.matches("test://template/123/data").unwrap()["id"], "123");
        assert_eq!(tail.matches("test://template/%zz/data"), None);
        assert_eq!(tail.matches("test://template/%+4/data"), None, "two hex digits, no sign");
        assert_eq!(tail.matches("test://template/%4/data"), None);
        assert_eq!(tail.matches("test://template/%00/data"), None, "no control characters");
        let suffixed = UriTemplate::parse("x://{name}.json").unwrap();
        assert_eq!(suffixed.matches("x://a.json.json").unwrap()["name"], "a.json");
        let dotted = UriTemplate::parse("x://{a}.{b}.json").unwrap();
        assert_eq!(
            dotted.matches("x://1.2.3.json").map(|v| (v["a"].clone(), v["b"].clone())),
            Some(("1".into(), "2.3".into()))
        );
        assert_eq!(tail.matches("test://template/%C3%A9/data").unwrap()["id"], "é");
    }

    #[test]
    fn a_hostile_uri_costs_little() {
        let template = UriTemplate::parse("x://{a}.{b}.{c}.{d}.json").unwrap();
        let uri = format!("x://{}", ".".repeat(MAX_URI_BYTES - 4));
        let started = std::time::Instant::now();
        assert_eq!(template.matches(&uri), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
        let many: String = (0..=MAX_VARIABLES).map(|i| format!("{{v{i}}}/")).collect();
        assert!(UriTemplate::parse(&format!("x://{many}")).unwrap_err().contains("at most"));
    }

    #[test]
    fn bad_templates_and_uris_are_refused() {
        for (text, problem) in [
            ("docs://fixed", "a fixed URI is a `uri`"),
            ("docs://{a}{b}", "side by side"),
            ("docs://{a}/{a}", "appears twice"),
            ("docs://{a", "not closed"),
            ("docs://a}", "closes nothing"),
            ("docs://a}b/{id}", "closes nothing"),
            ("docs://{a-b}", "is not a variable"),
            ("no scheme/{a}", "no spaces"),
            ("noscheme/{a}", "has no scheme"),
        ] {
            let error = UriTemplate::parse(text).unwrap_err();
            assert!(error.contains(problem), "{text}: {error}");
        }
        assert!(check_uri("test://static-text").is_ok());
        assert!(check_uri(&format!("a://{}", "x".repeat(MAX_URI_BYTES))).is_err());
        assert!(check_uri("a://x\u{7}").is_err());
    }
}
