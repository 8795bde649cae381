//! `http://` and `https://` URLs: parsed strictly enough that the host never sees a
//! malformed request, leniently enough that a model's URL with a space in the query
//! still works (such bytes are percent-encoded), and joined with a redirect's
//! `Location`.

use std::fmt;

use wasip2::http::types::Scheme;

/// An absolute `http://` or `https://` URL without credentials or fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    https: bool,
    /// Lower-case host name, IPv4 address or bracketed IPv6 address.
    host: String,
    port: Option<u16>,
    /// Always starts with `/`; percent-encoded where needed.
    path_and_query: String,
}

/// Why a URL cannot be fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlError {
    NotHttp,
    NoHost,
    Credentials,
    BadHost(String),
    BadPort(String),
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::NotHttp => f.write_str("only absolute http:// and https:// URLs can be fetched"),
            UrlError::NoHost => f.write_str("the URL has no host"),
            UrlError::Credentials => {
                f.write_str("credentials in the URL (`user:password@`) are not sent; use an Authorization header")
            }
            UrlError::BadHost(host) => write!(
                f,
                "`{host}` is not a host name or IP address (international names must be given in their \
                 xn-- form)"
            ),
            UrlError::BadPort(port) => write!(f, "`{port}` is not a port number"),
        }
    }
}

impl std::error::Error for UrlError {}

impl Url {
    /// Parses an absolute URL; surrounding whitespace is ignored, the fragment dropped.
    pub fn parse(text: &str) -> Result<Url, UrlError> {
        let text = text.trim();
        let (https, rest) = split_scheme(text).ok_or(UrlError::NotHttp)?;
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, rest) = rest.split_at(end);
        if authority.contains('@') {
            return Err(UrlError::Credentials);
        }
        let (host, port) = split_port(authority)?;
        if host.is_empty() {
            return Err(UrlError::NoHost);
        }
        let host = host.to_ascii_lowercase();
        if !valid_host(&host) {
            return Err(UrlError::BadHost(host));
        }
        let without_fragment = rest.split('#').next().unwrap_or_default();
        let path_and_query = match without_fragment.chars().next() {
            Some('/') => encode(without_fragment),
            Some(_) => format!("/{}", encode(without_fragment)),
            None => "/".to_owned(),
        };
        Ok(Url { https, host, port, path_and_query })
    }

    /// The URL a redirect's `Location` names, relative to this one.
    pub fn join(&self, location: &str) -> Result<Url, UrlError> {
        let location = location.trim();
        if split_scheme(location).is_some() {
            return Url::parse(location);
        }
        if let Some(rest) = location.strip_prefix("//") {
            let scheme = if self.https { "https" } else { "http" };
            return Url::parse(&format!("{scheme}://{rest}"));
        }
        let location = location.split('#').next().unwrap_or_default();
        let path_and_query = if location.starts_with('/') {
            location.to_owned()
        } else if location.starts_with('?') {
            format!("{}{location}", self.path())
        } else if location.is_empty() {
            self.path_and_query.clone()
        } else {
            let path = self.path();
            let directory = &path[..path.rfind('/').map_or(0, |slash| slash + 1)];
            format!("{directory}{location}")
        };
        let (path, query) = match path_and_query.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (path_and_query.as_str(), None),
        };
        let mut joined = remove_dot_segments(path);
        if let Some(query) = query {
            joined.push('?');
            joined.push_str(query);
        }
        Ok(Url { path_and_query: encode(&joined), ..self.clone() })
    }

    pub fn is_https(&self) -> bool {
        self.https
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, the scheme's default when the URL names none.
    pub fn port(&self) -> u16 {
        self.port.unwrap_or(if self.https { 443 } else { 80 })
    }

    /// `host[:port]` as written in a request.
    pub fn authority(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.host),
            None => self.host.clone(),
        }
    }

    /// `host:port`, the way network grants and the host's refusals name a destination.
    pub fn origin(&self) -> String {
        format!("{}:{}", self.host, self.port())
    }

    pub fn path_and_query(&self) -> &str {
        &self.path_and_query
    }

    fn path(&self) -> &str {
        self.path_and_query.split('?').next().unwrap_or("/")
    }

    pub(crate) fn wasi_scheme(&self) -> Scheme {
        if self.https { Scheme::Https } else { Scheme::Http }
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.https { "https" } else { "http" };
        write!(f, "{scheme}://{}{}", self.authority(), self.path_and_query)
    }
}

/// `Some(is_https, rest after "://")` for an http or https URL, any letter case.
fn split_scheme(text: &str) -> Option<(bool, &str)> {
    let (scheme, rest) = text.split_once("://")?;
    if scheme.eq_ignore_ascii_case("https") {
        Some((true, rest))
    } else if scheme.eq_ignore_ascii_case("http") {
        Some((false, rest))
    } else {
        None
    }
}

fn split_port(authority: &str) -> Result<(&str, Option<u16>), UrlError> {
    // A bracketed IPv6 address holds colons of its own.
    let colon = match authority.rfind(']') {
        Some(bracket) => authority[bracket..].find(':').map(|at| bracket + at),
        None => authority.rfind(':'),
    };
    let Some(colon) = colon else { return Ok((authority, None)) };
    let (host, port) = (&authority[..colon], &authority[colon + 1..]);
    if port.is_empty() {
        return Ok((host, None));
    }
    match port.parse::<u16>() {
        Ok(number) if number > 0 && port.bytes().all(|b| b.is_ascii_digit()) => Ok((host, Some(number))),
        _ => Err(UrlError::BadPort(port.to_owned())),
    }
}

fn valid_host(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.parse::<std::net::Ipv6Addr>().is_ok();
    }
    host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
        && !host.starts_with('.')
        && !host.contains("..")
}

/// Percent-encodes the bytes a request target may not hold (spaces, controls, non-ASCII,
/// and `"<>\^`{|}`); an existing `%XX` escape is kept, a stray `%` encoded.
fn encode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut encoded = String::with_capacity(text.len());
    for (index, &byte) in bytes.iter().enumerate() {
        let escape_follows =
            bytes.get(index + 1..index + 3).is_some_and(|hex| hex.iter().all(|digit| digit.is_ascii_hexdigit()));
        let keep = match byte {
            b'%' => escape_follows,
            b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}' => false,
            0x21..=0x7e => true,
            _ => false,
        };
        if keep {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// RFC 3986 §5.2.4 on a path: `.` and `..` segments resolved, never above the root.
fn remove_dot_segments(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    let trailing_directory = path.ends_with("/.") || path.ends_with("/..") || path.ends_with('/');
    for segment in path.split('/').skip(1) {
        match segment {
            "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    let mut joined = format!("/{}", segments.join("/"));
    if trailing_directory && !joined.ends_with('/') {
        joined.push('/');
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_scheme_host_port_path_and_drops_the_fragment() {
        let url = Url::parse(" HTTPS://Example.COM:8443/a/b?q=1#top ").unwrap();
        assert!(url.is_https());
        assert_eq!(url.host(), "example.com");
        assert_eq!(url.port(), 8443);
        assert_eq!(url.path_and_query(), "/a/b?q=1");
        assert_eq!(url.to_string(), "https://example.com:8443/a/b?q=1");
        assert_eq!(Url::parse("http://example.com").unwrap().path_and_query(), "/");
        assert_eq!(Url::parse("http://example.com?x").unwrap().path_and_query(), "/?x");
        assert_eq!(Url::parse("http://[::1]:8080/").unwrap().origin(), "[::1]:8080");
    }

    #[test]
    fn refuses_what_cannot_be_fetched() {
        assert_eq!(Url::parse("ftp://example.com/"), Err(UrlError::NotHttp));
        assert_eq!(Url::parse("example.com"), Err(UrlError::NotHttp));
        assert_eq!(Url::parse("http:///path"), Err(UrlError::NoHost));
        assert_eq!(Url::parse("http://user:pw@example.com/"), Err(UrlError::Credentials));
        assert_eq!(Url::parse("http://example.com:99999/"), Err(UrlError::BadPort("99999".into())));
        assert!(matches!(Url::parse("http://exa mple.com/"), Err(UrlError::BadHost(_))));
        assert!(matches!(Url::parse("http://bücher.de/"), Err(UrlError::BadHost(_))));
    }

    #[test]
    fn encodes_what_a_request_target_may_not_hold() {
        let url = Url::parse("http://example.com/a b?q=crème brûlée&x=%41%zz").unwrap();
        assert_eq!(url.path_and_query(), "/a%20b?q=cr%C3%A8me%20br%C3%BBl%C3%A9e&x=%41%25zz");
    }

    #[test]
    fn joins_redirect_locations() {
        let base = Url::parse("https://example.com/docs/guide/page?x=1").unwrap();
        assert_eq!(base.join("http://other.org/").unwrap().to_string(), "http://other.org/");
        assert_eq!(base.join("//cdn.example.com/a").unwrap().to_string(), "https://cdn.example.com/a");
        assert_eq!(base.join("/root").unwrap().to_string(), "https://example.com/root");
        assert_eq!(base.join("next?y=2").unwrap().to_string(), "https://example.com/docs/guide/next?y=2");
        assert_eq!(base.join("../up/").unwrap().to_string(), "https://example.com/docs/up/");
        assert_eq!(base.join("../../../../top").unwrap().to_string(), "https://example.com/top");
        assert_eq!(base.join("?z=3").unwrap().to_string(), "https://example.com/docs/guide/page?z=3");
    }
}
