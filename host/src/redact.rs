//! Secrets kept out of what remote text reaches: every form a service may echo one in.
//!
//! A service that is sent a credential (an HTTP tool's header, an upstream server's
//! `Authorization`) may quote it back: in an error page, a JSON body that echoes the
//! request, a URL, a debug dump of the headers. Every error, log line, report and
//! output that carries remote text goes through one [`Redactor`] holding the secrets
//! sent, and each secret is replaced, in each form it may take, by `[secret]`:
//!
//! - as it is;
//! - JSON-escaped (`"` `\` and control characters, and `/` as `\/`);
//! - percent-encoded (unreserved characters kept or not, upper- and lowercase hex
//!   digits, `+` for a space);
//! - base64 (standard and URL-safe alphabets, at each of the three alignments, so that
//!   the secret is found inside a longer encoded text such as a whole header line).

use std::borrow::Cow;

use base64::Engine as _;
use serde_json::Value;

/// What replaces a secret.
pub const REDACTED: &str = "[secret]";

/// Base64 runs shorter than this are not searched for: they would match by chance.
const MIN_BASE64_RUN: usize = 6;

/// The forms of a set of secrets to blank out of text. Its `Debug` shows how many
/// forms it holds, never one.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Every form of every secret, longest first (so a form containing another is
    /// replaced whole).
    forms: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} forms)", self.forms.len())
    }
}

impl Redactor {
    /// A redactor of `secrets` (empty ones are ignored).
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Redactor {
        let mut forms = Vec::new();
        for secret in secrets.into_iter().filter(|secret| !secret.is_empty()) {
            forms.push(secret.to_owned());
            forms.push(json_escaped(secret));
            forms.push(json_escaped(secret).replace('/', "\\/"));
            for percent in [percent_encoded(secret, is_unreserved), percent_encoded(secret, u8::is_ascii_alphanumeric)]
            {
                forms.push(percent.to_ascii_lowercase());
                forms.push(percent.replace("%20", "+"));
                forms.push(percent);
            }
            forms.extend(base64_runs(secret.as_bytes()));
        }
        forms.sort_by_key(|form| std::cmp::Reverse(form.len()));
        forms.dedup();
        Redactor { forms }
    }

    /// Whether it blanks nothing.
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// `text` with every form of every secret replaced by [`REDACTED`].
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if !self.forms.iter().any(|form| text.contains(form.as_str())) {
            return Cow::Borrowed(text);
        }
        let mut text = text.to_owned();
        for form in &self.forms {
            if text.contains(form.as_str()) {
                text = text.replace(form.as_str(), REDACTED);
            }
        }
        Cow::Owned(text)
    }

    /// `value` with every string in it (keys too) redacted as [`Redactor::text`].
    pub fn value(&self, value: Value) -> Value {
        if self.is_empty() {
            return value;
        }
        match value {
            Value::String(text) => Value::String(self.text(&text).into_owned()),
            Value::Array(items) => Value::Array(items.into_iter().map(|item| self.value(item)).collect()),
            Value::Object(entries) => Value::Object(
                entries.into_iter().map(|(key, item)| (self.text(&key).into_owned(), self.value(item))).collect(),
            ),
            other => other,
        }
    }
}

/// `secret` as it appears inside a JSON string.
fn json_escaped(secret: &str) -> String {
    let quoted = serde_json::to_string(secret).unwrap_or_default();
    quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or_default().to_owned()
}

/// URI's unreserved characters, which encoders leave as they are (most of them).
fn is_unreserved(byte: &u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// `secret` percent-encoded: every byte but those `keep` accepts as `%XX`.
fn percent_encoded(secret: &str, keep: fn(&u8) -> bool) -> String {
    let mut encoded = String::with_capacity(secret.len() * 3);
    for byte in secret.bytes() {
        if keep(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// The base64 characters that encode `secret` whatever comes before and after it, at
/// each of the three alignments it may start at, in both alphabets.
fn base64_runs(secret: &[u8]) -> Vec<String> {
    let mut runs = Vec::new();
    for offset in 0..3 {
        let mut padded = vec![0u8; offset];
        padded.extend_from_slice(secret);
        // Whole groups of three bytes only: the last partial one depends on what follows.
        padded.truncate(padded.len() - padded.len() % 3);
        for engine in [&base64::engine::general_purpose::STANDARD, &base64::engine::general_purpose::URL_SAFE] {
            let encoded = engine.encode(&padded);
            // The first group mixes in what comes before, unless the secret starts it.
            let skip = if offset == 0 { 0 } else { 4 };
            if let Some(run) = encoded.get(skip..).filter(|run| run.len() >= MIN_BASE64_RUN) {
                runs.push(run.to_owned());
            }
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "s3cr3t/t0k3n+x y\"z";

    #[test]
    fn every_form_of_a_secret_is_blanked() {
        let redactor = Redactor::new(["Bearer abc", SECRET]);
        let echoes = [
            format!("auth: {SECRET}"),
            format!("{{\"auth\": {}}}", serde_json::to_string(SECRET).unwrap()),
            format!("{{\"auth\": \"{}\"}}", json_escaped(SECRET).replace('/', "\\/")),
            format!("/echo?auth={}", percent_encoded(SECRET, is_unreserved)),
            format!("/echo?auth={}", percent_encoded(SECRET, is_unreserved).to_ascii_lowercase()),
            format!("/echo?auth={}", percent_encoded(SECRET, is_unreserved).replace("%20", "+")),
            format!("/echo?auth={}", percent_encoded(SECRET, u8::is_ascii_alphanumeric)),
        ];
        for echo in &echoes {
            let redacted = redactor.text(echo);
            assert!(redacted.contains(REDACTED), "{echo} → {redacted}");
            assert!(!redacted.contains("t0k3n"), "{echo} → {redacted}");
        }
        // Base64 of a whole header line, at every alignment of the secret in it.
        for before in ["", "a", "ab", "Authorization: Bearer "] {
            for engine in [&base64::engine::general_purpose::STANDARD, &base64::engine::general_purpose::URL_SAFE] {
                let encoded = engine.encode(format!("{before}{SECRET}\r\nHost: x"));
                let redacted = redactor.text(&encoded);
                assert!(redacted.contains(REDACTED), "{before:?}: {encoded} → {redacted}");
            }
        }
        assert_eq!(redactor.text("nothing here"), "nothing here");
        assert!(!format!("{redactor:?}").contains("t0k3n"));
    }

    #[test]
    fn values_are_redacted_in_strings_and_keys() {
        let redactor = Redactor::new([SECRET]);
        let echoed = serde_json::json!({ "headers": { "authorization": SECRET, SECRET: [1, SECRET] }, "n": 3 });
        let redacted = redactor.value(echoed).to_string();
        assert!(!redacted.contains("t0k3n"), "{redacted}");
        assert!(redacted.contains("\"n\":3"), "{redacted}");
    }
}
