//! Bound expressions and their evaluation. OWNER: Q1.
