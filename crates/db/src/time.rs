//! UTC dates for history filters and listings, without a calendar dependency: `2026-11-22`,
//! `2026-11-22T14:30[:05]` (or with a space), and relative `7d`, `12h`, `30m` (before now).

use crate::error::DbError;

const MS_PER_S: u64 = 1_000;
const S_PER_MIN: u64 = 60;
const S_PER_HOUR: u64 = 60 * S_PER_MIN;
const S_PER_DAY: u64 = 24 * S_PER_HOUR;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// (year, month, day) of a day count since 1970-01-01 (inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD HH:MM` in UTC.
pub fn format_utc(unix_ms: u64) -> String {
    let seconds = unix_ms / MS_PER_S;
    let (year, month, day) = civil_from_days((seconds / S_PER_DAY) as i64);
    let second_of_day = seconds % S_PER_DAY;
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        second_of_day / S_PER_HOUR,
        second_of_day % S_PER_HOUR / S_PER_MIN
    )
}

/// Which end of a time range a filter bounds: a bare date as an upper bound means "through the
/// end of that day", which is what `--until 2026-11-22` reads as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Since,
    Until,
}

/// Parses a history filter time into milliseconds since the Unix epoch (UTC).
pub fn parse_time(text: &str, bound: Bound, now_unix_ms: u64) -> Result<u64, DbError> {
    let bad = |detail: &str| DbError::BadTime {
        text: text.to_owned(),
        detail: detail.to_owned(),
    };
    let trimmed = text.trim();
    if let Some(ago_s) = parse_relative_s(trimmed) {
        return Ok(now_unix_ms.saturating_sub(ago_s.saturating_mul(MS_PER_S)));
    }
    let (date, clock) = match trimmed.split_once(['T', ' ']) {
        Some((date, clock)) => (date, Some(clock)),
        None => (trimmed, None),
    };
    let mut fields = date.split('-');
    let (Some(year), Some(month), Some(day), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(bad(
            "expected YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (UTC), or Nd/Nh/Nm ago",
        ));
    };
    let number = |field: &str, what: &str, range: std::ops::RangeInclusive<u32>| {
        field
            .parse::<u32>()
            .ok()
            .filter(|value| range.contains(value))
            .ok_or_else(|| bad(&format!("{what} '{field}' is out of range")))
    };
    let year = number(year, "year", 1970..=9999)?;
    let month = number(month, "month", 1..=12)?;
    let day = number(day, "day", 1..=31)?;
    let days = days_from_civil(i64::from(year), month, day);
    if civil_from_days(days) != (i64::from(year), month, day) {
        return Err(bad("no such day"));
    }
    let day_start_s = days as u64 * S_PER_DAY;
    let seconds = match clock {
        None if bound == Bound::Until => day_start_s + S_PER_DAY,
        None => day_start_s,
        Some(clock) => {
            let mut parts = clock.split(':');
            let hour = number(parts.next().unwrap_or(""), "hour", 0..=23)?;
            let minute = number(parts.next().unwrap_or(""), "minute", 0..=59)?;
            let second = match parts.next() {
                Some(second) => number(second, "second", 0..=59)?,
                None => 0,
            };
            if parts.next().is_some() {
                return Err(bad("expected HH:MM or HH:MM:SS after the date"));
            }
            day_start_s
                + u64::from(hour) * S_PER_HOUR
                + u64::from(minute) * S_PER_MIN
                + u64::from(second)
        }
    };
    Ok(seconds * MS_PER_S)
}

/// `7d`, `12h`, `30m` as seconds.
fn parse_relative_s(text: &str) -> Option<u64> {
    let unit_s = match text.chars().last()? {
        'd' => S_PER_DAY,
        'h' => S_PER_HOUR,
        'm' => S_PER_MIN,
        _ => return None,
    };
    let count: u64 = text[..text.len() - 1].parse().ok()?;
    Some(count.saturating_mul(unit_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip_over_four_centuries() {
        for days in (-1_000..146_097 + 1_000).step_by(7) {
            let (year, month, day) = civil_from_days(days);
            assert_eq!(days_from_civil(year, month, day), days);
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_utc(0), "1970-01-01 00:00");
        // 2024-02-29 12:34:56 UTC, a leap day.
        assert_eq!(format_utc(1_709_210_096_000), "2024-02-29 12:34");
    }

    #[test]
    fn parses_dates_times_and_relative() {
        let now = 1_709_210_096_000;
        let day = parse_time("2024-02-29", Bound::Since, now).unwrap();
        assert_eq!(format_utc(day), "2024-02-29 00:00");
        let until = parse_time("2024-02-29", Bound::Until, now).unwrap();
        assert_eq!(until - day, S_PER_DAY * MS_PER_S);
        let clock = parse_time("2024-02-29T12:34:56", Bound::Until, now).unwrap();
        assert_eq!(clock, now);
        assert_eq!(
            parse_time("2024-02-29 12:34", Bound::Since, now).unwrap(),
            now - 56_000
        );
        assert_eq!(
            parse_time("2d", Bound::Since, now).unwrap(),
            now - 2 * S_PER_DAY * MS_PER_S
        );
    }

    #[test]
    fn rejects_impossible_dates_with_the_reason() {
        for (text, reason) in [
            ("2023-02-29", "no such day"),
            ("2024-13-01", "month"),
            ("yesterday", "expected YYYY-MM-DD"),
            ("2024-01-01T25:00", "hour"),
        ] {
            let error = parse_time(text, Bound::Since, 0).unwrap_err().to_string();
            assert!(error.contains(reason), "{text}: {error}");
        }
    }
}
