//! The transition tables of the trigger functions running on this thread
//! (PostgreSQL's ephemeral named relations): `crate::trigger` pushes a
//! frame around each trigger call; the planner resolves a table name
//! against the innermost frame and `crate::spi` keeps such plans out of
//! its cache. Kept apart from `trigger` so the planner, a layer below,
//! can read them.

use std::sync::Arc;

use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;

/// A transition table's columns and rows.
pub(crate) type TransitionRel = (Vec<(String, SqlType)>, Arc<Vec<Vec<Value>>>);

/// One transition table a running trigger function reads: name, columns
/// and rows (PostgreSQL's ephemeral named relation).
pub(crate) type Transition = (String, Vec<(String, SqlType)>, Arc<Vec<Vec<Value>>>);

thread_local! {
    /// The transition tables of each trigger function being run on this
    /// thread, innermost last; only the innermost frame is visible (a
    /// trigger fired from inside another does not see its tables). The
    /// planner reads them while planning the function's statements
    /// ([`transition_relation`]), which run synchronously inside the call.
    pub(crate) static TRANSITIONS: std::cell::RefCell<Vec<Vec<Transition>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// True while a trigger function with transition tables runs (its plans
/// hold their rows: `crate::spi` does not cache them).
pub(crate) fn transition_active() -> bool {
    TRANSITIONS.with(|t| t.borrow().last().is_some_and(|f| !f.is_empty()))
}

/// The columns and rows of transition table `name` of the running
/// trigger function, if it has one by that name.
pub(crate) fn transition_relation(name: &str) -> Option<TransitionRel> {
    TRANSITIONS.with(|t| {
        t.borrow()
            .last()?
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, c, r)| (c.clone(), r.clone()))
    })
}
