//! What a dynamically linked ELF needs at run time, read from the file itself (no `ldd`):
//! the program interpreter (`PT_INTERP`) and the libraries of `DT_NEEDED`, found the way the
//! dynamic loader finds them (`DT_RPATH` when there is no `DT_RUNPATH`, `LD_LIBRARY_PATH`,
//! `DT_RUNPATH`, `/etc/ld.so.conf`, the system directories), then their own needs, to closure.
//!
//! Only 64-bit little-endian x86-64 objects are read: the guest is `qemu-system-x86_64`.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const DT_NULL: i64 = 0;
const DT_NEEDED: i64 = 1;
const DT_STRTAB: i64 = 5;
const DT_STRSZ: i64 = 10;
const DT_RPATH: i64 = 15;
const DT_RUNPATH: i64 = 29;
const EM_X86_64: u16 = 62;

/// The dynamic-linking facts of one object.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Deps {
    /// `PT_INTERP`: the loader the kernel maps (absent in a static executable).
    pub interp: Option<String>,
    /// `DT_NEEDED`, in order.
    pub needed: Vec<String>,
    pub rpath: Vec<String>,
    pub runpath: Vec<String>,
}

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

struct Phdr {
    kind: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
}

/// The NUL-terminated string at `o`.
fn cstr(b: &[u8], o: usize) -> Option<String> {
    let rest = b.get(o..)?;
    let end = rest.iter().position(|&c| c == 0)?;
    Some(String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// Whether `b` starts like an x86-64 ELF64 object (what the loader would accept).
pub fn is_x86_64_elf(b: &[u8]) -> bool {
    b.starts_with(b"\x7fELF")
        && b.get(4) == Some(&2)
        && b.get(5) == Some(&1)
        && u16_at(b, 18) == Some(EM_X86_64)
}

/// Reads the interpreter and dynamic section of an ELF64 x86-64 object. The error says what was
/// expected where.
pub fn parse(b: &[u8]) -> Result<Deps, String> {
    if !b.starts_with(b"\x7fELF") {
        return Err("not an ELF file (no \\x7fELF magic at offset 0)".into());
    }
    if b.get(4) != Some(&2) || b.get(5) != Some(&1) {
        return Err("expected a 64-bit little-endian ELF (offsets 4-5)".into());
    }
    if u16_at(b, 18) != Some(EM_X86_64) {
        return Err(format!(
            "expected an x86-64 ELF (e_machine 62 at offset 18), found {:?}",
            u16_at(b, 18)
        ));
    }
    let bad = |what: &str| format!("truncated ELF: {what} runs past the end of the file");
    let phoff = u64_at(b, 32).ok_or_else(|| bad("e_phoff"))? as usize;
    let phentsize = u16_at(b, 54).ok_or_else(|| bad("e_phentsize"))? as usize;
    let phnum = u16_at(b, 56).ok_or_else(|| bad("e_phnum"))? as usize;
    if phentsize < 56 {
        return Err(format!(
            "e_phentsize {phentsize} at offset 54: expected at least 56"
        ));
    }
    let mut phdrs = Vec::with_capacity(phnum);
    for i in 0..phnum {
        let o = phoff + i * phentsize;
        let p = Phdr {
            kind: u32_at(b, o).ok_or_else(|| bad("a program header"))?,
            offset: u64_at(b, o + 8).ok_or_else(|| bad("a program header"))?,
            vaddr: u64_at(b, o + 16).ok_or_else(|| bad("a program header"))?,
            filesz: u64_at(b, o + 32).ok_or_else(|| bad("a program header"))?,
        };
        phdrs.push(p);
    }
    let mut deps = Deps::default();
    if let Some(p) = phdrs.iter().find(|p| p.kind == PT_INTERP) {
        deps.interp = Some(cstr(b, p.offset as usize).ok_or_else(|| bad("PT_INTERP"))?);
    }
    let Some(dynamic) = phdrs.iter().find(|p| p.kind == PT_DYNAMIC) else {
        return Ok(deps); // static
    };
    // virtual address → file offset through the PT_LOAD segment that maps it
    let to_off = |va: u64| -> Option<usize> {
        phdrs
            .iter()
            .filter(|p| p.kind == PT_LOAD)
            .find(|p| va >= p.vaddr && va < p.vaddr + p.filesz)
            .map(|p| (p.offset + (va - p.vaddr)) as usize)
    };
    let mut entries = Vec::new();
    let (mut strtab, mut strsz) = (None, 0u64);
    let n = dynamic.filesz as usize / 16;
    for i in 0..n {
        let o = dynamic.offset as usize + 16 * i;
        let tag = u64_at(b, o).ok_or_else(|| bad("the dynamic section"))? as i64;
        let val = u64_at(b, o + 8).ok_or_else(|| bad("the dynamic section"))?;
        match tag {
            DT_NULL => break,
            DT_STRTAB => strtab = Some(val),
            DT_STRSZ => strsz = val,
            DT_NEEDED | DT_RPATH | DT_RUNPATH => entries.push((tag, val)),
            _ => {}
        }
    }
    if entries.is_empty() {
        return Ok(deps);
    }
    let strtab = strtab.ok_or("a dynamic section with DT_NEEDED but no DT_STRTAB")?;
    let base = to_off(strtab)
        .ok_or_else(|| format!("DT_STRTAB {strtab:#x} lies in no PT_LOAD segment of the file"))?;
    for (tag, val) in entries {
        if strsz > 0 && val >= strsz {
            return Err(format!(
                "dynamic string offset {val} is past DT_STRSZ {strsz}"
            ));
        }
        let s = cstr(b, base + val as usize).ok_or_else(|| bad("the dynamic string table"))?;
        match tag {
            DT_NEEDED => deps.needed.push(s),
            DT_RPATH => deps.rpath.extend(s.split(':').map(String::from)),
            _ => deps.runpath.extend(s.split(':').map(String::from)),
        }
    }
    Ok(deps)
}

/// A file the guest needs: where the loader will look for it, and where it is on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needed {
    pub guest_path: String,
    pub host_path: PathBuf,
}

/// Where libraries are searched after the object's own paths.
#[derive(Debug, Clone, Default)]
pub struct SearchPath {
    /// `LD_LIBRARY_PATH` of this process (the loader that started us used it too).
    pub ld_library_path: Vec<String>,
    /// Directories of `/etc/ld.so.conf` and what it includes.
    pub conf: Vec<String>,
    /// The loader's built-in directories.
    pub system: Vec<String>,
}

/// glibc's and musl's built-in directories on x86-64 (Debian's multiarch ones first).
pub const SYSTEM_DIRS: &[&str] = &[
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
    "/usr/local/lib",
];

impl SearchPath {
    /// This machine's: `LD_LIBRARY_PATH`, `/etc/ld.so.conf`, the system directories.
    pub fn host() -> SearchPath {
        let ld_library_path = std::env::var("LD_LIBRARY_PATH")
            .map(|v| {
                v.split(':')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        let mut conf = Vec::new();
        read_ld_so_conf(Path::new("/etc/ld.so.conf"), &mut conf, 0);
        SearchPath {
            ld_library_path,
            conf,
            system: SYSTEM_DIRS.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// `/etc/ld.so.conf`: one directory per line, `include GLOB` lines (a `*` in the last part).
fn read_ld_so_conf(path: &Path, out: &mut Vec<String>, depth: u32) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(pat) = line.strip_prefix("include").map(str::trim) {
            if depth > 4 {
                continue;
            }
            let pat = if pat.starts_with('/') {
                PathBuf::from(pat)
            } else {
                path.parent().unwrap_or(Path::new("/")).join(pat)
            };
            for f in glob_last(&pat) {
                read_ld_so_conf(&f, out, depth + 1);
            }
        } else if line.starts_with('/') && !out.iter().any(|d| d == line) {
            out.push(line.to_string());
        }
    }
}

/// Files matching a pattern whose last component may hold one `*` (what ld.so.conf uses).
fn glob_last(pat: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (pat.parent(), pat.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    let Some((pre, post)) = name.split_once('*') else {
        return vec![pat.to_path_buf()];
    };
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.len() >= pre.len() + post.len() && n.starts_with(pre) && n.ends_with(post)
                })
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `$ORIGIN` and `${ORIGIN}` replaced by the directory of the object.
fn expand_origin(p: &str, origin: &Path) -> String {
    let o = origin.to_string_lossy();
    p.replace("${ORIGIN}", &o).replace("$ORIGIN", &o)
}

/// Reads a file, with the path in the error.
fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))
}

/// The interpreter and every library `exe` needs, to closure, in the order found. A library
/// that cannot be found is an error naming it and who needs it.
pub fn closure(exe: &Path, search: &SearchPath) -> Result<Vec<Needed>, String> {
    let data = read(exe)?;
    let top = parse(&data).map_err(|e| format!("{}: {e}", exe.display()))?;
    let mut out: Vec<Needed> = Vec::new();
    if let Some(interp) = &top.interp {
        let host = std::fs::canonicalize(interp).map_err(|e| {
            format!(
                "{}: its interpreter {interp} is missing here: {e}",
                exe.display()
            )
        })?;
        out.push(Needed {
            guest_path: interp.clone(),
            host_path: host,
        });
    }
    let mut seen: Vec<String> = Vec::new();
    let mut queue: VecDeque<(String, PathBuf, Deps)> = VecDeque::new();
    queue.push_back((exe.display().to_string(), exe.to_path_buf(), top));
    while let Some((who, path, deps)) = queue.pop_front() {
        let origin = std::fs::canonicalize(&path)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| PathBuf::from("/"));
        let mut dirs: Vec<String> = Vec::new();
        if deps.runpath.is_empty() {
            dirs.extend(deps.rpath.iter().map(|d| expand_origin(d, &origin)));
        }
        dirs.extend(search.ld_library_path.iter().cloned());
        dirs.extend(deps.runpath.iter().map(|d| expand_origin(d, &origin)));
        dirs.extend(search.conf.iter().cloned());
        dirs.extend(search.system.iter().cloned());
        for name in &deps.needed {
            if seen.contains(name) {
                continue;
            }
            seen.push(name.clone());
            let found = if name.contains('/') {
                let p = PathBuf::from(expand_origin(name, &origin));
                std::fs::read(&p).ok().map(|b| (p, b))
            } else {
                dirs.iter()
                    .filter(|d| !d.is_empty())
                    .map(|d| Path::new(d).join(name))
                    .find_map(|p| {
                        let b = std::fs::read(&p).ok()?;
                        // a 32-bit library of the same name in /lib does not count
                        is_x86_64_elf(&b).then_some((p, b))
                    })
            };
            let Some((p, bytes)) = found else {
                return Err(format!(
                    "{who} needs {name}, which is in none of {}",
                    dirs.join(":")
                ));
            };
            let d = parse(&bytes).map_err(|e| format!("{}: {e}", p.display()))?;
            let host = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
            // the interpreter may be named again as a library (libc needs ld-linux)
            let guest_path = p.display().to_string();
            if !out.iter().any(|n| n.guest_path == guest_path) {
                out.push(Needed {
                    guest_path,
                    host_path: host,
                });
            }
            queue.push_back((p.display().to_string(), p, d));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 with PT_INTERP, one PT_LOAD and PT_DYNAMIC: the layout `parse` reads.
    fn tiny_elf(interp: Option<&str>, needed: &[&str], runpath: Option<&str>) -> Vec<u8> {
        let mut strtab = vec![0u8];
        let mut offs = Vec::new();
        for n in needed {
            offs.push((DT_NEEDED, strtab.len() as u64));
            strtab.extend_from_slice(n.as_bytes());
            strtab.push(0);
        }
        if let Some(r) = runpath {
            offs.push((DT_RUNPATH, strtab.len() as u64));
            strtab.extend_from_slice(r.as_bytes());
            strtab.push(0);
        }
        let phnum = 3u16;
        let ph_off = 64usize;
        let interp_off = ph_off + 56 * phnum as usize;
        let interp_bytes: Vec<u8> = interp
            .map(|s| {
                let mut v = s.as_bytes().to_vec();
                v.push(0);
                v
            })
            .unwrap_or_default();
        let str_off = interp_off + interp_bytes.len();
        let dyn_off = (str_off + strtab.len()).div_ceil(8) * 8;
        let mut dynamic = Vec::new();
        let vbase = 0x400000u64;
        for (t, v) in &offs {
            dynamic.extend_from_slice(&t.to_le_bytes());
            dynamic.extend_from_slice(&v.to_le_bytes());
        }
        for (t, v) in [
            (DT_STRTAB, vbase + str_off as u64),
            (DT_STRSZ, strtab.len() as u64),
            (DT_NULL, 0),
        ] {
            dynamic.extend_from_slice(&t.to_le_bytes());
            dynamic.extend_from_slice(&v.to_le_bytes());
        }
        let total = dyn_off + dynamic.len();
        let mut b = vec![0u8; total];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[6] = 1;
        b[18..20].copy_from_slice(&EM_X86_64.to_le_bytes());
        b[32..40].copy_from_slice(&(ph_off as u64).to_le_bytes());
        b[54..56].copy_from_slice(&56u16.to_le_bytes());
        b[56..58].copy_from_slice(&phnum.to_le_bytes());
        let mut ph = |i: usize, kind: u32, off: u64, va: u64, sz: u64| {
            let o = ph_off + 56 * i;
            b[o..o + 4].copy_from_slice(&kind.to_le_bytes());
            b[o + 8..o + 16].copy_from_slice(&off.to_le_bytes());
            b[o + 16..o + 24].copy_from_slice(&va.to_le_bytes());
            b[o + 32..o + 40].copy_from_slice(&sz.to_le_bytes());
        };
        // with no interpreter the PT_INTERP slot is a PT_NULL (kind 0)
        let ik = if interp.is_some() { PT_INTERP } else { 0 };
        ph(
            0,
            ik,
            interp_off as u64,
            vbase + interp_off as u64,
            interp_bytes.len() as u64,
        );
        ph(1, PT_LOAD, 0, vbase, total as u64);
        ph(
            2,
            PT_DYNAMIC,
            dyn_off as u64,
            vbase + dyn_off as u64,
            dynamic.len() as u64,
        );
        b[interp_off..interp_off + interp_bytes.len()].copy_from_slice(&interp_bytes);
        b[str_off..str_off + strtab.len()].copy_from_slice(&strtab);
        b[dyn_off..].copy_from_slice(&dynamic);
        b
    }

    #[test]
    fn reads_interp_needed_and_runpath() {
        let b = tiny_elf(
            Some("/lib64/ld-linux-x86-64.so.2"),
            &["libgcc_s.so.1", "libc.so.6"],
            Some("$ORIGIN/../lib:/opt/x"),
        );
        let d = parse(&b).unwrap();
        assert_eq!(d.interp.as_deref(), Some("/lib64/ld-linux-x86-64.so.2"));
        assert_eq!(d.needed, ["libgcc_s.so.1", "libc.so.6"]);
        assert_eq!(d.runpath, ["$ORIGIN/../lib", "/opt/x"]);
        assert!(d.rpath.is_empty());
        let s = parse(&tiny_elf(None, &[], None)).unwrap();
        assert_eq!(s, Deps::default());
    }

    #[test]
    fn errors_name_what_was_expected() {
        assert!(parse(b"hello").unwrap_err().contains("not an ELF"));
        let mut b = tiny_elf(None, &["a"], None);
        b[4] = 1;
        assert!(parse(&b).unwrap_err().contains("64-bit"));
        let mut b = tiny_elf(None, &["a"], None);
        b[18] = 3;
        assert!(parse(&b).unwrap_err().contains("x86-64"));
        let b = tiny_elf(None, &["a"], None);
        assert!(parse(&b[..100]).unwrap_err().contains("truncated"));
    }

    #[test]
    fn resolves_through_runpath_and_origin_then_the_needs_of_needs() {
        let dir = std::env::temp_dir().join(format!("cidscope-elf-{}", std::process::id()));
        let lib = dir.join("lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(
            dir.join("bin/app"),
            tiny_elf(None, &["liba.so"], Some("$ORIGIN/../lib")),
        )
        .unwrap();
        std::fs::write(
            lib.join("liba.so"),
            tiny_elf(None, &["libb.so", "liba.so"], None),
        )
        .unwrap();
        // libb is found through LD_LIBRARY_PATH-like search dirs, not liba's (absent) runpath
        let other = dir.join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("libb.so"), tiny_elf(None, &[], None)).unwrap();
        // a 32-bit file of the same name earlier in the path is skipped
        let bad = dir.join("bad");
        std::fs::create_dir_all(&bad).unwrap();
        let mut b32 = tiny_elf(None, &[], None);
        b32[4] = 1;
        std::fs::write(bad.join("libb.so"), b32).unwrap();
        let search = SearchPath {
            ld_library_path: vec![bad.display().to_string(), other.display().to_string()],
            ..Default::default()
        };
        let got = closure(&dir.join("bin/app"), &search).unwrap();
        let names: Vec<String> = got
            .iter()
            .map(|n| n.guest_path.rsplit('/').next().unwrap().to_string())
            .collect();
        assert_eq!(names, ["liba.so", "libb.so"]);
        assert!(got[1].guest_path.starts_with(&other.display().to_string()));
        // a missing library names who needs it
        std::fs::write(dir.join("bin/app2"), tiny_elf(None, &["libnope.so"], None)).unwrap();
        let e = closure(&dir.join("bin/app2"), &search).unwrap_err();
        assert!(e.contains("needs libnope.so"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn this_test_binary_resolves_on_this_machine() {
        // the loader and libc of the running test binary are found without ldd
        let exe = std::env::current_exe().unwrap();
        let got = closure(&exe, &SearchPath::host()).unwrap();
        let d = parse(&std::fs::read(&exe).unwrap()).unwrap();
        if let Some(interp) = d.interp {
            assert_eq!(got[0].guest_path, interp);
            assert!(
                got.iter().any(|n| n.guest_path.ends_with("/libc.so.6")),
                "{got:?}"
            );
        }
        for n in &got {
            assert!(n.host_path.is_file(), "{n:?}");
        }
    }
}
