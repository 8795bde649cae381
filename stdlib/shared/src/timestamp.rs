//! UTC timestamps as RFC 3339 text (`2026-11-23T10:15:30Z`), which every model reads,
//! without a date crate: the few rules needed do not justify growing the components.

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` to the second; `None` before 1970.
pub fn of(time: SystemTime) -> Option<String> {
    time.duration_since(UNIX_EPOCH).ok().map(|since| rfc3339(since.as_secs()))
}

/// The instant `seconds` after 1970-01-01T00:00:00Z.
pub fn rfc3339(seconds: u64) -> String {
    let (days, second_of_day) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days);
    let (hour, minute, second) = (second_of_day / 3600, second_of_day / 60 % 60, second_of_day % 60);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Counted from 0000-03-01, so that the leap day ends each 400-year era's years.
    let days = days + 719_468;
    let era = days / 146_097;
    let day_of_era = days % 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants_format() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_743_429_909), "2025-03-31T14:05:09Z");
        assert_eq!(rfc3339(1_795_432_530), "2026-11-23T11:15:30Z");
        assert_eq!(rfc3339(4_107_542_399), "2100-02-28T23:59:59Z");
        assert_eq!(of(UNIX_EPOCH - std::time::Duration::from_secs(1)), None);
    }
}
