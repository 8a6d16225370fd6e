//! Storage: relation files of 8 KiB pages, the buffer pool, heap pages and
//! tuples, the free space map, heap insertion, and in-memory indexes.
//! OWNER: storage helper (S). Skeleton: [`heapam`] signatures are the contract
//! the SQL executor uses.

pub mod heapam;
pub mod index;
