//! The `#` lines of tracefs `trace` text: its header (the tracer, `entries-in-buffer`, `#P:`),
//! the `##### CPU N buffer started ####` marks of an overwritten ring buffer, and the lines
//! cidscope's own recordings add (`# cidscope-vm:`, `# cidscope-record:`).

use crate::sources::text::chunk::{Chunk, Expected};
use crate::sources::text::payload;
use crate::sources::text::scan::trim_end;

/// A `%XX`-escaped header value (`cidscope vm`'s encoding); `None` when empty or malformed.
pub fn percent_decoded(v: &str) -> Option<String> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().filter(|s| !s.is_empty())
}

pub fn header_line(line: &[u8], out: &mut Chunk) -> Result<(), Expected> {
    out.saw_header = true;
    // "# cidscope-vm: kernel_version=6.18.15+deb13-cloud-amd64 hz=250 cpus=16 ...": the kernel
    // of a `cidscope vm --record` capture (before the recording marks below, which share the
    // `# cidscope-` prefix and would swallow it)
    if let Some(r) = line.strip_prefix(b"# cidscope-vm: ") {
        let r = String::from_utf8_lossy(r);
        for (k, v) in r.split_ascii_whitespace().filter_map(|w| w.split_once('=')) {
            match k {
                "kernel_version" => out.kernel_release = percent_decoded(v),
                "hz" => out.kernel_hz = v.parse().ok(),
                "scan_batch" => out.kernel_scan_batch = v.parse().ok().filter(|&b| b > 0),
                // the guest's possible CPUs (a function_graph capture has no `#P:` line)
                "cpus" if out.ncpus_hint.is_none() => {
                    out.ncpus_hint = v
                        .parse()
                        .ok()
                        .filter(|&n| n > 0 && n <= crate::events::Trace::MAX_CPUS)
                }
                _ => {}
            }
        }
        return Ok(());
    }
    // how a recording written as it arrived was cut, if it was (`export::record`)
    if let Some(r) = line.strip_prefix(b"# cidscope-") {
        if r.starts_with(b"record: chunked") {
            out.record.chunked = true;
        } else if r.starts_with(b"record: end") {
            out.record.ended = true;
        } else if let Some(n) = r.strip_prefix(b"chunk: ") {
            let n = n.split(|&b| b == b' ').next().unwrap_or(b"");
            if let Some(n) = payload::parse_u64(n) {
                out.record.last_chunk = Some((n, out.events.len()));
            }
        }
        return Ok(());
    }
    if let Some(t) = line.strip_prefix(b"# tracer:") {
        let nop = trim_end(t).trim_ascii_start() == b"nop";
        out.event_tracer = Some(out.event_tracer.unwrap_or(true) && nop);
    }
    if line.starts_with(b"# tracer:") && out.tracer_headers.len() < 8 {
        out.tracer_headers.push((out.events.len(), out.lines));
    }
    if !out.events.is_empty() && !out.warned_late_header && line.starts_with(b"# tracer:") {
        out.warned_late_header = true;
        out.warnings.push(crate::events::Warning {
            code: "header-after-events",
            message: format!(
                "a \"# tracer:\" header follows {} events: several captures concatenated? They are read as one stream",
                out.events.len()
            ),
        });
    }
    // "##### CPU 1 buffer started ####": the ring buffer of that CPU was overwritten before
    // this point (overwrite mode), so older events of that CPU are missing.
    if let Some(r) = line.strip_prefix(b"##### CPU ") {
        if let Some(sp) = r.iter().position(|&b| b == b' ')
            && let Some(cpu) = payload::parse_cpu(&r[..sp])
        {
            out.push_lost(cpu, None);
        }
        return Ok(());
    }
    // "# entries-in-buffer/entries-written: 14277/14277   #P:2"
    if let Some(r) = line.strip_prefix(b"# entries-in-buffer/entries-written: ") {
        if let Some(p) = memchr::memmem::find(r, b"#P:") {
            out.ncpus_hint = payload::parse_u64(trim_end(&r[p + 3..])).map(|n| n as u32);
        }
        let nums = r.split(|&b| b == b' ').next().unwrap_or(b"");
        let mut it = nums.split(|&b| b == b'/');
        let counts = match (it.next(), it.next()) {
            (Some(a), Some(b)) => payload::parse_u64(a).zip(payload::parse_u64(b)),
            _ => None,
        };
        if let Some((inbuf, _)) = counts {
            out.header_entries = Some(out.header_entries.unwrap_or(0).saturating_add(inbuf));
        }
        if let Some((inbuf, written)) = counts
            && written > inbuf
        {
            out.warnings.push(crate::events::Warning {
                        code: "overwritten",
                        message: format!(
                            "the ring buffer overwrote {} of {written} events before it was read (header: entries-in-buffer {inbuf}); the capture starts later than the recording",
                            written - inbuf
                        ),
                    });
        }
    }
    Ok(())
}
