//! Text that comes from a guest, a client or the disk is data: escaped before it reaches a terminal or a log line.
//!
//! Text that comes from a guest, a client or the disk is data: before it reaches a
//! terminal or a text log line it is escaped, so that it can neither drive the terminal
//! (ESC sequences, NUL, bell) nor forge lines (CR, LF) nor reorder what is shown (bidi
//! overrides). JSON output needs none of this: serde escapes control characters there.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// The text of the file at `path`, read no further than `max` bytes: a wrong path (a
/// huge file, `/dev/zero`, a pipe that never closes) is refused, not read whole. Over
/// the bound the error's kind is [`std::io::ErrorKind::FileTooLarge`].
pub fn read_file_bounded(path: &Path, max: u64) -> std::io::Result<String> {
    let bytes = read_bytes_bounded(path, max)?;
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

/// The bytes of the file at `path`, read no further than `max` bytes, as
/// [`read_file_bounded`] reads text.
pub fn read_bytes_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        let longer = format!("it is longer than {max} bytes");
        return Err(std::io::Error::new(std::io::ErrorKind::FileTooLarge, longer));
    }
    Ok(bytes)
}

/// `text` with its `%XX` escapes decoded, when every `%` starts two hex digits.
pub(crate) fn percent_decoded(text: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let hex = tail.get(..2).filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))?;
            bytes.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(byte);
            rest = tail;
        }
    }
    Some(bytes)
}

/// `text` with every control character (C0, DEL, C1) and bidirectional override escaped
/// the way Rust writes them (`\n`, `\r`, `\t`, `\u{1b}`); printable text, including
/// non-ASCII, unchanged.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            escaped.extend(c.escape_debug());
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
}

/// JSON text with the characters serde leaves raw but a terminal acts on (DEL, C1
/// controls, bidi overrides) written as `\uXXXX` escapes: the same JSON value, safe to
/// print. (serde already escapes C0 controls; these characters occur only in strings.)
pub fn json_for_terminal(json: &str) -> Cow<'_, str> {
    // C0 controls are serde's (escaped in strings) or layout (newlines between values).
    let raw_in_json = |c: char| c != '\u{7f}' && u32::from(c) < 0x20 || !needs_escape(c);
    if json.chars().all(raw_in_json) {
        return Cow::Borrowed(json);
    }
    let mut escaped = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if !raw_in_json(c) {
            escaped.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
}

/// Displays its text through [`for_terminal`]: `%Escaped(&message)` in a log field,
/// `{}` in a line for stderr.
pub struct Escaped<'a>(pub &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&for_terminal(self.0))
    }
}

/// Longest message a guest can put in an error (a tool's failure, invalid input, a
/// trap, a load error), in bytes; the rest is counted and marked.
pub const MAX_MESSAGE: usize = 4096;

/// `text` cut to at most `max` bytes (at a character boundary) plus a marker saying how
/// many bytes were dropped; unchanged when it fits.
pub fn bounded(mut text: String, max: usize) -> String {
    let dropped = truncate(&mut text, max);
    if dropped > 0 {
        text.push_str(&format!(" … ({dropped} more bytes)"));
    }
    text
}

/// Cuts `text` to at most `max` bytes at a character boundary; returns the bytes cut.
pub(crate) fn truncate(text: &mut String, max: usize) -> usize {
    if text.len() <= max {
        return 0;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let dropped = text.len() - end;
    text.truncate(end);
    dropped
}

fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_bidi_overrides_are_escaped_and_the_rest_kept() {
        assert_eq!(for_terminal("plain café ✓"), "plain café ✓");
        assert!(matches!(for_terminal("plain"), Cow::Borrowed(_)));
        assert_eq!(for_terminal("\u{1b}[31mred\r\nerror[forged]\0"), "\\u{1b}[31mred\\r\\nerror[forged]\\0");
        assert_eq!(for_terminal("a\u{202e}b\u{7f}c\u{9b}"), "a\\u{202e}b\\u{7f}c\\u{9b}");
        assert_eq!(Escaped("tab\there").to_string(), "tab\\there");
    }

    #[test]
    fn json_keeps_its_value_and_loses_its_terminal_controls() {
        let value = serde_json::json!({ "text": "a\u{202e}b\u{9b}c\u{7f}\u{1b}" });
        let json = serde_json::to_string_pretty(&value).unwrap();
        let safe = json_for_terminal(&json);
        assert!(!safe.chars().any(|c| needs_escape(c) && c != '\n'), "{safe}");
        assert_eq!(safe.lines().count(), 3, "the layout stays: {safe}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&safe).unwrap(), value);
    }

    #[test]
    fn bounded_text_says_how_much_was_dropped() {
        assert_eq!(bounded("short".into(), 10), "short");
        assert_eq!(bounded("abcdefghij".into(), 4), "abcd … (6 more bytes)");
        assert_eq!(bounded("ééé".into(), 3), "é … (4 more bytes)", "cut at a character boundary");
    }
}
