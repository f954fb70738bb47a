//! One chunk of a text capture as its lines are parsed: events, local strings and tasks, and
//! what went wrong where (local line numbers, made global when the chunks are stitched).

use crate::events::{Event, EventKind, Strings, TaskMeta, Tid, Warning};
use rustc_hash::FxHashMap;

/// What a line or a field was expected to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected {0}")]
pub struct Expected(pub &'static str);

/// A line that did not parse (its number is kept beside it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadLine {
    #[error("{expected}; line is \"{excerpt}\"")]
    Unparsed { expected: Expected, excerpt: String },
    #[error("internal error: the parser failed in the chunk starting here")]
    ParserFailed,
}

/// What one chunk of lines produced.
pub struct Chunk {
    pub events: Vec<Event>,
    pub strings: Strings,
    pub tasks: FxHashMap<Tid, TaskMeta>,
    pub warnings: Vec<Warning>,
    pub ncpus_hint: Option<u32>,
    /// Lines of a `#` header were seen (tracefs `trace`, not `trace_pipe`).
    pub saw_header: bool,
    /// Skipped bad lines (with `skip_bad_lines`): count, first (local line, what it was).
    pub bad_lines: u64,
    pub first_bad: Option<(u64, BadLine)>,
    /// First error (local line number, what it was) when not skipping.
    pub error: Option<(u64, BadLine)>,
    /// Lines in this chunk.
    pub lines: u64,
    /// Last task noted per CPU (mod 64): most lines repeat their CPU's previous task, so the
    /// task map is consulted only when the task changes.
    recent: [Tid; 64],
    /// Byte position of the `[CPU]` column in the previous line (a parser's hint).
    pub cpu_hint: usize,
    pub warned_late_header: bool,
    /// (index of the event the line is about to push, tid, TGID): each tid's first TGID in
    /// this chunk and every later change of it, so the stitch can tell a reused tid.
    pub tgid_notes: Vec<(u32, Tid, Tid)>,
    /// The latest TGID of tids whose TGID changed within this chunk.
    tgid_latest: FxHashMap<Tid, Tid>,
    /// Records whose line names no CPU (put on CPU 0): (count, first local line).
    pub cpu_missing: (u64, u64),
}

impl Chunk {
    pub(crate) fn new() -> Chunk {
        Chunk {
            events: Vec::new(),
            strings: Strings::new(),
            tasks: FxHashMap::default(),
            warnings: Vec::new(),
            ncpus_hint: None,
            saw_header: false,
            bad_lines: 0,
            first_bad: None,
            error: None,
            lines: 0,
            recent: [Tid::MAX; 64],
            cpu_hint: 0,
            warned_late_header: false,
            tgid_notes: Vec::new(),
            tgid_latest: FxHashMap::default(),
            cpu_missing: (0, 0),
        }
    }

    /// Records the task's comm and tgid the first time a line shows them, and each change of
    /// its TGID (a tid reused by another process).
    pub fn note_task(&mut self, cpu: u16, tid: Tid, comm: &[u8], tgid: Option<Tid>) {
        let slot = &mut self.recent[cpu as usize & 63];
        if *slot == tid && tgid.is_none() {
            return;
        }
        *slot = tid;
        let at = self.events.len() as u32;
        if let Some(m) = self.tasks.get_mut(&tid) {
            match (m.tgid, tgid) {
                (None, Some(g)) => {
                    m.tgid = tgid;
                    self.tgid_notes.push((at, tid, g));
                }
                (Some(first), Some(g)) if first != g || self.tgid_latest.contains_key(&tid) => {
                    let latest = self.tgid_latest.get(&tid).copied().unwrap_or(first);
                    if latest != g {
                        self.tgid_latest.insert(tid, g);
                        self.tgid_notes.push((at, tid, g));
                    }
                }
                _ => {}
            }
            return;
        }
        let comm = self.strings.intern(comm);
        self.tasks.insert(tid, TaskMeta { tgid, comm });
        if let Some(g) = tgid {
            self.tgid_notes.push((at, tid, g));
        }
    }

    /// The line being parsed names no CPU: its record goes on CPU 0, counted.
    pub fn note_no_cpu(&mut self) {
        if self.cpu_missing.0 == 0 {
            self.cpu_missing.1 = self.lines;
        }
        self.cpu_missing.0 += 1;
    }

    /// A lost-event marker: placed at the time of the last event before it (fixed up across
    /// chunks), so the stream stays in time order.
    pub fn push_lost(&mut self, cpu: u16, count: Option<u32>) {
        let ts = self.events.last().map_or(u64::MAX, |e| e.ts);
        self.events.push(Event {
            ts,
            tid: 0,
            cpu,
            kind: EventKind::Lost { count },
        });
    }
}

/// Parses one line into `out`. Returns what was expected when the line is malformed.
pub trait LineParser: Send + Sync {
    fn line(&self, line: &[u8], out: &mut Chunk) -> Result<(), Expected>;
}
