//! The guest's ftrace text as it streams in, turned into [`TraceDelta`]s for a view that grows
//! with it (the TUI's loading path).
//!
//! Each piece of whole lines goes through the ftrace reader on its own; its string ids are made
//! those of the whole stream. `trace_pipe` merges the per-CPU buffers as it reads them, so a
//! record written late on one CPU can come after newer ones of another: events wait
//! [`SLACK_NS`] of trace time before they are handed out in time order, and one older than
//! what was already handed out is placed at that point (counted in a warning).

use crate::events::{Event, StrId, Strings, TaskMeta, Tid, TraceDelta, Warning};
use crate::sources::LoadOptions;
use crate::sources::formats::FTRACE;
use crate::sources::text::{driver::stream_text, ftrace::FtraceText};

/// How long (in trace time) an event waits for older ones from other CPUs.
pub const SLACK_NS: u64 = 50_000_000;

pub struct Feed {
    name: String,
    strings: Strings,
    sent_strings: usize,
    tasks: crate::events::TaskTable,
    changed: Vec<Tid>,
    pending: Vec<Event>,
    /// Time of the last event handed out.
    frontier: u64,
    late: u64,
    bad_lines: u64,
    first_bad: Option<String>,
    ncpus: Option<u32>,
    ncpus_sent: bool,
    warnings: Vec<Warning>,
    /// TGID changes within the pieces read so far (a tid reused by another process).
    tgid_changes: Vec<crate::events::TgidChange>,
    /// The least tick record time minus `now=` read since the last delta
    /// ([`crate::events::Trace::mono_offset`]).
    mono_offset: Option<i64>,
    /// `rseq_update` lines with interrupts off since the last delta
    /// ([`crate::events::Trace::rseq_irqs_off`]).
    rseq_irqs_off: u64,
}

impl Feed {
    pub fn new(name: &str) -> Feed {
        Feed {
            name: name.into(),
            strings: Strings::new(),
            sent_strings: 1,
            tasks: Default::default(),
            changed: Vec::new(),
            pending: Vec::new(),
            frontier: 0,
            late: 0,
            bad_lines: 0,
            first_bad: None,
            ncpus: None,
            ncpus_sent: false,
            warnings: Vec::new(),
            tgid_changes: Vec::new(),
            mono_offset: None,
            rseq_irqs_off: 0,
        }
    }

    /// The guest's possible CPUs (the bound of every CID), for the first delta.
    pub fn set_cpus(&mut self, n: u32) {
        self.ncpus = Some(n);
    }

    /// Takes in whole lines of ftrace text. Lines that do not parse are skipped and counted.
    pub fn push(&mut self, lines: &[u8]) {
        if lines.is_empty() {
            return;
        }
        let opts = LoadOptions {
            format: Some(FTRACE),
            skip_bad_lines: true,
            serial: true,
            no_memory_check: true,
            ..LoadOptions::default()
        };
        // local string ids (1.. in each call) → ids of the whole stream
        let mut remap: Vec<StrId> = vec![StrId(0)];
        let mut hint = None;
        let tgid_changes = &mut self.tgid_changes;
        let mono_offset = &mut self.mono_offset;
        let irqs_off = &mut self.rseq_irqs_off;
        let (strings, tasks, changed, pending, bad, first_bad, warnings) = (
            &mut self.strings,
            &mut self.tasks,
            &mut self.changed,
            &mut self.pending,
            &mut self.bad_lines,
            &mut self.first_bad,
            &mut self.warnings,
        );
        let r = stream_text(
            &self.name,
            lines,
            &FtraceText,
            Some(FTRACE),
            &opts,
            &mut |d| {
                for s in d.new_strings.drain(..) {
                    remap.push(strings.intern(&s));
                }
                hint = hint.or(d.ncpus_hint);
                *irqs_off += d.rseq_irqs_off;
                if let Some(o) = d.mono_offset.take() {
                    crate::events::keep_least(mono_offset, o);
                }
                tgid_changes.append(&mut d.tgid_changes);
                let re = |id: StrId| remap.get(id.0 as usize).copied().unwrap_or_default();
                for mut e in d.events.drain(..) {
                    // (function_graph's names too: `cidscope vm --graph-function`)
                    if let Some(id) = e.kind.string_mut() {
                        *id = re(*id);
                    }
                    pending.push(e);
                }
                for (tid, m) in d.tasks.drain(..) {
                    let m = TaskMeta {
                        tgid: m.tgid,
                        comm: re(m.comm),
                    };
                    match tasks.get_mut(&tid) {
                        Some(old) if old.tgid.is_none() && m.tgid.is_some() => {
                            old.tgid = m.tgid;
                            changed.push(tid);
                        }
                        Some(_) => {}
                        None => {
                            tasks.insert(tid, m);
                            changed.push(tid);
                        }
                    }
                }
                for w in d.warnings.drain(..) {
                    match w.code {
                        "bad-lines-skipped" => {
                            // "...skipped (first at line N: MESSAGE)"
                            let n = w
                                .message
                                .split(": ")
                                .nth(1)
                                .and_then(|m| m.split(' ').next())
                                .and_then(|n| n.parse::<u64>().ok())
                                .unwrap_or(1);
                            *bad += n;
                            first_bad.get_or_insert(w.message);
                        }
                        "truncated-line" => {}
                        _ => warnings.push(w),
                    }
                }
                true
            },
        );
        if self.ncpus.is_none() && !self.ncpus_sent {
            self.ncpus = hint;
        }
        if let Err(e) = r {
            self.bad_lines += 1;
            self.first_bad.get_or_insert(e.to_string());
        }
    }

    /// What is ready: events older than the newest by [`SLACK_NS`] (all of them with `all`,
    /// at the end), with the strings and tasks they refer to. A delta may carry strings and no
    /// event (the events that use them are still held back): apply every delta that is not
    /// wholly empty, or later string ids go astray.
    pub fn take(&mut self, all: bool) -> TraceDelta {
        self.pending.sort_by_key(|e| e.ts);
        let newest = self.pending.last().map_or(0, |e| e.ts);
        let cut = if all {
            self.pending.len()
        } else {
            self.pending
                .partition_point(|e| e.ts.saturating_add(SLACK_NS) <= newest)
        };
        let mut events: Vec<Event> = self.pending.drain(..cut).collect();
        for e in &mut events {
            if e.ts < self.frontier {
                if !e.kind.is_lost() {
                    self.late += 1;
                }
                e.ts = self.frontier;
            }
            self.frontier = e.ts;
        }
        let mut d = TraceDelta {
            events,
            new_strings: (self.sent_strings..self.strings.len())
                .map(|i| self.strings.get(StrId(i as u32)).into())
                .collect(),
            tasks: self
                .changed
                .drain(..)
                .filter_map(|t| self.tasks.get(&t).map(|m| (t, *m)))
                .collect(),
            ncpus_hint: self.ncpus.take(),
            kernel_release: None,
            kernel_hz: None,
            kernel_scan_batch: None,
            rseq_irqs_off: std::mem::take(&mut self.rseq_irqs_off),
            mono_offset: self.mono_offset.take(),
            warnings: std::mem::take(&mut self.warnings),
            tgid_changes: std::mem::take(&mut self.tgid_changes),
            format: Some(FTRACE),
        };
        self.sent_strings = self.strings.len();
        self.ncpus_sent |= d.ncpus_hint.is_some();
        if all {
            if self.late > 0 {
                d.warnings.push(Warning {
                    code: "late-records",
                    message: format!(
                        "{} records arrived more than {} ms (trace time) after newer ones; they were placed at the point they arrived",
                        self.late,
                        SLACK_NS / 1_000_000
                    ),
                });
            }
            if self.bad_lines > 0 {
                d.warnings.push(Warning {
                    code: "bad-lines-skipped",
                    message: format!(
                        "{} lines of the stream did not parse and were skipped ({})",
                        self.bad_lines,
                        self.first_bad.clone().unwrap_or_default()
                    ),
                });
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Trace;

    #[test]
    fn pieces_of_a_capture_give_the_capture() {
        let text = crate::DEMO_TRACE;
        let whole = crate::sources::load_bytes("demo", text, &LoadOptions::default()).unwrap();
        // cut at line boundaries into uneven pieces
        let mut feed = Feed::new("vm");
        feed.set_cpus(2);
        let mut trace = Trace::new("vm", FTRACE);
        let mut start = 0;
        let mut k = 0;
        while start < text.len() {
            let want = start + 1000 + (k * 7919) % 50_000;
            k += 1;
            let end = if want >= text.len() {
                text.len()
            } else {
                want + memchr::memchr(b'\n', &text[want..]).map_or(text.len() - want, |p| p + 1)
            };
            feed.push(&text[start..end]);
            trace.apply(&mut feed.take(false));
            start = end;
        }
        trace.apply(&mut feed.take(true));
        assert_eq!(trace.ncpus_hint, Some(2));
        assert_eq!(trace.events.len(), whole.events.len());
        for (a, b) in whole.events.iter().zip(trace.events.iter()) {
            assert_eq!((a.ts, a.tid, a.cpu), (b.ts, b.tid, b.cpu));
            assert_eq!(a.describe(&whole.strings), b.describe(&trace.strings));
        }
        for (tid, m) in &whole.tasks {
            let n = &trace.tasks[tid];
            assert_eq!(n.tgid, m.tgid);
            assert_eq!(trace.strings.get(n.comm), whole.strings.get(m.comm));
        }
    }

    /// A function_graph capture fed in pieces names the functions a whole load names: a
    /// function event's name is remapped to the stream's strings like a switch's comm.
    #[test]
    fn function_events_keep_their_names_across_pieces() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/traces/metrics-graph-seed.ftrace.txt"
        );
        let text = std::fs::read(path).expect("the capture");
        let whole = crate::sources::load_bytes("g", &text, &LoadOptions::default()).unwrap();
        let mut feed = Feed::new("vm");
        let mut trace = Trace::new("vm", FTRACE);
        // (a piece of its own for the second half, whose strings start again at 1)
        let mid = memchr::memchr(b'\n', &text[text.len() / 2..])
            .map_or(text.len(), |p| text.len() / 2 + p + 1);
        for piece in [&text[..mid], &text[mid..]] {
            feed.push(piece);
            trace.apply(&mut feed.take(false));
        }
        trace.apply(&mut feed.take(true));
        let names = |t: &Trace| -> Vec<String> {
            t.events
                .iter()
                .map(|e| e.kind.name(&t.strings).to_string())
                .collect()
        };
        let (a, b) = (names(&whole), names(&trace));
        assert!(
            a.iter().any(|n| n == "task_mm_cid_work"),
            "the capture has function events"
        );
        assert_eq!(a, b);
    }

    #[test]
    fn late_records_wait_for_the_slack_then_are_placed_in_order() {
        let line = |cpu: u32, ts: &str| {
            format!(
                "            a-7       (      7) [{cpu:03}] .....  {ts}: rseq_update: cpu_id={cpu} node_id=0 mm_cid=0\n"
            )
        };
        let mut f = Feed::new("vm");
        f.push(format!("{}{}", line(0, "1.000000"), line(1, "1.100000")).as_bytes());
        let d = f.take(false);
        // only the first is 50 ms older than the newest
        assert_eq!(d.events.len(), 1);
        // an older one from another CPU still fits before the one held back
        f.push(line(2, "1.050000").as_bytes());
        f.push(line(3, "0.500000").as_bytes());
        let d = f.take(true);
        let ts: Vec<u64> = d.events.iter().map(|e| e.ts).collect();
        // 0.5 s came after 1.0 s was handed out: it is placed there
        assert_eq!(ts, [1_000_000_000, 1_050_000_000, 1_100_000_000]);
        assert!(d.warnings.iter().any(|w| w.code == "late-records"));
        let mut g = Feed::new("vm");
        g.push(b"garbage line\n");
        g.push(line(0, "2.0").as_bytes());
        let d = g.take(true);
        assert_eq!(d.events.len(), 1);
        assert!(
            d.warnings.iter().any(|w| w.code == "bad-lines-skipped"),
            "{:?}",
            d.warnings
        );
    }
}
