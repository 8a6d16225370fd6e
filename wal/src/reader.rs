//! Reading WAL back: from segment files ([`WalReader`], used by crash
//! recovery, the standby's startup process and tools) and from a byte stream
//! arriving in arbitrary chunks ([`StreamDecoder`], used by the standby's
//! walreceiver for XLogData messages).
//!
//! Both find records with the same validation (`record::try_decode`): the
//! first record read from a start position is accepted with any prev-link
//! (unless the caller names the expected one); every later record must link
//! back to the one before it. A reader stops at the first position that does
//! not hold a valid record and reports it as [`EndOfWal`] `{ lsn, reason }`.
//! That position is the end of valid WAL: crash recovery ends redo there and
//! the writer continues from it.
//!
//! After an `EndOfWal` the reader stays where it was and forgets any bytes it
//! had buffered, so calling [`WalReader::next_record`] again re-reads the
//! files: a standby tailing WAL that the walreceiver is still writing uses
//! [`WalReader::set_read_limit`] (its flushed LSN) and simply retries after
//! the limit moves.
//!
//! Reads go through one buffer filled in chunks of up to 128 KiB (never
//! across a segment boundary and never beyond the read limit); records that
//! cross a segment boundary are assembled in it.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::record::{try_decode, Decoded, DecodedRecord, EndOfWal, EndReason};
use crate::segment::{check_segment_size, open_segment};
use pgtypes::lsn::Lsn;

const READ_CHUNK: u64 = 128 << 10;

/// Where a writer continues after recovery: the end of valid WAL and the
/// start of the last valid record (the next record's prev-link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalPosition {
    /// Where the next record will start.
    pub end: Lsn,
    /// Start of the last record before `end` ([`Lsn::INVALID`] if none).
    pub prev: Lsn,
}

impl WalPosition {
    /// The position of an empty WAL: the start of segment 1 (segment 0 is
    /// never used, so that no record starts at [`Lsn::INVALID`]).
    pub fn initial(segment_size: u64) -> WalPosition {
        WalPosition {
            end: Lsn::from_segment(1, segment_size),
            prev: Lsn::INVALID,
        }
    }
}

/// Reads records from the segment files in a directory.
#[derive(Debug)]
pub struct WalReader {
    dir: PathBuf,
    segment_size: u64,
    /// Start of the next record to read.
    pos: Lsn,
    /// Required prev-link of the next record (None: accept any).
    expected_prev: Option<Lsn>,
    /// Start of the last record returned (or the prev given to `seek`).
    last_start: Lsn,
    /// Bytes of the stream starting at `buf_lsn`.
    buf: Vec<u8>,
    buf_lsn: Lsn,
    /// Never read bytes at or after this LSN.
    limit: Lsn,
    /// The open segment file.
    file: Option<(u64, File)>,
}

impl WalReader {
    /// A reader over `dir` (a `pg_wal/` directory) with the given segment
    /// size, positioned at [`WalPosition::initial`].
    pub fn new(dir: impl AsRef<Path>, segment_size: u64) -> io::Result<WalReader> {
        check_segment_size(segment_size)?;
        let start = WalPosition::initial(segment_size).end;
        Ok(WalReader {
            dir: dir.as_ref().to_path_buf(),
            segment_size,
            pos: start,
            expected_prev: None,
            last_start: Lsn::INVALID,
            buf: Vec::new(),
            buf_lsn: start,
            limit: Lsn::MAX,
            file: None,
        })
    }

    /// Positions the reader at `start` (which must be a record start) and
    /// returns an iterator over the records from there; the first record's
    /// prev-link is not checked.
    pub fn read_from(&mut self, start: Lsn) -> Records<'_> {
        self.seek(start, None);
        Records {
            reader: self,
            done: false,
        }
    }

    /// Positions the reader at `start`; if `prev` is given, the first record
    /// must link back to it.
    pub fn seek(&mut self, start: Lsn, prev: Option<Lsn>) {
        self.pos = start;
        self.expected_prev = prev;
        self.last_start = prev.unwrap_or(Lsn::INVALID);
        self.buf.clear();
        self.buf_lsn = start;
    }

    /// Never read at or beyond `limit` (e.g. a standby's flushed LSN):
    /// a record that would need such bytes ends with
    /// [`EndReason::ReadLimit`]. [`Lsn::MAX`] means no limit.
    pub fn set_read_limit(&mut self, limit: Lsn) {
        self.set_limit_inner(limit)
    }

    /// Closes the segment file held open, so the next read finds the
    /// segment again: after a timeline switch the same segment number is
    /// a different file (`segment::find_segment`).
    pub fn forget_file(&mut self) {
        self.file = None;
    }

    fn set_limit_inner(&mut self, limit: Lsn) {
        self.limit = limit;
        let buf_end = self.buf_lsn + self.buf.len() as u64;
        if buf_end > limit {
            self.buf
                .truncate(limit.distance_from(self.buf_lsn) as usize);
        }
    }

    /// Where the next record will be read from, and the last record read.
    pub fn position(&self) -> WalPosition {
        WalPosition {
            end: self.pos,
            prev: self.last_start,
        }
    }

    /// The segment size.
    pub fn segment_size(&self) -> u64 {
        self.segment_size
    }

    /// Reads the next record, or reports the end of valid WAL. The reader
    /// does not move on `Err`; calling again retries from the same LSN.
    pub fn next_record(&mut self) -> Result<DecodedRecord, EndOfWal> {
        loop {
            let buf_end = self.buf_lsn + self.buf.len() as u64;
            if self.pos < self.buf_lsn || self.pos > buf_end {
                self.buf.clear();
                self.buf_lsn = self.pos;
            }
            let off = (self.pos - self.buf_lsn) as usize;
            let avail = self.buf.get(off..).unwrap_or(&[]);
            match try_decode(avail, self.pos, self.expected_prev, self.segment_size) {
                Decoded::Record(r) => {
                    self.pos = r.end_lsn;
                    self.expected_prev = Some(r.start_lsn);
                    self.last_start = r.start_lsn;
                    return Ok(r);
                }
                Decoded::NeedMore(need) => {
                    if let Err(reason) = self.fill(need) {
                        self.buf.clear();
                        self.buf_lsn = self.pos;
                        return Err(EndOfWal {
                            lsn: self.pos,
                            reason,
                        });
                    }
                }
                Decoded::Bad(reason) => {
                    self.buf.clear();
                    self.buf_lsn = self.pos;
                    return Err(EndOfWal {
                        lsn: self.pos,
                        reason,
                    });
                }
            }
        }
    }

    /// Makes the buffer hold at least `need` bytes from `self.pos`.
    fn fill(&mut self, need: u64) -> Result<(), EndReason> {
        // Drop consumed bytes so the buffer stays about one chunk long.
        let off = (self.pos - self.buf_lsn) as usize;
        if off > 0 {
            self.buf.drain(..off.min(self.buf.len()));
            self.buf_lsn = self.pos;
        }
        while (self.buf.len() as u64) < need {
            let have = self.buf.len() as u64;
            let at = self.buf_lsn + have;
            if at >= self.limit {
                return Err(EndReason::ReadLimit { limit: self.limit });
            }
            let segno = at.segment_number(self.segment_size);
            let seg_off = at.segment_offset(self.segment_size);
            let want = (need - have)
                .max(READ_CHUNK)
                .min(self.segment_size - seg_off)
                .min(self.limit.distance_from(at));
            let file = match &self.file {
                Some((s, f)) if *s == segno => f,
                _ => {
                    self.file = None;
                    match open_segment(&self.dir, segno, self.segment_size) {
                        Ok(f) => &self.file.insert((segno, f)).1,
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {
                            return Err(if have == 0 {
                                EndReason::MissingSegment { segno }
                            } else {
                                EndReason::Truncated {
                                    wanted: need,
                                    got: have,
                                }
                            });
                        }
                        Err(e) => return Err(EndReason::Io(e.to_string())),
                    }
                }
            };
            self.buf.resize((have + want) as usize, 0);
            let n = match read_full_at(file, &mut self.buf[have as usize..], seg_off) {
                Ok(n) => n,
                Err(e) => {
                    self.buf.truncate(have as usize);
                    return Err(EndReason::Io(e.to_string()));
                }
            };
            self.buf.truncate((have + n as u64) as usize);
            if n == 0 {
                // The file ends before the segment does (truncated tail).
                return Err(EndReason::Truncated {
                    wanted: need,
                    got: have,
                });
            }
        }
        Ok(())
    }
}

/// Reads as much as possible into `buf` at `offset` (stops early only at EOF).
fn read_full_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Iterator over records from [`WalReader::read_from`]: yields `Ok` records,
/// then one `Err(EndOfWal)`, then `None`.
#[derive(Debug)]
pub struct Records<'a> {
    reader: &'a mut WalReader,
    done: bool,
}

impl Iterator for Records<'_> {
    type Item = Result<DecodedRecord, EndOfWal>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.reader.next_record();
        self.done = r.is_err();
        Some(r)
    }
}

/// Reads raw WAL bytes at `start` into `out`, never crossing the end of
/// `start`'s segment; returns how many bytes were read (0 at the end of a
/// short file). For the walsender, which sends bytes up to the flushed LSN
/// without decoding them. A missing segment is `ErrorKind::NotFound`
/// ("requested WAL segment … has already been removed").
pub fn read_raw(dir: &Path, segment_size: u64, start: Lsn, out: &mut [u8]) -> io::Result<usize> {
    check_segment_size(segment_size)?;
    let seg_off = start.segment_offset(segment_size);
    let n = (out.len() as u64).min(segment_size - seg_off) as usize;
    let f = open_segment(dir, start.segment_number(segment_size), segment_size)?;
    read_full_at(&f, &mut out[..n], seg_off)
}

/// [`read_raw`] for a caller that knows the node's newest timeline (the
/// walsender: its writer's), which spares a directory listing per call.
pub fn read_raw_newest(
    dir: &Path,
    segment_size: u64,
    newest: pgtypes::TimeLineId,
    start: Lsn,
    out: &mut [u8],
) -> io::Result<usize> {
    check_segment_size(segment_size)?;
    let seg_off = start.segment_offset(segment_size);
    let n = (out.len() as u64).min(segment_size - seg_off) as usize;
    let segno = start.segment_number(segment_size);
    let f = crate::segment::open_segment_newest(dir, segno, segment_size, newest)?;
    read_full_at(&f, &mut out[..n], seg_off)
}

/// The error when streamed bytes do not continue the received stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("received WAL at {got} but expected it to continue at {expected}")]
pub struct StreamGap {
    /// Where the received stream ends.
    pub expected: Lsn,
    /// Where the pushed chunk starts.
    pub got: Lsn,
}

/// Decodes records from WAL bytes pushed in arbitrary chunks (XLogData
/// payloads). Chunks must be contiguous; a chunk that overlaps bytes already
/// received is trimmed (a reconnecting walreceiver restarts at a segment
/// start), one that leaves a gap is refused.
#[derive(Debug)]
pub struct StreamDecoder {
    segment_size: u64,
    /// Start of the next record.
    pos: Lsn,
    /// Required prev-link of the next record.
    expected_prev: Option<Lsn>,
    /// End of the bytes received so far.
    received: Lsn,
    /// Received bytes not yet consumed start at `buf[head]`, LSN `buf_lsn + head`.
    buf: Vec<u8>,
    head: usize,
    buf_lsn: Lsn,
}

impl StreamDecoder {
    /// A decoder whose first record starts at `start` (any prev-link
    /// accepted unless `prev` is given). Bytes before `start` are dropped.
    pub fn new(start: Lsn, prev: Option<Lsn>, segment_size: u64) -> StreamDecoder {
        StreamDecoder {
            segment_size,
            pos: start,
            expected_prev: prev,
            received: start,
            buf: Vec::new(),
            head: 0,
            buf_lsn: start,
        }
    }

    /// Adds the bytes `data` that start at `lsn`.
    pub fn push(&mut self, lsn: Lsn, data: &[u8]) -> Result<(), StreamGap> {
        if lsn > self.received {
            return Err(StreamGap {
                expected: self.received,
                got: lsn,
            });
        }
        let end = lsn + data.len() as u64;
        if end <= self.received {
            return Ok(());
        }
        let new = &data[(self.received - lsn) as usize..];
        let new_start = self.received;
        self.received = end;
        if end <= self.pos {
            // All of it is padding we are skipping (after a switch record).
            return Ok(());
        }
        // Compact once per push (not per record) to keep decoding linear.
        if self.head > 0 {
            self.buf.drain(..self.head);
            self.buf_lsn += self.head as u64;
            self.head = 0;
        }
        let skip = self.pos.distance_from(new_start) as usize;
        if self.buf.is_empty() {
            self.buf_lsn = new_start + skip as u64;
        }
        self.buf.extend_from_slice(&new[skip..]);
        Ok(())
    }

    /// The next complete record, `Ok(None)` if more bytes are needed, or
    /// `Err` if the bytes at the current position are not a valid record
    /// (the decoder stays there).
    pub fn next_record(&mut self) -> Result<Option<DecodedRecord>, EndOfWal> {
        let buf_end = self.buf_lsn + self.buf.len() as u64;
        if self.pos >= buf_end {
            return Ok(None);
        }
        let off = (self.pos - self.buf_lsn) as usize;
        let avail = self.buf.get(off..).unwrap_or(&[]);
        match try_decode(avail, self.pos, self.expected_prev, self.segment_size) {
            Decoded::Record(r) => {
                self.pos = r.end_lsn;
                self.expected_prev = Some(r.start_lsn);
                if self.pos >= buf_end {
                    self.buf.clear();
                    self.head = 0;
                    self.buf_lsn = self.pos;
                } else {
                    self.head = (self.pos - self.buf_lsn) as usize;
                }
                Ok(Some(r))
            }
            Decoded::NeedMore(_) => Ok(None),
            Decoded::Bad(reason) => Err(EndOfWal {
                lsn: self.pos,
                reason,
            }),
        }
    }

    /// Start of the next record to decode.
    pub fn position(&self) -> Lsn {
        self.pos
    }

    /// End of the bytes received.
    pub fn received(&self) -> Lsn {
        self.received
    }
}
