//! Compressed captures, recognised by their magic bytes (never by the name) and decompressed
//! as they are read: gzip (flate2, several members in a row too), zstd (ruzstd, frames in a
//! row), xz (xz4rust, streams in a row with their padding: `cat a.xz b.xz`, `xz -T` output). Pure Rust, no C library. What comes out is bounded by the reader's
//! memory check on the decompressed side, never trusted from a header.

use super::feed::{Feed, ReadFeed};
use std::io::{self, BufRead, BufReader, Read};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Gzip,
    Zstd,
    Xz,
}

impl Codec {
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
            Codec::Xz => "xz",
        }
    }
}

/// Bytes a head needs for [`sniff`] to decide.
pub const MAGIC_BYTES: usize = 6;

/// The codec whose magic number starts `head`.
pub fn sniff(head: &[u8]) -> Option<Codec> {
    if head.starts_with(&[0x1f, 0x8b]) {
        Some(Codec::Gzip)
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some(Codec::Zstd)
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Some(Codec::Xz)
    } else {
        None
    }
}

/// The largest xz dictionary a decoder may allocate (xz -9 uses 64 MiB); a header asking for
/// more is refused rather than obeyed.
const XZ_MAX_DICT: usize = 64 << 20;
/// The largest zstd window (what `zstd --long=27` writes; the format's default maximum is 8 MB).
const ZSTD_MAX_WINDOW: u64 = 128 << 20;

/// The decompressed stream of `raw` (compressed with `codec`).
pub fn decoder(codec: Codec, raw: impl Read + Send + 'static) -> io::Result<Box<dyn Feed>> {
    Ok(match codec {
        Codec::Gzip => Box::new(ReadFeed::new(flate2::read::MultiGzDecoder::new(
            BufReader::with_capacity(1 << 16, raw),
        ))),
        Codec::Zstd => Box::new(ReadFeed::new(ZstdFrames::new(raw)?)),
        Codec::Xz => Box::new(ReadFeed::new(XzStreams::new(raw))),
    })
}

/// xz streams one after another (`cat a.xz b.xz`, what `xz --stdout` appends), each followed by
/// its stream padding (NUL bytes, a multiple of four): `xz -d` reads them all, and so does this.
/// (xz4rust's own reader stops at the end of the first stream.)
struct XzStreams<R: Read> {
    dec: Box<xz4rust::XzDecoder<'static>>,
    raw: R,
    buf: Vec<u8>,
    /// `buf[at..len]` is read and not yet decoded.
    at: usize,
    len: usize,
    /// Compressed bytes consumed before `buf[0]`, for the error's offset.
    before: u64,
    /// Between two streams: only padding or the next stream's header may follow.
    between: bool,
    done: bool,
}

impl<R: Read> XzStreams<R> {
    fn new(raw: R) -> XzStreams<R> {
        XzStreams {
            dec: xz4rust::XzDecoder::in_heap_with_alloc_dict_size(1 << 20, XZ_MAX_DICT),
            raw,
            buf: vec![0; 1 << 16],
            at: 0,
            len: 0,
            before: 0,
            between: false,
            done: false,
        }
    }

    /// Refills `buf` once everything in it is decoded; false at the end of the input.
    fn refill(&mut self) -> io::Result<bool> {
        if self.at < self.len {
            return Ok(true);
        }
        self.before += self.len as u64;
        self.at = 0;
        self.len = loop {
            match self.raw.read(&mut self.buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        Ok(self.len > 0)
    }

    fn offset(&self) -> u64 {
        self.before + self.at as u64
    }
}

fn xz_err(at: u64, e: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{e} (compressed byte offset {at})"),
    )
}

impl<R: Read> Read for XzStreams<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if self.done {
                return Ok(0);
            }
            if !self.refill()? {
                if self.between {
                    self.done = true;
                    return Ok(0);
                }
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the xz stream ends early (compressed byte offset {}): the file is cut",
                        self.offset()
                    ),
                ));
            }
            if self.between {
                // stream padding, then another stream or the end
                let pad = self.buf[self.at..self.len]
                    .iter()
                    .take_while(|&&b| b == 0)
                    .count();
                self.at += pad;
                if self.at == self.len {
                    continue;
                }
                self.between = false;
                self.dec.reset();
            }
            let at = self.offset();
            match self.dec.decode(&self.buf[self.at..self.len], out) {
                Ok(xz4rust::XzNextBlockResult::NeedMoreData(used, made)) => {
                    self.at += used;
                    if made > 0 {
                        return Ok(made);
                    }
                }
                Ok(xz4rust::XzNextBlockResult::EndOfStream(used, made)) => {
                    self.at += used;
                    self.between = true;
                    if made > 0 {
                        return Ok(made);
                    }
                }
                Err(e) => return Err(xz_err(at, e)),
            }
        }
    }
}

/// zstd frames one after another (`cat a.zst b.zst`, pzstd) as one stream.
struct ZstdFrames<R: Read> {
    dec: Option<ruzstd::decoding::StreamingDecoder<BufReader<R>, ruzstd::decoding::FrameDecoder>>,
}

fn zstd_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("zstd: {e}"))
}

impl<R: Read> ZstdFrames<R> {
    fn new(raw: R) -> io::Result<ZstdFrames<R>> {
        let mut fd = ruzstd::decoding::FrameDecoder::new();
        fd.set_max_window_size(ZSTD_MAX_WINDOW);
        let dec = ruzstd::decoding::StreamingDecoder::new_with_decoder(
            BufReader::with_capacity(1 << 16, raw),
            fd,
        )
        .map_err(zstd_err)?;
        Ok(ZstdFrames { dec: Some(dec) })
    }
}

impl<R: Read> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(dec) = self.dec.as_mut() else {
                return Ok(0);
            };
            let n = dec.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // this frame is done: another may follow
            let Some(dec) = self.dec.take() else {
                return Ok(0);
            };
            let (mut src, fd) = dec.into_parts();
            if src.fill_buf()?.is_empty() {
                return Ok(0);
            }
            self.dec = Some(
                ruzstd::decoding::StreamingDecoder::new_with_decoder(src, fd).map_err(zstd_err)?,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read_all(mut f: Box<dyn Feed>) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut buf = vec![0; 1000];
        loop {
            match f.fill(&mut buf, std::time::Duration::ZERO)? {
                super::super::feed::Fill::Data(n) => out.extend_from_slice(&buf[..n]),
                super::super::feed::Fill::End => return Ok(out),
                super::super::feed::Fill::Idle => {}
            }
        }
    }

    #[test]
    fn gzip_members_in_a_row_are_one_stream() {
        let mut z = Vec::new();
        for part in [&b"hello "[..], b"world\n"] {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(part).unwrap();
            z.extend(e.finish().unwrap());
        }
        assert_eq!(sniff(&z), Some(Codec::Gzip));
        let d = decoder(Codec::Gzip, std::io::Cursor::new(z)).unwrap();
        assert_eq!(read_all(d).unwrap(), b"hello world\n");
    }

    #[test]
    fn xz_streams_in_a_row_with_padding_are_one_stream() {
        let one = |s: &[u8]| {
            let mut c = std::process::Command::new("xz")
                .args(["-c", "-3"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn();
            let Ok(c) = c.as_mut() else { return None };
            c.stdin.take()?.write_all(s).ok()?;
            let mut out = Vec::new();
            c.stdout.take()?.read_to_end(&mut out).ok()?;
            Some(out)
        };
        let (Some(a), Some(b)) = (one(b"hello "), one(b"world\n")) else {
            eprintln!("no xz tool: skipped");
            return;
        };
        let mut z = a.clone();
        z.extend_from_slice(&[0; 8]);
        z.extend_from_slice(&b);
        let d = decoder(Codec::Xz, std::io::Cursor::new(z.clone())).unwrap();
        assert_eq!(read_all(d).unwrap(), b"hello world\n");
        // cut inside the second stream: the first stream's bytes, then an error naming the cut
        let cut = z.len() - 6;
        let mut d = decoder(Codec::Xz, std::io::Cursor::new(z[..cut].to_vec())).unwrap();
        let mut got = [0; 64];
        let mut n = 0;
        let err = loop {
            match d.fill(&mut got[n..], std::time::Duration::ZERO) {
                Ok(super::super::feed::Fill::Data(k)) => n += k,
                Ok(f) => panic!("{f:?}"),
                Err(e) => break e,
            }
        };
        assert!(got[..n].starts_with(b"hello "), "{:?}", &got[..n]);
        assert!(err.to_string().contains("compressed byte offset"), "{err}");
    }

    #[test]
    fn magic_numbers() {
        assert_eq!(sniff(b"\x28\xb5\x2f\xfd\x04"), Some(Codec::Zstd));
        assert_eq!(sniff(b"\xfd7zXZ\0\0"), Some(Codec::Xz));
        assert_eq!(sniff(b"# tracer: nop"), None);
        assert_eq!(sniff(b"\x1f"), None);
    }

    #[test]
    fn corrupt_streams_are_errors_not_panics() {
        for (codec, bytes) in [
            (Codec::Gzip, &b"\x1f\x8b\x08\x00garbage garbage"[..]),
            (Codec::Zstd, b"\x28\xb5\x2f\xfd\xff\xff\xff\xff\xff"),
            (Codec::Xz, b"\xfd7zXZ\0\0\0\0\0\0\0\0\0\0\0"),
        ] {
            let r = decoder(codec, std::io::Cursor::new(bytes.to_vec())).and_then(read_all);
            assert!(r.is_err(), "{codec:?}: {r:?}");
        }
    }
}
