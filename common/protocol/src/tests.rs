//! Codec tests: framing limits and errors, and property tests that every
//! message survives encode → decode, that a stream cut at any byte offset
//! decodes to the same messages, and that arbitrary bytes never panic.

use bytes::{BufMut, Bytes, BytesMut};
use proptest::prelude::*;
use tokio_util::codec::{Decoder, Encoder};

use super::codec::*;
use super::messages::*;
use pgtypes::error::sqlstate;

fn startup() -> FrontendMessage {
    FrontendMessage::Startup {
        params: vec![("user".into(), "u".into()), ("database".into(), "d".into())],
    }
}

/// A server codec past the startup phase.
fn normal_codec() -> ServerCodec {
    let mut c = ServerCodec::new(DEFAULT_MAX_MESSAGE_SIZE);
    let mut b = BytesMut::new();
    startup().encode(&mut b).unwrap();
    assert_eq!(c.decode(&mut b).unwrap(), Some(Ok(startup())));
    assert!(!c.in_startup());
    c
}

fn decode_all_server(
    c: &mut ServerCodec,
    b: &mut BytesMut,
) -> Vec<Result<FrontendMessage, MessageError>> {
    let mut out = Vec::new();
    while let Some(m) = c.decode(b).unwrap() {
        out.push(m);
    }
    out
}

#[test]
fn two_gigabyte_length_is_rejected_without_allocating() {
    let mut c = normal_codec();
    let mut b = BytesMut::new();
    b.put_u8(b'Q');
    b.put_i32(i32::MAX);
    b.put_slice(b"SELECT");
    let err = c.decode(&mut b).unwrap_err();
    assert!(matches!(err, ProtocolError::InvalidLength(_)), "{err:?}");
    let pg = err.to_pg_error();
    assert_eq!(pg.code, sqlstate::PROTOCOL_VIOLATION);
    assert_eq!(pg.message, "invalid message length");
    assert!(b.capacity() < 1 << 20, "no big allocation");
}

#[test]
fn negative_and_short_lengths_are_rejected() {
    for len in [-1i32, 0, 3, i32::MIN] {
        let mut c = normal_codec();
        let mut b = BytesMut::new();
        b.put_u8(b'Q');
        b.put_i32(len);
        assert!(
            matches!(c.decode(&mut b), Err(ProtocolError::InvalidLength(_))),
            "len {len}"
        );
    }
}

#[test]
fn small_messages_have_a_small_limit() {
    let mut c = normal_codec();
    let mut b = BytesMut::new();
    b.put_u8(b'S');
    b.put_i32(20000);
    assert!(matches!(
        c.decode(&mut b),
        Err(ProtocolError::InvalidLength(_))
    ));
}

#[test]
fn configured_limit_applies() {
    let mut c = ServerCodec::new(1 << 16);
    let mut b = BytesMut::new();
    startup().encode(&mut b).unwrap();
    c.decode(&mut b).unwrap();
    b.put_u8(b'Q');
    b.put_i32(4 + (1 << 16) + 1);
    assert!(matches!(
        c.decode(&mut b),
        Err(ProtocolError::InvalidLength(_))
    ));
}

#[test]
fn big_announced_message_reserves_incrementally() {
    let mut c = normal_codec();
    let mut b = BytesMut::new();
    b.put_u8(b'Q');
    b.put_i32(100 << 20);
    b.put_slice(b"SEL");
    assert_eq!(c.decode(&mut b).unwrap(), None);
    assert!(
        b.capacity() <= 2 * RESERVE_CHUNK,
        "capacity {}",
        b.capacity()
    );
}

#[test]
fn unknown_message_type_is_fatal() {
    let mut c = normal_codec();
    let mut b = BytesMut::from(&b"z\0\0\0\x04"[..]);
    let err = c.decode(&mut b).unwrap_err();
    let pg = err.to_pg_error();
    assert_eq!(pg.code, sqlstate::PROTOCOL_VIOLATION);
    assert_eq!(pg.message, "invalid frontend message type 122");
    assert_eq!(pg.severity, pgtypes::error::Severity::Fatal);
    // Detected from the type byte alone.
    let mut c = normal_codec();
    let mut b = BytesMut::from(&b"z"[..]);
    assert!(c.decode(&mut b).is_err());
}

#[test]
fn wrong_protocol_version_is_fatal_0a000() {
    let mut c = ServerCodec::new(DEFAULT_MAX_MESSAGE_SIZE);
    let mut b = BytesMut::new();
    b.put_i32(9);
    b.put_i32(2 << 16);
    b.put_u8(0);
    let err = c.decode(&mut b).unwrap_err();
    let pg = err.to_pg_error();
    assert_eq!(pg.code, sqlstate::FEATURE_NOT_SUPPORTED);
    assert_eq!(
        pg.message,
        "unsupported frontend protocol 2.0: server supports 3.0 to 3.0"
    );
}

#[test]
fn bad_startup_lengths() {
    for len in [0i32, 7, 10001, -5, i32::MAX] {
        let mut c = ServerCodec::new(DEFAULT_MAX_MESSAGE_SIZE);
        let mut b = BytesMut::new();
        b.put_i32(len);
        b.put_i32(PROTOCOL_VERSION_3);
        assert!(
            matches!(
                c.decode(&mut b),
                Err(ProtocolError::InvalidStartupLength(_))
            ),
            "len {len}"
        );
    }
}

#[test]
fn ssl_then_startup() {
    let mut c = ServerCodec::new(DEFAULT_MAX_MESSAGE_SIZE);
    let mut b = BytesMut::new();
    FrontendMessage::SslRequest.encode(&mut b).unwrap();
    FrontendMessage::GssEncRequest.encode(&mut b).unwrap();
    startup().encode(&mut b).unwrap();
    FrontendMessage::Sync.encode(&mut b).unwrap();
    let got = decode_all_server(&mut c, &mut b);
    assert_eq!(
        got,
        vec![
            Ok(FrontendMessage::SslRequest),
            Ok(FrontendMessage::GssEncRequest),
            Ok(startup()),
            Ok(FrontendMessage::Sync)
        ]
    );
}

#[test]
fn invalid_utf8_query_is_recoverable_22021() {
    let mut c = normal_codec();
    let mut b = BytesMut::new();
    b.put_u8(b'Q');
    b.put_i32(4 + 4);
    b.put_slice(b"a\xc3(\0");
    FrontendMessage::Sync.encode(&mut b).unwrap();
    let got = decode_all_server(&mut c, &mut b);
    assert_eq!(got.len(), 2);
    let e = got[0].clone().unwrap_err().error;
    assert_eq!(e.code, sqlstate::CHARACTER_NOT_IN_REPERTOIRE);
    assert_eq!(
        e.message,
        "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28"
    );
    assert_eq!(got[1], Ok(FrontendMessage::Sync));
}

#[test]
fn truncated_bind_is_recoverable_08p01() {
    let mut c = normal_codec();
    let mut b = BytesMut::new();
    b.put_u8(b'B');
    b.put_i32(4 + 2 + 2 + 2);
    b.put_slice(b"\0\0");
    b.put_i16(0);
    b.put_i16(3); // three parameters announced, none present
    FrontendMessage::Sync.encode(&mut b).unwrap();
    let got = decode_all_server(&mut c, &mut b);
    let e = got[0].clone().unwrap_err();
    assert_eq!(e.error.code, sqlstate::PROTOCOL_VIOLATION);
    assert_eq!(e.tag, b'B');
    assert_eq!(got[1], Ok(FrontendMessage::Sync));
}

/// A Bind is kept as its body: the accessors read back what was sent, and
/// every malformed layout is refused when it is decoded, not when read.
#[test]
fn bind_reads_its_parts_in_place_and_refuses_bad_layouts() {
    let bind = Bind::new("p", "stmt", &[1], &[Some(b"17"), None, Some(b"")], &[0, 1]).unwrap();
    let mut b = BytesMut::new();
    FrontendMessage::Bind(bind.clone()).encode(&mut b).unwrap();
    let got = decode_all_server(&mut normal_codec(), &mut b);
    let Ok(FrontendMessage::Bind(back)) = &got[0] else {
        panic!("{got:?}")
    };
    assert_eq!(back, &bind);
    assert_eq!((back.portal(), back.statement()), ("p", "stmt"));
    assert_eq!(back.param_formats().to_vec(), vec![1]);
    assert_eq!(back.param_formats().format_of(2), 1, "one code is for all");
    let params: Vec<Option<&[u8]>> = back.params().collect();
    assert_eq!(params, vec![Some(&b"17"[..]), None, Some(&b""[..])]);
    assert_eq!(back.params().len(), 3);
    assert_eq!(back.result_formats().to_vec(), vec![0, 1]);
    assert_eq!(back.result_formats().format_of(1), 1);
    assert_eq!(back.result_formats().format_of(5), 0, "past the end: text");

    // (body after the two names, what is wrong with it)
    let bad: [(&[u8], &str); 4] = [
        (
            &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0, 0],
            "a length below -1",
        ),
        (
            &[0, 0, 0, 1, 0, 0, 0, 9, b'x', 0, 0],
            "a value past the end",
        ),
        (&[0, 0, 0, 0, 0, 1], "a result format missing"),
        (&[0, 0, 0, 0, 0, 0, 7], "a byte after the last part"),
    ];
    for (tail, what) in bad {
        let mut b = BytesMut::new();
        b.put_u8(b'B');
        b.put_i32((4 + 2 + tail.len()) as i32);
        b.put_slice(b"\0\0");
        b.put_slice(tail);
        FrontendMessage::Sync.encode(&mut b).unwrap();
        let got = decode_all_server(&mut normal_codec(), &mut b);
        let e = got[0].clone().expect_err(what);
        assert_eq!(e.error.code, sqlstate::PROTOCOL_VIOLATION, "{what}");
        assert_eq!(got[1], Ok(FrontendMessage::Sync), "{what}");
    }
}

#[test]
fn error_response_from_pg_error() {
    let e = pgtypes::error::PgError::new(sqlstate::UNIQUE_VIOLATION, "dup")
        .with_detail("Key (a)=(1) already exists.");
    let mut b = BytesMut::new();
    write_error(&mut b, &e);
    let got = ClientCodec::default().decode(&mut b).unwrap().unwrap();
    let BackendMessage::ErrorResponse(f) = got else {
        panic!("{got:?}")
    };
    assert_eq!(f.code(), "23505");
    assert_eq!(f.message(), "dup");
    assert_eq!(f.severity(), "ERROR");
    assert_eq!(f.detail(), Some("Key (a)=(1) already exists."));
    let mut b2 = BytesMut::new();
    BackendMessage::ErrorResponse(ErrorFields::from(&e))
        .encode(&mut b2)
        .unwrap();
    let mut b1 = BytesMut::new();
    write_error(&mut b1, &e);
    assert_eq!(b1, b2, "fast writer and message encoder agree");
}

// ---------------------------------------------------------------------------
// Property tests.

fn arb_str() -> impl Strategy<Value = String> {
    "[^\u{0}]{0,12}"
}

fn arb_bytes() -> impl Strategy<Value = Bytes> {
    prop::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from)
}

fn arb_target() -> impl Strategy<Value = Target> {
    prop_oneof![Just(Target::Statement), Just(Target::Portal)]
}

fn arb_frontend() -> impl Strategy<Value = FrontendMessage> {
    prop_oneof![
        arb_str().prop_map(FrontendMessage::Query),
        (
            arb_str(),
            arb_str(),
            prop::collection::vec(any::<u32>(), 0..5)
        )
            .prop_map(|(name, query, param_types)| FrontendMessage::Parse {
                name,
                query,
                param_types
            }),
        (
            arb_str(),
            arb_str(),
            prop::collection::vec(0i16..2, 0..4),
            prop::collection::vec(prop::option::of(arb_bytes()), 0..4),
            prop::collection::vec(0i16..2, 0..4)
        )
            .prop_map(
                |(portal, statement, param_formats, params, result_formats)| {
                    let params: Vec<Option<&[u8]>> = params.iter().map(|p| p.as_deref()).collect();
                    FrontendMessage::Bind(
                        Bind::new(
                            &portal,
                            &statement,
                            &param_formats,
                            &params,
                            &result_formats,
                        )
                        .expect("a small Bind encodes"),
                    )
                }
            ),
        (arb_target(), arb_str())
            .prop_map(|(target, name)| FrontendMessage::Describe { target, name }),
        (arb_str(), any::<i32>())
            .prop_map(|(portal, max_rows)| FrontendMessage::Execute { portal, max_rows }),
        (arb_target(), arb_str())
            .prop_map(|(target, name)| FrontendMessage::Close { target, name }),
        Just(FrontendMessage::Sync),
        Just(FrontendMessage::Flush),
        arb_bytes().prop_map(FrontendMessage::CopyData),
        Just(FrontendMessage::CopyDone),
        arb_str().prop_map(FrontendMessage::CopyFail),
        Just(FrontendMessage::Terminate),
        arb_bytes().prop_map(FrontendMessage::PasswordMessage),
    ]
}

fn arb_startup_phase() -> impl Strategy<Value = Vec<FrontendMessage>> {
    (
        prop::collection::vec(
            prop_oneof![
                Just(FrontendMessage::SslRequest),
                Just(FrontendMessage::GssEncRequest)
            ],
            0..3,
        ),
        prop::collection::vec(("[^\u{0}]{1,8}", arb_str()), 0..4),
    )
        .prop_map(|(mut pre, params)| {
            pre.push(FrontendMessage::Startup { params });
            pre
        })
}

fn arb_fields() -> impl Strategy<Value = ErrorFields> {
    prop::collection::vec((1u8..=255, arb_str()), 0..5).prop_map(|fields| ErrorFields { fields })
}

fn arb_field_info() -> impl Strategy<Value = FieldInfo> {
    (
        arb_str(),
        any::<u32>(),
        any::<i16>(),
        any::<u32>(),
        any::<i16>(),
        any::<i32>(),
        0i16..2,
    )
        .prop_map(
            |(name, table_oid, column_id, type_oid, type_len, type_mod, format)| FieldInfo {
                name,
                table_oid,
                column_id,
                type_oid,
                type_len,
                type_mod,
                format,
            },
        )
}

fn arb_backend() -> impl Strategy<Value = BackendMessage> {
    let copy = || (any::<i8>(), prop::collection::vec(0i16..2, 0..4));
    prop_oneof![
        Just(BackendMessage::AuthenticationOk),
        Just(BackendMessage::AuthenticationCleartextPassword),
        any::<[u8; 4]>().prop_map(|salt| BackendMessage::AuthenticationMD5Password { salt }),
        prop::collection::vec("[A-Z-]{1,20}", 0..3)
            .prop_map(|mechanisms| BackendMessage::AuthenticationSASL { mechanisms }),
        prop::collection::vec(any::<u8>(), 0..40)
            .prop_map(|d| BackendMessage::AuthenticationSASLContinue(Bytes::from(d))),
        prop::collection::vec(any::<u8>(), 0..40)
            .prop_map(|d| BackendMessage::AuthenticationSASLFinal(Bytes::from(d))),
        (arb_str(), arb_str())
            .prop_map(|(name, value)| BackendMessage::ParameterStatus { name, value }),
        (any::<i32>(), any::<i32>())
            .prop_map(|(pid, key)| BackendMessage::BackendKeyData { pid, key }),
        prop_oneof![Just(b'I'), Just(b'T'), Just(b'E')].prop_map(BackendMessage::ReadyForQuery),
        prop::collection::vec(arb_field_info(), 0..4).prop_map(BackendMessage::RowDescription),
        prop::collection::vec(prop::option::of(arb_bytes()), 0..5)
            .prop_map(BackendMessage::DataRow),
        arb_str().prop_map(BackendMessage::CommandComplete),
        Just(BackendMessage::EmptyQueryResponse),
        arb_fields().prop_map(BackendMessage::ErrorResponse),
        arb_fields().prop_map(BackendMessage::NoticeResponse),
        Just(BackendMessage::ParseComplete),
        Just(BackendMessage::BindComplete),
        Just(BackendMessage::CloseComplete),
        Just(BackendMessage::NoData),
        prop::collection::vec(any::<u32>(), 0..5).prop_map(BackendMessage::ParameterDescription),
        Just(BackendMessage::PortalSuspended),
        copy().prop_map(|(format, column_formats)| BackendMessage::CopyInResponse {
            format,
            column_formats
        }),
        copy().prop_map(|(format, column_formats)| BackendMessage::CopyOutResponse {
            format,
            column_formats
        }),
        copy().prop_map(
            |(format, column_formats)| BackendMessage::CopyBothResponse {
                format,
                column_formats
            }
        ),
        arb_bytes().prop_map(BackendMessage::CopyData),
        Just(BackendMessage::CopyDone),
    ]
}

fn encode_frontend(msgs: &[FrontendMessage]) -> BytesMut {
    let mut codec = ClientCodec::default();
    let mut b = BytesMut::new();
    for m in msgs {
        codec.encode(m, &mut b).unwrap();
    }
    b
}

fn encode_backend(msgs: &[BackendMessage]) -> BytesMut {
    let mut codec = ServerCodec::new(DEFAULT_MAX_MESSAGE_SIZE);
    let mut b = BytesMut::new();
    for m in msgs {
        codec.encode(m, &mut b).unwrap();
    }
    b
}

/// Decodes `bytes` fed in two pieces split at `cut`.
fn decode_server_split(bytes: &[u8], cut: usize) -> Vec<FrontendMessage> {
    let mut c = ServerCodec::new(DEFAULT_MAX_MESSAGE_SIZE);
    let mut b = BytesMut::from(&bytes[..cut]);
    let mut out: Vec<FrontendMessage> = decode_all_server(&mut c, &mut b)
        .into_iter()
        .map(|m| m.unwrap())
        .collect();
    b.extend_from_slice(&bytes[cut..]);
    out.extend(
        decode_all_server(&mut c, &mut b)
            .into_iter()
            .map(|m| m.unwrap()),
    );
    assert!(b.is_empty());
    out
}

fn decode_client_split(bytes: &[u8], cut: usize) -> Vec<BackendMessage> {
    let mut c = ClientCodec::default();
    let mut b = BytesMut::from(&bytes[..cut]);
    let mut out = Vec::new();
    while let Some(m) = c.decode(&mut b).unwrap() {
        out.push(m);
    }
    b.extend_from_slice(&bytes[cut..]);
    while let Some(m) = c.decode(&mut b).unwrap() {
        out.push(m);
    }
    assert!(b.is_empty());
    out
}

proptest! {
    #[test]
    fn frontend_round_trip_at_every_cut(
        start in arb_startup_phase(),
        msgs in prop::collection::vec(arb_frontend(), 0..6),
    ) {
        let mut all = start;
        all.extend(msgs);
        let bytes = encode_frontend(&all);
        for cut in 0..=bytes.len() {
            prop_assert_eq!(&decode_server_split(&bytes, cut), &all, "cut at {}", cut);
        }
    }

    #[test]
    fn backend_round_trip_at_every_cut(msgs in prop::collection::vec(arb_backend(), 0..6)) {
        let bytes = encode_backend(&msgs);
        for cut in 0..=bytes.len() {
            prop_assert_eq!(&decode_client_split(&bytes, cut), &msgs, "cut at {}", cut);
        }
    }

    #[test]
    fn cancel_request_round_trip(pid in any::<i32>(), key in any::<i32>()) {
        let m = vec![FrontendMessage::CancelRequest { pid, key }];
        prop_assert_eq!(decode_server_split(&encode_frontend(&m), 3), m);
    }

    #[test]
    fn random_bytes_never_panic_server(bytes in prop::collection::vec(any::<u8>(), 0..200), after_startup in any::<bool>()) {
        let mut c = if after_startup { normal_codec() } else { ServerCodec::new(DEFAULT_MAX_MESSAGE_SIZE) };
        let mut b = BytesMut::from(&bytes[..]);
        while let Ok(Some(_)) = c.decode(&mut b) {}
    }

    #[test]
    fn random_typed_frames_never_panic(tag in any::<u8>(), body in prop::collection::vec(any::<u8>(), 0..64)) {
        let mut c = normal_codec();
        let mut b = BytesMut::new();
        b.put_u8(tag);
        b.put_i32(4 + body.len() as i32);
        b.put_slice(&body);
        let _ = c.decode(&mut b);
        let mut cc = ClientCodec::default();
        let mut b = BytesMut::new();
        b.put_u8(tag);
        b.put_i32(4 + body.len() as i32);
        b.put_slice(&body);
        let _ = cc.decode(&mut b);
    }

    #[test]
    fn random_bytes_never_panic_client(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut c = ClientCodec::default();
        let mut b = BytesMut::from(&bytes[..]);
        while let Ok(Some(_)) = c.decode(&mut b) {}
    }
}
