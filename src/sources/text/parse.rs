//! One piece of a text capture, its lines parsed into a [`Chunk`] on a worker of the driver
//! (pieces are parsed side by side and stitched in order by the driver).

use crate::events::Event;
use crate::sources::options::LoadOptions;
use crate::sources::sys::prefetch::prefetch;
use crate::sources::text::chunk::{BadLine, Chunk, LineParser};
use std::sync::atomic::Ordering;

const PREFETCH_AHEAD: usize = 2048;

/// [`parse_chunk`] of the `i`th piece, a panic in it (a bug) made an error at the chunk's first
/// line: the load stops there with what came before kept, and the terminal stays the TUI's.
pub(super) fn parse_piece(
    i: usize,
    data: &[u8],
    parser: &dyn LineParser,
    opts: &LoadOptions,
    buf: Vec<Event>,
) -> Chunk {
    crate::sources::sys::panics::contain(|| {
        crate::sources::sys::panics::inject("parser", i);
        parse_chunk(data, parser, opts, buf)
    })
    .unwrap_or_else(|why| {
        let mut c = Chunk::new();
        c.error = Some((1, BadLine::ParserFailed(why)));
        c
    })
}

/// Parses whole lines into a chunk whose events go into `buf` (a reused buffer).
fn parse_chunk(data: &[u8], parser: &dyn LineParser, opts: &LoadOptions, buf: Vec<Event>) -> Chunk {
    let mut out = Chunk::new();
    out.bytes = data.len() as u64;
    out.events = buf;
    out.events.clear();
    out.events.reserve(data.len() / 90);
    let mut start = 0usize;
    let mut since_progress = 0usize;
    let mut fetched = 0usize;
    for nl in memchr::memchr_iter(b'\n', data) {
        // Ask for the bytes a few lines ahead: the first pass over a large mapped file waits on
        // memory, not on parsing.
        while fetched < (nl + PREFETCH_AHEAD).min(data.len()) {
            prefetch(&data[fetched]);
            fetched += 64;
        }
        let mut line = &data[start..nl];
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        out.lines += 1;
        if let Err(expected) = parser.line(line, &mut out) {
            let msg = BadLine::Unparsed {
                expected,
                found: expected.found_in(line),
                excerpt: crate::sources::error::excerpt(line, 120),
            };
            if opts.skip_bad_lines {
                out.bad_lines += 1;
                if out.first_bad.is_none() {
                    out.first_bad = Some((out.lines, msg));
                }
            } else {
                out.error = Some((out.lines, msg));
                return out;
            }
        }
        since_progress += nl + 1 - start;
        start = nl + 1;
        if since_progress >= 1 << 22 {
            if let Some(p) = &opts.progress {
                p.done.fetch_add(since_progress as u64, Ordering::Relaxed);
                if p.cancel.load(Ordering::Relaxed) {
                    return out;
                }
            }
            since_progress = 0;
        }
    }
    if let Some(p) = &opts.progress {
        p.done.fetch_add(since_progress as u64, Ordering::Relaxed);
    }
    out
}
