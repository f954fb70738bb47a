//! The metadata blocks of the "tracing data" layout, shared by trace.dat (version 6 header,
//! version 7 sections) and perf.data (its `HEADER_TRACING_DATA` section is the same layout, made
//! by perf's copy of the trace-cmd writer):
//!
//! * initial format: magic `\x17\x08\x44tracing`, version string, endianness byte, long size,
//!   page size;
//! * header info: `header_page` and `header_event` format text;
//! * ftrace event formats (`u32` count, each `u64` size + text);
//! * event formats (`u32` systems, each: name, `u32` count, each `u64` size + text);
//! * kallsyms (`u32` size + text), printk formats (`u32` size + text);
//! * saved cmdlines (`u64` size + text `PID COMM\n`).

use crate::sources::binary::cursor::{BinResult, Cursor};
use crate::sources::tracefs::format::{self, EventFormat};
use rustc_hash::FxHashMap;

pub const MAGIC: &[u8] = b"\x17\x08\x44tracing";

/// The initial format block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Initial {
    pub version: String,
    pub big_endian: bool,
    pub long_size: u8,
    pub page_size: u32,
}

/// Reads magic, version, endianness, long size and page size.
pub fn read_initial(c: &mut Cursor) -> BinResult<Initial> {
    c.tag(MAGIC, "the tracing-data magic")?;
    let at = c.pos();
    let version = c.cstr("the file version string")?;
    if version.is_empty() || version.len() > 8 {
        c.set_pos(at);
        return Err(c.error(format!(
            "expected a version string like \"6\" or \"0.6\", found {:?}",
            String::from_utf8_lossy(&version[..version.len().min(16)])
        )));
    }
    let endian = c.u8("the endianness byte")?;
    if endian > 1 {
        return Err(c.error(format!(
            "expected the endianness byte 0 (little) or 1 (big), found {endian}"
        )));
    }
    c.big_endian = endian == 1;
    let long_size = c.u8("the long size")?;
    if long_size != 4 && long_size != 8 {
        return Err(c.error(format!("expected a long size of 4 or 8, found {long_size}")));
    }
    let page_size = c.u32("the page size")?;
    if !(1024..=(1 << 20)).contains(&page_size) {
        return Err(c.error(format!(
            "expected a page size between 1 KiB and 1 MiB, found {page_size}"
        )));
    }
    Ok(Initial {
        version: String::from_utf8_lossy(version).into_owned(),
        big_endian: endian == 1,
        long_size,
        page_size,
    })
}

/// Layout of a ring-buffer page, from `header_page`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageHeader {
    /// Size of the `commit` field (the kernel's long).
    pub commit_size: usize,
    /// Where the event data starts in a page.
    pub data_offset: usize,
    /// The page's data bytes, as the kernel's `header_page` format states them (offset +
    /// size of `data` is the page size the kernel wrote).
    pub data_size: Option<usize>,
}

impl PageHeader {
    pub fn for_long(long_size: u8) -> PageHeader {
        PageHeader {
            commit_size: long_size as usize,
            data_offset: 8 + long_size as usize,
            data_size: None,
        }
    }

    /// The page size the `header_page` format implies, if it states one.
    pub fn page_size(&self) -> Option<usize> {
        self.data_size.map(|n| self.data_offset + n)
    }
}

/// `header_page` + `header_event`.
pub fn read_header_info(c: &mut Cursor, long_size: u8) -> BinResult<PageHeader> {
    c.tag(b"header_page\0", "the header-page tag")?;
    let n = c.u64("the size of the header_page format")?;
    let n = c.len_checked(n, "the header_page size")?;
    let text = c.bytes(n, "the header_page format")?;
    let mut ph = PageHeader::for_long(long_size);
    for line in String::from_utf8_lossy(text).lines() {
        let t = line.trim();
        if !t.starts_with("field:") {
            continue;
        }
        let Ok(f) = format::parse_field_line(t) else {
            continue;
        };
        match f.name.as_str() {
            "commit" if matches!(f.size, 4 | 8) => ph.commit_size = f.size,
            "data" => {
                ph.data_offset = f.offset;
                ph.data_size = Some(f.size);
            }
            _ => {}
        }
    }
    c.tag(b"header_event\0", "the header-event tag")?;
    let n = c.u64("the size of the header_event format")?;
    let n = c.len_checked(n, "the header_event size")?;
    c.skip(n, "the header_event format")?;
    Ok(ph)
}

fn read_format(c: &mut Cursor, system: &str, what: &str) -> BinResult<EventFormat> {
    let at = c.pos();
    let n = c.u64(what)?;
    let n = c.len_checked(n, what)?;
    let text = c.bytes(n, "an event format file")?;
    format::parse(text, system).map_err(|e| {
        let mut c2 = c.clone();
        c2.set_pos(at);
        c2.error(format!("in the {system} event format here: {e}"))
    })
}

/// The ftrace formats (`u32` count, each `u64` size + text).
pub fn read_ftrace_formats(c: &mut Cursor) -> BinResult<Vec<EventFormat>> {
    let count = c.u32("the number of ftrace event formats")?;
    check_count(c, count, 8, "ftrace event formats")?;
    let mut out = Vec::with_capacity(count as usize);
    for _ in 0..count {
        out.push(read_format(
            c,
            "ftrace",
            "the size of an ftrace event format",
        )?);
    }
    Ok(out)
}

/// The event formats of every system.
pub fn read_event_formats(c: &mut Cursor) -> BinResult<Vec<EventFormat>> {
    let systems = c.u32("the number of event systems")?;
    check_count(c, systems, 5, "event systems")?;
    let mut out = Vec::new();
    for _ in 0..systems {
        let name = c.cstr("an event system name")?;
        let name = String::from_utf8_lossy(name).into_owned();
        let count = c.u32("the number of events of a system")?;
        check_count(c, count, 8, "event formats")?;
        for _ in 0..count {
            out.push(read_format(c, &name, "the size of an event format")?);
        }
    }
    Ok(out)
}

fn check_count(c: &Cursor, count: u32, min_each: usize, what: &str) -> BinResult<()> {
    if (count as usize).saturating_mul(min_each) > c.remaining() {
        return Err(c.error(format!(
            "the file says {count} {what} follow, but only {} bytes are left (truncated or corrupt)",
            c.remaining()
        )));
    }
    Ok(())
}

/// `/proc/kallsyms` text (`u32` size), kept as bytes.
pub fn read_kallsyms<'a>(c: &mut Cursor<'a>) -> BinResult<&'a [u8]> {
    let n = c.u32("the size of kallsyms")?;
    let n = c.len_checked(n as u64, "the kallsyms size")?;
    c.bytes(n, "the kallsyms text")
}

/// printk formats (`u32` size), skipped.
pub fn read_printk(c: &mut Cursor) -> BinResult<()> {
    let n = c.u32("the size of the printk formats")?;
    let n = c.len_checked(n as u64, "the printk formats size")?;
    c.skip(n, "the printk formats")
}

/// saved_cmdlines text (`u64` size).
pub fn read_cmdlines<'a>(c: &mut Cursor<'a>) -> BinResult<&'a [u8]> {
    let n = c.u64("the size of the saved cmdlines")?;
    let n = c.len_checked(n, "the saved cmdlines size")?;
    c.bytes(n, "the saved cmdlines")
}

/// `PID COMM` lines → pid → comm (the comm may hold spaces).
pub fn parse_cmdlines(text: &[u8]) -> FxHashMap<u32, Vec<u8>> {
    let mut m = FxHashMap::default();
    for line in text.split(|&b| b == b'\n') {
        let Some(sp) = line.iter().position(|&b| b == b' ') else {
            continue;
        };
        if let Some(pid) = crate::sources::text::payload::parse_u64(&line[..sp]) {
            m.insert(pid as u32, line[sp + 1..].to_vec());
        }
    }
    m
}

/// Addresses of the scheduler-tick hrtimer callbacks in a kallsyms text.
pub fn tick_functions(kallsyms: &[u8]) -> Vec<u64> {
    let mut out = Vec::new();
    for name in [&b" tick_nohz_handler"[..], b" tick_sched_timer"] {
        for p in memchr::memmem::find_iter(kallsyms, name) {
            let end = p + name.len();
            if !matches!(kallsyms.get(end), None | Some(b'\n') | Some(b'\t')) {
                continue;
            }
            let start = kallsyms[..p]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |s| s + 1);
            let line = &kallsyms[start..p];
            let addr = line.split(|&b| b == b' ').next().unwrap_or(b"");
            if let Some(a) = std::str::from_utf8(addr)
                .ok()
                .and_then(|a| u64::from_str_radix(a, 16).ok())
                && a != 0
            {
                out.push(a);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_functions_are_found_by_name() {
        let k = b"ffffffff81000000 T _text\nffffffff8113f5d0 t tick_nohz_handler\nffffffff8113f600 t tick_nohz_handler_x\n0000000000000000 t tick_sched_timer\n";
        assert_eq!(tick_functions(k), vec![0xffffffff8113f5d0]);
        assert!(tick_functions(b"").is_empty());
    }

    #[test]
    fn cmdlines() {
        let m = parse_cmdlines(b"1 systemd\n42 my worker 1\nbad\n\n");
        assert_eq!(m.get(&42).map(|v| &v[..]), Some(&b"my worker 1"[..]));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn initial_block() {
        let mut d = MAGIC.to_vec();
        d.extend_from_slice(b"6\0\0\x08");
        d.extend_from_slice(&4096u32.to_le_bytes());
        let mut c = Cursor::new(&d, false);
        let i = read_initial(&mut c).unwrap();
        assert_eq!(
            (i.version.as_str(), i.long_size, i.page_size),
            ("6", 8, 4096)
        );
        let mut c = Cursor::new(&d[..d.len() - 1], false);
        let e = read_initial(&mut c).unwrap_err();
        assert_eq!(e.offset, 14);
    }
}
