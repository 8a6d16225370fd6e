//! uuid: 16 bytes, printed lower-case and hyphenated
//! (`a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11`).
//!
//! Input follows PostgreSQL's `string_to_uuid`: 32 hex digits in either
//! case, a hyphen allowed after any group of four digits, the whole
//! optionally in braces; anything else is 22P02 `invalid input syntax for
//! type uuid`. Ordering is bytewise (memcmp), as `uuid_cmp`. Random
//! (version 4) values for `gen_random_uuid()` are built by the SQL layer
//! from 16 random bytes with [`v4_from_bytes`].

use bytes::{BufMut, BytesMut};

use crate::error::{sqlstate, PgError, PgResult};

/// uuid_in.
pub fn parse(s: &str) -> PgResult<[u8; 16]> {
    let bad = || {
        PgError::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type uuid: \"{s}\""),
        )
    };
    let b = s.as_bytes();
    let mut p = 0;
    let braces = b.first() == Some(&b'{');
    if braces {
        p = 1;
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        let (Some(&h), Some(&l)) = (b.get(p), b.get(p + 1)) else {
            return Err(bad());
        };
        let (Some(h), Some(l)) = ((h as char).to_digit(16), (l as char).to_digit(16)) else {
            return Err(bad());
        };
        *byte = (h * 16 + l) as u8;
        p += 2;
        if b.get(p) == Some(&b'-') && i % 2 == 1 && i < 15 {
            p += 1;
        }
    }
    if braces {
        if b.get(p) != Some(&b'}') {
            return Err(bad());
        }
        p += 1;
    }
    if p != b.len() {
        return Err(bad());
    }
    Ok(out)
}

/// uuid_out: `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lower case.
pub fn write_text(out: &mut BytesMut, u: &[u8; 16]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, &x) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.put_u8(b'-');
        }
        out.put_u8(DIGITS[(x >> 4) as usize]);
        out.put_u8(DIGITS[(x & 15) as usize]);
    }
}

/// A version 4 (random) uuid from 16 random bytes, as gen_random_uuid.
pub fn v4_from_bytes(mut b: [u8; 16]) -> [u8; 16] {
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let want = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
        for s in [
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
        ] {
            let u = parse(s).unwrap();
            let mut b = BytesMut::new();
            write_text(&mut b, &u);
            assert_eq!(&b[..], want.as_bytes(), "{s}");
        }
        for s in [
            "",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11",
            "-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        ] {
            assert_eq!(parse(s).unwrap_err().code, "22P02", "{s}");
        }
        let v = v4_from_bytes([0xff; 16]);
        assert_eq!(v[6] >> 4, 4);
        assert_eq!(v[8] >> 6, 2);
    }
}
