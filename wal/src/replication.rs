//! Physical replication stream framing: the CopyData payloads exchanged
//! after `START_REPLICATION … PHYSICAL X/X` (PostgreSQL's "Streaming
//! Replication Protocol"), byte for byte.
//!
//! ```text
//! primary → standby
//!   'w' XLogData         u64 start, u64 wal_end, i64 send_time, data…
//!   'k' keepalive        u64 wal_end, i64 send_time, u8 reply_requested
//! standby → primary
//!   'r' status update    u64 write, u64 flush, u64 apply, i64 send_time,
//!                        u8 reply_requested
//!   'h' hot-standby fb   i64 send_time, u32 xmin, u32 xmin_epoch,
//!                        u32 catalog_xmin, u32 catalog_xmin_epoch
//! ```
//!
//! Integers are big-endian (network order). Times are PostgreSQL
//! `TimestampTz`: microseconds since 2000-01-01 00:00 UTC. Our xids are
//! 64-bit; the feedback message carries them as PostgreSQL's
//! FullTransactionId split into (epoch = high 32 bits, xid = low 32 bits).
//! Decoding checks lengths exactly and never panics.

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::{BufMut, Bytes};

use pgtypes::lsn::Lsn;

/// Microseconds from the Unix epoch to 2000-01-01 (PostgreSQL's epoch).
pub const PG_EPOCH_OFFSET_US: i64 = 946_684_800_000_000;

/// Converts a system time to a PostgreSQL timestamp (µs since 2000-01-01).
pub fn to_pg_timestamp(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX) - PG_EPOCH_OFFSET_US,
        Err(e) => {
            -(i64::try_from(e.duration().as_micros()).unwrap_or(i64::MAX)) - PG_EPOCH_OFFSET_US
        }
    }
}

/// Now, as a PostgreSQL timestamp.
pub fn pg_now() -> i64 {
    to_pg_timestamp(SystemTime::now())
}

/// `w`: a run of WAL bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XLogData {
    /// LSN of the first byte of `data`.
    pub start: Lsn,
    /// The primary's current end of WAL (flushed LSN).
    pub wal_end: Lsn,
    /// Send time.
    pub send_time: i64,
    /// The WAL bytes.
    pub data: Bytes,
}

/// `k`: primary keepalive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimaryKeepalive {
    /// The primary's current end of WAL.
    pub wal_end: Lsn,
    /// Send time.
    pub send_time: i64,
    /// The standby should reply at once.
    pub reply_requested: bool,
}

/// `r`: standby status update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandbyReply {
    /// WAL received and written up to here.
    pub write_lsn: Lsn,
    /// WAL flushed to disk up to here.
    pub flush_lsn: Lsn,
    /// WAL replayed up to here.
    pub apply_lsn: Lsn,
    /// Send time.
    pub send_time: i64,
    /// The primary should reply at once.
    pub reply_requested: bool,
}

/// `h`: hot-standby feedback (the standby's oldest xmin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HotStandbyFeedback {
    /// Send time.
    pub send_time: i64,
    /// Oldest xmin of the standby's queries (0 = none, stop holding back).
    pub xmin: u64,
    /// Oldest catalog xmin (0 = none).
    pub catalog_xmin: u64,
}

/// One replication CopyData payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplicationMessage {
    /// `w`.
    XLogData(XLogData),
    /// `k`.
    Keepalive(PrimaryKeepalive),
    /// `r`.
    StandbyReply(StandbyReply),
    /// `h`.
    HotStandbyFeedback(HotStandbyFeedback),
}

/// A CopyData payload that is not a well-formed replication message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    /// Empty payload.
    #[error("empty replication message")]
    Empty,
    /// Unknown type byte.
    #[error("unexpected replication message type \"{}\"", char::from(*.0))]
    UnknownType(u8),
    /// Wrong length for its type.
    #[error("invalid replication message \"{kind}\": length {len}")]
    BadLength {
        /// The type byte as a char.
        kind: char,
        /// The payload length.
        len: usize,
    },
}

/// Header length of an XLogData message before its data.
pub const XLOGDATA_HEADER_LEN: usize = 25;

fn be_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl XLogData {
    /// Writes only the 25-byte header, so a walsender can append WAL read
    /// straight from a segment file into the same buffer.
    pub fn encode_header(start: Lsn, wal_end: Lsn, send_time: i64, out: &mut impl BufMut) {
        out.put_u8(b'w');
        out.put_u64(start.0);
        out.put_u64(wal_end.0);
        out.put_i64(send_time);
    }
}

impl ReplicationMessage {
    /// Appends the encoding (the CopyData payload, without the CopyData
    /// message header).
    pub fn encode(&self, out: &mut impl BufMut) {
        match self {
            ReplicationMessage::XLogData(m) => {
                XLogData::encode_header(m.start, m.wal_end, m.send_time, out);
                out.put_slice(&m.data);
            }
            ReplicationMessage::Keepalive(m) => {
                out.put_u8(b'k');
                out.put_u64(m.wal_end.0);
                out.put_i64(m.send_time);
                out.put_u8(u8::from(m.reply_requested));
            }
            ReplicationMessage::StandbyReply(m) => {
                out.put_u8(b'r');
                out.put_u64(m.write_lsn.0);
                out.put_u64(m.flush_lsn.0);
                out.put_u64(m.apply_lsn.0);
                out.put_i64(m.send_time);
                out.put_u8(u8::from(m.reply_requested));
            }
            ReplicationMessage::HotStandbyFeedback(m) => {
                out.put_u8(b'h');
                out.put_i64(m.send_time);
                out.put_u32(m.xmin as u32);
                out.put_u32((m.xmin >> 32) as u32);
                out.put_u32(m.catalog_xmin as u32);
                out.put_u32((m.catalog_xmin >> 32) as u32);
            }
        }
    }

    /// The encoding as a new buffer.
    pub fn to_bytes(&self) -> Bytes {
        let mut v = Vec::new();
        self.encode(&mut v);
        Bytes::from(v)
    }

    /// Decodes a CopyData payload. XLogData's data shares `buf`'s memory.
    pub fn decode(buf: &Bytes) -> Result<ReplicationMessage, FramingError> {
        let kind = *buf.first().ok_or(FramingError::Empty)?;
        let b = &buf[..];
        let need = |n: usize, exact: bool| {
            let ok = if exact { b.len() == n } else { b.len() >= n };
            if ok {
                Ok(())
            } else {
                Err(FramingError::BadLength {
                    kind: char::from(kind),
                    len: b.len(),
                })
            }
        };
        Ok(match kind {
            b'w' => {
                need(XLOGDATA_HEADER_LEN, false)?;
                ReplicationMessage::XLogData(XLogData {
                    start: Lsn(be_u64(b, 1)),
                    wal_end: Lsn(be_u64(b, 9)),
                    send_time: be_u64(b, 17) as i64,
                    data: buf.slice(XLOGDATA_HEADER_LEN..),
                })
            }
            b'k' => {
                need(18, true)?;
                ReplicationMessage::Keepalive(PrimaryKeepalive {
                    wal_end: Lsn(be_u64(b, 1)),
                    send_time: be_u64(b, 9) as i64,
                    reply_requested: b[17] != 0,
                })
            }
            b'r' => {
                need(34, true)?;
                ReplicationMessage::StandbyReply(StandbyReply {
                    write_lsn: Lsn(be_u64(b, 1)),
                    flush_lsn: Lsn(be_u64(b, 9)),
                    apply_lsn: Lsn(be_u64(b, 17)),
                    send_time: be_u64(b, 25) as i64,
                    reply_requested: b[33] != 0,
                })
            }
            b'h' => {
                need(25, true)?;
                let full = |xid: u32, epoch: u32| (u64::from(epoch) << 32) | u64::from(xid);
                ReplicationMessage::HotStandbyFeedback(HotStandbyFeedback {
                    send_time: be_u64(b, 1) as i64,
                    xmin: full(be_u32(b, 9), be_u32(b, 13)),
                    catalog_xmin: full(be_u32(b, 17), be_u32(b, 21)),
                })
            }
            other => return Err(FramingError::UnknownType(other)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_msg() -> impl Strategy<Value = ReplicationMessage> {
        prop_oneof![
            (
                any::<u64>(),
                any::<u64>(),
                any::<i64>(),
                proptest::collection::vec(any::<u8>(), 0..100)
            )
                .prop_map(|(s, e, t, d)| ReplicationMessage::XLogData(XLogData {
                    start: Lsn(s),
                    wal_end: Lsn(e),
                    send_time: t,
                    data: Bytes::from(d)
                })),
            (any::<u64>(), any::<i64>(), any::<bool>()).prop_map(|(e, t, r)| {
                ReplicationMessage::Keepalive(PrimaryKeepalive {
                    wal_end: Lsn(e),
                    send_time: t,
                    reply_requested: r,
                })
            }),
            (
                any::<u64>(),
                any::<u64>(),
                any::<u64>(),
                any::<i64>(),
                any::<bool>()
            )
                .prop_map(|(w, f, a, t, r)| {
                    ReplicationMessage::StandbyReply(StandbyReply {
                        write_lsn: Lsn(w),
                        flush_lsn: Lsn(f),
                        apply_lsn: Lsn(a),
                        send_time: t,
                        reply_requested: r,
                    })
                }),
            (any::<i64>(), any::<u64>(), any::<u64>()).prop_map(|(t, x, c)| {
                ReplicationMessage::HotStandbyFeedback(HotStandbyFeedback {
                    send_time: t,
                    xmin: x,
                    catalog_xmin: c,
                })
            }),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(m in any_msg()) {
            prop_assert_eq!(ReplicationMessage::decode(&m.to_bytes()), Ok(m));
        }

        #[test]
        fn garbage_never_panics(b in proptest::collection::vec(any::<u8>(), 0..60)) {
            let _ = ReplicationMessage::decode(&Bytes::from(b));
        }
    }

    #[test]
    fn exact_postgres_layouts() {
        // Standby status update as PostgreSQL's walreceiver sends it
        // (XLogWalRcvSendReply): 'r', write, flush, apply, time, reply flag.
        let r = ReplicationMessage::StandbyReply(StandbyReply {
            write_lsn: Lsn(0x0000_0001_0000_0002),
            flush_lsn: Lsn(3),
            apply_lsn: Lsn(4),
            send_time: 5,
            reply_requested: true,
        });
        let mut want = vec![b'r', 0, 0, 0, 1, 0, 0, 0, 2];
        for v in [3u64, 4, 5] {
            want.extend_from_slice(&v.to_be_bytes());
        }
        want.push(1);
        assert_eq!(&r.to_bytes()[..], &want[..]);
        // Hot-standby feedback: xmin then its epoch.
        let h = ReplicationMessage::HotStandbyFeedback(HotStandbyFeedback {
            send_time: 1,
            xmin: (7 << 32) | 750,
            catalog_xmin: 0,
        });
        let b = h.to_bytes();
        assert_eq!(b.len(), 25);
        assert_eq!(&b[9..17], &[0, 0, 2, 238, 0, 0, 0, 7]);
        let k = ReplicationMessage::Keepalive(PrimaryKeepalive {
            wal_end: Lsn(1),
            send_time: 2,
            reply_requested: false,
        });
        assert_eq!(k.to_bytes().len(), 18);
        assert_eq!(
            ReplicationMessage::decode(&Bytes::from_static(b"k")),
            Err(FramingError::BadLength { kind: 'k', len: 1 })
        );
        assert_eq!(
            ReplicationMessage::decode(&Bytes::from_static(b"z")),
            Err(FramingError::UnknownType(b'z'))
        );
    }

    #[test]
    fn timestamps() {
        assert_eq!(
            to_pg_timestamp(UNIX_EPOCH + std::time::Duration::from_secs(946_684_800)),
            0
        );
        assert_eq!(to_pg_timestamp(UNIX_EPOCH), -PG_EPOCH_OFFSET_US);
        assert!(pg_now() > 0);
    }
}
