//! The layer rule, checked where cargo cannot check it.
//!
//! Cargo rejects a dependency cycle between crates, but not a crate that
//! starts depending on one above it without closing a cycle (`txn` on
//! `protocol`, say), nor a module that reaches up to a later layer inside a
//! crate that holds several (`storage::hio` calling into `heapam`). Both
//! would let the circle of imports this layout exists to prevent grow back
//! one convenient `use` at a time. This test reads every workspace
//! `Cargo.toml` and every module of the multi-layer crates and fails naming
//! the file, the line and the layer it reached.
//!
//! The tables below are the architecture (docs/architecture/overview.md):
//! change them there and here together.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each workspace crate and the workspace crates it may depend on.
const CRATES: &[(&str, &[&str])] = &[
    ("pgtypes", &[]),
    ("wal", &["pgtypes"]),
    ("protocol", &["pgtypes"]),
    ("txn", &["pgtypes"]),
    ("storage", &["pgtypes", "txn", "wal"]),
    ("engine", &["pgtypes", "txn", "wal", "storage"]),
    ("server", &["pgtypes", "protocol"]),
    (
        "sql",
        &["pgtypes", "txn", "wal", "storage", "engine", "server"],
    ),
    (
        "common",
        &[
            "pgtypes", "wal", "protocol", "txn", "storage", "engine", "server", "sql",
        ],
    ),
    (
        "primary",
        &[
            "pgtypes", "wal", "protocol", "txn", "storage", "engine", "server", "sql", "common",
        ],
    ),
    (
        "standby",
        &[
            "pgtypes", "wal", "protocol", "txn", "storage", "engine", "server", "sql", "common",
        ],
    ),
    ("tap-tests", &[]),
];

/// Crates that hold several layers: source directory (from the workspace
/// root) and its modules, lowest layer first. A module may use modules of
/// its own layer and of layers before it.
const MODULE_LAYERS: &[(&str, &[&[&str]])] = &[
    (
        "common/txn/src",
        &[
            &["clog", "snapshot", "subtrans"],
            &["old_snapshot"],
            // procarray holds the predicate-lock state of SSI.
            &["procarray", "lmgr", "predicate"],
        ],
    ),
    (
        "common/storage/src",
        &[
            // Huge-page arrays: used by the index and the buffer pool.
            &["hugemem"],
            &[
                "bufpage", "htup", "smgr", "fsm", "index", "keycodec", "rowcodec",
            ],
            // The IO counters name the ring kinds bufmgr defines.
            &["bufmgr", "pgstat_io"],
            &["xloginsert", "hio"],
            // TOAST and the heap call each other (chunks are heap tuples;
            // the heap names a table's TOAST relation).
            &["heapam", "heapam_visibility", "heapam_xlog", "toast"],
        ],
    ),
    (
        "common/engine/src",
        &[
            &[
                "backend_status",
                "acl",
                "catalog",
                "comment",
                "namespace",
                "statistics",
                "replication",
                "syncrep",
                "standby_conflict",
                "sequence",
                "view",
                "pg_enum",
                "pg_proc",
                "pg_trigger",
            ],
            &["indexing"],
            &["xact", "twophase"],
            &["xact_redo"],
        ],
    ),
    (
        "common/sql/src",
        &[
            &["parser", "regexp", "roles"],
            &[
                "functions",
                "expr",
                "jsonfuncs",
                "network",
                "pgcatalog",
                "sysviews",
                "indexcmds",
                "namespace",
                "privileges",
                "parse_func",
            ],
            // Transition tables: trigger frames the planner resolves names in.
            &["planner", "transition"],
            // The executor calls sequences and CHECK constraints, which
            // build on DDL's context: one layer until those move down.
            &[
                "executor",
                "utility",
                "copy",
                "ddl",
                "analyze",
                "sequence",
                "tablecmds",
                "tablerewrite",
                "ri_triggers",
                "trigger",
                "schemacmds",
                "view",
                "typecmds",
                "comment",
                "aclchk",
                // User functions run statements (SPI) from expressions.
                "fmgr",
                "functioncmds",
                "plpgsql",
                "spi",
                // SQL cursors (DECLARE / FETCH) run plans across statements.
                "portalcmds",
            ],
            &["shdepend"],
            &["session"],
        ],
    ),
    (
        "common/src",
        &[
            &["checkpointer", "node", "redo", "xlog", "auth"],
            &[
                "postmaster",
                "walsender",
                "basebackup",
                "standby_log",
                "old_snapshot_tick",
                "checksums",
            ],
            &["tests"],
        ],
    ),
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("common/ has a parent")
        .to_path_buf()
}

/// The `[dependencies]` names of a Cargo.toml (not dev-dependencies: a
/// test may use anything).
fn dependencies(toml: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_deps = false;
    for line in toml.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_deps = t == "[dependencies]";
            continue;
        }
        if in_deps {
            if let Some((name, _)) = t.split_once(['=', '.']) {
                let name = name.trim();
                if !name.is_empty() && !name.starts_with('#') {
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

/// Which workspace crate lives where.
fn manifest(name: &str) -> PathBuf {
    let root = workspace_root();
    match name {
        "common" | "wal" | "primary" | "standby" | "tap-tests" => root.join(name),
        _ => root.join("common").join(name),
    }
    .join("Cargo.toml")
}

/// Crate-level violations: workspace crates a crate depends on that its
/// row does not allow.
fn crate_violations() -> Vec<String> {
    let names: Vec<&str> = CRATES.iter().map(|(n, _)| *n).collect();
    let mut out = Vec::new();
    for (name, allowed) in CRATES {
        let p = manifest(name);
        let toml =
            std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
        for dep in dependencies(&toml) {
            if names.contains(&dep.as_str()) && !allowed.contains(&dep.as_str()) {
                out.push(format!("crate {name} depends on {dep}, a layer above it"));
            }
        }
    }
    out
}

/// Module names a source file reaches inside its own crate:
/// `crate::name` anywhere, `super::name` in a top-level file; comments are
/// skipped, items of the crate root (`crate::Engine`) are not modules.
fn module_refs(src: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let code = match line.find("//") {
            Some(c) => &line[..c],
            None => line,
        };
        for prefix in ["crate::", "super::"] {
            let mut rest = code;
            while let Some(at) = rest.find(prefix) {
                rest = &rest[at + prefix.len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                    out.push((i + 1, name));
                }
            }
        }
    }
    out
}

/// Module-level violations in one multi-layer crate, given its files.
fn module_violations(dir: &str, layers: &[&[&str]], files: &[(String, String)]) -> Vec<String> {
    let layer_of: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(i, ms)| ms.iter().map(move |m| (*m, i)))
        .collect();
    let mut out = Vec::new();
    for (module, src) in files {
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(&own) = layer_of.get(module.as_str()) else {
            out.push(format!("{dir}/{module}.rs is in no layer of the table"));
            continue;
        };
        for (line, target) in module_refs(src) {
            if let Some(&theirs) = layer_of.get(target.as_str()) {
                if theirs > own {
                    out.push(format!(
                        "{dir}/{module}.rs:{line} uses `{target}` (layer {theirs}) from layer {own}"
                    ));
                }
            }
        }
    }
    out
}

/// A crate's modules: `name.rs` files and `name/` directories (all the
/// files under a directory count as that module).
fn modules(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        if p.is_dir() {
            let mut text = String::new();
            for f in std::fs::read_dir(&p).expect("read module directory") {
                let f = f.expect("entry").path();
                if f.extension().is_some_and(|e| e == "rs") {
                    text.push_str(&std::fs::read_to_string(&f).expect("read source"));
                    text.push('\n');
                }
            }
            out.push((name, text));
        } else if p.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&p).expect("read source");
            out.push((name, text));
        }
    }
    out
}

#[test]
fn crates_depend_only_on_layers_below() {
    let v = crate_violations();
    assert!(v.is_empty(), "layer violations:\n{}", v.join("\n"));
}

#[test]
fn modules_use_only_their_layer_and_those_below() {
    let root = workspace_root();
    let mut all = Vec::new();
    for (dir, layers) in MODULE_LAYERS {
        all.extend(module_violations(dir, layers, &modules(&root.join(dir))));
    }
    assert!(all.is_empty(), "layer violations:\n{}", all.join("\n"));
}

/// The checker itself: an upward `use`, an upward `super::` path and a
/// module missing from the table are each reported; comments and root
/// items are not.
#[test]
fn the_checker_catches_an_upward_import() {
    let layers: &[&[&str]] = &[&["low"], &["high"]];
    let files = vec![
        (
            "low".to_string(),
            "use crate::high::Thing;\n// crate::high in a comment\nuse crate::Root;\n".to_string(),
        ),
        ("high".to_string(), "use super::low::Other;\n".to_string()),
        ("stray".to_string(), String::new()),
    ];
    let v = module_violations("x", layers, &files);
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(v[0].contains("x/low.rs:1 uses `high`"), "{v:?}");
    assert!(v[1].contains("stray.rs is in no layer"), "{v:?}");
    assert_eq!(
        dependencies("[dependencies]\ntxn.workspace = true\nbytes = \"1\"\n[dev-dependencies]\nsql.workspace = true\n"),
        vec!["txn", "bytes"]
    );
}
