//! Sequences (PostgreSQL's `commands/sequence.c`): CREATE SEQUENCE's
//! definition in the catalog and the counter `nextval` advances.
//!
//! ## Logged ahead, never handed out twice
//!
//! `nextval` is not transactional: a value handed out stays used whatever
//! the transaction does. As in PostgreSQL, the counter is WAL-logged ahead
//! of use: when the values covered by the last record run out, `nextval`
//! logs (and flushes) a `CatalogChange::SetSequence` [`SEQ_LOG_VALS`]
//! values further on, then hands out values up to it without logging.
//! Redo (crash recovery, a standby) sets the counter to the logged value,
//! so after a crash or a promotion the next value lies past everything
//! the old primary could have handed out — at the price of a gap of up to
//! `SEQ_LOG_VALS` values, as in PostgreSQL. `setval` logs its value at once.
//!
//! The catalog file keeps the logged value ([`SequenceState::logged`]),
//! never the in-memory counter, for the same reason. A clean shutdown
//! logs the real counters first (`Catalog::settle_sequences`), so only a
//! crash or a promotion leaves the gap.
//!
//! ## ALTER SEQUENCE
//!
//! A definition never changes in place: `CatalogChange::AlterSequence`
//! replaces the [`SequenceDef`] with a new one whose counter is RESTART's
//! value (not called), else the old in-memory counter. That counter
//! becomes the new logged value, so the invariant holds across the
//! change: everything handed out is at or before it, and the next
//! `nextval` logs ahead again before handing out anything past it
//! (the old def's logged-ahead range is given up, as PostgreSQL resets
//! `log_cnt`). The change is applied under the old def's `nextval_lock`,
//! and the old def is marked [retired](SequenceDef::is_retired): a
//! `nextval` that found it before the change sees the mark once it has
//! the lock and starts again from the catalog's current def.
//!
//! While the altering transaction may roll back, the new def is marked
//! with its xid ([`SequenceDef::altered_by`]) and keeps the committed def
//! before it ([`SequenceDef::previous`], from [`SequenceSpec::previous`]:
//! logged and persisted), which other transactions see; undoing is one
//! more `AlterSequence` back to it (the session at ROLLBACK, start-up
//! after a crash: `crate::indexing::undo_sequence_alter`).
//!
//! Lock order: a sequence's `nextval_lock` → the catalog lock (taken by
//! the change); redo and the catalog touch only the atomics.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::{Oid, TransactionId};

/// How many values one WAL record covers (PostgreSQL's SEQ_LOG_VALS).
pub const SEQ_LOG_VALS: i64 = 32;

/// A sequence's definition (pg_sequence row plus its name and owner).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequenceSpec {
    /// OID.
    pub oid: Oid,
    /// Name.
    pub name: String,
    /// The schema's OID.
    pub namespace: Oid,
    /// Data type: int2, int4 or int8 (bounds the default MAXVALUE).
    pub ty: SqlType,
    /// INCREMENT BY (never 0).
    pub increment: i64,
    /// MINVALUE.
    pub min: i64,
    /// MAXVALUE.
    pub max: i64,
    /// START WITH.
    pub start: i64,
    /// CACHE (accepted; every value comes from the shared counter).
    pub cache: i64,
    /// CYCLE.
    pub cycle: bool,
    /// OWNED BY table.column (serial columns): dropped with the table.
    pub owned_by: Option<(String, String)>,
    /// The (sub)transaction that created it, until known committed.
    pub creator: TransactionId,
    /// The (sub)transaction of an ALTER SEQUENCE that may still roll back
    /// (INVALID: none); see [`SequenceDef::altered_by`].
    pub altered_by: TransactionId,
    /// With `altered_by`: the committed definition before that ALTER.
    pub previous: Option<Box<SequencePrevious>>,
}

/// What an uncommitted ALTER SEQUENCE replaced: the committed definition,
/// and the counter a ROLLBACK puts back — `None` when the ALTER did not
/// start a new counter (RENAME, SET SCHEMA, OWNED BY: as in PostgreSQL,
/// only a change that rewrites the sequence's data is undone with it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequencePrevious {
    /// The definition before the ALTER.
    pub spec: SequenceSpec,
    /// `(last_value, is_called)` before the ALTER, if the ALTER replaced
    /// the counter.
    pub counter: Option<(i64, bool)>,
}

impl SequenceSpec {
    /// The sequence's key in the catalog ([`crate::namespace::rel_key`]).
    pub fn key(&self) -> String {
        crate::namespace::rel_key(self.namespace, &self.name).into_owned()
    }
    /// PostgreSQL's defaults for a sequence of type `ty` (ascending by 1
    /// from 1 up to the type's maximum).
    pub fn new(oid: Oid, name: &str, ty: SqlType) -> SequenceSpec {
        let max = match ty {
            SqlType::Int2 => i64::from(i16::MAX),
            SqlType::Int4 => i64::from(i32::MAX),
            _ => i64::MAX,
        };
        SequenceSpec {
            oid,
            name: name.to_string(),
            namespace: crate::namespace::PUBLIC_NAMESPACE,
            ty,
            increment: 1,
            min: 1,
            max,
            start: 1,
            cache: 1,
            cycle: false,
            owned_by: None,
            creator: TransactionId::INVALID,
            altered_by: TransactionId::INVALID,
            previous: None,
        }
    }

    /// The definition without the uncommitted-ALTER marks.
    pub fn unmarked(&self) -> SequenceSpec {
        SequenceSpec {
            altered_by: TransactionId::INVALID,
            previous: None,
            ..self.clone()
        }
    }
}

/// The counter: `last_value` / `is_called` as PostgreSQL's sequence tuple,
/// `logged` the value the last WAL record (or CREATE) set.
#[derive(Debug)]
pub struct SequenceState {
    /// The last value handed out (or the first to hand out if not called).
    pub last_value: AtomicI64,
    /// False until the first nextval (after CREATE or setval(…, false)).
    pub is_called: AtomicBool,
    /// The value WAL (and the catalog file) has: nextval hands out values
    /// up to it without logging.
    pub logged: AtomicI64,
    /// `is_called` of the logged record.
    pub logged_called: AtomicBool,
}

/// A sequence in the catalog.
#[derive(Debug)]
pub struct SequenceDef {
    /// The definition.
    pub spec: SequenceSpec,
    /// The counter.
    pub state: SequenceState,
    /// Serialises nextval / setval on this node.
    pub nextval_lock: Mutex<()>,
    /// The creating xid until known committed (0 after).
    pub creator: AtomicU64,
    /// Set when ALTER SEQUENCE replaced this def by a new one.
    retired: AtomicBool,
    /// The xid of the ALTER SEQUENCE that made this def, while it may
    /// still roll back (0 after). Other transactions see [`Self::previous`]
    /// and wait for it before calling nextval / setval, as PostgreSQL's
    /// ALTER SEQUENCE holds a lock that conflicts with theirs.
    pub altered_by: AtomicU64,
    /// With `altered_by`: the committed def before the ALTER (retired:
    /// read its definition and counter, never advance it).
    pub previous: Option<Arc<SequenceDef>>,
}

impl SequenceDef {
    /// A sequence whose counter is `(value, called)`.
    pub fn new(spec: SequenceSpec, value: i64, called: bool) -> SequenceDef {
        let creator = AtomicU64::new(spec.creator.0);
        let previous = spec
            .previous
            .as_ref()
            .filter(|_| spec.altered_by.is_valid())
            .map(|p| {
                let (v, c) = p.counter.unwrap_or((value, called));
                let d = SequenceDef::new(p.spec.unmarked(), v, c);
                d.retire();
                Arc::new(d)
            });
        SequenceDef {
            altered_by: AtomicU64::new(spec.altered_by.0),
            previous,
            spec,
            state: SequenceState {
                last_value: AtomicI64::new(value),
                is_called: AtomicBool::new(called),
                logged: AtomicI64::new(value),
                logged_called: AtomicBool::new(called),
            },
            nextval_lock: Mutex::new(()),
            creator,
            retired: AtomicBool::new(false),
        }
    }

    /// The definition as it stands now: the uncommitted-ALTER marks only
    /// while the ALTER may still roll back (what the catalog file keeps).
    pub fn current_spec(&self) -> SequenceSpec {
        let by = self.altered_by.load(Ordering::Acquire);
        let mut s = self.spec.clone();
        s.creator = TransactionId(self.creator.load(Ordering::Acquire));
        if by == 0 {
            s.altered_by = TransactionId::INVALID;
            s.previous = None;
        }
        s
    }

    /// Marks this def as replaced (ALTER SEQUENCE): its counter no longer
    /// counts.
    pub fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }

    /// True once ALTER SEQUENCE replaced this def: a caller holding
    /// `nextval_lock` must look the sequence up again.
    pub fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }

    /// The counter as `(last_value, is_called)`.
    pub fn counter(&self) -> (i64, bool) {
        (
            self.state.last_value.load(Ordering::Acquire),
            self.state.is_called.load(Ordering::Acquire),
        )
    }

    /// Sets the counter as a logged record says (redo and the logging
    /// node alike).
    pub fn set_logged(&self, value: i64, called: bool) {
        self.state.logged.store(value, Ordering::Release);
        self.state.logged_called.store(called, Ordering::Release);
        self.state.last_value.store(value, Ordering::Release);
        self.state.is_called.store(called, Ordering::Release);
    }

    /// The value after `v` (`v` itself if not called), or 2200H at a bound
    /// without CYCLE.
    pub fn advance(&self, v: i64, called: bool) -> PgResult<i64> {
        let s = &self.spec;
        if !called {
            return Ok(v);
        }
        match v.checked_add(s.increment) {
            Some(n) if n <= s.max && n >= s.min => Ok(n),
            _ if s.cycle => Ok(if s.increment > 0 { s.min } else { s.max }),
            _ => {
                let (what, bound) = if s.increment > 0 {
                    ("maximum", s.max)
                } else {
                    ("minimum", s.min)
                };
                Err(PgError::new(
                    sqlstate::SEQUENCE_GENERATOR_LIMIT_EXCEEDED,
                    format!(
                        "nextval: reached {what} value of sequence \"{}\" ({bound})",
                        s.name
                    ),
                ))
            }
        }
    }

    /// The value to log ahead of handing out `next`: up to
    /// [`SEQ_LOG_VALS`] increments further, stopping at the bound.
    pub fn log_ahead(&self, next: i64) -> i64 {
        let s = &self.spec;
        let ahead = next.saturating_add(s.increment.saturating_mul(SEQ_LOG_VALS - 1));
        ahead.clamp(s.min, s.max)
    }

    /// True if handing out `next` needs a new WAL record first.
    pub fn needs_log(&self, next: i64) -> bool {
        let logged = self.state.logged.load(Ordering::Acquire);
        if !self.state.logged_called.load(Ordering::Acquire) {
            return true;
        }
        if self.spec.increment > 0 {
            next > logged
        } else {
            next < logged
        }
    }
}
