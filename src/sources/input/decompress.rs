//! Compressed captures, recognised by their magic bytes (never by the name) and decompressed
//! as they are read: gzip (flate2, several members in a row too), zstd (ruzstd, frames in a
//! row), xz (xz4rust). Pure Rust, no C library. What comes out is bounded by the reader's
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
        Codec::Xz => {
            let dec = xz4rust::XzDecoder::in_heap_with_alloc_dict_size(1 << 20, XZ_MAX_DICT);
            Box::new(ReadFeed::new(
                xz4rust::XzReader::new_with_buffer_size_and_decoder(
                    raw,
                    std::num::NonZeroUsize::new(1 << 16).unwrap_or(std::num::NonZeroUsize::MIN),
                    dec,
                ),
            ))
        }
    })
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
