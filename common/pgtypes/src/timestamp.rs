//! Field access on dates, timestamps and intervals: `date_trunc` and
//! `extract` / `date_part` (PostgreSQL's `timestamp.c` / `date.c`).
//!
//! Values are in hotpair's representations (µs since 2000-01-01, days since
//! 2000-01-01, [`Interval`]); timestamptz is read in UTC, the session time
//! zone hotpair runs with, so it truncates and extracts like a timestamp.
//!
//! `extract` returns numeric with PostgreSQL 15's scales (`second` and
//! `epoch` of a timestamp carry 6 decimals, `milliseconds` 3, the rest
//! none); `date_part` is the same value as float8 (the binder picks).
//! Unknown field names are 22023 `unit "x" not recognized for type …`;
//! fields a type does not have are 0A000 `unit "x" not supported for type …`.

use crate::datetime::{self, USECS_PER_DAY, USECS_PER_SEC};
use crate::error::{sqlstate, PgError, PgResult};
use crate::interval::{Interval, DAYS_PER_MONTH};
use crate::numeric::Numeric;

/// The kind of value a field function reads (names the type in errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeKind {
    /// timestamp without time zone
    Timestamp,
    /// timestamp with time zone
    TimestampTz,
    /// date
    Date,
    /// interval
    Interval,
}

impl TimeKind {
    fn type_name(self) -> &'static str {
        match self {
            TimeKind::Timestamp => "timestamp without time zone",
            TimeKind::TimestampTz => "timestamp with time zone",
            TimeKind::Date => "date",
            TimeKind::Interval => "interval",
        }
    }
}

/// A field name as PostgreSQL spells its aliases, normalised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Microseconds,
    Milliseconds,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    Dow,
    IsoDow,
    Doy,
    Epoch,
    Julian,
    IsoYear,
    Timezone,
    TimezoneHour,
    TimezoneMinute,
}

fn parse_field(name: &str) -> Option<Field> {
    Some(match name.trim().to_ascii_lowercase().as_str() {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "useconds" => {
            Field::Microseconds
        }
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "mseconds" => {
            Field::Milliseconds
        }
        "second" | "seconds" | "s" | "sec" | "secs" => Field::Second,
        "minute" | "minutes" | "m" | "min" | "mins" => Field::Minute,
        "hour" | "hours" | "h" | "hr" | "hrs" => Field::Hour,
        "day" | "days" | "d" => Field::Day,
        "week" | "weeks" | "w" => Field::Week,
        "month" | "months" | "mon" | "mons" => Field::Month,
        "quarter" | "qtr" => Field::Quarter,
        "year" | "years" | "y" | "yr" | "yrs" => Field::Year,
        "decade" | "decades" | "dec" | "decs" => Field::Decade,
        "century" | "centuries" | "c" | "cent" => Field::Century,
        "millennium" | "millennia" | "mil" | "mils" => Field::Millennium,
        "dow" => Field::Dow,
        "isodow" => Field::IsoDow,
        "doy" => Field::Doy,
        "epoch" => Field::Epoch,
        "julian" | "j" => Field::Julian,
        "isoyear" => Field::IsoYear,
        "timezone" => Field::Timezone,
        "timezone_h" => Field::TimezoneHour,
        "timezone_m" => Field::TimezoneMinute,
        _ => return None,
    })
}

fn not_recognized(name: &str, kind: TimeKind) -> PgError {
    PgError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!(
            "unit \"{}\" not recognized for type {}",
            name.trim().to_ascii_lowercase(),
            kind.type_name()
        ),
    )
}

fn not_supported(name: &str, kind: TimeKind) -> PgError {
    PgError::new(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!(
            "unit \"{}\" not supported for type {}",
            name.trim().to_ascii_lowercase(),
            kind.type_name()
        ),
    )
}

/// The civil fields of a finite timestamp.
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    /// Microseconds since midnight.
    tod: i64,
    /// Days since 2000-01-01.
    days: i64,
}

fn civil(t: i64) -> Civil {
    let days = t.div_euclid(USECS_PER_DAY);
    let tod = t.rem_euclid(USECS_PER_DAY);
    let (year, month, day) =
        datetime::civil_from_days(days + datetime::days_from_civil(2000, 1, 1));
    Civil {
        year,
        month,
        day,
        tod,
        days,
    }
}

/// Day of the week, Sunday = 0.
fn dow(days_since_2000: i64) -> i64 {
    // 2000-01-01 was a Saturday.
    (days_since_2000 + 6).rem_euclid(7)
}

/// ISO 8601 (year, week) of a day.
fn iso_week(days: i64) -> (i64, i64) {
    // The Thursday of this ISO week decides the year.
    let iso_dow = (dow(days) + 6) % 7; // Monday = 0
    let thursday = days - iso_dow + 3;
    let (y, _, _) = datetime::civil_from_days(thursday + datetime::days_from_civil(2000, 1, 1));
    let jan1 = datetime::date_from_parts(y, 1, 1);
    (y, (thursday - jan1) / 7 + 1)
}

/// The ISO week-numbering (year, week) of a date in days since 2000-01-01.
pub fn iso_year_week(days: i64) -> (i64, i64) {
    iso_week(days)
}

fn int(v: i64) -> Numeric {
    Numeric::from_i64(v)
}

fn scaled(mantissa: i128, scale: u16) -> PgResult<Numeric> {
    Numeric::new(mantissa, scale)
}

/// `date_trunc(unit, timestamp)`; also used for timestamptz (UTC).
pub fn trunc_timestamp(unit: &str, t: i64, kind: TimeKind) -> PgResult<i64> {
    let f = parse_field(unit).ok_or_else(|| not_recognized(unit, kind))?;
    if t == datetime::TS_INFINITY || t == datetime::TS_NEG_INFINITY {
        return Ok(t);
    }
    let c = civil(t);
    let day_start = |y: i64, m: u32, d: u32| datetime::date_from_parts(y, m, d) * USECS_PER_DAY;
    // Year-based truncations count years astronomically as PostgreSQL does
    // for AD dates (decade 2020, century 2001, millennium 2001).
    Ok(match f {
        Field::Microseconds => t,
        Field::Milliseconds => t - t.rem_euclid(1000),
        Field::Second => t - t.rem_euclid(USECS_PER_SEC),
        Field::Minute => t - t.rem_euclid(60 * USECS_PER_SEC),
        Field::Hour => t - t.rem_euclid(3600 * USECS_PER_SEC),
        Field::Day => c.days * USECS_PER_DAY,
        Field::Week => (c.days - (dow(c.days) + 6) % 7) * USECS_PER_DAY,
        Field::Month => day_start(c.year, c.month, 1),
        Field::Quarter => day_start(c.year, (c.month - 1) / 3 * 3 + 1, 1),
        Field::Year => day_start(c.year, 1, 1),
        Field::Decade => day_start(c.year.div_euclid(10) * 10, 1, 1),
        Field::Century => {
            let y = if c.year > 0 {
                (c.year - 1).div_euclid(100) * 100 + 1
            } else {
                -((-c.year + 99) / 100 * 100) + 1
            };
            day_start(y, 1, 1)
        }
        Field::Millennium => {
            let y = if c.year > 0 {
                (c.year - 1).div_euclid(1000) * 1000 + 1
            } else {
                -((-c.year + 999) / 1000 * 1000) + 1
            };
            day_start(y, 1, 1)
        }
        _ => return Err(not_supported(unit, kind)),
    })
}

/// `date_trunc(unit, interval)`.
pub fn trunc_interval(unit: &str, iv: Interval) -> PgResult<Interval> {
    let kind = TimeKind::Interval;
    let f = parse_field(unit).ok_or_else(|| not_recognized(unit, kind))?;
    let years = iv.months / 12;
    let t = iv.micros;
    let keep_time = |m: i64| Interval::new(iv.months, iv.days, t - t % m);
    Ok(match f {
        Field::Microseconds => iv,
        Field::Milliseconds => keep_time(1000),
        Field::Second => keep_time(USECS_PER_SEC),
        Field::Minute => keep_time(60 * USECS_PER_SEC),
        Field::Hour => keep_time(3600 * USECS_PER_SEC),
        Field::Day => Interval::new(iv.months, iv.days, 0),
        Field::Month => Interval::new(iv.months, 0, 0),
        Field::Quarter => Interval::new(years * 12 + (iv.months % 12) / 3 * 3, 0, 0),
        Field::Year => Interval::new(years * 12, 0, 0),
        Field::Decade => Interval::new(years / 10 * 120, 0, 0),
        Field::Century => Interval::new(years / 100 * 1200, 0, 0),
        Field::Millennium => Interval::new(years / 1000 * 12000, 0, 0),
        _ => return Err(not_supported(unit, kind)),
    })
}

/// `extract(field FROM timestamp/timestamptz)` as numeric.
pub fn extract_timestamp(unit: &str, t: i64, kind: TimeKind) -> PgResult<Option<Numeric>> {
    let f = parse_field(unit).ok_or_else(|| not_recognized(unit, kind))?;
    if t == datetime::TS_INFINITY || t == datetime::TS_NEG_INFINITY {
        // Infinite inputs: NULL for fields, ±Infinity for monotonic ones is not
        // representable in our numeric; both are reported as NULL.
        return Ok(None);
    }
    let c = civil(t);
    let sec_us = c.tod % (60 * USECS_PER_SEC);
    Ok(Some(match f {
        Field::Microseconds => int(sec_us),
        Field::Milliseconds => scaled(sec_us as i128, 3)?,
        Field::Second => scaled(sec_us as i128, 6)?,
        Field::Minute => int(c.tod / (60 * USECS_PER_SEC) % 60),
        Field::Hour => int(c.tod / (3600 * USECS_PER_SEC)),
        Field::Day => int(c.day as i64),
        Field::Month => int(c.month as i64),
        Field::Quarter => int((c.month as i64 - 1) / 3 + 1),
        Field::Year => int(if c.year <= 0 { c.year - 1 } else { c.year }),
        Field::Decade => int(c.year.div_euclid(10)),
        Field::Century => int(if c.year > 0 {
            (c.year + 99) / 100
        } else {
            -((99 - (c.year - 1)) / 100)
        }),
        Field::Millennium => int(if c.year > 0 {
            (c.year + 999) / 1000
        } else {
            -((999 - (c.year - 1)) / 1000)
        }),
        Field::Week => int(iso_week(c.days).1),
        Field::IsoYear => {
            let y = iso_week(c.days).0;
            int(if y <= 0 { y - 1 } else { y })
        }
        Field::Dow => int(dow(c.days)),
        Field::IsoDow => int((dow(c.days) + 6) % 7 + 1),
        Field::Doy => int(c.days - datetime::date_from_parts(c.year, 1, 1) + 1),
        Field::Epoch => scaled(
            t as i128 + datetime::UNIX_TO_PG_EPOCH_SECS as i128 * USECS_PER_SEC as i128,
            6,
        )?,
        Field::Julian => {
            // Julian day plus the fraction of the day, at PostgreSQL's scale.
            let jd = c.days as i128 + 2_451_545;
            let frac = c.tod as i128 * 100_000_000_000_000_000_000 / USECS_PER_DAY as i128;
            scaled(jd * 100_000_000_000_000_000_000 + frac, 20)?
        }
        Field::Timezone | Field::TimezoneHour | Field::TimezoneMinute
            if kind == TimeKind::TimestampTz =>
        {
            int(0)
        }
        _ => return Err(not_supported(unit, kind)),
    }))
}

/// `extract(field FROM date)`: integer fields; time-of-day fields are 0A000.
pub fn extract_date(unit: &str, d: i32) -> PgResult<Option<Numeric>> {
    let kind = TimeKind::Date;
    let f = parse_field(unit).ok_or_else(|| not_recognized(unit, kind))?;
    if matches!(
        f,
        Field::Microseconds
            | Field::Milliseconds
            | Field::Second
            | Field::Minute
            | Field::Hour
            | Field::Timezone
            | Field::TimezoneHour
            | Field::TimezoneMinute
    ) {
        return Err(not_supported(unit, kind));
    }
    if d == datetime::DATE_INFINITY || d == datetime::DATE_NEG_INFINITY {
        return Ok(None);
    }
    let days = d as i64;
    if f == Field::Epoch {
        return Ok(Some(int((days + 10_957) * (USECS_PER_DAY / USECS_PER_SEC))));
    }
    if f == Field::Julian {
        return Ok(Some(int(days + 2_451_545)));
    }
    let n = extract_timestamp(unit, days * USECS_PER_DAY, TimeKind::Timestamp)?;
    // Date fields are whole numbers; drop any scale the timestamp path used.
    Ok(n.map(|n| n.rescale(0).unwrap_or(n)))
}

/// `extract(field FROM interval)`.
pub fn extract_interval(unit: &str, iv: Interval) -> PgResult<Numeric> {
    let kind = TimeKind::Interval;
    let f = parse_field(unit).ok_or_else(|| not_recognized(unit, kind))?;
    let t = iv.micros;
    let sec_us = t % (60 * USECS_PER_SEC);
    let years = iv.months as i64 / 12;
    Ok(match f {
        Field::Microseconds => int(sec_us),
        Field::Milliseconds => scaled(sec_us as i128, 3)?,
        Field::Second => scaled(sec_us as i128, 6)?,
        Field::Minute => int(t / (60 * USECS_PER_SEC) % 60),
        Field::Hour => int(t / (3600 * USECS_PER_SEC)),
        Field::Day => int(iv.days as i64),
        Field::Month => int(iv.months as i64 % 12),
        Field::Quarter => int((iv.months as i64 % 12) / 3 + 1),
        Field::Year => int(years),
        Field::Decade => int(years / 10),
        Field::Century => int(years / 100),
        Field::Millennium => int(years / 1000),
        Field::Epoch => {
            // A year counts 365.25 days and a month 30, as PostgreSQL does.
            let secs_per_day = (USECS_PER_DAY / USECS_PER_SEC) as i128;
            let year_us = years as i128 * 36_525 * secs_per_day * USECS_PER_SEC as i128 / 100;
            let month_us =
                (iv.months as i128 % 12) * DAYS_PER_MONTH as i128 * USECS_PER_DAY as i128;
            let day_us = iv.days as i128 * USECS_PER_DAY as i128;
            scaled(year_us + month_us + day_us + t as i128, 6)?
        }
        _ => return Err(not_supported(unit, kind)),
    })
}

/// `make_date(year, month, day)`: negative years are BC; 22008 `date field
/// value out of range: y-m-d` for an impossible date.
pub fn make_date(y: i32, m: i32, d: i32) -> PgResult<i32> {
    let bad = || {
        PgError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("date field value out of range: {y}-{m:02}-{d:02}"),
        )
    };
    if y == 0 {
        return Err(bad());
    }
    let year = if y < 0 { y as i64 + 1 } else { y as i64 };
    if !(1..=12).contains(&m) || d < 1 || d as u32 > datetime::month_days(year, m as u32) {
        return Err(bad());
    }
    let days = datetime::date_from_parts(year, m as u32, d as u32);
    if !datetime::date_in_range(days) {
        return Err(PgError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("date out of range: {y}-{m:02}-{d:02}"),
        ));
    }
    Ok(days as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> i64 {
        datetime::parse_timestamp(s, false).unwrap()
    }

    #[test]
    fn extract_matches_postgres() {
        let t = ts("2024-03-05 14:07:09.5");
        let e = |u: &str| {
            extract_timestamp(u, t, TimeKind::Timestamp)
                .unwrap()
                .unwrap()
                .to_string()
        };
        // From PostgreSQL 15: select extract(<u> from timestamp '2024-03-05 14:07:09.5').
        assert_eq!(e("second"), "9.500000");
        assert_eq!(e("epoch"), "1709647629.500000");
        assert_eq!(e("milliseconds"), "9500.000");
        assert_eq!(e("microseconds"), "9500000");
        assert_eq!(e("year"), "2024");
        assert_eq!(e("dow"), "2");
        let d = |s: &str, u: &str| {
            let days = datetime::parse_date(s).unwrap();
            extract_date(u, days).unwrap().unwrap().to_string()
        };
        assert_eq!(d("2024-03-05", "epoch"), "1709596800");
        assert_eq!(d("2024-03-05", "doy"), "65");
        assert_eq!(d("2024-01-01", "week"), "1");
        assert_eq!(d("2021-01-01", "isoyear"), "2020");
        assert_eq!(d("2000-01-01", "century"), "20");
        assert_eq!(d("2024-01-01", "decade"), "202");
        assert_eq!(d("2001-01-01", "millennium"), "3");
        assert_eq!(d("2024-05-01", "quarter"), "2");
        assert_eq!(
            extract_date("hour", 0).unwrap_err().message,
            "unit \"hour\" not supported for type date"
        );
        let iv = |s: &str, u: &str| {
            extract_interval(u, crate::interval::parse_interval(s).unwrap())
                .unwrap()
                .to_string()
        };
        assert_eq!(iv("1 day 01:00:00.5", "epoch"), "90000.500000");
        assert_eq!(iv("26 hours", "hour"), "26");
        assert_eq!(iv("14 months", "month"), "2");
        assert_eq!(iv("1 min 2.5 sec", "second"), "2.500000");
        assert_eq!(iv("1 month", "epoch"), "2592000.000000");
    }

    #[test]
    fn trunc_matches_postgres() {
        let tr = |u: &str, s: &str| {
            datetime::format_timestamp(
                trunc_timestamp(u, ts(s), TimeKind::Timestamp).unwrap(),
                false,
            )
        };
        assert_eq!(tr("month", "2024-03-05 14:07:09.5"), "2024-03-01 00:00:00");
        assert_eq!(tr("week", "2024-03-05 14:07:09"), "2024-03-04 00:00:00");
        assert_eq!(tr("decade", "2024-03-05"), "2020-01-01 00:00:00");
        assert_eq!(tr("century", "2024-03-05"), "2001-01-01 00:00:00");
        assert_eq!(tr("millennium", "2024-03-05"), "2001-01-01 00:00:00");
        assert_eq!(
            tr("milliseconds", "2024-03-05 01:02:03.456789"),
            "2024-03-05 01:02:03.456"
        );
        assert_eq!(
            trunc_timestamp("foo", 0, TimeKind::Timestamp)
                .unwrap_err()
                .message,
            "unit \"foo\" not recognized for type timestamp without time zone"
        );
        let p = |s: &str| crate::interval::parse_interval(s).unwrap();
        assert_eq!(
            trunc_interval("hour", p("1 day 02:03:04"))
                .unwrap()
                .to_text(),
            "1 day 02:00:00"
        );
        assert_eq!(
            trunc_interval("year", p("14 months 3 days"))
                .unwrap()
                .to_text(),
            "1 year"
        );
        assert_eq!(
            make_date(2023, 2, 29).unwrap_err().message,
            "date field value out of range: 2023-02-29"
        );
        let mut b = bytes::BytesMut::new();
        datetime::write_date(&mut b, make_date(-44, 3, 15).unwrap());
        assert_eq!(&b[..], b"0044-03-15 BC");
    }
}
