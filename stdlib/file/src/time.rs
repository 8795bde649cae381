//! File times as RFC 3339 UTC text (`2026-11-23T10:15:30Z`), which every model reads.

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` in UTC to the second; `None` before 1970 or when the host reports none.
pub fn rfc3339(time: std::io::Result<SystemTime>) -> Option<String> {
    let seconds = time.ok()?.duration_since(UNIX_EPOCH).ok()?.as_secs();
    let days = seconds / 86_400;
    let of_day = seconds % 86_400;
    let (year, month, day) = civil_from_days(days);
    Some(format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", of_day / 3600, of_day % 3600 / 60, of_day % 60))
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_instants_format() {
        let at = |seconds| rfc3339(Ok(UNIX_EPOCH + Duration::from_secs(seconds)));
        assert_eq!(at(0).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(at(951_782_400).as_deref(), Some("2000-02-29T00:00:00Z"));
        assert_eq!(at(1_795_432_530).as_deref(), Some("2026-11-23T11:15:30Z"));
        assert_eq!(at(4_107_542_399).as_deref(), Some("2100-02-28T23:59:59Z"));
    }
}
