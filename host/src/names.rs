//! Tool and namespace names, and the forms consumers spell them in.
//!
//! A name is lowercase ASCII words (`[a-z][a-z0-9]*`) joined by single `_` or `-`. No
//! doubled separators means `namespace/tool` maps reversibly to the forms consumers
//! accept; the length caps keep them within the providers' limits:
//!
//! | consumer | rule | `math/add` becomes |
//! |---|---|---|
//! | OpenAI, Anthropic | `^[a-zA-Z0-9_-]{1,64}$` | `math__add` ([`function_name`]) |
//! | MCP | `[A-Za-z0-9_.-]`, 1 to 128 characters | `math.add` ([`mcp_name`]) |
//!
//! [`ToolHost::call`](crate::ToolHost::call) accepts every form back ([`unmap`]).

/// The longest namespace name.
pub const MAX_NAMESPACE_LEN: usize = 24;
/// The longest tool name: with a namespace and `__`, a function name stays within 64.
pub const MAX_TOOL_LEN: usize = 38;

/// Checks a namespace or tool name; the error says what is wrong.
pub fn validate(kind: &str, name: &str, max_len: usize) -> Result<(), String> {
    // Characters, not bytes: the message counts what people see. A name within the
    // limit has only ASCII characters, so it is as many bytes long.
    let length = name.chars().count();
    let problem = if name.is_empty() {
        Some("is empty".to_owned())
    } else if length > max_len {
        Some(format!("is {length} characters long; the limit is {max_len}"))
    } else if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        Some("must start with a lowercase ASCII letter".to_owned())
    } else if let Some(c) =
        name.chars().find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_' || *c == '-'))
    {
        Some(format!("contains `{c}`; only a-z, 0-9, `_` and `-` are allowed"))
    } else if name.ends_with(['_', '-']) {
        Some("must not end with `_` or `-`".to_owned())
    } else if name.as_bytes().windows(2).any(|w| matches!(w[0], b'_' | b'-') && matches!(w[1], b'_' | b'-')) {
        Some("must not contain two separators in a row".to_owned())
    } else {
        None
    };
    match problem {
        Some(problem) => Err(format!("{kind} name `{name}` {problem}")),
        None => Ok(()),
    }
}

/// Checks a namespace name.
pub fn validate_namespace(name: &str) -> Result<(), String> {
    validate("namespace", name, MAX_NAMESPACE_LEN)
}

/// Checks a tool name (without its namespace).
pub fn validate_tool(name: &str) -> Result<(), String> {
    validate("tool", name, MAX_TOOL_LEN)
}

/// `namespace/tool`.
pub fn full_name(namespace: &str, tool: &str) -> String {
    format!("{namespace}/{tool}")
}

/// Splits `namespace/tool`; `None` for a bare name.
pub fn split(full_name: &str) -> Option<(&str, &str)> {
    full_name.split_once('/')
}

/// `math/add` → `math__add`, the name OpenAI and Anthropic function calls use.
pub fn function_name(full_name: &str) -> String {
    full_name.replacen('/', "__", 1)
}

/// `math/add` → `math.add`, the name MCP clients see.
pub fn mcp_name(full_name: &str) -> String {
    full_name.replacen('/', ".", 1)
}

/// The full name behind an exported name (`math__add` or `math.add`), if it is one.
pub fn unmap(name: &str) -> Option<String> {
    if name.contains('/') {
        return None;
    }
    let (namespace, tool) = name.split_once("__").or_else(|| name.split_once('.'))?;
    Some(full_name(namespace, tool))
}

/// How a caller spelled the name of the tool it called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameForm {
    /// `namespace/tool`.
    Full,
    /// A stdlib tool's bare name.
    Bare,
    /// An exported form (`namespace__tool`, `namespace.tool`): the caller is a consumer
    /// of a tool definition, and passes its arguments in that definition's shape.
    Exported,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exported_names_map_both_ways() {
        assert_eq!(function_name("math/add"), "math__add");
        assert_eq!(mcp_name("text/word_count"), "text.word_count");
        assert_eq!(unmap("math__add").as_deref(), Some("math/add"));
        assert_eq!(unmap("text.word_count").as_deref(), Some("text/word_count"));
        assert_eq!(unmap("my-ns__regex_find").as_deref(), Some("my-ns/regex_find"));
        assert_eq!(unmap("add"), None);
        assert_eq!(unmap("math/add"), None);
    }

    #[test]
    fn accepts_snake_and_kebab_words() {
        for name in ["math", "word_count", "regex-find", "v2", "a1_b2-c3"] {
            validate_tool(name).unwrap();
        }
    }

    #[test]
    fn refuses_names_that_would_not_map_reversibly() {
        let cases = [
            ("", "is empty"),
            ("Math", "must start with a lowercase"),
            ("2fast", "must start with a lowercase"),
            ("a__b", "two separators"),
            ("a_-b", "two separators"),
            ("tail_", "must not end"),
            ("dot.ted", "contains `.`"),
            ("slash/ed", "contains `/`"),
        ];
        for (name, expected) in cases {
            let error = validate_tool(name).unwrap_err();
            assert!(error.contains(expected), "{name}: {error}");
        }
        assert!(validate_namespace(&"n".repeat(25)).unwrap_err().contains("limit is 24"));
    }
}
