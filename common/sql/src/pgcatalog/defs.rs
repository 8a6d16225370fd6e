//! The column lists of the PostgreSQL 15 catalogs and views hotpair
//! serves, in PostgreSQL's order with its names (generated from a
//! PostgreSQL 15 server's `pg_attribute`; types mapped to hotpair's:
//! `"char"` → char(1), `int2vector` → int2[], `oidvector` → oid[],
//! `pg_node_tree`, `aclitem[]`, `anyarray`, `inet` → text / text[],
//! `real` → float8).

use pgtypes::sqltype::{ArrayElem as A, RegKind, SqlType as T};

/// `pg_class`'s columns (PostgreSQL 15).
pub static PG_CLASS: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("relname", T::Name),
    ("relnamespace", T::Oid),
    ("reltype", T::Oid),
    ("reloftype", T::Oid),
    ("relowner", T::Oid),
    ("relam", T::Oid),
    ("relfilenode", T::Oid),
    ("reltablespace", T::Oid),
    ("relpages", T::Int4),
    ("reltuples", T::Float8),
    ("relallvisible", T::Int4),
    ("reltoastrelid", T::Oid),
    ("relhasindex", T::Bool),
    ("relisshared", T::Bool),
    ("relpersistence", T::Char(1)),
    ("relkind", T::Char(1)),
    ("relnatts", T::Int2),
    ("relchecks", T::Int2),
    ("relhasrules", T::Bool),
    ("relhastriggers", T::Bool),
    ("relhassubclass", T::Bool),
    ("relrowsecurity", T::Bool),
    ("relforcerowsecurity", T::Bool),
    ("relispopulated", T::Bool),
    ("relreplident", T::Char(1)),
    ("relispartition", T::Bool),
    ("relrewrite", T::Oid),
    ("relfrozenxid", T::Xid),
    ("relminmxid", T::Xid),
    ("relacl", T::Array(A::Text)),
    ("reloptions", T::Array(A::Text)),
    ("relpartbound", T::Text),
];

/// `pg_namespace`'s columns (PostgreSQL 15).
pub static PG_NAMESPACE: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("nspname", T::Name),
    ("nspowner", T::Oid),
    ("nspacl", T::Array(A::Text)),
];

/// `pg_attribute`'s columns (PostgreSQL 15).
pub static PG_ATTRIBUTE: &[(&str, T)] = &[
    ("attrelid", T::Oid),
    ("attname", T::Name),
    ("atttypid", T::Oid),
    ("attstattarget", T::Int4),
    ("attlen", T::Int2),
    ("attnum", T::Int2),
    ("attndims", T::Int4),
    ("attcacheoff", T::Int4),
    ("atttypmod", T::Int4),
    ("attbyval", T::Bool),
    ("attalign", T::Char(1)),
    ("attstorage", T::Char(1)),
    ("attcompression", T::Char(1)),
    ("attnotnull", T::Bool),
    ("atthasdef", T::Bool),
    ("atthasmissing", T::Bool),
    ("attidentity", T::Char(1)),
    ("attgenerated", T::Char(1)),
    ("attisdropped", T::Bool),
    ("attislocal", T::Bool),
    ("attinhcount", T::Int4),
    ("attcollation", T::Oid),
    ("attacl", T::Array(A::Text)),
    ("attoptions", T::Array(A::Text)),
    ("attfdwoptions", T::Array(A::Text)),
    ("attmissingval", T::Text),
];

/// `pg_type`'s columns (PostgreSQL 15).
pub static PG_TYPE: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("typname", T::Name),
    ("typnamespace", T::Oid),
    ("typowner", T::Oid),
    ("typlen", T::Int2),
    ("typbyval", T::Bool),
    ("typtype", T::InternalChar),
    ("typcategory", T::InternalChar),
    ("typispreferred", T::Bool),
    ("typisdefined", T::Bool),
    ("typdelim", T::InternalChar),
    ("typrelid", T::Oid),
    ("typsubscript", T::Reg(RegKind::Proc)),
    ("typelem", T::Oid),
    ("typarray", T::Oid),
    ("typinput", T::Reg(RegKind::Proc)),
    ("typoutput", T::Reg(RegKind::Proc)),
    ("typreceive", T::Reg(RegKind::Proc)),
    ("typsend", T::Reg(RegKind::Proc)),
    ("typmodin", T::Reg(RegKind::Proc)),
    ("typmodout", T::Reg(RegKind::Proc)),
    ("typanalyze", T::Reg(RegKind::Proc)),
    ("typalign", T::InternalChar),
    ("typstorage", T::InternalChar),
    ("typnotnull", T::Bool),
    ("typbasetype", T::Oid),
    ("typtypmod", T::Int4),
    ("typndims", T::Int4),
    ("typcollation", T::Oid),
    ("typdefaultbin", T::Text),
    ("typdefault", T::Text),
    ("typacl", T::Array(A::Text)),
];

/// `pg_enum`'s columns (PostgreSQL 15; enumsortorder is `real` there).
pub static PG_ENUM: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("enumtypid", T::Oid),
    ("enumsortorder", T::Float8),
    ("enumlabel", T::Name),
];

/// `pg_index`'s columns (PostgreSQL 15).
pub static PG_INDEX: &[(&str, T)] = &[
    ("indexrelid", T::Oid),
    ("indrelid", T::Oid),
    ("indnatts", T::Int2),
    ("indnkeyatts", T::Int2),
    ("indisunique", T::Bool),
    ("indnullsnotdistinct", T::Bool),
    ("indisprimary", T::Bool),
    ("indisexclusion", T::Bool),
    ("indimmediate", T::Bool),
    ("indisclustered", T::Bool),
    ("indisvalid", T::Bool),
    ("indcheckxmin", T::Bool),
    ("indisready", T::Bool),
    ("indislive", T::Bool),
    ("indisreplident", T::Bool),
    ("indkey", T::Array(A::Int2Vector)),
    ("indcollation", T::Array(A::OidVector)),
    ("indclass", T::Array(A::OidVector)),
    ("indoption", T::Array(A::Int2Vector)),
    ("indexprs", T::Text),
    ("indpred", T::Text),
];

/// `pg_am`'s columns (PostgreSQL 15).
pub static PG_AM: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("amname", T::Name),
    ("amhandler", T::Reg(RegKind::Proc)),
    ("amtype", T::Char(1)),
];

/// `pg_attrdef`'s columns (PostgreSQL 15).
pub static PG_ATTRDEF: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("adrelid", T::Oid),
    ("adnum", T::Int2),
    ("adbin", T::Text),
];

/// `pg_constraint`'s columns (PostgreSQL 15).
pub static PG_CONSTRAINT: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("conname", T::Name),
    ("connamespace", T::Oid),
    ("contype", T::Char(1)),
    ("condeferrable", T::Bool),
    ("condeferred", T::Bool),
    ("convalidated", T::Bool),
    ("conrelid", T::Oid),
    ("contypid", T::Oid),
    ("conindid", T::Oid),
    ("conparentid", T::Oid),
    ("confrelid", T::Oid),
    ("confupdtype", T::Char(1)),
    ("confdeltype", T::Char(1)),
    ("confmatchtype", T::Char(1)),
    ("conislocal", T::Bool),
    ("coninhcount", T::Int4),
    ("connoinherit", T::Bool),
    ("conkey", T::Array(A::Int2)),
    ("confkey", T::Array(A::Int2)),
    ("conpfeqop", T::Array(A::Oid)),
    ("conppeqop", T::Array(A::Oid)),
    ("conffeqop", T::Array(A::Oid)),
    ("confdelsetcols", T::Array(A::Int2)),
    ("conexclop", T::Array(A::Oid)),
    ("conbin", T::Text),
];

/// `pg_collation`'s columns (PostgreSQL 15).
pub static PG_COLLATION: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("collname", T::Name),
    ("collnamespace", T::Oid),
    ("collowner", T::Oid),
    ("collprovider", T::Char(1)),
    ("collisdeterministic", T::Bool),
    ("collencoding", T::Int4),
    ("collcollate", T::Text),
    ("collctype", T::Text),
    ("colliculocale", T::Text),
    ("collversion", T::Text),
];

/// `pg_policy`'s columns (PostgreSQL 15).
pub static PG_POLICY: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("polname", T::Name),
    ("polrelid", T::Oid),
    ("polcmd", T::Char(1)),
    ("polpermissive", T::Bool),
    ("polroles", T::Array(A::Oid)),
    ("polqual", T::Text),
    ("polwithcheck", T::Text),
];

/// `pg_statistic_ext`'s columns (PostgreSQL 15).
pub static PG_STATISTIC_EXT: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("stxrelid", T::Oid),
    ("stxname", T::Name),
    ("stxnamespace", T::Oid),
    ("stxowner", T::Oid),
    ("stxstattarget", T::Int4),
    ("stxkeys", T::Array(A::Int2Vector)),
    ("stxkind", T::Array(A::Char)),
    ("stxexprs", T::Text),
];

/// `pg_publication`'s columns (PostgreSQL 15).
pub static PG_PUBLICATION: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("pubname", T::Name),
    ("pubowner", T::Oid),
    ("puballtables", T::Bool),
    ("pubinsert", T::Bool),
    ("pubupdate", T::Bool),
    ("pubdelete", T::Bool),
    ("pubtruncate", T::Bool),
    ("pubviaroot", T::Bool),
];

/// `pg_publication_namespace`'s columns (PostgreSQL 15).
pub static PG_PUBLICATION_NAMESPACE: &[(&str, T)] =
    &[("oid", T::Oid), ("pnpubid", T::Oid), ("pnnspid", T::Oid)];

/// `pg_publication_rel`'s columns (PostgreSQL 15).
pub static PG_PUBLICATION_REL: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("prpubid", T::Oid),
    ("prrelid", T::Oid),
    ("prqual", T::Text),
    ("prattrs", T::Array(A::Int2Vector)),
];

/// `pg_inherits`'s columns (PostgreSQL 15).
pub static PG_INHERITS: &[(&str, T)] = &[
    ("inhrelid", T::Oid),
    ("inhparent", T::Oid),
    ("inhseqno", T::Int4),
    ("inhdetachpending", T::Bool),
];

/// `pg_database`'s columns (PostgreSQL 15).
pub static PG_DATABASE: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("datname", T::Name),
    ("datdba", T::Oid),
    ("encoding", T::Int4),
    ("datlocprovider", T::Char(1)),
    ("datistemplate", T::Bool),
    ("datallowconn", T::Bool),
    ("datconnlimit", T::Int4),
    ("datfrozenxid", T::Xid),
    ("datminmxid", T::Xid),
    ("dattablespace", T::Oid),
    ("datcollate", T::Text),
    ("datctype", T::Text),
    ("daticulocale", T::Text),
    ("datcollversion", T::Text),
    ("datacl", T::Array(A::Text)),
];

/// `pg_default_acl`'s columns (PostgreSQL 15).
pub static PG_DEFAULT_ACL: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("defaclrole", T::Oid),
    ("defaclnamespace", T::Oid),
    ("defaclobjtype", T::Char(1)),
    ("defaclacl", T::Array(A::Text)),
];

/// `pg_auth_members`'s columns (PostgreSQL 15).
pub static PG_AUTH_MEMBERS: &[(&str, T)] = &[
    ("roleid", T::Oid),
    ("member", T::Oid),
    ("grantor", T::Oid),
    ("admin_option", T::Bool),
];

/// `pg_description`'s columns (PostgreSQL 15).
pub static PG_DESCRIPTION: &[(&str, T)] = &[
    ("objoid", T::Oid),
    ("classoid", T::Oid),
    ("objsubid", T::Int4),
    ("description", T::Text),
];

/// `pg_trigger`'s columns (PostgreSQL 15).
pub static PG_TRIGGER: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("tgrelid", T::Oid),
    ("tgparentid", T::Oid),
    ("tgname", T::Name),
    ("tgfoid", T::Oid),
    ("tgtype", T::Int2),
    ("tgenabled", T::Char(1)),
    ("tgisinternal", T::Bool),
    ("tgconstrrelid", T::Oid),
    ("tgconstrindid", T::Oid),
    ("tgconstraint", T::Oid),
    ("tgdeferrable", T::Bool),
    ("tginitdeferred", T::Bool),
    ("tgnargs", T::Int2),
    ("tgattr", T::Array(A::Int2Vector)),
    ("tgargs", T::Text),
    ("tgqual", T::Text),
    ("tgoldtable", T::Name),
    ("tgnewtable", T::Name),
];

/// `pg_rewrite`'s columns (PostgreSQL 15).
pub static PG_REWRITE: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("rulename", T::Name),
    ("ev_class", T::Oid),
    ("ev_type", T::Char(1)),
    ("ev_enabled", T::Char(1)),
    ("is_instead", T::Bool),
    ("ev_qual", T::Text),
    ("ev_action", T::Text),
];

/// `pg_tablespace`'s columns (PostgreSQL 15).
pub static PG_TABLESPACE: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("spcname", T::Name),
    ("spcowner", T::Oid),
    ("spcacl", T::Array(A::Text)),
    ("spcoptions", T::Array(A::Text)),
];

/// `pg_depend`'s columns (PostgreSQL 15).
pub static PG_DEPEND: &[(&str, T)] = &[
    ("classid", T::Oid),
    ("objid", T::Oid),
    ("objsubid", T::Int4),
    ("refclassid", T::Oid),
    ("refobjid", T::Oid),
    ("refobjsubid", T::Int4),
    ("deptype", T::Char(1)),
];

/// `pg_sequence`'s columns (PostgreSQL 15).
pub static PG_SEQUENCE: &[(&str, T)] = &[
    ("seqrelid", T::Oid),
    ("seqtypid", T::Oid),
    ("seqstart", T::Int8),
    ("seqincrement", T::Int8),
    ("seqmax", T::Int8),
    ("seqmin", T::Int8),
    ("seqcache", T::Int8),
    ("seqcycle", T::Bool),
];

/// `pg_extension`'s columns (PostgreSQL 15).
pub static PG_EXTENSION: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("extname", T::Name),
    ("extowner", T::Oid),
    ("extnamespace", T::Oid),
    ("extrelocatable", T::Bool),
    ("extversion", T::Text),
    ("extconfig", T::Array(A::Oid)),
    ("extcondition", T::Array(A::Text)),
];

/// `pg_tables`'s columns (PostgreSQL 15).
pub static PG_TABLES: &[(&str, T)] = &[
    ("schemaname", T::Name),
    ("tablename", T::Name),
    ("tableowner", T::Name),
    ("tablespace", T::Name),
    ("hasindexes", T::Bool),
    ("hasrules", T::Bool),
    ("hastriggers", T::Bool),
    ("rowsecurity", T::Bool),
];

/// `pg_indexes`'s columns (PostgreSQL 15).
pub static PG_INDEXES: &[(&str, T)] = &[
    ("schemaname", T::Name),
    ("tablename", T::Name),
    ("indexname", T::Name),
    ("tablespace", T::Name),
    ("indexdef", T::Text),
];

/// `pg_views`'s columns (PostgreSQL 15).
pub static PG_VIEWS: &[(&str, T)] = &[
    ("schemaname", T::Name),
    ("viewname", T::Name),
    ("viewowner", T::Name),
    ("definition", T::Text),
];

/// `pg_sequences`'s columns (PostgreSQL 15).
pub static PG_SEQUENCES: &[(&str, T)] = &[
    ("schemaname", T::Name),
    ("sequencename", T::Name),
    ("sequenceowner", T::Name),
    ("data_type", T::Reg(RegKind::Type)),
    ("start_value", T::Int8),
    ("min_value", T::Int8),
    ("max_value", T::Int8),
    ("increment_by", T::Int8),
    ("cycle", T::Bool),
    ("cache_size", T::Int8),
    ("last_value", T::Int8),
];

/// `pg_stat_activity`'s columns (PostgreSQL 15).
/// pg_stat_ssl: one row per client session (TLS parameters when `ssl`).
pub static PG_STAT_SSL: &[(&str, T)] = &[
    ("pid", T::Int4),
    ("ssl", T::Bool),
    ("version", T::Text),
    ("cipher", T::Text),
    ("bits", T::Int4),
    ("client_dn", T::Text),
    ("client_serial", T::NUMERIC),
    ("issuer_dn", T::Text),
];

/// pg_stat_gssapi: one row per client session (no GSSAPI: all false).
pub static PG_STAT_GSSAPI: &[(&str, T)] = &[
    ("pid", T::Int4),
    ("gss_authenticated", T::Bool),
    ("principal", T::Text),
    ("encrypted", T::Bool),
];

pub static PG_STAT_ACTIVITY: &[(&str, T)] = &[
    ("datid", T::Oid),
    ("datname", T::Name),
    ("pid", T::Int4),
    ("leader_pid", T::Int4),
    ("usesysid", T::Oid),
    ("usename", T::Name),
    ("application_name", T::Text),
    ("client_addr", T::Inet),
    ("client_hostname", T::Text),
    ("client_port", T::Int4),
    ("backend_start", T::TimestampTz),
    ("xact_start", T::TimestampTz),
    ("query_start", T::TimestampTz),
    ("state_change", T::TimestampTz),
    ("wait_event_type", T::Text),
    ("wait_event", T::Text),
    ("state", T::Text),
    ("backend_xid", T::Xid),
    ("backend_xmin", T::Xid),
    ("query_id", T::Int8),
    ("query", T::Text),
    ("backend_type", T::Text),
];

/// `pg_locks`'s columns (PostgreSQL 15).
pub static PG_LOCKS: &[(&str, T)] = &[
    ("locktype", T::Text),
    ("database", T::Oid),
    ("relation", T::Oid),
    ("page", T::Int4),
    ("tuple", T::Int2),
    ("virtualxid", T::Text),
    ("transactionid", T::Xid),
    ("classid", T::Oid),
    ("objid", T::Oid),
    ("objsubid", T::Int2),
    ("virtualtransaction", T::Text),
    ("pid", T::Int4),
    ("mode", T::Text),
    ("granted", T::Bool),
    ("fastpath", T::Bool),
    ("waitstart", T::TimestampTz),
];

/// `pg_stat_user_tables`'s columns (PostgreSQL 15).
pub static PG_STAT_USER_TABLES: &[(&str, T)] = &[
    ("relid", T::Oid),
    ("schemaname", T::Name),
    ("relname", T::Name),
    ("seq_scan", T::Int8),
    ("seq_tup_read", T::Int8),
    ("idx_scan", T::Int8),
    ("idx_tup_fetch", T::Int8),
    ("n_tup_ins", T::Int8),
    ("n_tup_upd", T::Int8),
    ("n_tup_del", T::Int8),
    ("n_tup_hot_upd", T::Int8),
    ("n_live_tup", T::Int8),
    ("n_dead_tup", T::Int8),
    ("n_mod_since_analyze", T::Int8),
    ("n_ins_since_vacuum", T::Int8),
    ("last_vacuum", T::TimestampTz),
    ("last_autovacuum", T::TimestampTz),
    ("last_analyze", T::TimestampTz),
    ("last_autoanalyze", T::TimestampTz),
    ("vacuum_count", T::Int8),
    ("autovacuum_count", T::Int8),
    ("analyze_count", T::Int8),
    ("autoanalyze_count", T::Int8),
];

/// `pg_settings`'s columns (PostgreSQL 15).
/// pg_cursors (`crate::portalcmds`).
pub static PG_CURSORS: &[(&str, T)] = &[
    ("name", T::Text),
    ("statement", T::Text),
    ("is_holdable", T::Bool),
    ("is_binary", T::Bool),
    ("is_scrollable", T::Bool),
    ("creation_time", T::TimestampTz),
];

pub static PG_SETTINGS: &[(&str, T)] = &[
    ("name", T::Text),
    ("setting", T::Text),
    ("unit", T::Text),
    ("category", T::Text),
    ("short_desc", T::Text),
    ("extra_desc", T::Text),
    ("context", T::Text),
    ("vartype", T::Text),
    ("source", T::Text),
    ("min_val", T::Text),
    ("max_val", T::Text),
    ("enumvals", T::Array(A::Text)),
    ("boot_val", T::Text),
    ("reset_val", T::Text),
    ("sourcefile", T::Text),
    ("sourceline", T::Int4),
    ("pending_restart", T::Bool),
];

/// `pg_proc`'s columns (PostgreSQL 15).
pub static PG_PROC: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("proname", T::Name),
    ("pronamespace", T::Oid),
    ("proowner", T::Oid),
    ("prolang", T::Oid),
    ("procost", T::Float8),
    ("prorows", T::Float8),
    ("provariadic", T::Oid),
    ("prosupport", T::Reg(RegKind::Proc)),
    ("prokind", T::Char(1)),
    ("prosecdef", T::Bool),
    ("proleakproof", T::Bool),
    ("proisstrict", T::Bool),
    ("proretset", T::Bool),
    ("provolatile", T::Char(1)),
    ("proparallel", T::Char(1)),
    ("pronargs", T::Int2),
    ("pronargdefaults", T::Int2),
    ("prorettype", T::Oid),
    ("proargtypes", T::Array(A::OidVector)),
    ("proallargtypes", T::Array(A::Oid)),
    ("proargmodes", T::Array(A::Char)),
    ("proargnames", T::Array(A::Text)),
    ("proargdefaults", T::Text),
    ("protrftypes", T::Array(A::Oid)),
    ("prosrc", T::Text),
    ("probin", T::Text),
    ("prosqlbody", T::Text),
    ("proconfig", T::Array(A::Text)),
    ("proacl", T::Array(A::Text)),
];

/// `pg_aggregate`'s columns (PostgreSQL 15).
pub static PG_AGGREGATE: &[(&str, T)] = &[
    ("aggfnoid", T::Reg(RegKind::Proc)),
    ("aggkind", T::Char(1)),
    ("aggnumdirectargs", T::Int2),
    ("aggtransfn", T::Reg(RegKind::Proc)),
    ("aggfinalfn", T::Reg(RegKind::Proc)),
    ("aggcombinefn", T::Reg(RegKind::Proc)),
    ("aggserialfn", T::Reg(RegKind::Proc)),
    ("aggdeserialfn", T::Reg(RegKind::Proc)),
    ("aggmtransfn", T::Reg(RegKind::Proc)),
    ("aggminvtransfn", T::Reg(RegKind::Proc)),
    ("aggmfinalfn", T::Reg(RegKind::Proc)),
    ("aggfinalextra", T::Bool),
    ("aggmfinalextra", T::Bool),
    ("aggfinalmodify", T::Char(1)),
    ("aggmfinalmodify", T::Char(1)),
    ("aggsortop", T::Oid),
    ("aggtranstype", T::Oid),
    ("aggtransspace", T::Int4),
    ("aggmtranstype", T::Oid),
    ("aggmtransspace", T::Int4),
    ("agginitval", T::Text),
    ("aggminitval", T::Text),
];

/// `pg_language`'s columns (PostgreSQL 15).
pub static PG_LANGUAGE: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("lanname", T::Name),
    ("lanowner", T::Oid),
    ("lanispl", T::Bool),
    ("lanpltrusted", T::Bool),
    ("lanplcallfoid", T::Oid),
    ("laninline", T::Oid),
    ("lanvalidator", T::Oid),
    ("lanacl", T::Array(A::Text)),
];

/// `pg_operator`'s columns (PostgreSQL 15).
pub static PG_OPERATOR: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("oprname", T::Name),
    ("oprnamespace", T::Oid),
    ("oprowner", T::Oid),
    ("oprkind", T::Char(1)),
    ("oprcanmerge", T::Bool),
    ("oprcanhash", T::Bool),
    ("oprleft", T::Oid),
    ("oprright", T::Oid),
    ("oprresult", T::Oid),
    ("oprcom", T::Oid),
    ("oprnegate", T::Oid),
    ("oprcode", T::Reg(RegKind::Proc)),
    ("oprrest", T::Reg(RegKind::Proc)),
    ("oprjoin", T::Reg(RegKind::Proc)),
];

/// `pg_opclass`'s columns (PostgreSQL 15).
pub static PG_OPCLASS: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("opcmethod", T::Oid),
    ("opcname", T::Name),
    ("opcnamespace", T::Oid),
    ("opcowner", T::Oid),
    ("opcfamily", T::Oid),
    ("opcintype", T::Oid),
    ("opcdefault", T::Bool),
    ("opckeytype", T::Oid),
];

/// `pg_opfamily`'s columns (PostgreSQL 15).
pub static PG_OPFAMILY: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("opfmethod", T::Oid),
    ("opfname", T::Name),
    ("opfnamespace", T::Oid),
    ("opfowner", T::Oid),
];

/// `pg_amop`'s columns (PostgreSQL 15).
pub static PG_AMOP: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("amopfamily", T::Oid),
    ("amoplefttype", T::Oid),
    ("amoprighttype", T::Oid),
    ("amopstrategy", T::Int2),
    ("amoppurpose", T::Char(1)),
    ("amopopr", T::Oid),
    ("amopmethod", T::Oid),
    ("amopsortfamily", T::Oid),
];

/// `pg_amproc`'s columns (PostgreSQL 15).
pub static PG_AMPROC: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("amprocfamily", T::Oid),
    ("amproclefttype", T::Oid),
    ("amprocrighttype", T::Oid),
    ("amprocnum", T::Int2),
    ("amproc", T::Reg(RegKind::Proc)),
];

/// `pg_statio_user_tables`'s columns (PostgreSQL 15).
pub static PG_STATIO_USER_TABLES: &[(&str, T)] = &[
    ("relid", T::Oid),
    ("schemaname", T::Name),
    ("relname", T::Name),
    ("heap_blks_read", T::Int8),
    ("heap_blks_hit", T::Int8),
    ("idx_blks_read", T::Int8),
    ("idx_blks_hit", T::Int8),
    ("toast_blks_read", T::Int8),
    ("toast_blks_hit", T::Int8),
    ("tidx_blks_read", T::Int8),
    ("tidx_blks_hit", T::Int8),
];

/// `pg_shdescription`'s columns (PostgreSQL 15).
pub static PG_SHDESCRIPTION: &[(&str, T)] = &[
    ("objoid", T::Oid),
    ("classoid", T::Oid),
    ("description", T::Text),
];

/// `pg_foreign_table`'s columns (PostgreSQL 15).
pub static PG_FOREIGN_TABLE: &[(&str, T)] = &[
    ("ftrelid", T::Oid),
    ("ftserver", T::Oid),
    ("ftoptions", T::Array(A::Text)),
];

/// `pg_partitioned_table`'s columns (PostgreSQL 15).
pub static PG_PARTITIONED_TABLE: &[(&str, T)] = &[
    ("partrelid", T::Oid),
    ("partstrat", T::Char(1)),
    ("partnatts", T::Int2),
    ("partdefid", T::Oid),
    ("partattrs", T::Array(A::Int2Vector)),
    ("partclass", T::Array(A::OidVector)),
    ("partcollation", T::Array(A::OidVector)),
    ("partexprs", T::Text),
];

/// `pg_event_trigger`'s columns (PostgreSQL 15).
pub static PG_EVENT_TRIGGER: &[(&str, T)] = &[
    ("oid", T::Oid),
    ("evtname", T::Name),
    ("evtevent", T::Name),
    ("evtowner", T::Oid),
    ("evtfoid", T::Oid),
    ("evtenabled", T::Char(1)),
    ("evttags", T::Array(A::Text)),
];

/// `pg_user`'s columns (PostgreSQL 15).
pub static PG_USER: &[(&str, T)] = &[
    ("usename", T::Name),
    ("usesysid", T::Oid),
    ("usecreatedb", T::Bool),
    ("usesuper", T::Bool),
    ("userepl", T::Bool),
    ("usebypassrls", T::Bool),
    ("passwd", T::Text),
    ("valuntil", T::TimestampTz),
    ("useconfig", T::Array(A::Text)),
];

/// `pg_matviews`'s columns (PostgreSQL 15).
pub static PG_MATVIEWS: &[(&str, T)] = &[
    ("schemaname", T::Name),
    ("matviewname", T::Name),
    ("matviewowner", T::Name),
    ("tablespace", T::Name),
    ("hasindexes", T::Bool),
    ("ispopulated", T::Bool),
    ("definition", T::Text),
];

// information_schema (its domains as their base types, as RowDescription
// reports them: sql_identifier → name, cardinal_number → int4,
// character_data and yes_or_no → varchar).

/// `information_schema.schemata`'s columns (PostgreSQL 15).
pub static IS_SCHEMATA: &[(&str, T)] = &[
    ("catalog_name", T::Name),
    ("schema_name", T::Name),
    ("schema_owner", T::Name),
    ("default_character_set_catalog", T::Name),
    ("default_character_set_schema", T::Name),
    ("default_character_set_name", T::Name),
    ("sql_path", T::Varchar(None)),
];

/// `information_schema.tables`'s columns (PostgreSQL 15).
pub static IS_TABLES: &[(&str, T)] = &[
    ("table_catalog", T::Name),
    ("table_schema", T::Name),
    ("table_name", T::Name),
    ("table_type", T::Varchar(None)),
    ("self_referencing_column_name", T::Name),
    ("reference_generation", T::Varchar(None)),
    ("user_defined_type_catalog", T::Name),
    ("user_defined_type_schema", T::Name),
    ("user_defined_type_name", T::Name),
    ("is_insertable_into", T::Varchar(None)),
    ("is_typed", T::Varchar(None)),
    ("commit_action", T::Varchar(None)),
];

/// `information_schema.columns`'s columns (PostgreSQL 15).
pub static IS_COLUMNS: &[(&str, T)] = &[
    ("table_catalog", T::Name),
    ("table_schema", T::Name),
    ("table_name", T::Name),
    ("column_name", T::Name),
    ("ordinal_position", T::Int4),
    ("column_default", T::Varchar(None)),
    ("is_nullable", T::Varchar(None)),
    ("data_type", T::Varchar(None)),
    ("character_maximum_length", T::Int4),
    ("character_octet_length", T::Int4),
    ("numeric_precision", T::Int4),
    ("numeric_precision_radix", T::Int4),
    ("numeric_scale", T::Int4),
    ("datetime_precision", T::Int4),
    ("interval_type", T::Varchar(None)),
    ("interval_precision", T::Int4),
    ("character_set_catalog", T::Name),
    ("character_set_schema", T::Name),
    ("character_set_name", T::Name),
    ("collation_catalog", T::Name),
    ("collation_schema", T::Name),
    ("collation_name", T::Name),
    ("domain_catalog", T::Name),
    ("domain_schema", T::Name),
    ("domain_name", T::Name),
    ("udt_catalog", T::Name),
    ("udt_schema", T::Name),
    ("udt_name", T::Name),
    ("scope_catalog", T::Name),
    ("scope_schema", T::Name),
    ("scope_name", T::Name),
    ("maximum_cardinality", T::Int4),
    ("dtd_identifier", T::Name),
    ("is_self_referencing", T::Varchar(None)),
    ("is_identity", T::Varchar(None)),
    ("identity_generation", T::Varchar(None)),
    ("identity_start", T::Varchar(None)),
    ("identity_increment", T::Varchar(None)),
    ("identity_maximum", T::Varchar(None)),
    ("identity_minimum", T::Varchar(None)),
    ("identity_cycle", T::Varchar(None)),
    ("is_generated", T::Varchar(None)),
    ("generation_expression", T::Varchar(None)),
    ("is_updatable", T::Varchar(None)),
];

/// `information_schema.views`'s columns (PostgreSQL 15).
pub static IS_VIEWS: &[(&str, T)] = &[
    ("table_catalog", T::Name),
    ("table_schema", T::Name),
    ("table_name", T::Name),
    ("view_definition", T::Varchar(None)),
    ("check_option", T::Varchar(None)),
    ("is_updatable", T::Varchar(None)),
    ("is_insertable_into", T::Varchar(None)),
    ("is_trigger_updatable", T::Varchar(None)),
    ("is_trigger_deletable", T::Varchar(None)),
    ("is_trigger_insertable_into", T::Varchar(None)),
];

/// `information_schema.table_constraints`'s columns (PostgreSQL 15).
pub static IS_TABLE_CONSTRAINTS: &[(&str, T)] = &[
    ("constraint_catalog", T::Name),
    ("constraint_schema", T::Name),
    ("constraint_name", T::Name),
    ("table_catalog", T::Name),
    ("table_schema", T::Name),
    ("table_name", T::Name),
    ("constraint_type", T::Varchar(None)),
    ("is_deferrable", T::Varchar(None)),
    ("initially_deferred", T::Varchar(None)),
    ("enforced", T::Varchar(None)),
    ("nulls_distinct", T::Varchar(None)),
];

/// `information_schema.key_column_usage`'s columns (PostgreSQL 15).
pub static IS_KEY_COLUMN_USAGE: &[(&str, T)] = &[
    ("constraint_catalog", T::Name),
    ("constraint_schema", T::Name),
    ("constraint_name", T::Name),
    ("table_catalog", T::Name),
    ("table_schema", T::Name),
    ("table_name", T::Name),
    ("column_name", T::Name),
    ("ordinal_position", T::Int4),
    ("position_in_unique_constraint", T::Int4),
];

/// `information_schema.referential_constraints`'s columns (PostgreSQL 15).
pub static IS_REFERENTIAL_CONSTRAINTS: &[(&str, T)] = &[
    ("constraint_catalog", T::Name),
    ("constraint_schema", T::Name),
    ("constraint_name", T::Name),
    ("unique_constraint_catalog", T::Name),
    ("unique_constraint_schema", T::Name),
    ("unique_constraint_name", T::Name),
    ("match_option", T::Varchar(None)),
    ("update_rule", T::Varchar(None)),
    ("delete_rule", T::Varchar(None)),
];

/// `information_schema.constraint_column_usage`'s columns (PostgreSQL 15).
pub static IS_CONSTRAINT_COLUMN_USAGE: &[(&str, T)] = &[
    ("table_catalog", T::Name),
    ("table_schema", T::Name),
    ("table_name", T::Name),
    ("column_name", T::Name),
    ("constraint_catalog", T::Name),
    ("constraint_schema", T::Name),
    ("constraint_name", T::Name),
];

/// `information_schema.check_constraints`'s columns (PostgreSQL 15).
pub static IS_CHECK_CONSTRAINTS: &[(&str, T)] = &[
    ("constraint_catalog", T::Name),
    ("constraint_schema", T::Name),
    ("constraint_name", T::Name),
    ("check_clause", T::Varchar(None)),
];

/// `information_schema.sequences`'s columns (PostgreSQL 15).
pub static IS_SEQUENCES: &[(&str, T)] = &[
    ("sequence_catalog", T::Name),
    ("sequence_schema", T::Name),
    ("sequence_name", T::Name),
    ("data_type", T::Varchar(None)),
    ("numeric_precision", T::Int4),
    ("numeric_precision_radix", T::Int4),
    ("numeric_scale", T::Int4),
    ("start_value", T::Varchar(None)),
    ("minimum_value", T::Varchar(None)),
    ("maximum_value", T::Varchar(None)),
    ("increment", T::Varchar(None)),
    ("cycle_option", T::Varchar(None)),
];

/// `information_schema.routines`' columns (PostgreSQL 15; its domains as
/// their base types).
pub static IS_ROUTINES: &[(&str, T)] = &[
    ("specific_catalog", T::Name),
    ("specific_schema", T::Name),
    ("specific_name", T::Name),
    ("routine_catalog", T::Name),
    ("routine_schema", T::Name),
    ("routine_name", T::Name),
    ("routine_type", T::Varchar(None)),
    ("module_catalog", T::Name),
    ("module_schema", T::Name),
    ("module_name", T::Name),
    ("udt_catalog", T::Name),
    ("udt_schema", T::Name),
    ("udt_name", T::Name),
    ("data_type", T::Varchar(None)),
    ("character_maximum_length", T::Int4),
    ("character_octet_length", T::Int4),
    ("character_set_catalog", T::Name),
    ("character_set_schema", T::Name),
    ("character_set_name", T::Name),
    ("collation_catalog", T::Name),
    ("collation_schema", T::Name),
    ("collation_name", T::Name),
    ("numeric_precision", T::Int4),
    ("numeric_precision_radix", T::Int4),
    ("numeric_scale", T::Int4),
    ("datetime_precision", T::Int4),
    ("interval_type", T::Varchar(None)),
    ("interval_precision", T::Int4),
    ("type_udt_catalog", T::Name),
    ("type_udt_schema", T::Name),
    ("type_udt_name", T::Name),
    ("scope_catalog", T::Name),
    ("scope_schema", T::Name),
    ("scope_name", T::Name),
    ("maximum_cardinality", T::Int4),
    ("dtd_identifier", T::Name),
    ("routine_body", T::Varchar(None)),
    ("routine_definition", T::Varchar(None)),
    ("external_name", T::Varchar(None)),
    ("external_language", T::Varchar(None)),
    ("parameter_style", T::Varchar(None)),
    ("is_deterministic", T::Varchar(None)),
    ("sql_data_access", T::Varchar(None)),
    ("is_null_call", T::Varchar(None)),
    ("sql_path", T::Varchar(None)),
    ("schema_level_routine", T::Varchar(None)),
    ("max_dynamic_result_sets", T::Int4),
    ("is_user_defined_cast", T::Varchar(None)),
    ("is_implicitly_invocable", T::Varchar(None)),
    ("security_type", T::Varchar(None)),
    ("to_sql_specific_catalog", T::Name),
    ("to_sql_specific_schema", T::Name),
    ("to_sql_specific_name", T::Name),
    ("as_locator", T::Varchar(None)),
    ("created", T::TimestampTz),
    ("last_altered", T::TimestampTz),
    ("new_savepoint_level", T::Varchar(None)),
    ("is_udt_dependent", T::Varchar(None)),
    ("result_cast_from_data_type", T::Varchar(None)),
    ("result_cast_as_locator", T::Varchar(None)),
    ("result_cast_char_max_length", T::Int4),
    ("result_cast_char_octet_length", T::Int4),
    ("result_cast_char_set_catalog", T::Name),
    ("result_cast_char_set_schema", T::Name),
    ("result_cast_char_set_name", T::Name),
    ("result_cast_collation_catalog", T::Name),
    ("result_cast_collation_schema", T::Name),
    ("result_cast_collation_name", T::Name),
    ("result_cast_numeric_precision", T::Int4),
    ("result_cast_numeric_precision_radix", T::Int4),
    ("result_cast_numeric_scale", T::Int4),
    ("result_cast_datetime_precision", T::Int4),
    ("result_cast_interval_type", T::Varchar(None)),
    ("result_cast_interval_precision", T::Int4),
    ("result_cast_type_udt_catalog", T::Name),
    ("result_cast_type_udt_schema", T::Name),
    ("result_cast_type_udt_name", T::Name),
    ("result_cast_scope_catalog", T::Name),
    ("result_cast_scope_schema", T::Name),
    ("result_cast_scope_name", T::Name),
    ("result_cast_maximum_cardinality", T::Int4),
    ("result_cast_dtd_identifier", T::Name),
];

/// `information_schema.parameters`' columns (PostgreSQL 15).
pub static IS_PARAMETERS: &[(&str, T)] = &[
    ("specific_catalog", T::Name),
    ("specific_schema", T::Name),
    ("specific_name", T::Name),
    ("ordinal_position", T::Int4),
    ("parameter_mode", T::Varchar(None)),
    ("is_result", T::Varchar(None)),
    ("as_locator", T::Varchar(None)),
    ("parameter_name", T::Name),
    ("data_type", T::Varchar(None)),
    ("character_maximum_length", T::Int4),
    ("character_octet_length", T::Int4),
    ("character_set_catalog", T::Name),
    ("character_set_schema", T::Name),
    ("character_set_name", T::Name),
    ("collation_catalog", T::Name),
    ("collation_schema", T::Name),
    ("collation_name", T::Name),
    ("numeric_precision", T::Int4),
    ("numeric_precision_radix", T::Int4),
    ("numeric_scale", T::Int4),
    ("datetime_precision", T::Int4),
    ("interval_type", T::Varchar(None)),
    ("interval_precision", T::Int4),
    ("udt_catalog", T::Name),
    ("udt_schema", T::Name),
    ("udt_name", T::Name),
    ("scope_catalog", T::Name),
    ("scope_schema", T::Name),
    ("scope_name", T::Name),
    ("maximum_cardinality", T::Int4),
    ("dtd_identifier", T::Name),
    ("parameter_default", T::Varchar(None)),
];
