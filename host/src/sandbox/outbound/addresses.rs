//! Which addresses a guest may reach through a granted name: ordinary global unicast only.
//!
//! Which addresses a guest may reach through a granted *name*: ordinary global unicast
//! only. Every range of the IANA IPv4 and IPv6 special-purpose address registries is
//! refused — also the few the registries mark globally reachable (anycast
//! infrastructure: PCP/TURN anycast, AS112, AMT), which no tool needs to reach by name —
//! and so are multicast, broadcast, and IPv6 outside global unicast, unless a grant
//! names the address itself. IPv6 forms that stand for an IPv4 address (IPv4-mapped, the NAT64
//! well-known prefix) are judged by the IPv4 they carry; deprecated or local embeddings
//! (IPv4-compatible, 6to4, Teredo, local-use NAT64) are refused outright.
//!
//! The decision is made on every address a name resolves to, before connecting.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// IPv4 ranges a granted name may not lead to (RFC 6890 and the IANA registry).
const SPECIAL_V4: &[(Ipv4Addr, u8, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, "\"this network\" 0.0.0.0/8"),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "private-use 10.0.0.0/8"),
    (Ipv4Addr::new(100, 64, 0, 0), 10, "shared address space 100.64.0.0/10"),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "loopback 127.0.0.0/8"),
    (Ipv4Addr::new(169, 254, 0, 0), 16, "link-local 169.254.0.0/16"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "private-use 172.16.0.0/12"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, "IETF protocol assignments 192.0.0.0/24"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, "documentation 192.0.2.0/24"),
    (Ipv4Addr::new(192, 31, 196, 0), 24, "AS112-v4 192.31.196.0/24"),
    (Ipv4Addr::new(192, 52, 193, 0), 24, "AMT 192.52.193.0/24"),
    (Ipv4Addr::new(192, 88, 99, 0), 24, "deprecated 6to4 relay anycast 192.88.99.0/24"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "private-use 192.168.0.0/16"),
    (Ipv4Addr::new(192, 175, 48, 0), 24, "AS112 direct delegation 192.175.48.0/24"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "benchmarking 198.18.0.0/15"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, "documentation 198.51.100.0/24"),
    (Ipv4Addr::new(203, 0, 113, 0), 24, "documentation 203.0.113.0/24"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "multicast 224.0.0.0/4"),
    (Ipv4Addr::new(255, 255, 255, 255), 32, "limited broadcast 255.255.255.255/32"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "reserved 240.0.0.0/4"),
];

/// IPv6 ranges refused outright (RFC 6890, the IANA registry, and deprecated forms).
/// IPv4-mapped and NAT64 well-known-prefix addresses are judged by their IPv4 first.
const SPECIAL_V6: &[(Ipv6Addr, u8, &str)] = &[
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 128, "unspecified ::/128"),
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 1), 128, "loopback ::1/128"),
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 96, "IPv4-compatible ::/96 (deprecated)"),
    (Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0, 0), 96, "IPv4-translated ::ffff:0:0:0/96"),
    (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48, "local-use IPv4/IPv6 translation 64:ff9b:1::/48"),
    (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, "discard-only 100::/64"),
    (Ipv6Addr::new(0x100, 0, 0, 1, 0, 0, 0, 0), 64, "dummy prefix 100:0:0:1::/64"),
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32, "Teredo 2001::/32"),
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23, "IETF protocol assignments 2001::/23"),
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, "documentation 2001:db8::/32"),
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16, "6to4 2002::/16 (deprecated)"),
    (Ipv6Addr::new(0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0), 48, "AS112-v6 2620:4f:8000::/48"),
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20, "documentation 3fff::/20"),
    (Ipv6Addr::new(0x5f00, 0, 0, 0, 0, 0, 0, 0), 16, "segment routing SIDs 5f00::/16"),
    (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7, "unique local fc00::/7"),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, "link-local fe80::/10"),
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, "site-local fec0::/10 (deprecated)"),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, "multicast ff00::/8"),
];

/// The NAT64 well-known prefix `64:ff9b::/96`, whose addresses stand for the IPv4 address
/// in their last 32 bits.
const NAT64_WELL_KNOWN: Ipv6Addr = Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0);

/// Why a guest may not reach `address` through a granted name: the special-purpose
/// range it lies in (for an IPv6 form of an IPv4 address, the IPv4 range, said so);
/// `None` for a global unicast address.
pub(crate) fn special_purpose(address: IpAddr) -> Option<String> {
    match address {
        IpAddr::V4(v4) => special_v4(v4).map(str::to_owned),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return special_v4(v4).map(|range| format!("IPv4-mapped {v4}, {range}"));
            }
            if in_v6(v6, NAT64_WELL_KNOWN, 96) {
                let v4 = Ipv4Addr::from(u128::from(v6) as u32);
                return special_v4(v4).map(|range| format!("NAT64 of {v4}, {range}"));
            }
            if let Some((_, _, range)) = SPECIAL_V6.iter().find(|(net, len, _)| in_v6(v6, *net, *len)) {
                return Some((*range).to_owned());
            }
            // Only 2000::/3 is allocated for global unicast.
            (v6.segments()[0] & 0xe000 != 0x2000).then(|| "outside global unicast 2000::/3".to_owned())
        }
    }
}

fn special_v4(v4: Ipv4Addr) -> Option<&'static str> {
    SPECIAL_V4.iter().find(|(net, len, _)| in_v4(v4, *net, *len)).map(|(_, _, range)| *range)
}

fn in_v4(address: Ipv4Addr, network: Ipv4Addr, prefix: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    u32::from(address) & mask == u32::from(network) & mask
}

fn in_v6(address: Ipv6Addr, network: Ipv6Addr, prefix: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    u128::from(address) & mask == u128::from(network) & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One address inside (and, for the registries' entries, at the edge of) every
    /// range, with the range it must be refused for.
    const REFUSED: &[(&str, &str)] = &[
        ("0.0.0.0", "0.0.0.0/8"),
        ("0.255.255.255", "0.0.0.0/8"),
        ("10.0.0.1", "10.0.0.0/8"),
        ("10.255.255.255", "10.0.0.0/8"),
        ("100.64.0.1", "100.64.0.0/10"),
        ("100.127.255.254", "100.64.0.0/10"),
        ("127.0.0.1", "127.0.0.0/8"),
        ("127.255.0.9", "127.0.0.0/8"),
        ("169.254.169.254", "169.254.0.0/16"),
        ("172.16.0.1", "172.16.0.0/12"),
        ("172.31.255.255", "172.16.0.0/12"),
        ("192.0.0.8", "192.0.0.0/24"),
        ("192.0.0.170", "192.0.0.0/24"),
        ("192.0.2.1", "192.0.2.0/24"),
        ("192.31.196.1", "192.31.196.0/24"),
        ("192.52.193.1", "192.52.193.0/24"),
        ("192.88.99.1", "192.88.99.0/24"),
        ("192.168.1.1", "192.168.0.0/16"),
        ("192.175.48.1", "192.175.48.0/24"),
        ("198.18.0.1", "198.18.0.0/15"),
        ("198.19.255.255", "198.18.0.0/15"),
        ("198.51.100.7", "198.51.100.0/24"),
        ("203.0.113.9", "203.0.113.0/24"),
        ("224.0.0.1", "224.0.0.0/4"),
        ("239.255.255.250", "224.0.0.0/4"),
        ("240.0.0.1", "240.0.0.0/4"),
        ("255.255.255.255", "255.255.255.255/32"),
        ("::", "::/128"),
        ("::1", "::1/128"),
        ("::10.0.0.1", "::/96"),
        ("::8.8.8.8", "::/96"),
        ("::ffff:127.0.0.1", "IPv4-mapped 127.0.0.1, loopback"),
        ("::ffff:10.1.2.3", "IPv4-mapped 10.1.2.3, private-use"),
        ("::ffff:169.254.169.254", "IPv4-mapped 169.254.169.254, link-local"),
        ("::ffff:0:10.0.0.1", "::ffff:0:0:0/96"),
        ("64:ff9b::7f00:1", "NAT64 of 127.0.0.1, loopback"),
        ("64:ff9b::a9fe:a9fe", "NAT64 of 169.254.169.254, link-local"),
        ("64:ff9b::c0a8:101", "NAT64 of 192.168.1.1, private-use"),
        ("64:ff9b:1::808:808", "64:ff9b:1::/48"),
        ("100::1", "100::/64"),
        ("100:0:0:1::1", "100:0:0:1::/64"),
        ("2001::1", "2001::/32"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::/32"),
        ("2001:2::1", "2001::/23"),
        ("2001:1::1", "2001::/23"),
        ("2001:4:112::1", "2001::/23"),
        ("2001:1ff::1", "2001::/23"),
        ("2001:db8::1", "2001:db8::/32"),
        ("2002:7f00:1::1", "2002::/16"),
        ("2002:808:808::1", "2002::/16"),
        ("2620:4f:8000::1", "2620:4f:8000::/48"),
        ("3fff::1", "3fff::/20"),
        ("5f00::1", "5f00::/16"),
        ("fc00::1", "fc00::/7"),
        ("fd12:3456::1", "fc00::/7"),
        ("fe80::1", "fe80::/10"),
        ("febf::1", "fe80::/10"),
        ("fec0::1", "fec0::/10"),
        ("ff02::1", "ff00::/8"),
        ("4000::1", "2000::/3"),
        ("1234::1", "2000::/3"),
    ];

    /// Global unicast, also in the IPv6 forms that stand for a public IPv4 address.
    const ALLOWED: &[&str] = &[
        "1.1.1.1",
        "8.8.8.8",
        "93.184.216.34",
        "100.63.255.255",
        "100.128.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "192.0.1.1",
        "192.169.0.1",
        "198.17.255.255",
        "198.20.0.0",
        "223.255.255.255",
        "2606:4700::1111",
        "2001:200::1",
        "2a00:1450:4001::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
    ];

    #[test]
    fn every_special_purpose_range_is_refused_with_its_name() {
        for (address, range) in REFUSED {
            let reason = special_purpose(address.parse().unwrap());
            assert!(reason.as_deref().is_some_and(|r| r.contains(range)), "{address}: {reason:?}, wanted {range}");
        }
    }

    #[test]
    fn global_unicast_passes() {
        for address in ALLOWED {
            assert_eq!(special_purpose(address.parse().unwrap()), None, "{address}");
        }
    }
}
