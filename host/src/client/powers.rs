//! The client's powers a tool may be granted, by name, and sets of them.

/// One power of the client a tool may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientPower {
    /// Ask the person a question (MCP elicitation).
    Elicit,
    /// Ask the client's model for a completion (MCP sampling).
    Sample,
    /// Send log lines to the client (MCP `notifications/message`).
    Log,
}

impl ClientPower {
    /// Every power, in the order manifests list them.
    pub const ALL: [ClientPower; 3] = [ClientPower::Elicit, ClientPower::Sample, ClientPower::Log];

    /// Its name in manifests and policies.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientPower::Elicit => "elicit",
            ClientPower::Sample => "sample",
            ClientPower::Log => "log",
        }
    }

    /// The power named `name`.
    pub fn parse(name: &str) -> Option<ClientPower> {
        ClientPower::ALL.into_iter().find(|power| power.as_str() == name)
    }
}

impl std::fmt::Display for ClientPower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of [`ClientPower`]s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ClientPowers(u8);

impl ClientPowers {
    /// No power.
    pub const NONE: ClientPowers = ClientPowers(0);

    /// Every power.
    pub fn all() -> ClientPowers {
        ClientPower::ALL.into_iter().collect()
    }

    fn bit(power: ClientPower) -> u8 {
        1 << power as u8
    }

    /// Whether `power` is in the set.
    pub fn contains(self, power: ClientPower) -> bool {
        self.0 & Self::bit(power) != 0
    }

    /// The set with `power` in it.
    pub fn with(self, power: ClientPower) -> ClientPowers {
        ClientPowers(self.0 | Self::bit(power))
    }

    /// The powers in both sets.
    pub fn intersection(self, other: ClientPowers) -> ClientPowers {
        ClientPowers(self.0 & other.0)
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The powers, in [`ClientPower::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = ClientPower> {
        ClientPower::ALL.into_iter().filter(move |power| self.contains(*power))
    }
}

impl FromIterator<ClientPower> for ClientPowers {
    fn from_iter<I: IntoIterator<Item = ClientPower>>(iter: I) -> Self {
        iter.into_iter().fold(ClientPowers::NONE, ClientPowers::with)
    }
}

impl serde::Serialize for ClientPowers {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn powers_are_a_set() {
        let granted: ClientPowers = [ClientPower::Elicit, ClientPower::Log].into_iter().collect();
        let allowed: ClientPowers = [ClientPower::Log, ClientPower::Sample].into_iter().collect();
        assert_eq!(granted.intersection(allowed).iter().collect::<Vec<_>>(), [ClientPower::Log]);
        assert_eq!(serde_json::to_value(granted).unwrap(), json!(["elicit", "log"]));
    }
}
