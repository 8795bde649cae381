//! `text`: small, exact text utilities an agent would otherwise guess at.

use regex::RegexBuilder;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_guest::{ToolError, toolbox};

/// Upper bound on matches returned by `regex_find`, so that one call cannot produce an
/// answer larger than the agent can read.
const MAX_MATCHES_LIMIT: usize = 1000;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Text {
    text: String,
}

#[derive(Serialize, JsonSchema)]
struct Counts {
    /// Runs of non-whitespace characters.
    words: usize,
    /// Unicode scalar values.
    characters: usize,
    /// Lines, counting a last line without a newline.
    lines: usize,
    bytes: usize,
}

#[derive(Serialize, JsonSchema)]
struct Slug {
    slug: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RegexQuery {
    /// A regular expression in Rust `regex` syntax (no look-around, no backreferences:
    /// matching always runs in linear time).
    #[schemars(length(min = 1, max = 2048))]
    pattern: String,
    text: String,
    #[serde(default)]
    case_insensitive: bool,
    /// At most this many matches are returned (default 100).
    #[serde(default = "default_max_matches")]
    #[schemars(range(min = 1, max = 1000))]
    max_matches: usize,
}

fn default_max_matches() -> usize {
    100
}

#[derive(Serialize, JsonSchema)]
struct Match {
    /// The matched text.
    text: String,
    /// Byte offset of the match in the input.
    start: usize,
    end: usize,
    /// Capture groups in order; `null` for a group that did not take part.
    groups: Vec<Option<String>>,
}

#[derive(Serialize, JsonSchema)]
struct Matches {
    matches: Vec<Match>,
    /// True when more matches exist than `max_matches`.
    truncated: bool,
}

toolbox! {
    /// Counts the words, characters, lines and bytes of a text.
    fn word_count(input: Text) -> Result<Counts, ToolError> {
        let text = input.text;
        Ok(Counts {
            words: text.split_whitespace().count(),
            characters: text.chars().count(),
            lines: text.lines().count(),
            bytes: text.len(),
        })
    }

    /// Turns a title into a URL slug: lowercase ASCII letters and digits joined by single
    /// hyphens; accents are folded (`Crème brûlée` becomes `creme-brulee`).
    fn slugify(input: Text) -> Result<Slug, ToolError> {
        let mut slug = String::with_capacity(input.text.len());
        for c in input.text.chars().flat_map(fold_accent) {
            if c.is_ascii_alphanumeric() {
                slug.push(c.to_ascii_lowercase());
            } else if !slug.is_empty() && !slug.ends_with('-') {
                slug.push('-');
            }
        }
        while slug.ends_with('-') {
            slug.pop();
        }
        Ok(Slug { slug })
    }

    /// Finds the matches of a regular expression in a text, with their byte offsets and
    /// capture groups.
    fn regex_find(input: RegexQuery) -> Result<Matches, ToolError> {
        let regex = RegexBuilder::new(&input.pattern)
            .case_insensitive(input.case_insensitive)
            .size_limit(1 << 20)
            .build()
            .map_err(ToolError::invalid_input)?;
        let limit = input.max_matches.min(MAX_MATCHES_LIMIT);
        let mut captures = regex.captures_iter(&input.text);
        let matches: Vec<Match> = captures
            .by_ref()
            .take(limit)
            .map(|caps| {
                let whole = caps.get(0).expect("group 0 always matches");
                Match {
                    text: whole.as_str().to_owned(),
                    start: whole.start(),
                    end: whole.end(),
                    groups: caps.iter().skip(1).map(|g| g.map(|g| g.as_str().to_owned())).collect(),
                }
            })
            .collect();
        let truncated = captures.next().is_some();
        Ok(Matches { matches, truncated })
    }
}

/// Folds the Latin-1 and Latin Extended-A letters that have an obvious ASCII base.
fn fold_accent(c: char) -> impl Iterator<Item = char> {
    let folded: &str = match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => "a",
        'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å' | 'Ā' | 'Ă' | 'Ą' => "A",
        'æ' => "ae",
        'Æ' => "AE",
        'ç' | 'ć' | 'č' => "c",
        'Ç' | 'Ć' | 'Č' => "C",
        'ď' | 'đ' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ė' | 'ę' | 'ě' => "e",
        'È' | 'É' | 'Ê' | 'Ë' | 'Ē' | 'Ė' | 'Ę' | 'Ě' => "E",
        'ì' | 'í' | 'î' | 'ï' | 'ī' | 'į' => "i",
        'Ì' | 'Í' | 'Î' | 'Ï' | 'Ī' | 'Į' => "I",
        'ł' => "l",
        'Ł' => "L",
        'ñ' | 'ń' | 'ň' => "n",
        'Ñ' | 'Ń' | 'Ň' => "N",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' => "o",
        'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' | 'Ø' | 'Ō' | 'Ő' => "O",
        'œ' => "oe",
        'Œ' => "OE",
        'ř' => "r",
        'ś' | 'š' | 'ş' => "s",
        'Ś' | 'Š' | 'Ş' => "S",
        'ß' => "ss",
        'ť' | 'ţ' => "t",
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' => "u",
        'Ù' | 'Ú' | 'Û' | 'Ü' | 'Ū' | 'Ů' | 'Ű' => "U",
        'ý' | 'ÿ' => "y",
        'Ý' | 'Ÿ' => "Y",
        'ź' | 'ż' | 'ž' => "z",
        'Ź' | 'Ż' | 'Ž' => "Z",
        _ => "",
    };
    let keep = folded.is_empty().then_some(c);
    folded.chars().chain(keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(text: &str) -> Text {
        Text { text: text.to_owned() }
    }

    #[test]
    fn slugs_fold_accents_and_collapse_separators() {
        assert_eq!(slugify(text("  Crème Brûlée: a HOW-TO!  ")).unwrap().slug, "creme-brulee-a-how-to");
        assert_eq!(slugify(text("a -- b")).unwrap().slug, "a-b");
    }

    #[test]
    fn counts_are_of_words_characters_lines_and_bytes() {
        let counts = word_count(text("one two\nthrée")).unwrap();
        assert_eq!((counts.words, counts.characters, counts.lines, counts.bytes), (3, 13, 2, 14));
    }

    #[test]
    fn regex_matches_stop_at_the_limit_and_say_so() {
        let query = RegexQuery { pattern: r"\d".into(), text: "1 2 3".into(), case_insensitive: false, max_matches: 2 };
        let found = regex_find(query).unwrap();
        assert_eq!(found.matches.len(), 2);
        assert!(found.truncated);
        let broken = RegexQuery { pattern: "(".into(), text: String::new(), case_insensitive: false, max_matches: 1 };
        assert!(matches!(regex_find(broken), Err(ToolError::InvalidInput(_))));
    }
}
