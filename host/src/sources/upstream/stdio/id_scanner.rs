//! Picking the top-level `id` out of a JSON-RPC message too large to keep, as it streams past.
//!
//! The message is never held, only its nesting and at most a few bytes of it.
//!
//! The `id` may come anywhere among the message's members (the TypeScript SDK writes it
//! last, after the result), so the scanner follows strings, escapes and nesting over
//! the whole message, and keeps the value of the member named `id` at depth 1.

use rmcp::model::RequestId;

/// The longest `id` kept: longer ones are no id any client sent.
const MAX_ID: usize = 256;

#[derive(Default)]
pub(super) struct IdScanner {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a member's name.
    expect_name: bool,
    /// Reading a member's name at depth 1, which is kept if it may be `id`.
    in_name: bool,
    name: Vec<u8>,
    /// Reading the value of the member `id`.
    in_id: bool,
    id: Vec<u8>,
    found: Option<Vec<u8>>,
    size: u64,
}

impl IdScanner {
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        self.size += bytes.len() as u64;
        for &byte in bytes {
            self.step(byte);
        }
    }

    /// The message's size so far, in bytes.
    pub(super) fn size(&self) -> u64 {
        self.size
    }

    /// The request id the message answers, if it has a readable one.
    pub(super) fn id(&self) -> Option<RequestId> {
        serde_json::from_slice(self.found.as_deref()?).ok()
    }

    fn step(&mut self, byte: u8) {
        if self.in_string {
            self.string_byte(byte);
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_name {
                    (self.in_name, self.expect_name) = (true, false);
                    self.name.clear();
                } else {
                    self.keep(byte);
                }
            }
            b'{' | b'[' => {
                self.keep(byte);
                self.depth += 1;
                self.expect_name = self.depth == 1 && byte == b'{';
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.end_member();
                }
                self.depth = self.depth.saturating_sub(1);
                self.keep(byte);
            }
            b':' if self.depth == 1 => {
                self.in_id = self.name == b"id";
                self.id.clear();
            }
            b',' if self.depth == 1 => {
                self.end_member();
                self.expect_name = true;
            }
            byte if byte.is_ascii_whitespace() => {}
            byte => self.keep(byte),
        }
    }

    fn string_byte(&mut self, byte: u8) {
        let closing = !self.escaped && byte == b'"';
        self.escaped = !self.escaped && byte == b'\\';
        if self.in_name {
            if closing {
                self.in_name = false;
            } else if self.name.len() <= 2 {
                self.name.push(byte);
            } else {
                // Longer than `id`: no need to keep more of it.
                self.name.truncate(3);
            }
        } else {
            self.keep(byte);
        }
        if closing {
            self.in_string = false;
        }
    }

    /// Keeps `byte` when it belongs to the value of `id`.
    fn keep(&mut self, byte: u8) {
        if self.in_id && self.depth >= 1 && self.id.len() < MAX_ID {
            self.id.push(byte);
        }
    }

    fn end_member(&mut self) {
        if self.in_id {
            self.found = Some(std::mem::take(&mut self.id));
            self.in_id = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(message: &str) -> Option<RequestId> {
        let mut scanner = IdScanner::default();
        // Fed in pieces, as lines arrive.
        for piece in message.as_bytes().chunks(3) {
            scanner.feed(piece);
        }
        assert_eq!(scanner.size(), message.len() as u64);
        scanner.id()
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_comes() {
        let number = RequestId::Number(7);
        assert_eq!(scanned(r#"{"jsonrpc":"2.0","id":7,"result":{"x":1}}"#), Some(number.clone()));
        assert_eq!(
            scanned(r#"{"result":{"id":99,"text":"a \"id\": 5"},"jsonrpc":"2.0","id":7}"#),
            Some(number.clone())
        );
        assert_eq!(scanned(r#"{ "result" : [ {"id":1} ], "id" : 7 }"#), Some(number));
        assert_eq!(scanned(r#"{"id":"r-\"1\"","result":{}}"#), Some(RequestId::String("r-\"1\"".into())));
        assert_eq!(scanned(r#"{"result":{"text":"\\"},"idx":3,"id":"a"}"#), Some(RequestId::String("a".into())));
    }

    #[test]
    fn no_id_is_made_up() {
        assert_eq!(scanned(r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"id":3}}"#), None);
        assert_eq!(scanned(r#"{"result":{"id":3}}"#), None);
        assert_eq!(scanned(r#"{"id":{"nested":1},"result":{}}"#), None);
        assert_eq!(scanned(r#"[{"id":3}]"#), None);
        assert_eq!(scanned("not json at all"), None);
    }
}
