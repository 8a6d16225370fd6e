//! PostgreSQL's md5 passwords (`password_encryption = md5`, the `md5`
//! authentication method for old clients): the stored form is
//! `"md5" || hex(md5(password || user))`, the wire response to an
//! AuthenticationMD5Password with salt `s` is `"md5" || hex(md5(hex-part
//! || s))`. MD5 itself (RFC 1321) is written out here: it is small, and
//! only used for this legacy scheme.

pub use pgtypes::md5::md5;

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
