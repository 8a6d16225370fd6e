//! PostgreSQL's md5 passwords (`password_encryption = md5`, the `md5`
//! authentication method for old clients): the stored form is
//! `"md5" || hex(md5(password || user))`, the wire response to an
//! AuthenticationMD5Password with salt `s` is `"md5" || hex(md5(hex-part
//! || s))`. MD5 itself (RFC 1321) is written out here: it is small, and
//! only used for this legacy scheme.

/// RFC 1321's MD5 of `data`.
pub fn md5(data: &[u8]) -> [u8; 16] {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    let k: [u32; 64] =
        std::array::from_fn(|i| ((i as f64 + 1.0).sin().abs() * 4_294_967_296.0) as u32);
    let mut a0: u32 = 0x6745_2301;
    let mut b0: u32 = 0xefcd_ab89;
    let mut c0: u32 = 0x98ba_dcfe;
    let mut d0: u32 = 0x1032_5476;
    let mut msg = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_le_bytes());
    for chunk in msg.chunks_exact(64) {
        let m: [u32; 16] = std::array::from_fn(|i| {
            u32::from_le_bytes([
                chunk[4 * i],
                chunk[4 * i + 1],
                chunk[4 * i + 2],
                chunk[4 * i + 3],
            ])
        });
        let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(k[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        a0 = a0.wrapping_add(a);
        b0 = b0.wrapping_add(b);
        c0 = c0.wrapping_add(c);
        d0 = d0.wrapping_add(d);
    }
    let mut out = [0u8; 16];
    for (i, w) in [a0, b0, c0, d0].iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The stored md5 verifier of `password` for `user`.
pub fn md5_verifier(password: &str, user: &str) -> String {
    let mut d = password.as_bytes().to_vec();
    d.extend_from_slice(user.as_bytes());
    format!("md5{}", hex(&md5(&d)))
}

/// True if `text` looks like an md5 verifier (`md5` + 32 hex digits).
pub fn is_md5_verifier(text: &str) -> bool {
    text.len() == 35 && text.starts_with("md5") && text[3..].bytes().all(|b| b.is_ascii_hexdigit())
}

/// The wire response to a salted md5 challenge, given the stored verifier.
pub fn md5_response(verifier: &str, salt: [u8; 4]) -> String {
    let mut d = verifier.get(3..).unwrap_or("").as_bytes().to_vec();
    d.extend_from_slice(&salt);
    format!("md5{}", hex(&md5(&d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1321_vectors() {
        assert_eq!(hex(&md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(&md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            hex(&md5(
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890"
            )),
            "57edf4a22be3c955ac49da2e2107b67a"
        );
    }

    #[test]
    fn postgres_form() {
        // SELECT 'md5' || md5('secretalice') in PostgreSQL.
        assert_eq!(
            md5_verifier("secret", "alice"),
            format!("md5{}", hex(&md5(b"secretalice")))
        );
        assert!(is_md5_verifier(&md5_verifier("a", "b")));
        assert!(!is_md5_verifier("md5xyz"));
    }
}
