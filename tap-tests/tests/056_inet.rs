//! inet and cidr values survive WAL replay on a standby, a crash and a
//! clean restart.
//!
//! Their stored form (family, mask length, address bytes) is read back by
//! column type, and an index on an inet column is rebuilt from the heap at
//! start. A decoder that mixes up the families, drops the mask length or
//! keys inet and cidr differently passes every single-session test and
//! fails here: the standby, or the restarted primary, would print other
//! addresses or stop enforcing the primary key.

use tap_tests::Node;

const ROWS: &str = "SELECT i, c, a FROM inet_r ORDER BY i";
const WANT: &str = "10.0.0.1/24|192.168.0.0/24|{}\n\
                    10.0.0.1|10.0.0.0/8|{10.0.0.1/24,::1}\n\
                    ::ffff:1.2.3.4|::/0|\n\
                    2001:db8::1/64|2001:db8::/32|{2001:db8::/32}";

#[test]
fn inet_survives_replay_and_restart() {
    // 1. A primary and its standby; a table keyed by inet, with cidr and
    //    inet[] columns, and one row deleted again.
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let standby = Node::standby_of(&primary, "standby");
    primary.safe_sql("CREATE TABLE inet_r (i inet PRIMARY KEY, c cidr, a inet[])");
    primary.safe_sql(
        "INSERT INTO inet_r VALUES ('10.0.0.1', '10/8', '{10.0.0.1/24,::1}'), \
         ('10.0.0.1/24', '192.168', '{}'), ('::ffff:1.2.3.4', '::/0', NULL), \
         ('2001:db8::1/64', '2001:db8::/32', ARRAY['2001:db8::/32'::inet]), ('1.1.1.1', '1/8', NULL)",
    );
    primary.safe_sql("DELETE FROM inet_r WHERE i = '1.1.1.1'");
    assert_eq!(primary.safe_sql(ROWS), WANT, "rows on the primary");

    // 2. The standby decodes the replayed rows and uses the index.
    let lsn = primary.lsn("write");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    assert_eq!(standby.safe_sql(ROWS), WANT, "rows on the standby");
    assert_eq!(
        standby.safe_sql("SELECT c FROM inet_r WHERE i = '10.0.0.1/32'::cidr"),
        "10.0.0.0/8",
        "lookup by key on the standby, probed with a cidr"
    );

    // 3. A crash: redo rebuilds the rows; the primary key still holds.
    primary.stop("immediate");
    primary.start();
    assert_eq!(primary.safe_sql(ROWS), WANT, "rows after crash recovery");
    let err = primary
        .sql("INSERT INTO inet_r VALUES ('10.0.0.1/32', '10/8', NULL)")
        .unwrap_err();
    assert_eq!(err.code(), "23505", "primary key after recovery: {err}");

    // 4. A clean restart of both, then more rows replayed.
    primary.restart();
    assert_eq!(primary.safe_sql(ROWS), WANT, "rows after a clean restart");
    primary.safe_sql("INSERT INTO inet_r VALUES ('0.0.0.0/0', '0/0', '{::/0}')");
    standby.restart();
    let lsn = primary.lsn("write");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    assert_eq!(
        standby.safe_sql("SELECT i, a FROM inet_r WHERE i << '10/8' OR i = '0/0' ORDER BY i"),
        "0.0.0.0/0|{::/0}\n10.0.0.1/24|{}\n10.0.0.1|{10.0.0.1/24,::1}",
        "standby after restarts"
    );
}
