//! Android systrace / Perfetto legacy HTML: the viewer page with the capture inside it. The
//! ftrace text is in a `<script class="trace-data" type="application/text">` block (raw
//! text), or in old pages a JavaScript string `var linuxPerfData = "...\n\` (escaped, one
//! text line per page line). Other trace-data blocks (the JSON of the Chrome trace format)
//! are not ftrace and are left alone.

/// The ftrace text of a systrace page: (the text, the page line its first line is on).
#[derive(Debug, PartialEq, Eq)]
pub struct Extracted {
    pub text: Vec<u8>,
    pub first_line: u64,
}

/// Why a page holds no capture.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HtmlError {
    #[error(
        "expected a <script class=\"trace-data\"> block or a linuxPerfData string holding ftrace text; the page has none"
    )]
    NoTraceData,
    #[error("the trace-data block opened at line {0} is not closed by </script>")]
    Unclosed(u64),
}

/// Whether `head` starts like a systrace page (checked before anything else is read).
pub fn looks_like_page(head: &[u8]) -> bool {
    let t = head.trim_ascii_start();
    let n = t.len().min(64);
    let lower: Vec<u8> = t[..n].to_ascii_lowercase();
    lower.starts_with(b"<!doctype html") || lower.starts_with(b"<html")
}

fn line_of(data: &[u8], at: usize) -> u64 {
    memchr::memchr_iter(b'\n', &data[..at]).count() as u64 + 1
}

/// The ftrace text of the page: the first trace-data block whose content is not JSON, or
/// the `linuxPerfData` string.
pub fn extract(page: &[u8]) -> Result<Extracted, HtmlError> {
    let finder = memchr::memmem::Finder::new(b"<script");
    let mut from = 0;
    while let Some(p) = finder.find(&page[from..]) {
        let start = from + p;
        let Some(gt) = memchr::memchr(b'>', &page[start..]).map(|g| start + g) else {
            break;
        };
        let tag = &page[start..gt];
        let end = memchr::memmem::find(&page[gt..], b"</script>").map(|e| gt + e);
        if memchr::memmem::find(tag, b"trace-data").is_some() {
            let Some(end) = end else {
                return Err(HtmlError::Unclosed(line_of(page, start)));
            };
            let body = &page[gt + 1..end];
            let t = body.trim_ascii_start();
            // the JSON block of the Chrome trace format, or an empty one
            if !t.is_empty() && t[0] != b'{' && t[0] != b'[' {
                let lead = body.len() - t.len();
                // start at the line of the first non-blank byte
                let first = body[..lead]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
                return Ok(Extracted {
                    text: unescape_entities(&body[first..]),
                    first_line: line_of(page, gt + 1 + first),
                });
            }
        } else if let Some(end) = end
            && let Some(v) = memchr::memmem::find(&page[gt..end], b"linuxPerfData")
        {
            // var linuxPerfData = "\
            // # tracer: nop\n\
            // ...\n";
            let at = gt + v;
            if let Some(q) = memchr::memchr(b'"', &page[at..end]).map(|q| at + q + 1) {
                let (text, skip_first) = unescape_js(&page[q..end]);
                return Ok(Extracted {
                    text,
                    first_line: line_of(page, q) + skip_first,
                });
            }
        }
        from = gt;
    }
    Err(HtmlError::NoTraceData)
}

/// `&amp;` `&lt;` `&gt;` `&quot;` `&#39;`: how a page may hold `<...>` and `&` in a raw block.
fn unescape_entities(s: &[u8]) -> Vec<u8> {
    if memchr::memchr(b'&', s).is_none() {
        return s.to_vec();
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'&' {
            let rest = &s[i..];
            let hit = [
                (&b"&amp;"[..], b'&'),
                (b"&lt;", b'<'),
                (b"&gt;", b'>'),
                (b"&quot;", b'"'),
                (b"&#39;", b'\''),
            ]
            .into_iter()
            .find(|(e, _)| rest.starts_with(e));
            if let Some((e, c)) = hit {
                out.push(c);
                i += e.len();
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// The content of a JavaScript string up to its closing quote: `\n` a newline, `\` at a
/// line's end a continuation, `\\` `\"` `\'` `\t` themselves. Returns the text and whether
/// the string began with a continuation (its first line is the page's next).
fn unescape_js(s: &[u8]) -> (Vec<u8>, u64) {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    let skip_first = u64::from(s.starts_with(b"\\\n"));
    while i < s.len() {
        match s[i] {
            b'"' => break,
            b'\\' if i + 1 < s.len() => {
                match s[i + 1] {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'\n' => {}
                    b'\r' if s.get(i + 2) == Some(&b'\n') => i += 1,
                    c => out.push(c),
                }
                i += 2;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    (out, skip_first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_data_blocks_and_the_json_beside_them() {
        let page = b"<!DOCTYPE html>\n<html><head><script>var x=1;</script></head>\n<body>\n<script class=\"trace-data\" type=\"application/text\">{\"traceEvents\":[]}</script>\n<script class=\"trace-data\" type=\"application/text\">\n# tracer: nop\n  a-1 [000] ...1 1.0: x: y &lt;z&gt;\n</script>\n</body></html>\n";
        assert!(looks_like_page(page));
        let e = extract(page).unwrap();
        assert_eq!(e.text, b"# tracer: nop\n  a-1 [000] ...1 1.0: x: y <z>\n");
        assert_eq!(e.first_line, 6);
    }

    #[test]
    fn old_pages_hold_a_javascript_string() {
        let page = b"<html>\n<script>\n  var linuxPerfData = \"\\\n# tracer: nop\\n\\\n  a-1   [000] 5.1: 0: C|1|V|1\\n\\\n\";\n</script>\n";
        let e = extract(page).unwrap();
        assert_eq!(e.text, b"# tracer: nop\n  a-1   [000] 5.1: 0: C|1|V|1\n");
        assert_eq!(e.first_line, 4);
    }

    #[test]
    fn pages_without_a_capture() {
        assert_eq!(
            extract(b"<html><body>hi</body></html>"),
            Err(HtmlError::NoTraceData)
        );
        assert_eq!(
            extract(b"<html>\n<script class=\"trace-data\">\n# tracer"),
            Err(HtmlError::Unclosed(2))
        );
        assert!(!looks_like_page(b"# tracer: nop"));
    }
}
