//! Server log in PostgreSQL's line shape, on stderr:
//!
//! ```text
//! 2024-05-01 12:00:00.123 UTC [4242] LOG:  database system is ready to accept connections
//! ```
//!
//! tracing levels map to PostgreSQL's severities (INFO → LOG, WARN → WARNING,
//! ERROR → ERROR, or FATAL when the event carries `fatal = true` and PANIC
//! when it carries `panic = true` (`pgtypes::fileutil::panic_abort`), DEBUG →
//! DEBUG1, TRACE → DEBUG5). The filter comes from `RUST_LOG` when set (full
//! tracing directive syntax), else from `log_min_messages`, else `info`.
//! Structured fields other than `fatal` and `panic` follow the message as `name=value`.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. `log_min_messages` is the setting's value
/// if the configuration loaded; a reload applies a new value through
/// `server::reload::log_min_messages` (not when `RUST_LOG` set the filter).
pub fn init(log_min_messages: Option<&str>) {
    let from_env = std::env::var("RUST_LOG")
        .ok()
        .filter(|spec| !spec.trim().is_empty());
    let filter = match &from_env {
        Some(spec) => EnvFilter::new(spec),
        None => EnvFilter::new(level_for(log_min_messages.unwrap_or("info"))),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .event_format(PgLineFormat)
        .with_filter_reloading();
    let handle = builder.reload_handle();
    // try_init: a second call (never expected) must not panic.
    if builder.try_init().is_ok() && from_env.is_none() {
        server::reload::on_log_min_messages(Box::new(move |v| {
            let _ = handle.reload(EnvFilter::new(level_for(v)));
        }));
    }
}

/// PostgreSQL's `log_min_messages` words as a tracing level directive.
fn level_for(setting: &str) -> &'static str {
    match setting.trim().to_ascii_lowercase().as_str() {
        "debug5" | "debug4" | "debug3" => "trace",
        "debug2" | "debug1" | "debug" => "debug",
        "warning" => "warn",
        "error" | "fatal" | "panic" => "error",
        _ => "info",
    }
}

/// The event formatter producing PostgreSQL-like lines.
struct PgLineFormat;

impl<S, N> FormatEvent<S, N> for PgLineFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let severity = match *event.metadata().level() {
            Level::ERROR if fields.panic => "PANIC",
            Level::ERROR if fields.fatal => "FATAL",
            Level::ERROR => "ERROR",
            Level::WARN => "WARNING",
            Level::INFO => "LOG",
            Level::DEBUG => "DEBUG1",
            Level::TRACE => "DEBUG5",
        };
        write_timestamp(&mut writer, SystemTime::now())?;
        write!(
            writer,
            " [{}] {severity}:  {}",
            std::process::id(),
            fields.message
        )?;
        if !fields.rest.is_empty() {
            write!(writer, " {}", fields.rest)?;
        }
        writeln!(writer)
    }
}

/// The message, the `fatal` flag, and every other field as `k=v`.
#[derive(Default)]
struct Fields {
    message: String,
    fatal: bool,
    panic: bool,
    rest: String,
}

impl Visit for Fields {
    fn record_bool(&mut self, field: &Field, value: bool) {
        if field.name() == "fatal" {
            self.fatal = value;
        } else if field.name() == "panic" {
            self.panic = value;
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        use std::fmt::Write;
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            if !self.rest.is_empty() {
                self.rest.push(' ');
            }
            let _ = write!(self.rest, "{}={value:?}", field.name());
        }
    }
}

/// `YYYY-MM-DD HH:MM:SS.mmm UTC`, computed without a calendar crate.
fn write_timestamp(w: &mut Writer<'_>, now: SystemTime) -> fmt::Result {
    let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    write!(
        w,
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(19_844), (2024, 5, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn log_min_messages_levels() {
        assert_eq!(level_for("info"), "info");
        assert_eq!(level_for("DEBUG1"), "debug");
        assert_eq!(level_for("warning"), "warn");
        assert_eq!(level_for("bogus"), "info");
    }
}
