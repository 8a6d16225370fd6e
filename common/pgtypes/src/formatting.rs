//! `to_char`, `to_date`, `to_timestamp` and `to_number`: template-driven
//! formatting and parsing (PostgreSQL's `formatting.c`).
//!
//! Date/time templates ([`format_timestamp`], [`parse_timestamp`]) know
//! the common patterns: `YYYY YYY YY Y`, `MM`, `DD`, `DDD`, `D`, `ID`,
//! `HH HH12 HH24`, `MI`, `SS`, `MS`, `US`, `SSSS`, `AM PM am pm A.M. P.M.`,
//! `Mon MON mon Month MONTH month`, `Dy DY dy Day DAY day`, `Q`, `WW`, `IW`,
//! `IYYY`, `J`, `CC`, `TZ tz OF`, the `FM` prefix (no padding) and the
//! `TH`/`th` suffix; `"quoted text"` and `\` escape literal text, any other
//! character is copied. Names are English (no `TM` locale prefix).
//!
//! Number templates ([`format_number`]) know `9 0 . , D G S MI PL SG PR`,
//! the `FM` prefix and quoted text: digits are right-aligned in the
//! template, a value too wide for it prints `#` in every digit position,
//! and without an explicit sign pattern the sign takes one position just
//! before the first printed digit, as in PostgreSQL. `EEEE`, `V`, `RN`, `L`
//! are 0A000.

use crate::datetime::{self, USECS_PER_DAY, USECS_PER_SEC};
use crate::error::{sqlstate, PgError, PgResult};
use crate::numeric::Numeric;

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// Date/time template patterns, longest first within each prefix so the
/// scanner can take the first match.
const PATTERNS: &[&str] = &[
    "A.M.", "a.m.", "P.M.", "p.m.", "AM", "am", "PM", "pm", "HH24", "HH12", "HH", "MI", "MS", "US",
    "SSSSS", "SSSS", "SS", "Y,YYY", "YYYY", "YYY", "YY", "Y", "IYYY", "IYY", "IY", "MONTH",
    "Month", "month", "MON", "Mon", "mon", "MM", "DAY", "Day", "day", "DY", "Dy", "dy", "DDD",
    "DD", "D", "ID", "IW", "WW", "W", "Q", "J", "CC", "TZ", "tz", "OF",
];

fn case_as(pattern: &str, word: &str) -> String {
    let first_upper = pattern
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase());
    let second_upper = pattern
        .chars()
        .nth(1)
        .is_some_and(|c| c.is_ascii_uppercase());
    if first_upper && second_upper {
        word.to_uppercase()
    } else if first_upper {
        word.to_string()
    } else {
        word.to_lowercase()
    }
}

fn ordinal_suffix(n: i64, upper: bool) -> &'static str {
    let s = match (n % 100, n % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    match (upper, s) {
        (false, s) => s,
        (true, "st") => "ST",
        (true, "nd") => "ND",
        (true, "rd") => "RD",
        (true, _) => "TH",
    }
}

/// `to_char(timestamp, template)`; `tz` adds the zone patterns' `UTC`/`+00`.
/// Infinite timestamps give NULL (None), as in PostgreSQL.
pub fn format_timestamp(t: i64, tz: bool, fmt: &str) -> Option<String> {
    if t == datetime::TS_INFINITY || t == datetime::TS_NEG_INFINITY {
        return None;
    }
    let days = t.div_euclid(USECS_PER_DAY);
    let tod = t.rem_euclid(USECS_PER_DAY);
    let (y, m, d) = datetime::civil_from_days(days + datetime::days_from_civil(2000, 1, 1));
    Some(format_fields(
        &Fields {
            year: y,
            month: m,
            day: d,
            days,
            tod,
            tz,
            interval: false,
        },
        fmt,
    ))
}

/// `to_char(interval, template)`: hours count the whole time field, days
/// and months come from the interval's own fields.
pub fn format_interval(iv: crate::interval::Interval, fmt: &str) -> String {
    format_fields(
        &Fields {
            year: iv.months as i64 / 12,
            month: (iv.months % 12) as u32,
            day: iv.days.unsigned_abs(),
            days: 0,
            tod: iv.micros,
            tz: false,
            interval: true,
        },
        fmt,
    )
}

struct Fields {
    year: i64,
    month: u32,
    day: u32,
    days: i64,
    tod: i64,
    tz: bool,
    interval: bool,
}

fn format_fields(f: &Fields, fmt: &str) -> String {
    let mut out = String::new();
    let b = fmt.as_bytes();
    let mut i = 0;
    let year_ad = if f.year <= 0 { 1 - f.year } else { f.year };
    let hour24 = f.tod / (3600 * USECS_PER_SEC);
    let minute = f.tod / (60 * USECS_PER_SEC) % 60;
    let second = f.tod / USECS_PER_SEC % 60;
    let micro = f.tod % USECS_PER_SEC;
    let dow = (f.days + 6).rem_euclid(7) as usize;
    let doy = if f.interval {
        0
    } else {
        f.days - datetime::date_from_parts(f.year, 1, 1) + 1
    };
    while i < b.len() {
        let rest = &fmt[i..];
        let mut fill = false;
        let mut pat_start = i;
        if rest.starts_with("FM") || rest.starts_with("fm") {
            fill = true;
            pat_start += 2;
        }
        let prest = &fmt[pat_start..];
        let Some(p) = PATTERNS.iter().find(|p| prest.starts_with(**p)) else {
            if fill {
                // "FM" not followed by a pattern: nothing to modify.
                i = pat_start;
                continue;
            }
            let c = rest.chars().next().unwrap_or(' ');
            if c == '"' {
                // Quoted literal text up to the closing quote.
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    if b[j] == b'\\' && j + 1 < b.len() {
                        j += 1;
                    }
                    let ch = fmt[j..].chars().next().unwrap_or(' ');
                    out.push(ch);
                    j += ch.len_utf8();
                }
                i = j + 1;
                continue;
            }
            if c == '\\' {
                if let Some(n) = fmt[i + 1..].chars().next() {
                    out.push(n);
                    i += 1 + n.len_utf8();
                } else {
                    out.push('\\');
                    i += 1;
                }
                continue;
            }
            out.push(c);
            i += c.len_utf8();
            continue;
        };
        let mut end = pat_start + p.len();
        let th = if fmt[end..].starts_with("TH") {
            end += 2;
            Some(true)
        } else if fmt[end..].starts_with("th") {
            end += 2;
            Some(false)
        } else {
            None
        };
        let num = |v: i64, width: usize| -> String {
            let s = if fill || v < 0 {
                v.to_string()
            } else {
                format!("{v:0width$}")
            };
            match th {
                Some(upper) => format!("{s}{}", ordinal_suffix(v.abs(), upper)),
                None => s,
            }
        };
        let name = |word: &str, pad: usize| -> String {
            let s = case_as(p, word);
            if fill {
                s
            } else {
                format!("{s:<pad$}")
            }
        };
        let hour12 = {
            let h = hour24 % 12;
            if h == 0 {
                12
            } else {
                h
            }
        };
        let pm = hour24 % 24 >= 12;
        let piece = match *p {
            "HH24" => num(hour24, 2),
            "HH12" | "HH" => num(hour12, 2),
            "MI" => num(minute, 2),
            "SS" => num(second, 2),
            "MS" => num(micro / 1000, 3),
            "US" => num(micro, 6),
            "SSSS" | "SSSSS" => num(f.tod / USECS_PER_SEC, 0),
            "AM" | "PM" => (if pm { "PM" } else { "AM" }).to_string(),
            "am" | "pm" => (if pm { "pm" } else { "am" }).to_string(),
            "A.M." | "P.M." => (if pm { "P.M." } else { "A.M." }).to_string(),
            "a.m." | "p.m." => (if pm { "p.m." } else { "a.m." }).to_string(),
            "YYYY" => num(year_ad, 4),
            "Y,YYY" => format!("{},{:03}", year_ad / 1000, year_ad % 1000),
            "YYY" => num(year_ad % 1000, 3),
            "YY" => num(year_ad % 100, 2),
            "Y" => num(year_ad % 10, 1),
            "IYYY" | "IYY" | "IY" => {
                let (iy, _) = crate::timestamp::iso_year_week(f.days);
                let w = p.len();
                num(iy % 10i64.pow(w as u32), w)
            }
            "MM" => num(f.month as i64, 2),
            "MONTH" | "Month" | "month" => {
                if f.month == 0 {
                    String::new()
                } else {
                    name(MONTHS[f.month as usize - 1], 9)
                }
            }
            "MON" | "Mon" | "mon" => {
                if f.month == 0 {
                    String::new()
                } else {
                    case_as(p, &MONTHS[f.month as usize - 1][..3])
                }
            }
            "DAY" | "Day" | "day" => name(DAYS[dow], 9),
            "DY" | "Dy" | "dy" => case_as(p, &DAYS[dow][..3]),
            "DDD" => num(doy, 3),
            "DD" => num(f.day as i64, 2),
            "D" => num(dow as i64 + 1, 1),
            "ID" => num((dow as i64 + 6) % 7 + 1, 1),
            "IW" => num(crate::timestamp::iso_year_week(f.days).1, 2),
            "WW" => num((doy - 1) / 7 + 1, 2),
            "W" => num((f.day as i64 - 1) / 7 + 1, 1),
            "Q" => num((f.month as i64 + 2) / 3, 1),
            "J" => num(f.days + 2_451_545, 1),
            "CC" => num((year_ad + 99) / 100, 2),
            "TZ" => (if f.tz { "UTC" } else { "" }).to_string(),
            "tz" => (if f.tz { "utc" } else { "" }).to_string(),
            "OF" => (if f.tz { "+00" } else { "" }).to_string(),
            _ => String::new(),
        };
        out.push_str(&piece);
        i = end;
    }
    out
}

fn to_date_error(s: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_DATETIME_FORMAT,
        format!("invalid value \"{s}\" for template"),
    )
}

/// `to_timestamp(text, template)` / `to_date`: reads the fields the
/// template names (separators in the template match any run of
/// non-alphanumeric characters in the input); returns µs since 2000-01-01.
/// Out-of-range fields are 22008 as in PostgreSQL.
pub fn parse_timestamp(input: &str, fmt: &str) -> PgResult<i64> {
    let ib = input.as_bytes();
    let fb = fmt.as_bytes();
    let (mut ii, mut fi) = (0usize, 0usize);
    let mut year: Option<i64> = None;
    let (mut month, mut day) = (1u32, 1u32);
    let (mut hour, mut minute, mut second, mut micro) = (0i64, 0i64, 0i64, 0i64);
    let mut pm: Option<bool> = None;
    let mut hour12 = false;
    let mut doy: Option<i64> = None;
    let read_num = |ii: &mut usize, max: usize| -> Option<i64> {
        while *ii < ib.len() && ib[*ii] == b' ' {
            *ii += 1;
        }
        let neg = *ii < ib.len() && ib[*ii] == b'-';
        if neg {
            *ii += 1;
        }
        let start = *ii;
        while *ii < ib.len() && *ii - start < max && ib[*ii].is_ascii_digit() {
            *ii += 1;
        }
        if *ii == start {
            return None;
        }
        let v: i64 = input[start..*ii].parse().ok()?;
        Some(if neg { -v } else { v })
    };
    while fi < fb.len() {
        let rest = &fmt[fi..];
        let rest = rest
            .strip_prefix("FM")
            .or_else(|| rest.strip_prefix("fm"))
            .unwrap_or(rest);
        fi = fmt.len() - rest.len();
        if rest.is_empty() {
            // A trailing FM modifies nothing.
            break;
        }
        let Some(p) = PATTERNS.iter().find(|p| rest.starts_with(**p)) else {
            let c = fb[fi];
            fi += rest.chars().next().map_or(1, char::len_utf8);
            if c == b'"' {
                while fi < fb.len() && fb[fi] != b'"' {
                    fi += 1;
                    ii += 1;
                }
                fi += 1;
                continue;
            }
            // A separator or literal: skip one input character if it is not alphanumeric.
            if ii < ib.len() && (!ib[ii].is_ascii_alphanumeric() || ib[ii] == c) {
                ii += 1;
            }
            continue;
        };
        fi += p.len();
        if fmt[fi..].starts_with("TH") || fmt[fi..].starts_with("th") {
            fi += 2;
        }
        // Skip separators in the input before a field.
        while ii < ib.len() && !ib[ii].is_ascii_alphanumeric() && ib[ii] != b'-' {
            ii += 1;
        }
        let here = ii;
        let bad = || to_date_error(input.get(here..).unwrap_or(""));
        match *p {
            "YYYY" | "IYYY" => year = Some(read_num(&mut ii, 9).ok_or_else(bad)?),
            "Y,YYY" => {
                let a = read_num(&mut ii, 3).ok_or_else(bad)?;
                if ii < ib.len() && ib[ii] == b',' {
                    ii += 1;
                }
                let b2 = read_num(&mut ii, 3).ok_or_else(bad)?;
                year = Some(a * 1000 + b2);
            }
            "YYY" | "IYY" => {
                let v = read_num(&mut ii, 3).ok_or_else(bad)?;
                year = Some(if v < 100 { v + 2000 } else { v + 1000 });
            }
            "YY" | "IY" => {
                let v = read_num(&mut ii, 2).ok_or_else(bad)?;
                year = Some(if v < 70 { 2000 + v } else { 1900 + v });
            }
            "Y" => year = Some(2000 + read_num(&mut ii, 1).ok_or_else(bad)?),
            "MM" => month = read_num(&mut ii, 2).ok_or_else(bad)? as u32,
            "DD" => day = read_num(&mut ii, 2).ok_or_else(bad)? as u32,
            "DDD" => doy = Some(read_num(&mut ii, 3).ok_or_else(bad)?),
            "HH24" => hour = read_num(&mut ii, 2).ok_or_else(bad)?,
            "HH" | "HH12" => {
                hour = read_num(&mut ii, 2).ok_or_else(bad)?;
                hour12 = true;
            }
            "MI" => minute = read_num(&mut ii, 2).ok_or_else(bad)?,
            "SS" => second = read_num(&mut ii, 2).ok_or_else(bad)?,
            "MS" => micro = read_num(&mut ii, 3).ok_or_else(bad)? * 1000,
            "US" => micro = read_num(&mut ii, 6).ok_or_else(bad)?,
            "SSSS" | "SSSSS" => {
                let s = read_num(&mut ii, 5).ok_or_else(bad)?;
                hour = s / 3600;
                minute = s / 60 % 60;
                second = s % 60;
            }
            "AM" | "PM" | "am" | "pm" | "A.M." | "P.M." | "a.m." | "p.m." => {
                let word: String = input
                    .get(ii..)
                    .unwrap_or("")
                    .chars()
                    .take(p.len())
                    .collect::<String>()
                    .to_ascii_lowercase();
                pm = Some(word.starts_with('p'));
                if !(word.starts_with('a') || word.starts_with('p')) {
                    return Err(bad());
                }
                ii += word.len();
            }
            "MONTH" | "Month" | "month" | "MON" | "Mon" | "mon" => {
                let lower = input.get(ii..).unwrap_or("").to_ascii_lowercase();
                let full = p.len() > 3;
                let found = MONTHS.iter().enumerate().find_map(|(k, m)| {
                    let m = m.to_ascii_lowercase();
                    if full && lower.starts_with(&m) {
                        Some((k, m.len()))
                    } else if lower.starts_with(&m[..3]) {
                        Some((k, 3))
                    } else {
                        None
                    }
                });
                let (k, len) = found.ok_or_else(bad)?;
                month = k as u32 + 1;
                ii += len;
            }
            "DAY" | "Day" | "day" | "DY" | "Dy" | "dy" => {
                let lower = input.get(ii..).unwrap_or("").to_ascii_lowercase();
                let full = p.len() > 2;
                let len = DAYS
                    .iter()
                    .find_map(|d| {
                        let d = d.to_ascii_lowercase();
                        if full && lower.starts_with(&d) {
                            Some(d.len())
                        } else if lower.starts_with(&d[..3]) {
                            Some(3)
                        } else {
                            None
                        }
                    })
                    .ok_or_else(bad)?;
                ii += len;
            }
            "D" | "ID" | "Q" | "W" | "WW" | "IW" | "CC" => {
                read_num(&mut ii, 2).ok_or_else(bad)?;
            }
            "J" => {
                let j = read_num(&mut ii, 8).ok_or_else(bad)?;
                let (y, m, d) = datetime::civil_from_days(
                    j - 2_451_545 + datetime::days_from_civil(2000, 1, 1),
                );
                year = Some(y);
                month = m;
                day = d;
            }
            _ => {}
        }
    }
    if hour12 {
        if !(1..=12).contains(&hour) {
            return Err(PgError::new(
                sqlstate::DATETIME_FIELD_OVERFLOW,
                format!("hour \"{hour}\" is invalid for the 12-hour clock"),
            )
            .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
        }
        hour %= 12;
    }
    if pm == Some(true) && hour < 12 {
        hour += 12;
    }
    let y = year.unwrap_or(1);
    let out_of_range = || {
        PgError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("date/time field value out of range: \"{input}\""),
        )
    };
    if let Some(n) = doy {
        let base = datetime::date_from_parts(y, 1, 1) + n - 1;
        let (_, m, d) = datetime::civil_from_days(base + datetime::days_from_civil(2000, 1, 1));
        month = m;
        day = d;
    }
    if !(1..=12).contains(&month)
        || day < 1
        || day > datetime::month_days(y, month)
        || !(0..=24).contains(&hour)
        || !(0..60).contains(&minute)
        || !(0..=60).contains(&second)
    {
        return Err(out_of_range());
    }
    let days = datetime::date_from_parts(y, month, day);
    let t = days
        .checked_mul(USECS_PER_DAY)
        .and_then(|t| t.checked_add(((hour * 60 + minute) * 60 + second) * USECS_PER_SEC + micro))
        .ok_or_else(out_of_range)?;
    if !datetime::timestamp_in_range(t) {
        return Err(PgError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "timestamp out of range",
        ));
    }
    Ok(t)
}

/// One element of a number template.
#[derive(Clone, Debug, PartialEq)]
enum NumTok {
    Nine,
    Zero,
    Point,
    Comma,
    /// S: `+`/`-` next to the number.
    Sign,
    /// MI: `-` or a space at this position.
    Minus,
    /// PL: `+` or a space at this position (the minus keeps its default place).
    Plus,
    /// SG: `+` or `-` at this position.
    SignAt,
    /// PR: angle brackets around a negative number.
    Brackets,
    Literal(String),
}

fn parse_number_template(fmt: &str) -> PgResult<(Vec<NumTok>, bool)> {
    let mut toks = Vec::new();
    let mut fill = false;
    let b = fmt.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &fmt[i..];
        let up = rest.to_ascii_uppercase();
        let (tok, len) = if up.starts_with("FM") {
            fill = true;
            i += 2;
            continue;
        } else if up.starts_with("PR") {
            (NumTok::Brackets, 2)
        } else if up.starts_with("MI") {
            (NumTok::Minus, 2)
        } else if up.starts_with("PL") {
            (NumTok::Plus, 2)
        } else if up.starts_with("SG") {
            (NumTok::SignAt, 2)
        } else if up.starts_with("EEEE") || up.starts_with("RN") {
            return Err(PgError::unsupported(format!(
                "number format pattern \"{}\" is not supported",
                &rest[..if up.starts_with("RN") { 2 } else { 4 }]
            )));
        } else {
            match b[i] {
                b'9' => (NumTok::Nine, 1),
                b'0' => (NumTok::Zero, 1),
                b'.' | b'D' | b'd' => (NumTok::Point, 1),
                b',' | b'G' | b'g' => (NumTok::Comma, 1),
                b'S' | b's' => (NumTok::Sign, 1),
                b'V' | b'v' | b'L' | b'l' => {
                    return Err(PgError::unsupported(format!(
                        "number format pattern \"{}\" is not supported",
                        b[i] as char
                    )))
                }
                b'"' => {
                    let end = fmt[i + 1..]
                        .find('"')
                        .map(|p| p + i + 1)
                        .unwrap_or(fmt.len());
                    toks.push(NumTok::Literal(fmt[i + 1..end].to_string()));
                    i = end + 1;
                    continue;
                }
                _ => {
                    let c = rest.chars().next().unwrap_or(' ');
                    (NumTok::Literal(c.to_string()), c.len_utf8())
                }
            }
        };
        toks.push(tok);
        i += len;
    }
    Ok((toks, fill))
}

/// The digits of a number to format: sign, integer digits (no leading
/// zeros) and exactly `post` fraction digits, already rounded.
pub struct NumDigits {
    /// True for a negative value (after rounding, -0 is not negative).
    pub negative: bool,
    /// Integer digits without leading zeros ("" for zero).
    pub int: String,
    /// Fraction digits, `post` of them.
    pub frac: String,
}

/// Digits of a numeric rounded to `post` places.
pub fn numeric_digits(n: Numeric, post: usize) -> PgResult<NumDigits> {
    let r = n.rescale(post as u16)?;
    let s = r.to_string();
    Ok(split_digits(&s, post))
}

/// Digits of a float8 rounded to `post` places. Unlike numeric, a negative
/// float8 that rounds to zero keeps its sign (`-0`), as in PostgreSQL.
pub fn float_digits(f: f64, post: usize) -> NumDigits {
    // float8 carries 15 significant digits (DBL_DIG): fraction digits past
    // them print as zeros.
    let pre_len = format!("{:.0}", f.abs()).len();
    let eff = post.min(15usize.saturating_sub(pre_len));
    let mut d = split_digits(&format!("{f:.eff$}"), post);
    d.negative = f < 0.0;
    d
}

fn split_digits(s: &str, post: usize) -> NumDigits {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let (int, frac) = match body.split_once('.') {
        Some((a, b)) => (a, b),
        None => (body, ""),
    };
    let int = int.trim_start_matches('0').to_string();
    let mut frac = frac.to_string();
    while frac.len() < post {
        frac.push('0');
    }
    let zero = int.is_empty() && frac.bytes().all(|c| c == b'0');
    NumDigits {
        negative: neg && !zero,
        int,
        frac,
    }
}

/// Counts the digit positions after the decimal point of a template.
pub fn number_template_scale(fmt: &str) -> PgResult<usize> {
    let (toks, _) = parse_number_template(fmt)?;
    let mut seen_point = false;
    let mut post = 0;
    for t in &toks {
        match t {
            NumTok::Point => seen_point = true,
            NumTok::Nine | NumTok::Zero if seen_point => post += 1,
            _ => {}
        }
    }
    Ok(post)
}

/// `to_char(number, template)` given the value's digits (rounded to the
/// template's scale, see [`number_template_scale`]).
pub fn format_number(d: &NumDigits, fmt: &str) -> PgResult<String> {
    let (toks, fill) = parse_number_template(fmt)?;
    let pre = toks
        .iter()
        .take_while(|t| **t != NumTok::Point)
        .filter(|t| matches!(t, NumTok::Nine | NumTok::Zero))
        .count();
    let has_point = toks.contains(&NumTok::Point);
    let explicit_sign = toks.iter().any(|t| {
        matches!(
            t,
            NumTok::Sign | NumTok::Minus | NumTok::SignAt | NumTok::Brackets
        )
    });
    let mut int = d.int.clone();
    let post_digits = toks
        .iter()
        .skip_while(|t| **t != NumTok::Point)
        .filter(|t| matches!(t, NumTok::Nine | NumTok::Zero))
        .count();
    if int.is_empty() && post_digits == 0 {
        int = "0".to_string();
    }
    // A zero integer part still needs one position (`.99` cannot show 0.5).
    let overflow = int.len().max(1) > pre;
    // The first integer position that prints a digit or a forced zero.
    let zero_from = toks
        .iter()
        .filter(|t| matches!(t, NumTok::Nine | NumTok::Zero))
        .take(pre)
        .position(|t| *t == NumTok::Zero)
        .unwrap_or(pre);
    let first_digit = pre.saturating_sub(int.len()).min(zero_from);
    // Pieces of output; `start` marks where the number's first visible
    // character is, where a default or S sign goes.
    let mut out: Vec<String> = Vec::new();
    let mut start: Option<usize> = None;
    // A leading S: its sign goes next to the number, like the default one.
    let mut lead_sign: Option<String> = None;
    let mut int_pos = 0usize;
    let mut frac_pos = 0usize;
    let mut after_point = false;
    let int_bytes = int.as_bytes();
    let frac_len_kept = if fill {
        // FM drops trailing fraction zeros that come from 9 positions.
        let frac_toks: Vec<&NumTok> = toks
            .iter()
            .skip_while(|t| **t != NumTok::Point)
            .filter(|t| matches!(t, NumTok::Nine | NumTok::Zero))
            .collect();
        let mut keep = d.frac.len().min(frac_toks.len());
        while keep > 0
            && d.frac.as_bytes()[keep - 1] == b'0'
            && *frac_toks[keep - 1] == NumTok::Nine
        {
            keep -= 1;
        }
        keep
    } else {
        usize::MAX
    };
    for t in &toks {
        match t {
            NumTok::Nine | NumTok::Zero if !after_point => {
                let piece = if overflow {
                    "#".to_string()
                } else if int_pos >= first_digit {
                    if int_pos + int.len() >= pre {
                        (int_bytes[int_pos + int.len() - pre] as char).to_string()
                    } else {
                        "0".to_string()
                    }
                } else if fill {
                    String::new()
                } else {
                    " ".to_string()
                };
                if start.is_none() && !piece.trim().is_empty() {
                    start = Some(out.len());
                }
                out.push(piece);
                int_pos += 1;
            }
            NumTok::Nine | NumTok::Zero => {
                let piece = if overflow {
                    "#".to_string()
                } else if frac_pos < frac_len_kept {
                    d.frac
                        .as_bytes()
                        .get(frac_pos)
                        .map(|c| (*c as char).to_string())
                        .unwrap_or_default()
                } else {
                    String::new()
                };
                out.push(piece);
                frac_pos += 1;
            }
            NumTok::Point => {
                after_point = true;
                if start.is_none() {
                    start = Some(out.len());
                }
                // Without fraction positions the point is dropped, unless
                // the value overflowed; FM keeps it even when every
                // fraction digit was trimmed, and then shows a lone 0.
                let piece = if overflow {
                    "."
                } else if post_digits == 0 {
                    ""
                } else {
                    if fill
                        && frac_len_kept == 0
                        && !out.iter().any(|p| p.bytes().any(|c| c.is_ascii_digit()))
                    {
                        start = Some(out.len());
                        out.push("0".to_string());
                    }
                    "."
                };
                out.push(piece.to_string());
            }
            NumTok::Comma => {
                let piece = if int_pos > first_digit || overflow || after_point {
                    ",".to_string()
                } else if fill {
                    String::new()
                } else {
                    " ".to_string()
                };
                out.push(piece);
            }
            NumTok::Sign => {
                // S before any digit: it sits next to the number; after: here.
                let c = if d.negative { "-" } else { "+" };
                if int_pos == 0 && !after_point {
                    lead_sign = Some(c.to_string());
                } else {
                    out.push(c.to_string());
                }
            }
            NumTok::Minus => out.push(
                if d.negative {
                    "-"
                } else if fill {
                    ""
                } else {
                    " "
                }
                .to_string(),
            ),
            NumTok::Plus => out.push((if d.negative { " " } else { "+" }).to_string()),
            NumTok::SignAt => out.push((if d.negative { "-" } else { "+" }).to_string()),
            NumTok::Brackets => out.push(String::new()),
            NumTok::Literal(s) => out.push(s.clone()),
        }
    }
    // Place a leading S sign or the default sign slot next to the number.
    let sign_char: Option<String> = if let Some(c) = lead_sign {
        Some(c)
    } else if toks.contains(&NumTok::Brackets) {
        None
    } else if !explicit_sign {
        Some(
            if d.negative {
                "-"
            } else if fill {
                ""
            } else {
                " "
            }
            .to_string(),
        )
    } else {
        None
    };
    let at = start.unwrap_or(out.len());
    if let Some(c) = sign_char {
        out.insert(at, c);
    }
    if toks.contains(&NumTok::Brackets) {
        let (open, close) = if d.negative {
            ("<", ">")
        } else if fill {
            ("", "")
        } else {
            (" ", " ")
        };
        out.insert(at, open.to_string());
        out.push(close.to_string());
    }
    let _ = has_point;
    Ok(out.concat())
}

/// `to_number(text, template)`: keeps the digits, the template's decimal
/// point and a sign (`-`, or `<…>` with PR), and reads them as numeric.
pub fn parse_number(s: &str, fmt: &str) -> PgResult<Numeric> {
    let (toks, _) = parse_number_template(fmt)?;
    let post = number_template_scale(fmt)?;
    let mut digits = String::new();
    let mut negative = false;
    let mut seen_point = false;
    for c in s.chars() {
        match c {
            '0'..='9' => digits.push(c),
            '.' if toks.contains(&NumTok::Point) && !seen_point => {
                seen_point = true;
                digits.push('.');
            }
            '-' | '<' => negative = true,
            _ => {}
        }
    }
    if digits.is_empty() || digits == "." {
        return Err(PgError::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type numeric: \"{s}\""),
        ));
    }
    let text = if negative {
        format!("-{digits}")
    } else {
        digits
    };
    let n = match Numeric::parse(&text) {
        Some(r) => r?,
        None => {
            return Err(PgError::new(
                sqlstate::INVALID_TEXT_REPRESENTATION,
                format!("invalid input syntax for type numeric: \"{text}\""),
            ))
        }
    };
    if n.scale() as usize > post {
        return n.rescale(post as u16);
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(v: &str, fmt: &str) -> String {
        let post = number_template_scale(fmt).unwrap();
        let n = Numeric::parse(v).unwrap().unwrap();
        format!(
            "[{}]",
            format_number(&numeric_digits(n, post).unwrap(), fmt).unwrap()
        )
    }

    proptest::proptest! {
        #[test]
        fn templates_never_panic(fmt in ".{0,12}", input in ".{0,12}", t in any_ts(), v in -1e9f64..1e9) {
            let _ = format_timestamp(t, true, &fmt);
            let _ = parse_timestamp(&input, &fmt);
            let _ = parse_number(&input, &fmt);
            if let Ok(post) = number_template_scale(&fmt) {
                let _ = format_number(&float_digits(v, post.min(20)), &fmt);
            }
        }
    }

    /// A template ending in the FM modifier (found by the proptest above).
    #[test]
    fn trailing_fm_parses() {
        for fmt in ["fm", "FM", "YYYYFM", "9FM"] {
            let _ = parse_timestamp("", fmt);
            let _ = parse_timestamp("2024", fmt);
            let _ = parse_number("", fmt);
        }
    }

    fn any_ts() -> impl proptest::strategy::Strategy<Value = i64> {
        -211_813_488_000_000_000i64..9_223_371_331_200_000_000
    }

    #[test]
    fn numbers_match_postgres() {
        // Each from PostgreSQL 15: select '[' || to_char(v, fmt) || ']'.
        for (v, fmt, want) in [
            ("5", "999", "[   5]"),
            ("-5", "999", "[  -5]"),
            ("1234.567", "9999.99", "[ 1234.57]"),
            ("1234.567", "9,999.99", "[ 1,234.57]"),
            ("-1234.567", "FM9,999.99", "[-1,234.57]"),
            ("12345", "999", "[ ###]"),
            ("0.5", "0.99", "[ 0.50]"),
            ("0.5", "9.99", "[  .50]"),
            ("5", "000", "[ 005]"),
            ("-5", "S999", "[  -5]"),
            ("5", "S999", "[  +5]"),
            ("-5", "999PR", "[  <5>]"),
            ("5", "999PR", "[   5 ]"),
            ("-5", "999MI", "[  5-]"),
            ("5", "999MI", "[  5 ]"),
            ("1234.5", "FM999999.00", "[1234.50]"),
            ("1234.5", "FM999999.99", "[1234.5]"),
            ("1234.5", "9G999D99", "[ 1,234.50]"),
            ("0", "999", "[   0]"),
            ("0", "FM999", "[0]"),
            ("0.25", "FM9.9", "[.3]"),
            ("1.5", "FM9", "[2]"),
            ("-0.1", "FM990.0", "[-0.1]"),
            ("123", "FM9999.", "[123]"),
            ("-12", "SG999", "[- 12]"),
            ("485", "\"Total: \"999", "[Total:  485]"),
            ("1485", "9 9 9 9", "[ 1 4 8 5]"),
        ] {
            assert_eq!(num(v, fmt), want, "to_char({v}, '{fmt}')");
        }
    }

    #[test]
    fn timestamps_match_postgres() {
        let t = |s: &str| datetime::parse_timestamp(s, false).unwrap();
        let f = |s: &str, fmt: &str| format_timestamp(t(s), false, fmt).unwrap();
        assert_eq!(
            f("2024-03-05 14:07:09.123456", "YYYY-MM-DD HH24:MI:SS.MS.US"),
            "2024-03-05 14:07:09.123.123456"
        );
        assert_eq!(
            f("2024-03-05 14:07:09", "Mon Month Dy Day DD FMMonth FMDay"),
            "Mar March     Tue Tuesday   05 March Tuesday"
        );
        assert_eq!(
            f(
                "2024-03-05 04:07:09",
                "HH HH12 AM am P.M. Q WW IW D DDD J YY Y YYY"
            ),
            "04 04 AM am A.M. 1 10 10 3 065 2460375 24 4 024"
        );
        assert_eq!(
            f(
                "2024-03-05 00:07:09",
                "HH12 \"quoted\" \\\"x MONTH MON DAY DY mon day dy FMDD FMHH24 TZ"
            ),
            "12 quoted \"x MARCH     MAR TUESDAY   TUE mar tuesday   tue 5 0 "
        );
        assert_eq!(
            format_timestamp(t("2024-03-05 00:07:09"), true, "YYYY TZ OF").unwrap(),
            "2024 UTC +00"
        );
        assert_eq!(f("2024-03-01", "DDth DDTH FMDDth"), "01st 01ST 1st");
        assert_eq!(f("2024-03-22", "FMDDth"), "22nd");
        assert_eq!(f("2024-03-11", "FMDDth"), "11th");
        let p = |s: &str, fmt: &str| {
            datetime::format_timestamp(parse_timestamp(s, fmt).unwrap(), false)
        };
        assert_eq!(p("05 Mar 2024", "DD Mon YYYY"), "2024-03-05 00:00:00");
        assert_eq!(
            p("2024-03-05 14:07:09", "YYYY-MM-DD HH24:MI:SS"),
            "2024-03-05 14:07:09"
        );
        assert_eq!(
            parse_timestamp("2024-13-05", "YYYY-MM-DD")
                .unwrap_err()
                .message,
            "date/time field value out of range: \"2024-13-05\""
        );
        assert_eq!(
            parse_number("12,345.67", "99G999D99").unwrap().to_string(),
            "12345.67"
        );
        assert_eq!(parse_number("-12.5", "999.9").unwrap().to_string(), "-12.5");
    }
}
