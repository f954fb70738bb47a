//! One chunk of a text capture as its lines are parsed: events, local strings and tasks, and
//! what went wrong where (local line numbers, made global when the chunks are stitched).

use crate::events::{Event, EventKind, StrId, Strings, TaskMeta, Tid, Warning};
use rustc_hash::FxHashMap;

/// What a line or a field was expected to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected {0}")]
pub struct Expected(pub &'static str);

impl Expected {
    /// The `KEY=VALUE` field of `line` that this expectation names (`dest_cpu=N (N < 8192)`
    /// names `dest_cpu`), whole up to [`FIELD_MAX`] bytes and escaped: the line's excerpt may
    /// be cut before it.
    pub fn found_in(&self, line: &[u8]) -> Option<String> {
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        self.0.split(' ').find_map(|word| {
            let key = &word.as_bytes()[..word.find('=')? + 1];
            if key.len() < 2 || !key[..key.len() - 1].iter().all(|&c| ident(c)) {
                return None;
            }
            let at = line
                .windows(key.len())
                .enumerate()
                .find(|&(i, w)| w == key && (i == 0 || !ident(line[i - 1])))?
                .0;
            let field = &line[at..];
            let end = field.iter().position(|&c| c == b' ').unwrap_or(field.len());
            Some(crate::sources::error::excerpt(&field[..end], FIELD_MAX))
        })
    }
}

/// The longest field a message quotes whole.
pub const FIELD_MAX: usize = 80;

/// A line that did not parse (its number is kept beside it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadLine {
    #[error("{expected}{}; line is \"{excerpt}\"", found.as_ref().map(|f| format!(", found \"{f}\"")).unwrap_or_default())]
    Unparsed {
        expected: Expected,
        /// The field the expectation names, quoted whole (the excerpt is cut).
        found: Option<String>,
        excerpt: String,
    },
    /// The parser panicked in this chunk (a bug): what it said, and where.
    #[error("internal error: the parser failed in the chunk starting here ({0})")]
    ParserFailed(String),
}

/// Well-formed lines that are not events of their own, counted (said in warnings at the end).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// `<stack trace>` / `<user stack trace>` lines (`options/stacktrace`), and trace-cmd's
    /// `kernel_stack` / `user_stack` records: a stack belongs to the event above it.
    pub stack_traces: u64,
    /// Their ` => function` frame lines.
    pub stack_frames: u64,
    /// Lines continuing the free-text message of the event above (a trace_printk or
    /// trace_marker message with newlines inside).
    pub continuation: u64,
    /// function_graph lines without a timestamp (`options/funcgraph-abstime` off).
    pub graph_untimed: u64,
    /// function_graph decoration: the `=>` task-switch blocks and irq arrows.
    pub graph_marks: u64,
    /// Events whose line names tid 4294967295: no kernel gives it (PID_MAX_LIMIT is 2^22), and
    /// it is the value of an unknown task, so they are kept as of no known task.
    pub unknown_tid: u64,
    /// Lines that held two event lines run together (split, both read), and of those the
    /// first events whose fields were cut short (not loaded).
    pub merged_lines: u64,
    pub merged_cut: u64,
}

impl Skipped {
    pub fn add(&mut self, o: &Skipped) {
        self.stack_traces += o.stack_traces;
        self.stack_frames += o.stack_frames;
        self.continuation += o.continuation;
        self.graph_untimed += o.graph_untimed;
        self.graph_marks += o.graph_marks;
        self.unknown_tid += o.unknown_tid;
        self.merged_lines += o.merged_lines;
        self.merged_cut += o.merged_cut;
    }

    /// What was skipped, as warnings.
    pub fn warnings(&self, path: &str) -> Vec<Warning> {
        let mut w = Vec::new();
        if self.stack_traces + self.stack_frames > 0 {
            w.push(Warning {
                code: "stack-traces-skipped",
                message: format!(
                    "{path}: {} stack traces ({} frames) skipped: each belongs to the event above it, which is kept",
                    self.stack_traces, self.stack_frames
                ),
            });
        }
        if self.continuation > 0 {
            w.push(Warning {
                code: "continuation-lines",
                message: format!(
                    "{path}: {} lines continue the message of the event above them (a trace_printk or trace_marker text with newlines) and were read as part of it",
                    self.continuation
                ),
            });
        }
        if self.graph_untimed > 0 {
            w.push(Warning {
                code: "function-graph-untimed",
                message: format!(
                    "{path}: {} function_graph lines have no timestamp and were skipped: record with `echo 1 > options/funcgraph-abstime` (and `options/funcgraph-proc` for the task)",
                    self.graph_untimed
                ),
            });
        }
        if self.merged_lines > 0 {
            w.push(Warning {
                code: "merged-lines",
                message: format!(
                    "{path}: {} lines hold two event lines run together (the first one's end and newline lost: a log cut and joined?): each was split at the second's columns and both read; {} of the first events were cut short and not loaded",
                    self.merged_lines, self.merged_cut
                ),
            });
        }
        if self.unknown_tid > 0 {
            w.push(Warning {
                code: "tid-unknown",
                message: format!(
                    "{path}: {} events name tid 4294967295, which no kernel gives (PID_MAX_LIMIT is 4194304) and which cidscope holds for an unknown task: they are kept and counted, as of no known task (no lane, no process; their rseq_update sets no task's CID)",
                    self.unknown_tid
                ),
            });
        }
        w
    }
}

/// What one chunk of lines produced.
pub struct Chunk {
    pub events: Vec<Event>,
    /// `# tracer:` header lines: (index of the event after it, local line), a few at most.
    pub tracer_headers: Vec<(usize, u64)>,
    pub strings: Strings,
    pub tasks: FxHashMap<Tid, TaskMeta>,
    pub warnings: Vec<Warning>,
    pub ncpus_hint: Option<u32>,
    /// The `entries-in-buffer` count of a tracefs header (summed if several), and whether the
    /// `# tracer:` named is `nop` (events only: one entry per event, so the count can be
    /// held against what loaded; other tracers print two entries on one line).
    pub header_entries: Option<u64>,
    pub event_tracer: Option<bool>,
    /// The kernel release, CONFIG_HZ and CONFIG_RSEQ_CID_SCAN_BATCH a `# cidscope-vm:` header
    /// line names.
    pub kernel_release: Option<String>,
    pub kernel_hz: Option<u32>,
    pub kernel_scan_batch: Option<u32>,
    /// `rseq_update` lines whose irq-flags column says interrupts were disabled
    /// ([`Trace::rseq_irqs_off`](crate::events::Trace::rseq_irqs_off)).
    pub rseq_irqs_off: u64,
    /// Lines of a `#` header were seen (tracefs `trace`, not `trace_pipe`).
    pub saw_header: bool,
    /// Skipped bad lines (with `skip_bad_lines`): count, first (local line, what it was).
    pub bad_lines: u64,
    pub first_bad: Option<(u64, BadLine)>,
    /// First error (local line number, what it was) when not skipping.
    pub error: Option<(u64, BadLine)>,
    /// Lines in this chunk, and its bytes.
    pub lines: u64,
    pub bytes: u64,
    /// Last task noted per CPU (mod 64) with its TGID column, kept once its comm is known: most
    /// lines repeat their CPU's previous task, so the task map is consulted only when the task
    /// (or its TGID) changes, or while its name is still `<...>`.
    recent: [(Tid, Option<Tid>); 64],
    /// The id of `<...>` in this chunk's strings once a task was noted with it.
    unknown_comm: Option<StrId>,
    /// `hrtimer_expire_entry` interned, once it was needed ([`payload::parse_exact`]).
    ///
    /// [`payload::parse_exact`]: crate::sources::text::payload::parse_exact
    pub hrtimer_name: Option<StrId>,
    /// The least difference between a tick's record time and its `now=` (CLOCK_MONOTONIC) in
    /// this chunk: [`Trace::mono_offset`](crate::events::Trace::mono_offset).
    pub mono_offset: Option<i64>,
    /// Byte position of the `[CPU]` column in the previous line (a parser's hint).
    pub cpu_hint: usize,
    pub warned_late_header: bool,
    /// (index of the event the line is about to push, tid, TGID): each tid's first TGID in
    /// this chunk and every later change of it, so the stitch can tell a reused tid.
    pub tgid_notes: Vec<(u32, Tid, Tid)>,
    /// The latest TGID of tids whose TGID changed within this chunk.
    tgid_latest: FxHashMap<Tid, Tid>,
    /// perf script: lines skipped and events lacking a column.
    pub perf: crate::sources::text::perf_tally::Tally,
    pub skipped: Skipped,
    /// Names the payloads give for tasks (a switch's next_comm, exec's filename, wakeups,
    /// forks): what `<...>` in the task column is replaced with.
    pub names: Vec<(Tid, StrId)>,
    /// Whether the line before may be continued by free text (it was an event cidscope does
    /// not model, or a continuation): `None` at the chunk's start, until its first line.
    pub cont_ok: Option<bool>,
    /// Lines at the chunk's start taken as continuations of the previous chunk's last event:
    /// the first of them (local line, what it was) and how many; an error if that event
    /// turns out not to allow it.
    pub leading_cont: Option<(u64, BadLine)>,
    pub leading_cont_n: u64,
    /// function_graph without the task column: the task the last `=>` line of each CPU
    /// switched to, and the events (indices) of CPUs before their first `=>` line, whose task
    /// is the previous chunk's.
    pub graph_task: FxHashMap<u16, Tid>,
    pub graph_unknown: Vec<u32>,
    /// The marks of a recording written in chunks (`export::record`) this chunk holds.
    pub record: RecordMarks,
}

/// What the lines of a chunked recording say about how it was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecordMarks {
    /// The `# cidscope-record: chunked` line.
    pub chunked: bool,
    /// The last `# cidscope-chunk: N` line: N, and the chunk's events before it.
    pub last_chunk: Option<(u64, usize)>,
    /// The `# cidscope-record: end` line.
    pub ended: bool,
}

impl Chunk {
    pub(crate) fn new() -> Chunk {
        Chunk {
            events: Vec::new(),
            tracer_headers: Vec::new(),
            strings: Strings::new(),
            tasks: FxHashMap::default(),
            warnings: Vec::new(),
            ncpus_hint: None,
            header_entries: None,
            event_tracer: None,
            kernel_release: None,
            kernel_hz: None,
            kernel_scan_batch: None,
            rseq_irqs_off: 0,
            saw_header: false,
            bad_lines: 0,
            first_bad: None,
            error: None,
            lines: 0,
            bytes: 0,
            recent: [(Tid::MAX, None); 64],
            unknown_comm: None,
            hrtimer_name: None,
            mono_offset: None,
            cpu_hint: 0,
            warned_late_header: false,
            tgid_notes: Vec::new(),
            tgid_latest: FxHashMap::default(),
            perf: Default::default(),
            skipped: Skipped::default(),
            names: Vec::new(),
            cont_ok: None,
            leading_cont: None,
            leading_cont_n: 0,
            graph_task: FxHashMap::default(),
            graph_unknown: Vec::new(),
            record: RecordMarks::default(),
        }
    }

    /// Records the task's comm and tgid the first time a line shows them, and each change of
    /// its TGID (a tid reused by another process).
    #[inline(always)]
    pub fn note_task(&mut self, cpu: u16, tid: Tid, comm: &[u8], tgid: Option<Tid>) {
        let slot = cpu as usize & 63;
        if self.recent[slot] != (tid, tgid) {
            self.note_task_slow(slot, tid, comm, tgid);
        }
    }

    #[inline(never)]
    fn note_task_slow(&mut self, slot: usize, tid: Tid, comm: &[u8], tgid: Option<Tid>) {
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
                        // (rare) another CPU's slot may hold this tid with its old TGID
                        self.recent = [(Tid::MAX, None); 64];
                    }
                }
                _ => {}
            }
            // `<...>`: the kernel had lost the pid's name when it printed the line
            let unknown = Some(m.comm) == self.unknown_comm;
            if unknown && comm != UNKNOWN_COMM {
                m.comm = self.strings.intern(comm);
            }
            self.recent[slot] = if unknown && comm == UNKNOWN_COMM {
                (Tid::MAX, None)
            } else {
                (tid, tgid)
            };
            return;
        }
        let known = comm != UNKNOWN_COMM;
        let comm = self.strings.intern(comm);
        if !known {
            self.unknown_comm = Some(comm);
        }
        self.tasks.insert(tid, TaskMeta { tgid, comm });
        if let Some(g) = tgid {
            self.tgid_notes.push((at, tid, g));
        }
        self.recent[slot] = if known { (tid, tgid) } else { (Tid::MAX, None) };
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

/// What ftrace prints for a task whose name it no longer has.
pub const UNKNOWN_COMM: &[u8] = b"<...>";

/// Parses one line into `out`. Returns what was expected when the line is malformed.
pub trait LineParser: Send + Sync {
    fn line(&self, line: &[u8], out: &mut Chunk) -> Result<(), Expected>;

    /// The times are deltas (each the time since the event before): the stitch adds them up.
    fn cumulative_times(&self) -> bool {
        false
    }

    /// How the times were printed (perf script's forms; the warnings say what follows).
    fn times(&self) -> crate::sources::text::perf_tally::TimeMode {
        Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The field an out-of-range message is about is quoted whole, wherever it sits in the
    /// line (the line's excerpt is cut at 120 bytes), and only that key (`pid=`, not `old_pid=`).
    #[test]
    fn the_bad_field_is_quoted_whole() {
        let e = Expected("sched_migrate_task dest_cpu=N (N < 8192)");
        let pad = "x".repeat(150);
        let line = format!("  a-1 [000] 1.0: sched_migrate_task: comm={pad} pid=1 dest_cpu=99999");
        assert_eq!(
            e.found_in(line.as_bytes()).as_deref(),
            Some("dest_cpu=99999")
        );
        assert_eq!(
            Expected("sched_process_exec pid=N")
                .found_in(b"x: old_pid=3 pid=9x")
                .as_deref(),
            Some("pid=9x")
        );
        assert_eq!(
            Expected("sched_switch PREV:PID ==> NEXT:PID").found_in(b"x ==> y"),
            None
        );
        let long = format!("mm_cid={}", "9".repeat(200));
        let got = Expected("rseq_update mm_cid=N")
            .found_in(long.as_bytes())
            .unwrap();
        assert_eq!(got.chars().count(), FIELD_MAX + 1, "bounded, with its `…`");
        let bad = BadLine::Unparsed {
            expected: e,
            found: e.found_in(line.as_bytes()),
            excerpt: crate::sources::error::excerpt(line.as_bytes(), 120),
        };
        let msg = bad.to_string();
        assert!(
            msg.contains(", found \"dest_cpu=99999\"; line is \"  a-1"),
            "{msg}"
        );
    }

    /// Through a load: the refusal names the field, not only the cut line.
    #[test]
    fn a_refusal_names_the_field_out_of_range() {
        let pad = "x".repeat(150);
        let text = format!(
            "# tracer: nop\n#\n  bash-1  [000] .....  1.000001: sched_migrate_task: comm={pad} pid=12 prio=120 orig_cpu=0 dest_cpu=99999\n"
        );
        let e = crate::sources::load_bytes("t", text.as_bytes(), &Default::default()).unwrap_err();
        assert!(e.to_string().contains("found \"dest_cpu=99999\""), "{e}");
    }
}
