//! interval: PostgreSQL's three-field time span, its text forms and its
//! arithmetic.
//!
//! An [`Interval`] keeps months, days and microseconds apart, as PostgreSQL
//! stores it, because they do not convert into each other exactly: a month
//! is 28 to 31 days and a day is 23 to 25 hours across a daylight-saving
//! change. Adding `1 mon` to a timestamp moves the calendar month; adding
//! `30 days` moves the day count.
//!
//! Invariants and conventions:
//! * Comparison, hashing and index keys use the *span*
//!   `(months × 30 + days) × 86 400 000 000 + micros` as an `i128`, so
//!   `'1 mon' = '30 days'` and `'1 day' = '24 hours'` are equal, as in
//!   PostgreSQL ([`Interval::span`]).
//! * Output is IntervalStyle `postgres` (hotpair's only style):
//!   `1 year 2 mons 3 days 04:05:06.5`, `-1 days +01:00:00`, `00:00:00`.
//! * Input ([`parse_interval`]) takes PostgreSQL's verbose syntax
//!   (`1 year 2 months`, `3 days 04:05:06`, `-1 day +1 hour`, `@ 1 day
//!   ago`, fractional units spilling into the smaller fields), bare
//!   `hh:mm[:ss]`, bare numbers (seconds), and the ISO 8601 `P…T…` form.
//! * Arithmetic overflow is 22008 `interval out of range`.
//!
//! Next: [`crate::value`] wraps it as `Value::Interval`; timestamp ±
//! interval lives here too ([`add_to_timestamp`]).

use bytes::{BufMut, BytesMut};

use crate::datetime::{self, USECS_PER_DAY, USECS_PER_SEC};
use crate::error::{sqlstate, PgError, PgResult};

/// Microseconds per hour.
const USECS_PER_HOUR: i64 = 3_600 * USECS_PER_SEC;
/// Microseconds per minute.
const USECS_PER_MINUTE: i64 = 60 * USECS_PER_SEC;
/// Days in a month for interval arithmetic and comparison.
pub const DAYS_PER_MONTH: i64 = 30;

/// A time span of months, days and microseconds (PostgreSQL's layout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Whole months (years are 12 months).
    pub months: i32,
    /// Whole days.
    pub days: i32,
    /// Microseconds.
    pub micros: i64,
}

/// 22008 `interval out of range`.
pub fn interval_out_of_range() -> PgError {
    PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "interval out of range")
}

/// 22008 `timestamp out of range`.
pub fn timestamp_out_of_range() -> PgError {
    PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

fn syntax(s: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_DATETIME_FORMAT,
        format!("invalid input syntax for type interval: \"{s}\""),
    )
}

fn field_overflow(s: &str) -> PgError {
    PgError::new(
        sqlstate::DATETIME_FIELD_OVERFLOW,
        format!("interval field value out of range: \"{s}\""),
    )
}

impl Interval {
    /// The zero interval.
    pub const ZERO: Interval = Interval {
        months: 0,
        days: 0,
        micros: 0,
    };

    /// An interval from its three fields.
    pub fn new(months: i32, days: i32, micros: i64) -> Interval {
        Interval {
            months,
            days,
            micros,
        }
    }

    /// The comparison key: total microseconds with a month as 30 days.
    pub fn span(self) -> i128 {
        (self.months as i128 * DAYS_PER_MONTH as i128 + self.days as i128) * USECS_PER_DAY as i128
            + self.micros as i128
    }

    /// Field-wise sum (22008 on overflow).
    pub fn checked_add(self, o: Interval) -> PgResult<Interval> {
        Ok(Interval {
            months: self
                .months
                .checked_add(o.months)
                .ok_or_else(interval_out_of_range)?,
            days: self
                .days
                .checked_add(o.days)
                .ok_or_else(interval_out_of_range)?,
            micros: self
                .micros
                .checked_add(o.micros)
                .ok_or_else(interval_out_of_range)?,
        })
    }

    /// Field-wise negation (22008 for the most negative fields).
    pub fn checked_neg(self) -> PgResult<Interval> {
        Ok(Interval {
            months: self
                .months
                .checked_neg()
                .ok_or_else(interval_out_of_range)?,
            days: self.days.checked_neg().ok_or_else(interval_out_of_range)?,
            micros: self
                .micros
                .checked_neg()
                .ok_or_else(interval_out_of_range)?,
        })
    }

    /// Field-wise difference.
    pub fn checked_sub(self, o: Interval) -> PgResult<Interval> {
        self.checked_add(o.checked_neg()?)
    }

    /// `interval * factor`: each field is scaled; the fraction of the
    /// months spills into days (30 per month) and the fraction of the days
    /// into time, each spill rounded to the microsecond, as PostgreSQL does.
    pub fn mul_f64(self, factor: f64) -> PgResult<Interval> {
        if factor.is_nan() {
            return Err(interval_out_of_range());
        }
        let months_f = self.months as f64 * factor;
        let days_f = self.days as f64 * factor;
        if !(i32::MIN as f64..=i32::MAX as f64).contains(&months_f)
            || !(i32::MIN as f64..=i32::MAX as f64).contains(&days_f)
        {
            return Err(interval_out_of_range());
        }
        let months = months_f.trunc() as i32;
        let mut days = days_f.trunc() as i32;
        let round6 = |x: f64| (x * 1e6).round() / 1e6;
        let month_rem_days = round6((months_f - months as f64) * DAYS_PER_MONTH as f64);
        let mut sec_rem =
            round6((days_f - days as f64 + month_rem_days - month_rem_days.trunc()) * 86_400.0);
        if sec_rem.abs() >= 86_400.0 {
            let whole = (sec_rem / 86_400.0).trunc();
            days = days
                .checked_add(whole as i32)
                .ok_or_else(interval_out_of_range)?;
            sec_rem -= whole * 86_400.0;
        }
        days = days
            .checked_add(month_rem_days.trunc() as i32)
            .ok_or_else(interval_out_of_range)?;
        let micros_f = (self.micros as f64 * factor + sec_rem * 1e6).round_ties_even();
        if !(i64::MIN as f64..i64::MAX as f64).contains(&micros_f) {
            return Err(interval_out_of_range());
        }
        Ok(Interval {
            months,
            days,
            micros: micros_f as i64,
        })
    }

    /// `interval / divisor` (22012 on zero).
    pub fn div_f64(self, divisor: f64) -> PgResult<Interval> {
        if divisor == 0.0 {
            return Err(PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero"));
        }
        self.mul_f64(1.0 / divisor)
    }

    /// justify_hours: whole days out of the time field.
    pub fn justify_hours(self) -> Interval {
        let mut days = self.days as i64 + self.micros / USECS_PER_DAY;
        let mut micros = self.micros % USECS_PER_DAY;
        if days > 0 && micros < 0 {
            micros += USECS_PER_DAY;
            days -= 1;
        } else if days < 0 && micros > 0 {
            micros -= USECS_PER_DAY;
            days += 1;
        }
        Interval {
            months: self.months,
            days: days.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
            micros,
        }
    }

    /// Appends the IntervalStyle `postgres` text form.
    pub fn write_text(self, out: &mut BytesMut) {
        let mut nothing_yet = true;
        let mut prev_negative = false;
        let years = self.months / 12;
        let mons = self.months % 12;
        for (v, unit) in [(years, "year"), (mons, "mon"), (self.days, "day")] {
            if v == 0 {
                continue;
            }
            if !nothing_yet {
                out.put_u8(b' ');
            }
            if prev_negative && v > 0 {
                out.put_u8(b'+');
            }
            out.put_slice(v.to_string().as_bytes());
            out.put_u8(b' ');
            out.put_slice(unit.as_bytes());
            if v != 1 {
                out.put_u8(b's');
            }
            prev_negative = v < 0;
            nothing_yet = false;
        }
        if self.micros != 0 || nothing_yet {
            if !nothing_yet {
                out.put_u8(b' ');
            }
            if self.micros < 0 {
                out.put_u8(b'-');
            } else if prev_negative {
                out.put_u8(b'+');
            }
            let t = self.micros.unsigned_abs();
            let hours = t / USECS_PER_HOUR as u64;
            let mins = t / USECS_PER_MINUTE as u64 % 60;
            let secs = t / USECS_PER_SEC as u64 % 60;
            let frac = t % USECS_PER_SEC as u64;
            out.put_slice(format!("{hours:02}:{mins:02}:{secs:02}").as_bytes());
            write_fraction(out, frac);
        }
    }

    /// The text form as a String.
    pub fn to_text(self) -> String {
        let mut b = BytesMut::with_capacity(32);
        self.write_text(&mut b);
        String::from_utf8_lossy(&b).into_owned()
    }
}

/// Appends `.ffffff` with trailing zeros trimmed (nothing for 0).
pub fn write_fraction(out: &mut BytesMut, frac: u64) {
    if frac == 0 {
        return;
    }
    let s = format!("{frac:06}");
    out.put_u8(b'.');
    out.put_slice(s.trim_end_matches('0').as_bytes());
}

/// Adds a fractional amount of `unit_usecs`-sized units to the time field.
fn add_usecs(iv: &mut Interval, amount: f64, unit_usecs: i64) -> Option<()> {
    let v = (amount * unit_usecs as f64).round();
    if !v.is_finite() || v.abs() >= 9.2e18 {
        return None;
    }
    iv.micros = iv.micros.checked_add(v as i64)?;
    Some(())
}

/// Adds `amount` days; the fraction spills into time.
fn add_days(iv: &mut Interval, amount: f64) -> Option<()> {
    let whole = amount.trunc();
    if whole.abs() > i32::MAX as f64 {
        return None;
    }
    iv.days = iv.days.checked_add(whole as i32)?;
    add_usecs(iv, amount - whole, USECS_PER_DAY)
}

/// Adds `amount` months; the fraction spills into days (30 per month).
fn add_months(iv: &mut Interval, amount: f64) -> Option<()> {
    let whole = amount.trunc();
    if whole.abs() > i32::MAX as f64 {
        return None;
    }
    iv.months = iv.months.checked_add(whole as i32)?;
    add_days(iv, (amount - whole) * DAYS_PER_MONTH as f64)
}

/// Unit keywords of verbose interval input, as (months, days, µs) multipliers.
enum Unit {
    Months(f64),
    Days(f64),
    Usecs(i64),
}

fn unit(word: &str) -> Option<Unit> {
    Some(match word {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "microsecon" => Unit::Usecs(1),
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "millisecon" => {
            Unit::Usecs(1000)
        }
        "second" | "seconds" | "s" | "sec" | "secs" => Unit::Usecs(USECS_PER_SEC),
        "minute" | "minutes" | "m" | "min" | "mins" => Unit::Usecs(USECS_PER_MINUTE),
        "hour" | "hours" | "h" | "hr" | "hrs" => Unit::Usecs(USECS_PER_HOUR),
        "day" | "days" | "d" => Unit::Days(1.0),
        "week" | "weeks" | "w" => Unit::Days(7.0),
        "month" | "months" | "mon" | "mons" => Unit::Months(1.0),
        "year" | "years" | "y" | "yr" | "yrs" => Unit::Months(12.0),
        "decade" | "decades" | "dec" | "decs" => Unit::Months(120.0),
        "century" | "centuries" | "c" | "cent" => Unit::Months(1200.0),
        "millennium" | "millennia" | "mil" | "mils" => Unit::Months(12000.0),
        _ => return None,
    })
}

fn apply_unit(iv: &mut Interval, amount: f64, u: Unit) -> Option<()> {
    match u {
        Unit::Months(k) => add_months(iv, amount * k),
        Unit::Days(k) => add_days(iv, amount * k),
        Unit::Usecs(k) => add_usecs(iv, amount, k),
    }
}

/// Parses `[-]h:m[:s[.f]]` into microseconds.
fn parse_clock(tok: &str) -> Option<i64> {
    let (neg, body) = match tok.as_bytes().first() {
        Some(b'-') => (true, &tok[1..]),
        Some(b'+') => (false, &tok[1..]),
        _ => (false, tok),
    };
    let parts: Vec<&str> = body.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 {
        return None;
    }
    let int = |p: &str| -> Option<i64> {
        if p.is_empty() || !p.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        p.parse().ok()
    };
    let h = int(parts[0])?;
    let m = int(parts[1])?;
    if m > 59 {
        return None;
    }
    let mut us = h
        .checked_mul(USECS_PER_HOUR)?
        .checked_add(m * USECS_PER_MINUTE)?;
    if let Some(sec) = parts.get(2) {
        let (whole, frac) = match sec.split_once('.') {
            Some((w, f)) => (w, f),
            None => (*sec, ""),
        };
        let s = int(whole)?;
        if s > 60 || !frac.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let mut f: i64 = 0;
        for (i, c) in frac
            .bytes()
            .chain(std::iter::repeat(b'0'))
            .take(7)
            .enumerate()
        {
            if i < 6 {
                f = f * 10 + (c - b'0') as i64;
            } else if c >= b'5' {
                f += 1;
            }
        }
        us = us.checked_add(s * USECS_PER_SEC + f)?;
    }
    Some(if neg { -us } else { us })
}

/// Parses the ISO 8601 `P[nY][nM][nW][nD][T[nH][nM][nS]]` form.
fn parse_iso8601(s: &str) -> Option<Interval> {
    let body = s.strip_prefix('p')?;
    let mut iv = Interval::ZERO;
    let mut in_time = false;
    let mut num = String::new();
    for c in body.chars() {
        match c {
            't' if num.is_empty() => in_time = true,
            '0'..='9' | '.' | '-' | '+' => num.push(c),
            u => {
                let v: f64 = num.parse().ok()?;
                num.clear();
                let unit = match (in_time, u) {
                    (false, 'y') => Unit::Months(12.0),
                    (false, 'm') => Unit::Months(1.0),
                    (false, 'w') => Unit::Days(7.0),
                    (false, 'd') => Unit::Days(1.0),
                    (true, 'h') => Unit::Usecs(USECS_PER_HOUR),
                    (true, 'm') => Unit::Usecs(USECS_PER_MINUTE),
                    (true, 's') => Unit::Usecs(USECS_PER_SEC),
                    _ => return None,
                };
                apply_unit(&mut iv, v, unit)?;
            }
        }
    }
    if !num.is_empty() {
        return None;
    }
    Some(iv)
}

/// Parses interval text input (see the module doc for the accepted forms).
pub fn parse_interval(s: &str) -> PgResult<Interval> {
    let lower = s.trim().to_ascii_lowercase();
    if lower.is_empty() {
        return Err(syntax(s));
    }
    if lower.starts_with('p') {
        return parse_iso8601(&lower).ok_or_else(|| syntax(s));
    }
    // Split "10days" into "10 days"; keep signs, digits, '.', ':' together.
    let mut tokens: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut cur_alpha = false;
    for c in lower.chars() {
        if c.is_whitespace() || c == ',' {
            if !cur.is_empty() {
                tokens.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let alpha = c.is_ascii_alphabetic();
        if !cur.is_empty() && alpha != cur_alpha && c != '@' {
            tokens.push(std::mem::take(&mut cur));
        }
        cur_alpha = alpha;
        cur.push(c);
    }
    if !cur.is_empty() {
        tokens.push(cur);
    }
    let mut iv = Interval::ZERO;
    let mut ago = false;
    let mut i = 0;
    let mut any = false;
    while i < tokens.len() {
        let tok = tokens[i].as_str();
        if tok == "@" {
            i += 1;
            continue;
        }
        if tok == "ago" {
            ago = true;
            i += 1;
            continue;
        }
        if tok.contains(':') {
            let us = parse_clock(tok).ok_or_else(|| field_overflow_or_syntax(s, tok))?;
            iv.micros = iv.micros.checked_add(us).ok_or_else(|| field_overflow(s))?;
            any = true;
            i += 1;
            continue;
        }
        let v: f64 = match tok.parse() {
            Ok(v) if tok.bytes().any(|c| c.is_ascii_digit()) => v,
            _ => return Err(syntax(s)),
        };
        let next = tokens.get(i + 1).map(String::as_str);
        match next.and_then(unit) {
            Some(u) => {
                apply_unit(&mut iv, v, u).ok_or_else(|| field_overflow(s))?;
                i += 2;
            }
            None => {
                // A bare number followed by a clock is a day count; alone it is seconds.
                if next.is_some_and(|n| n.contains(':')) {
                    apply_unit(&mut iv, v, Unit::Days(1.0)).ok_or_else(|| field_overflow(s))?;
                } else if next.is_none() {
                    apply_unit(&mut iv, v, Unit::Usecs(USECS_PER_SEC))
                        .ok_or_else(|| field_overflow(s))?;
                } else {
                    return Err(syntax(s));
                }
                i += 1;
            }
        }
        any = true;
    }
    if !any {
        return Err(syntax(s));
    }
    if ago {
        iv = iv.checked_neg().map_err(|_| field_overflow(s))?;
    }
    Ok(iv)
}

fn field_overflow_or_syntax(s: &str, tok: &str) -> PgError {
    if tok
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b':' | b'.' | b'-' | b'+'))
    {
        field_overflow(s)
    } else {
        syntax(s)
    }
}

/// Adds `n` months to a civil date, clamping the day to the month's end.
fn add_months_to_date(y: i64, m: u32, d: u32, n: i32) -> (i64, u32, u32) {
    let total = y * 12 + (m as i64 - 1) + n as i64;
    let ny = total.div_euclid(12);
    let nm = (total.rem_euclid(12) + 1) as u32;
    let nd = d.min(datetime::month_days(ny, nm));
    (ny, nm, nd)
}

/// timestamp + interval: months first (day clamped to the month's end),
/// then days, then time. Infinite timestamps stay infinite.
pub fn add_to_timestamp(t: i64, iv: Interval) -> PgResult<i64> {
    if t == datetime::TS_INFINITY || t == datetime::TS_NEG_INFINITY {
        return Ok(t);
    }
    let mut t = t;
    if iv.months != 0 {
        let days = t.div_euclid(USECS_PER_DAY);
        let tod = t.rem_euclid(USECS_PER_DAY);
        let (y, m, d) =
            datetime::date_parts(i32::try_from(days).map_err(|_| timestamp_out_of_range())?);
        let (ny, nm, nd) = add_months_to_date(y, m, d, iv.months);
        t = datetime::date_from_parts(ny, nm, nd)
            .checked_mul(USECS_PER_DAY)
            .and_then(|x| x.checked_add(tod))
            .ok_or_else(timestamp_out_of_range)?;
    }
    t = (iv.days as i64)
        .checked_mul(USECS_PER_DAY)
        .and_then(|x| t.checked_add(x))
        .and_then(|x| x.checked_add(iv.micros))
        .ok_or_else(timestamp_out_of_range)?;
    if !datetime::timestamp_in_range(t) {
        return Err(timestamp_out_of_range());
    }
    Ok(t)
}

/// timestamp - timestamp: the difference as days and time (justified hours).
pub fn timestamp_diff(a: i64, b: i64) -> PgResult<Interval> {
    let inf = |x: i64| x == datetime::TS_INFINITY || x == datetime::TS_NEG_INFINITY;
    if inf(a) || inf(b) {
        return Err(PgError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite timestamps",
        ));
    }
    let us = a.checked_sub(b).ok_or_else(interval_out_of_range)?;
    Ok(Interval::new(0, 0, us).justify_hours())
}

/// PostgreSQL's `age(a, b)`: a symbolic difference in years, months, days
/// and time, borrowing from the next larger field the way one would on
/// paper (a month borrows the length of `b`'s month).
pub fn age(a: i64, b: i64) -> PgResult<Interval> {
    let inf = |x: i64| x == datetime::TS_INFINITY || x == datetime::TS_NEG_INFINITY;
    if inf(a) || inf(b) {
        return Err(PgError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite timestamps",
        ));
    }
    let split = |t: i64| {
        let days = t.div_euclid(USECS_PER_DAY);
        let tod = t.rem_euclid(USECS_PER_DAY);
        let (y, m, d) = datetime::civil_from_days(days + datetime::days_from_civil(2000, 1, 1));
        (y, m as i64, d as i64, tod)
    };
    let (y1, m1, d1, t1) = split(a);
    let (y2, m2, d2, t2) = split(b);
    let negative = a < b;
    let sign = if negative { -1 } else { 1 };
    let (mut y, mut m, mut d, mut t) = (
        sign * (y1 - y2),
        sign * (m1 - m2),
        sign * (d1 - d2),
        sign * (t1 - t2),
    );
    while t < 0 {
        t += USECS_PER_DAY;
        d -= 1;
    }
    // A day borrow takes the length of the earlier timestamp's month.
    let (by, bm) = if negative { (y1, m1) } else { (y2, m2) };
    while d < 0 {
        d += datetime::month_days(by, bm as u32) as i64;
        m -= 1;
    }
    while m < 0 {
        m += 12;
        y -= 1;
    }
    let (y, m, d, t) = (sign * y, sign * m, sign * d, sign * t);
    let months = y * 12 + m;
    Ok(Interval {
        months: i32::try_from(months).map_err(|_| interval_out_of_range())?,
        days: d as i32,
        micros: t,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(s: &str) -> String {
        parse_interval(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .to_text()
    }

    #[test]
    fn text_forms_match_postgres() {
        // Each pair from PostgreSQL 15 (`select interval '…'`).
        for (s, want) in [
            ("-1 year", "-1 years"),
            (
                "1 year 2 months 3 days 4 hours 5 minutes 6 seconds",
                "1 year 2 mons 3 days 04:05:06",
            ),
            ("-1 day +1 hour", "-1 days +01:00:00"),
            ("1 day -1 hour", "1 day -01:00:00"),
            ("1.5 months", "1 mon 15 days"),
            ("1.5 days", "1 day 12:00:00"),
            ("100 hours", "100:00:00"),
            ("-00:00:01.5", "-00:00:01.5"),
            ("0", "00:00:00"),
            ("@ 1 day ago", "-1 days"),
            ("P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"),
            ("1 week", "7 days"),
            ("1 decade 2 centuries", "210 years"),
            ("1:2", "01:02:00"),
            ("1:2:3.25", "01:02:03.25"),
            ("10", "00:00:10"),
            ("1 2:03", "1 day 02:03:00"),
        ] {
            assert_eq!(rt(s), want, "{s}");
        }
        let e = parse_interval("abc").unwrap_err();
        assert_eq!(e.message, "invalid input syntax for type interval: \"abc\"");
        assert_eq!(e.code, "22007");
    }

    #[test]
    fn arithmetic_matches_postgres() {
        let p = |s: &str| parse_interval(s).unwrap();
        assert_eq!(p("2 hours").mul_f64(1.5).unwrap().to_text(), "03:00:00");
        assert_eq!(p("1 month").div_f64(3.0).unwrap().to_text(), "10 days");
        assert_eq!(
            p("1 mon 1 day").mul_f64(0.5).unwrap().to_text(),
            "15 days 12:00:00"
        );
        assert_eq!(p("1 mon").span(), p("30 days").span());
        assert_eq!(
            p("1 day").checked_sub(p("36 hours")).unwrap().to_text(),
            "1 day -36:00:00"
        );
        assert_eq!(
            p("1 day 2 hours").checked_neg().unwrap().to_text(),
            "-1 days -02:00:00"
        );
    }
}
