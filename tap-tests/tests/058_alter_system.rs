//! ALTER SYSTEM (`pgtypes::config::alter_system`): settings written to
//! `DIR/postgresql.auto.conf` take effect at the next start, on a primary
//! and on a standby (each writes its own file), and RESET ALL empties it.
//!
//! * `alter_system_survives_a_restart`

use tap_tests::Node;

#[test]
fn alter_system_survives_a_restart() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let standby = Node::standby_of(&primary, "standby");
    for node in [&primary, &standby] {
        node.safe_sql("ALTER SYSTEM SET work_mem = '8MB'");
        node.safe_sql("ALTER SYSTEM SET statement_timeout TO 5000");
        node.safe_sql("ALTER SYSTEM RESET statement_timeout");
        node.expect_error("ALTER SYSTEM SET nosuch = 1", "42704");
        node.expect_error("BEGIN; ALTER SYSTEM SET work_mem = '1MB'", "25001");
        let text = std::fs::read_to_string(node.data_dir().join("postgresql.auto.conf"))
            .expect("postgresql.auto.conf written");
        assert!(text.contains("work_mem = '8MB'"), "{}: {text}", node.name());
        assert!(
            !text.contains("statement_timeout"),
            "{}: {text}",
            node.name()
        );
    }
    standby.restart();
    primary.restart();
    for node in [&primary, &standby] {
        assert_eq!(node.safe_sql("SHOW work_mem"), "8MB", "{}", node.name());
        node.safe_sql("ALTER SYSTEM RESET ALL");
    }
    standby.restart();
    primary.restart();
    for node in [&primary, &standby] {
        assert_eq!(node.safe_sql("SHOW work_mem"), "4MB", "{}", node.name());
    }
}
