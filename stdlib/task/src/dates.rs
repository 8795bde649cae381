//! Calendar dates as models write them (`YYYY-MM-DD`), without a date crate: the few
//! rules needed do not justify growing the component.

use std::time::{SystemTime, UNIX_EPOCH};

/// The shape of a date, for the input schemas; [`check_date`] checks the calendar.
pub const DATE_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$";

/// Checks that `text` is a real calendar date `YYYY-MM-DD` (years 0001 to 9999). Dates
/// of that fixed shape compare correctly as text, which is how the tools sort and filter.
pub fn check_date(text: &str) -> Result<(), String> {
    let bad = |why: &str| format!("`{text}` is not a date: {why}");
    let shape = text.len() == 10
        && text.bytes().enumerate().all(|(i, c)| if i == 4 || i == 7 { c == b'-' } else { c.is_ascii_digit() });
    if !shape {
        return Err(bad("write it as YYYY-MM-DD, such as 2025-03-31"));
    }
    // The shape check makes these slices ASCII digits.
    let number = |from: usize, to: usize| text[from..to].parse::<u32>().unwrap_or(0);
    let (year, month, day) = (number(0, 4), number(5, 7), number(8, 10));
    if year == 0 {
        return Err(bad("there is no year 0000"));
    }
    if !(1..=12).contains(&month) {
        return Err(bad("the month is 01 to 12"));
    }
    let last = days_in_month(year, month);
    if day == 0 || day > last {
        return Err(bad(&format!("month {month:02} of {year} has days 01 to {last}")));
    }
    Ok(())
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Now, as an RFC 3339 UTC timestamp (`2025-03-31T14:05:09Z`), from the host's wall
/// clock (`wasi:clocks`).
pub fn now() -> String {
    // A clock before 1970 is the host's mistake; the epoch is as good an answer as any.
    let seconds = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
    stdlib_shared::timestamp::rfc3339(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(check_date("2024-02-29"), Ok(()));
        assert_eq!(check_date("2000-02-29"), Ok(()));
        for bad in [
            "2023-02-29",
            "1900-02-29",
            "2025-04-31",
            "2025-13-01",
            "0000-01-01",
            "2025-1-01",
            "2025/01/01",
            "२०२५-01-01",
        ] {
            assert!(check_date(bad).is_err(), "{bad}");
        }
    }
}
