//! A response body in the form a model reads best, chosen by its content type.

use base64::Engine as _;
use serde_json::Value;

use crate::{BodyFormat, ResponseFormat};

/// Lines of HTML text are wrapped near this width: wide enough for prose, narrow enough
/// that tables keep their shape.
const HTML_TEXT_WIDTH: usize = 100;
/// A page title longer than this is cut: it is a label, not content.
const MAX_TITLE_CHARS: usize = 300;

pub struct Decoded {
    pub format: BodyFormat,
    pub body: Value,
    pub title: Option<String>,
    pub note: Option<String>,
}

impl Decoded {
    pub fn empty() -> Decoded {
        Decoded { format: BodyFormat::Empty, body: Value::String(String::new()), title: None, note: None }
    }

    fn text(text: String, note: Option<String>) -> Decoded {
        Decoded { format: BodyFormat::Text, body: Value::String(text), title: None, note }
    }

    fn base64(bytes: &[u8]) -> Decoded {
        let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
        Decoded { format: BodyFormat::Base64, body: Value::String(encoded), title: None, note: None }
    }
}

/// The kinds of body `auto` tells apart.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Json,
    Html,
    Text,
    Binary,
}

/// The media type of a `content-type` value, lower case, without parameters.
fn media_type(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

fn kind_of(content_type: &str, bytes: &[u8]) -> Kind {
    let media = media_type(content_type);
    if media == "application/json" || media.ends_with("+json") || media == "text/json" {
        Kind::Json
    } else if media == "text/html" || media == "application/xhtml+xml" {
        Kind::Html
    } else if media.starts_with("text/")
        || media.ends_with("+xml")
        || matches!(
            media.as_str(),
            "application/xml" | "application/javascript" | "application/x-www-form-urlencoded" | "application/yaml"
        )
        || (media.is_empty() && looks_like_text(bytes))
    {
        Kind::Text
    } else {
        Kind::Binary
    }
}

/// Text without a content type: UTF-8 (an incomplete last character aside, which a cut
/// body may end with) and no NUL bytes.
fn looks_like_text(bytes: &[u8]) -> bool {
    let valid = match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(error) => error.error_len().is_none(),
    };
    valid && !bytes.contains(&0)
}

pub fn decode(bytes: &[u8], content_type: &str, format: ResponseFormat, truncated: bool) -> Decoded {
    if bytes.is_empty() {
        return Decoded::empty();
    }
    match format {
        ResponseFormat::Base64 => return Decoded::base64(bytes),
        ResponseFormat::Text => return Decoded::text(String::from_utf8_lossy(bytes).into_owned(), None),
        ResponseFormat::Auto => {}
    }
    match kind_of(content_type, bytes) {
        Kind::Json => match serde_json::from_slice::<Value>(bytes) {
            Ok(value) => Decoded { format: BodyFormat::Json, body: value, title: None, note: None },
            Err(_) if truncated => Decoded::text(
                String::from_utf8_lossy(bytes).into_owned(),
                Some("the JSON was cut short, so it is returned as text".into()),
            ),
            Err(error) => Decoded::text(
                String::from_utf8_lossy(bytes).into_owned(),
                Some(format!("the body is labelled JSON but does not parse ({error}), so it is returned as text")),
            ),
        },
        Kind::Html => html(bytes),
        Kind::Text => Decoded::text(String::from_utf8_lossy(bytes).into_owned(), None),
        Kind::Binary => Decoded::base64(bytes),
    }
}

fn html(bytes: &[u8]) -> Decoded {
    let rendered =
        html2text::config::plain().allow_width_overflow().link_footnotes(true).string_from_read(bytes, HTML_TEXT_WIDTH);
    match rendered {
        Ok(text) => {
            Decoded { format: BodyFormat::HtmlText, body: Value::String(tidy(&text)), title: title(bytes), note: None }
        }
        Err(error) => Decoded::text(
            String::from_utf8_lossy(bytes).into_owned(),
            Some(format!("the HTML could not be reduced to text ({error}), so it is returned as sent")),
        ),
    }
}

/// Trailing spaces gone and runs of blank lines cut to one: layout that costs a model
/// tokens and says nothing.
fn tidy(text: &str) -> String {
    let mut tidy = String::with_capacity(text.len());
    let mut blank_lines = 0;
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() {
            blank_lines += 1;
            if blank_lines > 1 || tidy.is_empty() {
                continue;
            }
        } else {
            blank_lines = 0;
        }
        tidy.push_str(line);
        tidy.push('\n');
    }
    tidy.truncate(tidy.trim_end().len());
    tidy
}

/// The text of the first `<title>` element, entities decoded and whitespace collapsed.
fn title(bytes: &[u8]) -> Option<String> {
    let html = String::from_utf8_lossy(bytes);
    // ASCII lower-casing keeps byte offsets, so positions found in it index `html`.
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let text = decode_entities(&html[start..end]);
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() {
        return None;
    }
    Some(collapsed.chars().take(MAX_TITLE_CHARS).collect())
}

/// The character references a title commonly holds: the five XML ones, `&nbsp;` and
/// numeric references. Others are left as written.
fn decode_entities(text: &str) -> String {
    let mut decoded = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        decoded.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let Some(semicolon) = rest[..rest.len().min(12)].find(';') else {
            decoded.push('&');
            rest = &rest[1..];
            continue;
        };
        let name = &rest[1..semicolon];
        let character = match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            _ => name.strip_prefix('#').and_then(|number| {
                let code = match number.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => number.parse().ok(),
                };
                code.and_then(char::from_u32)
            }),
        };
        match character {
            Some(character) => {
                decoded.push(character);
                rest = &rest[semicolon + 1..];
            }
            None => {
                decoded.push('&');
                rest = &rest[1..];
            }
        }
    }
    decoded.push_str(rest);
    decoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_choose_the_form() {
        assert_eq!(kind_of("application/json; charset=utf-8", b"{}"), Kind::Json);
        assert_eq!(kind_of("application/problem+json", b"{}"), Kind::Json);
        assert_eq!(kind_of("TEXT/HTML;charset=UTF-8", b""), Kind::Html);
        assert_eq!(kind_of("text/csv", b"a,b"), Kind::Text);
        assert_eq!(kind_of("image/svg+xml", b"<svg/>"), Kind::Text);
        assert_eq!(kind_of("image/png", b"\x89PNG"), Kind::Binary);
        assert_eq!(kind_of("", b"plain words"), Kind::Text);
        assert_eq!(kind_of("", b"\x00\x01\x02"), Kind::Binary);
        assert_eq!(kind_of("", b"caf\xc3"), Kind::Text, "a cut character at the end is still text");
    }

    #[test]
    fn titles_are_decoded_and_collapsed() {
        let page = b"<html><head><TITLE>\n  Fish &amp; Chips &#8212; &#x41;\n</TITLE></head></html>";
        assert_eq!(title(page).as_deref(), Some("Fish & Chips \u{2014} A"));
        assert_eq!(title(b"<title></title>"), None);
        assert_eq!(title(b"<p>no title</p>"), None);
        assert_eq!(decode_entities("a & b &unknown; &#xZZ; &amp"), "a & b &unknown; &#xZZ; &amp");
    }

    #[test]
    fn html_becomes_text_with_its_links() {
        let page = b"<html><head><title>T</title><style>p{color:red}</style><script>var x=1;</script></head>\
            <body><h1>Heading</h1><p>First <b>bold</b> paragraph with a <a href=\"https://example.com/x\">link</a>.</p>\
            <ul><li>one</li><li>two</li></ul></body></html>";
        let decoded = html(page);
        assert_eq!(decoded.format, BodyFormat::HtmlText);
        let text = decoded.body.as_str().unwrap();
        assert!(text.contains("Heading"), "{text}");
        assert!(text.contains("First **bold** paragraph with a [link][1]."), "{text}");
        assert!(text.contains("https://example.com/x"), "{text}");
        assert!(text.contains("one") && text.contains("two"), "{text}");
        assert!(!text.contains("color:red") && !text.contains("var x"), "{text}");
        assert!(!text.contains("\n\n\n"), "{text}");
    }
}
