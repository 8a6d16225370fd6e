//! # Applying WAL records: the resource-manager table
//!
//! [`apply`] replays one decoded record against the node by handing it to
//! the redo routine of the record's owner — PostgreSQL's `rmgrlist.h`
//! table as one `match`:
//!
//! | record | owner's redo |
//! |---|---|
//! | Heap, Heap2 | `storage::heapam_xlog::redo_heap` |
//! | Xlog FPI | `storage::heapam_xlog::redo_fpi` |
//! | Smgr | `storage::heapam_xlog::redo_smgr` |
//! | Xact | `engine::xact_redo::redo` |
//! | Catalog | `engine::indexing::redo_catalog` (the catalog's own redo, then a standby's index builds) |
//! | Xlog checkpoint, Standby running-xacts | here: `next_xid` / next OID move past what they name |
//!
//! Crash recovery ([`crate::xlog::startup`]) calls it for every record
//! from the checkpoint's redo point to the end of valid WAL; a standby's
//! startup process calls it for every record except the transaction and
//! running-xacts records, which it routes itself (KnownAssignedXids) — so
//! it takes only the locks a normal writer takes, one at a time, while
//! hot-standby sessions read. What differs between the two is the engine's
//! [`HeapRedoHooks`](storage::heapam_xlog::HeapRedoHooks): a standby keeps
//! its indexes in step and resolves snapshot conflicts.
//!
//! The page LSN rule and the heap record table are in
//! `storage::heapam_xlog`; which transaction records bump the completion
//! counter, and why, in `engine::xact_redo`.
//!
//! Every xid seen (record header, xact records, subxids) advances
//! `next_xid` past it on a primary in crash recovery. Transactions that
//! were running at a crash have no completion record: their xids stay "in
//! progress" in the clog, and since no proc runs them after start-up,
//! visibility treats them as aborted (`XidFate::Gone`) — PostgreSQL does
//! the same.

use wal::{DecodedRecord, StandbyRecord, WalRecord, XlogRecord};

use crate::node::Node;
use engine::Role;
use pgtypes::error::PgResult;
use pgtypes::TransactionId;
use storage::heapam_xlog;

/// Replays one record (see the module docs).
pub fn apply(db: &Node, rec: &DecodedRecord) -> PgResult<()> {
    if rec.header.xid != TransactionId(0) {
        note_xid(db, rec.header.xid);
    }
    let lsn = rec.end_lsn;
    match &rec.record {
        WalRecord::Heap(h) => {
            heapam_xlog::redo_heap(db.heap(), lsn, rec.header.xid, h, db.engine().as_ref())
        }
        WalRecord::Xlog(x) => match x {
            XlogRecord::FullPageImage {
                rel,
                fork,
                block,
                page,
            } => heapam_xlog::redo_fpi(db.heap(), lsn, *rel, *fork, *block, page),
            XlogRecord::Checkpoint {
                next_xid, next_oid, ..
            } => {
                note_next_xid(db, *next_xid);
                db.catalog().advance_next_oid(*next_oid);
                Ok(())
            }
            XlogRecord::BackupEnd { .. } | XlogRecord::Switch | XlogRecord::Noop { .. } => Ok(()),
        },
        WalRecord::Xact(x) => {
            engine::xact_redo::redo(db, x, false);
            Ok(())
        }
        WalRecord::Smgr(s) => heapam_xlog::redo_smgr(db.heap(), s, db.engine().as_ref()),
        WalRecord::Catalog { payload } => engine::indexing::redo_catalog(db, lsn, payload),
        // Running-xacts records matter to a standby's KnownAssignedXids;
        // crash recovery needs only their next xid.
        WalRecord::Standby(StandbyRecord::RunningXacts { next_xid, .. }) => {
            note_next_xid(db, *next_xid);
            Ok(())
        }
    }
}

/// Makes `xid` known as assigned on a primary in crash recovery (past
/// `next_xid`). On a standby the startup process owns KnownAssignedXids
/// (it adds xids only once a running-xacts record initialised it), so
/// nothing is done here.
fn note_xid(db: &Node, xid: TransactionId) {
    if xid.is_normal() && db.role() == Role::Primary {
        db.procarray().advance_next_xid(xid);
    }
}

/// A record that carries the primary's next xid: every xid before it
/// was assigned.
fn note_next_xid(db: &Node, next_xid: TransactionId) {
    if next_xid > TransactionId(0) {
        note_xid(db, TransactionId(next_xid.0 - 1));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use wal::WalReader;

    use super::*;
    use pgtypes::config::Config;
    use pgtypes::error::PgError;
    use pgtypes::error::PgResult;
    use pgtypes::value::Value;
    use pgtypes::BufferTag;
    use pgtypes::{BlockNumber, ForkNumber, RelFileId};
    use server::backend::{ExecOutcome, ResultSink};
    use sql::session::Session;
    use storage::bufpage::Page;
    use storage::heapam_xlog::{redo_page, PageOutcome};
    use storage::htup::{self, TupleHeader};
    use wal::HeapRecord;

    #[derive(Default)]
    struct Rows(Vec<Vec<String>>);

    impl ResultSink for Rows {
        fn row(&mut self, values: &[Value]) -> PgResult<()> {
            self.0
                .push(values.iter().map(|v| v.to_text_string()).collect());
            Ok(())
        }
        fn notice(&mut self, _: PgError) {}
        fn parameter_status(&mut self, _: &str, _: &str) {}
        fn copy_out_start(&mut self, _: usize) {}
        fn copy_data(&mut self, _: &[u8]) {}
    }

    /// Runs each statement of `sql` (no multi-statement transaction).
    fn run(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
        let mut sink = Rows::default();
        for st in s.prepare(sql, &[]).unwrap() {
            match s.execute(&st, &[], &mut sink) {
                Ok(ExecOutcome::Complete(_)) | Ok(ExecOutcome::Empty) => {}
                Ok(_) => panic!("{sql}: COPY not expected"),
                Err(e) => panic!("{sql}: {}", e.message),
            }
        }
        sink.0
    }

    fn one(s: &mut Session, sql: &str) -> String {
        run(s, sql)[0][0].clone()
    }

    fn config(dir: &std::path::Path, fpw: bool) -> Config {
        let mut c = Config::new(dir);
        c.set("shared_buffers", "256kB").unwrap();
        // fsync off: these tests "crash" by dropping a Node and
        // replaying its files in the same process — the page cache is
        // never lost, so syncing would only slow them down.
        c.set("fsync", "off").unwrap();
        c.set("full_page_writes", if fpw { "on" } else { "off" })
            .unwrap();
        c
    }

    fn session(db: &Arc<Node>) -> Session {
        Session::new(db.clone(), &[("user".into(), "u".into())]).unwrap()
    }

    /// Inserts (single and multi-row), same-page and cross-page updates,
    /// deletes, a rollback, TRUNCATE and DROP, with a checkpoint between.
    fn workload(s: &mut Session) {
        run(s, "create table t (id int primary key, pad text)");
        run(s, "create table gone (x int)");
        run(s, "create table emptied (x int)");
        run(s, "insert into gone values (1), (2)");
        run(
            s,
            "insert into emptied select g from generate_series(1, 500) g",
        );
        run(
            s,
            "insert into t select g, repeat('x', 100) from generate_series(1, 1500) g",
        );
        for i in 1501..1600 {
            run(s, &format!("insert into t values ({i}, 'single')"));
        }
        run(s, "checkpoint");
        // Bigger rows move to other pages; small ones may stay (HOT).
        run(s, "update t set pad = repeat('y', 900) where id % 50 = 0");
        run(s, "update t set pad = 'short' where id % 7 = 0");
        run(s, "delete from t where id % 11 = 0");
        run(s, "begin");
        run(s, "insert into t values (100000, 'rolled back')");
        run(s, "delete from t where id < 20");
        run(s, "rollback");
        run(s, "truncate emptied");
        run(s, "insert into emptied values (42)");
        run(s, "drop table gone");
        run(s, "create index t_pad on t (pad)");
    }

    fn summary(s: &mut Session) -> Vec<String> {
        vec![
            one(s, "select count(*) from t"),
            one(s, "select sum(id) from t"),
            one(s, "select count(*) from t where pad = 'short'"),
            one(s, "select count(*) from t where length(pad) = 900"),
            one(s, "select count(*) from emptied"),
            one(s, "select pad from t where id = 700"),
            one(s, "select count(*) from t where id = 100000"),
        ]
    }

    /// A crash (the database dropped without a shutdown checkpoint: dirty
    /// buffers never written) followed by start-up replays WAL back to the
    /// same state, with and without full-page writes.
    #[test]
    fn crash_recovery_restores_every_change() {
        for fpw in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let db = Node::open(config(dir.path(), fpw), Role::Primary).unwrap();
            let mut s = session(&db);
            workload(&mut s);
            let before = summary(&mut s);
            assert_eq!(before[0], (1599 - 1599 / 11).to_string());
            drop(s);
            drop(db);
            let db = Node::open(config(dir.path(), fpw), Role::Primary).unwrap();
            let mut s = session(&db);
            assert_eq!(summary(&mut s), before, "state after recovery (fpw {fpw})");
            assert!(db.catalog().get("gone").is_none(), "drop replayed");
            // The index on pad was rebuilt: ids 1501..1599 untouched by the
            // updates and the delete still say 'single'.
            let single = (1501..1600)
                .filter(|i| i % 7 != 0 && i % 11 != 0 && i % 50 != 0)
                .count();
            assert_eq!(
                one(&mut s, "select count(*) from t where pad = 'single'"),
                single.to_string()
            );
            // Writes and another crash after recovery still work.
            run(&mut s, "insert into t values (200000, 'after')");
            drop(s);
            drop(db);
            let db = Node::open(config(dir.path(), fpw), Role::Primary).unwrap();
            let mut s = session(&db);
            assert_eq!(one(&mut s, "select pad from t where id = 200000"), "after");
        }
    }

    /// Runs `COPY … FROM STDIN` with `data` as the whole input.
    fn copy_in(s: &mut Session, sql: &str, data: &[u8]) -> String {
        let mut sink = Rows::default();
        let st = s.prepare(sql, &[]).unwrap().remove(0);
        let Ok(ExecOutcome::CopyIn(mut c)) = s.execute(&st, &[], &mut sink) else {
            panic!("{sql}: no COPY IN");
        };
        // In pieces that split records, as a client's CopyData may.
        for chunk in data.chunks(7001) {
            s.copy_in_data(&mut c, chunk).unwrap();
        }
        s.copy_in_done(c).unwrap()
    }

    /// COPY FROM STDIN (text, csv, FREEZE) goes through the
    /// multi-insert path: one MULTI_INSERT record per page and batch, never
    /// one record per row; replay gives the same rows.
    #[test]
    fn copy_logs_one_record_per_page() {
        let dir = tempfile::tempdir().unwrap();
        let db = Node::open(config(dir.path(), true), Role::Primary).unwrap();
        let mut s = session(&db);
        let rows = 5000usize;
        let text: String = (0..rows).map(|i| format!("{i}\tline {i}\n")).collect();
        let csv: String = (0..rows).map(|i| format!("{i},\"csv, {i}\"\n")).collect();
        run(&mut s, "create table ct (id int, v text)");
        let writer = db.xlog().writer().unwrap().clone();
        let start = writer.insert_lsn();
        assert_eq!(
            copy_in(&mut s, "copy ct from stdin", text.as_bytes()),
            "COPY 5000"
        );
        run(&mut s, "begin");
        run(&mut s, "create table cf (id int, v text)");
        assert_eq!(
            copy_in(
                &mut s,
                "copy cf from stdin with (format csv, freeze)",
                csv.as_bytes()
            ),
            "COPY 5000"
        );
        run(&mut s, "commit");
        writer.flush(writer.insert_lsn()).unwrap();
        let rels: Vec<RelFileId> = ["ct", "cf"]
            .iter()
            .map(|t| db.catalog().get(t).unwrap().rel)
            .collect();
        let mut per_rel = [(0usize, 0usize, 0usize); 2]; // (multi records, tuples, single inserts)
        let mut reader = WalReader::new(writer.dir(), writer.segment_size()).unwrap();
        reader.seek(start, None);
        while let Ok(rec) = reader.next_record() {
            match &rec.record {
                WalRecord::Heap(HeapRecord::MultiInsert { rel, tuples, .. }) => {
                    if let Some(k) = rels.iter().position(|r| r == rel) {
                        per_rel[k].0 += 1;
                        per_rel[k].1 += tuples.len();
                    }
                }
                WalRecord::Heap(HeapRecord::Insert { rel, .. }) if rels.contains(rel) => {
                    per_rel[rels.iter().position(|r| r == rel).unwrap()].2 += 1;
                }
                _ => {}
            }
        }
        let batches = rows.div_ceil(sql::executor::BATCH_ROWS);
        for (k, (records, tuples, singles)) in per_rel.iter().enumerate() {
            let pages = db.heap().nblocks(rels[k]).unwrap() as usize;
            assert_eq!(*singles, 0, "rel {k}: no per-row records");
            assert_eq!(
                one(
                    &mut s,
                    &format!("select pg_relation_size('{}')", ["ct", "CF"][k])
                ),
                (pages * 8192).to_string(),
                "pg_relation_size"
            );
            assert_eq!(*tuples, rows, "rel {k}: every row logged once");
            // A page filled by one batch gets one record; a page a batch
            // boundary falls on gets one per batch.
            assert!(
                *records >= pages && *records < pages + batches,
                "rel {k}: {records} records for {pages} pages and {batches} batches"
            );
        }
        // Crash and replay: same rows.
        drop(s);
        drop(db);
        let db = Node::open(config(dir.path(), true), Role::Primary).unwrap();
        let mut s = session(&db);
        assert_eq!(one(&mut s, "select count(*) from ct"), "5000");
        assert_eq!(one(&mut s, "select v from cf where id = 4321"), "csv, 4321");
        assert_eq!(one(&mut s, "select v from ct where id = 17"), "line 17");
    }

    /// WAL for inserts into relations that were truncated, or
    /// dropped, after the records were written. A crash before the next
    /// checkpoint replays the inserts onto a file that is already short (or
    /// gone): page-rebuilding records re-extend the truncated relation
    /// through the buffer manager, the others are skipped, the truncation
    /// record cuts it again; records of the dropped relation are skipped.
    /// Recovery ends without error and with the right contents.
    #[test]
    fn redo_into_truncated_and_dropped_relations() {
        for fpw in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let db = Node::open(config(dir.path(), fpw), Role::Primary).unwrap();
            let mut s = session(&db);
            run(&mut s, "create table tr (x int, pad text)");
            run(&mut s, "create table dr (x int, pad text)");
            run(&mut s, "insert into tr values (0, 'before checkpoint')");
            run(&mut s, "checkpoint");
            // Several pages of each, single and multi-row inserts.
            run(
                &mut s,
                "insert into tr select g, repeat('t', 200) from generate_series(1, 2000) g",
            );
            for i in 0..20 {
                run(&mut s, &format!("insert into tr values ({i}, 'single')"));
            }
            run(
                &mut s,
                "insert into dr select g, repeat('d', 200) from generate_series(1, 2000) g",
            );
            run(&mut s, "create table late (x int)");
            run(&mut s, "insert into late values (1), (2), (3)");
            // Written out, so the file really is long before it shrinks.
            let bm = db.heap().bufmgr().clone();
            bm.flush_all().unwrap();
            run(&mut s, "truncate tr");
            run(&mut s, "insert into tr values (42, 'after truncate')");
            run(&mut s, "drop table dr");
            run(&mut s, "drop table late");
            drop(s);
            drop(bm);
            drop(db); // the crash: no shutdown checkpoint
            let db = Node::open(config(dir.path(), fpw), Role::Primary).unwrap();
            let mut s = session(&db);
            assert_eq!(
                run(&mut s, "select x, pad from tr"),
                vec![vec!["42".to_string(), "after truncate".to_string()]],
                "truncated relation after recovery (fpw {fpw})"
            );
            assert!(db.catalog().get("dr").is_none(), "drop replayed");
            assert!(db.catalog().get("late").is_none(), "drop replayed");
            run(&mut s, "insert into tr values (43, 'after recovery')");
            assert_eq!(one(&mut s, "select count(*) from tr"), "2");
        }
    }

    /// Commits racing with checkpoints: every commit acknowledged before the
    /// "crash" is back afterwards, whichever side of a redo point its
    /// record fell on (the delay-checkpoint guard keeps its clog bit in the
    /// clog the checkpoint flushes).
    #[test]
    fn commits_racing_checkpoints_survive_a_crash() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let db = Node::open(config(dir.path(), true), Role::Primary).unwrap();
        run(&mut session(&db), "create table c (id int primary key)");
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let (db, stop) = (db.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut s = session(&db);
                    let mut acked = Vec::new();
                    let mut i = w;
                    while !stop.load(Ordering::Relaxed) && acked.len() < 3000 {
                        run(&mut s, &format!("insert into c values ({i})"));
                        acked.push(i);
                        i += 2;
                    }
                    acked
                })
            })
            .collect();
        for _ in 0..30 {
            db.checkpoint().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        let acked: Vec<i32> = writers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        drop(db);
        let db = Node::open(config(dir.path(), true), Role::Primary).unwrap();
        let mut s = session(&db);
        assert_eq!(
            one(&mut s, "select count(*) from c"),
            acked.len().to_string(),
            "every acknowledged commit survives"
        );
    }

    /// Every heap page's bytes, with what is not WAL-logged masked: hint
    /// bits in tuple headers, pd_prune_xid and the page flags (a page rebuilt by an
    /// INIT_PAGE record has none — as in PostgreSQL's wal_consistency
    /// masking).
    fn pages(db: &Node) -> Vec<(u32, u32, Vec<u8>)> {
        let mut out = Vec::new();
        for rel in db.heap().list_relations().unwrap() {
            for b in 0..db.heap().nblocks(rel).unwrap() {
                let buf = db
                    .heap()
                    .bufmgr()
                    .read_buffer(BufferTag {
                        rel,
                        fork: ForkNumber::Main,
                        block: BlockNumber(b),
                    })
                    .unwrap();
                let mut p = Page::default();
                p.0.copy_from_slice(&buf.read().0);
                p.clear_flags(u16::MAX);
                p.set_prune_xid(0); // a hint, as in PostgreSQL's masking
                for off in 1..=p.max_offset() {
                    if let Ok(item) = p.item_mut(off) {
                        let mut h = TupleHeader::read(item).unwrap();
                        h.infomask &= !htup::HINT_BITS;
                        h.write(item);
                    }
                }
                out.push((rel.0, b, p.0.to_vec()));
            }
        }
        out
    }

    /// Page LSN idempotence: replaying the whole WAL again onto pages that
    /// already hold every change alters no byte (without full-page images,
    /// which are restored unconditionally by design).
    #[test]
    fn replaying_wal_twice_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let db = Node::open(config(dir.path(), false), Role::Primary).unwrap();
        let mut s = session(&db);
        run(&mut s, "create table t (id int primary key, pad text)");
        run(
            &mut s,
            "insert into t select g, repeat('x', 100) from generate_series(1, 800) g",
        );
        run(
            &mut s,
            "update t set pad = repeat('y', 900) where id % 50 = 0",
        );
        run(&mut s, "update t set pad = 'short' where id % 7 = 0");
        run(&mut s, "delete from t where id % 11 = 0");
        // The WAL position functions and the statistics view.
        assert_eq!(
            one(
                &mut s,
                "select pg_current_wal_insert_lsn() >= pg_current_wal_flush_lsn()"
            ),
            "t"
        );
        let lsn = one(&mut s, "select pg_current_wal_insert_lsn()");
        assert_eq!(lsn, db.xlog().writer().unwrap().insert_lsn().to_string());
        let stats = run(
            &mut s,
            "select wal_records, wal_bytes, wal_sync, checkpoints from hotpair_stat_wal",
        );
        let n: Vec<i64> = stats[0].iter().map(|v| v.parse().unwrap()).collect();
        assert!(
            n[0] > 100 && n[1] > n[0] * 28,
            "records and bytes counted: {n:?}"
        );
        assert!(n[3] >= 1, "the initial checkpoint counted: {n:?}");
        // pg_stat_wal: the same counters under PostgreSQL's names and types.
        assert_eq!(
            one(
                &mut s,
                "select pg_typeof(wal_bytes)::text || ' ' || pg_typeof(wal_sync_time)::text \
                 from pg_stat_wal where wal_records >= 100 and wal_bytes > 0 and wal_sync >= 0"
            ),
            "numeric double precision"
        );
        assert_eq!(
            one(
                &mut s,
                "select pg_current_wal_lsn() <= pg_current_wal_insert_lsn() \
                 and pg_typeof(pg_current_wal_lsn())::text = 'pg_lsn'"
            ),
            "t",
            "pg_lsn values compare"
        );
        let before = pages(&db);
        let writer = db.xlog().writer().unwrap().clone();
        writer.flush(writer.insert_lsn()).unwrap();
        let mut reader = WalReader::new(writer.dir(), writer.segment_size()).unwrap();
        reader.seek(wal::WalPosition::initial(writer.segment_size()).end, None);
        let mut heap_records = 0;
        let mut prunes = 0;
        let mut a_delete = None;
        while let Ok(rec) = reader.next_record() {
            if let WalRecord::Heap(h) = &rec.record {
                heap_records += 1;
                if matches!(h, HeapRecord::Prune { .. }) {
                    prunes += 1;
                }
                if matches!(h, HeapRecord::Delete { .. }) {
                    a_delete.get_or_insert(rec.clone());
                }
            }
            apply(&db, &rec).unwrap();
        }
        assert!(heap_records > 100, "{heap_records} heap records");
        assert!(prunes > 0, "the updates pruned pages: replayed too");
        let after = pages(&db);
        assert_eq!(after.len(), before.len(), "same number of pages");
        for ((rel, b, x), (_, _, y)) in before.iter().zip(&after) {
            let diff: Vec<usize> = (0..x.len()).filter(|&i| x[i] != y[i]).collect();
            assert!(
                diff.is_empty(),
                "page {b} of {rel} changed at {} bytes, first at {:?}",
                diff.len(),
                &diff[..diff.len().min(8)]
            );
        }
        // One record on its own: the page LSN says it is done.
        let rec = a_delete.expect("a delete record");
        if let WalRecord::Heap(HeapRecord::Delete { rel, block, .. }) = &rec.record {
            let r = redo_page(db.heap(), rec.end_lsn, *rel, *block, false, |_| {
                panic!("applied twice")
            })
            .unwrap();
            assert_eq!(r, PageOutcome::AlreadyApplied);
        }
        assert_eq!(
            one(&mut s, "select count(*) from t"),
            (800 - 800 / 11).to_string()
        );
    }
}
