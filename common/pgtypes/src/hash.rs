//! A fast hash of short byte strings, for tables whose keys come from one
//! query or one session: the executor's hash joins, aggregations and
//! spill partitions (keyed by encoded key bytes), and the session loop's
//! prepared statements and portals (keyed by the client's names). Several
//! times cheaper than std's SipHash on keys of a few words.
//!
//! It is not seeded per process, like PostgreSQL's `hash_bytes`: the
//! executor needs the same partition for the same key across a spill, and
//! a client choosing colliding names only slows its own session.

use std::hash::{BuildHasherDefault, Hasher};

/// A hash of `key` that does not change between runs of the process,
/// different per `seed`.
pub fn hash_key(key: &[u8], seed: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h: u64 = (seed.wrapping_add(1)).wrapping_mul(K) ^ key.len() as u64;
    let mut words = key.chunks_exact(8);
    for w in words.by_ref() {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    let mut tail = [0u8; 8];
    let rest = words.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    // Finalizer (murmur3's fmix64): every input bit reaches the low bits.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// [`hash_key`] as a [`Hasher`], for `HashMap`s keyed by bytes or
/// strings ([`KeyBuild`]).
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = hash_key(bytes, self.0);
    }
    fn write_u8(&mut self, i: u8) {
        // The terminator `str`'s Hash writes: the bytes hash covers it.
        self.0 ^= i as u64;
    }
    fn write_usize(&mut self, i: usize) {
        // The length prefix `[u8]`'s Hash writes: the bytes hash covers it.
        self.0 ^= i as u64;
    }
}

/// Builds [`KeyHasher`]s.
pub type KeyBuild = BuildHasherDefault<KeyHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn hash_differs_by_seed() {
        assert_ne!(hash_key(b"abc", 0), hash_key(b"abc", 1));
        assert_eq!(hash_key(b"abc", 3), hash_key(b"abc", 3));
    }

    #[test]
    fn names_hash_apart() {
        let b = KeyBuild::default();
        let names = ["", "P0_1", "P0_2", "P1_1", "s", "t", "stmt_10", "stmt_01"];
        let hashes: std::collections::HashSet<u64> = names.iter().map(|n| b.hash_one(n)).collect();
        assert_eq!(hashes.len(), names.len());
    }
}
