//! The few facts of an X.509 certificate that PostgreSQL shows or checks,
//! read straight from its DER bytes: the subject and issuer names
//! (`pg_stat_ssl.client_dn` / `issuer_dn`, OpenSSL's `/CN=…` one-line
//! form), the subject's common name (`cert` authentication), the serial
//! number (`client_serial`, in decimal) and the signature algorithm, which
//! picks the hash of the `tls-server-end-point` channel binding (RFC 5929:
//! the certificate's own hash, SHA-256 for MD5 and SHA-1).
//!
//! ```text
//!   Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature }
//!   tbsCertificate ::= SEQUENCE { [0] version?, serialNumber INTEGER,
//!                                 signature, issuer Name, validity,
//!                                 subject Name, … }
//!   Name ::= SEQUENCE OF SET OF SEQUENCE { type OID, value string }
//! ```
//!
//! Certificates come from the peer: every read is bounds-checked and a
//! malformed one is `None`, never a panic.

use sha2::Digest;

/// One DER element: its tag and contents.
struct Tlv<'a> {
    tag: u8,
    body: &'a [u8],
}

/// Splits the first element off `input`.
fn next(input: &[u8]) -> Option<(Tlv<'_>, &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |a, &b| (a << 8) | b as usize);
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((
        Tlv {
            tag,
            body: &rest[..len],
        },
        &rest[len..],
    ))
}

/// The parts of a certificate PostgreSQL uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertInfo {
    /// The subject in OpenSSL's one-line form (`/CN=alice/O=Example`).
    pub subject: String,
    /// The issuer, in the same form.
    pub issuer: String,
    /// The subject's (last) common name, if any.
    pub common_name: Option<String>,
    /// The serial number in decimal.
    pub serial: String,
    /// The signature algorithm's OID, dotted.
    pub signature_oid: String,
}

/// Reads `der` (one certificate).
pub fn parse(der: &[u8]) -> Option<CertInfo> {
    let (cert, _) = next(der)?;
    if cert.tag != 0x30 {
        return None;
    }
    let (tbs, rest) = next(cert.body)?;
    let (sig_alg, _) = next(rest)?;
    let (oid, _) = next(sig_alg.body)?;
    if tbs.tag != 0x30 || oid.tag != 0x06 {
        return None;
    }
    let mut fields = tbs.body;
    let (mut f, r) = next(fields)?;
    fields = r;
    if f.tag == 0xa0 {
        let (s, r) = next(fields)?;
        f = s;
        fields = r;
    }
    if f.tag != 0x02 {
        return None;
    }
    let serial = decimal(f.body);
    let (_alg, r) = next(fields)?;
    let (issuer, r) = next(r)?;
    let (_validity, r) = next(r)?;
    let (subject, _) = next(r)?;
    let (subject_s, common_name) = name(subject.body)?;
    let (issuer_s, _) = name(issuer.body)?;
    Some(CertInfo {
        subject: subject_s,
        issuer: issuer_s,
        common_name,
        serial,
        signature_oid: oid_text(oid.body),
    })
}

/// A Name in OpenSSL's one-line form, and its last CN.
fn name(mut body: &[u8]) -> Option<(String, Option<String>)> {
    let mut out = String::new();
    let mut cn = None;
    while !body.is_empty() {
        let (set, r) = next(body)?;
        body = r;
        let mut atvs = set.body;
        while !atvs.is_empty() {
            let (atv, r) = next(atvs)?;
            atvs = r;
            let (oid, r) = next(atv.body)?;
            let (value, _) = next(r)?;
            let oid = oid_text(oid.body);
            let text = string_value(value.tag, value.body);
            let short = match oid.as_str() {
                "2.5.4.3" => "CN",
                "2.5.4.4" => "SN",
                "2.5.4.5" => "serialNumber",
                "2.5.4.6" => "C",
                "2.5.4.7" => "L",
                "2.5.4.8" => "ST",
                "2.5.4.9" => "street",
                "2.5.4.10" => "O",
                "2.5.4.11" => "OU",
                "2.5.4.12" => "title",
                "2.5.4.42" => "GN",
                "1.2.840.113549.1.9.1" => "emailAddress",
                "0.9.2342.19200300.100.1.1" => "UID",
                "0.9.2342.19200300.100.1.25" => "DC",
                other => other,
            };
            if short == "CN" {
                cn = Some(text.clone());
            }
            out.push('/');
            out.push_str(short);
            out.push('=');
            escape_into(&mut out, &text);
        }
    }
    Some((out, cn))
}

/// A directory string's text (UTF-8, printable, IA5, BMP …).
fn string_value(tag: u8, body: &[u8]) -> String {
    match tag {
        // BMPString: UTF-16BE.
        0x1e => {
            let units: Vec<u16> = body
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16_lossy(&units)
        }
        _ => String::from_utf8_lossy(body).into_owned(),
    }
}

/// RFC 2253 escaping as OpenSSL applies it (`ASN1_STRFLGS_RFC2253`
/// without escaping non-ASCII characters).
fn escape_into(out: &mut String, text: &str) {
    let n = text.chars().count();
    for (i, c) in text.chars().enumerate() {
        match c {
            ',' | '+' | '"' | '\\' | '<' | '>' | ';' => {
                out.push('\\');
                out.push(c);
            }
            '#' | ' ' if i == 0 => {
                out.push('\\');
                out.push(c);
            }
            ' ' if i + 1 == n => out.push_str("\\ "),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\{:02X}", c as u32));
            }
            c => out.push(c),
        }
    }
}

/// An OID's dotted form.
fn oid_text(body: &[u8]) -> String {
    let mut parts: Vec<u64> = Vec::new();
    let mut v: u64 = 0;
    for &b in body {
        v = v.saturating_mul(128) | (b & 0x7f) as u64;
        if b & 0x80 == 0 {
            if parts.is_empty() {
                let (a, b) = if v < 40 {
                    (0, v)
                } else if v < 80 {
                    (1, v - 40)
                } else {
                    (2, v - 80)
                };
                parts.push(a);
                parts.push(b);
            } else {
                parts.push(v);
            }
            v = 0;
        }
    }
    parts
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(".")
}

/// A big-endian unsigned integer in decimal.
fn decimal(bytes: &[u8]) -> String {
    let mut digits: Vec<u8> = vec![0];
    for &byte in bytes {
        let mut carry = byte as u32;
        for d in digits.iter_mut() {
            let v = *d as u32 * 256 + carry;
            *d = (v % 10) as u8;
            carry = v / 10;
        }
        while carry > 0 {
            digits.push((carry % 10) as u8);
            carry /= 10;
        }
    }
    while digits.len() > 1 && digits.last() == Some(&0) {
        digits.pop();
    }
    digits.iter().rev().map(|d| (b'0' + d) as char).collect()
}

/// The `tls-server-end-point` channel-binding data of a certificate (RFC
/// 5929 §4.1): its hash with the hash of its signature algorithm, SHA-256
/// for MD5 and SHA-1. `None` when the algorithm names no hash (Ed25519,
/// RSA-PSS), where PostgreSQL cannot bind either.
pub fn end_point_hash(der: &[u8]) -> Option<Vec<u8>> {
    let info = parse(der)?;
    let alg = match info.signature_oid.as_str() {
        // md5, sha1 (RSA, ECDSA, DSA) and sha256 variants.
        "1.2.840.113549.1.1.4"
        | "1.2.840.113549.1.1.5"
        | "1.2.840.10045.4.1"
        | "1.2.840.10040.4.3"
        | "1.2.840.113549.1.1.11"
        | "1.2.840.10045.4.3.2"
        | "2.16.840.1.101.3.4.3.2" => 256,
        "1.2.840.113549.1.1.12" | "1.2.840.10045.4.3.3" => 384,
        "1.2.840.113549.1.1.13" | "1.2.840.10045.4.3.4" => 512,
        _ => return None,
    };
    Some(match alg {
        256 => sha2::Sha256::digest(der).to_vec(),
        384 => sha2::Sha384::digest(der).to_vec(),
        _ => sha2::Sha512::digest(der).to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_serials() {
        assert_eq!(decimal(&[]), "0");
        assert_eq!(decimal(&[0x01, 0x00]), "256");
        assert_eq!(decimal(&[0xff, 0xff, 0xff, 0xff]), "4294967295");
    }

    #[test]
    fn oids() {
        assert_eq!(oid_text(&[0x55, 0x04, 0x03]), "2.5.4.3");
        assert_eq!(
            oid_text(&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]),
            "1.2.840.10045.4.3.2"
        );
    }

    #[test]
    fn escaping() {
        let mut s = String::new();
        escape_into(&mut s, " a,b ");
        assert_eq!(s, "\\ a\\,b\\ ");
    }

    #[test]
    fn garbage_is_none() {
        for bad in [
            &b""[..],
            b"\x30",
            b"\x30\x84\xff\xff\xff\xff",
            b"\x30\x03\x02\x01",
        ] {
            assert!(parse(bad).is_none());
            assert!(end_point_hash(bad).is_none());
        }
    }
}
