//! Decompression of trace.dat version-7 sections: trace-cmd writes zstd frames (`ZSTD_compress`)
//! or zlib streams (`compress2`), named in the file header. zstd through libzstd (built into the
//! binary by zstd-sys: no library needed at run time), 4x faster than ruzstd here, and a
//! trace.dat's load is mostly this; zlib through flate2 with miniz_oxide.

use std::cell::RefCell;
use std::io::Read;

thread_local! {
    /// One zstd context per thread, reused across chunks (it keeps its window buffers); `None`
    /// when libzstd could not make one (out of memory).
    static ZSTD: RefCell<Option<zstd::bulk::Decompressor<'static>>> = RefCell::new(zstd::bulk::Decompressor::new().ok());
}

/// Why a section does not decompress.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompressError {
    #[error("expected the compression \"none\", \"zstd\" or \"zlib\", found {0:?}")]
    UnknownCodec(String),
    #[error(
        "expected a decompressed size of at most {limit} bytes for {input} compressed bytes, found {size}"
    )]
    Oversized {
        limit: usize,
        input: usize,
        size: usize,
    },
    #[error("zstd data does not decompress: {0}")]
    Zstd(String),
    #[error("zlib data does not decompress: {0}")]
    Zlib(String),
    #[error("expected {size} bytes after decompression, found {found}")]
    Short { size: usize, found: usize },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    None,
    Zstd,
    Zlib,
}

impl Codec {
    pub fn from_name(name: &[u8]) -> Result<Codec, CompressError> {
        match name {
            b"none" | b"" => Ok(Codec::None),
            b"zstd" => Ok(Codec::Zstd),
            b"zlib" => Ok(Codec::Zlib),
            other => Err(CompressError::UnknownCodec(
                String::from_utf8_lossy(other).into_owned(),
            )),
        }
    }
}

/// Decompresses `input` into exactly `size` bytes.
pub fn decompress(codec: Codec, input: &[u8], size: usize) -> Result<Vec<u8>, CompressError> {
    let mut out = Vec::new();
    decompress_into(codec, input, size, &mut out)?;
    Ok(out)
}

/// The largest expansion a compressed chunk may claim: trace data and kallsyms compress 4–20×;
/// a size far beyond that is a corrupt header, refused before it is allocated.
const MAX_RATIO: usize = 512;

/// Decompresses `input` into `out` (resized to exactly `size` bytes, its buffer reused).
pub fn decompress_into(
    codec: Codec,
    input: &[u8],
    size: usize,
    out: &mut Vec<u8>,
) -> Result<(), CompressError> {
    let limit = input.len().saturating_mul(MAX_RATIO).max(1 << 20);
    if codec != Codec::None && size > limit {
        return Err(CompressError::Oversized {
            limit,
            input: input.len(),
            size,
        });
    }
    out.resize(size, 0);
    let n = match codec {
        Codec::None => {
            let n = input.len().min(size);
            out[..n].copy_from_slice(&input[..n]);
            n
        }
        Codec::Zstd => ZSTD.with(|d| match d.borrow_mut().as_mut() {
            Some(d) => d
                .decompress_to_buffer(input, &mut out[..])
                .map_err(|e| CompressError::Zstd(e.to_string())),
            None => Err(CompressError::Zstd(
                "no decompression context (out of memory)".into(),
            )),
        })?,
        Codec::Zlib => {
            let mut d = flate2::read::ZlibDecoder::new(input);
            let mut n = 0;
            loop {
                match d.read(&mut out[n..]) {
                    Ok(0) => break,
                    Ok(k) => n += k,
                    Err(e) => return Err(CompressError::Zlib(e.to_string())),
                }
                if n == size {
                    break;
                }
            }
            n
        }
    };
    if n != size {
        return Err(CompressError::Short { size, found: n });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn zlib_round_trip_and_errors() {
        let data = b"hello hello hello hello".repeat(10);
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&data).unwrap();
        let z = e.finish().unwrap();
        assert_eq!(decompress(Codec::Zlib, &z, data.len()).unwrap(), data);
        assert!(decompress(Codec::Zlib, &z, data.len() + 1).is_err());
        assert!(decompress(Codec::Zlib, &z[..z.len() / 2], data.len()).is_err());
        assert!(decompress(Codec::Zstd, &z, data.len()).is_err());
        assert_eq!(Codec::from_name(b"zstd"), Ok(Codec::Zstd));
        assert!(Codec::from_name(b"lz4").is_err());
    }
}
