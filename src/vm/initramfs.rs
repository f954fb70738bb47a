//! The guest's initramfs, written on the fly: this cidscope binary as `/init`, the loader and
//! libraries it links (found from its ELF headers, [`super::elf`]) at the paths the loader
//! looks in, `/dev/console`, and the mount points the agent uses. Nothing else: no shell, no
//! busybox.

use super::cpio::CpioWriter;
use super::elf::{self, Needed, SearchPath};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What was written.
#[derive(Debug, Clone)]
pub struct Built {
    pub path: PathBuf,
    pub bytes: u64,
    /// The interpreter and libraries packed with `/init`.
    pub libs: Vec<Needed>,
    /// Directories of libraries outside the loader's usual ones: the guest needs them in
    /// `LD_LIBRARY_PATH` (there is no ld.so.cache in the guest).
    pub extra_lib_dirs: Vec<String>,
}

/// Directories every glibc loader searches without a cache (the multiarch ones are Debian's).
const LOADER_DIRS: &[&str] = &[
    "/lib",
    "/usr/lib",
    "/lib64",
    "/usr/lib64",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
];

/// Every ancestor directory of `p` (`a/b/c` → `a`, `a/b`), outermost first.
fn ancestors(p: &str) -> Vec<String> {
    let parts: Vec<&str> = p.trim_start_matches('/').split('/').collect();
    (1..parts.len()).map(|k| parts[..k].join("/")).collect()
}

/// Writes the initramfs for `exe` to `out` (gzip-compressed when `gzip`: smaller, but a TCG
/// guest then spends seconds inflating it).
pub fn build(exe: &Path, out: &Path, gzip: bool) -> Result<Built, String> {
    let libs = elf::closure(exe, &SearchPath::host())?;
    let file =
        std::fs::File::create(out).map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
    let sink: Box<dyn Write> = if gzip {
        Box::new(flate2::write::GzEncoder::new(
            std::io::BufWriter::new(file),
            flate2::Compression::fast(),
        ))
    } else {
        Box::new(std::io::BufWriter::with_capacity(1 << 20, file))
    };
    let err = |e: std::io::Error| format!("{}: writing the initramfs: {e}", out.display());
    let mut w = CpioWriter::new(sink);
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    for d in ["dev", "proc", "sys", "tmp", "root"] {
        dirs.insert(d.to_string());
    }
    for n in &libs {
        for a in ancestors(&n.guest_path) {
            dirs.insert(a);
        }
    }
    // BTreeSet order puts every parent before its children
    for d in &dirs {
        w.dir(d, 0o755).map_err(err)?;
    }
    w.char_dev("dev/console", 0o600, 5, 1).map_err(err)?;
    let add = |guest: &str, host: &Path, w: &mut CpioWriter<Box<dyn Write>>| {
        let mut f = std::fs::File::open(host)
            .map_err(|e| format!("{}: cannot read: {e}", host.display()))?;
        let len = f
            .metadata()
            .map_err(|e| format!("{}: {e}", host.display()))?
            .len();
        w.file_from(guest, 0o755, len, &mut f).map_err(err)
    };
    add("init", exe, &mut w)?;
    // one file under two names (the loader is also a library of libc): a symlink to the first
    let mut packed: Vec<(&Path, &str)> = Vec::new();
    for n in &libs {
        match packed.iter().find(|(h, _)| *h == n.host_path.as_path()) {
            Some((_, first)) => w.symlink(&n.guest_path, first).map_err(err)?,
            None => {
                add(&n.guest_path, &n.host_path, &mut w)?;
                packed.push((&n.host_path, &n.guest_path));
            }
        }
    }
    let bytes = w.written;
    let mut inner = w.finish().map_err(err)?;
    inner.flush().map_err(err)?;
    drop(inner);
    let mut extra: Vec<String> = Vec::new();
    for n in &libs {
        let dir = n
            .guest_path
            .rsplit_once('/')
            .map_or("/", |(d, _)| if d.is_empty() { "/" } else { d })
            .to_string();
        if n.guest_path != libs[0].guest_path
            && !LOADER_DIRS.contains(&dir.as_str())
            && !extra.contains(&dir)
        {
            extra.push(dir);
        }
    }
    Ok(Built {
        path: out.to_path_buf(),
        bytes: std::fs::metadata(out).map(|m| m.len()).unwrap_or(bytes),
        libs,
        extra_lib_dirs: extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::cpio::read_archive;

    #[test]
    fn ancestors_outermost_first() {
        assert_eq!(
            ancestors("/lib/x86_64-linux-gnu/libc.so.6"),
            ["lib", "lib/x86_64-linux-gnu"]
        );
        assert!(ancestors("init").is_empty());
    }

    #[test]
    fn packs_a_binary_with_its_loader_and_libraries() {
        let exe = std::env::current_exe().unwrap();
        let dir = std::env::temp_dir().join(format!("cidscope-initrd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for gzip in [false, true] {
            let out = dir.join(if gzip { "i.gz" } else { "i" });
            let b = build(&exe, &out, gzip).unwrap();
            let raw = std::fs::read(&out).unwrap();
            let raw = if gzip {
                assert_eq!(&raw[..2], b"\x1f\x8b");
                let mut v = Vec::new();
                std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&raw[..]), &mut v)
                    .unwrap();
                v
            } else {
                raw
            };
            let entries = read_archive(&raw).unwrap();
            let init = entries.iter().find(|e| e.name == "init").unwrap();
            assert_eq!(
                init.data.len() as u64,
                std::fs::metadata(&exe).unwrap().len()
            );
            assert_eq!(init.mode, 0o100755);
            assert!(
                entries
                    .iter()
                    .any(|e| e.name == "dev/console" && e.rdev == (5, 1))
            );
            for n in &b.libs {
                let name = n.guest_path.trim_start_matches('/');
                let mut e = entries.iter().find(|e| e.name == name).unwrap();
                if e.mode & 0o170000 == 0o120000 {
                    // a second name of a file packed once: the link points at it
                    let target = String::from_utf8(e.data.clone()).unwrap();
                    let t = target.trim_start_matches('/');
                    e = entries.iter().find(|x| x.name == t).unwrap();
                }
                assert!(elf::is_x86_64_elf(&e.data), "{name}");
                // its directory comes earlier in the archive
                let dpos = entries
                    .iter()
                    .position(|e| name.starts_with(&format!("{}/", e.name)));
                let fpos = entries.iter().position(|e| e.name == name);
                assert!(dpos.is_some() && dpos < fpos, "{name}");
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
