//! End-to-end protocol test: `server::serve` over a real `Node` in a
//! temporary directory, driven by tokio-postgres (simple, extended, binary,
//! transactions, COPY) and by raw bytes (hostile input). It guards against
//! the protocol loop and the SQL session disagreeing about the contract —
//! implicit transactions, error recovery, parameter decoding — and against a
//! bad client affecting anyone else.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use common::node::Node as HotpairNode;
use engine::Role;
use pgtypes::config::Config;
use pgtypes::error::sqlstate;
use protocol::client::testing::{expect_fatal, first_error, until_ready};
use protocol::client::{Client, Connection};
use protocol::messages::{Bind, FrontendMessage};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

struct Node {
    addr: SocketAddr,
    _dir: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Node {
    async fn start() -> Node {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::new(dir.path());
        // fsync off: this test is about the protocol, never about a crash.
        config.set("fsync", "off").unwrap();
        config.set("shared_buffers", "1MB").unwrap();
        let db: Arc<HotpairNode> = HotpairNode::open(config, Role::Primary).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = oneshot::channel();
        let handle = tokio::spawn(common::postmaster::serve(
            db,
            listener,
            async move {
                let _ = rx.await;
            },
            None,
        ));
        Node {
            addr,
            _dir: dir,
            stop: Some(tx),
            handle: Some(handle),
        }
    }

    async fn pg(&self) -> tokio_postgres::Client {
        let conf = format!(
            "host=127.0.0.1 port={} user=test dbname=postgres",
            self.addr.port()
        );
        let (client, conn) = tokio_postgres::connect(&conf, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
    }

    async fn client(&self) -> Client {
        Client::connect(self.addr, &[("user", "test"), ("database", "postgres")])
            .await
            .unwrap()
    }

    async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.handle.take() {
            tokio::time::timeout(Duration::from_secs(30), h)
                .await
                .expect("serve returns")
                .unwrap()
                .unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simple_and_extended_queries() {
    let node = Node::start().await;
    let pg = node.pg().await;

    // 1. Simple protocol: DDL, multi-row insert, select.
    pg.batch_execute("CREATE TABLE t (a int4 PRIMARY KEY, b text)")
        .await
        .unwrap();
    pg.batch_execute("INSERT INTO t VALUES (1, 'one'), (2, 'two')")
        .await
        .unwrap();
    let msgs = pg
        .simple_query("SELECT a, b FROM t ORDER BY a")
        .await
        .unwrap();
    let rows: Vec<(String, String)> = msgs
        .iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => {
                Some((r.get(0).unwrap().to_string(), r.get(1).unwrap().to_string()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        rows,
        vec![("1".into(), "one".into()), ("2".into(), "two".into())],
        "simple select"
    );

    // 2. Several statements are one implicit transaction: the duplicate key
    //    rolls back the first insert too.
    let e = pg
        .batch_execute("INSERT INTO t VALUES (3, 'three'); INSERT INTO t VALUES (1, 'dup')")
        .await
        .unwrap_err();
    assert_eq!(e.code().unwrap().code(), sqlstate::UNIQUE_VIOLATION);
    let n: i64 = pg
        .query_one("SELECT count(*) FROM t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 2, "implicit transaction rolled back");

    // 3. Extended protocol with binary parameters and results.
    let st = pg.prepare("SELECT b FROM t WHERE a = $1").await.unwrap();
    let b: String = pg.query_one(&st, &[&1i32]).await.unwrap().get(0);
    assert_eq!(b, "one", "bound int4 parameter");
    let n = pg
        .execute("INSERT INTO t VALUES ($1, $2)", &[&10i32, &"ten"])
        .await
        .unwrap();
    assert_eq!(n, 1, "insert with parameters");
    let rows = pg
        .query("SELECT a, b FROM t WHERE a >= $1 ORDER BY a", &[&2i32])
        .await
        .unwrap();
    let got: Vec<(i32, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        got,
        vec![(2, "two".into()), (10, "ten".into())],
        "binary results"
    );

    // 4. Explicit transaction: rollback discards.
    let mut pg2 = node.pg().await;
    let tx = pg2.transaction().await.unwrap();
    tx.execute("INSERT INTO t VALUES ($1, $2)", &[&11i32, &"eleven"])
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    let n: i64 = pg
        .query_one("SELECT count(*) FROM t", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 3, "rolled back insert invisible");

    // 5. An error in a block aborts it until ROLLBACK.
    let mut c = node.client().await;
    c.simple_query("BEGIN").await.unwrap();
    assert!(c.simple_query("SELECT * FROM no_such_table").await.is_err());
    assert_eq!(c.tx_status(), b'E');
    let e = c.simple_query("SELECT 1").await.unwrap_err();
    assert_eq!(e.code(), Some(sqlstate::IN_FAILED_SQL_TRANSACTION));
    c.simple_query("ROLLBACK").await.unwrap();
    assert_eq!(c.tx_status(), b'I');

    // 6. COPY in and out.
    let tag = c
        .copy_in(
            "COPY t FROM STDIN",
            &[b"20\ttwenty\n21\ttwenty-one\n", b"22\t\\N\n"],
        )
        .await
        .unwrap();
    assert_eq!(tag, "COPY 3");
    let (data, tag) = c.copy_out("COPY t TO STDOUT").await.unwrap();
    assert_eq!(tag, "COPY 6");
    assert!(
        String::from_utf8_lossy(&data).contains("22\t\\N\n"),
        "copy out: {}",
        String::from_utf8_lossy(&data)
    );

    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_errors_and_others_keep_working() {
    let node = Node::start().await;
    let pg = node.pg().await;
    pg.batch_execute("CREATE TABLE k (a int4)").await.unwrap();

    // Random bytes instead of a startup packet.
    let stream = tokio::net::TcpStream::connect(node.addr).await.unwrap();
    let mut conn = Connection::new(stream);
    conn.feed_raw(&[0x13, 0x37, 0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5]);
    conn.flush().await.unwrap();
    expect_fatal(&mut conn, sqlstate::PROTOCOL_VIOLATION).await;

    // 2 GB length prefix.
    let mut c = node.client().await;
    let mut b = BytesMut::new();
    b.put_u8(b'Q');
    b.put_i32(i32::MAX);
    c.connection_mut().feed_raw(&b);
    c.connection_mut().flush().await.unwrap();
    expect_fatal(c.connection_mut(), sqlstate::PROTOCOL_VIOLATION).await;

    // Unknown message type.
    let mut c = node.client().await;
    c.connection_mut().feed_raw(b"!\0\0\0\x04");
    c.connection_mut().flush().await.unwrap();
    expect_fatal(c.connection_mut(), sqlstate::PROTOCOL_VIOLATION).await;

    // Wrong startup protocol version.
    let stream = tokio::net::TcpStream::connect(node.addr).await.unwrap();
    let mut conn = Connection::new(stream);
    let mut b = BytesMut::new();
    b.put_i32(8);
    b.put_i32(4 << 16);
    conn.feed_raw(&b);
    conn.flush().await.unwrap();
    expect_fatal(&mut conn, sqlstate::FEATURE_NOT_SUPPORTED).await;

    // Invalid UTF-8 in a query: an ERROR, the session continues.
    let mut c = node.client().await;
    let mut b = BytesMut::new();
    b.put_u8(b'Q');
    b.put_i32(4 + 10);
    b.put_slice(b"SELECT \xc3(\0");
    c.connection_mut().feed_raw(&b);
    c.connection_mut().flush().await.unwrap();
    let msgs = until_ready(&mut c).await;
    assert_eq!(
        first_error(&msgs).unwrap().code(),
        sqlstate::CHARACTER_NOT_IN_REPERTOIRE
    );
    assert_eq!(
        c.query_rows("SELECT 1").await.unwrap(),
        vec![vec![Some("1".to_string())]]
    );

    // Bind with the wrong parameter count: 08P01, the session continues.
    c.feed(FrontendMessage::Parse {
        name: "".into(),
        query: "SELECT a FROM k WHERE a = $1".into(),
        param_types: vec![],
    })
    .await
    .unwrap();
    c.feed(FrontendMessage::Bind(
        Bind::new("", "", &[], &[], &[]).unwrap(),
    ))
    .await
    .unwrap();
    c.feed(FrontendMessage::Execute {
        portal: "".into(),
        max_rows: 0,
    })
    .await
    .unwrap();
    c.send(FrontendMessage::Sync).await.unwrap();
    let msgs = until_ready(&mut c).await;
    let e = first_error(&msgs).unwrap();
    assert_eq!(e.code(), sqlstate::PROTOCOL_VIOLATION);
    assert_eq!(
        e.message(),
        "bind message supplies 0 parameters, but prepared statement \"\" requires 1"
    );
    assert_eq!(
        c.query_rows("SELECT 2").await.unwrap(),
        vec![vec![Some("2".to_string())]]
    );

    // A client that vanishes mid-transaction: its transaction is aborted.
    let mut gone = node.client().await;
    gone.simple_query("BEGIN; INSERT INTO k VALUES (1)")
        .await
        .unwrap();
    gone.connection_mut().stream_mut().shutdown().await.unwrap();
    drop(gone);

    // The first session never noticed any of it.
    pg.batch_execute("INSERT INTO k VALUES (2)").await.unwrap();
    let n: i64 = pg
        .query_one("SELECT count(*) FROM k", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1, "other session unaffected, vanished insert invisible");
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_portals_copy_and_parameters() {
    let node = Node::start().await;
    let mut pg = node.pg().await;

    // 1. ParameterStatus set as PostgreSQL reports it.
    let c = node.client().await;
    assert_eq!(c.parameter("server_encoding"), Some("UTF8"));
    assert_eq!(c.parameter("client_encoding"), Some("UTF8"));
    assert_eq!(c.parameter("DateStyle"), Some("ISO, MDY"));
    assert_eq!(c.parameter("integer_datetimes"), Some("on"));
    assert_eq!(c.parameter("standard_conforming_strings"), Some("on"));
    assert_eq!(c.parameter("in_hot_standby"), Some("off"));
    assert!(c
        .parameter("server_version")
        .unwrap_or("")
        .starts_with("15."));
    assert!(c.parameter("TimeZone").is_some());
    assert!(c.backend_key().is_some());
    drop(c);

    // 2. CancelRequest stops pg_sleep with 57014; the session goes on.
    let sleeper = node.pg().await;
    let sleeper_token = sleeper.cancel_token();
    let running = tokio::spawn(async move {
        let r = sleeper.simple_query("SELECT pg_sleep(60)").await;
        (
            r.map(|_| ())
                .map_err(|e| e.code().map(|c| c.code().to_string())),
            sleeper,
        )
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !running.is_finished() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "cancel never took effect"
        );
        sleeper_token
            .cancel_query(tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (res, sleeper) = running.await.unwrap();
    assert_eq!(
        res,
        Err(Some(sqlstate::QUERY_CANCELED.to_string())),
        "pg_sleep cancelled"
    );
    let one: i32 = sleeper
        .query_one("SELECT 1::int4", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(one, 1, "cancelled session still works");

    // 3. COPY FROM STDIN through tokio-postgres (extended protocol).
    pg.batch_execute("CREATE TABLE c (a int4, b text)")
        .await
        .unwrap();
    {
        use futures_util::SinkExt;
        let sink = pg
            .copy_in::<_, bytes::Bytes>("COPY c FROM STDIN")
            .await
            .unwrap();
        futures_util::pin_mut!(sink);
        for i in 0..1000 {
            sink.send(bytes::Bytes::from(format!("{i}\tv{i}\n")))
                .await
                .unwrap();
        }
        let n = sink.finish().await.unwrap();
        assert_eq!(n, 1000, "copy_in count");
    }
    let n: i64 = pg
        .query_one("SELECT count(*) FROM c", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1000);

    // 4. Portals: rows handed out in chunks inside a transaction.
    let tx = pg.transaction().await.unwrap();
    let portal = tx
        .bind("SELECT a FROM c WHERE a < $1 ORDER BY a", &[&25i32])
        .await
        .unwrap();
    let mut seen = Vec::new();
    loop {
        let rows = tx.query_portal(&portal, 10).await.unwrap();
        if rows.is_empty() {
            break;
        }
        seen.extend(rows.iter().map(|r| r.get::<_, i32>(0)));
    }
    assert_eq!(seen, (0..25).collect::<Vec<i32>>(), "portal chunks");
    tx.commit().await.unwrap();

    // 5. Several sessions at once, each in its own transaction.
    let mut handles = Vec::new();
    for s in 0..4 {
        let client = node.pg().await;
        handles.push(tokio::spawn(async move {
            for i in 0..20 {
                client
                    .execute(
                        "INSERT INTO c VALUES ($1, $2)",
                        &[&(10_000 + s * 100 + i), &"x"],
                    )
                    .await
                    .unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let n: i64 = pg
        .query_one("SELECT count(*) FROM c", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1080, "concurrent inserts all visible");
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psql_script_on_stdin() {
    let node = Node::start().await;
    let script = "CREATE TABLE p (a int4 PRIMARY KEY, b text);\n\
                  COPY p FROM STDIN;\n1\tone\n2\ttwo\n\\.\n\
                  INSERT INTO p VALUES (2, 'dup');\n\
                  SELECT a, b FROM p ORDER BY a;\n";
    let mut cmd = tokio::process::Command::new("psql");
    cmd.args([
        "-X",
        "-A",
        "-t",
        "-h",
        "127.0.0.1",
        "-p",
        &node.addr.port().to_string(),
        "-U",
        "postgres",
    ])
    .args(["-d", "postgres", "-f", "-"])
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let Ok(mut child) = cmd.spawn() else {
        eprintln!("psql not available, skipping");
        return;
    };
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(script.as_bytes()).await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stdout, "CREATE TABLE\nCOPY 2\n1|one\n2|two\n",
        "stderr: {stderr}"
    );
    assert!(
        stderr.contains("duplicate key value violates unique constraint"),
        "{stderr}"
    );
    node.stop().await;
}

/// With a single runtime worker, a session blocked on a row lock must not
/// stop the lock holder's COMMIT from being read and run: backend calls run
/// in `block_in_place`, so the worker moves on to other connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn lock_wait_does_not_stall_other_sessions() {
    let node = Node::start().await;
    let holder = node.pg().await;
    holder
        .batch_execute("CREATE TABLE w (a int4 PRIMARY KEY, n int4)")
        .await
        .unwrap();
    holder
        .batch_execute("INSERT INTO w VALUES (1, 0)")
        .await
        .unwrap();
    holder
        .batch_execute("BEGIN; UPDATE w SET n = n + 1 WHERE a = 1")
        .await
        .unwrap();

    let waiter = node.pg().await;
    let blocked = tokio::spawn(async move {
        waiter
            .execute("UPDATE w SET n = n + 1 WHERE a = 1", &[])
            .await
            .map(|n| (n, waiter))
    });
    // Round trips on the holder while the waiter (most likely) sits in its
    // lock wait; each needs a free runtime worker. Not required for the
    // final assertion, which holds whatever the interleaving.
    for _ in 0..20 {
        tokio::task::yield_now().await;
        holder.simple_query("SELECT 1").await.unwrap();
    }
    holder.batch_execute("COMMIT").await.unwrap();
    let (n, waiter) = tokio::time::timeout(Duration::from_secs(30), blocked)
        .await
        .expect("waiter finishes")
        .unwrap()
        .unwrap();
    assert_eq!(n, 1, "waiter updated the row after the holder committed");
    let v: i32 = waiter
        .query_one("SELECT n FROM w WHERE a = 1", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(v, 2, "both increments applied");
    node.stop().await;
}

/// A parameter sent as the given bytes in binary format, whatever its type.
#[derive(Debug)]
struct RawParam(Vec<u8>);

impl tokio_postgres::types::ToSql for RawParam {
    fn to_sql(
        &self,
        _ty: &tokio_postgres::types::Type,
        out: &mut BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        out.put_slice(&self.0);
        Ok(tokio_postgres::types::IsNull::No)
    }
    fn accepts(_ty: &tokio_postgres::types::Type) -> bool {
        true
    }
    tokio_postgres::types::to_sql_checked!();
}

/// A result column's binary bytes, whatever its type.
struct RawResult(Vec<u8>);

impl<'a> tokio_postgres::types::FromSql<'a> for RawResult {
    fn from_sql(
        _ty: &tokio_postgres::types::Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(RawResult(raw.to_vec()))
    }
    fn accepts(_ty: &tokio_postgres::types::Type) -> bool {
        true
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_jsonb_uuid_binary_format() {
    use tokio_postgres::types::Type;
    let node = Node::start().await;
    let pg = node.pg().await;
    pg.batch_execute("CREATE TABLE jt (id int, j json, b jsonb, u uuid)")
        .await
        .unwrap();

    // 1. Binary parameters: json is its text, jsonb a version byte then
    //    text, uuid 16 bytes (what tokio-postgres' serde_json / uuid send).
    let st = pg
        .prepare("INSERT INTO jt VALUES ($1, $2, $3, $4)")
        .await
        .unwrap();
    assert_eq!(st.params()[1], Type::JSON, "json parameter type");
    assert_eq!(st.params()[2], Type::JSONB, "jsonb parameter type");
    assert_eq!(st.params()[3], Type::UUID, "uuid parameter type");
    let mut jsonb = vec![1u8];
    jsonb.extend_from_slice(br#"{"b": 1, "a": [1.50, "x"], "b": 2}"#);
    let uuid: Vec<u8> = (0u8..16).collect();
    pg.execute(
        &st,
        &[
            &1i32,
            &RawParam(br#"{"b":  1}"#.to_vec()),
            &RawParam(jsonb),
            &RawParam(uuid.clone()),
        ],
    )
    .await
    .unwrap();

    // 2. Binary results in the same formats, jsonb in canonical form.
    let row = pg
        .query_one("SELECT j, b, u, u::text FROM jt", &[])
        .await
        .unwrap();
    assert_eq!(row.columns()[1].type_(), &Type::JSONB, "jsonb column type");
    assert_eq!(
        row.get::<_, RawResult>(0).0,
        br#"{"b":  1}"#.to_vec(),
        "json as given"
    );
    let mut want = vec![1u8];
    want.extend_from_slice(br#"{"a": [1.50, "x"], "b": 2}"#);
    assert_eq!(row.get::<_, RawResult>(1).0, want, "jsonb canonical");
    assert_eq!(row.get::<_, RawResult>(2).0, uuid, "uuid bytes");
    let text: String = row.get(3);
    assert_eq!(text, "00010203-0405-0607-0809-0a0b0c0d0e0f", "uuid text");

    // 3. A jsonb of an unknown version is refused, and the session goes on.
    let e = pg
        .execute(
            &st,
            &[
                &2i32,
                &RawParam(b"1".to_vec()),
                &RawParam(b"\x02{}".to_vec()),
                &RawParam(uuid),
            ],
        )
        .await
        .unwrap_err();
    assert_eq!(
        e.code().unwrap().code(),
        sqlstate::INVALID_BINARY_REPRESENTATION,
        "bad jsonb version"
    );
    let n: i64 = pg
        .query_one("SELECT count(*) FROM jt", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1, "one row");
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inet_cidr_binary_format() {
    use std::net::IpAddr;
    use tokio_postgres::types::Type;
    let node = Node::start().await;
    let pg = node.pg().await;
    pg.batch_execute("CREATE TABLE it (id int, i inet, c cidr, a inet[])")
        .await
        .unwrap();

    // 1. Binary parameters: tokio-postgres sends an IpAddr as an inet of
    //    full mask length (family 2/3, bits, is_cidr, length, address).
    let st = pg
        .prepare("INSERT INTO it VALUES ($1, $2, $3, $4)")
        .await
        .unwrap();
    assert_eq!(st.params()[1], Type::INET, "inet parameter type");
    assert_eq!(st.params()[2], Type::CIDR, "cidr parameter type");
    assert_eq!(st.params()[3], Type::INET_ARRAY, "inet[] parameter type");
    let v4: IpAddr = "192.168.1.5".parse().unwrap();
    let v6: IpAddr = "2001:db8::1".parse().unwrap();
    // 10.0.0.0/8 as cidr_send writes it.
    let cidr = vec![2u8, 8, 1, 4, 10, 0, 0, 0];
    pg.execute(&st, &[&1i32, &v4, &RawParam(cidr.clone()), &vec![v4, v6]])
        .await
        .unwrap();
    pg.execute(
        &st,
        &[&2i32, &v6, &RawParam(cidr.clone()), &Vec::<IpAddr>::new()],
    )
    .await
    .unwrap();

    // 2. Binary results decode back; text forms as PostgreSQL prints them.
    let rows = pg
        .query(
            "SELECT i, c, a, i::text, c::text, set_masklen(i, 24) FROM it ORDER BY id",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        rows[0].columns()[0].type_(),
        &Type::INET,
        "inet column type"
    );
    assert_eq!(
        rows[0].columns()[1].type_(),
        &Type::CIDR,
        "cidr column type"
    );
    assert_eq!(rows[0].get::<_, IpAddr>(0), v4, "inet v4 round trip");
    assert_eq!(rows[1].get::<_, IpAddr>(0), v6, "inet v6 round trip");
    assert_eq!(rows[0].get::<_, RawResult>(1).0, cidr, "cidr bytes");
    assert_eq!(rows[0].get::<_, Vec<IpAddr>>(2), vec![v4, v6], "inet[]");
    assert_eq!(rows[0].get::<_, String>(3), "192.168.1.5/32", "text(inet)");
    assert_eq!(rows[0].get::<_, String>(4), "10.0.0.0/8", "text(cidr)");
    assert_eq!(
        rows[0].get::<_, RawResult>(5).0,
        vec![2u8, 24, 0, 4, 192, 168, 1, 5],
        "inet_send with a mask length"
    );

    // 3. A cidr with bits right of its mask is refused (22P03), and the
    //    session goes on.
    let e = pg
        .execute(
            &st,
            &[
                &3i32,
                &v4,
                &RawParam(vec![2u8, 8, 1, 4, 10, 0, 0, 1]),
                &vec![v4],
            ],
        )
        .await
        .unwrap_err();
    assert_eq!(
        e.code().unwrap().code(),
        sqlstate::INVALID_BINARY_REPRESENTATION,
        "cidr with host bits"
    );
    let n: i64 = pg
        .query_one(
            "SELECT count(*) FROM it WHERE i << '0.0.0.0/0' OR i << '::/0'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 2, "two rows");
    node.stop().await;
}
