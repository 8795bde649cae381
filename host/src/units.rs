//! What every configuration file shares: problems located by line, and the units of sizes and durations.
//!
//! What every configuration file shares: problems located by line, and the units of
//! sizes and durations.

use std::ops::Range;
use std::time::Duration;

use serde::Deserialize;

/// Something wrong in a configuration file, at a byte span of its text when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub span: Option<Range<usize>>,
    pub message: String,
}

impl Problem {
    pub fn at(span: Range<usize>, message: impl Into<String>) -> Problem {
        Problem { span: Some(span), message: message.into() }
    }

    /// A TOML syntax or type error, located where the parser says.
    pub fn from_toml(error: &toml::de::Error) -> Problem {
        Problem { span: error.span(), message: error.message().to_owned() }
    }

    /// The 1-based line of the problem in `text` (line 1 when it has no span).
    pub fn line(&self, text: &str) -> usize {
        let offset = self.span.as_ref().map_or(0, |span| span.start.min(text.len()));
        text[..offset].bytes().filter(|b| *b == b'\n').count() + 1
    }
}

/// A size as written in a file: a number of bytes, or text such as `"64 MiB"`.
pub(crate) enum Size {
    Bytes(u64),
    Text(String),
}

impl Size {
    pub fn bytes(self) -> Result<u64, String> {
        match self {
            Size::Bytes(bytes) => Ok(bytes),
            Size::Text(text) => parse_size(&text),
        }
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Size, D::Error> {
        struct SizeVisitor;
        impl serde::de::Visitor<'_> for SizeVisitor {
            type Value = Size;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a size: a number of bytes, or text such as \"64 MiB\"")
            }
            fn visit_u64<E: serde::de::Error>(self, bytes: u64) -> Result<Size, E> {
                Ok(Size::Bytes(bytes))
            }
            fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Size, E> {
                u64::try_from(value)
                    .map(Size::Bytes)
                    .map_err(|_| E::custom(format!("a size cannot be negative ({value})")))
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Size, E> {
                Ok(Size::Text(text.to_owned()))
            }
        }
        deserializer.deserialize_any(SizeVisitor)
    }
}

/// A size for people: the largest binary unit that divides it, else bytes.
pub fn format_size(bytes: u64) -> String {
    for (unit, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    format!("{bytes} bytes")
}

/// `"64 MiB"`, `"512KiB"`, `"1 MB"`, `"1024"` (bytes).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| format!("`{text}` is not a size such as \"64 MiB\""))?;
    let multiplier: u64 = match unit.trim() {
        "" | "B" => 1,
        "KB" => 1_000,
        "KiB" => 1 << 10,
        "MB" => 1_000_000,
        "MiB" => 1 << 20,
        "GB" => 1_000_000_000,
        "GiB" => 1 << 30,
        other => return Err(format!("unknown size unit `{other}` (use B, KB, KiB, MB, MiB, GB or GiB)")),
    };
    number.checked_mul(multiplier).ok_or_else(|| format!("`{text}` is too large"))
}

/// `"5s"`, `"250ms"`, `"2m"`, `"1.5s"`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| format!("`{text}` is not a duration such as \"5s\""))?;
    let seconds = match unit.trim() {
        "ms" => number / 1000.0,
        "s" => number,
        "m" | "min" => number * 60.0,
        "" => return Err(format!("`{text}` has no unit (use ms, s or m)")),
        other => return Err(format!("unknown duration unit `{other}` (use ms, s or m)")),
    };
    if seconds <= 0.0 || !seconds.is_finite() {
        return Err(format!("`{text}` must be greater than 0"));
    }
    match Duration::try_from_secs_f64(seconds) {
        // Positive, yet zero once in nanoseconds: a zero limit would refuse every call.
        Ok(duration) if duration.is_zero() => Err(format!("`{text}` is shorter than a nanosecond")),
        Ok(duration) => Ok(duration),
        Err(_) => Err(format!("`{text}` is too long")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse_size("64 MiB"), Ok(64 << 20));
        assert_eq!(parse_size("10KB"), Ok(10_000));
        assert_eq!(parse_size("12"), Ok(12));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999 GiB").unwrap_err().contains("too large"));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("99999999999999999999999s").unwrap_err().contains("too long"), "refused, not a panic");
    }

    #[test]
    fn sizes_print_in_the_largest_exact_unit() {
        assert_eq!(format_size(2 << 30), "2 GiB");
        assert_eq!(format_size(1536 << 10), "1536 KiB");
        assert_eq!(format_size(1000), "1000 bytes");
        assert_eq!(format_size(0), "0 bytes");
    }

    #[test]
    fn problems_know_their_line() {
        let text = "a = 1\nb = 2\nc = 3\n";
        assert_eq!(Problem::at(12..13, "x").line(text), 3);
        assert_eq!(Problem { span: None, message: "x".into() }.line(text), 1);
        assert_eq!(Problem::at(1000..1001, "past the end").line(text), 4);
    }
}
