//! Errors as the client sees them: a SQLSTATE, a message and optional detail
//! and hint, sent as an ErrorResponse (or NoticeResponse for warnings).
//! Lower layers have their own `thiserror` enums and convert into [`PgError`]
//! at the SQL boundary. An error is logged where it is handled, once.

use std::fmt;

/// PostgreSQL's SQLSTATE codes used by hotpair.
pub mod sqlstate {
    pub const SUCCESSFUL_COMPLETION: &str = "00000";
    pub const WARNING: &str = "01000";
    /// 01007 privilege_not_granted
    pub const WARNING_PRIVILEGE_NOT_GRANTED: &str = "01007";
    /// 01006 privilege_not_revoked
    pub const WARNING_PRIVILEGE_NOT_REVOKED: &str = "01006";
    /// 0LP01 invalid_grant_operation
    pub const INVALID_GRANT_OPERATION: &str = "0LP01";
    pub const NO_ACTIVE_SQL_TRANSACTION: &str = "25P01";
    pub const ACTIVE_SQL_TRANSACTION: &str = "25001";
    pub const INVALID_TRANSACTION_TERMINATION: &str = "2D000";
    pub const IN_FAILED_SQL_TRANSACTION: &str = "25P02";
    pub const READ_ONLY_SQL_TRANSACTION: &str = "25006";
    pub const INVALID_TRANSACTION_STATE: &str = "25000";
    pub const SYNTAX_ERROR: &str = "42601";
    pub const UNDEFINED_TABLE: &str = "42P01";
    pub const UNDEFINED_COLUMN: &str = "42703";
    pub const UNDEFINED_FUNCTION: &str = "42883";
    /// 42P13 invalid_function_definition.
    pub const INVALID_FUNCTION_DEFINITION: &str = "42P13";
    /// 42725 ambiguous_function.
    pub const AMBIGUOUS_FUNCTION: &str = "42725";
    /// 20000 case_not_found (PL/pgSQL CASE without a match or ELSE).
    pub const CASE_NOT_FOUND: &str = "20000";
    /// P0004 assert_failure.
    pub const ASSERT_FAILURE: &str = "P0004";
    /// 42723 duplicate_function.
    pub const DUPLICATE_FUNCTION: &str = "42723";
    /// P0001 raise_exception (PL/pgSQL RAISE EXCEPTION without a code).
    pub const RAISE_EXCEPTION: &str = "P0001";
    /// P0002 no_data_found (SELECT INTO STRICT without a row).
    pub const NO_DATA_FOUND: &str = "P0002";
    /// P0003 too_many_rows (SELECT INTO STRICT with several rows).
    pub const TOO_MANY_ROWS: &str = "P0003";
    /// 2F005 function_executed_no_return_statement.
    pub const NO_RETURN_STATEMENT: &str = "2F005";
    pub const UNDEFINED_OBJECT: &str = "42704";
    /// 3D000 invalid_catalog_name (a database that does not exist).
    pub const UNDEFINED_DATABASE: &str = "3D000";
    pub const DUPLICATE_TABLE: &str = "42P07";
    /// 42P06 duplicate_schema
    pub const DUPLICATE_SCHEMA: &str = "42P06";
    /// 3F000 invalid_schema_name
    pub const INVALID_SCHEMA_NAME: &str = "3F000";
    pub const DUPLICATE_OBJECT: &str = "42710";
    pub const DUPLICATE_COLUMN: &str = "42701";
    pub const AMBIGUOUS_COLUMN: &str = "42702";
    pub const DATATYPE_MISMATCH: &str = "42804";
    pub const GROUPING_ERROR: &str = "42803";
    pub const INVALID_PARAMETER_VALUE: &str = "22023";
    /// 22004 null_value_not_allowed
    pub const NULL_VALUE_NOT_ALLOWED: &str = "22004";
    pub const UNDEFINED_PARAMETER: &str = "42704";
    pub const CANT_CHANGE_RUNTIME_PARAM: &str = "55P02";
    pub const INVALID_TEXT_REPRESENTATION: &str = "22P02";
    pub const INVALID_BINARY_REPRESENTATION: &str = "22P03";
    pub const NUMERIC_VALUE_OUT_OF_RANGE: &str = "22003";
    pub const DIVISION_BY_ZERO: &str = "22012";
    pub const STRING_DATA_RIGHT_TRUNCATION: &str = "22001";
    pub const INVALID_DATETIME_FORMAT: &str = "22007";
    pub const DATETIME_FIELD_OVERFLOW: &str = "22008";
    pub const ARRAY_SUBSCRIPT_ERROR: &str = "2202E";
    pub const DATA_EXCEPTION: &str = "22000";
    pub const PROGRAM_LIMIT_EXCEEDED: &str = "54000";
    /// invalid_name
    pub const INVALID_NAME: &str = "42602";
    pub const INVALID_REGULAR_EXPRESSION: &str = "2201B";
    pub const INVALID_ESCAPE_SEQUENCE: &str = "22025";
    pub const CHARACTER_NOT_IN_REPERTOIRE: &str = "22021";
    /// untranslatable_character (`\u0000` in jsonb).
    pub const UNTRANSLATABLE_CHARACTER: &str = "22P05";
    /// statement_too_complex (nesting too deep).
    pub const STATEMENT_TOO_COMPLEX: &str = "54001";
    pub const BAD_COPY_FILE_FORMAT: &str = "22P04";
    pub const NOT_NULL_VIOLATION: &str = "23502";
    /// foreign_key_violation
    pub const FOREIGN_KEY_VIOLATION: &str = "23503";
    /// generated_always
    pub const GENERATED_ALWAYS: &str = "428C9";
    /// invalid_foreign_key
    pub const INVALID_FOREIGN_KEY: &str = "42830";
    /// check_violation
    pub const CHECK_VIOLATION: &str = "23514";
    /// sequence_generator_limit_exceeded
    pub const SEQUENCE_GENERATOR_LIMIT_EXCEEDED: &str = "2200H";
    pub const UNIQUE_VIOLATION: &str = "23505";
    pub const CARDINALITY_VIOLATION: &str = "21000";
    pub const INVALID_COLUMN_REFERENCE: &str = "42P10";
    pub const INVALID_TABLE_DEFINITION: &str = "42P16";
    /// 42P17: invalid_object_definition (a view that reaches itself).
    pub const INVALID_OBJECT_DEFINITION: &str = "42P17";
    /// 42809: wrong_object_type (DROP VIEW of a table, SET CONSTRAINTS of a
    /// constraint that is not deferrable).
    pub const WRONG_OBJECT_TYPE: &str = "42809";
    pub const SERIALIZATION_FAILURE: &str = "40001";
    /// 72000: snapshot_too_old (old_snapshot_threshold).
    pub const SNAPSHOT_TOO_OLD: &str = "72000";
    pub const DEADLOCK_DETECTED: &str = "40P01";
    pub const QUERY_CANCELED: &str = "57014";
    /// idle_in_transaction_session_timeout.
    pub const IDLE_IN_TRANSACTION_SESSION_TIMEOUT: &str = "25P03";
    /// lock_not_available (lock_timeout expired).
    pub const LOCK_NOT_AVAILABLE: &str = "55P03";
    pub const ADMIN_SHUTDOWN: &str = "57P01";
    pub const CANNOT_CONNECT_NOW: &str = "57P03";
    /// 28000 invalid_authorization_specification (no pg_hba.conf entry,
    /// role may not log in).
    pub const INVALID_AUTHORIZATION_SPECIFICATION: &str = "28000";
    /// 28P01: password authentication failed.
    pub const INVALID_PASSWORD: &str = "28P01";
    /// 42501: permission denied.
    pub const INSUFFICIENT_PRIVILEGE: &str = "42501";
    /// 55006: object in use (DROP ROLE of the current user).
    pub const OBJECT_IN_USE: &str = "55006";
    /// 42939: reserved_name (role names starting with pg_).
    pub const RESERVED_NAME: &str = "42939";
    /// 2BP01: dependent_objects_still_exist.
    pub const DEPENDENT_OBJECTS_STILL_EXIST: &str = "2BP01";
    /// F0000: config_file_error (a faulty pg_hba.conf).
    pub const CONFIG_FILE_ERROR: &str = "F0000";
    pub const TOO_MANY_CONNECTIONS: &str = "53300";
    pub const OUT_OF_MEMORY: &str = "53200";
    pub const DISK_FULL: &str = "53100";
    /// 53400: configuration_limit_exceeded (temp_file_limit, no unpinned buffers).
    pub const CONFIGURATION_LIMIT_EXCEEDED: &str = "53400";
    pub const PROTOCOL_VIOLATION: &str = "08P01";
    pub const CONNECTION_FAILURE: &str = "08006";
    pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
    pub const OBJECT_NOT_IN_PREREQUISITE_STATE: &str = "55000";
    pub const INVALID_SQL_STATEMENT_NAME: &str = "26000";
    pub const INVALID_CURSOR_NAME: &str = "34000";
    pub const DUPLICATE_PREPARED_STATEMENT: &str = "42P05";
    pub const DUPLICATE_CURSOR: &str = "42P03";
    pub const INTERNAL_ERROR: &str = "XX000";
    pub const DATA_CORRUPTED: &str = "XX001";
    pub const IO_ERROR: &str = "58030";
}

/// Severity of an ErrorResponse / NoticeResponse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Ends the connection.
    Fatal,
    /// Ends the statement.
    Error,
    /// A NoticeResponse.
    Warning,
    /// A NoticeResponse.
    Notice,
}

impl Severity {
    /// The word sent in the `S` and `V` fields.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Fatal => "FATAL",
            Severity::Error => "ERROR",
            Severity::Warning => "WARNING",
            Severity::Notice => "NOTICE",
        }
    }
}

/// An error (or notice) as sent to the client: its fields
/// ([`PgErrorFields`]) behind one pointer, so that a `PgResult` is hardly
/// larger than its value — every call on the executor's per-row path
/// returns one, and a 112-byte error inline made each of them a copy of
/// that size. Fields read and write through `Deref`.
#[derive(Clone, PartialEq, Eq)]
pub struct PgError(Box<PgErrorFields>);

impl std::ops::Deref for PgError {
    type Target = PgErrorFields;
    fn deref(&self) -> &PgErrorFields {
        &self.0
    }
}

impl std::ops::DerefMut for PgError {
    fn deref_mut(&mut self) -> &mut PgErrorFields {
        &mut self.0
    }
}

impl fmt::Debug for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PgError {
    /// The fields, by value (to move the message or detail out).
    pub fn into_fields(self) -> PgErrorFields {
        *self.0
    }
}

impl From<PgErrorFields> for PgError {
    fn from(f: PgErrorFields) -> PgError {
        PgError(Box::new(f))
    }
}

/// The fields of a [`PgError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgErrorFields {
    /// ERROR, FATAL, WARNING, NOTICE.
    pub severity: Severity,
    /// Five-character SQLSTATE, see [`sqlstate`].
    pub code: &'static str,
    /// Primary message, lower case, no trailing period (PostgreSQL style).
    pub message: String,
    /// Optional DETAIL line.
    pub detail: Option<String>,
    /// Optional HINT line.
    pub hint: Option<String>,
    /// Optional cursor position (`P`): 1-based character index into the
    /// query string, which psql turns into its `LINE 1: …` / `^` lines.
    pub position: Option<u32>,
    /// Optional CONTEXT lines (`W`): where a function was when it failed,
    /// innermost first, one per line (behind one pointer: errors travel
    /// in every `Result`, so the struct stays small).
    pub context: Option<Box<ErrorContext>>,
}

/// The CONTEXT lines of a [`PgError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorContext(pub String);

impl PgError {
    /// An ERROR with this SQLSTATE and message.
    pub fn new(code: &'static str, message: impl Into<String>) -> PgError {
        PgError(Box::new(PgErrorFields {
            severity: Severity::Error,
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
            context: None,
        }))
    }
    /// A FATAL error (the connection ends after it is sent).
    pub fn fatal(code: &'static str, message: impl Into<String>) -> PgError {
        let mut e = PgError::new(code, message);
        e.severity = Severity::Fatal;
        e
    }
    /// A WARNING notice.
    pub fn warning(code: &'static str, message: impl Into<String>) -> PgError {
        let mut e = PgError::new(code, message);
        e.severity = Severity::Warning;
        e
    }
    /// A NOTICE.
    pub fn notice(code: &'static str, message: impl Into<String>) -> PgError {
        let mut e = PgError::new(code, message);
        e.severity = Severity::Notice;
        e
    }
    /// 42601 syntax error.
    pub fn syntax(message: impl Into<String>) -> PgError {
        PgError::new(sqlstate::SYNTAX_ERROR, message)
    }
    /// 0A000 feature not supported.
    pub fn unsupported(message: impl Into<String>) -> PgError {
        PgError::new(sqlstate::FEATURE_NOT_SUPPORTED, message)
    }
    /// XX000 internal error.
    pub fn internal(message: impl Into<String>) -> PgError {
        PgError::new(sqlstate::INTERNAL_ERROR, message)
    }
    /// 57014 "canceling statement due to user request".
    pub fn query_canceled() -> PgError {
        PgError::new(
            sqlstate::QUERY_CANCELED,
            "canceling statement due to user request",
        )
    }
    /// 57014 "canceling statement due to statement timeout".
    pub fn statement_timeout() -> PgError {
        PgError::new(
            sqlstate::QUERY_CANCELED,
            "canceling statement due to statement timeout",
        )
    }
    /// Adds a DETAIL line.
    pub fn with_detail(mut self, detail: impl Into<String>) -> PgError {
        self.detail = Some(detail.into());
        self
    }
    /// Appends a CONTEXT line (an outer frame's, after the inner ones).
    pub fn with_context(mut self, line: impl Into<String>) -> PgError {
        let line = line.into();
        self.context = Some(Box::new(ErrorContext(match self.context.take() {
            Some(c) => format!("{}\n{line}", c.0),
            None => line,
        })));
        self
    }
    /// The CONTEXT lines, if any.
    pub fn context(&self) -> Option<&str> {
        self.context.as_deref().map(|c| c.0.as_str())
    }
    /// Adds a HINT line.
    pub fn with_hint(mut self, hint: impl Into<String>) -> PgError {
        self.hint = Some(hint.into());
        self
    }
    /// Sets the cursor position (1-based, in characters of the query text).
    pub fn with_position(mut self, position: u32) -> PgError {
        self.position = Some(position);
        self
    }
    /// Moves a position computed within one statement of a multi-statement
    /// query string so it counts from the start of the whole string.
    pub fn shift_position(mut self, chars_before: u32) -> PgError {
        if let Some(p) = self.position.as_mut() {
            *p = p.saturating_add(chars_before);
        }
        self
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} ({})",
            self.severity.as_str(),
            self.message,
            self.code
        )
    }
}

impl std::error::Error for PgError {}

/// Result with a [`PgError`].
pub type PgResult<T> = Result<T, PgError>;
