//! # tap-tests — the node harness. OWNER: harness helper (H).
