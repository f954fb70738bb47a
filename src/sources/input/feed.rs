//! A stream of bytes as the input layer reads it: a descriptor that can say "nothing yet"
//! (pipes, FIFOs, tracefs `trace_pipe`), or any reader (a decompressor) that blocks.

use super::interrupt;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::time::Duration;

/// What one read gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// This many bytes were read.
    Data(usize),
    /// Nothing arrived within the wait (the source is still open).
    Idle,
    /// The end of the input (or a SIGINT that ends a stream, see [`interrupt`]).
    End,
}

/// Bytes as they arrive.
pub trait Feed: Send {
    /// Reads into `buf`, waiting at most `wait` where the source can tell that nothing is there.
    fn fill(&mut self, buf: &mut [u8], wait: Duration) -> io::Result<Fill>;
}

/// A descriptor read after `poll`: a pipe, FIFO, character device or a procfs/tracefs file.
pub struct FdFeed {
    file: std::fs::File,
}

impl FdFeed {
    pub fn new(file: std::fs::File) -> FdFeed {
        FdFeed { file }
    }
}

impl Feed for FdFeed {
    fn fill(&mut self, buf: &mut [u8], wait: Duration) -> io::Result<Fill> {
        if interrupt::requested() {
            return Ok(Fill::End);
        }
        let ms = wait.as_millis().min(i32::MAX as u128) as i32;
        if !crate::sources::sys::poll_one(self.file.as_fd(), ms)? {
            return Ok(Fill::Idle);
        }
        match self.file.read(buf) {
            Ok(0) => Ok(Fill::End),
            Ok(n) => Ok(Fill::Data(n)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(Fill::Idle),
            Err(e) => Err(e),
        }
    }
}

/// Any reader, read as it blocks (decompressors).
pub struct ReadFeed<R> {
    inner: R,
}

impl<R: Read + Send> ReadFeed<R> {
    pub fn new(inner: R) -> ReadFeed<R> {
        ReadFeed { inner }
    }
}

impl<R: Read + Send> Feed for ReadFeed<R> {
    fn fill(&mut self, buf: &mut [u8], _wait: Duration) -> io::Result<Fill> {
        if interrupt::requested() {
            return Ok(Fill::End);
        }
        loop {
            match self.inner.read(buf) {
                Ok(0) => return Ok(Fill::End),
                Ok(n) => return Ok(Fill::Data(n)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// A feed read as a plain blocking reader (what a decompressor reads from): "nothing yet" is
/// waited out.
pub struct FeedReader {
    pub feed: Box<dyn Feed>,
}

impl Read for FeedReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.feed.fill(buf, Duration::from_millis(200))? {
                Fill::Data(n) => return Ok(n),
                Fill::End => return Ok(0),
                Fill::Idle => continue,
            }
        }
    }
}

/// Bytes already read (a peeked head), then the feed.
pub struct Prefixed {
    pub head: Vec<u8>,
    pub at: usize,
    pub rest: Box<dyn Feed>,
}

impl Feed for Prefixed {
    fn fill(&mut self, buf: &mut [u8], wait: Duration) -> io::Result<Fill> {
        if self.at < self.head.len() {
            let n = buf.len().min(self.head.len() - self.at);
            buf[..n].copy_from_slice(&self.head[self.at..self.at + n]);
            self.at += n;
            if self.at == self.head.len() {
                self.head = Vec::new();
                self.at = 0;
            }
            return Ok(Fill::Data(n));
        }
        self.rest.fill(buf, wait)
    }
}
