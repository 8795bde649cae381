//! The allow-list rules: which destinations a grant names, and which addresses no grant of a name may reach.
//!
//! The allow-list rules: which destinations a grant names, and which addresses no grant
//! of a *name* may reach.

use std::net::{IpAddr, SocketAddr};

/// One granted destination: `api.example.com`, `*.example.org:8443`, `127.0.0.1:8080`,
/// `[::1]:3000`. Without a port, the default ports 80 and 443 are allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    host: HostMatch,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostMatch {
    Name(String),
    /// `*.example.org`: any name ending in `.example.org` (not `example.org` itself).
    Subdomains(String),
    Address(IpAddr),
}

impl HostPattern {
    /// Parses a grant as written in a manifest; the error says what is wrong.
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        let bad = |why: &str| format!("network grant `{text}` {why}");
        if text.contains("://") || text.contains('/') {
            return Err(bad("must be host[:port], not a URL"));
        }
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (address, after) = rest.split_once(']').ok_or_else(|| bad("has an unclosed `[`"))?;
            let port = match after {
                "" => None,
                after => Some(after.strip_prefix(':').ok_or_else(|| bad("has text after `]`"))?),
            };
            (address, port)
        } else {
            match text.rsplit_once(':') {
                Some((host, port)) if !host.contains(':') => (host, Some(port)),
                Some(_) => return Err(bad("is an IPv6 address without brackets; write `[addr]:port`")),
                None => (text, None),
            }
        };
        let port = match port {
            None => None,
            Some(port) => match port.parse::<u16>() {
                Ok(0) | Err(_) => return Err(bad("has an invalid port (1-65535)")),
                Ok(port) => Some(port),
            },
        };
        let host = if let Ok(address) = host.parse::<IpAddr>() {
            HostMatch::Address(address)
        } else if let Some(suffix) = host.strip_prefix("*.") {
            check_dns_name(suffix).map_err(|why| bad(&why))?;
            HostMatch::Subdomains(suffix.to_ascii_lowercase())
        } else {
            check_dns_name(host).map_err(|why| bad(&why))?;
            HostMatch::Name(host.to_ascii_lowercase())
        };
        Ok(HostPattern { host, port })
    }

    pub(crate) fn matches(&self, host: &str, port: u16) -> bool {
        let port_ok = match self.port {
            Some(granted) => granted == port,
            None => port == 80 || port == 443,
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let host_ok = match &self.host {
            HostMatch::Name(name) => host.eq_ignore_ascii_case(name),
            HostMatch::Subdomains(suffix) => {
                let host = host.to_ascii_lowercase();
                host.len() > suffix.len() + 1
                    && host.ends_with(suffix.as_str())
                    && host[..host.len() - suffix.len()].ends_with('.')
            }
            HostMatch::Address(address) => host.parse::<IpAddr>().is_ok_and(|ip| ip == *address),
        };
        port_ok && host_ok
    }

    /// Whether this grant names `address` (at `port`) on purpose: only an address
    /// literal does, so it may be reached even when it is not public.
    pub(super) fn names_address(&self, address: SocketAddr) -> bool {
        matches!(&self.host, HostMatch::Address(granted) if *granted == address.ip())
            && self.matches(&address.ip().to_string(), address.port())
    }
}

impl std::fmt::Display for HostPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.host {
            HostMatch::Name(name) => f.write_str(name)?,
            HostMatch::Subdomains(suffix) => write!(f, "*.{suffix}")?,
            HostMatch::Address(IpAddr::V6(address)) => write!(f, "[{address}]")?,
            HostMatch::Address(address) => write!(f, "{address}")?,
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

fn check_dns_name(name: &str) -> Result<(), String> {
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
        return Err("is not a valid host name (letters, digits, `-` and `.`; `*.` only as a prefix)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_parse_and_match() {
        let exact = HostPattern::parse("api.example.com:443").unwrap();
        assert!(exact.matches("API.example.com", 443));
        assert!(!exact.matches("api.example.com", 80));
        assert!(!exact.matches("evil-api.example.com", 443));

        let default_ports = HostPattern::parse("example.com").unwrap();
        assert!(default_ports.matches("example.com", 80) && default_ports.matches("example.com", 443));
        assert!(!default_ports.matches("example.com", 8080));

        let wildcard = HostPattern::parse("*.example.org").unwrap();
        assert!(wildcard.matches("a.example.org", 443));
        assert!(wildcard.matches("a.b.example.org", 443));
        assert!(!wildcard.matches("example.org", 443));
        assert!(!wildcard.matches("badexample.org", 443));

        let loopback = HostPattern::parse("127.0.0.1:8080").unwrap();
        assert!(loopback.matches("127.0.0.1", 8080));
        assert!(loopback.names_address("127.0.0.1:8080".parse().unwrap()));
        assert!(!loopback.names_address("127.0.0.1:8081".parse().unwrap()), "another port is not named");
        assert!(!HostPattern::parse("localhost:8080").unwrap().names_address("127.0.0.1:8080".parse().unwrap()));
        let v6 = HostPattern::parse("[::1]:3000").unwrap();
        assert!(v6.matches("[::1]", 3000));
        assert_eq!(v6.to_string(), "[::1]:3000");
    }

    #[test]
    fn malformed_patterns_say_why() {
        for (text, why) in [
            ("https://example.com", "not a URL"),
            ("example.com:0", "invalid port"),
            ("example.com:99999", "invalid port"),
            ("exa mple.com", "not a valid host name"),
            ("*.*.com", "not a valid host name"),
            ("ex*ample.com", "not a valid host name"),
            ("::1", "without brackets"),
            ("[::1", "unclosed"),
            ("", "not a valid host name"),
        ] {
            let error = HostPattern::parse(text).unwrap_err();
            assert!(error.contains(why), "{text}: {error}");
        }
    }
}
