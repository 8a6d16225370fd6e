//! Enum types across transactions, replication, restarts and the wire
//! (sql.md, "Enums"; `sql::typecmds`, `engine::pg_enum`).
//!
//! An enum type lives in the catalog and in the value cache every node
//! fills from it (`pgtypes::enumtype`): a label the standby never learnt
//! about, or a type a rolled-back or crashed transaction left behind,
//! would make rows unreadable or names unusable. This test checks that
//! CREATE / ALTER / DROP TYPE replay, that what does not commit leaves
//! nothing on either node (ROLLBACK, ROLLBACK TO, a crash), that labels
//! and their order survive a restart, and that drivers exchange enum
//! values (binary and text formats both carry the label's text).
//!
//! * `enum_changes_replay_and_roll_back`
//! * `uncommitted_type_is_removed_after_a_crash`
//! * `driver_sends_and_reads_enum_values`

use bytes::BytesMut;
use tap_tests::{block_on, Node};
use tokio_postgres::types::{FromSql, IsNull, Kind, ToSql, Type};
use tokio_postgres::{NoTls, SimpleQueryMessage};

fn pair() -> (Node, Node) {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy'); \
         CREATE TABLE t (id int PRIMARY KEY, m mood); \
         INSERT INTO t VALUES (1, 'happy'), (2, 'sad'), (3, 'ok')",
    );
    let standby = Node::standby_of(&primary, "standby");
    (primary, standby)
}

#[track_caller]
fn labels(node: &Node) -> String {
    node.safe_sql("SELECT enum_range(NULL::mood)")
}

#[test]
fn enum_changes_replay_and_roll_back() {
    let (primary, standby) = pair();
    // 1. Created, altered and dropped, all rolled back.
    primary.safe_sql(
        "BEGIN; \
         CREATE TYPE fresh AS ENUM ('a', 'b'); \
         CREATE TABLE u (f fresh); INSERT INTO u VALUES ('b'); \
         ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok'; \
         ALTER TYPE mood RENAME VALUE 'sad' TO 'blue'; \
         ALTER TYPE mood RENAME TO feeling; \
         ROLLBACK",
    );
    // 2. ROLLBACK TO undoes only what followed the savepoint; DROP TYPE
    //    rolled back brings the type (and its column) back.
    primary.safe_sql(
        "BEGIN; ALTER TYPE mood ADD VALUE 'great' AFTER 'happy'; SAVEPOINT s; \
         CREATE TYPE gone AS ENUM ('x'); ALTER TYPE mood ADD VALUE 'gone'; \
         ROLLBACK TO s; COMMIT",
    );
    primary.safe_sql("BEGIN; DROP TYPE mood CASCADE; ROLLBACK");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            labels(node),
            "{sad,ok,happy,great}",
            "{}: labels",
            node.name()
        );
        assert_eq!(
            node.safe_sql("SELECT to_regtype('fresh') IS NULL, to_regtype('gone') IS NULL"),
            "t|t",
            "{}: rolled-back types gone",
            node.name()
        );
        node.expect_error("SELECT * FROM u", "42P01");
        assert_eq!(
            node.safe_sql("SELECT id FROM t ORDER BY m"),
            "2\n3\n1",
            "{}: rows in the type's order",
            node.name()
        );
    }
    // 3. Committed changes replay: a label in the middle sorts there on
    //    the standby too; a renamed label reads with its new text.
    primary.safe_sql(
        "ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok'; \
         ALTER TYPE mood RENAME VALUE 'sad' TO 'blue'; \
         INSERT INTO t VALUES (4, 'meh'), (5, 'great')",
    );
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql("SELECT string_agg(m::text, ',' ORDER BY m) FROM t"),
            "blue,meh,ok,happy,great",
            "{}: new labels in order",
            node.name()
        );
        assert_eq!(
            node.safe_sql("SELECT id FROM t WHERE m > 'meh' AND m < 'great' ORDER BY id"),
            "1\n3",
            "{}: comparisons with a label added BEFORE",
            node.name()
        );
    }
    // 4. A standby refuses type DDL.
    standby.expect_error("CREATE TYPE s AS ENUM ('a')", "25006");
    standby.expect_error("ALTER TYPE mood ADD VALUE 'x'", "25006");
    standby.expect_error("DROP TYPE mood", "25006");
    // 5. Both nodes keep labels, OIDs and order across a restart.
    primary.restart();
    standby.restart();
    primary.safe_sql("INSERT INTO t VALUES (6, 'blue')");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            labels(node),
            "{blue,meh,ok,happy,great}",
            "{}: labels after restart",
            node.name()
        );
        assert_eq!(
            node.safe_sql("SELECT string_agg(id::text, ',' ORDER BY m, id) FROM t"),
            "2,6,4,3,1,5",
            "{}: rows after restart",
            node.name()
        );
    }
    // 6. DROP TYPE … CASCADE replays: the column goes on both nodes.
    primary.safe_sql("DROP TYPE mood CASCADE");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        node.expect_error("SELECT m FROM t", "42703");
        assert_eq!(node.safe_sql("SELECT count(*) FROM pg_enum"), "0");
    }
}

#[test]
fn uncommitted_type_is_removed_after_a_crash() {
    let (primary, standby) = pair();
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("CREATE TYPE pending AS ENUM ('p')");
    assert_eq!(s.query_safe("SELECT 'p'::pending"), "p");
    // Another commit ships (and flushes) the WAL of the creation.
    primary.safe_sql("CREATE TABLE other (a int)");
    primary.wait_for_replay(&standby);
    primary.kill9();
    drop(s);
    primary.start();
    assert_eq!(
        primary.safe_sql("SELECT to_regtype('pending') IS NULL"),
        "t",
        "uncommitted type removed at start-up"
    );
    // The removal is WAL-logged: the standby follows, and the name is free.
    primary.safe_sql("CREATE TYPE pending AS ENUM ('q')");
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql("SELECT enum_range(NULL::pending)"), "{q}");
    assert_eq!(labels(&standby), "{sad,ok,happy}");
}

/// An enum value as a driver holds it: its label.
#[derive(Debug, PartialEq)]
struct Label(String);

impl ToSql for Label {
    fn to_sql(
        &self,
        _ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        matches!(ty.kind(), Kind::Enum(_))
    }
    tokio_postgres::types::to_sql_checked!();
}

impl<'a> FromSql<'a> for Label {
    fn from_sql(
        _ty: &Type,
        raw: &'a [u8],
    ) -> Result<Label, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Label(std::str::from_utf8(raw)?.to_string()))
    }
    fn accepts(ty: &Type) -> bool {
        matches!(ty.kind(), Kind::Enum(_))
    }
}

#[test]
fn driver_sends_and_reads_enum_values() {
    let node = Node::new("primary");
    node.init(false);
    node.start();
    node.safe_sql(
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy'); \
         ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok'; \
         CREATE TABLE t (id int PRIMARY KEY, m mood)",
    );
    block_on(async {
        let (client, connection) = tokio_postgres::connect(&node.connstr(), NoTls)
            .await
            .unwrap();
        let conn_task = tokio::spawn(connection);
        // 1. The parameter's type is described as the enum, with its
        //    labels (the driver reads pg_type and pg_enum).
        let insert = client
            .prepare("INSERT INTO t VALUES ($1, $2)")
            .await
            .unwrap();
        let ty = &insert.params()[1];
        assert_eq!(ty.name(), "mood", "parameter type name");
        assert_eq!(ty.schema(), "public", "parameter type schema");
        assert_eq!(
            ty.kind(),
            &Kind::Enum(vec![
                "sad".into(),
                "meh".into(),
                "ok".into(),
                "happy".into()
            ]),
            "labels in sort order"
        );
        // 2. Binary parameters carry the label's text.
        for (id, l) in [(1, "happy"), (2, "sad"), (3, "meh")] {
            client
                .execute(&insert, &[&id, &Label(l.into())])
                .await
                .unwrap();
        }
        let err = client
            .execute(&insert, &[&4, &Label("nope".into())])
            .await
            .unwrap_err();
        assert_eq!(
            err.as_db_error().map(|e| e.message()),
            Some("invalid input value for enum mood: \"nope\""),
            "bad label in a binary parameter"
        );
        // 3. Binary results, in the type's order.
        let rows = client
            .query(
                "SELECT m FROM t WHERE m >= $1 ORDER BY m",
                &[&Label("meh".into())],
            )
            .await
            .unwrap();
        let got: Vec<Label> = rows.iter().map(|r| r.get(0)).collect();
        assert_eq!(
            got,
            vec![Label("meh".into()), Label("happy".into())],
            "binary enum results"
        );
        // 4. A text parameter cast to the type; text results.
        let stmt = client
            .prepare_typed("SELECT $1::mood > 'meh'", &[Type::TEXT])
            .await
            .unwrap();
        let row = client.query_one(&stmt, &[&"ok"]).await.unwrap();
        assert!(row.get::<_, bool>(0), "text parameter cast to the enum");
        let msgs = client
            .simple_query("SELECT m FROM t ORDER BY m DESC")
            .await
            .unwrap();
        let text: Vec<String> = msgs
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .collect();
        assert_eq!(text, ["happy", "meh", "sad"], "text-format results");
        drop(client);
        let _ = conn_task.await;
    });
}
