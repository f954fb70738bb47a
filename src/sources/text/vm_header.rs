//! The `# cidscope-vm:` header line of a `cidscope vm --record` capture:
//! `kernel_version=6.18.15+deb13-cloud-amd64 hz=250 cpus=16 ... [scan_batch=8]`, what the
//! guest said of its kernel, read into the chunk's kernel facts.

use super::chunk::Chunk;

/// Reads the header's `key=value` words (after `# cidscope-vm: `).
pub fn read(r: &[u8], out: &mut Chunk) {
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
}

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
