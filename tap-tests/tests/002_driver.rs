//! tokio-postgres against a real `primary` process.
//!
//! Drivers use the extended query protocol that psql never touches: Parse
//! without parameter types (the server must infer and describe them), Bind
//! with binary parameters, binary result columns, Describe, Sync after
//! errors, and COPY sub-protocols in both directions. A wrong type OID, a
//! binary encoding off by a byte, a missing ParameterDescription or a
//! command tag without its row count breaks every application while psql
//! keeps working; this test guards those paths, plus the rule that a failed
//! statement leaves its transaction block aborted (25P02) until ROLLBACK.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures_util::{SinkExt, TryStreamExt};
use tap_tests::{block_on, Node};
use tokio_postgres::types::Type;
use tokio_postgres::{NoTls, SimpleQueryMessage};

#[test]
fn driver() {
    // 1. A running primary.
    let node = Node::new("primary");
    node.init(false);
    node.start();

    block_on(async {
        let (mut client, connection) = tokio_postgres::connect(&node.connstr(), NoTls)
            .await
            .unwrap();
        let conn_task = tokio::spawn(connection);

        // 2. Simple queries: CommandComplete carries the row counts.
        let msgs = client
            .simple_query(
                "CREATE TABLE kinds (i4 int4, i8 int8, t text, f float8, b bool, ts timestamp)",
            )
            .await
            .unwrap();
        assert!(
            matches!(msgs.last(), Some(SimpleQueryMessage::CommandComplete(0))),
            "CREATE TABLE completes"
        );
        let msgs = client
            .simple_query("SELECT 1 AS one, 'two' AS two")
            .await
            .unwrap();
        let rows: Vec<_> = msgs
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => {
                    Some((r.get(0).map(str::to_string), r.get(1).map(str::to_string)))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            rows,
            vec![(Some("1".to_string()), Some("two".to_string()))],
            "simple query text row"
        );
        assert!(
            matches!(msgs.last(), Some(SimpleQueryMessage::CommandComplete(1))),
            "SELECT 1 row count"
        );

        // 3. Prepared INSERT with parameters of every type (binary format),
        //    types inferred by the server from the target columns.
        let ts = UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456);
        let insert = client
            .prepare("INSERT INTO kinds VALUES ($1, $2, $3, $4, $5, $6)")
            .await
            .unwrap();
        assert_eq!(
            insert.params(),
            &[
                Type::INT4,
                Type::INT8,
                Type::TEXT,
                Type::FLOAT8,
                Type::BOOL,
                Type::TIMESTAMP
            ],
            "parameter types inferred from the columns"
        );
        let n = client
            .execute(
                &insert,
                &[&42i32, &(1i64 << 40), &"héllo wörld", &2.5f64, &true, &ts],
            )
            .await
            .unwrap();
        assert_eq!(n, 1, "prepared INSERT affects one row");
        let n = client
            .execute(
                &insert,
                &[
                    &-7i32,
                    &None::<i64>,
                    &None::<&str>,
                    &-0.125f64,
                    &false,
                    &None::<SystemTime>,
                ],
            )
            .await
            .unwrap();
        assert_eq!(n, 1, "prepared INSERT with NULLs");

        // 4. Binary results come back with the right types and values.
        let row = client
            .query_one(
                "SELECT i4, i8, t, f, b, ts FROM kinds WHERE i4 = $1",
                &[&42i32],
            )
            .await
            .unwrap();
        let types: Vec<Type> = row.columns().iter().map(|c| c.type_().clone()).collect();
        assert_eq!(
            types,
            vec![
                Type::INT4,
                Type::INT8,
                Type::TEXT,
                Type::FLOAT8,
                Type::BOOL,
                Type::TIMESTAMP
            ],
            "result column types"
        );
        assert_eq!(row.get::<_, i32>(0), 42, "int4 binary value");
        assert_eq!(row.get::<_, i64>(1), 1i64 << 40, "int8 binary value");
        assert_eq!(row.get::<_, &str>(2), "héllo wörld", "text value");
        assert_eq!(row.get::<_, f64>(3), 2.5, "float8 binary value");
        assert!(row.get::<_, bool>(4), "bool binary value");
        assert_eq!(row.get::<_, SystemTime>(5), ts, "timestamp binary value");

        let row = client
            .query_one("SELECT i8, t, ts FROM kinds WHERE i4 = $1", &[&-7i32])
            .await
            .unwrap();
        assert_eq!(row.get::<_, Option<i64>>(0), None, "NULL int8");
        assert_eq!(row.get::<_, Option<&str>>(1), None, "NULL text");
        assert_eq!(row.get::<_, Option<SystemTime>>(2), None, "NULL timestamp");

        // 5. Explicitly typed parameters and expressions over them.
        let stmt = client
            .prepare_typed("SELECT $1::int8 + 1, $2 || '!'", &[Type::INT8, Type::TEXT])
            .await
            .unwrap();
        let row = client.query_one(&stmt, &[&41i64, &"hi"]).await.unwrap();
        assert_eq!(
            (row.get::<_, i64>(0), row.get::<_, &str>(1)),
            (42, "hi!"),
            "typed parameters"
        );
        let stmt = client
            .prepare("SELECT i4 FROM kinds WHERE t = $1")
            .await
            .unwrap();
        assert_eq!(
            stmt.params(),
            &[Type::TEXT],
            "parameter type inferred from a comparison"
        );
        assert_eq!(
            stmt.columns()[0].type_(),
            &Type::INT4,
            "described result type"
        );
        let rows = client.query(&stmt, &[&"héllo wörld"]).await.unwrap();
        assert_eq!(rows.len(), 1, "statement reused with a parameter");

        // 6. Rows affected by UPDATE and DELETE; RETURNING rows.
        let n = client
            .execute("UPDATE kinds SET b = NOT b", &[])
            .await
            .unwrap();
        assert_eq!(n, 2, "UPDATE row count");
        let rows = client
            .query("DELETE FROM kinds WHERE i4 = $1 RETURNING t", &[&42i32])
            .await
            .unwrap();
        assert_eq!(rows.len(), 1, "DELETE RETURNING one row");
        assert_eq!(rows[0].get::<_, &str>(0), "héllo wörld", "RETURNING value");

        // 7. COPY FROM STDIN in text and csv formats.
        client
            .batch_execute("CREATE TABLE nums (n int, word text)")
            .await
            .unwrap();
        let sink = client.copy_in("COPY nums FROM STDIN").await.unwrap();
        futures_util::pin_mut!(sink);
        sink.send(Bytes::from_static(b"1\tone\n2\ttwo\n"))
            .await
            .unwrap();
        sink.send(Bytes::from_static(b"3\t\\N\n")).await.unwrap();
        assert_eq!(sink.finish().await.unwrap(), 3, "COPY FROM STDIN row count");
        let sink = client
            .copy_in("COPY nums FROM STDIN WITH (FORMAT csv)")
            .await
            .unwrap();
        futures_util::pin_mut!(sink);
        sink.send(Bytes::from_static(b"4,\"four, quoted\"\n5,\n"))
            .await
            .unwrap();
        assert_eq!(sink.finish().await.unwrap(), 2, "COPY csv row count");
        let row = client
            .query_one("SELECT count(*), sum(n) FROM nums", &[])
            .await
            .unwrap();
        assert_eq!(
            (row.get::<_, i64>(0), row.get::<_, i64>(1)),
            (5, 15),
            "copied rows visible"
        );

        // 8. COPY TO STDOUT returns the table in COPY text format.
        let stream = client.copy_out("COPY nums TO STDOUT").await.unwrap();
        let chunks: Vec<Bytes> = stream.try_collect().await.unwrap();
        let text: Vec<u8> = chunks.concat();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "1\tone\n2\ttwo\n3\t\\N\n4\tfour, quoted\n5\t\\N\n",
            "COPY TO STDOUT text"
        );

        // 9. A failed statement in a block leaves it aborted (25P02) until
        //    ROLLBACK, for simple and extended queries alike.
        client.batch_execute("BEGIN").await.unwrap();
        client
            .execute("INSERT INTO nums VALUES (6, 'six')", &[])
            .await
            .unwrap();
        let err = client
            .simple_query("SELECT * FROM missing")
            .await
            .unwrap_err();
        assert_eq!(
            err.code().map(|c| c.code()),
            Some("42P01"),
            "undefined table"
        );
        let err = client.simple_query("SELECT 1").await.unwrap_err();
        assert_eq!(
            err.code().map(|c| c.code()),
            Some("25P02"),
            "simple query in aborted block"
        );
        let err = client.query("SELECT $1::int4", &[&1i32]).await.unwrap_err();
        assert_eq!(
            err.code().map(|c| c.code()),
            Some("25P02"),
            "extended query in aborted block"
        );
        client.batch_execute("ROLLBACK").await.unwrap();
        let row = client
            .query_one("SELECT count(*) FROM nums WHERE n = 6", &[])
            .await
            .unwrap();
        assert_eq!(
            row.get::<_, i64>(0),
            0,
            "aborted block's insert rolled back"
        );

        // 10. The transaction API: commit and rollback through the driver.
        let tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO nums VALUES (7, 'seven')", &[])
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let tx = client.transaction().await.unwrap();
        tx.execute("INSERT INTO nums VALUES (8, 'eight')", &[])
            .await
            .unwrap();
        tx.rollback().await.unwrap();
        let rows = client
            .query("SELECT n FROM nums WHERE n >= 7 ORDER BY n", &[])
            .await
            .unwrap();
        let ns: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
        assert_eq!(ns, vec![7], "committed kept, rolled back gone");

        // 11. An error in an extended query does not poison the connection.
        let err = client.query("SELECT 1/0", &[]).await.unwrap_err();
        assert_eq!(
            err.code().map(|c| c.code()),
            Some("22012"),
            "division by zero"
        );
        let row = client
            .query_one("SELECT $1::text", &[&"still here"])
            .await
            .unwrap();
        assert_eq!(
            row.get::<_, &str>(0),
            "still here",
            "connection usable after an error"
        );

        drop(client);
        conn_task.await.unwrap().unwrap();
    });

    node.stop("fast");
}
