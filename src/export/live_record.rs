//! `live --record` and `attach --record`: the capture written as it arrives, by a thread of its
//! own reading the session through a [`LiveTap`], in flushed chunks ([`super::record`]). A
//! write error (a full disk) stops the recording at once and is published in its
//! [`RecordStatus`] for the TUI and the headless wait loop to show.

use super::ftrace::{Header, Legend, push_aux_line};
use super::record::{RecordError, RecordFile, RecordStatus};
use crate::events::{Origin, Trace};
use crate::sources::live::{LiveCapture, LiveSession, LiveTap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the recorder takes what arrived (it flushes a chunk every `record::FLUSH_EVERY`).
const POLL: Duration = Duration::from_millis(100);

/// What the recorder thread hands back: the file (the error, once writing failed) and how many
/// of the session's events it took.
struct Written {
    file: Result<RecordFile, RecordError>,
    events: usize,
}

pub struct LiveRecorder {
    path: PathBuf,
    status: Arc<RecordStatus>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Written>>,
}

fn write_err(path: &Path, source: std::io::Error) -> RecordError {
    RecordError::Write {
        path: path.to_path_buf(),
        source,
    }
}

impl LiveRecorder {
    /// Creates `path` (its header written and flushed at once) and starts writing `session`'s
    /// events to it as they arrive.
    pub fn start(path: &Path, session: &LiveSession) -> Result<LiveRecorder, RecordError> {
        let tap = session.tap();
        let header = Header {
            entries: 0,
            ncpus: tap.ncpus().unwrap_or(1),
            note: None,
            legend: Legend::Tracefs,
        };
        let file =
            RecordFile::create(path, "", Some(&header)).map_err(|source| RecordError::Create {
                path: path.to_path_buf(),
                source,
            })?;
        let status = Arc::new(RecordStatus::new(path));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (status.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("cidscope-record".into())
            .spawn(move || run(file, tap, &st, &sp))
            .map_err(|source| RecordError::Thread {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(LiveRecorder {
            path: path.to_path_buf(),
            status,
            stop,
            thread: Some(thread),
        })
    }

    pub fn status(&self) -> Arc<RecordStatus> {
        self.status.clone()
    }

    /// Writes what the session captured after the recorder's last look (`cap`, the whole
    /// session from [`LiveSession::stop`]) and ends the file. Returns the events written, or
    /// the error that stopped the recording.
    pub fn finish(mut self, cap: &LiveCapture) -> Result<u64, RecordError> {
        self.stop.store(true, Ordering::Release);
        let path = self.path.clone();
        let w = match self.thread.take().map(|t| t.join()) {
            Some(Ok(w)) => w,
            _ => return Err(RecordError::Panicked { path }),
        };
        let mut file = w.file?;
        let aux = (cap.aux.len() == cap.trace.events.len()).then_some(&cap.aux[..]);
        for i in w.events..cap.trace.events.len() {
            let ev = cap.trace.events.at(i);
            push_aux_line(file.buffer(), &cap.trace, &ev, aux.map(|a| &a[i]))
                .map_err(|e| write_err(&path, e))?;
            if !ev.kind.is_lost() {
                file.add_events(1);
            }
        }
        let n = file.finish().map_err(|e| write_err(&path, e))?;
        self.status.events.store(n, Ordering::Relaxed);
        Ok(n)
    }
}

impl Drop for LiveRecorder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(
    mut file: RecordFile,
    mut tap: LiveTap,
    status: &RecordStatus,
    stop: &AtomicBool,
) -> Written {
    let mut mirror = Trace::new("", Origin::Live);
    let path = file.path().to_path_buf();
    loop {
        let last = stop.load(Ordering::Acquire);
        let b = tap.poll();
        b.apply_meta(&mut mirror);
        let r = (|| {
            for (ev, aux) in b.events.iter().zip(&b.aux) {
                push_aux_line(file.buffer(), &mirror, ev, Some(aux))?;
                if !ev.kind.is_lost() {
                    file.add_events(1);
                }
            }
            file.maybe_flush()
        })();
        if let Err(e) = r {
            let e = write_err(&path, e);
            status.fail(e.to_string());
            return Written {
                file: Err(e),
                events: tap.events_read(),
            };
        }
        status.events.store(file.events(), Ordering::Relaxed);
        if last {
            return Written {
                file: Ok(file),
                events: tap.events_read(),
            };
        }
        std::thread::sleep(POLL);
    }
}
