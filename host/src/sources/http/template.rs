//! The URL template of an HTTP tool: `https://api.example.com/v1/forecast/{city}?days={days}`.
//!
//! The scheme and authority are fixed (the allow-list is checked against them at load,
//! so no input can send the request elsewhere). `{name}` stands for the input's
//! property `name`: inside a path segment, its value is percent-encoded as one segment
//! (a `/` in it never adds a segment); as a whole query value (`key={name}`), it is
//! percent-encoded as a query value, an absent or null value drops the pair and an
//! array repeats the key once per element.

use serde_json::{Map, Value};

/// A parsed URL template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UrlTemplate {
    /// `http` or `https`.
    pub scheme: String,
    /// `host[:port]` as written; the `Host` header sends it.
    pub authority: String,
    /// The host, as the allow-list matches it (an IPv6 address in brackets).
    pub host: String,
    /// The port, written or the scheme's default.
    pub port: u16,
    /// The template as written.
    pub text: String,
    path: Vec<Piece>,
    query: Vec<QueryPair>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// Text as written (already valid in a URL path).
    Literal(String),
    /// An input property, encoded as (part of) one path segment.
    Field(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct QueryPair {
    /// The key as written.
    key: String,
    value: QueryValue,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum QueryValue {
    /// `key` alone.
    Absent,
    /// `key=text`, as written.
    Literal(String),
    /// `key={name}`.
    Field(String),
}

/// Where a placeholder sits: a path segment must have a value, a query value may not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Path,
    Query,
}

impl UrlTemplate {
    /// Parses a template; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<UrlTemplate, String> {
        if text.contains('#') {
            return Err("a URL template has no fragment (`#…`)".into());
        }
        let (scheme, rest) = text
            .split_once("://")
            .filter(|(scheme, _)| *scheme == "http" || *scheme == "https")
            .ok_or("the URL must start with `http://` or `https://`")?;
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, rest) = rest.split_at(authority_end);
        if authority.contains(['{', '}']) {
            return Err("the URL's host and port are fixed: no `{placeholder}` before the path".into());
        }
        if authority.contains('@') {
            return Err("the URL has no credentials (`user@`); send them in a header".into());
        }
        let parsed = url::Url::parse(&format!("{scheme}://{authority}/"))
            .map_err(|e| format!("the URL's host `{authority}` is not valid: {e}"))?;
        let host = match parsed.host() {
            Some(url::Host::Ipv6(address)) => format!("[{address}]"),
            Some(host) => host.to_string(),
            None => return Err("the URL has no host".into()),
        };
        let port = parsed.port_or_known_default().ok_or("the URL has no port")?;
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        let path = if path.is_empty() { "/" } else { path };
        let path = parse_path(path)?;
        let query = query.split('&').filter(|pair| !pair.is_empty()).map(parse_pair).collect::<Result<_, _>>()?;
        Ok(UrlTemplate {
            scheme: scheme.to_owned(),
            authority: authority.to_owned(),
            host,
            port,
            text: text.to_owned(),
            path,
            query,
        })
    }

    /// The input properties the template names, and where.
    pub fn placeholders(&self) -> impl Iterator<Item = (&str, Place)> {
        let path = self.path.iter().filter_map(|piece| match piece {
            Piece::Field(name) => Some((name.as_str(), Place::Path)),
            Piece::Literal(_) => None,
        });
        let query = self.query.iter().filter_map(|pair| match &pair.value {
            QueryValue::Field(name) => Some((name.as_str(), Place::Query)),
            _ => None,
        });
        path.chain(query)
    }

    /// The URL for `input`; the error is why the input cannot fill it.
    pub fn fill(&self, input: &Value) -> Result<String, String> {
        let empty = Map::new();
        let fields = input.as_object().unwrap_or(&empty);
        let mut url = format!("{}://{}", self.scheme, self.authority);
        for piece in &self.path {
            match piece {
                Piece::Literal(text) => url.push_str(text),
                Piece::Field(name) => {
                    let value = match fields.get(name) {
                        None | Some(Value::Null) => return Err(format!("the URL needs `{name}`")),
                        Some(value) => scalar(name, value)?,
                    };
                    if value.is_empty() || value == "." || value == ".." {
                        return Err(format!("`{name}` cannot be `{value}` in the URL's path"));
                    }
                    url.push_str(&encode(&value));
                }
            }
        }
        let mut pairs: Vec<String> = Vec::new();
        for QueryPair { key, value } in &self.query {
            match value {
                QueryValue::Absent => pairs.push(key.clone()),
                QueryValue::Literal(text) => pairs.push(format!("{key}={text}")),
                QueryValue::Field(name) => match fields.get(name) {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(items)) => {
                        for item in items {
                            pairs.push(format!("{key}={}", encode(&scalar(name, item)?)));
                        }
                    }
                    Some(value) => pairs.push(format!("{key}={}", encode(&scalar(name, value)?))),
                },
            }
        }
        if !pairs.is_empty() {
            url.push('?');
            url.push_str(&pairs.join("&"));
        }
        Ok(url)
    }
}

/// The text of a value that fits in a URL: a string as is, a number or boolean as JSON.
fn scalar(name: &str, value: &Value) -> Result<String, String> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) => Ok(number.to_string()),
        Value::Bool(flag) => Ok(flag.to_string()),
        _ => Err(format!("`{name}` must be a string, a number or a boolean to go into the URL")),
    }
}

fn parse_path(path: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        match rest.find(['{', '}']) {
            None => {
                pieces.push(Piece::Literal(literal(rest)?));
                rest = "";
            }
            Some(at) if rest[at..].starts_with('}') => return Err("the URL has a `}` without its `{`".into()),
            Some(at) => {
                if at > 0 {
                    pieces.push(Piece::Literal(literal(&rest[..at])?));
                }
                let close = rest[at..].find('}').ok_or("the URL has a `{` without its `}`")?;
                pieces.push(Piece::Field(placeholder(&rest[at + 1..at + close])?));
                rest = &rest[at + close + 1..];
            }
        }
    }
    Ok(pieces)
}

fn parse_pair(pair: &str) -> Result<QueryPair, String> {
    let (key, value) = match pair.split_once('=') {
        Some((key, value)) => (key, Some(value)),
        None => (pair, None),
    };
    if key.is_empty() || key.contains(['{', '}']) {
        return Err(format!("query pair `{pair}`: the key is fixed text, not empty and no placeholder"));
    }
    let value = match value {
        None => QueryValue::Absent,
        Some(value) => match value.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
            Some(name) => QueryValue::Field(placeholder(name)?),
            None if value.contains(['{', '}']) => {
                return Err(format!("query pair `{pair}`: a placeholder is the whole value (`key={{name}}`)"));
            }
            None => QueryValue::Literal(literal(value)?),
        },
    };
    Ok(QueryPair { key: literal(key)?, value })
}

fn placeholder(name: &str) -> Result<String, String> {
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !ok {
        return Err(format!("`{{{name}}}` is not a placeholder: an input property name of letters, digits, `_`, `-`"));
    }
    Ok(name.to_owned())
}

/// Fixed text of the template, which must already be valid in a URL.
fn literal(text: &str) -> Result<String, String> {
    let valid = |c: char| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/%".contains(c);
    match text.chars().find(|c| !valid(*c)) {
        Some(c) => Err(format!("the URL has `{}` in it; percent-encode it", c.escape_default())),
        None => Ok(text.to_owned()),
    }
}

/// Percent-encodes everything but the unreserved characters of RFC 3986, so a value is
/// exactly one path segment or query value whatever it holds (`/`, `?`, `&`, `#`, …).
pub(crate) fn encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn http_tool_url_fills_path_segments_and_query_values_encoded() {
        let template =
            UrlTemplate::parse("https://api.example.com/v1/forecast/{city}.json?days={days}&units=metric").unwrap();
        assert_eq!((template.host.as_str(), template.port), ("api.example.com", 443));
        let url = template.fill(&json!({ "city": "São Paulo/../x?y#z", "days": 3 })).unwrap();
        assert_eq!(
            url,
            "https://api.example.com/v1/forecast/S%C3%A3o%20Paulo%2F..%2Fx%3Fy%23z.json?days=3&units=metric"
        );
        let url = template.fill(&json!({ "city": "Oslo" })).unwrap();
        assert_eq!(url, "https://api.example.com/v1/forecast/Oslo.json?units=metric", "an absent query value drops");
        let url = template.fill(&json!({ "city": "Oslo", "days": ["1", "a&b=c"] })).unwrap();
        assert!(url.ends_with("?days=1&days=a%26b%3Dc&units=metric"), "{url}");
        assert!(template.fill(&json!({ "days": 1 })).unwrap_err().contains("needs `city`"));
        assert!(template.fill(&json!({ "city": ".." })).unwrap_err().contains("cannot be `..`"));
        assert!(template.fill(&json!({ "city": { "a": 1 } })).unwrap_err().contains("must be a string"));
        let places: Vec<_> = template.placeholders().collect();
        assert_eq!(places, [("city", Place::Path), ("days", Place::Query)]);
    }

    #[test]
    fn http_tool_url_templates_that_could_go_elsewhere_are_refused() {
        for (text, why) in [
            ("ftp://example.com/", "must start with"),
            ("https://{host}/x", "fixed"),
            ("https://user:pw@example.com/", "credentials"),
            ("https://example.com/a#b", "fragment"),
            ("https://example.com/{a", "without its `}`"),
            ("https://example.com/a}", "without its `{`"),
            ("https://example.com/?q=x{a}", "whole value"),
            ("https://example.com/{a b}", "not a placeholder"),
            ("https://example.com/a b", "percent-encode"),
            ("https://exa mple.com/", "not valid"),
        ] {
            let error = UrlTemplate::parse(text).unwrap_err();
            assert!(error.contains(why), "{text}: {error}");
        }
        let v6 = UrlTemplate::parse("http://[::1]:8080/x").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("[::1]", 8080));
    }
}
