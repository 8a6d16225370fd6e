//! PostgreSQL's isolation tester, in small: a [`Spec`] names a setup, a
//! teardown and sessions, each with a setup (its `BEGIN …`) and steps;
//! [`permutations`] lists every interleaving of the steps that keeps each
//! session's own order, and [`Runner::run`] plays one on a server and
//! returns its transcript — one line per step with its rows or its error,
//! and `<waiting …>` when a step blocks on a lock (the tester's notation).
//!
//! A test runs the same permutations on hotpair and on PostgreSQL 15 and
//! compares the transcripts (tests/095_isolation_ssi.rs): the same steps
//! see the same rows and the same transactions fail, with the same
//! SQLSTATE, message and DETAIL.
//!
//! A step that blocks stays pending while later steps of other sessions
//! run; its outcome is printed when it completes. A permutation that asks
//! a blocked session for its next step is invalid (as in PostgreSQL's
//! tester) and ends there. After every permutation each session is rolled
//! back and the teardown runs, so permutations do not see each other.

use std::time::{Duration, Instant};

use crate::session::{Pending, Session, SqlError};

/// One session of a spec.
pub struct SessionSpec {
    /// Its name (`s1`).
    pub name: &'static str,
    /// Run when a permutation starts (`BEGIN ISOLATION LEVEL …`).
    pub setup: &'static str,
    /// Its steps in order: (name, SQL).
    pub steps: &'static [(&'static str, &'static str)],
}

/// An isolation spec.
pub struct Spec {
    /// Its name (PostgreSQL's spec file, without `.spec`).
    pub name: &'static str,
    /// Run before every permutation.
    pub setup: &'static str,
    /// Run after every permutation.
    pub teardown: &'static str,
    /// The sessions.
    pub sessions: &'static [SessionSpec],
    /// The one permutation to run, by step names (the spec's
    /// `permutation` line); empty: every permutation.
    pub only: &'static [&'static str],
}

/// A permutation: (session index, step index) in the order they run.
pub type Permutation = Vec<(usize, usize)>;

/// Every interleaving of the sessions' steps that keeps each session's
/// order (the tester's default set), in lexicographic order.
pub fn permutations(spec: &Spec) -> Vec<Permutation> {
    if !spec.only.is_empty() {
        let find = |name: &str| {
            spec.sessions.iter().enumerate().find_map(|(s, ss)| {
                ss.steps
                    .iter()
                    .position(|(n, _)| *n == name)
                    .map(|k| (s, k))
            })
        };
        let named: Option<Permutation> = spec.only.iter().map(|n| find(n)).collect();
        return named.into_iter().collect();
    }
    fn walk(spec: &Spec, next: &mut Vec<usize>, cur: &mut Permutation, out: &mut Vec<Permutation>) {
        let mut any = false;
        for s in 0..spec.sessions.len() {
            if next[s] < spec.sessions[s].steps.len() {
                any = true;
                cur.push((s, next[s]));
                next[s] += 1;
                walk(spec, next, cur, out);
                next[s] -= 1;
                cur.pop();
            }
        }
        if !any {
            out.push(cur.clone());
        }
    }
    let mut out = Vec::new();
    walk(
        spec,
        &mut vec![0; spec.sessions.len()],
        &mut Vec::new(),
        &mut out,
    );
    out
}

/// The step names of `perm`, space-separated (the tester's
/// `permutation "a" "b" …` line).
pub fn describe(spec: &Spec, perm: &Permutation) -> String {
    let names: Vec<&str> = perm
        .iter()
        .map(|(s, k)| spec.sessions[*s].steps[*k].0)
        .collect();
    names.join(" ")
}

/// Plays permutations of one spec on one server.
pub struct Runner<'a> {
    spec: &'a Spec,
    admin: Session,
    sessions: Vec<Session>,
    pids: Vec<String>,
}

impl<'a> Runner<'a> {
    /// Sessions for `spec` made by `connect` (one admin session for setup,
    /// teardown and lock checks, one per spec session).
    pub fn new(spec: &'a Spec, connect: impl Fn() -> Session) -> Runner<'a> {
        let admin = connect();
        let sessions: Vec<Session> = spec.sessions.iter().map(|_| connect()).collect();
        let pids = sessions
            .iter()
            .map(|s| s.query_safe("SELECT pg_backend_pid()"))
            .collect();
        Runner {
            spec,
            admin,
            sessions,
            pids,
        }
    }

    /// Runs `perm` and returns its transcript.
    pub fn run(&self, perm: &Permutation) -> String {
        let spec = self.spec;
        self.admin.query_safe(spec.setup);
        let mut out = String::new();
        for (i, s) in spec.sessions.iter().enumerate() {
            if let Err(e) = self.sessions[i].query(s.setup) {
                out.push_str(&format!("{} setup: {}\n", s.name, error_text(&e)));
            }
        }
        let mut pending: Vec<Option<(&str, Pending)>> =
            (0..spec.sessions.len()).map(|_| None).collect();
        for &(s, k) in perm {
            let (name, sql) = spec.sessions[s].steps[k];
            if pending[s].is_some() {
                out.push_str(&format!(
                    "invalid permutation: {name} while its session waits\n"
                ));
                break;
            }
            let p = self.sessions[s].send(sql);
            if self.blocks(s, &p) {
                out.push_str(&format!("{name}: <waiting ...>\n"));
                pending[s] = Some((name, p));
            } else {
                out.push_str(&format!("{name}: {}\n", outcome(p.wait())));
            }
            // Steps this one released.
            for slot in pending.iter_mut() {
                if slot.as_ref().is_some_and(|(_, p)| p.is_finished()) {
                    if let Some((n, p)) = slot.take() {
                        out.push_str(&format!("{n}: <... completed> {}\n", outcome(p.wait())));
                    }
                }
            }
        }
        // End every transaction, then collect what was still waiting.
        for (i, session) in self.sessions.iter().enumerate() {
            if pending[i].is_none() {
                let _ = session.query("ROLLBACK");
            }
        }
        for (i, slot) in pending.iter_mut().enumerate() {
            if let Some((n, p)) = slot.take() {
                out.push_str(&format!("{n}: <... completed> {}\n", outcome(p.wait())));
                let _ = self.sessions[i].query("ROLLBACK");
            }
        }
        self.admin.query_safe(spec.teardown);
        out
    }

    /// Waits until `p` finishes (false) or its session waits for a lock
    /// (true).
    fn blocks(&self, s: usize, p: &Pending) -> bool {
        let start = Instant::now();
        let deadline = start + crate::utils::timeout_default();
        let check = format!(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = {} AND wait_event_type = 'Lock'",
            self.pids[s]
        );
        loop {
            if p.is_finished() {
                return false;
            }
            if start.elapsed() > Duration::from_millis(2) && self.admin.query_safe(&check) == "1" {
                // The lock wait may have ended in the meantime: finished
                // statements are reported as such.
                return !p.is_finished();
            }
            if Instant::now() > deadline {
                panic!("isolation step neither finished nor waited for a lock");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn outcome(r: Result<String, SqlError>) -> String {
    match r {
        Ok(rows) if rows.is_empty() => "ok".to_string(),
        Ok(rows) => format!("ok [{}]", rows.replace('\n', "; ")),
        Err(e) => error_text(&e),
    }
}

/// An error as the transcript shows it: SQLSTATE, message and DETAIL,
/// with the numbers in the DETAIL (the xids of "pivot 785") as `N` — they
/// differ between servers.
fn error_text(e: &SqlError) -> String {
    match &e.detail {
        Some(d) => {
            let mut masked = String::with_capacity(d.len());
            for c in d.chars() {
                if !c.is_ascii_digit() {
                    masked.push(c);
                } else if !masked.ends_with('N') {
                    masked.push('N');
                }
            }
            format!("ERROR {} {} ({masked})", e.code, e.message)
        }
        None => format!("ERROR {} {}", e.code, e.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_keep_each_sessions_order() {
        const S: &[SessionSpec] = &[
            SessionSpec {
                name: "a",
                setup: "",
                steps: &[("a1", ""), ("a2", "")],
            },
            SessionSpec {
                name: "b",
                setup: "",
                steps: &[("b1", ""), ("b2", ""), ("b3", "")],
            },
        ];
        let spec = Spec {
            name: "t",
            setup: "",
            teardown: "",
            sessions: S,
            only: &[],
        };
        let all = permutations(&spec);
        assert_eq!(all.len(), 10, "5 choose 2");
        assert_eq!(describe(&spec, &all[0]), "a1 a2 b1 b2 b3", "first");
        assert_eq!(describe(&spec, &all[9]), "b1 b2 b3 a1 a2", "last");
        for p in &all {
            let a: Vec<usize> = p.iter().filter(|(s, _)| *s == 0).map(|x| x.1).collect();
            assert_eq!(a, vec![0, 1], "a in order");
        }
    }
}
