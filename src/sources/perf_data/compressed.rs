//! `perf record -z`: `PERF_RECORD_COMPRESSED` (81) and `PERF_RECORD_COMPRESSED2` (83, 8-byte
//! aligned, with a `u64 data_size` before the data) hold one zstd stream. perf compresses every
//! ring-buffer read into the same stream and flushes it per record (`zstd_compress_stream_to_records`
//! never ends the frame), so a zstd block may continue in the next record, and a perf record in
//! the decompressed bytes may too: the stream is decompressed as a whole, into a window of the
//! records not yet consumed ([`Inflater::out`]), at offsets of the decompressed stream.
//!
//! ruzstd keeps the last window's bytes until more are decoded (they are the frame's history):
//! while the frame runs, what comes out lags what went in by exactly the window size once that
//! much was decoded. [`Inflater::round_mark`] turns this into the place of a
//! `PERF_RECORD_FINISHED_ROUND` in the decompressed records; at the end of the data an empty
//! last block finishes the frame, and the rest comes out.

use ruzstd::decoding::FrameDecoder;

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// Bytes decoded per step: bounds what one step adds to memory.
const STEP: usize = 256 << 10;

/// Why the compressed records do not decompress.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InflateError {
    #[error("expected a zstd frame (magic 28 b5 2f fd), found {0}")]
    NotZstd(String),
    #[error("the zstd frame header is invalid: {0}")]
    Header(String),
    #[error("the zstd data does not decompress: {0}")]
    Data(String),
}

/// The decompressed record stream of a file's compressed records.
pub struct Inflater {
    dec: FrameDecoder,
    /// A frame is being decoded (its header was read).
    in_frame: bool,
    /// The running frame has a content checksum (four bytes after its last block).
    checksum: bool,
    /// The running frame's window: what the decoder holds back.
    window: u64,
    /// Compressed bytes not decoded yet (a block cut at a record boundary), from `input_at`.
    input: Vec<u8>,
    input_at: usize,
    /// Decompressed bytes from stream offset `base` on.
    pub out: Vec<u8>,
    pub base: u64,
    /// Where the next record starts (stream offset, at or after `base`).
    pub walked: u64,
    /// (stream offset, file offset of the compressed record that produced it), for messages.
    sources: std::collections::VecDeque<(u64, u64)>,
    scratch: Vec<u8>,
    /// Compressed records read.
    pub records: u64,
}

impl Default for Inflater {
    fn default() -> Self {
        Inflater {
            dec: FrameDecoder::new(),
            in_frame: false,
            checksum: false,
            window: 0,
            input: Vec::new(),
            input_at: 0,
            out: Vec::new(),
            base: 0,
            walked: 0,
            sources: Default::default(),
            scratch: vec![0; STEP],
            records: 0,
        }
    }
}

/// The length of a zstd frame header at the start of `b`, its window size and whether the
/// frame has a checksum; `None` while `b` is too short to tell.
fn frame_header(b: &[u8]) -> Result<Option<(usize, u64, bool)>, InflateError> {
    if b.len() < 5 {
        if !ZSTD_MAGIC.starts_with(b) {
            return Err(InflateError::NotZstd(super::header::hex(b)));
        }
        return Ok(None);
    }
    if b[..4] != ZSTD_MAGIC {
        return Err(InflateError::NotZstd(super::header::hex(&b[..4])));
    }
    let fhd = b[4];
    let single = fhd & 0x20 != 0;
    let checksum = fhd & 0x04 != 0;
    let dict = [0, 1, 2, 4][(fhd & 3) as usize];
    let fcs = match fhd >> 6 {
        0 if single => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let len = 5 + (!single) as usize + dict + fcs;
    if b.len() < len {
        return Ok(None);
    }
    let window = if single {
        // the frame is its own window: its content size
        let at = 5 + dict;
        let mut v = [0u8; 8];
        v[..fcs].copy_from_slice(&b[at..at + fcs]);
        u64::from_le_bytes(v) + if fcs == 2 { 256 } else { 0 }
    } else {
        let wd = b[5];
        let base = 1u64 << (10 + (wd >> 3));
        base + (base / 8) * (wd & 7) as u64
    };
    Ok(Some((len, window, checksum)))
}

impl Inflater {
    /// Decompresses the data of a compressed record (at `file_offset` in the file).
    pub fn feed(&mut self, data: &[u8], file_offset: u64) -> Result<(), InflateError> {
        self.records += 1;
        let at = self.base + self.out.len() as u64;
        if self.sources.back().is_none_or(|&(_, f)| f != file_offset) {
            self.sources.push_back((at, file_offset));
        }
        if self.input_at > 0 && self.input_at == self.input.len() {
            self.input.clear();
            self.input_at = 0;
        }
        self.input.extend_from_slice(data);
        self.decode()
    }

    fn decode(&mut self) -> Result<(), InflateError> {
        loop {
            if !self.in_frame {
                let rest = &self.input[self.input_at..];
                if rest.is_empty() {
                    return Ok(());
                }
                let Some((len, window, checksum)) = frame_header(rest)? else {
                    return Ok(());
                };
                self.dec
                    .init(&rest[..len])
                    .map_err(|e| InflateError::Header(e.to_string()))?;
                self.input_at += len;
                (self.in_frame, self.window, self.checksum) = (true, window, checksum);
            }
            let (read, written) = self
                .dec
                .decode_from_to(&self.input[self.input_at..], &mut self.scratch)
                .map_err(|e| InflateError::Data(e.to_string()))?;
            self.input_at += read;
            self.out.extend_from_slice(&self.scratch[..written]);
            if self.dec.is_finished() && self.dec.can_collect() == 0 {
                // a frame perf ended (none does today): the next may follow
                self.in_frame = false;
                continue;
            }
            if read == 0 && written == 0 {
                break;
            }
        }
        // keep the unread input small: it is at most a block cut short
        if self.input_at > (1 << 20) {
            self.input.drain(..self.input_at);
            self.input_at = 0;
        }
        Ok(())
    }

    /// The end of the compressed records: an empty last block finishes the running frame (perf
    /// never ends it), and the window the decoder kept comes out.
    pub fn finish(&mut self) -> Result<(), InflateError> {
        if !self.in_frame {
            return Ok(());
        }
        // a raw block of size 0 with Last_Block set, then a checksum ruzstd does not verify
        self.input.extend_from_slice(&[1, 0, 0]);
        if self.checksum {
            self.input.extend_from_slice(&[0; 4]);
        }
        self.decode()?;
        self.in_frame = false;
        Ok(())
    }

    /// Where a `PERF_RECORD_FINISHED_ROUND` read now sits among the decompressed records: after
    /// everything compressed before it, of which the decoder still holds back one window once
    /// it has let anything out. `None` before that (the round's end is somewhere in the first
    /// window: the round is left to the next one, which only delays records).
    pub fn round_mark(&self) -> Option<u64> {
        let drained = self.base + self.out.len() as u64;
        (drained > 0).then_some(drained + self.window)
    }

    /// Drops the decompressed bytes before stream offset `keep` (records already consumed).
    pub fn release_before(&mut self, keep: u64) {
        let keep = keep.min(self.walked);
        if keep <= self.base {
            return;
        }
        let n = (keep - self.base) as usize;
        self.out.drain(..n.min(self.out.len()));
        self.base = keep;
        while self.sources.len() > 1 && self.sources[1].0 <= keep {
            self.sources.pop_front();
        }
    }

    /// The bytes at stream offset `at`, to the end of what is decompressed.
    pub fn bytes_at(&self, at: u64) -> Option<&[u8]> {
        let rel = usize::try_from(at.checked_sub(self.base)?).ok()?;
        self.out.get(rel..)
    }

    /// The file offset of the compressed record whose data holds stream offset `at`.
    pub fn source_of(&self, at: u64) -> Option<u64> {
        self.sources
            .iter()
            .rev()
            .find(|&&(s, _)| s <= at)
            .map(|&(_, f)| f)
    }
}

/// The zstd data of a compressed record body (after its 8-byte header), or why there is none.
/// `COMPRESSED2` starts with `u64 data_size` and pads to 8 bytes.
pub fn payload(rtype: u32, body: &[u8], big: bool) -> Result<&[u8], String> {
    if rtype != super::records::RECORD_COMPRESSED2 {
        return Ok(body);
    }
    let size = body
        .get(..8)
        .map(|b| crate::sources::binary::cursor::read_u64(b, big))
        .ok_or("expected the u64 data_size of a PERF_RECORD_COMPRESSED2")?;
    usize::try_from(size)
        .ok()
        .and_then(|n| body.get(8..8usize.checked_add(n)?))
        .ok_or_else(|| {
            format!(
                "a PERF_RECORD_COMPRESSED2 of {} bytes claims {size} bytes of data",
                body.len() + 8
            )
        })
}

/// The most zstd data perf puts in one compressed record (`PERF_SAMPLE_MAX_SIZE` less the
/// COMPRESSED2 header, less one).
const MAX_RECORD_DATA: usize = (1 << 16) - 16 - 1;

/// The zstd pieces of a compressed record's data. A `COMPRESSED2` whose size had wrapped may
/// hold several records perf packed into one push: the first's data, then whole
/// `COMPRESSED2` records (their `data_size` unset, their `header.size` right) to the end.
pub fn parts(rtype: u32, data: &[u8], big: bool) -> Vec<&[u8]> {
    if rtype != super::records::RECORD_COMPRESSED2 || data.len() <= MAX_RECORD_DATA {
        return vec![data];
    }
    let header_at = |q: usize| -> Option<usize> {
        let h = data.get(q..q + 8)?;
        let t = crate::sources::binary::cursor::read_u32(h, big);
        let m = crate::sources::binary::cursor::read_u16(&h[4..], big);
        let s = crate::sources::binary::cursor::read_u16(&h[6..], big) as usize;
        (t == super::records::RECORD_COMPRESSED2 && m == 0 && s >= 16).then_some(s)
    };
    // the chain of sub-records from `q` ends exactly at the end of the data
    let chain = |mut q: usize| -> Option<Vec<(usize, usize)>> {
        let mut v = Vec::new();
        while q < data.len() {
            let s = header_at(q)?;
            v.push((q + 16, q + s));
            q += s;
        }
        (q == data.len()).then_some(v)
    };
    for first in (1..=MAX_RECORD_DATA.min(data.len())).rev() {
        if let Some(rest) = chain(first) {
            let mut out = vec![&data[..first]];
            out.extend(rest.into_iter().map(|(a, b)| &data[a..b]));
            return out;
        }
    }
    vec![data]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zstd stream of `data` as perf writes it: one frame, never ended, cut anywhere.
    fn perf_like_stream(data: &[u8]) -> Vec<u8> {
        // A frame of raw blocks (no compressor here): header with a 1 KB window, then
        // blocks of up to 700 bytes, none marked last.
        let mut v = ZSTD_MAGIC.to_vec();
        v.push(0x00); // no checksum, no dict, no content size, not single segment
        v.push(0x00); // window 1 KB
        for c in data.chunks(700) {
            let h = (c.len() as u32) << 3; // raw block, not last
            v.extend_from_slice(&h.to_le_bytes()[..3]);
            v.extend_from_slice(c);
        }
        v
    }

    #[test]
    fn a_never_ended_frame_cut_anywhere_decompresses_whole() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let z = perf_like_stream(&data);
        for cut in [1usize, 3, 5, 6, 9, 100, 701, 4096] {
            let mut inf = Inflater::default();
            for (k, piece) in z.chunks(cut).enumerate() {
                inf.feed(piece, k as u64).expect("decodes");
                // what came out lags by the window, once anything came out
                let out = inf.out.len() as u64;
                if out > 0 {
                    assert_eq!(inf.round_mark(), Some(out + 1024));
                }
            }
            inf.finish().expect("finishes");
            assert_eq!(inf.out, data, "pieces of {cut}");
        }
    }

    #[test]
    fn consumed_bytes_are_released_and_sources_named() {
        let data: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        let z = perf_like_stream(&data);
        let mut inf = Inflater::default();
        for (k, piece) in z.chunks(1000).enumerate() {
            inf.feed(piece, 100 + k as u64).expect("decodes");
        }
        inf.finish().expect("finishes");
        inf.walked = 3000;
        inf.release_before(2500);
        assert_eq!(inf.base, 2500);
        assert_eq!(inf.bytes_at(2500).map(|b| b[0]), Some(data[2500]));
        assert_eq!(inf.bytes_at(10), None);
        assert!(inf.source_of(4999).is_some_and(|f| f >= 100));
    }

    #[test]
    fn garbage_is_refused_by_name() {
        let mut inf = Inflater::default();
        let e = inf.feed(b"PERFILE2", 0).unwrap_err();
        assert!(e.to_string().contains("50 45 52 46"), "{e}");
        let mut inf = Inflater::default();
        let mut z = ZSTD_MAGIC.to_vec();
        z.extend_from_slice(&[0, 0, 0xff, 0xff, 0xff, 1, 2, 3]);
        assert!(inf.feed(&z, 0).is_err() || inf.finish().is_err());
    }

    #[test]
    fn packed_compressed2_records_split_at_their_headers() {
        let first = vec![7u8; MAX_RECORD_DATA];
        let mut data = first.clone();
        for n in [100usize, 3] {
            data.extend_from_slice(&83u32.to_le_bytes());
            data.extend_from_slice(&0u16.to_le_bytes());
            data.extend_from_slice(&((16 + n) as u16).to_le_bytes());
            data.extend_from_slice(&0xdead_beefu64.to_le_bytes()); // data_size: not set
            data.extend(std::iter::repeat_n(n as u8, n));
        }
        let p = parts(83, &data, false);
        assert_eq!(p.len(), 3);
        assert_eq!(p[0], &first[..]);
        assert_eq!(p[1], &[100u8; 100][..]);
        assert_eq!(p[2], &[3u8; 3][..]);
        assert_eq!(parts(83, &data[..50], false), vec![&data[..50]]);
    }

    #[test]
    fn compressed2_payload_by_data_size() {
        let mut b = 3u64.to_le_bytes().to_vec();
        b.extend_from_slice(b"abc\0\0\0\0\0");
        assert_eq!(payload(83, &b, false), Ok(&b"abc"[..]));
        assert_eq!(payload(81, &b, false), Ok(&b[..]));
        b[0] = 200;
        assert!(payload(83, &b, false).is_err());
    }
}
