//! # wal — the write-ahead log. OWNER: WAL helper (W).
