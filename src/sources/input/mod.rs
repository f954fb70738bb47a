//! Where a capture's bytes come from. A regular file is mapped, as before. `-`, pipes,
//! FIFOs, character devices and the size-0 files of procfs and tracefs (`trace`,
//! `trace_pipe`) are read as streams: no size is needed and nothing is mapped; text is parsed
//! in runs of whole lines as it arrives, binaries are gathered under the memory check.
//! Compressed input (gzip, zstd, xz: by magic bytes, never by the name) is decompressed on the
//! fly, whether it comes from a file or a pipe.

pub mod budget;
pub mod decompress;
pub mod feed;
pub mod interrupt;
pub mod lines;

use crate::sources::error::SourceError;
use crate::sources::file_format::Sample;
use crate::sources::options::LoadOptions;
use crate::sources::sys::mmap::{self, Map};
use budget::Budget;
use decompress::Codec;
use feed::{FdFeed, Feed, FeedReader, Fill, Prefixed};
use std::io;
use std::path::Path;
use std::time::Duration;

/// What the capture is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file with a size.
    File,
    /// Standard input (`-`).
    Stdin,
    /// A pipe or a FIFO.
    Pipe,
    /// A character device or socket.
    Device,
    /// A file that reports size 0 but has content (procfs, tracefs `trace`).
    Special,
    /// tracefs `trace_pipe`: events as the kernel writes them; it ends only at Ctrl-C (or
    /// when the TUI quits).
    TracePipe,
}

/// A capture opened for reading.
pub enum Input {
    /// Mapped whole.
    Mapped(Map),
    /// Read as it arrives.
    Stream(Stream),
}

/// A capture read as a stream: its first bytes (read already, for detection), then the rest.
pub struct Stream {
    pub kind: Kind,
    pub codec: Option<Codec>,
    pub head: Vec<u8>,
    pub feed: Box<dyn Feed>,
    /// The head holds the whole input.
    pub ended: bool,
}

/// The name `-` stands for in messages.
pub const STDIN_NAME: &str = "<stdin>";

/// Opens `path` (`-`: standard input) as a map or a stream.
pub fn open(path: &Path, name: &str) -> Result<Input, SourceError> {
    let (file, kind) = if path.as_os_str() == "-" {
        let fd = io::stdin()
            .lock()
            .as_fd_owned()
            .map_err(|e| SourceError::file(name, format!("cannot read standard input: {e}")))?;
        (std::fs::File::from(fd), Kind::Stdin)
    } else {
        let file = std::fs::File::open(path)
            .map_err(|e| SourceError::file(name, format!("cannot open: {e}")))?;
        let meta = file
            .metadata()
            .map_err(|e| SourceError::file(name, format!("cannot stat: {e}")))?;
        use std::os::unix::fs::FileTypeExt;
        let ft = meta.file_type();
        if ft.is_dir() {
            return Err(SourceError::file(
                name,
                "is a directory; expected a capture file (ftrace text, trace-cmd report, perf script, perf.data or trace.dat)",
            ));
        }
        let kind = if ft.is_file() && meta.len() > 0 {
            Kind::File
        } else if ft.is_file() {
            // procfs / tracefs report 0; a truly empty file reads nothing and is said so
            if path.file_name().is_some_and(|n| n == "trace_pipe") {
                Kind::TracePipe
            } else {
                Kind::Special
            }
        } else if ft.is_fifo() {
            Kind::Pipe
        } else {
            Kind::Device
        };
        (file, kind)
    };
    if kind == Kind::File {
        let map = mmap::map_file(&file)
            .map_err(|e| SourceError::file(name, format!("cannot map: {e}")))?;
        let Some(codec) = decompress::sniff(&map) else {
            return Ok(Input::Mapped(map));
        };
        drop(map);
        let feed = decompress::decoder(codec, file)
            .map_err(|e| SourceError::file(name, format!("{} data: {e}", codec.name())))?;
        return stream(name, kind, Some(codec), feed);
    }
    stream_of(name, kind, Box::new(FdFeed::new(file)))
}

/// Any reader as a stream (tests, fuzzing, an embedding program).
pub fn from_reader(name: &str, r: impl io::Read + Send + 'static) -> Result<Input, SourceError> {
    stream_of(name, Kind::Pipe, Box::new(feed::ReadFeed::new(r)))
}

/// A stream of `raw`, decompressed when its first bytes are a compression's magic number.
fn stream_of(name: &str, kind: Kind, mut raw: Box<dyn Feed>) -> Result<Input, SourceError> {
    // a pipe is peeked for a compression magic number, then read through the decompressor
    let mut head = Vec::new();
    let ended = read_until(&mut raw, &mut head, |h, _| {
        h.len() >= decompress::MAGIC_BYTES
    })
    .map_err(|e| SourceError::file(name, format!("read failed: {e}")))?;
    if let Some(codec) = decompress::sniff(&head) {
        let raw = FeedReader {
            feed: Box::new(Prefixed {
                head,
                at: 0,
                rest: raw,
            }),
        };
        let feed = decompress::decoder(codec, raw)
            .map_err(|e| SourceError::file(name, format!("{} data: {e}", codec.name())))?;
        return stream(name, kind, Some(codec), feed);
    }
    let mut s = Stream {
        kind,
        codec: None,
        head,
        feed: raw,
        ended,
    };
    fill_head(name, &mut s)?;
    Ok(Input::Stream(s))
}

fn stream(
    name: &str,
    kind: Kind,
    codec: Option<Codec>,
    feed: Box<dyn Feed>,
) -> Result<Input, SourceError> {
    let mut s = Stream {
        kind,
        codec,
        head: Vec::new(),
        feed,
        ended: false,
    };
    fill_head(name, &mut s)?;
    Ok(Input::Stream(s))
}

/// Reads the head detection looks at: [`Sample::HEAD_BYTES`] or the whole input, whichever is
/// less, so a stream is detected exactly as the same bytes in a file. A stream that pauses
/// with whole lines that already show a format (a live `trace_pipe`) is not waited for.
fn fill_head(name: &str, s: &mut Stream) -> Result<(), SourceError> {
    if s.ended {
        return Ok(());
    }
    s.ended = read_until(&mut s.feed, &mut s.head, |h, idle| {
        h.len() >= Sample::HEAD_BYTES
            || (idle
                && memchr::memchr(b'\n', h).is_some()
                && crate::sources::formats::detect(h).is_some())
    })
    .map_err(|e| {
        let what = s
            .codec
            .map_or("read failed".to_string(), |c| format!("{} data", c.name()));
        SourceError::file(name, format!("{what}: {e}"))
    })?;
    Ok(())
}

/// Reads into `head` until `enough(head, paused)` or the end; true at the end.
fn read_until(
    feed: &mut Box<dyn Feed>,
    head: &mut Vec<u8>,
    enough: impl Fn(&[u8], bool) -> bool,
) -> io::Result<bool> {
    let mut buf = vec![0u8; 1 << 16];
    loop {
        if enough(head, false) {
            return Ok(false);
        }
        match feed.fill(&mut buf, lines::PAUSE)? {
            Fill::Data(n) => head.extend_from_slice(&buf[..n]),
            Fill::End => return Ok(true),
            Fill::Idle => {
                if enough(head, true) {
                    return Ok(false);
                }
            }
        }
    }
}

impl Stream {
    /// The whole stream in memory (a binary format, which is decoded whole), under the memory
    /// check; `progress` counts the bytes read. A compressed stream cut or damaged gives what
    /// came before the damage, and the warning that says so (the format's reader then finds the
    /// data cut short, as in a cut file).
    pub fn read_all(
        self,
        name: &str,
        mut budget: Budget,
        opts: &LoadOptions,
    ) -> Result<(Vec<u8>, Option<crate::events::Warning>), SourceError> {
        let Stream {
            mut head,
            mut feed,
            ended,
            codec,
            ..
        } = self;
        let what = codec.map_or("read failed".to_string(), |c| format!("{} data", c.name()));
        let mut buf = vec![0u8; 1 << 16];
        let mut done = ended;
        let mut cut = None;
        while !done {
            match feed.fill(&mut buf, lines::PAUSE) {
                Ok(Fill::Data(n)) => {
                    head.extend_from_slice(&buf[..n]);
                    budget
                        .check(head.len() as u64)
                        .map_err(|e| SourceError::file(name, e.to_string()))?;
                    if let Some(p) = &opts.progress {
                        p.done
                            .store(head.len() as u64, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                Ok(Fill::End) => done = true,
                Ok(Fill::Idle) => done = opts.cancelled(),
                Err(e) if lines::ends_early(&e) && codec.is_some() && !head.is_empty() => {
                    let w = crate::events::Warning {
                        code: "input-cut",
                        message: format!(
                            "{name}: the input could not be read past byte {} of its decompressed data ({what}: {e}); what came before it was read as a file cut there",
                            head.len()
                        ),
                    };
                    cut = Some(w);
                    done = true;
                }
                Err(e) => {
                    return Err(SourceError::at_offset(
                        name,
                        head.len() as u64,
                        format!("{what}: {e}"),
                    ));
                }
            }
        }
        // (what was read, cut or whole, is checked once more: the checks above come every
        // 16 MB)
        budget
            .check_whole(head.len() as u64)
            .map_err(|e| SourceError::file(name, e.to_string()))?;
        Ok((head, cut))
    }

    /// The stream as runs of whole lines for the text driver.
    pub fn lines<'o>(
        self,
        name: &str,
        segment: usize,
        budget: Budget,
        opts: &'o LoadOptions,
    ) -> lines::StreamLines<'o> {
        let feed: Box<dyn Feed> = if self.ended {
            Box::new(Ended)
        } else {
            self.feed
        };
        lines::StreamLines::new(name, self.head, feed, segment, budget, opts)
    }
}

/// A feed at its end.
struct Ended;

impl Feed for Ended {
    fn fill(&mut self, _: &mut [u8], _: Duration) -> io::Result<Fill> {
        Ok(Fill::End)
    }
}

/// `as_fd` + clone, for standard input.
trait AsFdOwned {
    fn as_fd_owned(&self) -> io::Result<std::os::fd::OwnedFd>;
}

impl AsFdOwned for io::StdinLock<'_> {
    fn as_fd_owned(&self) -> io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::AsFd;
        self.as_fd().try_clone_to_owned()
    }
}
