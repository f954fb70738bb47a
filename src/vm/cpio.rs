//! A cpio "newc" (SVR4, no CRC) archive writer: the format the kernel unpacks as an initramfs
//! (`Documentation/driver-api/early-userspace/buffer-format.rst`).
//!
//! Each entry is a 110-byte ASCII header (`070701` and thirteen 8-digit hex fields), the
//! NUL-terminated name padded to a multiple of 4 bytes (counting the header), then the data
//! padded to 4. The archive ends with an entry named `TRAILER!!!`. Device nodes are only
//! headers, so writing one needs no privileges.

use std::io::{self, Read, Write};

const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;
const S_IFCHR: u32 = 0o020000;

/// Writes entries in the order given; directories must come before what they hold.
pub struct CpioWriter<W: Write> {
    w: W,
    ino: u32,
    /// Bytes written so far (for the padding and for callers that report sizes).
    pub written: u64,
}

impl<W: Write> CpioWriter<W> {
    pub fn new(w: W) -> Self {
        CpioWriter {
            w,
            ino: 0,
            written: 0,
        }
    }

    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.w.write_all(b)?;
        self.written += b.len() as u64;
        Ok(())
    }

    fn pad(&mut self) -> io::Result<()> {
        let n = (4 - (self.written % 4) as usize) % 4;
        self.put(&[0u8; 3][..n])
    }

    fn header(&mut self, name: &str, mode: u32, size: u64, rdev: (u32, u32)) -> io::Result<()> {
        let name = name.trim_start_matches('/');
        if name.is_empty() || name.as_bytes().contains(&0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cpio: bad entry name {name:?}"),
            ));
        }
        let size = u32::try_from(size).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cpio: {name} is larger than 4 GiB (newc's limit)"),
            )
        })?;
        self.ino += 1;
        let nlink = if mode & S_IFDIR != 0 { 2 } else { 1 };
        let fields = [
            self.ino,
            mode,
            0, // uid
            0, // gid
            nlink,
            0, // mtime: fixed, so the same inputs give the same archive
            size,
            0, // devmajor
            0, // devminor
            rdev.0,
            rdev.1,
            name.len() as u32 + 1,
            0, // check (newc has none)
        ];
        let mut h = String::with_capacity(110);
        h.push_str("070701");
        for f in fields {
            h.push_str(&format!("{f:08x}"));
        }
        self.put(h.as_bytes())?;
        self.put(name.as_bytes())?;
        self.put(&[0])?;
        self.pad()
    }

    /// A directory (`mode` is the permission bits, e.g. 0o755).
    pub fn dir(&mut self, name: &str, mode: u32) -> io::Result<()> {
        self.header(name, S_IFDIR | (mode & 0o7777), 0, (0, 0))
    }

    /// A regular file with the given contents.
    pub fn file(&mut self, name: &str, mode: u32, data: &[u8]) -> io::Result<()> {
        self.header(name, S_IFREG | (mode & 0o7777), data.len() as u64, (0, 0))?;
        self.put(data)?;
        self.pad()
    }

    /// A regular file of `len` bytes read from `r` (which must yield exactly `len`).
    pub fn file_from(
        &mut self,
        name: &str,
        mode: u32,
        len: u64,
        r: &mut dyn Read,
    ) -> io::Result<()> {
        self.header(name, S_IFREG | (mode & 0o7777), len, (0, 0))?;
        let mut limited = r.take(len);
        let n = io::copy(&mut limited, &mut self.w)?;
        self.written += n;
        if n != len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "cpio: {name}: expected {len} bytes, read {n} (file changed while packing?)"
                ),
            ));
        }
        self.pad()
    }

    /// A symbolic link to `target`.
    pub fn symlink(&mut self, name: &str, target: &str) -> io::Result<()> {
        self.header(name, S_IFLNK | 0o777, target.len() as u64, (0, 0))?;
        self.put(target.as_bytes())?;
        self.pad()
    }

    /// A character device node (e.g. `/dev/console`, 5:1).
    pub fn char_dev(&mut self, name: &str, mode: u32, major: u32, minor: u32) -> io::Result<()> {
        self.header(name, S_IFCHR | (mode & 0o7777), 0, (major, minor))
    }

    /// Writes the trailer and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        // The trailer: all fields zero but nlink 1 and the name size.
        let mut h = String::with_capacity(110);
        h.push_str("070701");
        for f in [0u32, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 11, 0] {
            h.push_str(&format!("{f:08x}"));
        }
        self.put(h.as_bytes())?;
        self.put(b"TRAILER!!!\0")?;
        self.pad()?;
        self.w.flush()?;
        Ok(self.w)
    }
}

/// One entry read back from a newc archive (tests and `cidscope vm` self-checks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub mode: u32,
    pub rdev: (u32, u32),
    pub data: Vec<u8>,
}

/// Reads a newc archive back into its entries (without the trailer). The error names the byte
/// offset and what was expected there.
pub fn read_archive(mut b: &[u8]) -> Result<Vec<Entry>, String> {
    let start_len = b.len();
    let mut out = Vec::new();
    loop {
        let off = start_len - b.len();
        if b.len() < 110 {
            return Err(format!(
                "offset {off}: expected a 110-byte header, found {} bytes",
                b.len()
            ));
        }
        if &b[..6] != b"070701" {
            return Err(format!("offset {off}: expected the magic 070701"));
        }
        let field = |i: usize| -> Result<u32, String> {
            let s = std::str::from_utf8(&b[6 + 8 * i..14 + 8 * i])
                .map_err(|_| format!("offset {off}: field {i} is not ASCII"))?;
            u32::from_str_radix(s, 16).map_err(|_| format!("offset {off}: field {i} is not hex"))
        };
        let mode = field(1)?;
        let size = field(6)? as usize;
        let rdev = (field(9)?, field(10)?);
        let namesize = field(11)? as usize;
        let name_end = 110 + namesize;
        let data_start = name_end.div_ceil(4) * 4;
        if namesize == 0 || b.len() < data_start {
            return Err(format!("offset {off}: entry name runs past the end"));
        }
        let name = String::from_utf8_lossy(&b[110..name_end - 1]).into_owned();
        let data_end = data_start + size;
        if b.len() < data_end {
            return Err(format!("offset {off}: {name}: data runs past the end"));
        }
        let data = b[data_start..data_end].to_vec();
        let next = data_end.div_ceil(4) * 4;
        // (the padding is relative to the archive start; every entry starts aligned)
        if name == "TRAILER!!!" {
            return Ok(out);
        }
        out.push(Entry {
            name,
            mode,
            rdev,
            data,
        });
        b = &b[next.min(b.len())..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_entries_the_kernel_format_describes() {
        let mut w = CpioWriter::new(Vec::new());
        w.dir("dev", 0o755).unwrap();
        w.char_dev("dev/console", 0o600, 5, 1).unwrap();
        w.file("/init", 0o755, b"#!hello").unwrap();
        w.symlink("lib64", "lib").unwrap();
        let data = vec![7u8; 5];
        w.file_from("lib/x", 0o644, 5, &mut &data[..]).unwrap();
        let bytes = w.finish().unwrap();
        assert_eq!(bytes.len() % 4, 0);
        assert_eq!(&bytes[..6], b"070701");
        // first header: ino 1, directory mode, nlink 2, name "dev\0" (size 4)
        let h = std::str::from_utf8(&bytes[..110]).unwrap();
        assert_eq!(&h[6..14], "00000001");
        assert_eq!(&h[14..22], "000041ed");
        assert_eq!(&h[38..46], "00000002");
        assert_eq!(&h[94..102], "00000004");
        let e = read_archive(&bytes).unwrap();
        let names: Vec<&str> = e.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["dev", "dev/console", "init", "lib64", "lib/x"]);
        assert_eq!(e[1].mode, 0o020600);
        assert_eq!(e[1].rdev, (5, 1));
        assert_eq!(e[2].data, b"#!hello");
        assert_eq!(e[2].mode, 0o100755);
        assert_eq!(e[3].mode & 0o170000, 0o120000);
        assert_eq!(e[3].data, b"lib");
        assert_eq!(e[4].data, data);
        // the trailer is the last entry
        let tail = String::from_utf8_lossy(&bytes[bytes.len() - 124..]).into_owned();
        assert!(tail.contains("TRAILER!!!"), "{tail}");
    }

    #[test]
    fn every_entry_starts_on_a_four_byte_boundary() {
        // names and data of every length mod 4
        let mut w = CpioWriter::new(Vec::new());
        for n in 1..9 {
            let name = "f".repeat(n);
            w.file(&name, 0o644, &vec![b'x'; n]).unwrap();
        }
        let bytes = w.finish().unwrap();
        let mut starts = Vec::new();
        let mut i = 0;
        while let Some(p) = memchr::memmem::find(&bytes[i..], b"070701") {
            starts.push(i + p);
            i += p + 6;
        }
        assert_eq!(starts.len(), 9);
        assert!(starts.iter().all(|s| s % 4 == 0), "{starts:?}");
        let e = read_archive(&bytes).unwrap();
        assert_eq!(e.len(), 8);
        for (k, e) in e.iter().enumerate() {
            assert_eq!(e.data.len(), k + 1);
        }
    }

    #[test]
    fn refuses_what_newc_cannot_hold() {
        let mut w = CpioWriter::new(Vec::new());
        assert!(w.file("", 0o644, b"").is_err());
        assert!(w.file("a\0b", 0o644, b"").is_err());
        let short = [0u8; 3];
        let e = w
            .file_from("short", 0o644, 10, &mut &short[..])
            .unwrap_err();
        assert!(e.to_string().contains("expected 10 bytes, read 3"), "{e}");
        assert!(
            read_archive(b"070701")
                .unwrap_err()
                .contains("110-byte header")
        );
        assert!(read_archive(&[b'x'; 120]).unwrap_err().contains("magic"));
    }
}
