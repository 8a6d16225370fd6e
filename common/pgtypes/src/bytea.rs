//! bytea: PostgreSQL's byte strings. Output is the hex format (`\x…`,
//! `bytea_output = hex`, PostgreSQL's default); input accepts hex and the
//! escape format (`\\`, `\ooo` octal, other bytes literal), as byteain does.
//! `encode`/`decode` with `hex`, `base64` and `escape` live here too.

use bytes::{BufMut, BytesMut};

use crate::error::{sqlstate, PgError, PgResult};

fn invalid_hex(c: u8) -> PgError {
    let shown = if c.is_ascii() {
        (c as char).to_string()
    } else {
        format!("\\x{c:02x}")
    };
    PgError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!("invalid hexadecimal digit: \"{shown}\""),
    )
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// hex_decode: pairs of hex digits, whitespace between pairs ignored.
pub fn decode_hex(s: &[u8]) -> PgResult<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 2);
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if matches!(c, b' ' | b'\n' | b'\t' | b'\r') {
            i += 1;
            continue;
        }
        let hi = hex_val(c).ok_or_else(|| invalid_hex(c))?;
        let lo = match s.get(i + 1) {
            None => {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    "invalid hexadecimal data: odd number of digits",
                ))
            }
            Some(&d) => hex_val(d).ok_or_else(|| invalid_hex(d))?,
        };
        out.push(hi << 4 | lo);
        i += 2;
    }
    Ok(out)
}

/// The lowercase hex digits of `b`, appended to `out`.
pub fn write_hex(out: &mut BytesMut, b: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(b.len() * 2);
    for &x in b {
        out.put_u8(DIGITS[(x >> 4) as usize]);
        out.put_u8(DIGITS[(x & 15) as usize]);
    }
}

/// byteaout in hex format: `\x` and two lowercase digits a byte.
pub fn write_text(out: &mut BytesMut, b: &[u8]) {
    out.reserve(2 + b.len() * 2);
    out.put_slice(b"\\x");
    write_hex(out, b);
}

fn invalid_bytea() -> PgError {
    PgError::new(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        "invalid input syntax for type bytea",
    )
}

/// byteain: `\x` hex, or the escape format.
pub fn parse(s: &str) -> PgResult<Vec<u8>> {
    let b = s.as_bytes();
    if let Some(hex) = b.strip_prefix(b"\\x") {
        return decode_hex(hex);
    }
    decode_escape(b)
}

/// The escape format (`\\` a backslash, `\ooo` an octal byte, anything else
/// itself). 22P02 on a lone or malformed backslash.
pub fn decode_escape(b: &[u8]) -> PgResult<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
            continue;
        }
        match (b.get(i + 1), b.get(i + 2), b.get(i + 3)) {
            (Some(&a @ b'0'..=b'3'), Some(&c @ b'0'..=b'7'), Some(&d @ b'0'..=b'7')) => {
                out.push(((a - b'0') << 6) | ((c - b'0') << 3) | (d - b'0'));
                i += 4;
            }
            _ => return Err(invalid_bytea()),
        }
    }
    Ok(out)
}

/// encode(bytea, 'escape'): `\\` for a backslash, `\ooo` for zero bytes and
/// bytes ≥ 0x80, everything else as is.
pub fn encode_escape(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for &x in b {
        if x == b'\\' {
            s.push_str("\\\\");
        } else if x == 0 || x >= 0x80 {
            s.push_str(&format!("\\{:03o}", x));
        } else {
            s.push(x as char);
        }
    }
    s
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// encode(bytea, 'base64'): standard alphabet with padding, a newline every
/// 76 output characters (as PostgreSQL's pg_base64_encode).
pub fn encode_base64(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 4 / 3 + 4);
    let mut line = 0;
    for chunk in b.chunks(3) {
        if line >= 76 {
            s.push('\n');
            line = 0;
        }
        let n = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        s.push(B64[(n >> 18) as usize & 63] as char);
        s.push(B64[(n >> 12) as usize & 63] as char);
        s.push(if chunk.len() > 1 {
            B64[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        s.push(if chunk.len() > 2 {
            B64[n as usize & 63] as char
        } else {
            '='
        });
        line += 4;
    }
    s
}

/// decode(text, 'base64'); whitespace is skipped.
pub fn decode_base64(s: &str) -> PgResult<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    let mut pad = 0;
    for c in s.bytes() {
        if matches!(c, b' ' | b'\n' | b'\t' | b'\r') {
            continue;
        }
        if c == b'=' {
            pad += 1;
            continue;
        }
        if pad > 0 {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                "unexpected \"=\" while decoding base64 sequence",
            ));
        }
        let v = match B64.iter().position(|&x| x == c) {
            Some(v) => v as u32,
            None => {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!(
                        "invalid symbol \"{}\" found while decoding base64 sequence",
                        c as char
                    ),
                ))
            }
        };
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bits >= 6 {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            "invalid base64 end sequence",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let mut o = BytesMut::new();
        write_text(&mut o, &[0, 0xab, b'A']);
        assert_eq!(&o[..], b"\\x00ab41");
        assert_eq!(parse("\\x00AB41").unwrap(), vec![0, 0xab, b'A']);
        assert!(parse("\\x0").is_err());
        assert!(parse("\\xzz").is_err());
    }

    #[test]
    fn escape_format() {
        assert_eq!(parse("a\\\\b\\001").unwrap(), b"a\\b\x01".to_vec());
        assert!(parse("a\\q").is_err());
        assert_eq!(encode_escape(b"a\\\x00\xff"), "a\\\\\\000\\377");
    }

    #[test]
    fn base64() {
        assert_eq!(encode_base64(b"hello"), "aGVsbG8=");
        assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello".to_vec());
        assert_eq!(decode_base64("aGVs\nbG8=").unwrap(), b"hello".to_vec());
        assert!(decode_base64("a!").is_err());
    }
}
