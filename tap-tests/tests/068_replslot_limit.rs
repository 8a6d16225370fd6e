//! Replication slots and the WAL they hold, ported from PostgreSQL's
//! src/test/recovery/t/019_replslot_limit.pl, and across a failover:
//! * a slot's `wal_status` goes `reserved` → `extended` as its stopped
//!   standby falls behind by more than `max_wal_size`; with
//!   `max_slot_wal_keep_size` it becomes `unreserved` past the limit and a
//!   checkpoint invalidates it (PostgreSQL's log line, `lost`, restart_lsn
//!   NULL, kept across a restart); its standby then gets "requested WAL
//!   segment … has already been removed";
//! * slots are a node's own: the standby's slot for its cascaded standby
//!   survives the standby's promotion and keeps holding WAL there, while
//!   the old primary's slot does not exist on the promoted node.
//!
//! What goes wrong without this: a slot whose standby is gone fills the
//! disk with WAL, or a failover drops the WAL a cascaded standby needs.

use tap_tests::Node;

const STATUS: &str =
    "SELECT wal_status, restart_lsn IS NULL, safe_wal_size IS NULL FROM pg_replication_slots WHERE slot_name = 'rep1'";

/// About `mb` MB of WAL, then a checkpoint.
fn advance_wal(node: &Node, mb: u32) {
    for _ in 0..mb {
        node.safe_sql(
            "INSERT INTO filler SELECT g, repeat('x', 500) FROM generate_series(1, 1500) g; DELETE FROM filler",
        );
    }
    node.safe_sql("CHECKPOINT");
}

#[test]
fn slot_limit_and_failover() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("wal_segment_size = 1MB\nmax_wal_size = 4MB");
    primary.start();
    primary.safe_sql("CREATE TABLE filler (a int, b text)");
    primary.create_physical_slot("rep1");
    let standby = Node::new("standby");
    standby.init_from_backup_with_slot(&primary, "rep1");
    standby.start();
    primary.wait_for_replay(&standby);
    assert_eq!(
        primary.safe_sql(STATUS),
        "reserved|f|t",
        "within max_wal_size, no limit"
    );

    // The standby goes away; the slot holds WAL beyond max_wal_size.
    standby.stop("fast");
    advance_wal(&primary, 6);
    assert_eq!(
        primary.safe_sql(STATUS),
        "extended|f|t",
        "held beyond max_wal_size"
    );

    // A limit below what the slot holds: unreserved, then lost.
    primary.stop("fast");
    primary.append_conf("max_slot_wal_keep_size = 2MB");
    primary.start();
    assert_eq!(primary.safe_sql(STATUS), "unreserved|f|f", "past the limit");
    let offset = primary.log_position();
    advance_wal(&primary, 1);
    primary.wait_for_log("invalidating slot \"rep1\" because its restart_lsn", offset);
    assert_eq!(primary.safe_sql(STATUS), "lost|t|t");
    primary.restart();
    assert_eq!(
        primary.safe_sql(STATUS),
        "lost|t|t",
        "kept across a restart"
    );
    let offset = standby.log_position();
    standby.start_until(&["database system is ready to accept read-only connections"]);
    standby.wait_for_log("has already been removed", offset);

    // Slots across a failover: standby_2 of the primary serves standby_3
    // through its own slot; standby_2 is promoted; the slot stays and
    // holds WAL on the new primary while standby_3 is away.
    let standby_2 = Node::standby_of(&primary, "standby_2");
    standby_2.create_physical_slot("cascade_slot");
    let standby_3 = Node::new("standby_3");
    standby_3.init_from_backup_with_slot(&standby_2, "cascade_slot");
    standby_3.start();
    primary.stop("fast");
    standby_2.promote();
    assert_eq!(
        standby_2.safe_sql("SELECT string_agg(slot_name, ',') FROM pg_replication_slots"),
        "cascade_slot",
        "the promoted node has its own slot, not the old primary's"
    );
    standby_2.safe_sql("CREATE TABLE after_failover (a int)");
    standby_2.wait_for_replay(&standby_3);
    assert_eq!(standby_3.timeline(), 2, "the cascaded standby followed");
    standby_3.stop("fast");
    let held = standby_2.safe_sql("SELECT restart_lsn FROM pg_replication_slots");
    advance_wal(&standby_2, 3);
    assert_eq!(
        standby_2.safe_sql("SELECT restart_lsn, wal_status FROM pg_replication_slots"),
        format!("{held}|reserved"),
        "the slot holds WAL on the promoted node"
    );
    standby_3.start();
    standby_2.wait_for_replay(&standby_3);
    assert_eq!(
        standby_3.safe_sql("SELECT count(*) FROM filler"),
        "0",
        "caught up from the held WAL"
    );
}
