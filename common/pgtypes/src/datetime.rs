//! timestamp / timestamptz: microseconds since 2000-01-01 00:00:00 (UTC for
//! timestamptz), PostgreSQL's internal representation, and their text forms;
//! date: days since 2000-01-01 (`i32::MIN` / `i32::MAX` are ∓infinity), with
//! the same input syntax minus the time of day.
//!
//! hotpair runs with `TimeZone = UTC` and `DateStyle = ISO, MDY`, so output is
//! `2024-01-02 03:04:05.123456` (trailing fractional zeros trimmed) and
//! timestamptz appends `+00`. Input accepts ISO dates with an optional time
//! (`T` or space separator), fractional seconds (rounded to µs), a zone
//! (`Z`, `UTC`, `GMT`, `+HH`, `+HH:MM`, `+HHMM`), ` BC`, and the special
//! words `epoch`, `infinity`, `-infinity`, `now`, `today`, `tomorrow`,
//! `yesterday`. For a plain timestamp a given zone is ignored (as
//! PostgreSQL does); for timestamptz it is applied.
//!
//! ±infinity are `i64::MAX` / `i64::MIN` (PostgreSQL's DT_NOEND / DT_NOBEGIN).
//! The valid range is PostgreSQL's: 4714-11-24 BC .. 294276-12-31 AD.
//!
//! Civil-date conversion uses Howard Hinnant's days-from-civil algorithm
//! (proleptic Gregorian, astronomical year numbering: 1 BC = year 0).

use bytes::{BufMut, BytesMut};

use crate::error::{sqlstate, PgError, PgResult};

/// Microseconds per second.
pub const USECS_PER_SEC: i64 = 1_000_000;
/// Microseconds per day.
pub const USECS_PER_DAY: i64 = 86_400 * USECS_PER_SEC;
/// Seconds from 1970-01-01 to 2000-01-01.
pub const UNIX_TO_PG_EPOCH_SECS: i64 = 946_684_800;
/// +infinity.
pub const TS_INFINITY: i64 = i64::MAX;
/// -infinity.
pub const TS_NEG_INFINITY: i64 = i64::MIN;

/// Smallest valid timestamp (4714-11-24 00:00:00 BC).
const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
/// One past the largest valid timestamp (294277-01-01 00:00:00).
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

/// Days since 1970-01-01 for a proleptic Gregorian date (year 0 = 1 BC).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month, day) for days since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        _ => 28,
    }
}

/// Microseconds since 2000-01-01 for a civil date-time (no range check).
pub fn timestamp_from_parts(y: i64, mo: u32, d: u32, h: u32, mi: u32, s: u32, us: u32) -> i64 {
    let days = days_from_civil(y, mo, d) - days_from_civil(2000, 1, 1);
    days * USECS_PER_DAY + (h as i64 * 3600 + mi as i64 * 60 + s as i64) * USECS_PER_SEC + us as i64
}

/// The current time as microseconds since 2000-01-01 UTC.
pub fn now_usecs() -> i64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as i64 - UNIX_TO_PG_EPOCH_SECS) * USECS_PER_SEC + d.subsec_micros() as i64
}

/// Converts a Unix time in microseconds to PostgreSQL's epoch.
pub fn from_unix_usecs(us: i64) -> i64 {
    us - UNIX_TO_PG_EPOCH_SECS * USECS_PER_SEC
}

fn put2(out: &mut BytesMut, v: u32) {
    out.put_u8(b'0' + (v / 10 % 10) as u8);
    out.put_u8(b'0' + (v % 10) as u8);
}

/// Appends the ISO text form; `tz` appends `+00` (session TimeZone is UTC).
pub fn write_timestamp(out: &mut BytesMut, t: i64, tz: bool) {
    if t == TS_INFINITY {
        out.put_slice(b"infinity");
        return;
    }
    if t == TS_NEG_INFINITY {
        out.put_slice(b"-infinity");
        return;
    }
    let days = t.div_euclid(USECS_PER_DAY);
    let tod = t.rem_euclid(USECS_PER_DAY);
    let (y, m, d) = civil_from_days(days + days_from_civil(2000, 1, 1));
    let bc = y <= 0;
    let year = if bc { 1 - y } else { y };
    // At least four digits.
    let mut buf = [b'0'; 20];
    let i = crate::value::decimal_digits(year as u64, &mut buf);
    let start = i.min(buf.len() - 4);
    out.put_slice(&buf[start..]);
    out.put_u8(b'-');
    put2(out, m);
    out.put_u8(b'-');
    put2(out, d);
    out.put_u8(b' ');
    let secs = tod / USECS_PER_SEC;
    let us = (tod % USECS_PER_SEC) as u32;
    put2(out, (secs / 3600) as u32);
    out.put_u8(b':');
    put2(out, (secs / 60 % 60) as u32);
    out.put_u8(b':');
    put2(out, (secs % 60) as u32);
    if us != 0 {
        out.put_u8(b'.');
        let mut digits = [0u8; 6];
        let mut v = us;
        for k in (0..6).rev() {
            digits[k] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        let mut n = 6;
        while n > 0 && digits[n - 1] == b'0' {
            n -= 1;
        }
        out.put_slice(&digits[..n]);
    }
    if tz {
        out.put_slice(b"+00");
    }
    if bc {
        out.put_slice(b" BC");
    }
}

/// The text form as a String.
pub fn format_timestamp(t: i64, tz: bool) -> String {
    let mut b = BytesMut::with_capacity(40);
    write_timestamp(&mut b, t, tz);
    String::from_utf8_lossy(&b).into_owned()
}

/// Which input function is parsing: it names the type in error messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum InputKind {
    Timestamp,
    TimestampTz,
    Date,
}

impl InputKind {
    fn name(self) -> &'static str {
        match self {
            InputKind::Timestamp => "timestamp",
            InputKind::TimestampTz => "timestamp with time zone",
            InputKind::Date => "date",
        }
    }
}

fn syntax(s: &str, kind: InputKind) -> PgError {
    PgError::new(
        sqlstate::INVALID_DATETIME_FORMAT,
        format!("invalid input syntax for type {}: \"{}\"", kind.name(), s),
    )
}

fn field_overflow(s: &str) -> PgError {
    PgError::new(
        sqlstate::DATETIME_FIELD_OVERFLOW,
        format!("date/time field value out of range: \"{}\"", s),
    )
}

/// A small cursor over ASCII bytes.
struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cur<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    /// Reads 1..=max digits.
    fn digits(&mut self, max: usize) -> Option<(u64, usize)> {
        let start = self.i;
        let mut v: u64 = 0;
        while self.i < self.b.len() && self.i - start < max && self.b[self.i].is_ascii_digit() {
            v = v * 10 + (self.b[self.i] - b'0') as u64;
            self.i += 1;
        }
        if self.i == start {
            None
        } else {
            Some((v, self.i - start))
        }
    }
    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }
    fn at_end(&self) -> bool {
        self.i >= self.b.len()
    }
}

/// Parses timestamp / timestamptz input (see the module doc).
pub fn parse_timestamp(s: &str, tz: bool) -> PgResult<i64> {
    let kind = if tz {
        InputKind::TimestampTz
    } else {
        InputKind::Timestamp
    };
    parse_datetime(s, kind)
}

fn parse_datetime(s: &str, kind: InputKind) -> PgResult<i64> {
    let tz = kind == InputKind::TimestampTz;
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let lower = t.to_ascii_lowercase();
    match lower.as_str() {
        "infinity" | "+infinity" => return Ok(TS_INFINITY),
        "-infinity" => return Ok(TS_NEG_INFINITY),
        "epoch" => return Ok(-UNIX_TO_PG_EPOCH_SECS * USECS_PER_SEC),
        "now" => return Ok(now_usecs()),
        "today" | "tomorrow" | "yesterday" => {
            let today = now_usecs().div_euclid(USECS_PER_DAY) * USECS_PER_DAY;
            return Ok(match lower.as_str() {
                "today" => today,
                "tomorrow" => today + USECS_PER_DAY,
                _ => today - USECS_PER_DAY,
            });
        }
        _ => {}
    }
    let mut c = Cur {
        b: lower.as_bytes(),
        i: 0,
    };
    let (year, month, day, ylen);
    let mut mdy = false;
    let (v, len) = c.digits(8).ok_or_else(|| syntax(s, kind))?;
    let sep = c.peek().filter(|b| matches!(b, b'-' | b'/' | b'.'));
    if len == 8 && sep.is_none() {
        // Undelimited ISO 8601 `YYYYMMDD`.
        (year, month, day, ylen) = (v / 10_000, v / 100 % 100, v % 100, 4);
    } else {
        let Some(sep) = sep else {
            return Err(syntax(s, kind));
        };
        if len > 7 {
            return Err(syntax(s, kind));
        }
        c.i += 1;
        let (second, _) = c.digits(2).ok_or_else(|| syntax(s, kind))?;
        if !c.eat(sep) {
            return Err(syntax(s, kind));
        }
        if len >= 3 {
            // Year first: `2024-01-05`, `2024/01/05`.
            (year, ylen) = (v, len);
            month = second;
            day = c.digits(2).ok_or_else(|| syntax(s, kind))?.0;
        } else {
            // DateStyle MDY: `01/05/2024`, `1-5-24` (two-digit years
            // below 70 are 20xx, the others 19xx).
            mdy = true;
            month = v;
            day = second;
            let (y, yl) = c.digits(7).ok_or_else(|| syntax(s, kind))?;
            year = if yl <= 2 {
                if y < 70 {
                    2000 + y
                } else {
                    1900 + y
                }
            } else {
                y
            };
            ylen = yl.max(4);
        }
    }
    let (mut h, mut mi, mut sec, mut us) = (0u64, 0u64, 0u64, 0u64);
    let mut offset_secs: Option<i64> = None;
    let mut bc = false;
    if c.eat(b't') || c.peek() == Some(b' ') {
        c.skip_ws();
        if c.peek().is_some_and(|d| d.is_ascii_digit()) {
            h = c.digits(2).ok_or_else(|| syntax(s, kind))?.0;
            if !c.eat(b':') {
                return Err(syntax(s, kind));
            }
            mi = c.digits(2).ok_or_else(|| syntax(s, kind))?.0;
            if c.eat(b':') {
                sec = c.digits(2).ok_or_else(|| syntax(s, kind))?.0;
                if c.eat(b'.') {
                    let start = c.i;
                    let mut frac_digits = 0;
                    let mut frac: u64 = 0;
                    let mut round_up = false;
                    while let Some(d) = c.peek().filter(|d| d.is_ascii_digit()) {
                        if frac_digits < 6 {
                            frac = frac * 10 + (d - b'0') as u64;
                        } else if frac_digits == 6 {
                            round_up = d >= b'5';
                        }
                        frac_digits += 1;
                        c.i += 1;
                    }
                    if c.i == start {
                        return Err(syntax(s, kind));
                    }
                    for _ in frac_digits.min(6)..6 {
                        frac *= 10;
                    }
                    us = frac + round_up as u64;
                }
            }
        }
    }
    // Zone and era.
    loop {
        c.skip_ws();
        if c.at_end() {
            break;
        }
        let rest = &lower[c.i..];
        if rest.starts_with("bc") {
            bc = true;
            c.i += 2;
        } else if rest.starts_with("ad") {
            c.i += 2;
        } else if rest.starts_with("utc") || rest.starts_with("gmt") {
            offset_secs = Some(0);
            c.i += 3;
        } else if rest.starts_with('z') {
            offset_secs = Some(0);
            c.i += 1;
        } else if let Some(sign) = c.peek().filter(|&x| x == b'+' || x == b'-') {
            c.i += 1;
            let (hv, hl) = c.digits(4).ok_or_else(|| syntax(s, kind))?;
            let (oh, mut om) = if hl > 2 {
                (hv / 100, hv % 100)
            } else {
                (hv, 0)
            };
            if c.eat(b':') {
                om = c.digits(2).ok_or_else(|| syntax(s, kind))?.0;
                if c.eat(b':') {
                    c.digits(2).ok_or_else(|| syntax(s, kind))?;
                }
            }
            if oh > 15 || om > 59 {
                return Err(PgError::new(
                    sqlstate::INVALID_DATETIME_FORMAT,
                    format!("time zone displacement out of range: \"{}\"", s),
                ));
            }
            let off = (oh * 3600 + om * 60) as i64;
            offset_secs = Some(if sign == b'-' { -off } else { off });
        } else {
            return Err(syntax(s, kind));
        }
    }
    if year == 0 && ylen >= 1 {
        return Err(field_overflow(s));
    }
    let y = if bc { 1 - year as i64 } else { year as i64 };
    if !(1..=12).contains(&month) || day < 1 || day as u32 > days_in_month(y, month as u32) {
        let e = field_overflow(s);
        return Err(if mdy {
            e.with_hint("Perhaps you need a different \"datestyle\" setting.")
        } else {
            e
        });
    }
    if h > 24 || mi > 59 || sec > 60 || (h == 24 && (mi > 0 || sec > 0 || us > 0)) {
        return Err(field_overflow(s));
    }
    let days = date_from_parts(y, month as u32, day as u32);
    if kind == InputKind::Date {
        // A date keeps only the day; the time of day was validated and dropped.
        if !date_in_range(days) {
            return Err(PgError::new(
                sqlstate::DATETIME_FIELD_OVERFLOW,
                format!("date out of range: \"{}\"", s),
            ));
        }
        return Ok(days);
    }
    let out_of_range = || {
        PgError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("timestamp out of range: \"{}\"", s),
        )
    };
    let mut ts = days
        .checked_mul(USECS_PER_DAY)
        .and_then(|t| {
            t.checked_add(
                (h as i64 * 3600 + mi as i64 * 60 + sec as i64) * USECS_PER_SEC + us as i64,
            )
        })
        .ok_or_else(out_of_range)?;
    if tz {
        if let Some(off) = offset_secs {
            ts -= off * USECS_PER_SEC;
        }
    }
    if !(MIN_TIMESTAMP..END_TIMESTAMP).contains(&ts) {
        return Err(out_of_range());
    }
    Ok(ts)
}

/// Date +infinity (PostgreSQL's DATEVAL_NOEND).
pub const DATE_INFINITY: i32 = i32::MAX;
/// Date -infinity (DATEVAL_NOBEGIN).
pub const DATE_NEG_INFINITY: i32 = i32::MIN;
/// Days from 2000-01-01 to 4714-11-24 BC, the first valid date.
pub const MIN_DATE_DAYS: i32 = -2_451_545;
/// One past the last valid date (5874897-12-31): days from 2000-01-01 to 5874898-01-01.
pub const END_DATE_DAYS: i32 = 2_145_031_949;

/// Parses date input: what timestamp input accepts (a time part is
/// read and dropped), plus `YYYYMMDD`; 22007 / 22008 as PostgreSQL's date_in.
pub fn parse_date(s: &str) -> PgResult<i32> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    match t.to_ascii_lowercase().as_str() {
        "infinity" | "+infinity" => return Ok(DATE_INFINITY),
        "-infinity" => return Ok(DATE_NEG_INFINITY),
        "epoch" | "now" | "today" | "tomorrow" | "yesterday" => {
            return Ok(timestamp_to_date(parse_datetime(t, InputKind::Timestamp)?))
        }
        _ => {}
    }
    // For dates parse_datetime returns the day number.
    let d = parse_datetime(s, InputKind::Date)?;
    Ok(d as i32)
}

/// The timestamp at midnight of a date, for comparisons: infinities map to
/// infinities, and a date past the timestamp range saturates just outside
/// it (still before infinity), so a date compares correctly with every
/// timestamp.
pub fn date_to_timestamp(d: i32) -> i64 {
    match d {
        DATE_INFINITY => TS_INFINITY,
        DATE_NEG_INFINITY => TS_NEG_INFINITY,
        d => (d as i64).saturating_mul(USECS_PER_DAY).min(END_TIMESTAMP),
    }
}

/// date → timestamp as a cast: 22008 `date out of range for timestamp`
/// when the date is past the timestamp range.
pub fn date_to_timestamp_checked(d: i32) -> PgResult<i64> {
    let t = date_to_timestamp(d);
    if t == END_TIMESTAMP {
        return Err(PgError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "date out of range for timestamp",
        ));
    }
    Ok(t)
}

/// The date of a timestamp (22008 `date out of range` cannot happen: every
/// timestamp's day is a valid date).
pub fn timestamp_to_date(t: i64) -> i32 {
    match t {
        TS_INFINITY => DATE_INFINITY,
        TS_NEG_INFINITY => DATE_NEG_INFINITY,
        t => t.div_euclid(USECS_PER_DAY) as i32,
    }
}

/// (year, month, day) of a date in days since 2000-01-01 (year 0 = 1 BC).
pub fn date_parts(d: i32) -> (i64, u32, u32) {
    civil_from_days(d as i64 + days_from_civil(2000, 1, 1))
}

/// Days since 2000-01-01 for a civil date.
pub fn date_from_parts(y: i64, m: u32, d: u32) -> i64 {
    days_from_civil(y, m, d) - days_from_civil(2000, 1, 1)
}

/// True if `d` is a finite date inside PostgreSQL's range.
pub fn date_in_range(d: i64) -> bool {
    (MIN_DATE_DAYS as i64..END_DATE_DAYS as i64).contains(&d)
}

/// True if `t` is a finite timestamp inside PostgreSQL's range.
pub fn timestamp_in_range(t: i64) -> bool {
    (MIN_TIMESTAMP..END_TIMESTAMP).contains(&t)
}

/// Number of days in a month of a (proleptic Gregorian) year.
pub fn month_days(y: i64, m: u32) -> u32 {
    days_in_month(y, m)
}

/// Appends a date's ISO text form (`2024-01-31`, `0044-03-15 BC`, `infinity`).
pub fn write_date(out: &mut BytesMut, d: i32) {
    match d {
        DATE_INFINITY => out.put_slice(b"infinity"),
        DATE_NEG_INFINITY => out.put_slice(b"-infinity"),
        d => {
            let (y, m, day) = date_parts(d);
            let bc = y <= 0;
            let year = if bc { 1 - y } else { y };
            let s = format!("{year:04}-{m:02}-{day:02}");
            out.put_slice(s.as_bytes());
            if bc {
                out.put_slice(b" BC");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(s: &str, tz: bool) -> String {
        format_timestamp(parse_timestamp(s, tz).unwrap(), tz)
    }

    #[test]
    fn output_matches_postgres() {
        assert_eq!(format_timestamp(0, false), "2000-01-01 00:00:00");
        assert_eq!(format_timestamp(0, true), "2000-01-01 00:00:00+00");
        assert_eq!(
            format_timestamp(123_456, false),
            "2000-01-01 00:00:00.123456"
        );
        assert_eq!(format_timestamp(120_000, false), "2000-01-01 00:00:00.12");
        assert_eq!(format_timestamp(-1, false), "1999-12-31 23:59:59.999999");
        assert_eq!(format_timestamp(TS_INFINITY, true), "infinity");
        assert_eq!(format_timestamp(TS_NEG_INFINITY, false), "-infinity");
    }

    #[test]
    fn input() {
        assert_eq!(
            rt("2024-01-02 03:04:05.123456", false),
            "2024-01-02 03:04:05.123456"
        );
        assert_eq!(rt("2024-01-02T03:04:05", false), "2024-01-02 03:04:05");
        assert_eq!(rt("2024-01-02", false), "2024-01-02 00:00:00");
        assert_eq!(rt("2024-01-02 03:04:05+02", true), "2024-01-02 01:04:05+00");
        assert_eq!(
            rt("2024-01-02 03:04:05-02:30", true),
            "2024-01-02 05:34:05+00"
        );
        assert_eq!(rt("2024-01-02 03:04:05+02", false), "2024-01-02 03:04:05");
        assert_eq!(rt("2024-01-02 03:04:05Z", true), "2024-01-02 03:04:05+00");
        assert_eq!(
            rt("2024-01-02 03:04:05.1234567", false),
            "2024-01-02 03:04:05.123457"
        );
        assert_eq!(
            rt("0001-01-01 00:00:00 BC", false),
            "0001-01-01 00:00:00 BC"
        );
        assert_eq!(rt("epoch", true), "1970-01-01 00:00:00+00");
        assert_eq!(rt("1970-01-01 00:00:00", false), "1970-01-01 00:00:00");
        assert_eq!(rt("2024-02-29 12:00", false), "2024-02-29 12:00:00");
        // DateStyle MDY and other separators, as PostgreSQL 15 reads them.
        assert_eq!(rt("01/05/2024", false), "2024-01-05 00:00:00");
        assert_eq!(rt("2024/01/05", false), "2024-01-05 00:00:00");
        assert_eq!(rt("01-05-2024", false), "2024-01-05 00:00:00");
        assert_eq!(rt("1/5/24", false), "2024-01-05 00:00:00");
        assert_eq!(rt("01/05/99", false), "1999-01-05 00:00:00");
        assert_eq!(rt("2024.01.05", false), "2024-01-05 00:00:00");
        assert_eq!(rt("01/05/2024 10:30", false), "2024-01-05 10:30:00");
        assert_eq!(rt("1-01-01", false), "2001-01-01 00:00:00");
        let e = parse_timestamp("13/05/2024", false).unwrap_err();
        assert_eq!(
            e.message,
            "date/time field value out of range: \"13/05/2024\""
        );
        let e = parse_timestamp("abc", false).unwrap_err();
        assert_eq!(
            e.message,
            "invalid input syntax for type timestamp: \"abc\""
        );
        let e = parse_timestamp("2023-02-29", false).unwrap_err();
        assert_eq!(e.code, sqlstate::DATETIME_FIELD_OVERFLOW);
        assert_eq!(
            e.message,
            "date/time field value out of range: \"2023-02-29\""
        );
    }

    #[test]
    fn civil_round_trip() {
        for days in [-1_000_000i64, -719_468, -1, 0, 1, 10_957, 1_000_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}
